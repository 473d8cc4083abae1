package vision

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPixtralGrid: the resized size is transformers'
// get_resize_output_image_size (image_processing_pil_pixtral) with the
// processor's patch_size·spatial_merge_size; the expected sizes were
// printed by that function (transformers 5.24) for these inputs.
func TestPixtralGrid(t *testing.T) {
	for _, c := range []struct{ h, w, longest, step, wantH, wantW int }{
		{60, 40, 24, 8, 24, 16},
		{9, 17, 24, 8, 16, 24},
		{20, 96, 24, 8, 8, 24},
		{1, 1, 24, 8, 8, 8},
		{1000, 3, 1024, 28, 1008, 28},
		{768, 1024, 1540, 28, 784, 1036},
		{1540, 1540, 1540, 28, 1540, 1540},
		{1541, 700, 1540, 28, 1540, 700},
		{333, 777, 1024, 16, 336, 784},
		{24, 24, 24, 8, 24, 24},
		{25, 24, 24, 8, 24, 24},
	} {
		merge := 2
		if c.step%(2*2) != 0 {
			merge = 1
		}
		cfg := DefaultPixtralConfig()
		cfg.LongestEdge, cfg.PatchSize, cfg.MergeSize = c.longest, c.step/merge, merge
		g := cfg.Grid(c.h, c.w)
		if g[0] != 1 || g[1]*cfg.PatchSize != c.wantH || g[2]*cfg.PatchSize != c.wantW {
			t.Errorf("%dx%d (longest %d, step %d): grid %v = %dx%d, want %dx%d", c.h, c.w, c.longest, c.step, g, g[1]*cfg.PatchSize, g[2]*cfg.PatchSize, c.wantH, c.wantW)
		}
	}
}

// TestPixtralExpand: each [IMG] becomes the merged grid's rows of [IMG],
// [IMG_BREAK] after each row but the last, [IMG_END] after it
// (PixtralProcessor.replace_image_token); a count other than the images'
// is an error.
func TestPixtralExpand(t *testing.T) {
	grids := []Grid{{THW: [3]int{1, 4, 6}}, {THW: [3]int{1, 2, 2}}}
	got, err := expandPixtral("a[IMG]b[IMG]c", grids, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := "a" + "[IMG][IMG][IMG][IMG_BREAK][IMG][IMG][IMG][IMG_END]" + "b" + "[IMG][IMG_END]" + "c"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, err := expandPixtral("[IMG]", grids, 2); err == nil || !strings.Contains(err.Error(), "found 1 [IMG] tokens and 2 images") {
		t.Errorf("one [IMG] for two images: %v", err)
	}
}

// TestPixtralLoad: processor_config.json's patch_size and
// spatial_merge_size and its image processor's size.longest_edge are
// read; another image processor, token or a zero size is refused by name.
func TestPixtralLoad(t *testing.T) {
	write := func(body string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "processor_config.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	p, err := LoadProcessor(write(`{"processor_class": "PixtralProcessor", "patch_size": 14, "spatial_merge_size": 2,
		"image_processor": {"image_processor_type": "PixtralImageProcessor", "size": {"longest_edge": 1540}, "resample": 3}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Pixtral == nil || p.Pixtral.PatchSize != 14 || p.Pixtral.MergeSize != 2 || p.Pixtral.LongestEdge != 1540 || p.PatchMerge() != 2 || p.Placeholder() != ImgToken || p.RowToken() != ImgToken {
		t.Fatalf("loaded %+v", p.Pixtral)
	}
	for body, want := range map[string]string{
		`{"processor_class": "PixtralProcessor", "image_processor": {"image_processor_type": "CLIPImageProcessor"}}`: `image_processor_type "CLIPImageProcessor" is not one archc implements for Pixtral`,
		`{"processor_class": "PixtralProcessor", "image_token": "<image>"}`:                                          `image_token "<image>": archc's Pixtral processor writes [IMG]`,
		`{"processor_class": "PixtralProcessor", "spatial_merge_size": 0}`:                                           `spatial_merge_size must be positive, got 0`,
		`{"processor_class": "PixtralProcessor", "image_processor": {"size": {"height": 4, "width": 4}}}`:            `size without longest_edge`,
	} {
		if _, err := LoadProcessor(write(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}
