package vision

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

// LFM2-VL's image tokens (Lfm2VlProcessor's defaults: the tokenizer's
// image_start_token, image_end_token and image_thumbnail_token); each
// tile of a split image is introduced by "<|img_row_R_col_C|>" (1-based).
const (
	ImageStart     = "<|image_start|>"
	ImageEnd       = "<|image_end|>"
	ImageThumbnail = "<|img_thumbnail|>"
)

// Lfm2VlConfig is the configuration of transformers' Lfm2VlProcessor with
// its Lfm2VlImageProcessor (models/lfm2_vl/image_processing_lfm2_vl.py,
// processing_lfm2_vl.py). transformers has it with a torchvision backend
// only; archc resizes with its PIL-exact filters (torchvision's
// antialiased uint8 resize follows PIL's). An image is resized so both
// sides are multiples of EncoderPatchSize·DownsampleFactor and its pixels
// lie within MinImageTokens..MaxImageTokens image tokens (SmartResize);
// one too large (IsTooLarge) is instead resized to a grid of TileSize
// tiles (GridLayout) followed by the smart-resized thumbnail. Each tile
// becomes patch rows: EncoderPatchSize² pixels, row-major, channel last
// (Siglip2's convert_image_to_patches).
type Lfm2VlConfig struct {
	// DoConvertRGB whitens a PIL transparency colour key as
	// convert_to_rgb does (a grayscale image needs it in transformers).
	DoConvertRGB bool
	// Resample is the resize filter (BILINEAR).
	Resample Filter
	// DoRescale multiplies by RescaleFactor; DoNormalize applies
	// (x − ImageMean[c]) / ImageStd[c] in float32.
	DoRescale           bool
	RescaleFactor       float64
	DoNormalize         bool
	ImageMean, ImageStd []float64
	// DownsampleFactor is the projector's pixel-unshuffle side
	// (downsample_factor), EncoderPatchSize the tower's patch side,
	// TileSize a tile's side in pixels.
	DownsampleFactor, EncoderPatchSize, TileSize int
	// DoImageSplitting, MinTiles, MaxTiles, UseThumbnail: how a large
	// image is split (do_image_splitting off: min = max = 1 tile).
	DoImageSplitting   bool
	MinTiles, MaxTiles int
	UseThumbnail       bool
	// MinImageTokens and MaxImageTokens bound a resized image's tokens;
	// MaxPixelsTolerance is the factor over the maximum above which an
	// image is split.
	MinImageTokens, MaxImageTokens int
	MaxPixelsTolerance             float64
	// UseImageSpecialTokens (the processor's use_image_special_tokens)
	// wraps each image in ImageStart / ImageEnd and names its tiles.
	UseImageSpecialTokens bool
}

// DefaultLfm2VlConfig returns Lfm2VlImageProcessor's and Lfm2VlProcessor's
// class defaults (LFM2-VL-1.6B's preprocessor_config.json): BILINEAR,
// rescale 1/255, mean and std 0.5, downsample 2, patch 16, tiles of 512
// (2 to 10 and a thumbnail), 64 to 256 image tokens, tolerance 2,
// special tokens on. DoConvertRGB is off as there.
func DefaultLfm2VlConfig() Lfm2VlConfig {
	return Lfm2VlConfig{
		Resample: Bilinear, DoRescale: true, RescaleFactor: 1.0 / 255, DoNormalize: true,
		ImageMean: []float64{0.5, 0.5, 0.5}, ImageStd: []float64{0.5, 0.5, 0.5},
		DownsampleFactor: 2, EncoderPatchSize: 16, TileSize: 512,
		DoImageSplitting: true, MinTiles: 2, MaxTiles: 10, UseThumbnail: true,
		MinImageTokens: 64, MaxImageTokens: 256, MaxPixelsTolerance: 2, UseImageSpecialTokens: true,
	}
}

// tiles is the (min, max) tile count: 1, 1 without splitting.
func (c *Lfm2VlConfig) tiles() (int, int) {
	if !c.DoImageSplitting {
		return 1, 1
	}
	return c.MinTiles, c.MaxTiles
}

// MaxNumPatches is the patch count the processor pads every tile to
// (max_num_patches: pixel_attention_mask's length): the larger of a
// thumbnail's most patches and a tile's.
func (c *Lfm2VlConfig) MaxNumPatches() int {
	n := c.MaxImageTokens * c.DownsampleFactor * c.DownsampleFactor
	if c.DoImageSplitting {
		n = max(n, (c.TileSize/c.EncoderPatchSize)*(c.TileSize/c.EncoderPatchSize))
	}
	return n
}

