package vision

import "image"

// libwebp's yuv.h 14-bit fixed-point BT.601 conversion (YUV_FIX2 = 6).
func webpMultHi(v, coeff int) int { return (v * coeff) >> 8 }

func webpClip8(v int) uint8 {
	const mask = (256 << 6) - 1
	if v&^mask == 0 {
		return uint8(v >> 6)
	}
	if v < 0 {
		return 0
	}
	return 255
}

// webpYUVToRGBPixel is libwebp's VP8YuvToRgb.
func webpYUVToRGBPixel(y, u, v int) (uint8, uint8, uint8) {
	r := webpClip8(webpMultHi(y, 19077) + webpMultHi(v, 26149) - 14234)
	g := webpClip8(webpMultHi(y, 19077) - webpMultHi(u, 6419) - webpMultHi(v, 13320) + 8708)
	b := webpClip8(webpMultHi(y, 19077) + webpMultHi(u, 33050) - 17685)
	return r, g, b
}

// webpYUVToRGB converts a lossy WebP's 4:2:0 planes to RGB as libwebp's
// WebPDecode does for Pillow (RGB(A) output, fancy upsampling on):
// io_dec.c EmitFancyRGB pairs output rows (2k-1, 2k) between chroma rows
// k-1 and k (row 0 and a last even row mirror their chroma row) and
// upsampling_c UpsampleRgbLinePair interpolates each 2×2 block with the
// 9:3:3:1 weights in integers; each pixel then goes through
// webpYUVToRGBPixel. Alpha (NYCbCrA) is dropped, as convert("RGB") does.
func webpYUVToRGB(out *RGB8, m *image.YCbCr) {
	w, h := out.W, out.H
	cw := (w + 1) / 2
	ch := (h + 1) / 2
	crow := func(p []uint8, j int) []uint8 {
		if j >= ch {
			j = ch - 1
		}
		return p[j*m.CStride : j*m.CStride+cw]
	}
	put := func(y, x int, u, v int) {
		i := (y*w + x) * 3
		out.Pix[i], out.Pix[i+1], out.Pix[i+2] = webpYUVToRGBPixel(int(m.Y[y*m.YStride+x]), u, v)
	}
	// line writes output row y as the top (isTop) or bottom row of the
	// pair interpolated between chroma rows tu/tv (top) and cu/cv (cur).
	line := func(y int, isTop bool, tu, tv, cu, cv []uint8) {
		ch1 := func(t, c []uint8) []int {
			res := make([]int, w)
			tl, l := int(t[0]), int(c[0])
			if isTop {
				res[0] = (3*tl + l + 2) >> 2
			} else {
				res[0] = (3*l + tl + 2) >> 2
			}
			last := (w - 1) >> 1
			for x := 1; x <= last; x++ {
				tt, uv := int(t[x]), int(c[x])
				avg := tl + tt + l + uv + 8
				d12 := (avg + 2*(tt+l)) >> 3
				d03 := (avg + 2*(tl+uv)) >> 3
				if isTop {
					res[2*x-1] = (d12 + tl) >> 1
					res[2*x] = (d03 + tt) >> 1
				} else {
					res[2*x-1] = (d03 + l) >> 1
					res[2*x] = (d12 + uv) >> 1
				}
				tl, l = tt, uv
			}
			if w&1 == 0 {
				if isTop {
					res[w-1] = (3*tl + l + 2) >> 2
				} else {
					res[w-1] = (3*l + tl + 2) >> 2
				}
			}
			return res
		}
		us := ch1(tu, cu)
		vs := ch1(tv, cv)
		for x := 0; x < w; x++ {
			put(y, x, us[x], vs[x])
		}
	}
	for y := 0; y < h; y++ {
		switch {
		case y == 0:
			u, v := crow(m.Cb, 0), crow(m.Cr, 0)
			line(0, true, u, v, u, v)
		case y%2 == 1: // top row of the pair (y, y+1)
			k := (y + 1) / 2
			if k >= ch { // last row of an even-height image
				u, v := crow(m.Cb, ch-1), crow(m.Cr, ch-1)
				line(y, true, u, v, u, v)
			} else {
				line(y, true, crow(m.Cb, k-1), crow(m.Cr, k-1), crow(m.Cb, k), crow(m.Cr, k))
			}
		default: // bottom row of the pair (y-1, y)
			k := y / 2
			line(y, false, crow(m.Cb, k-1), crow(m.Cr, k-1), crow(m.Cb, k), crow(m.Cr, k))
		}
	}
}
