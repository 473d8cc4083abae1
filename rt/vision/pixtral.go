package vision

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Pixtral's image tokens (PixtralProcessor: Mistral 3 and LLaVA with a
// Pixtral tower): the chat template writes ImgToken once per image; the
// processor expands it to the image's merged patch grid, row by row, each
// row's ImgToken run followed by ImgBreak and the last one by ImgEnd.
const (
	ImgToken = "[IMG]"
	ImgBreak = "[IMG_BREAK]"
	ImgEnd   = "[IMG_END]"
)

// PixtralConfig is the configuration of transformers' PixtralProcessor
// with its PixtralImageProcessorPil (models/pixtral/processing_pixtral.py,
// image_processing_pil_pixtral.py): an image resized to fit LongestEdge
// (aspect ratio kept, never enlarged) with both sides rounded up to
// multiples of PatchSize·MergeSize, rescaled and normalized as the other
// PIL processors, cut into PatchSize patches.
type PixtralConfig struct {
	// DoConvertRGB whitens a PIL transparency colour key
	// (RGB8.FlattenTransparency) as convert_to_rgb does.
	DoConvertRGB bool
	// LongestEdge is size.longest_edge: the largest side, in pixels.
	LongestEdge int
	// Resample is the PIL filter of the resize (BICUBIC by default).
	Resample Filter
	// DoRescale multiplies by RescaleFactor (float64, then float32).
	DoRescale     bool
	RescaleFactor float64
	// DoNormalize applies (x − ImageMean[c]) / ImageStd[c] in float32.
	DoNormalize         bool
	ImageMean, ImageStd []float64
	// PatchSize is the tower's patch side (processor_config.json's
	// patch_size) and MergeSize the side of the projector's patch merger
	// (spatial_merge_size: Mistral 3's 2, 1 for LLaVA's Pixtral); the
	// processor resizes to multiples of their product.
	PatchSize, MergeSize int
}

// Grid is the (1, h, w) patch grid of a height×width image after Resize
// (PixtralImageProcessorPil.resize's get_resize_output_image_size with
// the processor's patch_size·spatial_merge_size): ratio = max(height,
// width) / LongestEdge; above 1 each side is floor(side / ratio); each
// side is then rounded up to a multiple of PatchSize·MergeSize.
func (c *PixtralConfig) Grid(height, width int) [3]int {
	step := c.PatchSize * c.MergeSize
	if ratio := max(float64(height)/float64(c.LongestEdge), float64(width)/float64(c.LongestEdge)); ratio > 1 {
		height, width = int(float64(height)/ratio), int(float64(width)/ratio)
	}
	h, w := ((max(height, 1)-1)/step+1)*step, ((max(width, 1)-1)/step+1)*step
	return [3]int{1, h / c.PatchSize, w / c.PatchSize}
}

// Tokens is the image's ImgToken count (one per merged patch).
func (c *PixtralConfig) Tokens(grid [3]int) int {
	return grid[1] * grid[2] / (c.MergeSize * c.MergeSize)
}

// Preprocess runs PixtralImageProcessorPil on one decoded image:
// convert_to_rgb (if DoConvertRGB), PIL resize to Grid's size, rescale
// and normalize, then the patches as patch rows: Patches is [h·w,
// 3·patch²] float32, the rows in merge-window order (for each
// MergeSize² window of patches, row-major over windows, its patches
// row-major; row-major for a MergeSize of 1), each row channel then pixel
// row-major, so that the encoder, given each patch's (row, column)
// (QwenPatchPositions), computes what PixtralVisionModel does over the
// image's row-major patches and its projector merges each window's rows.
// Errors: an empty image or an invalid configuration.
func (c *PixtralConfig) Preprocess(img *RGB8) (*Idefics3Output, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if img == nil || img.W < 1 || img.H < 1 || len(img.Pix) != img.W*img.H*3 {
		return nil, fmt.Errorf("vision: pixtral: empty or malformed image")
	}
	if c.DoConvertRGB {
		img = img.FlattenTransparency()
	}
	grid := c.Grid(img.H, img.W)
	p := c.PatchSize
	if h, w := grid[1]*p, grid[2]*p; h != img.H || w != img.W {
		var err error
		if img, err = Resize(img, w, h, c.Resample); err != nil {
			return nil, err
		}
	}
	plane := make([]float32, 3*img.H*img.W)
	rescaleNormalize(plane, img, c.DoRescale, c.RescaleFactor, c.DoNormalize, c.ImageMean, c.ImageStd)
	out := &Idefics3Output{Height: img.H, Width: img.W, GridTHW: grid, PatchDim: 3 * p * p}
	out.Patches = patchify(plane, img.H, img.W, p, c.MergeSize, 1)
	return out, nil
}

