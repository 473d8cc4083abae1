package vision

import (
	"image"
	"image/color"
)

// rawColor is one RGB palette entry as stored in the file.
type rawColor [3]uint8

// srcInfo carries what toRGB8 needs to know about the encoded source
// beyond the decoded Go image.
type srcInfo struct {
	format  Format
	pngType int        // PNG IHDR colour type, -1 when not PNG
	pngBits int        // PNG IHDR bit depth
	gifPal  []rawColor // GIF first frame's palette as stored (Go zeroes the transparent entry)
}

// toRGB8 converts a decoded Go image to 8-bit RGB the way PIL's
// Image.convert("RGB") converts the mode PIL would have opened the file in:
//
//   - L (Gray): the grey replicated to R, G and B.
//   - LA, RGBA, PA (NRGBA, NYCbCrA, alpha palettes): alpha dropped, not
//     composited (Convert.c la2rgb / rgba2rgb copy the colour channels).
//   - P (Paletted): palette lookup of the stored RGB entry.
//   - I;16 (16-bit grey PNG): PIL's I16_RGB saturates, v > 255 → 255,
//     else v (it does not scale 65535 down to 255).
//   - RGB;16B, RGBA;16B, LA;16B (16-bit colour PNGs): PIL's unpacker keeps
//     the high byte, v >> 8.
//   - CMYK (Adobe JPEG, already un-inverted by the decoder as PIL's
//     "CMYK;I" rawmode does): Convert.c cmyk2rgb,
//     nk = 255-K, R = nk - MULDIV255(C, nk) and likewise G, B.
//   - YCbCr JPEG: libjpeg-turbo's fancy upsampling and jdcolor.c
//     fixed-point YCbCr→RGB (see jpegYCbCrToRGB).
//   - YCbCr WebP: libwebp's fancy upsampler and VP8YUVToRGB (see
//     webpYUVToRGB).
func toRGB8(m image.Image, info srcInfo) (*RGB8, error) {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	out := NewRGB8(w, h)
	p := out.Pix
	switch s := m.(type) {
	case *image.Gray:
		for y := 0; y < h; y++ {
			row := s.Pix[y*s.Stride : y*s.Stride+w]
			for x, v := range row {
				i := (y*w + x) * 3
				p[i], p[i+1], p[i+2] = v, v, v
			}
		}
	case *image.Gray16:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				j := y*s.Stride + 2*x
				v := sat16(uint16(s.Pix[j])<<8 | uint16(s.Pix[j+1]))
				i := (y*w + x) * 3
				p[i], p[i+1], p[i+2] = v, v, v
			}
		}
	case *image.RGBA:
		copy4to3(p, s.Pix, s.Stride, w, h)
	case *image.NRGBA:
		copy4to3(p, s.Pix, s.Stride, w, h)
	case *image.RGBA64, *image.NRGBA64:
		var pix []uint8
		var stride int
		if t, ok := s.(*image.RGBA64); ok {
			pix, stride = t.Pix, t.Stride
		} else {
			t := s.(*image.NRGBA64)
			pix, stride = t.Pix, t.Stride
		}
		if info.pngType == 0 && info.pngBits == 16 {
			// 16-bit grey with a tRNS key: Go widens it to NRGBA64,
			// PIL still opens it as I;16 and saturates.
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					j := y*stride + 8*x
					v := sat16(uint16(pix[j])<<8 | uint16(pix[j+1]))
					i := (y*w + x) * 3
					p[i], p[i+1], p[i+2] = v, v, v
				}
			}
		} else {
			// high bytes of the three colour channels
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					j := y*stride + 8*x
					i := (y*w + x) * 3
					p[i], p[i+1], p[i+2] = pix[j], pix[j+2], pix[j+4]
				}
			}
		}
	case *image.Paletted:
		pal := paletteRGB(s.Palette)
		if info.gifPal != nil {
			pal = info.gifPal
		}
		for y := 0; y < h; y++ {
			row := s.Pix[y*s.Stride : y*s.Stride+w]
			for x, idx := range row {
				var c rawColor
				if int(idx) < len(pal) {
					c = pal[idx]
				}
				i := (y*w + x) * 3
				p[i], p[i+1], p[i+2] = c[0], c[1], c[2]
			}
		}
	case *image.CMYK:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				j := y*s.Stride + 4*x
				nk := 255 - int(s.Pix[j+3])
				i := (y*w + x) * 3
				for c := 0; c < 3; c++ {
					p[i+c] = clampU8(nk - mulDiv255(int(s.Pix[j+c]), nk))
				}
			}
		}
	case *image.YCbCr:
		if info.format == FormatWebP {
			webpYUVToRGB(out, s)
		} else {
			if err := jpegYCbCrToRGB(out, s); err != nil {
				return nil, err
			}
		}
	case *image.NYCbCrA:
		webpYUVToRGB(out, &s.YCbCr)
	default:
		// Not produced by the decoders Decode uses; keep a generic path.
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				c := color.NRGBAModel.Convert(m.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
				i := (y*w + x) * 3
				p[i], p[i+1], p[i+2] = c.R, c.G, c.B
			}
		}
	}
	return out, nil
}

// sat16 is PIL's I16_RGB: values above 255 become 255.
func sat16(v uint16) uint8 {
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// mulDiv255 is PIL's MULDIV255(a, b): a*b/255 rounded, in integers.
func mulDiv255(a, b int) int {
	t := a*b + 128
	return ((t >> 8) + t) >> 8
}

func clampU8(v int) uint8 {
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// copy4to3 copies the first three of every four bytes (RGBA → RGB).
func copy4to3(dst, src []uint8, stride, w, h int) {
	for y := 0; y < h; y++ {
		row := src[y*stride:]
		for x := 0; x < w; x++ {
			i := (y*w + x) * 3
			dst[i], dst[i+1], dst[i+2] = row[4*x], row[4*x+1], row[4*x+2]
		}
	}
}

// paletteRGB returns the stored RGB of each palette entry: NRGBA entries
// (PNG with tRNS) keep their colour whatever the alpha, as PIL's palette
// does.
func paletteRGB(pal color.Palette) []rawColor {
	out := make([]rawColor, len(pal))
	for i, c := range pal {
		switch t := c.(type) {
		case color.NRGBA:
			out[i] = rawColor{t.R, t.G, t.B}
		case color.RGBA:
			out[i] = rawColor{t.R, t.G, t.B}
		default:
			n := color.NRGBAModel.Convert(c).(color.NRGBA)
			out[i] = rawColor{n.R, n.G, n.B}
		}
	}
	return out
}
