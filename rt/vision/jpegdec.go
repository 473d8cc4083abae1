package vision

import (
	"errors"
	"fmt"
	"image"
)

// This file is a JPEG decoder that reproduces libjpeg-turbo's samples
// (what Pillow decodes with): Huffman baseline and progressive decoding
// into coefficient blocks, then jidctint.c's accurate integer IDCT
// (jpeg_idct_islow) with its range-limit table. Colour conversion and
// chroma upsampling are in jpegcolor.go. Go's image/jpeg uses a different
// IDCT, which is why it is not used for the pixels. Anything this decoder
// does not handle (arithmetic coding, 12-bit samples, unusual sampling
// layouts, YCCK) returns errJPEGFallback and Decode uses image/jpeg.

var errJPEGFallback = errors.New("jpeg: layout not handled by the libjpeg-exact decoder")

var errJPEGCorrupt = errors.New("corrupt JPEG data")

// zigzag maps the k-th coefficient in scan order to its natural position.
var zigzag = [64]int{
	0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
}

type huffTable struct {
	maxcode [18]int32
	valptr  [17]int32
	mincode [17]int32
	vals    []uint8
	ok      bool
}

func buildHuff(counts []uint8, vals []uint8) huffTable {
	var h huffTable
	h.vals = vals
	code, k := int32(0), int32(0)
	for l := 1; l <= 16; l++ {
		n := int32(counts[l-1])
		h.valptr[l] = k
		h.mincode[l] = code
		code += n
		k += n
		if n > 0 {
			h.maxcode[l] = code - 1
		} else {
			h.maxcode[l] = -1
		}
		code <<= 1
	}
	h.maxcode[17] = 0x7fffffff
	h.ok = true
	return h
}

type jpegComp struct {
	id, h, v, tq int
	bw, bh       int // blocks per line / column (MCU padded)
	coef         [][64]int32
	dc           int32
	td, ta       int
}

type jpegDec struct {
	data           []byte
	pos            int
	w, h           int
	progressive    bool
	comps          []*jpegComp
	qt             [4][64]int32
	dcTab, acTab   [4]huffTable
	restart        int
	hmax, vmax     int
	mcusX, mcusY   int
	jfif           bool
	adobe          bool
	adobeTransform int
	bits           uint32
	nbits          int
	eobrun         int
	hitMarker      bool
}

func (d *jpegDec) u16(p int) int { return int(d.data[p])<<8 | int(d.data[p+1]) }

// decodeJPEGExact decodes data to an image.Gray, image.YCbCr or image.CMYK
// holding libjpeg-turbo's sample values.
func decodeJPEGExact(data []byte) (img image.Image, err error) {
	defer func() {
		if r := recover(); r != nil {
			img, err = nil, errJPEGCorrupt
		}
	}()
	d := &jpegDec{data: data, pos: 2}
	sawFrame := false
	for {
		// find the next marker
		for d.pos < len(data) && data[d.pos] != 0xFF {
			d.pos++
		}
		for d.pos < len(data) && data[d.pos] == 0xFF {
			d.pos++
		}
		if d.pos >= len(data) {
			return nil, errJPEGCorrupt
		}
		m := data[d.pos]
		d.pos++
		if m == 0xD9 { // EOI
			break
		}
		if m == 0x00 { // a stuffed 0xFF00 left in entropy data
			continue
		}
		if m >= 0xD0 && m <= 0xD7 || m == 0x01 {
			continue
		}
		if d.pos+2 > len(data) {
			return nil, errJPEGCorrupt
		}
		n := d.u16(d.pos)
		if n < 2 || d.pos+n > len(data) {
			return nil, errJPEGCorrupt
		}
		seg := data[d.pos+2 : d.pos+n]
		next := d.pos + n
		switch {
		case m == 0xC0 || m == 0xC1 || m == 0xC2:
			if sawFrame {
				return nil, errJPEGCorrupt
			}
			sawFrame = true
			d.progressive = m == 0xC2
			if err := d.frame(seg); err != nil {
				return nil, err
			}
		case m >= 0xC3 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC:
			return nil, errJPEGFallback // lossless, hierarchical, arithmetic
		case m == 0xC4:
			if err := d.dht(seg); err != nil {
				return nil, err
			}
		case m == 0xDB:
			if err := d.dqt(seg); err != nil {
				return nil, err
			}
		case m == 0xDD:
			if len(seg) < 2 {
				return nil, errJPEGCorrupt
			}
			d.restart = int(seg[0])<<8 | int(seg[1])
		case m == 0xE0:
			if len(seg) >= 5 && string(seg[:5]) == "JFIF\x00" {
				d.jfif = true
			}
		case m == 0xEE:
			if len(seg) >= 12 && string(seg[:5]) == "Adobe" {
				d.adobe = true
				d.adobeTransform = int(seg[11])
			}
		case m == 0xDA:
			if !sawFrame {
				return nil, errJPEGCorrupt
			}
			d.pos = next
			if err := d.scan(seg); err != nil {
				return nil, err
			}
			continue
		}
		d.pos = next
	}
	if !sawFrame {
		return nil, errJPEGCorrupt
	}
	return d.output()
}

