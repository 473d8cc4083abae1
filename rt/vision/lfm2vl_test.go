package vision

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLfm2VlLayout: the tile grid, image_sizes and spatial_shapes of
// images of many sizes equal transformers' Lfm2VlImageProcessor's
// (torchvision backend, transformers 5.24: printed by it for these sizes)
// under LFM2-VL-1.6B's defaults and the fixture's scaled-down settings.
func TestLfm2VlLayout(t *testing.T) {
	small := DefaultLfm2VlConfig()
	small.MinImageTokens, small.MaxImageTokens, small.EncoderPatchSize, small.TileSize = 6, 16, 4, 16
	configs := map[string]Lfm2VlConfig{"default": DefaultLfm2VlConfig(), "small": small}
	for _, c := range []struct {
		config     string
		h, w       int
		rows, cols int
		size       [2]int
		shapes     string
		maxPatches int
	}{
		{"default", 512, 512, 1, 1, [2]int{512, 512}, "[(32, 32)]", 1024},
		{"default", 1024, 768, 3, 2, [2]int{576, 416}, "[(32, 32), (32, 32), (32, 32), (32, 32), (32, 32), (32, 32), (36, 26)]", 1024},
		{"default", 1920, 1080, 4, 2, [2]int{672, 384}, "[(32, 32), (32, 32), (32, 32), (32, 32), (32, 32), (32, 32), (32, 32), (32, 32), (42, 24)]", 1024},
		{"default", 100, 3000, 1, 1, [2]int{64, 2784}, "[(4, 174)]", 1024},
		{"default", 300, 200, 1, 1, [2]int{320, 224}, "[(20, 14)]", 1024},
		{"default", 30, 20, 1, 1, [2]int{320, 224}, "[(20, 14)]", 1024},
		{"default", 1025, 1025, 2, 2, [2]int{512, 512}, "[(32, 32), (32, 32), (32, 32), (32, 32), (32, 32)]", 1024},
		{"default", 2000, 600, 3, 1, [2]int{928, 256}, "[(32, 32), (32, 32), (32, 32), (58, 16)]", 1024},
		{"default", 700, 700, 1, 1, [2]int{512, 512}, "[(32, 32)]", 1024},
		{"default", 513, 300, 1, 1, [2]int{512, 288}, "[(32, 18)]", 1024},
		{"small", 60, 40, 3, 2, [2]int{32, 24}, "[(4, 4), (4, 4), (4, 4), (4, 4), (4, 4), (4, 4), (8, 6)]", 64},
		{"small", 20, 96, 1, 1, [2]int{8, 64}, "[(2, 16)]", 64},
		{"small", 9, 17, 1, 1, [2]int{16, 32}, "[(4, 8)]", 64},
		{"small", 100, 100, 3, 3, [2]int{32, 32}, "[(4, 4), (4, 4), (4, 4), (4, 4), (4, 4), (4, 4), (4, 4), (4, 4), (4, 4), (8, 8)]", 64},
		{"small", 33, 65, 1, 1, [2]int{16, 40}, "[(4, 10)]", 64},
		{"small", 48, 48, 3, 3, [2]int{32, 32}, "[(4, 4), (4, 4), (4, 4), (4, 4), (4, 4), (4, 4), (4, 4), (4, 4), (4, 4), (8, 8)]", 64},
	} {
		cfg := configs[c.config]
		img := &RGB8{W: c.w, H: c.h, Pix: make([]byte, 3*c.w*c.h)}
		out, err := cfg.Preprocess(img)
		if err != nil {
			t.Fatalf("%s %dx%d: %v", c.config, c.h, c.w, err)
		}
		var shapes []string
		for _, g := range out.TileGrids {
			shapes = append(shapes, fmt.Sprintf("(%d, %d)", g[1], g[2]))
		}
		rows, cols := max(out.Rows, 1), max(out.Cols, 1)
		got := fmt.Sprintf("%d %d %v [%s] %d", rows, cols, [2]int{out.Height, out.Width}, strings.Join(shapes, ", "), cfg.MaxNumPatches())
		want := fmt.Sprintf("%d %d %v %s %d", c.rows, c.cols, c.size, c.shapes, c.maxPatches)
		if got != want {
			t.Errorf("%s %dx%d: rows cols image_sizes spatial_shapes max_num_patches %s, transformers' %s", c.config, c.h, c.w, got, want)
		}
	}
}

