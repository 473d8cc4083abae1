package vision

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/archc/archc/formats/gguf"
)

// TestProcessorFromMMProj: the processor read from a vision fixture's
// mmproj twin (golden/make_gguf_twins.py writes it) is the one its
// folder's processor_config.json gives; an unknown projector type is an
// error naming it.
func TestProcessorFromMMProj(t *testing.T) {
	for _, name := range []string{"idefics3", "gemma3", "llava"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join("..", "..", "golden", "testdata", "vision", name)
			path := filepath.Join(dir, "mmproj.f32.gguf")
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%s: run golden/make_gguf_twins.py", path)
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			floats := func(key string) ([]float64, bool) {
				a, ok := f.Array(key)
				fs, isF := a.([]float64)
				return fs, ok && isF
			}
			got, err := ProcessorFromMMProj(f.Value, floats)
			if err != nil {
				t.Fatal(err)
			}
			want, err := LoadProcessor(dir)
			if err != nil {
				t.Fatal(err)
			}
			if want.PIL != nil { // the mmproj holds image_mean and image_std as float32, which the processor computes with
				for _, v := range [][]float64{want.PIL.ImageMean, want.PIL.ImageStd} {
					for i := range v {
						v[i] = float64(float32(v[i]))
					}
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("from the mmproj:\n%+v\n%+v\nthe folder's:\n%+v\n%+v", got, got.PIL, want, want.PIL)
			}
			other := func(key string) (any, bool) {
				if key == "clip.projector_type" {
					return "pixtral", true
				}
				return f.Value(key)
			}
			if _, err := ProcessorFromMMProj(other, floats); err == nil || !strings.Contains(err.Error(), `clip.projector_type "pixtral" has no image processor`) {
				t.Errorf("pixtral: %v", err)
			}
		})
	}
}
