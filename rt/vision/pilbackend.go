package vision

import (
	"encoding/json"
	"fmt"
	"strings"
)

// PILConfig is transformers' generic PIL image processor (PilBackend in
// image_processing_backends.py), which CLIPImageProcessorPil (LLaVA's)
// and SiglipImageProcessorPil follow: convert to RGB, resize, center
// crop, rescale, normalize; one image in, one [3, H, W] tile out. Field
// names are the config's.
type PILConfig struct {
	DoConvertRGB  bool      `json:"do_convert_rgb"`
	DoResize      bool      `json:"do_resize"`
	Size          SizeDict  `json:"size"` // shortest_edge (aspect kept), or height and width
	Resample      Filter    `json:"resample"`
	DoCenterCrop  bool      `json:"do_center_crop"`
	CropSize      SizeDict  `json:"crop_size"` // height and width
	DoRescale     bool      `json:"do_rescale"`
	RescaleFactor float64   `json:"rescale_factor"`
	DoNormalize   bool      `json:"do_normalize"`
	ImageMean     []float64 `json:"image_mean"`
	ImageStd      []float64 `json:"image_std"`
}

// pilSize is a SizeDict with shortest_edge, which PILConfig reads.
type pilSize struct {
	ShortestEdge int `json:"shortest_edge"`
	Height       int `json:"height"`
	Width        int `json:"width"`
}

// parsePILConfig reads an image processor's JSON as a PILConfig, with
// PilBackend's defaults (convert to RGB, BILINEAR) where a key is absent.
func parsePILConfig(b []byte) (*PILConfig, int, error) {
	c := &PILConfig{DoConvertRGB: true, Resample: Bilinear, RescaleFactor: 1.0 / 255}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, 0, err
	}
	var sizes struct {
		Size pilSize `json:"size"`
	}
	if err := json.Unmarshal(b, &sizes); err != nil {
		return nil, 0, err
	}
	c.Size = SizeDict{Height: sizes.Size.Height, Width: sizes.Size.Width}
	shortest := sizes.Size.ShortestEdge
	switch {
	case !c.DoResize:
	case shortest > 0:
	case c.Size.Height > 0 && c.Size.Width > 0:
	default:
		return nil, 0, fmt.Errorf("size must have shortest_edge, or height and width")
	}
	if c.DoCenterCrop && (c.CropSize.Height <= 0 || c.CropSize.Width <= 0) {
		return nil, 0, fmt.Errorf("crop_size must have height and width")
	}
	if c.DoNormalize && (!okStat(c.ImageMean) || !okStat(c.ImageStd)) {
		return nil, 0, fmt.Errorf("image_mean and image_std must have 1 or 3 values")
	}
	if c.DoNormalize {
		if err := checkStats(c.ImageMean, c.ImageStd); err != nil {
			return nil, 0, err
		}
	}
	return c, shortest, nil
}

// pilPreprocess is PilBackend._preprocess on one image: resize
// (shortest_edge: get_resize_output_image_size with default_to_square
// False, the short side to shortest and the long one int(shortest·long/
// short); or height × width) with PIL's filter, np_center_crop (zero
// padding where the crop is larger), then rescale in float64 cast to
// float32 and normalize in float32, as the Idefics3 path does.
func (c *PILConfig) pilPreprocess(img *RGB8, shortest int) (*Idefics3Output, error) {
	if c.DoConvertRGB {
		img = img.FlattenTransparency()
	}
	if c.DoResize {
		h, w := c.Size.Height, c.Size.Width
		if shortest > 0 {
			short, long := img.H, img.W
			if img.W <= img.H {
				short, long = img.W, img.H
			}
			ns, nl := shortest, int(float64(shortest)*float64(long)/float64(short))
			if img.W <= img.H {
				w, h = ns, nl
			} else {
				h, w = ns, nl
			}
		}
		var err error
		if img, err = Resize(img, w, h, c.Resample); err != nil {
			return nil, err
		}
	}
	if c.DoCenterCrop {
		img = centerCrop(img, c.CropSize.Height, c.CropSize.Width)
	}
	out := &Idefics3Output{Tiles: 1, Height: img.H, Width: img.W, PixelValues: make([]float32, 3*img.H*img.W)}
	rescaleNormalize(out.PixelValues, img, c.DoRescale, c.RescaleFactor, c.DoNormalize, c.ImageMean, c.ImageStd)
	return out, nil
}

// centerCrop is transformers' center_crop (image_transforms.py) on an RGB
// image: the h×w window at ((H−h)//2, (W−w)//2), floor division; where the
// window runs past the image, the image is first placed on a zero canvas
// of max(h, H) × max(w, W) at ceil((canvas − size)/2).
func centerCrop(m *RGB8, h, w int) *RGB8 {
	floorDiv := func(a, b int) int {
		q := a / b
		if (a%b != 0) && ((a < 0) != (b < 0)) {
			q--
		}
		return q
	}
	top, left := floorDiv(m.H-h, 2), floorDiv(m.W-w, 2)
	if top >= 0 && left >= 0 && top+h <= m.H && left+w <= m.W {
		return crop(m, left, top, w, h)
	}
	nh, nw := max(h, m.H), max(w, m.W)
	canvas := NewRGB8(nw, nh)
	tp, lp := (nh-m.H+1)/2, (nw-m.W+1)/2
	for y := 0; y < m.H; y++ {
		copy(canvas.Pix[((tp+y)*nw+lp)*3:], m.Pix[y*m.W*3:(y+1)*m.W*3])
	}
	return crop(canvas, left+lp, top+tp, w, h)
}

// llavaTokens is LlavaProcessor's placeholder count for an image
// processed to h × w: (h//patch)·(w//patch) + num_additional_image_tokens,
// one fewer with the "default" strategy (the CLS row dropped).
func llavaTokens(h, w, patch, additional int, strategy string) int {
	n := (h/patch)*(w/patch) + additional
	if strategy == "default" {
		n--
	}
	return n
}

// expandRepeat replaces the i-th placeholder of text with tokens[i]
// copies of it (LlavaProcessor's prompt expansion); the placeholder count
// must be the image count.
func expandRepeat(text, placeholder string, tokens []int) (string, error) {
	if n := strings.Count(text, placeholder); n != len(tokens) {
		return "", fmt.Errorf("vision: the number of %s tokens in the prompt should be the same as the number of images passed: found %d %s tokens and %d images", placeholder, n, placeholder, len(tokens))
	}
	var b strings.Builder
	for _, k := range tokens {
		i := strings.Index(text, placeholder)
		b.WriteString(text[:i])
		b.WriteString(strings.Repeat(placeholder, k))
		text = text[i+len(placeholder):]
	}
	b.WriteString(text)
	return b.String(), nil
}
