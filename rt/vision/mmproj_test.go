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
// folder's processor_config.json gives (Qwen2-VL's but its min and max
// pixels, which the mmproj does not record: the class defaults, or the
// file's image_min_pixels / image_max_pixels where it has them); an
// unknown projector type is an error naming it.
func TestProcessorFromMMProj(t *testing.T) {
	for _, name := range []string{"idefics3", "gemma3", "llava", "qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe", "mistral3", "pixtral", "lfm2_vl"} {
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
			if px := want.Pixtral; px != nil { // the mmproj records mean and std as float32, the tower's image_size as the longest edge
				for _, v := range [][]float64{px.ImageMean, px.ImageStd} {
					for i := range v {
						v[i] = float64(float32(v[i]))
					}
				}
			}
			if l := want.Lfm2Vl; l != nil { // the mmproj records no tile size nor token limits: the class defaults
				def := DefaultLfm2VlConfig()
				l.TileSize, l.MinImageTokens, l.MaxImageTokens, l.MinTiles, l.MaxTiles = def.TileSize, def.MinImageTokens, def.MaxImageTokens, def.MinTiles, def.MaxTiles
			}
			if q := want.Qwen; q != nil {
				for _, v := range [][]float64{q.ImageMean, q.ImageStd} {
					for i := range v {
						v[i] = float64(float32(v[i]))
					}
				}
				def := DefaultQwenVLConfig()
				fixture := *q
				q.MinPixels, q.MaxPixels = def.MinPixels, def.MaxPixels
				withPixels := func(key string) (any, bool) {
					switch key {
					case "clip.vision.image_min_pixels":
						return uint64(fixture.MinPixels), true
					case "clip.vision.image_max_pixels":
						return uint64(fixture.MaxPixels), true
					}
					return f.Value(key)
				}
				if p, err := ProcessorFromMMProj(withPixels, floats); err != nil || !reflect.DeepEqual(*p.Qwen, fixture) {
					t.Errorf("with image_min_pixels and image_max_pixels: %+v (%v), want %+v", p.Qwen, err, fixture)
				}
				bad := func(key string) (any, bool) {
					if key == "clip.vision.image_max_pixels" {
						return uint64(def.MinPixels - 1), true
					}
					return f.Value(key)
				}
				if _, err := ProcessorFromMMProj(bad, floats); err == nil || !strings.Contains(err.Error(), "is above max_pixels") {
					t.Errorf("max_pixels below min_pixels: %v", err)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("from the mmproj:\n%+v\n%+v %+v\nthe folder's:\n%+v\n%+v %+v", got, got.PIL, got.Qwen, want, want.PIL, want.Qwen)
			}
			other := func(key string) (any, bool) {
				if key == "clip.projector_type" {
					return "cogvlm", true
				}
				return f.Value(key)
			}
			if _, err := ProcessorFromMMProj(other, floats); err == nil || !strings.Contains(err.Error(), `clip.projector_type "cogvlm" has no image processor`) {
				t.Errorf("cogvlm: %v", err)
			}
		})
	}
}