// roundBy is round_by_factor: Python's round (half to even) of x / f, times f.
func roundBy(x float64, f int) int { return int(math.RoundToEven(x/float64(f))) * f }

// SmartResize is Lfm2VlImageProcessor.smart_resize for a height×width
// image: (height, width) rounded to multiples of patch·downsample (at
// least one), scaled down (floor) when above MaxImageTokens' pixels or up
// (ceil) when below MinImageTokens', aspect ratio kept (float64).
func (c *Lfm2VlConfig) SmartResize(height, width int) (int, int) {
	f := c.EncoderPatchSize * c.DownsampleFactor
	minPx := float64(c.MinImageTokens * c.EncoderPatchSize * c.EncoderPatchSize * c.DownsampleFactor * c.DownsampleFactor)
	maxPx := float64(c.MaxImageTokens * c.EncoderPatchSize * c.EncoderPatchSize * c.DownsampleFactor * c.DownsampleFactor)
	h, w := max(f, roundBy(float64(height), f)), max(f, roundBy(float64(width), f))
	H, W := float64(height), float64(width)
	switch {
	case float64(h*w) > maxPx:
		beta := math.Sqrt(H * W / maxPx)
		h = max(f, int(math.Floor(H/beta/float64(f)))*f)
		w = max(f, int(math.Floor(W/beta/float64(f)))*f)
	case float64(h*w) < minPx:
		beta := math.Sqrt(minPx / (H * W))
		h = int(math.Ceil(H*beta/float64(f))) * f
		w = int(math.Ceil(W*beta/float64(f))) * f
	}
	return h, w
}

// IsTooLarge is _is_image_too_large: the image rounded to multiples of
// patch·downsample (at least a patch) holds more pixels than
// MaxImageTokens' times MaxPixelsTolerance.
func (c *Lfm2VlConfig) IsTooLarge(height, width int) bool {
	f := c.EncoderPatchSize * c.DownsampleFactor
	h, w := max(c.EncoderPatchSize, roundBy(float64(height), f)), max(c.EncoderPatchSize, roundBy(float64(width), f))
	return float64(h*w) > float64(c.MaxImageTokens*c.EncoderPatchSize*c.EncoderPatchSize*c.DownsampleFactor*c.DownsampleFactor)*c.MaxPixelsTolerance
}

// GridLayout is _get_grid_layout: the (cols, rows) tile grid whose aspect
// ratio is nearest the image's (width / height), among MinTiles..MaxTiles
// tiles in order of tile count (find_closest_aspect_ratio: on a tie the
// later grid wins when the image covers more than half its area).
func (c *Lfm2VlConfig) GridLayout(height, width int) (cols, rows int) {
	lo, hi := c.tiles()
	type ratio struct{ w, h int }
	seen := map[ratio]bool{}
	var ratios []ratio
	for n := lo; n <= hi; n++ {
		for w := 1; w <= n; w++ {
			for h := 1; h <= n; h++ {
				if r := (ratio{w, h}); lo <= w*h && w*h <= hi && !seen[r] {
					seen[r] = true
					ratios = append(ratios, r)
				}
			}
		}
	}
	sort.SliceStable(ratios, func(i, j int) bool { return ratios[i].w*ratios[i].h < ratios[j].w*ratios[j].h })
	aspect := float64(width) / float64(height)
	best, bestDiff := ratio{1, 1}, math.Inf(1)
	for _, r := range ratios {
		d := math.Abs(aspect - float64(r.w)/float64(r.h))
		if d < bestDiff {
			best, bestDiff = r, d
		} else if d == bestDiff && float64(width*height) > 0.5*float64(c.TileSize*c.TileSize*r.w*r.h) {
			best = r
		}
	}
	return best.w, best.h
}

// TokensPerTile is _compute_tokens_per_tile: ceil(tile patches / downsample)².
func (c *Lfm2VlConfig) TokensPerTile() int {
	n := ceilDiv(c.TileSize/c.EncoderPatchSize, c.DownsampleFactor)
	return n * n
}