// Check refuses a configuration the processor cannot run: a patch_size,
// spatial_merge_size or size.longest_edge that is not positive, an
// unsupported resample filter, image_mean / image_std not 1 or 3 finite
// values (std nonzero) with do_normalize.
func (c *PixtralConfig) Check() error {
	for _, k := range []struct {
		name string
		v    int
	}{{"patch_size", c.PatchSize}, {"spatial_merge_size", c.MergeSize}, {"size.longest_edge", c.LongestEdge}} {
		if k.v < 1 {
			return fmt.Errorf("vision: pixtral: %s must be positive, got %d", k.name, k.v)
		}
	}
	if _, _, ok := c.Resample.kernel(); !ok {
		return fmt.Errorf("vision: pixtral: resample %v is not supported (LANCZOS, BILINEAR, BICUBIC, BOX, HAMMING)", c.Resample)
	}
	if c.DoNormalize {
		if !okStat(c.ImageMean) || !okStat(c.ImageStd) {
			return fmt.Errorf("vision: pixtral: image_mean and image_std need 1 or 3 values, got %v and %v", c.ImageMean, c.ImageStd)
		}
		if err := checkStats(c.ImageMean, c.ImageStd); err != nil {
			return fmt.Errorf("vision: pixtral: %w", err)
		}
	}
	return nil
}

// expandPixtral replaces each ImgToken the template wrote, in order, with
// its image's rows (PixtralProcessor.replace_image_token): for each of
// the merged grid's rows, ImgToken once per merged patch and ImgBreak,
// the last ImgBreak replaced by ImgEnd. Errors: an ImgToken count other
// than the image count.
func expandPixtral(text string, grids []Grid, merge int) (string, error) {
	if n := strings.Count(text, ImgToken); n != len(grids) {
		return "", fmt.Errorf("vision: the number of %s tokens in the prompt should be the same as the number of images passed: found %d %s tokens and %d images", ImgToken, n, ImgToken, len(grids))
	}
	var b strings.Builder
	for _, g := range grids {
		i := strings.Index(text, ImgToken)
		b.WriteString(text[:i])
		rows, cols := g.THW[1]/merge, g.THW[2]/merge
		for r := range rows {
			b.WriteString(strings.Repeat(ImgToken, cols))
			if r == rows-1 {
				b.WriteString(ImgEnd)
			} else {
				b.WriteString(ImgBreak)
			}
		}
		text = text[i+len(ImgToken):]
	}
	b.WriteString(text)
	return b.String(), nil
}

// DefaultPixtralConfig returns PixtralImageProcessorPil's class defaults
// (longest edge 1024, BICUBIC, rescale 1/255, OPENAI_CLIP mean and std,
// every do_* true) with PixtralProcessor's patch_size 16 and
// spatial_merge_size 1.
func DefaultPixtralConfig() PixtralConfig {
	return PixtralConfig{
		DoConvertRGB: true, LongestEdge: 1024, Resample: Bicubic, DoRescale: true, RescaleFactor: 1.0 / 255, DoNormalize: true,
		ImageMean: []float64{0.48145466, 0.4578275, 0.40821073},
		ImageStd:  []float64{0.26862954, 0.26130258, 0.27577711},
		PatchSize: 16, MergeSize: 1,
	}
}

