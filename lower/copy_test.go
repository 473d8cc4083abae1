package lower_test

import (
	"strings"
	"testing"

	"github.com/archc/archc/lower"
)

// TestCopyEntryPoints: a module with more than one slot exports
// copy_cache_C (C its largest prefill bucket), one dynamic_slice and one
// dynamic_update_slice between two slots of each KV-cache entry's global
// (the keys and the values of its one layer); a module with
// one slot does not. (copy_state, of the fixtures with windows and
// recurrent states, runs in golden's TestSlotContract.)
func TestCopyEntryPoints(t *testing.T) {
	g := buildLlama(t)
	o := options()
	m, err := lower.Lower(g, o)
	if err != nil {
		t.Fatal(err)
	}
	if text := string(m.Print()); strings.Contains(text, "@copy_") {
		t.Error("a module with one slot has a copy entry point")
	}
	o.Slots, o.DecodeBatches = 3, []int64{1, 2}
	if m, err = lower.Lower(g, o); err != nil {
		t.Fatal(err)
	}
	text := string(m.Print())
	want := `  func.func @copy_cache_64(%arg0: tensor<i32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> () {
    %0 = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %1 = util.global.load @"kv_cache.0" : tensor<1x3x64x2x64xf32>
    %2 = "stablehlo.dynamic_slice"(%1, %0, %arg0, %arg2, %0, %0) {slice_sizes = array<i64: 1, 1, 64, 2, 64>} : (tensor<1x3x64x2x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x64x2x64xf32>
    %3 = "stablehlo.dynamic_update_slice"(%1, %2, %0, %arg1, %arg2, %0, %0) : (tensor<1x3x64x2x64xf32>, tensor<1x1x64x2x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x3x64x2x64xf32>
    %4 = util.global.load @"kv_cache.1" : tensor<1x3x64x2x64xf32>
    %5 = "stablehlo.dynamic_slice"(%4, %0, %arg0, %arg2, %0, %0) {slice_sizes = array<i64: 1, 1, 64, 2, 64>} : (tensor<1x3x64x2x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x64x2x64xf32>
    %6 = "stablehlo.dynamic_update_slice"(%4, %5, %0, %arg1, %arg2, %0, %0) : (tensor<1x3x64x2x64xf32>, tensor<1x1x64x2x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x3x64x2x64xf32>
    util.global.store %3, @"kv_cache.0" : tensor<1x3x64x2x64xf32>
    util.global.store %6, @"kv_cache.1" : tensor<1x3x64x2x64xf32>
    func.return
  }
`
	if !strings.Contains(text, want) {
		i := strings.Index(text, "func.func @copy_")
		if i < 0 {
			t.Fatal("a module with 3 slots has no copy entry point")
		}
		t.Errorf("copy_cache_64:\n%s\nwant:\n%s", text[i:], want)
	}
	if strings.Contains(text, "@copy_state") {
		t.Error("llama has no window or recurrent state, yet its module has copy_state")
	}
}
