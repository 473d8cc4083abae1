package vision

import (
	"fmt"
	"image"
)

// libjpeg's jdcolor.c constants: 16-bit fixed point (SCALEBITS) with
// FIX(x) = int(x * 65536 + 0.5).
const (
	yccScaleBits = 16
	yccOneHalf   = 1 << (yccScaleBits - 1)
	fix1_40200   = 91881  // FIX(1.40200)
	fix1_77200   = 116130 // FIX(1.77200)
	fix0_71414   = 46802  // FIX(0.71414)
	fix0_34414   = 22554  // FIX(0.34414)
)

// yccToRGB is libjpeg's ycc_rgb_convert for one pixel: table-free form
// of Cr_r_tab, Cb_b_tab, Cr_g_tab and Cb_g_tab with arithmetic right
// shifts, then range_limit clamping to 0..255.
func yccToRGB(y, cb, cr int) (uint8, uint8, uint8) {
	cb -= 128
	cr -= 128
	r := y + (fix1_40200*cr+yccOneHalf)>>yccScaleBits
	g := y + (-fix0_34414*cb+yccOneHalf-fix0_71414*cr)>>yccScaleBits
	b := y + (fix1_77200*cb+yccOneHalf)>>yccScaleBits
	return clampU8(r), clampU8(g), clampU8(b)
}

// jpegYCbCrToRGB converts a decoded JPEG's YCbCr planes to RGB as
// libjpeg-turbo does with its defaults (do_fancy_upsampling on, which
// Pillow leaves on): chroma is upsampled by jdsample.c's
// h2v1_fancy_upsample (4:2:2) or h2v2_fancy_upsample (4:2:0) when the
// downsampled width is above 2 — triangle filters with weights 3:1
// (and 9:3:3:1), rounding biases 1/2 and 8/7, edges replicated — by
// h1v2_fancy_upsample for 4:4:0, and by plain replication otherwise; then
// yccToRGB per pixel. The IDCT is Go's (image/jpeg), not libjpeg's
// jidctint.c, so samples can differ from PIL by a small amount.
func jpegYCbCrToRGB(out *RGB8, m *image.YCbCr) error {
	w, h := out.W, out.H
	cb := upsampleChroma(m.Cb, m.CStride, m.SubsampleRatio, w, h)
	cr := upsampleChroma(m.Cr, m.CStride, m.SubsampleRatio, w, h)
	if cb == nil || cr == nil {
		return fmt.Errorf("unsupported JPEG chroma subsampling %v", m.SubsampleRatio)
	}
	for y := 0; y < h; y++ {
		yrow := m.Y[y*m.YStride:]
		for x := 0; x < w; x++ {
			i := (y*w + x) * 3
			out.Pix[i], out.Pix[i+1], out.Pix[i+2] = yccToRGB(int(yrow[x]), int(cb[y*w+x]), int(cr[y*w+x]))
		}
	}
	return nil
}

// upsampleChroma returns a w×h plane from a subsampled chroma plane
// following libjpeg-turbo's jdsample.c choice of upsampler.
func upsampleChroma(c []uint8, stride int, r image.YCbCrSubsampleRatio, w, h int) []uint8 {
	out := make([]uint8, w*h)
	var hs, vs int
	switch r {
	case image.YCbCrSubsampleRatio444:
		hs, vs = 1, 1
	case image.YCbCrSubsampleRatio422:
		hs, vs = 2, 1
	case image.YCbCrSubsampleRatio420:
		hs, vs = 2, 2
	case image.YCbCrSubsampleRatio440:
		hs, vs = 1, 2
	case image.YCbCrSubsampleRatio411:
		hs, vs = 4, 1
	case image.YCbCrSubsampleRatio410:
		hs, vs = 4, 2
	default:
		return nil
	}
	cw, ch := (w+hs-1)/hs, (h+vs-1)/vs
	at := func(x, y int) int {
		if x < 0 {
			x = 0
		} else if x >= cw {
			x = cw - 1
		}
		if y < 0 {
			y = 0
		} else if y >= ch {
			y = ch - 1
		}
		return int(c[y*stride+x])
	}
	switch {
	case hs == 2 && vs == 1 && cw > 2: // h2v1_fancy_upsample
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				i := x / 2
				if x%2 == 0 {
					out[y*w+x] = uint8((3*at(i, y) + at(i-1, y) + 1) >> 2)
				} else {
					out[y*w+x] = uint8((3*at(i, y) + at(i+1, y) + 2) >> 2)
				}
			}
		}
	case hs == 2 && vs == 2 && cw > 2: // h2v2_fancy_upsample
		for y := 0; y < h; y++ {
			j := y / 2
			n := j - 1 // the nearer other chroma row: above for even rows
			if y%2 == 1 {
				n = j + 1
			}
			colsum := func(i int) int { return 3*at(i, j) + at(i, n) }
			for x := 0; x < w; x++ {
				i := x / 2
				if x%2 == 0 {
					out[y*w+x] = uint8((3*colsum(i) + colsum(i-1) + 8) >> 4)
				} else {
					out[y*w+x] = uint8((3*colsum(i) + colsum(i+1) + 7) >> 4)
				}
			}
		}
	case hs == 1 && vs == 2: // h1v2_fancy_upsample
		for y := 0; y < h; y++ {
			j := y / 2
			n, bias := j-1, 1
			if y%2 == 1 {
				n, bias = j+1, 2
			}
			for x := 0; x < w; x++ {
				out[y*w+x] = uint8((3*at(x, j) + at(x, n) + bias) >> 2)
			}
		}
	default: // full-size or replication (h2v1_upsample, h2v2_upsample, int_upsample)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				out[y*w+x] = uint8(at(x/hs, y/vs))
			}
		}
	}
	return out
}
