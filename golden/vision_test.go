package golden

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/rt"
)

// The vision tier (DESIGN §7): fixtures under testdata/vision/, written by
// gen_vision_fixtures.py — a tiny random-weight vision-language checkpoint
// with its processor and tokenizer files, test images, and oracle.json:
// per case the processor's input_ids and pixel_values
// (pixel_values.<image>.f32), the connector's output
// (image_features.<case>.f32) and HF fp32 greedy tokens and first-step
// logits with the images.

// visionOracle is a vision fixture's oracle.json.
type visionOracle struct {
	ImageTokenID int32        `json:"image_token_id"`
	MaxNewTokens int          `json:"max_new_tokens"`
	Cases        []visionCase `json:"cases"`
}

// visionCase is one prompt of a vision fixture: its expanded ids, its
// images' pixel_values files (each [1, tiles, 3, H, W] or, one crop an
// image, [1, 3, H, W] f32, in prompt order) and the oracle's outputs.
type visionCase struct {
	Name               string    `json:"name"`
	InputIDs           []int32   `json:"input_ids"`
	PixelValuesShape   []int64   `json:"pixel_values_shape"`
	PixelValuesFiles   []string  `json:"pixel_values_files"`
	ImageFeaturesShape []int64   `json:"image_features_shape"`
	Tokens             []int32   `json:"tokens"`
	FirstLogits        []float64 `json:"first_logits"`
}

// visionFixtures lists testdata/vision/*/ (each with config.json).
func visionFixtures(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("testdata/vision/*/config.json")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no vision fixtures under testdata/vision/ (%v)", err)
	}
	for i, d := range dirs {
		dirs[i] = filepath.Dir(d)
	}
	return dirs
}

func readVisionOracle(t *testing.T, dir string) visionOracle {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "oracle.json"))
	if err != nil {
		t.Fatal(err)
	}
	var o visionOracle
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatalf("%s/oracle.json: %v", dir, err)
	}
	return o
}

// readRawF32 reads a raw little-endian float32 file.
func readRawF32(t *testing.T, path string) []float32 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data)%4 != 0 {
		t.Fatalf("%s: %d bytes is no whole number of float32", path, len(data))
	}
	out := make([]float32, len(data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return out
}

// encodeCase runs every tile of a case's images through the model's image
// encoder, in prompt order, and returns the rows of all of them.
func encodeCase(t *testing.T, m *rt.Model, dir string, c visionCase) []float32 {
	t.Helper()
	if len(c.PixelValuesFiles) == 0 {
		return nil
	}
	sh := c.PixelValuesShape // [1, tiles, 3, H, W] (Idefics3) or [images, 3, H, W] (LLaVA)
	if len(sh) < 3 {
		t.Fatalf("pixel_values_shape %v: want [..., channels, height, width]", sh)
	}
	tile := int(sh[len(sh)-3] * sh[len(sh)-2] * sh[len(sh)-1])
	var rows []float32
	for _, f := range c.PixelValuesFiles {
		px := readRawF32(t, filepath.Join(dir, f))
		if len(px)%tile != 0 {
			t.Fatalf("%s: %d values are no whole number of %d-value tiles", f, len(px), tile)
		}
		for at := 0; at < len(px); at += tile {
			r, err := m.Encode(context.Background(), "image", px[at:at+tile])
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r...)
		}
	}
	return rows
}

// TestVisionExecution: for each vision fixture and case, the image
// encoder's rows equal the HF connector's output within 1e-4, and greedy
// generation with them is the HF fp32 oracle's, token for token, its
// first-step logits within 1e-4.
func TestVisionExecution(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	for _, dir := range visionFixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want := readVisionOracle(t, dir)
			ctx := context.Background()
			m, err := launch.Open(ctx, dir, execOptions())
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for _, c := range want.Cases {
				t.Run(c.Name, func(t *testing.T) {
					rows := encodeCase(t, m, dir, c)
					if len(c.PixelValuesFiles) > 0 {
						feat := readRawF32(t, filepath.Join(dir, "image_features."+c.Name+".f32"))
						if len(rows) != len(feat) {
							t.Fatalf("encoder rows: %d values, HF's image features %d", len(rows), len(feat))
						}
						d := maxAbsDiff32(feat, rows)
						if d > logitsTolerance {
							t.Errorf("encoder rows differ from HF's image features by %g (max abs)", d)
						}
						t.Logf("encoder rows: max |archc - HF| = %.3g", d)
					}
					var enc *rt.Encoded
					if rows != nil {
						enc = &rt.Encoded{Rows: [][]float32{rows}}
					}
					g, err := m.Generate(ctx, c.InputIDs, rt.GenerateOptions{MaxTokens: want.MaxNewTokens, Encoded: enc})
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(c.Tokens, g.Tokens); diff != "" {
						t.Errorf("tokens differ from the HF oracle (-oracle +archc):\n%s", diff)
					}
					d := maxAbsDiff(c.FirstLogits, g.FirstLogits)
					if d > logitsTolerance {
						t.Errorf("first-step logits differ from the oracle by %g (max abs)", d)
					}
					t.Logf("first-step logits: max |archc - HF| = %.3g", d)
				})
			}
		})
	}
}
