package vision

import (
	"fmt"
	"math"
)

// SizeDict is a Hugging Face image-processor size dictionary; Idefics3
// uses only "longest_edge" for size and max_image_size, "height"/"width"
// are accepted for a fixed size.
type SizeDict struct {
	// LongestEdge is "longest_edge" in pixels (0 when absent).
	LongestEdge int `json:"longest_edge,omitempty"`
	// Height and Width are "height" and "width" in pixels (0 when absent).
	Height int `json:"height,omitempty"`
	Width  int `json:"width,omitempty"`
}

// Idefics3Config is the configuration of transformers'
// Idefics3ImageProcessorPil (models/idefics3/image_processing_pil_idefics3),
// with the JSON names of preprocessor_config.json /
// processor_config.json["image_processor"].
type Idefics3Config struct {
	// DoConvertRGB ("do_convert_rgb") whitens a PIL transparency colour
	// key (RGB8.FlattenTransparency) as convert_to_rgb does.
	DoConvertRGB bool `json:"do_convert_rgb"`
	// DoResize ("do_resize") resizes so the longest edge is Size.LongestEdge.
	DoResize bool `json:"do_resize"`
	// Size ("size") is the resize target, {"longest_edge": N}.
	Size SizeDict `json:"size"`
	// Resample ("resample") is the PIL filter number of every resize.
	Resample Filter `json:"resample"`
	// DoImageSplitting ("do_image_splitting") splits into MaxImageSize tiles
	// plus a global image.
	DoImageSplitting bool `json:"do_image_splitting"`
	// MaxImageSize ("max_image_size") is the tile side, {"longest_edge": N}.
	MaxImageSize SizeDict `json:"max_image_size"`
	// DoRescale ("do_rescale") multiplies by RescaleFactor.
	DoRescale bool `json:"do_rescale"`
	// RescaleFactor ("rescale_factor"), normally 1/255.
	RescaleFactor float64 `json:"rescale_factor"`
	// DoNormalize ("do_normalize") applies (x - ImageMean[c]) / ImageStd[c].
	DoNormalize bool `json:"do_normalize"`
	// ImageMean ("image_mean"), one per channel (a single value is repeated).
	ImageMean []float64 `json:"image_mean"`
	// ImageStd ("image_std"), one per channel (a single value is repeated).
	ImageStd []float64 `json:"image_std"`
	// DoPad ("do_pad") pads a batch to a common tile count and size; for
	// the single image Preprocess handles it changes nothing (every tile
	// is MaxImageSize² and the pixel_attention_mask is all ones).
	DoPad bool `json:"do_pad"`
}

// Idefics3MaxImageSize is transformers' MAX_IMAGE_SIZE (4096): no resized
// edge may exceed it.
const Idefics3MaxImageSize = 4096

// DefaultIdefics3Config returns Idefics3ImageProcessorPil's class defaults:
// size longest_edge 4*364, max_image_size 364, LANCZOS, rescale 1/255,
// IMAGENET_STANDARD mean and std (0.5), every do_* true.
func DefaultIdefics3Config() Idefics3Config {
	return Idefics3Config{
		DoConvertRGB: true, DoResize: true, Size: SizeDict{LongestEdge: 4 * 364},
		Resample: Lanczos, DoImageSplitting: true, MaxImageSize: SizeDict{LongestEdge: 364},
		DoRescale: true, RescaleFactor: 1.0 / 255, DoNormalize: true,
		ImageMean: []float64{0.5, 0.5, 0.5}, ImageStd: []float64{0.5, 0.5, 0.5}, DoPad: true,
	}
}

// Idefics3Output is the processed form of one image, for every processor
// kind: fixed-size tiles in PixelValues (Idefics3, LLaVA, Gemma 3), or
// for Qwen2-VL patch rows in Patches with their grid in GridTHW (then
// Tiles is 0 and PixelValues nil).
type Idefics3Output struct {
	// PixelValues is "pixel_values" for the image: float32
	// [Tiles, 3, Height, Width], channels first, tiles row-major with the
	// global image last.
	PixelValues []float32
	// Tiles, Height and Width are the dimensions of PixelValues.
	Tiles, Height, Width int
	// Rows and Cols are the split grid ("rows"/"cols" of
	// return_row_col_info); both 0 when the image was not split.
	Rows, Cols int
	// Crops counts Gemma 3's pan-and-scan crops (num_crops), which follow
	// the whole image as tiles 1..Crops; 0 otherwise.
	Crops int
	// Patches is Qwen2-VL's "pixel_values" for the image: float32
	// [GridTHW[0]·GridTHW[1]·GridTHW[2], PatchDim], one row per patch in
	// the merger's window order (QwenVLConfig.Preprocess); nil for the
	// tiled processors. Height and Width are then the resized image's.
	Patches []float32
	// PatchDim is the length of a Patches row: 3·temporal_patch_size·
	// patch_size².
	PatchDim int
	// GridTHW is Qwen2-VL's "image_grid_thw" for the image: (t, h, w) in
	// patches (t = 1 for an image); zero for the tiled processors.
	GridTHW [3]int
	// TileGrids is LFM2-VL's per-tile (1, h, w) in patches
	// (spatial_shapes), in the order of Patches' tiles (Lfm2VlConfig.Preprocess);
	// nil for the other processors.
	TileGrids [][3]int
}

