package vision

// RGB8 is an 8-bit RGB image: W×H pixels stored row-major, channels
// interleaved (HWC), so Pix has W*H*3 bytes and pixel (x, y) channel c is
// Pix[(y*W+x)*3+c]. It is the Go counterpart of a PIL "RGB" image.
type RGB8 struct {
	// W and H are the width and height in pixels.
	W, H int
	// Pix holds the samples, [H, W, 3] uint8.
	Pix []uint8
	// Transparency, when not nil, is the colour key PIL keeps in
	// Image.info["transparency"] after load_image's convert("RGB") of a
	// palette image with one transparent index, an L image with a tRNS
	// grey, or an RGB image with a tRNS colour. It is not applied to Pix;
	// FlattenTransparency applies it as transformers' convert_to_rgb does.
	Transparency *[3]uint8
}

// NewRGB8 returns a black w×h image.
func NewRGB8(w, h int) *RGB8 {
	return &RGB8{W: w, H: h, Pix: make([]uint8, w*h*3)}
}

// Clone returns a deep copy of m, transparency key included.
func (m *RGB8) Clone() *RGB8 {
	c := &RGB8{W: m.W, H: m.H, Pix: append([]uint8(nil), m.Pix...)}
	if m.Transparency != nil {
		k := *m.Transparency
		c.Transparency = &k
	}
	return c
}

// FlattenTransparency returns the image transformers'
// image_transforms.convert_to_rgb makes of a PIL image whose
// info["transparency"] is set: convert("RGBA") turns every pixel equal to
// the key into alpha 0, alpha_composite onto opaque white makes those
// pixels (255, 255, 255), and the rest are unchanged. Without a key it
// returns m itself. The result has no key.
func (m *RGB8) FlattenTransparency() *RGB8 {
	if m.Transparency == nil {
		return m
	}
	k := *m.Transparency
	out := &RGB8{W: m.W, H: m.H, Pix: append([]uint8(nil), m.Pix...)}
	for i := 0; i+2 < len(out.Pix); i += 3 {
		if out.Pix[i] == k[0] && out.Pix[i+1] == k[1] && out.Pix[i+2] == k[2] {
			out.Pix[i], out.Pix[i+1], out.Pix[i+2] = 255, 255, 255
		}
	}
	return out
}
