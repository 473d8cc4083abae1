package vision

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// PanAndScan is Gemma3ImageProcessor's pan and scan (do_pan_and_scan):
// an image whose aspect ratio reaches MinRatio is also cut into 2 to
// MaxNumCrops crops along its long side, each at least MinCropSize pixels
// on both sides, and the crops follow the whole image as tiles of their
// own (image_processing_pil_gemma3.py, Gemma3ImageProcessorPil.pan_and_scan).
type PanAndScan struct {
	// MinCropSize is pan_and_scan_min_crop_size (pixels; default 256).
	MinCropSize int
	// MaxNumCrops is pan_and_scan_max_num_crops (default 4).
	MaxNumCrops int
	// MinRatio is pan_and_scan_min_ratio_to_activate, the long side over
	// the short one (default 1.2).
	MinRatio float64
}

// Gemma3Processor's defaults for pan and scan (processing_gemma3.py's
// images_kwargs), used where the image processor config leaves a key
// null or out.
const (
	defaultPanScanMinCrop  = 256
	defaultPanScanMaxCrops = 4
	defaultPanScanMinRatio = 1.2
)

// parsePanAndScan reads do_pan_and_scan and its three parameters from a
// Gemma3ImageProcessor config: nil when do_pan_and_scan is false, null or
// absent. Errors: a parameter out of range (a crop size below 1, fewer
// than 2 crops, a ratio not above 0), naming the key.
func parsePanAndScan(image json.RawMessage) (*PanAndScan, error) {
	var c struct {
		Do       *bool    `json:"do_pan_and_scan"`
		MinCrop  *int     `json:"pan_and_scan_min_crop_size"`
		MaxCrops *int     `json:"pan_and_scan_max_num_crops"`
		MinRatio *float64 `json:"pan_and_scan_min_ratio_to_activate"`
	}
	if err := json.Unmarshal(image, &c); err != nil {
		return nil, err
	}
	if c.Do == nil || !*c.Do {
		return nil, nil
	}
	ps := &PanAndScan{MinCropSize: defaultPanScanMinCrop, MaxNumCrops: defaultPanScanMaxCrops, MinRatio: defaultPanScanMinRatio}
	if c.MinCrop != nil {
		ps.MinCropSize = *c.MinCrop
	}
	if c.MaxCrops != nil {
		ps.MaxNumCrops = *c.MaxCrops
	}
	if c.MinRatio != nil {
		ps.MinRatio = *c.MinRatio
	}
	switch {
	case ps.MinCropSize < 1:
		return nil, fmt.Errorf("pan_and_scan_min_crop_size must be at least 1, got %d", ps.MinCropSize)
	case ps.MaxNumCrops < 2:
		return nil, fmt.Errorf("pan_and_scan_max_num_crops must be at least 2 (pan and scan makes 2 or more crops), got %d", ps.MaxNumCrops)
	case !(ps.MinRatio > 0):
		return nil, fmt.Errorf("pan_and_scan_min_ratio_to_activate must be positive, got %g", ps.MinRatio)
	}
	return ps, nil
}

// Crops returns the crops of img, left to right or top to bottom, as
// pan_and_scan computes them: none when the aspect ratio is below
// MinRatio or a crop would be smaller than MinCropSize; else n crops of
// ceil(long / n) pixels along the long side (the last one cut at the
// image's edge, as numpy slicing does), n = round-half-up of the ratio,
// at most long // MinCropSize, clamped to [2, MaxNumCrops].
func (ps *PanAndScan) Crops(img *RGB8) []*RGB8 {
	w, h := img.W, img.H
	if w <= 0 || h <= 0 {
		return nil
	}
	nw, nh := 1, 1
	count := func(long, short int) int {
		n := int(math.Floor(float64(long)/float64(short) + 0.5))
		n = min(long/ps.MinCropSize, n)
		return min(ps.MaxNumCrops, max(2, n))
	}
	if w >= h {
		if float64(w)/float64(h) < ps.MinRatio {
			return nil
		}
		nw = count(w, h)
	} else {
		if float64(h)/float64(w) < ps.MinRatio {
			return nil
		}
		nh = count(h, w)
	}
	cw := int(math.Ceil(float64(w) / float64(nw)))
	ch := int(math.Ceil(float64(h) / float64(nh)))
	if min(cw, ch) < ps.MinCropSize {
		return nil
	}
	var out []*RGB8
	for y := 0; y < nh; y++ {
		for x := 0; x < nw; x++ {
			x0, y0 := x*cw, y*ch
			out = append(out, crop(img, x0, y0, min(cw, w-x0), min(ch, h-y0)))
		}
	}
	return out
}

// gemma3Expansion is Gemma3Processor.replace_image_token for an image
// with crops pan-and-scan crops: its full_image_sequence alone, or, with
// crops, "Here is the original image SEQ and here are some crops to help
// you see better " and the sequence once per crop, joined by spaces.
func gemma3Expansion(seqLen, crops int) string {
	seq := gemma3Sequence(seqLen)
	if crops == 0 {
		return seq
	}
	return "Here is the original image " + seq + " and here are some crops to help you see better " + strings.TrimSuffix(strings.Repeat(seq+" ", crops), " ")
}
