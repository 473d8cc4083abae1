package golden

import (
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	mlir := `module @tiny {
  util.global private @"model.norm.weight" = #flow.parameter.named<"model"::"model.norm.weight"> : tensor<8xf32>
  util.global private mutable @kv_cache = dense<0.0> : tensor<2x4x8xf32>
  func.func @decode_1(%arg0: tensor<1x1xi32>, %arg1: tensor<i32>) -> (tensor<1x8xf32>) {
    %0 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %1 = util.global.load @"model.norm.weight" : tensor<8xf32> loc("model.norm"("t.arch":3:4))
    %2 = "stablehlo.add"(%1, %1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> loc("model.norm"("t.arch":3:9))
    %3 = "stablehlo.reduce"(%2, %0) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %4 = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32> loc("layers.0/attn"("t.arch":5:1))
      "stablehlo.return"(%4) : (tensor<f32>) -> () loc("layers.0/attn"("t.arch":5:1))
    }) {dimensions = array<i64: 0>} : (tensor<8xf32>, tensor<i32>) -> tensor<f32> loc("layers.0/attn"("t.arch":5:1))
    func.return %2 : tensor<8xf32>
  }
}
`
	want := `module @tiny
sha256 ` // digest checked for stability below
	got := string(Summarize([]byte(mlir)))
	if !strings.HasPrefix(got, want) {
		t.Fatalf("summary starts %q, want prefix %q", got, want)
	}
	rest := got[len(want)+strings.Index(got[len(want):], "\n")+1:]
	wantRest := `global param tensor<8xf32> model.norm.weight
global mutable tensor<2x4x8xf32> kv_cache
func @decode_1(tensor<1x1xi32>, tensor<i32>) -> (tensor<1x8xf32>)
  ops 7
  op func.return 1
  op stablehlo.add 2
  op stablehlo.constant 1
  op stablehlo.reduce 1
  op stablehlo.return 1
  op util.global.load 1
  at - 2
  at layers.0/attn 3
  at model.norm 2
`
	if rest != wantRest {
		t.Errorf("summary body:\n%s\nwant:\n%s", rest, wantRest)
	}
	// Line and column moves keep the summary; any other byte changes the digest.
	moved := strings.ReplaceAll(mlir, `"t.arch":3:`, `"t.arch":30:`)
	if string(Summarize([]byte(moved))) != got {
		t.Error("moving .arch lines changed the summary")
	}
	changed := strings.Replace(mlir, "dense<1>", "dense<2>", 1)
	if string(Summarize([]byte(changed))) == got {
		t.Error("a changed constant left the summary (and its digest) unchanged")
	}
}

// TestSummarizeRepeated: a function whose counts are an earlier one's is
// one `as` line; one whose counts differ is written out.
func TestSummarizeRepeated(t *testing.T) {
	fn := func(name, shape, op string) string {
		return `  func.func @` + name + `(%arg0: tensor<` + shape + `xf32>) -> (tensor<` + shape + `xf32>) {
    %0 = "` + op + `"(%arg0, %arg0) : (tensor<` + shape + `xf32>, tensor<` + shape + `xf32>) -> tensor<` + shape + `xf32> loc("x"("t.arch":1:1))
    func.return %0 : tensor<` + shape + `xf32>
  }
`
	}
	mlir := "module @m {\n" + fn("prefill_16", "16", "stablehlo.add") + fn("prefill_64", "64", "stablehlo.add") + fn("decode_1", "1", "stablehlo.multiply") + "}\n"
	got := string(Summarize([]byte(mlir)))
	got = got[strings.Index(got, "func "):]
	want := `func @prefill_16(tensor<16xf32>) -> (tensor<16xf32>)
  ops 2
  op func.return 1
  op stablehlo.add 1
  at - 1
  at x 1
func @prefill_64(tensor<64xf32>) -> (tensor<64xf32>)
  as @prefill_16
func @decode_1(tensor<1xf32>) -> (tensor<1xf32>)
  ops 2
  op func.return 1
  op stablehlo.multiply 1
  at - 1
  at x 1
`
	if got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
}
