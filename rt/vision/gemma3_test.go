package vision

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGemma3Processor: a Gemma3Processor's processor_config.json loads as
// the PIL resize with image_seq_length soft tokens; Expand writes
// full_image_sequence for each "<start_of_image>" (the count checked);
// pan and scan and another image processor type are refused by name.
func TestGemma3Processor(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, "processor_config.json"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"processor_class": "Gemma3Processor", "image_seq_length": 3, "image_processor": {"image_processor_type": "Gemma3ImageProcessor",
		"do_resize": true, "size": {"height": 8, "width": 8}, "resample": 2, "do_rescale": true, "rescale_factor": 0.00392156862745098,
		"do_normalize": true, "image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "do_convert_rgb": null, "do_pan_and_scan": null}}`)
	p, err := LoadProcessor(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Gemma3 || p.PIL == nil || p.ImageSeqLen != 3 || !p.PIL.DoConvertRGB || p.Placeholder() != "<start_of_image>" {
		t.Fatalf("loaded %+v, want Gemma3 with 3 soft tokens, converting to RGB", p)
	}
	out, exp, err := p.Preprocess(NewRGB8(5, 3))
	if err != nil {
		t.Fatal(err)
	}
	seq := "\n\n<start_of_image><image_soft_token><image_soft_token><image_soft_token><end_of_image>\n\n"
	if out.Height != 8 || out.Width != 8 || exp != seq || p.GridOf(out).Tokens != 3 {
		t.Errorf("preprocessed %dx%d, expansion %q, grid %+v", out.Height, out.Width, exp, p.GridOf(out))
	}
	got, err := p.Expand("<bos>a<start_of_image>b<start_of_image>", []Grid{{Tokens: 3}, {Tokens: 3}})
	if err != nil || got != "<bos>a"+seq+"b"+seq {
		t.Errorf("Expand = %q, %v", got, err)
	}
	if _, err := p.Expand("<start_of_image>", nil); err == nil || !strings.Contains(err.Error(), "found 1 <start_of_image> tokens and 0 images") {
		t.Errorf("one placeholder, no image: %v", err)
	}
	write(`{"processor_class": "Gemma3Processor", "image_processor": {"do_resize": true, "size": {"height": 8, "width": 8}, "do_pan_and_scan": true}}`)
	if p, err := LoadProcessor(dir); err != nil || p.PanAndScan == nil || *p.PanAndScan != (PanAndScan{256, 4, 1.2}) {
		t.Errorf("pan and scan with Gemma3Processor's defaults: %+v, %v", p, err)
	}
	for key, bad := range map[string]string{"pan_and_scan_min_crop_size": "0", "pan_and_scan_max_num_crops": "1", "pan_and_scan_min_ratio_to_activate": "-1"} {
		write(`{"processor_class": "Gemma3Processor", "image_processor": {"do_resize": true, "size": {"height": 8, "width": 8}, "do_pan_and_scan": true, "` + key + `": ` + bad + `}}`)
		if _, err := LoadProcessor(dir); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s %s: %v, want an error naming it", key, bad, err)
		}
	}
	// A zero image_std made every pixel infinite (non-finite logits at
	// generation): refused at load, naming the key, for both processor kinds.
	write(`{"processor_class": "Gemma3Processor", "image_processor": {"do_resize": true, "size": {"height": 8, "width": 8}, "do_normalize": true, "image_mean": [0.5], "image_std": [0.5, 0, 0.5]}}`)
	if _, err := LoadProcessor(dir); err == nil || !strings.Contains(err.Error(), "image_std") {
		t.Errorf("image_std 0 (PIL backend): %v, want an error naming image_std", err)
	}
	write(`{"processor_class": "Idefics3Processor", "image_processor": {"do_normalize": true, "image_mean": [0.5], "image_std": [0]}}`)
	if _, err := LoadProcessor(dir); err == nil || !strings.Contains(err.Error(), "image_std") {
		t.Errorf("image_std 0 (Idefics3): %v, want an error naming image_std", err)
	}
	write(`{"processor_class": "Gemma3Processor", "image_processor": {"image_processor_type": "SiglipImageProcessor", "do_resize": true, "size": {"height": 8, "width": 8}}}`)
	if _, err := LoadProcessor(dir); err == nil || !strings.Contains(err.Error(), "SiglipImageProcessor") {
		t.Errorf("another image processor: %v", err)
	}
}