func (d *jpegDec) frame(s []byte) error {
	if len(s) < 6 {
		return errJPEGCorrupt
	}
	if s[0] != 8 {
		return errJPEGFallback
	}
	d.h, d.w = int(s[1])<<8|int(s[2]), int(s[3])<<8|int(s[4])
	nc := int(s[5])
	if d.w == 0 || d.h == 0 || (nc != 1 && nc != 3 && nc != 4) || len(s) < 6+3*nc {
		return errJPEGFallback
	}
	for i := 0; i < nc; i++ {
		c := &jpegComp{id: int(s[6+3*i]), h: int(s[7+3*i] >> 4), v: int(s[7+3*i] & 15), tq: int(s[8+3*i])}
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 || c.tq > 3 {
			return errJPEGCorrupt
		}
		if nc == 1 {
			c.h, c.v = 1, 1 // a single component is never interleaved
		}
		d.hmax, d.vmax = max(d.hmax, c.h), max(d.vmax, c.v)
		d.comps = append(d.comps, c)
	}
	d.mcusX = (d.w + 8*d.hmax - 1) / (8 * d.hmax)
	d.mcusY = (d.h + 8*d.vmax - 1) / (8 * d.vmax)
	for _, c := range d.comps {
		c.bw, c.bh = d.mcusX*c.h, d.mcusY*c.v
		c.coef = make([][64]int32, c.bw*c.bh)
	}
	return nil
}

func (d *jpegDec) dht(s []byte) error {
	for len(s) > 0 {
		if len(s) < 17 {
			return errJPEGCorrupt
		}
		tc, th := int(s[0]>>4), int(s[0]&15)
		if tc > 1 || th > 3 {
			return errJPEGCorrupt
		}
		n := 0
		for _, c := range s[1:17] {
			n += int(c)
		}
		if n > 256 || len(s) < 17+n {
			return errJPEGCorrupt
		}
		t := buildHuff(s[1:17], append([]uint8(nil), s[17:17+n]...))
		if tc == 0 {
			d.dcTab[th] = t
		} else {
			d.acTab[th] = t
		}
		s = s[17+n:]
	}
	return nil
}

func (d *jpegDec) dqt(s []byte) error {
	for len(s) > 0 {
		pq, tq := int(s[0]>>4), int(s[0]&15)
		if tq > 3 {
			return errJPEGCorrupt
		}
		if pq == 0 {
			if len(s) < 65 {
				return errJPEGCorrupt
			}
			for k := 0; k < 64; k++ {
				d.qt[tq][zigzag[k]] = int32(s[1+k])
			}
			s = s[65:]
		} else {
			if len(s) < 129 {
				return errJPEGCorrupt
			}
			for k := 0; k < 64; k++ {
				d.qt[tq][zigzag[k]] = int32(s[1+2*k])<<8 | int32(s[2+2*k])
			}
			s = s[129:]
		}
	}
	return nil
}

