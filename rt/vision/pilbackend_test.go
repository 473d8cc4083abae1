package vision

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCenterCropPads: a crop larger than the image places it on a zero
// canvas at ceil((crop − size)/2) first, as transformers' center_crop
// does: a 3-wide, 1-high image cropped to 3×4 lands at row 1, columns
// 1–3 (pads ceil(2/2) = 1 and ceil(1/2) = 1; the window then starts at
// (1−3)//2 + 1 = 0 and (3−4)//2 + 1 = 0).
func TestCenterCropPads(t *testing.T) {
	m := NewRGB8(3, 1)
	for i := range m.Pix {
		m.Pix[i] = byte(i + 1)
	}
	got := centerCrop(m, 3, 4)
	if got.W != 4 || got.H != 3 {
		t.Fatalf("crop is %dx%d, want 4x3", got.W, got.H)
	}
	for y := 0; y < 3; y++ {
		for x := 0; x < 4; x++ {
			want := byte(0)
			if y == 1 && x >= 1 && x <= 3 {
				want = m.Pix[(x-1)*3]
			}
			if g := got.Pix[(y*4+x)*3]; g != want {
				t.Errorf("(%d, %d): %d, want %d", y, x, g, want)
			}
		}
	}
	// Inside the image: the window at ((H−h)//2, (W−w)//2).
	big := NewRGB8(5, 4)
	for i := range big.Pix {
		big.Pix[i] = byte(i)
	}
	c := centerCrop(big, 2, 3)
	if c.Pix[0] != big.Pix[(1*5+1)*3] {
		t.Errorf("crop starts at %d, want pixel (1, 1) = %d", c.Pix[0], big.Pix[(1*5+1)*3])
	}
}

// TestLoadLlavaErrors: a LlavaProcessor config the PIL path cannot follow
// is an error naming the file and the field.
func TestLoadLlavaErrors(t *testing.T) {
	for _, tc := range []struct{ json, says string }{
		{`{"processor_class": "LlavaProcessor", "patch_size": 14}`, "without its image_processor"},
		{`{"processor_class": "LlavaProcessor", "patch_size": 14, "image_processor": {"image_processor_type": "LlavaNextImageProcessor"}}`, "LlavaNextImageProcessor"},
		{`{"processor_class": "LlavaProcessor", "patch_size": 0, "image_processor": {"do_resize": true, "size": {"shortest_edge": 8}}}`, "patch_size"},
		{`{"processor_class": "LlavaProcessor", "patch_size": 4, "image_processor": {"do_resize": true, "size": {}}}`, "shortest_edge"},
		{`{"processor_class": "Llama4Processor"}`, "Llama4Processor"},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "processor_config.json"), []byte(tc.json), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadProcessor(dir)
		if err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "processor_config.json") {
			t.Errorf("%s: got %v, want an error naming processor_config.json and saying %q", tc.json, err, tc.says)
		}
	}
}
