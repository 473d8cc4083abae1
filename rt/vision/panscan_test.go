package vision

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// pattern is gen_pan_and_scan.py's pattern(w, h): an image from a formula,
// so the test data holds no image files.
func pattern(w, h int) *RGB8 {
	m := NewRGB8(w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := (y*w + x) * 3
			m.Pix[i], m.Pix[i+1], m.Pix[i+2] = uint8((x*7+y*3)%256), uint8((x*y+5*x)%256), uint8((x+2*y*y)%256)
		}
	}
	return m
}

// TestPanAndScan: Gemma 3's pan and scan equals transformers' PIL backend
// (testdata/pan_and_scan.json, gen_pan_and_scan.py) on wide and tall
// images, below the ratio, with crops too small, with other parameters and
// with a last crop cut at the edge: the crop count, pixel_values bit for
// bit (sha256 of the float32 bytes) and the prompt expanded as
// Gemma3Processor expands it.
func TestPanAndScan(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "pan_and_scan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Prompt string
		Cases  []struct {
			Name          string
			Width, Height int
			Params        map[string]any
			Crops         int
			Shape         []int
			Sha256        string
			First         []float32
			Text          string
		}
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	fixture := filepath.Join("..", "..", "golden", "testdata", "vision", "gemma3", "processor_config.json")
	base, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range want.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var cfg map[string]any
			if err := json.Unmarshal(base, &cfg); err != nil {
				t.Fatal(err)
			}
			ip := cfg["image_processor"].(map[string]any)
			ip["do_pan_and_scan"] = true
			for k, v := range c.Params {
				ip[k] = v
			}
			dir := t.TempDir()
			nb, _ := json.Marshal(cfg)
			if err := os.WriteFile(filepath.Join(dir, "processor_config.json"), nb, 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := LoadProcessor(dir)
			if err != nil {
				t.Fatal(err)
			}
			out, exp, err := p.Preprocess(pattern(c.Width, c.Height))
			if err != nil {
				t.Fatal(err)
			}
			if out.Crops != c.Crops || out.Tiles != c.Shape[0] || out.Height != c.Shape[2] || out.Width != c.Shape[3] {
				t.Fatalf("%d crops, tiles [%d, 3, %d, %d]; transformers: %d crops, %v", out.Crops, out.Tiles, out.Height, out.Width, c.Crops, c.Shape)
			}
			raw := make([]byte, 4*len(out.PixelValues))
			for i, v := range out.PixelValues {
				binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
			}
			if h := sha256.Sum256(raw); hex.EncodeToString(h[:]) != c.Sha256 {
				t.Errorf("pixel_values differ from transformers' (sha256); first values %v, transformers %v", out.PixelValues[:4], c.First)
			}
			text, err := p.Expand(want.Prompt, []Grid{p.GridOf(out)})
			if err != nil {
				t.Fatal(err)
			}
			if text != c.Text {
				t.Errorf("expanded prompt\n%q\ntransformers\n%q", text, c.Text)
			}
			if single := "<bos>Look: " + exp + " now"; single != c.Text {
				t.Errorf("Preprocess's expansion %q differs from Expand's", exp)
			}
		})
	}
}