// bit reader over entropy-coded data: 0xFF00 is a 0xFF byte; at a marker
// it feeds zero bits (as libjpeg does) and leaves pos on the 0xFF.
func (d *jpegDec) fill() {
	for d.nbits <= 24 {
		var b byte
		if !d.hitMarker && d.pos < len(d.data) {
			b = d.data[d.pos]
			if b == 0xFF {
				if d.pos+1 < len(d.data) && d.data[d.pos+1] == 0 {
					d.pos += 2
				} else {
					d.hitMarker = true
					b = 0
				}
			} else {
				d.pos++
			}
		}
		d.bits |= uint32(b) << (24 - d.nbits)
		d.nbits += 8
	}
}

func (d *jpegDec) getBits(n int) int32 {
	if n == 0 {
		return 0
	}
	if d.nbits < n {
		d.fill()
	}
	v := int32(d.bits >> (32 - n))
	d.bits <<= n
	d.nbits -= n
	return v
}

func (d *jpegDec) decodeHuff(t *huffTable) (int, error) {
	if !t.ok {
		return 0, errJPEGCorrupt
	}
	code := int32(0)
	for l := 1; l <= 16; l++ {
		code = code<<1 | d.getBits(1)
		if code <= t.maxcode[l] {
			i := t.valptr[l] + code - t.mincode[l]
			if int(i) >= len(t.vals) {
				return 0, errJPEGCorrupt
			}
			return int(t.vals[i]), nil
		}
	}
	return 0, errJPEGCorrupt
}

func extend(v int32, s int) int32 {
	if s == 0 {
		return 0
	}
	if v < 1<<(s-1) {
		return v - (1 << s) + 1
	}
	return v
}

func (d *jpegDec) receiveExtend(s int) int32 {
	if s > 16 {
		panic(errJPEGCorrupt)
	}
	return extend(d.getBits(s), s)
}

func (d *jpegDec) scan(s []byte) error {
	if len(s) < 1 {
		return errJPEGCorrupt
	}
	ns := int(s[0])
	if ns < 1 || ns > 4 || len(s) < 1+2*ns+3 {
		return errJPEGCorrupt
	}
	var sc []*jpegComp
	for i := 0; i < ns; i++ {
		id, tt := int(s[1+2*i]), s[2+2*i]
		var c *jpegComp
		for _, x := range d.comps {
			if x.id == id {
				c = x
			}
		}
		if c == nil {
			return errJPEGCorrupt
		}
		c.td, c.ta = int(tt>>4)&3, int(tt&15)&3
		sc = append(sc, c)
	}
	p := 1 + 2*ns
	ss, se, ah, al := int(s[p]), int(s[p+1]), int(s[p+2]>>4), int(s[p+2]&15)
	if !d.progressive {
		ss, se, ah, al = 0, 63, 0, 0
	}
	if ss > se || se > 63 || (ss == 0 && se != 0 && d.progressive) || (ss > 0 && ns != 1) {
		return errJPEGCorrupt
	}
	d.bits, d.nbits, d.hitMarker, d.eobrun = 0, 0, false, 0
	for _, c := range sc {
		c.dc = 0
	}
	block := func(c *jpegComp, b *[64]int32) error {
		switch {
		case !d.progressive:
			return d.baselineBlock(c, b)
		case ss == 0 && ah == 0:
			t, err := d.decodeHuff(&d.dcTab[c.td])
			if err != nil {
				return err
			}
			c.dc += d.receiveExtend(t)
			b[0] = c.dc << al
		case ss == 0:
			if d.getBits(1) != 0 {
				b[0] |= 1 << al
			}
		case ah == 0:
			return d.acFirst(c, b, ss, se, al)
		default:
			return d.acRefine(c, b, ss, se, al)
		}
		return nil
	}
	var units int // MCUs in the scan
	var unit func(i int) error
	if ns == 1 {
		c := sc[0]
		cw := (d.w*c.h + d.hmax - 1) / d.hmax
		ch := (d.h*c.v + d.vmax - 1) / d.vmax
		bx, by := (cw+7)/8, (ch+7)/8
		units = bx * by
		unit = func(i int) error { return block(c, &c.coef[(i/bx)*c.bw+i%bx]) }
	} else {
		units = d.mcusX * d.mcusY
		unit = func(i int) error {
			mx, my := i%d.mcusX, i/d.mcusX
			for _, c := range sc {
				for v := 0; v < c.v; v++ {
					for h := 0; h < c.h; h++ {
						if err := block(c, &c.coef[(my*c.v+v)*c.bw+mx*c.h+h]); err != nil {
							return err
						}
					}
				}
			}
			return nil
		}
	}
	for i := 0; i < units; i++ {
		if d.restart > 0 && i > 0 && i%d.restart == 0 {
			// skip to and past the RSTn marker, reset predictors
			for d.pos+1 < len(d.data) && !(d.data[d.pos] == 0xFF && d.data[d.pos+1] >= 0xD0 && d.data[d.pos+1] <= 0xD7) {
				if d.data[d.pos] == 0xFF && d.data[d.pos+1] != 0 && d.data[d.pos+1] != 0xFF {
					break // some other marker: libjpeg resyncs; treat as corrupt
				}
				d.pos++
			}
			if d.pos+1 < len(d.data) && d.data[d.pos] == 0xFF && d.data[d.pos+1] >= 0xD0 && d.data[d.pos+1] <= 0xD7 {
				d.pos += 2
			} else {
				return errJPEGCorrupt
			}
			d.bits, d.nbits, d.hitMarker, d.eobrun = 0, 0, false, 0
			for _, c := range sc {
				c.dc = 0
			}
		}
		if err := unit(i); err != nil {
			return err
		}
	}
	if d.hitMarker && d.pos >= len(d.data) {
		return errJPEGCorrupt
	}
	if !d.hitMarker && d.pos >= len(d.data) {
		return errJPEGCorrupt // ran out of data: truncated
	}
	return nil
}

