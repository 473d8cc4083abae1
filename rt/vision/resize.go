package vision

import (
	"fmt"
	"math"
)

// Filter is a resampling filter, numbered as PIL.Image.Resampling
// (the "resample" integer in a Hugging Face preprocessor_config.json).
type Filter int

// The PIL resampling filters. Nearest is named for completeness but
// Resize does not implement it (Idefics3 uses Lanczos).
const (
	// Nearest is PIL.Image.Resampling.NEAREST (0); unsupported by Resize.
	Nearest Filter = 0
	// Lanczos is PIL.Image.Resampling.LANCZOS (1): windowed sinc, a = 3.
	Lanczos Filter = 1
	// Bilinear is PIL.Image.Resampling.BILINEAR (2): triangle, support 1.
	Bilinear Filter = 2
	// Bicubic is PIL.Image.Resampling.BICUBIC (3): Keys cubic, a = -0.5, support 2.
	Bicubic Filter = 3
	// Box is PIL.Image.Resampling.BOX (4): box, support 0.5.
	Box Filter = 4
	// Hamming is PIL.Image.Resampling.HAMMING (5): Hamming-windowed sinc, support 1.
	Hamming Filter = 5
)

// String returns PIL's upper-case name of the filter.
func (f Filter) String() string {
	switch f {
	case Nearest:
		return "NEAREST"
	case Lanczos:
		return "LANCZOS"
	case Bilinear:
		return "BILINEAR"
	case Bicubic:
		return "BICUBIC"
	case Box:
		return "BOX"
	case Hamming:
		return "HAMMING"
	}
	return fmt.Sprintf("Filter(%d)", int(f))
}

// kernel returns the filter function and its support (in source pixels at
// scale 1), the values of Pillow's Resample.c filter table.
func (f Filter) kernel() (func(float64) float64, float64, bool) {
	switch f {
	case Box:
		return boxKernel, 0.5, true
	case Bilinear:
		return bilinearKernel, 1, true
	case Hamming:
		return hammingKernel, 1, true
	case Bicubic:
		return bicubicKernel, 2, true
	case Lanczos:
		return lanczosKernel, 3, true
	}
	return nil, 0, false
}

func boxKernel(x float64) float64 {
	if x > -0.5 && x <= 0.5 {
		return 1
	}
	return 0
}

func bilinearKernel(x float64) float64 {
	if x < 0 {
		x = -x
	}
	if x < 1 {
		return 1 - x
	}
	return 0
}

func hammingKernel(x float64) float64 {
	if x < 0 {
		x = -x
	}
	if x == 0 {
		return 1
	}
	if x >= 1 {
		return 0
	}
	x *= math.Pi
	// Pillow writes the window constants as float literals (0.54f, 0.46f)
	return math.Sin(x) / x * (float64(float32(0.54)) + float64(float32(0.46))*math.Cos(x))
}

func bicubicKernel(x float64) float64 {
	const a = -0.5
	if x < 0 {
		x = -x
	}
	if x < 1 {
		return ((a+2)*x-(a+3))*x*x + 1
	}
	if x < 2 {
		return (((x-5)*x+8)*x - 4) * a
	}
	return 0
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	x *= math.Pi
	return math.Sin(x) / x
}

func lanczosKernel(x float64) float64 {
	if x >= -3 && x < 3 {
		return sinc(x) * sinc(x/3)
	}
	return 0
}

// precisionBits is Pillow's PRECISION_BITS (32 - 8 - 2): the fraction bits
// of the fixed-point coefficients of its 8-bit resampler.
const precisionBits = 22

// axisCoeffs holds, for each output index, the first source index, the
// number of taps and the fixed-point weights (ksize per output index).
type axisCoeffs struct {
	ksize  int
	bounds []int // 2 per output: xmin, count
	k      []int32
}

// precompute follows Pillow's precompute_coeffs and normalize_coeffs_8bpc:
// the support is widened by the scale when shrinking, each output's window
// is [int(center-support+0.5), int(center+support+0.5)) clipped to the
// source, the float64 weights are divided by their sum and then rounded
// half away from zero to PRECISION_BITS fixed point.
func precompute(inSize, outSize int, f Filter) axisCoeffs {
	fn, sup, _ := f.kernel()
	scale := float64(inSize) / float64(outSize)
	filterscale := scale
	if filterscale < 1 {
		filterscale = 1
	}
	support := sup * filterscale
	ksize := int(math.Ceil(support))*2 + 1
	c := axisCoeffs{ksize: ksize, bounds: make([]int, 2*outSize), k: make([]int32, outSize*ksize)}
	w := make([]float64, ksize)
	ss := 1 / filterscale
	for xx := 0; xx < outSize; xx++ {
		center := (float64(xx) + 0.5) * scale
		xmin := int(center - support + 0.5)
		if xmin < 0 {
			xmin = 0
		}
		xmax := int(center + support + 0.5)
		if xmax > inSize {
			xmax = inSize
		}
		xmax -= xmin
		ww := 0.0
		for x := 0; x < xmax; x++ {
			v := fn((float64(x+xmin) - center + 0.5) * ss)
			w[x] = v
			ww += v
		}
		kk := c.k[xx*ksize : (xx+1)*ksize]
		for x := 0; x < xmax; x++ {
			v := w[x]
			if ww != 0 {
				v /= ww
			}
			if v < 0 {
				kk[x] = int32(-0.5 + v*(1<<precisionBits))
			} else {
				kk[x] = int32(0.5 + v*(1<<precisionBits))
			}
		}
		c.bounds[2*xx] = xmin
		c.bounds[2*xx+1] = xmax
	}
	return c
}

