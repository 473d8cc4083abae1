package codegen_test

import (
	"fmt"

	"github.com/archc/archc/codegen"
)

// A module with one weight (an IREE named parameter) and one function that
// scales its argument by it.
func ExampleModule_Print() {
	m := &codegen.Module{Name: "scale"}
	w := codegen.Global{Name: "model.w", Type: codegen.T("f32", 4), Param: "model.w"}
	m.AddGlobal(w)
	f := m.NewFunc("main", codegen.T("f32", 4))
	y := f.Op("stablehlo.multiply", codegen.T("f32", 4), nil, f.Args[0], f.GlobalLoad(w))
	f.Return(y)
	fmt.Print(string(m.Print()))
	// Output:
	// module @scale {
	//   util.global private @"model.w" = #flow.parameter.named<"model"::"model.w"> : tensor<4xf32>
	//
	//   func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>) {
	//     %0 = util.global.load @"model.w" : tensor<4xf32>
	//     %1 = "stablehlo.multiply"(%arg0, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
	//     func.return %1 : tensor<4xf32>
	//   }
	// }
}