func (d *jpegDec) baselineBlock(c *jpegComp, b *[64]int32) error {
	t, err := d.decodeHuff(&d.dcTab[c.td])
	if err != nil {
		return err
	}
	c.dc += d.receiveExtend(t)
	b[0] = c.dc
	for k := 1; k < 64; k++ {
		rs, err := d.decodeHuff(&d.acTab[c.ta])
		if err != nil {
			return err
		}
		r, s := rs>>4, rs&15
		if s != 0 {
			k += r
			if k > 63 {
				return errJPEGCorrupt
			}
			b[zigzag[k]] = d.receiveExtend(s)
		} else {
			if r != 15 {
				break
			}
			k += 15
		}
	}
	return nil
}

func (d *jpegDec) acFirst(c *jpegComp, b *[64]int32, ss, se, al int) error {
	if d.eobrun > 0 {
		d.eobrun--
		return nil
	}
	for k := ss; k <= se; k++ {
		rs, err := d.decodeHuff(&d.acTab[c.ta])
		if err != nil {
			return err
		}
		r, s := rs>>4, rs&15
		if s != 0 {
			k += r
			if k > 63 {
				return errJPEGCorrupt
			}
			b[zigzag[k]] = d.receiveExtend(s) * (1 << al)
		} else {
			if r != 15 {
				d.eobrun = 1 << r
				if r > 0 {
					d.eobrun += int(d.getBits(r))
				}
				d.eobrun--
				break
			}
			k += 15
		}
	}
	return nil
}

func (d *jpegDec) acRefine(c *jpegComp, b *[64]int32, ss, se, al int) error {
	p1, m1 := int32(1)<<al, int32(-1)<<al
	k := ss
	refine := func(pos int) {
		if b[pos] != 0 && d.getBits(1) != 0 && b[pos]&p1 == 0 {
			if b[pos] >= 0 {
				b[pos] += p1
			} else {
				b[pos] += m1
			}
		}
	}
	if d.eobrun == 0 {
		for ; k <= se; k++ {
			rs, err := d.decodeHuff(&d.acTab[c.ta])
			if err != nil {
				return err
			}
			r, s := rs>>4, rs&15
			var val int32
			if s != 0 {
				if s != 1 {
					return errJPEGCorrupt
				}
				if d.getBits(1) != 0 {
					val = p1
				} else {
					val = m1
				}
			} else if r != 15 {
				d.eobrun = 1 << r
				if r > 0 {
					d.eobrun += int(d.getBits(r))
				}
				break
			}
			for k <= se {
				pos := zigzag[k]
				if b[pos] != 0 {
					refine(pos)
				} else {
					if r == 0 {
						break
					}
					r--
				}
				k++
			}
			if val != 0 && k <= 63 {
				b[zigzag[k]] = val
			}
		}
	}
	if d.eobrun > 0 {
		for ; k <= se; k++ {
			refine(zigzag[k])
		}
		d.eobrun--
	}
	return nil
}

