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

// An op's attributes are typed values; Print renders them in the order
// given and Verify reads them as values (here: the permutation, checked
// against the operand and result shapes).
func ExampleAttrs() {
	m := &codegen.Module{Name: "t"}
	f := m.NewFunc("main", codegen.T("f32", 2, 3))
	y := f.Op("stablehlo.transpose", codegen.T("f32", 3, 2), codegen.Attrs{codegen.A("permutation", codegen.I64s{1, 0})}, f.Args[0])
	f.Return(y)
	fmt.Println(codegen.Attrs{codegen.A("permutation", codegen.I64s{1, 0})})
	fmt.Println(m.Verify())
	bad := m.NewFunc("bad", codegen.T("f32", 2, 3))
	bad.Return(bad.Op("stablehlo.transpose", codegen.T("f32", 2, 3), codegen.Attrs{codegen.A("permutation", codegen.I64s{1, 0})}, bad.Args[0]))
	fmt.Println(m.Verify())
	// Output:
	// permutation = array<i64: 1, 0>
	// <nil>
	// bad: stablehlo.transpose: permutation [1 0] of tensor<2x3xf32> gives dimension 0 of size 3, the result says 2
}
