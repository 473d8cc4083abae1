package rt

import (
	"context"
	"strings"
	"testing"

	"github.com/archc/archc/formats/abi"
	"github.com/archc/archc/rt/vision"
)

// TestEncodePatchesMergeMismatch: a Qwen-VL processor whose merge_size is
// not the encoder's (its sizes' patches per row) is an error naming both,
// before any encode runs.
func TestEncodePatchesMergeMismatch(t *testing.T) {
	enc := abi.Encoder{Name: "image", Input: []int64{1, 256, 12}, Sizes: []abi.EncoderSize{{Size: 64, Rows: 16}, {Size: 256, Rows: 64}},
		Extra: []abi.EncoderInput{{Name: "grid", Shape: []int64{1, 256, 2}, DType: "i32"}}}
	proc := &vision.Processor{Qwen: &vision.QwenVLConfig{MergeSize: 3}}
	px := &vision.Idefics3Output{Patches: make([]float32, 36*12), PatchDim: 12, GridTHW: [3]int{1, 6, 6}}
	_, _, err := (&Model{}).encodePatches(context.Background(), enc, proc, px)
	for _, want := range []string{"merge_size is 3 (9 patches an image token)", "makes 16 rows of 64 patches (spatial_merge_size 2)", "does not fit the model"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error with %q", err, want)
		}
	}
}