// jidctint.c constants (CONST_BITS 13).
const (
	idctConstBits  = 13
	idctPass1Bits  = 2
	fix0_298631336 = 2446
	fix0_390180644 = 3196
	fix0_541196100 = 4433
	fix0_765366865 = 6270
	fix0_899976223 = 7373
	fix1_175875602 = 9633
	fix1_501321110 = 12299
	fix1_847759065 = 15137
	fix1_961570560 = 16069
	fix2_053119869 = 16819
	fix2_562915447 = 20995
	fix3_072711026 = 25172
)

// idctRangeLimit is libjpeg's post-IDCT range_limit[x & RANGE_MASK]:
// x + 128 clamped to 0..255, x taken modulo 1024 as a signed value.
func idctRangeLimit(x int32) uint8 {
	x &= 1023
	if x >= 512 {
		x -= 1024
	}
	return clampU8(int(x) + 128)
}

func descale(x int32, n int) int32 { return (x + 1<<(n-1)) >> n }

// idctISlow is libjpeg's jpeg_idct_islow for one dequantised block,
// writing 8×8 samples at dst with the given stride.
func idctISlow(in *[64]int32, q *[64]int32, dst []uint8, stride int) {
	var ws [64]int32
	for col := 0; col < 8; col++ {
		deq := func(r int) int32 { return in[r*8+col] * q[r*8+col] }
		if in[8+col] == 0 && in[16+col] == 0 && in[24+col] == 0 && in[32+col] == 0 &&
			in[40+col] == 0 && in[48+col] == 0 && in[56+col] == 0 {
			dc := deq(0) << idctPass1Bits
			for r := 0; r < 8; r++ {
				ws[r*8+col] = dc
			}
			continue
		}
		o := idct1D(deq(0), deq(1), deq(2), deq(3), deq(4), deq(5), deq(6), deq(7))
		for r := 0; r < 8; r++ {
			ws[r*8+col] = descale(o[r], idctConstBits-idctPass1Bits)
		}
	}
	for row := 0; row < 8; row++ {
		w := ws[row*8 : row*8+8]
		out := dst[row*stride : row*stride+8]
		if w[1] == 0 && w[2] == 0 && w[3] == 0 && w[4] == 0 && w[5] == 0 && w[6] == 0 && w[7] == 0 {
			v := idctRangeLimit(descale(w[0], idctPass1Bits+3))
			for i := range out {
				out[i] = v
			}
			continue
		}
		o := idct1D(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7])
		for i := range out {
			out[i] = idctRangeLimit(descale(o[i], idctConstBits+idctPass1Bits+3))
		}
	}
}