// loadPixtral reads a PixtralProcessor's processor_config.json: its
// patch_size and spatial_merge_size (the processor's, which its image
// processor resizes by) and its nested image_processor (size.longest_edge,
// resample, rescale, normalize); the tokens must be Pixtral's ([IMG],
// [IMG_BREAK], [IMG_END]). Errors: malformed JSON, another image
// processor type or token, or a configuration Check refuses.
func loadPixtral(path string, top []byte) (*Processor, error) {
	c := DefaultPixtralConfig()
	var f struct {
		PatchSize      *int            `json:"patch_size"`
		MergeSize      *int            `json:"spatial_merge_size"`
		ImageToken     *string         `json:"image_token"`
		BreakToken     *string         `json:"image_break_token"`
		EndToken       *string         `json:"image_end_token"`
		ImageProcessor json.RawMessage `json:"image_processor"`
	}
	if err := json.Unmarshal(top, &f); err != nil {
		return nil, fmt.Errorf("vision: %s: %w", path, err)
	}
	for _, t := range []struct {
		key  string
		v    *string
		want string
	}{{"image_token", f.ImageToken, ImgToken}, {"image_break_token", f.BreakToken, ImgBreak}, {"image_end_token", f.EndToken, ImgEnd}} {
		if t.v != nil && *t.v != t.want {
			return nil, fmt.Errorf("vision: %s: %s %q: archc's Pixtral processor writes %s", path, t.key, *t.v, t.want)
		}
	}
	if f.PatchSize != nil {
		c.PatchSize = *f.PatchSize
	}
	if f.MergeSize != nil {
		c.MergeSize = *f.MergeSize
	}
	if len(f.ImageProcessor) > 0 && string(f.ImageProcessor) != "null" {
		var ip struct {
			Type         string `json:"image_processor_type"`
			DoConvertRGB *bool  `json:"do_convert_rgb"`
			DoResize     *bool  `json:"do_resize"`
			Size         *struct {
				LongestEdge int `json:"longest_edge"`
			} `json:"size"`
			Resample      *Filter  `json:"resample"`
			DoRescale     *bool    `json:"do_rescale"`
			RescaleFactor *float64 `json:"rescale_factor"`
			DoNormalize   *bool    `json:"do_normalize"`
		}
		if err := json.Unmarshal(f.ImageProcessor, &ip); err != nil {
			return nil, fmt.Errorf("vision: %s image_processor: %w", path, err)
		}
		switch ip.Type {
		case "", "PixtralImageProcessor", "PixtralImageProcessorFast", "PixtralImageProcessorPil":
		default:
			return nil, fmt.Errorf("vision: %s: image_processor_type %q is not one archc implements for Pixtral (PixtralImageProcessor)", path, ip.Type)
		}
		if ip.DoResize != nil && !*ip.DoResize {
			return nil, fmt.Errorf("vision: %s: do_resize false: archc's Pixtral processor always fits the image to size.longest_edge in patch multiples", path)
		}
		if ip.Size != nil {
			if ip.Size.LongestEdge == 0 {
				return nil, fmt.Errorf("vision: %s: size without longest_edge: archc's Pixtral processor reads size.longest_edge", path)
			}
			c.LongestEdge = ip.Size.LongestEdge
		}
		override(&c.DoConvertRGB, ip.DoConvertRGB)
		override(&c.Resample, ip.Resample)
		override(&c.DoRescale, ip.DoRescale)
		override(&c.RescaleFactor, ip.RescaleFactor)
		override(&c.DoNormalize, ip.DoNormalize)
		var raw map[string]json.RawMessage
		json.Unmarshal(f.ImageProcessor, &raw) // an object: ip's Unmarshal above succeeded
		if err := readStats(raw, &c.ImageMean, &c.ImageStd); err != nil {
			return nil, fmt.Errorf("vision: %s image_processor: %w", path, err)
		}
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return &Processor{Pixtral: &c}, nil
}
