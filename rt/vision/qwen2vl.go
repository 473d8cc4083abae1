package vision

import (
	"encoding/json"
	"fmt"
	"math"
)

// Qwen2-VL's image tokens (Qwen2VLProcessor, Qwen2_5_VLProcessor and
// Qwen3VLProcessor: the tokenizer's image_token and the template's
// brackets around it).
const (
	// ImagePad is "<|image_pad|>", the placeholder the chat template
	// writes once per image and the processor repeats once per merged
	// patch.
	ImagePad = "<|image_pad|>"
	// VisionStart and VisionEnd bracket an image's pads in the template
	// ("<|vision_start|><|image_pad|><|vision_end|>").
	VisionStart = "<|vision_start|>"
	VisionEnd   = "<|vision_end|>"
	// VideoPad is "<|video_pad|>", a video's placeholder: refused (archc
	// takes no video input).
	VideoPad = "<|video_pad|>"
)

// QwenMaxAspectRatio is smart_resize's limit: an image whose longer side
// is more than 200 times its shorter one is refused.
const QwenMaxAspectRatio = 200

// QwenVLConfig is the configuration of transformers'
// Qwen2VLImageProcessorPil (models/qwen2_vl/image_processing_pil_qwen2_vl),
// the image processor of Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Qwen3.5, as
// its __init__ resolves it: "size" {"shortest_edge", "longest_edge"}
// (pixel counts, not edges) replaced whole when present, then
// "min_pixels" / "max_pixels" overriding shortest_edge / longest_edge.
type QwenVLConfig struct {
	// DoConvertRGB whitens a PIL transparency colour key
	// (RGB8.FlattenTransparency) as convert_to_rgb does.
	DoConvertRGB bool
	// DoResize resizes to SmartResize's size (else the image's size must
	// already be a multiple of PatchSize·MergeSize).
	DoResize bool
	// MinPixels and MaxPixels are size.shortest_edge / min_pixels and
	// size.longest_edge / max_pixels: the pixel-count bounds of SmartResize.
	MinPixels, MaxPixels int
	// Resample is the PIL filter of the resize (BICUBIC by default).
	Resample Filter
	// DoRescale multiplies by RescaleFactor (float64, then float32).
	DoRescale     bool
	RescaleFactor float64
	// DoNormalize applies (x − ImageMean[c]) / ImageStd[c] in float32.
	DoNormalize         bool
	ImageMean, ImageStd []float64
	// PatchSize is the tower's spatial patch side, TemporalPatchSize its
	// frames per patch (an image is repeated to fill them) and MergeSize
	// the side of the merger's window (patches merged into one token).
	PatchSize, TemporalPatchSize, MergeSize int
}

// DefaultQwenVLConfig returns Qwen2VLImageProcessorPil's class defaults:
// min_pixels 56·56, max_pixels 28·28·1280, BICUBIC, rescale 1/255,
// OPENAI_CLIP mean and std, patch 14, temporal patch 2, merge 2, every
// do_* true.
func DefaultQwenVLConfig() QwenVLConfig {
	return QwenVLConfig{
		DoConvertRGB: true, DoResize: true, MinPixels: 56 * 56, MaxPixels: 28 * 28 * 1280,
		Resample: Bicubic, DoRescale: true, RescaleFactor: 1.0 / 255, DoNormalize: true,
		ImageMean: []float64{0.48145466, 0.4578275, 0.40821073},
		ImageStd:  []float64{0.26862954, 0.26130258, 0.27577711},
		PatchSize: 14, TemporalPatchSize: 2, MergeSize: 2,
	}
}