// idct1D is the shared even/odd butterfly of jpeg_idct_islow, returning
// the eight outputs before descaling.
func idct1D(x0, x1, x2, x3, x4, x5, x6, x7 int32) [8]int32 {
	z2, z3 := x2, x6
	z1 := (z2 + z3) * fix0_541196100
	tmp2 := z1 + z3*(-fix1_847759065)
	tmp3 := z1 + z2*fix0_765366865
	tmp0 := (x0 + x4) << idctConstBits
	tmp1 := (x0 - x4) << idctConstBits
	tmp10, tmp13 := tmp0+tmp3, tmp0-tmp3
	tmp11, tmp12 := tmp1+tmp2, tmp1-tmp2

	tmp0, tmp1, tmp2, tmp3 = x7, x5, x3, x1
	z1 = tmp0 + tmp3
	z2 = tmp1 + tmp2
	z3 = tmp0 + tmp2
	z4 := tmp1 + tmp3
	z5 := (z3 + z4) * fix1_175875602
	tmp0 *= fix0_298631336
	tmp1 *= fix2_053119869
	tmp2 *= fix3_072711026
	tmp3 *= fix1_501321110
	z1 *= -fix0_899976223
	z2 *= -fix2_562915447
	z3 *= -fix1_961570560
	z4 *= -fix0_390180644
	z3 += z5
	z4 += z5
	tmp0 += z1 + z3
	tmp1 += z2 + z4
	tmp2 += z2 + z3
	tmp3 += z1 + z4
	return [8]int32{tmp10 + tmp3, tmp11 + tmp2, tmp12 + tmp1, tmp13 + tmp0,
		tmp13 - tmp0, tmp12 - tmp1, tmp11 - tmp2, tmp10 - tmp3}
}

// plane runs the IDCT over every block of c.
func (d *jpegDec) plane(c *jpegComp) ([]uint8, int) {
	stride := c.bw * 8
	out := make([]uint8, stride*c.bh*8)
	q := &d.qt[c.tq]
	for by := 0; by < c.bh; by++ {
		for bx := 0; bx < c.bw; bx++ {
			idctISlow(&c.coef[by*c.bw+bx], q, out[by*8*stride+bx*8:], stride)
		}
	}
	return out, stride
}

func (d *jpegDec) output() (image.Image, error) {
	r := image.Rect(0, 0, d.w, d.h)
	switch len(d.comps) {
	case 1:
		p, s := d.plane(d.comps[0])
		return &image.Gray{Pix: p, Stride: s, Rect: r}, nil
	case 3:
		// libjpeg's default colour space: JFIF → YCbCr; Adobe transform
		// 0 → RGB; ids 'R','G','B' → RGB; else YCbCr.
		rgb := !d.jfif && ((d.adobe && d.adobeTransform == 0) ||
			(!d.adobe && d.comps[0].id == 'R' && d.comps[1].id == 'G' && d.comps[2].id == 'B'))
		if rgb {
			return nil, errJPEGFallback
		}
		y, cb, cr := d.comps[0], d.comps[1], d.comps[2]
		if cb.h != 1 || cb.v != 1 || cr.h != 1 || cr.v != 1 {
			return nil, errJPEGFallback
		}
		var ratio image.YCbCrSubsampleRatio
		switch [2]int{y.h, y.v} {
		case [2]int{1, 1}:
			ratio = image.YCbCrSubsampleRatio444
		case [2]int{2, 1}:
			ratio = image.YCbCrSubsampleRatio422
		case [2]int{2, 2}:
			ratio = image.YCbCrSubsampleRatio420
		case [2]int{1, 2}:
			ratio = image.YCbCrSubsampleRatio440
		case [2]int{4, 1}:
			ratio = image.YCbCrSubsampleRatio411
		case [2]int{4, 2}:
			ratio = image.YCbCrSubsampleRatio410
		default:
			return nil, errJPEGFallback
		}
		yp, ys := d.plane(y)
		cbp, cs := d.plane(cb)
		crp, _ := d.plane(cr)
		return &image.YCbCr{Y: yp, Cb: cbp, Cr: crp, YStride: ys, CStride: cs, SubsampleRatio: ratio, Rect: r}, nil
	case 4:
		if d.adobe && d.adobeTransform != 0 {
			return nil, errJPEGFallback // YCCK
		}
		for _, c := range d.comps {
			if c.h != 1 || c.v != 1 {
				return nil, errJPEGFallback
			}
		}
		out := image.NewCMYK(r)
		for i, c := range d.comps {
			p, s := d.plane(c)
			for y := 0; y < d.h; y++ {
				for x := 0; x < d.w; x++ {
					// Pillow reads CMYK JPEGs as "CMYK;I" (Adobe inverted)
					out.Pix[y*out.Stride+4*x+i] = 255 - p[y*s+x]
				}
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("jpeg: %d components: %w", len(d.comps), errJPEGFallback)
}