// Idefics3ResizeSize is the (height, width) Idefics3's resize gives for a
// height×width image and longest edge maxLen:
// _resize_output_size_rescale_to_max_len (the longest edge becomes
// maxLen, the other int(maxLen / aspect) or int(maxLen * aspect) with
// aspect = width/height in float64, bumped to even, at least 1) then
// _resize_output_size_scale_below_upper_bound with MAX_IMAGE_SIZE.
func Idefics3ResizeSize(height, width, maxLen int) (int, int) {
	aspect := float64(width) / float64(height)
	if width >= height {
		width = maxLen
		height = int(float64(width) / aspect)
		if height%2 != 0 {
			height++
		}
	} else {
		height = maxLen
		width = int(float64(height) * aspect)
		if width%2 != 0 {
			width++
		}
	}
	height, width = max(height, 1), max(width, 1)
	aspect = float64(width) / float64(height)
	if width >= height && width > Idefics3MaxImageSize {
		width = Idefics3MaxImageSize
		height = int(float64(width) / aspect)
	} else if height > width && height > Idefics3MaxImageSize {
		height = Idefics3MaxImageSize
		width = int(float64(height) * aspect)
	}
	return max(height, 1), max(width, 1)
}

// Idefics3VisionEncoderSize is the (height, width) of
// resize_for_vision_encoder: the longer edge rounded up to a multiple of
// tile (math.ceil of the float quotient), the other edge int() of it
// through the float64 aspect ratio and then rounded up to a multiple of
// tile as well.
func Idefics3VisionEncoderSize(height, width, tile int) (int, int) {
	aspect := float64(width) / float64(height)
	if width >= height {
		width = int(math.Ceil(float64(width)/float64(tile))) * tile
		height = int(float64(width) / aspect)
		height = int(math.Ceil(float64(height)/float64(tile))) * tile
	} else {
		height = int(math.Ceil(float64(height)/float64(tile))) * tile
		width = int(float64(height) * aspect)
		width = int(math.Ceil(float64(width)/float64(tile))) * tile
	}
	return height, width
}

func (c *Idefics3Config) check() error {
	if c.DoResize && c.Size.LongestEdge < 1 && (c.Size.Height < 1 || c.Size.Width < 1) {
		return fmt.Errorf("vision: idefics3: size must have \"longest_edge\" or \"height\" and \"width\", got %+v", c.Size)
	}
	if c.MaxImageSize.LongestEdge < 1 {
		return fmt.Errorf("vision: idefics3: max_image_size must have a positive \"longest_edge\", got %+v", c.MaxImageSize)
	}
	if c.DoNormalize && (!okStat(c.ImageMean) || !okStat(c.ImageStd)) {
		return fmt.Errorf("vision: idefics3: image_mean and image_std need 1 or 3 values, got %v and %v", c.ImageMean, c.ImageStd)
	}
	if c.DoNormalize {
		if err := checkStats(c.ImageMean, c.ImageStd); err != nil {
			return fmt.Errorf("vision: idefics3: %w", err)
		}
	}
	return nil
}

func okStat(v []float64) bool { return len(v) == 1 || len(v) == 3 }

// checkStats refuses an image_mean that is not finite or an image_std that
// is not finite and nonzero: normalize divides by the std, and a zero one
// made every pixel infinite, which surfaced only as non-finite logits.
func checkStats(mean, std []float64) error {
	for _, m := range mean {
		if math.IsNaN(m) || math.IsInf(m, 0) {
			return fmt.Errorf("image_mean %v: every value must be finite", mean)
		}
	}
	for _, s := range std {
		if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Errorf("image_std %v: every value must be finite and nonzero (normalize divides by it)", std)
		}
	}
	return nil
}

func stat3(v []float64, c int) float32 {
	if len(v) == 1 {
		return float32(v[0])
	}
	return float32(v[c])
}