// TestLfm2VlFixture: for every image case of the lfm2_vl vision fixture,
// the processor's pixel_values (each tile's rows cut to its
// spatial_shapes, in window order: the fixture's files), spatial_shapes
// and pixel_attention_mask (h·w ones then zeros to max_num_patches, as
// the generator checked transformers' are) are Lfm2VlImageProcessor's
// (torchvision backend: the only one transformers has) within 1/255 per
// value before normalisation, and the expansion holds as many "<image>"
// as the processor's input_ids.
func TestLfm2VlFixture(t *testing.T) {
	dir := filepath.Join("..", "..", "golden", "testdata", "vision", "lfm2_vl")
	b, err := os.ReadFile(filepath.Join(dir, "oracle.json"))
	if err != nil {
		t.Skip(err)
	}
	var o struct {
		ImageTokenID int32 `json:"image_token_id"`
		Cases        []struct {
			Name     string   `json:"name"`
			Images   []string `json:"images"`
			InputIDs []int32  `json:"input_ids"`
			Files    []string `json:"pixel_values_files"`
			Grids    [][3]int `json:"image_grid_thw"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	proc, err := LoadProcessor(dir)
	if err != nil || proc.Lfm2Vl == nil {
		t.Fatalf("LoadProcessor: %v (Lfm2Vl %v)", err, proc)
	}
	c := proc.Lfm2Vl
	for _, tc := range o.Cases {
		if len(tc.Images) == 0 {
			continue
		}
		var patches []float32
		var grids [][3]int
		var gs []Grid
		for _, name := range tc.Images {
			data, err := os.ReadFile(filepath.Join(dir, "images", name))
			if err != nil {
				t.Fatal(err)
			}
			img, err := Decode(data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := proc.Preprocess(img)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			patches = append(patches, out.Patches...)
			grids = append(grids, out.TileGrids...)
			gs = append(gs, proc.GridOf(out))
			for _, g := range out.TileGrids {
				if n := g[1] * g[2]; n > c.MaxNumPatches() {
					t.Errorf("%s: a tile of %d patches, over max_num_patches %d (pixel_attention_mask's length)", name, n, c.MaxNumPatches())
				}
			}
		}
		if fmt.Sprint(grids) != fmt.Sprint(tc.Grids) {
			t.Errorf("%s: spatial_shapes %v, transformers' %v", tc.Name, grids, tc.Grids)
			continue
		}
		var want []float32
		for _, f := range tc.Files {
			raw, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+4 <= len(raw); i += 4 {
				want = append(want, math.Float32frombits(binary.LittleEndian.Uint32(raw[i:])))
			}
		}
		if len(want) != len(patches) {
			t.Fatalf("%s: %d pixel values, transformers' %d", tc.Name, len(patches), len(want))
		}
		tol := c.RescaleFactor / stat3f(c.ImageStd) * 1.0001 // 1/255 before normalisation
		worst, off := 0.0, 0
		for i := range want {
			d := math.Abs(float64(want[i] - patches[i]))
			worst = max(worst, d)
			if d > 1e-6 {
				off++
			}
		}
		if worst > tol {
			t.Errorf("%s: pixel_values differ from transformers' by up to %g (over 1/255 before normalisation: %g)", tc.Name, worst, tol)
		}
		t.Logf("%s: %d of %d pixel values off transformers' (torchvision) by up to %.3g", tc.Name, off, len(want), worst)
		text, err := proc.Expand(strings.Repeat(ImageToken, len(gs)), gs)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, id := range tc.InputIDs {
			if id == o.ImageTokenID {
				n++
			}
		}
		if got := strings.Count(text, ImageToken); got != n {
			t.Errorf("%s: the expansion holds %d %s, the processor's input_ids %d", tc.Name, got, ImageToken, n)
		}
	}
}

// stat3f is the smallest of 1 or 3 stds.
func stat3f(v []float64) float64 {
	m := math.Inf(1)
	for _, x := range v {
		m = min(m, math.Abs(x))
	}
	return m
}

// TestLfm2VlExpand: an unsplit image is its tokens between image_start
// and image_end; a split one names each tile, row-major, then the
// thumbnail; without special tokens only the <image> runs remain.
func TestLfm2VlExpand(t *testing.T) {
	c := DefaultLfm2VlConfig()
	c.EncoderPatchSize, c.TileSize = 4, 16
	one := c.lfm2Expansion(Grid{Tokens: 2})
	if one != ImageStart+"<image><image>"+ImageEnd {
		t.Errorf("unsplit: %q", one)
	}
	got := c.lfm2Expansion(Grid{Rows: 1, Cols: 2, Tokens: 1})
	tile := strings.Repeat(ImageToken, 4)
	if want := ImageStart + "<|img_row_1_col_1|>" + tile + "<|img_row_1_col_2|>" + tile + ImageThumbnail + ImageToken + ImageEnd; got != want {
		t.Errorf("split: %q, want %q", got, want)
	}
	c.UseImageSpecialTokens = false
	if got := c.lfm2Expansion(Grid{Rows: 1, Cols: 2, Tokens: 1}); got != strings.Repeat(ImageToken, 9) {
		t.Errorf("without special tokens: %q", got)
	}
	if _, err := c.expand("<image>", nil); err == nil || !strings.Contains(err.Error(), "found 1 <image> tokens and 0 images") {
		t.Errorf("count mismatch: %v", err)
	}
}

// TestLfm2VlLoad: the fixture's processor config reads; another image
// processor type, do_resize or do_pad false and min_tiles above
// max_tiles are refused by name.
func TestLfm2VlLoad(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"processor_class": "Lfm2VlProcessor", "image_processor": {"image_processor_type": "SiglipImageProcessor"}}`, "not one archc implements for LFM2-VL"},
		{`{"processor_class": "Lfm2VlProcessor", "image_processor": {"do_resize": false}}`, "do_resize false"},
		{`{"processor_class": "Lfm2VlProcessor", "image_processor": {"do_pad": false}}`, "do_pad false"},
		{`{"processor_class": "Lfm2VlProcessor", "image_processor": {"min_tiles": 4, "max_tiles": 2}}`, "min_tiles must be less than or equal to max_tiles"},
		{`{"processor_class": "Lfm2VlProcessor", "image_processor": {"tile_size": 500}}`, "tile_size 500 is not a multiple"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "processor_config.json"), []byte(c.json), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadProcessor(dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.json, err, c.want)
		}
	}
}