// ParseQwenVLConfig reads an image processor's JSON (preprocessor_config.json
// or processor_config.json's "image_processor") over DefaultQwenVLConfig
// as Qwen2VLImageProcessorPil.__init__ does: a "size" present replaces the
// default {shortest_edge, longest_edge} whole (a key it lacks is then
// unset), then a non-null "min_pixels" sets shortest_edge and "max_pixels"
// longest_edge; a scalar image_mean / image_std is repeated per channel.
// Errors: malformed JSON, or a configuration Check refuses.
func ParseQwenVLConfig(b []byte) (*QwenVLConfig, error) {
	c := DefaultQwenVLConfig()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	var f struct {
		DoConvertRGB      *bool     `json:"do_convert_rgb"`
		DoResize          *bool     `json:"do_resize"`
		Size              *pilSize2 `json:"size"`
		MinPixels         *int      `json:"min_pixels"`
		MaxPixels         *int      `json:"max_pixels"`
		Resample          *Filter   `json:"resample"`
		DoRescale         *bool     `json:"do_rescale"`
		RescaleFactor     *float64  `json:"rescale_factor"`
		DoNormalize       *bool     `json:"do_normalize"`
		PatchSize         *int      `json:"patch_size"`
		TemporalPatchSize *int      `json:"temporal_patch_size"`
		MergeSize         *int      `json:"merge_size"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	setB := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	setI := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setB(&c.DoConvertRGB, f.DoConvertRGB)
	setB(&c.DoResize, f.DoResize)
	setB(&c.DoRescale, f.DoRescale)
	setB(&c.DoNormalize, f.DoNormalize)
	if f.Size != nil {
		c.MinPixels, c.MaxPixels = f.Size.ShortestEdge, f.Size.LongestEdge
	}
	setI(&c.MinPixels, f.MinPixels)
	setI(&c.MaxPixels, f.MaxPixels)
	if f.Resample != nil {
		c.Resample = *f.Resample
	}
	if f.RescaleFactor != nil {
		c.RescaleFactor = *f.RescaleFactor
	}
	setI(&c.PatchSize, f.PatchSize)
	setI(&c.TemporalPatchSize, f.TemporalPatchSize)
	setI(&c.MergeSize, f.MergeSize)
	if err := readStats(raw, &c.ImageMean, &c.ImageStd); err != nil {
		return nil, err
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return &c, nil
}

// override sets *dst to *v when the config gives v (a JSON field present):
// an image_processor key over the processor's default.
func override[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// readStats reads an image processor's "image_mean" and "image_std" from
// its JSON object raw where present and not null: a number (repeated per
// channel by the caller's stat3) or a list. Errors name the key.
func readStats(raw map[string]json.RawMessage, means, stds *[]float64) error {
	for _, s := range []struct {
		key string
		dst *[]float64
	}{{"image_mean", means}, {"image_std", stds}} {
		v, ok := raw[s.key]
		if !ok || string(v) == "null" {
			continue
		}
		var one float64
		if json.Unmarshal(v, &one) == nil {
			*s.dst = []float64{one}
			continue
		}
		var list []float64
		if err := json.Unmarshal(v, &list); err != nil {
			return fmt.Errorf("%s: %w", s.key, err)
		}
		*s.dst = list
	}
	return nil
}

// pilSize2 is a Qwen2-VL "size" dictionary: pixel counts under the
// edge names.
type pilSize2 struct {
	ShortestEdge int `json:"shortest_edge"`
	LongestEdge  int `json:"longest_edge"`
}

// Check refuses a configuration the processor cannot run: patch_size,
// temporal_patch_size or merge_size not positive; with do_resize a
// min_pixels or max_pixels that is not positive (transformers refuses a
// size without both) or min_pixels above max_pixels; image_mean /
// image_std not 1 or 3 finite values (std nonzero) with do_normalize.
func (c *QwenVLConfig) Check() error {
	for _, k := range []struct {
		name string
		v    int
	}{{"patch_size", c.PatchSize}, {"temporal_patch_size", c.TemporalPatchSize}, {"merge_size", c.MergeSize}} {
		if k.v < 1 {
			return fmt.Errorf("vision: qwen2-vl: %s must be positive, got %d", k.name, k.v)
		}
	}
	if c.DoResize {
		if c.MinPixels < 1 || c.MaxPixels < 1 {
			return fmt.Errorf("vision: qwen2-vl: min_pixels (size.shortest_edge) and max_pixels (size.longest_edge) must be positive, got %d and %d", c.MinPixels, c.MaxPixels)
		}
		if c.MinPixels > c.MaxPixels {
			return fmt.Errorf("vision: qwen2-vl: min_pixels (size.shortest_edge) %d is above max_pixels (size.longest_edge) %d", c.MinPixels, c.MaxPixels)
		}
		if _, _, ok := c.Resample.kernel(); !ok {
			return fmt.Errorf("vision: qwen2-vl: resample %v is not supported (LANCZOS, BILINEAR, BICUBIC, BOX, HAMMING)", c.Resample)
		}
	}
	if c.DoNormalize {
		if !okStat(c.ImageMean) || !okStat(c.ImageStd) {
			return fmt.Errorf("vision: qwen2-vl: image_mean and image_std need 1 or 3 values, got %v and %v", c.ImageMean, c.ImageStd)
		}
		if err := checkStats(c.ImageMean, c.ImageStd); err != nil {
			return fmt.Errorf("vision: qwen2-vl: %w", err)
		}
	}
	return nil
}

// SmartResize is transformers' smart_resize (image_processing_qwen2_vl):
// the (height, width) an image of height×width pixels is resized to, both
// multiples of factor (patch_size·merge_size), the aspect ratio kept as
// closely as the rounding allows: each side rounded half to even to a
// multiple of factor; when their product exceeds maxPixels, both scaled
// by 1/√(h·w/maxPixels) and floored to a multiple of factor (at least
// factor); when it is below minPixels, scaled by √(minPixels/(h·w)) and
// rounded up. Errors: a side below 1, or an aspect ratio above
// QwenMaxAspectRatio (smart_resize's ValueError, with its message).
func SmartResize(height, width, factor, minPixels, maxPixels int) (int, int, error) {
	if height < 1 || width < 1 || factor < 1 {
		return 0, 0, fmt.Errorf("vision: qwen2-vl: smart_resize of %dx%d with factor %d", width, height, factor)
	}
	if r := float64(max(height, width)) / float64(min(height, width)); r > QwenMaxAspectRatio {
		return 0, 0, fmt.Errorf("vision: qwen2-vl: image %dx%d: absolute aspect ratio must be smaller than %d, got %v", width, height, QwenMaxAspectRatio, pyFloat(r))
	}
	h, w, f := float64(height), float64(width), float64(factor)
	hb := int(math.RoundToEven(h/f)) * factor
	wb := int(math.RoundToEven(w/f)) * factor
	switch {
	case hb*wb > maxPixels:
		beta := math.Sqrt(float64(height*width) / float64(maxPixels))
		hb = max(factor, int(math.Floor(h/beta/f))*factor)
		wb = max(factor, int(math.Floor(w/beta/f))*factor)
	case hb*wb < minPixels:
		beta := math.Sqrt(float64(minPixels) / float64(height*width))
		hb = int(math.Ceil(h*beta/f)) * factor
		wb = int(math.Ceil(w*beta/f)) * factor
	}
	return hb, wb, nil
}

// pyFloat formats f as Python's str(float) does for the values
// smart_resize reports (a trailing ".0" on integral values).
func pyFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e16 {
		return fmt.Sprintf("%.1f", f)
	}
	return fmt.Sprint(f)
}

// Grid is the (t, h, w) patch grid ("image_grid_thw") Preprocess gives an
// image of height×width pixels, computed without touching pixels.
// Errors: those of SmartResize, or without do_resize a size that is not
// a multiple of patch_size·merge_size.
func (c *QwenVLConfig) Grid(height, width int) ([3]int, error) {
	factor := c.PatchSize * c.MergeSize
	h, w := height, width
	if c.DoResize {
		var err error
		if h, w, err = SmartResize(height, width, factor, c.MinPixels, c.MaxPixels); err != nil {
			return [3]int{}, err
		}
	} else if h%factor != 0 || w%factor != 0 {
		return [3]int{}, fmt.Errorf("vision: qwen2-vl: image %dx%d: without do_resize its sides must be multiples of patch_size·merge_size = %d", width, height, factor)
	}
	return [3]int{1, h / c.PatchSize, w / c.PatchSize}, nil
}

// Tokens is the image's "<|image_pad|>" count: t·h·w / merge_size²
// (Qwen2VLProcessor.replace_image_token).
func (c *QwenVLConfig) Tokens(grid [3]int) int {
	return grid[0] * grid[1] * grid[2] / (c.MergeSize * c.MergeSize)
}

// Preprocess runs Qwen2VLImageProcessorPil on one decoded image:
// convert_to_rgb (if DoConvertRGB), PIL resize (Resize, filter Resample)
// to SmartResize's size, rescale and normalize as the other PIL
// processors (float64 rescale cast to float32, float32 normalize), then
// patchify: the output's Patches are the image's pixel_values rows,
// [grid_t·grid_h·grid_w, 3·temporal_patch_size·patch²] float32, the rows
// in merge-window order (for each merge_size² window of patches, row-major
// over windows, its patches row-major) and each row channel, then frame
// (the image repeated temporal_patch_size times), then the patch's pixels
// row-major. GridTHW is image_grid_thw = (1, H/patch, W/patch); Height and
// Width the resized size; Tiles is 0 (there are no fixed-size tiles).
// Errors: an empty image, an invalid configuration, or those of Grid.
func (c *QwenVLConfig) Preprocess(img *RGB8) (*Idefics3Output, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if img == nil || img.W < 1 || img.H < 1 || len(img.Pix) != img.W*img.H*3 {
		return nil, fmt.Errorf("vision: qwen2-vl: empty or malformed image")
	}
	if c.DoConvertRGB {
		img = img.FlattenTransparency()
	}
	grid, err := c.Grid(img.H, img.W)
	if err != nil {
		return nil, err
	}
	p := c.PatchSize
	if h, w := grid[1]*p, grid[2]*p; h != img.H || w != img.W {
		if img, err = Resize(img, w, h, c.Resample); err != nil {
			return nil, err
		}
	}
	plane := make([]float32, 3*img.H*img.W)
	rescaleNormalize(plane, img, c.DoRescale, c.RescaleFactor, c.DoNormalize, c.ImageMean, c.ImageStd)
	out := &Idefics3Output{Height: img.H, Width: img.W, GridTHW: grid}
	out.PatchDim = 3 * c.TemporalPatchSize * p * p
	out.Patches = patchify(plane, img.H, img.W, p, c.MergeSize, c.TemporalPatchSize)
	return out, nil
}

// patchify lays a [3, H, W] image out as Qwen2VLImageProcessorPil.patchify
// does (see Preprocess).
func patchify(plane []float32, H, W, p, m, T int) []float32 {
	gh, gw := H/p, W/p
	dim := 3 * T * p * p
	out := make([]float32, gh*gw*dim)
	row := 0
	for bh := 0; bh < gh/m; bh++ {
		for bw := 0; bw < gw/m; bw++ {
			for mh := 0; mh < m; mh++ {
				for mw := 0; mw < m; mw++ {
					y0, x0 := (bh*m+mh)*p, (bw*m+mw)*p
					dst := out[row*dim : (row+1)*dim]
					i := 0
					for ch := 0; ch < 3; ch++ {
						for t := 0; t < T; t++ {
							for y := 0; y < p; y++ {
								src := plane[ch*H*W+(y0+y)*W+x0:]
								i += copy(dst[i:i+p], src[:p])
							}
						}
					}
					row++
				}
			}
		}
	}
	return out
}

// QwenPatchPositions is the vision tower's rotary position of each patch
// row (Qwen2VisionTransformer.rot_pos_emb, transformers'
// vision_utils.get_vision_position_ids): [t·h·w, 2] (row, column) pairs
// row-major, in the rows' merge-window order (see Preprocess), the
// spatial pairs repeated for each of the t frames. merge must divide h
// and w; otherwise nil.
func QwenPatchPositions(gridTHW [3]int, merge int) []int32 {
	t, h, w := gridTHW[0], gridTHW[1], gridTHW[2]
	if merge < 1 || t < 0 || h < 0 || w < 0 || h%merge != 0 || w%merge != 0 {
		return nil
	}
	one := make([]int32, 0, 2*h*w)
	for bh := 0; bh < h/merge; bh++ {
		for bw := 0; bw < w/merge; bw++ {
			for mh := 0; mh < merge; mh++ {
				for mw := 0; mw < merge; mw++ {
					one = append(one, int32(bh*merge+mh), int32(bw*merge+mw))
				}
			}
		}
	}
	out := make([]int32, 0, t*len(one))
	for range t {
		out = append(out, one...)
	}
	return out
}

// loadQwenVL reads a Qwen2VLProcessor's (or Qwen2_5_VLProcessor's,
// Qwen3VLProcessor's: the same image side) image processor JSON.
func loadQwenVL(path string, image []byte) (*Processor, error) {
	var kind struct {
		Type string `json:"image_processor_type"`
	}
	json.Unmarshal(image, &kind)
	switch kind.Type {
	case "", "Qwen2VLImageProcessor", "Qwen2VLImageProcessorFast", "Qwen2VLImageProcessorPil":
	default:
		return nil, fmt.Errorf("vision: %s: image_processor_type %q is not one archc implements for Qwen2-VL (Qwen2VLImageProcessor)", path, kind.Type)
	}
	c, err := ParseQwenVLConfig(image)
	if err != nil {
		return nil, fmt.Errorf("vision: %s: %w", path, err)
	}
	return &Processor{Qwen: c}, nil
}