// clip8 is Pillow's clip8: shift the accumulator down by PRECISION_BITS
// (arithmetic, so towards minus infinity) and saturate to 0..255.
func clip8(v int32) uint8 {
	v >>= precisionBits
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// Resize returns src resized to w×h the way PIL's Image.resize does for an
// "RGB" image with the given filter and no box or reducing_gap
// (Pillow's ImagingResample, 8 bits per channel): a separable two-pass
// convolution, normally the horizontal pass first over only the source
// rows the vertical pass will read, then the vertical pass, but the
// vertical pass first where Pillow 13 does that (see verticalFirst); each
// pass accumulates
// uint8 × int32 fixed-point weights starting from the rounding constant
// 1<<(PRECISION_BITS-1) and clips to 0..255. A pass whose size does not
// change is skipped; equal sizes return a copy. The transparency key of
// src is carried over unchanged.
//
// Errors: w or h below 1, an empty source, or an unsupported filter
// (Nearest or an unknown number).
func Resize(src *RGB8, w, h int, f Filter) (*RGB8, error) {
	if _, _, ok := f.kernel(); !ok {
		return nil, fmt.Errorf("vision: resize: unsupported filter %v (supported: LANCZOS, BILINEAR, BICUBIC, BOX, HAMMING)", f)
	}
	if w < 1 || h < 1 {
		return nil, fmt.Errorf("vision: resize: target size %dx%d must be at least 1x1", w, h)
	}
	if src == nil || src.W < 1 || src.H < 1 || len(src.Pix) != src.W*src.H*3 {
		return nil, fmt.Errorf("vision: resize: empty or malformed source image")
	}
	if w == src.W && h == src.H {
		return src.Clone(), nil
	}
	needH, needV := w != src.W, h != src.H
	if verticalFirst(src.W, src.H, w, h) {
		cur := src
		if needV {
			cur = vpass(cur, precompute(src.H, h, f))
		}
		if needH {
			cur = hpass(cur, precompute(src.W, w, f), 0, cur.H)
		}
		cur.Transparency = src.Transparency
		return cur, nil
	}
	cur := src
	var vert axisCoeffs
	if needV {
		vert = precompute(src.H, h, f)
	}
	if needH {
		y0, y1 := 0, src.H
		if needV {
			// only the source rows the vertical pass reads
			y0 = vert.bounds[0]
			y1 = vert.bounds[2*h-2] + vert.bounds[2*h-1]
			for i := 0; i < h; i++ {
				vert.bounds[2*i] -= y0
			}
		}
		cur = hpass(src, precompute(src.W, w, f), y0, y1)
	}
	if needV {
		cur = vpass(cur, vert)
	}
	cur.Transparency = src.Transparency
	return cur, nil
}

// verticalFirst reports whether Pillow 13 runs the vertical pass before
// the horizontal one. Its C source was not available here; the rule was
// measured against Pillow 13.0 (every one of several hundred random
// resizes, and the exact boundaries of size sweeps, with every filter):
// the vertical pass goes first when the height shrinks and by more than
// twice the width's reduction, h - oh > 2*(w - ow). The order matters
// because the intermediate image is rounded to 8 bits.
func verticalFirst(w, h, ow, oh int) bool {
	return oh < h && 2*(w-ow) < h-oh
}

// hpass is Pillow's ImagingResampleHorizontal_8bpc over source rows
// [y0, y1).
func hpass(src *RGB8, hor axisCoeffs, y0, y1 int) *RGB8 {
	w := len(hor.bounds) / 2
	tmp := &RGB8{W: w, H: y1 - y0, Pix: make([]uint8, w*(y1-y0)*3)}
	for y := y0; y < y1; y++ {
		in := src.Pix[y*src.W*3 : (y+1)*src.W*3]
		out := tmp.Pix[(y-y0)*w*3 : (y-y0+1)*w*3]
		for xx := 0; xx < w; xx++ {
			xmin, n := hor.bounds[2*xx], hor.bounds[2*xx+1]
			k := hor.k[xx*hor.ksize:]
			s0, s1, s2 := int32(1<<(precisionBits-1)), int32(1<<(precisionBits-1)), int32(1<<(precisionBits-1))
			p := in[xmin*3:]
			for x := 0; x < n; x++ {
				kx := k[x]
				s0 += int32(p[3*x]) * kx
				s1 += int32(p[3*x+1]) * kx
				s2 += int32(p[3*x+2]) * kx
			}
			out[3*xx], out[3*xx+1], out[3*xx+2] = clip8(s0), clip8(s1), clip8(s2)
		}
	}
	return tmp
}

// vpass is Pillow's ImagingResampleVertical_8bpc.
func vpass(cur *RGB8, vert axisCoeffs) *RGB8 {
	h := len(vert.bounds) / 2
	ww := cur.W
	out := &RGB8{W: ww, H: h, Pix: make([]uint8, ww*h*3)}
	for yy := 0; yy < h; yy++ {
		ymin, n := vert.bounds[2*yy], vert.bounds[2*yy+1]
		k := vert.k[yy*vert.ksize:]
		row := out.Pix[yy*ww*3 : (yy+1)*ww*3]
		for x := 0; x < ww*3; x++ {
			s := int32(1 << (precisionBits - 1))
			for y := 0; y < n; y++ {
				s += int32(cur.Pix[(ymin+y)*ww*3+x]) * k[y]
			}
			row[x] = clip8(s)
		}
	}
	return out
}