// TokensFor is _compute_tokens_for_image for a resized height×width image
// (or thumbnail): ceil(h patches / downsample) · ceil(w patches / downsample).
func (c *Lfm2VlConfig) TokensFor(height, width int) int {
	return ceilDiv(height/c.EncoderPatchSize, c.DownsampleFactor) * ceilDiv(width/c.EncoderPatchSize, c.DownsampleFactor)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Preprocess runs Lfm2VlImageProcessor on one decoded image: convert_to_rgb
// (if DoConvertRGB); a large image (IsTooLarge, with splitting) resized to
// its GridLayout of TileSize tiles, cut row-major, then the thumbnail
// (SmartResize of the original, if UseThumbnail and more than one tile);
// any other image resized to SmartResize's size, one tile. Each tile is
// rescaled, normalized and cut into patch rows: Patches holds every
// tile's rows in order, [Σ h·w, 3·patch²] float32, each tile's rows in
// DownsampleFactor² window order (windows row-major, the window's patches
// row-major: what the processor's row-major rows become once
// Lfm2VlModel.get_image_features gathers each token's window), each row
// pixel row-major then channel. TileGrids gives each tile's (1, h, w) in
// patches (spatial_shapes; the processor's pixel_attention_mask is
// h·w ones then zeros up to MaxNumPatches); Rows, Cols the tile grid (0
// unsplit); Height, Width the SmartResize size (image_sizes). Errors: an
// empty image, a configuration Check refuses, a tile whose sides are not
// multiples of patch·downsample.
func (c *Lfm2VlConfig) Preprocess(img *RGB8) (*Idefics3Output, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if img == nil || img.W < 1 || img.H < 1 || len(img.Pix) != img.W*img.H*3 {
		return nil, fmt.Errorf("vision: lfm2_vl: empty or malformed image")
	}
	if c.DoConvertRGB {
		img = img.FlattenTransparency()
	}
	nh, nw := c.SmartResize(img.H, img.W)
	lo, hi := c.tiles()
	out := &Idefics3Output{Height: nh, Width: nw, PatchDim: 3 * c.EncoderPatchSize * c.EncoderPatchSize}
	var tiles []*RGB8
	if c.IsTooLarge(img.H, img.W) && !(lo == 1 && hi == 1) {
		cols, rows := c.GridLayout(img.H, img.W)
		t := c.TileSize
		big, err := Resize(img, cols*t, rows*t, c.Resample)
		if err != nil {
			return nil, err
		}
		for r := range rows {
			for col := range cols {
				tiles = append(tiles, big.crop(col*t, r*t, t, t))
			}
		}
		if c.UseThumbnail && rows*cols != 1 {
			th, err := Resize(img, nw, nh, c.Resample)
			if err != nil {
				return nil, err
			}
			tiles = append(tiles, th)
		}
		out.Rows, out.Cols = rows, cols
	} else {
		r, err := Resize(img, nw, nh, c.Resample)
		if err != nil {
			return nil, err
		}
		tiles = []*RGB8{r}
	}
	p, m := c.EncoderPatchSize, c.DownsampleFactor
	for _, t := range tiles {
		if t.H%(p*m) != 0 || t.W%(p*m) != 0 {
			return nil, fmt.Errorf("vision: lfm2_vl: a %dx%d tile is not a whole number of %dx%d windows (encoder_patch_size %d · downsample_factor %d)", t.W, t.H, p*m, p*m, p, m)
		}
		plane := make([]float32, 3*t.H*t.W)
		rescaleNormalize(plane, t, c.DoRescale, c.RescaleFactor, c.DoNormalize, c.ImageMean, c.ImageStd)
		out.Patches = append(out.Patches, lfm2Patches(plane, t.H, t.W, p, m)...)
		out.TileGrids = append(out.TileGrids, [3]int{1, t.H / p, t.W / p})
	}
	out.Tiles = len(tiles)
	return out, nil
}

// crop is the w×h window of img at (x, y) (inside img).
func (img *RGB8) crop(x, y, w, h int) *RGB8 {
	out := &RGB8{W: w, H: h, Pix: make([]byte, 3*w*h)}
	for r := range h {
		copy(out.Pix[3*r*w:3*(r+1)*w], img.Pix[3*((y+r)*img.W+x):3*((y+r)*img.W+x+w)])
	}
	return out
}

// lfm2Patches cuts a channel-first H×W plane into p×p patch rows of
// [p, p, 3] (pixel row-major, channel last: convert_image_to_patches),
// the rows in m×m window order.
func lfm2Patches(plane []float32, H, W, p, m int) []float32 {
	gh, gw, dim, hw := H/p, W/p, 3*p*p, H*W
	out := make([]float32, 0, gh*gw*dim)
	for by := 0; by < gh/m; by++ {
		for bx := 0; bx < gw/m; bx++ {
			for i := range m {
				for j := range m {
					y0, x0 := (by*m+i)*p, (bx*m+j)*p
					for y := y0; y < y0+p; y++ {
						for x := x0; x < x0+p; x++ {
							for ch := range 3 {
								out = append(out, plane[ch*hw+y*W+x])
							}
						}
					}
				}
			}
		}
	}
	return out
}

// Check refuses a configuration the processor cannot run: a size that is
// not positive, min_tiles above max_tiles, a tile that is not whole
// windows, an unsupported resample filter, bad image_mean / image_std.
func (c *Lfm2VlConfig) Check() error {
	for _, k := range []struct {
		name string
		v    int
	}{{"encoder_patch_size", c.EncoderPatchSize}, {"downsample_factor", c.DownsampleFactor}, {"tile_size", c.TileSize},
		{"min_image_tokens", c.MinImageTokens}, {"max_image_tokens", c.MaxImageTokens}, {"min_tiles", c.MinTiles}, {"max_tiles", c.MaxTiles}} {
		if k.v < 1 {
			return fmt.Errorf("vision: lfm2_vl: %s must be positive, got %d", k.name, k.v)
		}
	}
	if c.DoImageSplitting && c.MinTiles > c.MaxTiles {
		return fmt.Errorf("vision: lfm2_vl: min_tiles must be less than or equal to max_tiles (%d > %d)", c.MinTiles, c.MaxTiles)
	}
	if w := c.EncoderPatchSize * c.DownsampleFactor; c.DoImageSplitting && c.TileSize%w != 0 {
		return fmt.Errorf("vision: lfm2_vl: tile_size %d is not a multiple of encoder_patch_size · downsample_factor (%d)", c.TileSize, w)
	}
	if _, _, ok := c.Resample.kernel(); !ok {
		return fmt.Errorf("vision: lfm2_vl: resample %v is not supported (LANCZOS, BILINEAR, BICUBIC, BOX, HAMMING)", c.Resample)
	}
	if c.DoNormalize {
		if !okStat(c.ImageMean) || !okStat(c.ImageStd) {
			return fmt.Errorf("vision: lfm2_vl: image_mean and image_std need 1 or 3 values, got %v and %v", c.ImageMean, c.ImageStd)
		}
		if err := checkStats(c.ImageMean, c.ImageStd); err != nil {
			return fmt.Errorf("vision: lfm2_vl: %w", err)
		}
	}
	return nil
}

// lfm2Expansion is Lfm2VlProcessor._build_image_tokens for one image:
// ImageStart; for a split image, per tile (row-major) its
// "<|img_row_R_col_C|>" and TokensPerTile "<image>", then (UseThumbnail)
// ImageThumbnail and the thumbnail's g.Tokens; else g.Tokens "<image>";
// ImageEnd. Without UseImageSpecialTokens only the "<image>" runs.
func (c *Lfm2VlConfig) lfm2Expansion(g Grid) string {
	var b strings.Builder
	special := func(s string) {
		if c.UseImageSpecialTokens {
			b.WriteString(s)
		}
	}
	special(ImageStart)
	if g.Rows > 1 || g.Cols > 1 {
		for r := range g.Rows {
			for col := range g.Cols {
				special(fmt.Sprintf("<|img_row_%d_col_%d|>", r+1, col+1))
				b.WriteString(strings.Repeat(ImageToken, c.TokensPerTile()))
			}
		}
		if c.UseThumbnail {
			special(ImageThumbnail)
			b.WriteString(strings.Repeat(ImageToken, g.Tokens))
		}
	} else {
		b.WriteString(strings.Repeat(ImageToken, g.Tokens))
	}
	special(ImageEnd)
	return b.String()
}

// expand replaces each "<image>" the template wrote, in order, with
// its image's lfm2Expansion. Errors: an "<image>" count other than the
// image count.
func (c *Lfm2VlConfig) expand(text string, grids []Grid) (string, error) {
	if n := strings.Count(text, ImageToken); n != len(grids) {
		return "", fmt.Errorf("vision: the number of %s tokens in the prompt should be the same as the number of images passed: found %d %s tokens and %d images", ImageToken, n, ImageToken, len(grids))
	}
	var b strings.Builder
	for _, g := range grids {
		i := strings.Index(text, ImageToken)
		b.WriteString(text[:i])
		b.WriteString(c.lfm2Expansion(g))
		text = text[i+len(ImageToken):]
	}
	b.WriteString(text)
	return b.String(), nil
}

// loadLfm2Vl reads an Lfm2VlProcessor's processor_config.json: its
// use_image_special_tokens and nested image_processor (absent keys keep
// DefaultLfm2VlConfig's); the image tokens must be LFM2-VL's. Errors:
// malformed JSON, another image processor type or token, do_resize false,
// or a configuration Check refuses.
func loadLfm2Vl(path string, top []byte) (*Processor, error) {
	c := DefaultLfm2VlConfig()
	var f struct {
		Special        *bool           `json:"use_image_special_tokens"`
		ImageToken     *string         `json:"image_token"`
		ImageProcessor json.RawMessage `json:"image_processor"`
	}
	if err := json.Unmarshal(top, &f); err != nil {
		return nil, fmt.Errorf("vision: %s: %w", path, err)
	}
	if f.ImageToken != nil && *f.ImageToken != ImageToken {
		return nil, fmt.Errorf("vision: %s: image_token %q: archc's LFM2-VL processor writes %s", path, *f.ImageToken, ImageToken)
	}
	if f.Special != nil {
		c.UseImageSpecialTokens = *f.Special
	}
	if len(f.ImageProcessor) > 0 && string(f.ImageProcessor) != "null" {
		var ip struct {
			Type               string   `json:"image_processor_type"`
			DoConvertRGB       *bool    `json:"do_convert_rgb"`
			DoResize           *bool    `json:"do_resize"`
			Resample           *Filter  `json:"resample"`
			DoRescale          *bool    `json:"do_rescale"`
			RescaleFactor      *float64 `json:"rescale_factor"`
			DoNormalize        *bool    `json:"do_normalize"`
			DoPad              *bool    `json:"do_pad"`
			Downsample         *int     `json:"downsample_factor"`
			PatchSize          *int     `json:"encoder_patch_size"`
			TileSize           *int     `json:"tile_size"`
			DoImageSplitting   *bool    `json:"do_image_splitting"`
			MinTiles           *int     `json:"min_tiles"`
			MaxTiles           *int     `json:"max_tiles"`
			UseThumbnail       *bool    `json:"use_thumbnail"`
			MinImageTokens     *int     `json:"min_image_tokens"`
			MaxImageTokens     *int     `json:"max_image_tokens"`
			MaxPixelsTolerance *float64 `json:"max_pixels_tolerance"`
		}
		if err := json.Unmarshal(f.ImageProcessor, &ip); err != nil {
			return nil, fmt.Errorf("vision: %s image_processor: %w", path, err)
		}
		switch ip.Type {
		case "", "Lfm2VlImageProcessor", "Lfm2VlImageProcessorFast":
		default:
			return nil, fmt.Errorf("vision: %s: image_processor_type %q is not one archc implements for LFM2-VL (Lfm2VlImageProcessor)", path, ip.Type)
		}
		if ip.DoResize != nil && !*ip.DoResize {
			return nil, fmt.Errorf("vision: %s: do_resize false: Lfm2VlImageProcessor always resizes (smart_resize)", path)
		}
		if ip.DoPad != nil && !*ip.DoPad {
			return nil, fmt.Errorf("vision: %s: do_pad false: without it Lfm2VlImageProcessor gives no spatial_shapes, which the tower needs", path)
		}
		override(&c.DoConvertRGB, ip.DoConvertRGB)
		override(&c.DoRescale, ip.DoRescale)
		override(&c.DoNormalize, ip.DoNormalize)
		override(&c.DoImageSplitting, ip.DoImageSplitting)
		override(&c.UseThumbnail, ip.UseThumbnail)
		override(&c.DownsampleFactor, ip.Downsample)
		override(&c.EncoderPatchSize, ip.PatchSize)
		override(&c.TileSize, ip.TileSize)
		override(&c.MinTiles, ip.MinTiles)
		override(&c.MaxTiles, ip.MaxTiles)
		override(&c.MinImageTokens, ip.MinImageTokens)
		override(&c.MaxImageTokens, ip.MaxImageTokens)
		override(&c.Resample, ip.Resample)
		override(&c.RescaleFactor, ip.RescaleFactor)
		override(&c.MaxPixelsTolerance, ip.MaxPixelsTolerance)
		var raw map[string]json.RawMessage
		json.Unmarshal(f.ImageProcessor, &raw) // an object: ip's Unmarshal above succeeded
		if err := readStats(raw, &c.ImageMean, &c.ImageStd); err != nil {
			return nil, fmt.Errorf("vision: %s image_processor: %w", path, err)
		}
	}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return &Processor{Lfm2Vl: &c}, nil
}