// Preprocess runs Idefics3ImageProcessorPil on one image as returned by
// Decode (transformers' load_image): convert_to_rgb (transparency key to
// white, if DoConvertRGB), then, all with PIL resizes (Resize, filter
// Resample) on uint8:
//
//  1. do_resize: to Idefics3ResizeSize(H, W, size.longest_edge) (or the
//     fixed height/width);
//  2. do_image_splitting: to Idefics3VisionEncoderSize(…, max_image_size),
//     then, if larger than one tile, cut into rows×cols tiles of
//     max_image_size² read row-major, followed by the whole image resized
//     to max_image_size² (the global image); otherwise the single image
//     with rows = cols = 0. Without splitting: one image resized to
//     max_image_size², rows = cols = 0;
//  3. do_rescale: float32(float64(v) * rescale_factor) (numpy's
//     astype(float64) * scale, then astype(float32));
//  4. do_normalize: (x - float32(mean[c])) / float32(std[c]) in float32
//     (numpy float32 arithmetic); without rescale x is float32(v).
//
// Errors: an empty image or an invalid configuration.
func (c *Idefics3Config) Preprocess(img *RGB8) (*Idefics3Output, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if img == nil || img.W < 1 || img.H < 1 || len(img.Pix) != img.W*img.H*3 {
		return nil, fmt.Errorf("vision: idefics3: empty or malformed image")
	}
	if c.DoConvertRGB {
		img = img.FlattenTransparency()
	}
	var err error
	if c.DoResize {
		h, w := c.Size.Height, c.Size.Width
		if c.Size.LongestEdge > 0 {
			h, w = Idefics3ResizeSize(img.H, img.W, c.Size.LongestEdge)
		}
		if img, err = Resize(img, w, h, c.Resample); err != nil {
			return nil, err
		}
	}
	tile := c.MaxImageSize.LongestEdge
	var frames []*RGB8
	rows, cols := 0, 0
	if c.DoImageSplitting {
		h, w := Idefics3VisionEncoderSize(img.H, img.W, tile)
		if img, err = Resize(img, w, h, c.Resample); err != nil {
			return nil, err
		}
		if img.H > tile || img.W > tile {
			rows = (img.H-tile)/tile + 1
			cols = (img.W-tile)/tile + 1
			for r := 0; r < rows; r++ {
				for q := 0; q < cols; q++ {
					frames = append(frames, crop(img, q*tile, r*tile, tile, tile))
				}
			}
			g, err := Resize(img, tile, tile, c.Resample)
			if err != nil {
				return nil, err
			}
			frames = append(frames, g)
		} else {
			frames = []*RGB8{img}
		}
	} else {
		g, err := Resize(img, tile, tile, c.Resample)
		if err != nil {
			return nil, err
		}
		frames = []*RGB8{g}
	}
	fh, fw := frames[0].H, frames[0].W
	for _, f := range frames {
		if f.H != fh || f.W != fw {
			return nil, fmt.Errorf("vision: idefics3: internal error: frames of different sizes")
		}
	}
	out := &Idefics3Output{Tiles: len(frames), Height: fh, Width: fw, Rows: rows, Cols: cols,
		PixelValues: make([]float32, len(frames)*3*fh*fw)}
	plane := fh * fw
	for t, f := range frames {
		rescaleNormalize(out.PixelValues[t*3*plane:(t+1)*3*plane], f, c.DoRescale, c.RescaleFactor, c.DoNormalize, c.ImageMean, c.ImageStd)
	}
	return out, nil
}

// rescaleNormalize writes img's pixels channels first into dst [3, H, W]:
// with rescale float32(float64(v)·factor) (numpy's float64 rescale cast to
// float32), with normalize then (x − float32(mean[c])) / float32(std[c])
// in float32 (numpy float32 arithmetic); with neither, float32(v).
func rescaleNormalize(dst []float32, img *RGB8, rescale bool, factor float64, normalize bool, means, stds []float64) {
	plane := img.W * img.H
	for ch := 0; ch < 3; ch++ {
		var mean, std float32
		if normalize {
			mean, std = stat3(means, ch), stat3(stds, ch)
		}
		out := dst[ch*plane : (ch+1)*plane]
		for i := range out {
			v := float32(img.Pix[3*i+ch])
			if rescale {
				v = float32(float64(img.Pix[3*i+ch]) * factor)
			}
			if normalize {
				v = (v - mean) / std
			}
			out[i] = v
		}
	}
}

// crop returns the w×h window at (x0, y0); the window may run past the
// right or bottom edge, which never happens for the tile grid here.
func crop(m *RGB8, x0, y0, w, h int) *RGB8 {
	out := NewRGB8(w, h)
	for y := 0; y < h && y0+y < m.H; y++ {
		n := min(w, m.W-x0)
		copy(out.Pix[y*w*3:], m.Pix[((y0+y)*m.W+x0)*3:((y0+y)*m.W+x0+n)*3])
	}
	return out
}

// Grid is the (rows, cols) grid and tile count that Preprocess gives an
// image of height×width pixels, computed without touching pixels by the
// same size arithmetic. (transformers' get_number_of_image_patches rounds
// the shorter edge up from the pre-rounding size instead of from
// int(longer/aspect), so in rare cases it can disagree with what its own
// preprocess does; Grid follows preprocess.) Tiles is rows*cols+1, or 1
// when the image is not split.
func (c *Idefics3Config) Grid(height, width int) (rows, cols, tiles int) {
	if c.DoResize && c.Size.LongestEdge > 0 {
		height, width = Idefics3ResizeSize(height, width, c.Size.LongestEdge)
	} else if c.DoResize {
		height, width = c.Size.Height, c.Size.Width
	}
	if !c.DoImageSplitting {
		return 0, 0, 1
	}
	tile := c.MaxImageSize.LongestEdge
	height, width = Idefics3VisionEncoderSize(height, width, tile)
	if height > tile || width > tile {
		rows, cols = (height-tile)/tile+1, (width-tile)/tile+1
		return rows, cols, rows*cols + 1
	}
	return 0, 0, 1
}
