package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/archc/archc/formats"
)

// Supported reports whether archc reads tensors of type t: whether the
// weight-storage table (formats) has a row for it. Dequantize
// handles every such type (tested).
func Supported(t Type) bool {
	_, ok := formats.GGML(uint32(t))
	return ok
}

// Dequantize decodes len(dst) elements of type t from raw into dst, exactly
// as ggml's reference dequantize_row_* (ggml-quants.c) and gguf-py's
// quants.py do, operation for operation in float32 (so results are
// bit-identical to theirs; Go never fuses the multiply-adds here).
// len(dst) must be a multiple of t's block size and raw must hold exactly
// len(dst)/block elements * block bytes. Errors: an unsupported type, or a
// length mismatch.
func Dequantize(t Type, raw []byte, dst []float32) error {
	be, bb, ok := t.BlockSize()
	if !ok || !Supported(t) {
		return fmt.Errorf("ggml type %s cannot be dequantized (supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K)", t)
	}
	n := int64(len(dst))
	if n%be != 0 || int64(len(raw)) != n/be*bb {
		return fmt.Errorf("%s: %d elements need %d bytes in %d-element blocks, got %d bytes", t, n, n/be*bb, be, len(raw))
	}
	nb := int(n / be)
	switch t {
	case F32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case F16:
		for i := range dst {
			dst[i] = f16(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case BF16:
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
	case Q4_0:
		for b := 0; b < nb; b++ {
			blk, y := raw[b*18:(b+1)*18], dst[b*32:(b+1)*32]
			d := f16(binary.LittleEndian.Uint16(blk))
			qs := blk[2:]
			for j := 0; j < 16; j++ {
				y[j] = float32(int(qs[j]&0x0f)-8) * d
				y[j+16] = float32(int(qs[j]>>4)-8) * d
			}
		}
	case Q4_1:
		for b := 0; b < nb; b++ {
			blk, y := raw[b*20:(b+1)*20], dst[b*32:(b+1)*32]
			d := f16(binary.LittleEndian.Uint16(blk))
			m := f16(binary.LittleEndian.Uint16(blk[2:]))
			qs := blk[4:]
			for j := 0; j < 16; j++ {
				y[j] = float32(float32(qs[j]&0x0f)*d) + m
				y[j+16] = float32(float32(qs[j]>>4)*d) + m
			}
		}
	case Q5_0:
		for b := 0; b < nb; b++ {
			blk, y := raw[b*22:(b+1)*22], dst[b*32:(b+1)*32]
			d := f16(binary.LittleEndian.Uint16(blk))
			qh := binary.LittleEndian.Uint32(blk[2:])
			qs := blk[6:]
			for j := 0; j < 16; j++ {
				xh0 := byte((qh>>uint(j))<<4) & 0x10
				xh1 := byte(qh>>uint(j+12)) & 0x10
				y[j] = float32(int(qs[j]&0x0f|xh0)-16) * d
				y[j+16] = float32(int(qs[j]>>4|xh1)-16) * d
			}
		}
	case Q5_1:
		for b := 0; b < nb; b++ {
			blk, y := raw[b*24:(b+1)*24], dst[b*32:(b+1)*32]
			d := f16(binary.LittleEndian.Uint16(blk))
			m := f16(binary.LittleEndian.Uint16(blk[2:]))
			qh := binary.LittleEndian.Uint32(blk[4:])
			qs := blk[8:]
			for j := 0; j < 16; j++ {
				xh0 := byte((qh>>uint(j))<<4) & 0x10
				xh1 := byte(qh>>uint(j+12)) & 0x10
				y[j] = float32(float32(qs[j]&0x0f|xh0)*d) + m
				y[j+16] = float32(float32(qs[j]>>4|xh1)*d) + m
			}
		}
	case Q8_0:
		for b := 0; b < nb; b++ {
			blk, y := raw[b*34:(b+1)*34], dst[b*32:(b+1)*32]
			d := f16(binary.LittleEndian.Uint16(blk))
			for j := 0; j < 32; j++ {
				y[j] = float32(int8(blk[2+j])) * d
			}
		}
	case Q4_K:
		for b := 0; b < nb; b++ {
			blk, y := raw[b*144:(b+1)*144], dst[b*256:(b+1)*256]
			d := f16(binary.LittleEndian.Uint16(blk))
			dmin := f16(binary.LittleEndian.Uint16(blk[2:]))
			scales, q := blk[4:16], blk[16:]
			for j, is := 0, 0; j < 256; j, is = j+64, is+2 {
				sc, m := scaleMinK4(is, scales)
				d1, m1 := d*float32(sc), dmin*float32(m)
				sc, m = scaleMinK4(is+1, scales)
				d2, m2 := d*float32(sc), dmin*float32(m)
				for l := 0; l < 32; l++ {
					y[j+l] = float32(d1*float32(q[l]&0x0f)) - m1
				}
				for l := 0; l < 32; l++ {
					y[j+32+l] = float32(d2*float32(q[l]>>4)) - m2
				}
				q = q[32:]
			}
		}
	case Q5_K:
		for b := 0; b < nb; b++ {
			blk, y := raw[b*176:(b+1)*176], dst[b*256:(b+1)*256]
			d := f16(binary.LittleEndian.Uint16(blk))
			dmin := f16(binary.LittleEndian.Uint16(blk[2:]))
			scales, qh, ql := blk[4:16], blk[16:48], blk[48:]
			u1, u2 := byte(1), byte(2)
			for j, is := 0, 0; j < 256; j, is = j+64, is+2 {
				sc, m := scaleMinK4(is, scales)
				d1, m1 := d*float32(sc), dmin*float32(m)
				sc, m = scaleMinK4(is+1, scales)
				d2, m2 := d*float32(sc), dmin*float32(m)
				for l := 0; l < 32; l++ {
					v := ql[l] & 0x0f
					if qh[l]&u1 != 0 {
						v += 16
					}
					y[j+l] = float32(d1*float32(v)) - m1
				}
				for l := 0; l < 32; l++ {
					v := ql[l] >> 4
					if qh[l]&u2 != 0 {
						v += 16
					}
					y[j+32+l] = float32(d2*float32(v)) - m2
				}
				ql = ql[32:]
				u1 <<= 2
				u2 <<= 2
			}
		}
	case Q6_K:
		for b := 0; b < nb; b++ {
			blk, y := raw[b*210:(b+1)*210], dst[b*256:(b+1)*256]
			ql, qh, sc := blk[0:128], blk[128:192], blk[192:208]
			d := f16(binary.LittleEndian.Uint16(blk[208:]))
			for n := 0; n < 256; n += 128 {
				for l := 0; l < 32; l++ {
					is := l / 16
					q1 := int(ql[l]&0x0f|(qh[l]>>0&3)<<4) - 32
					q2 := int(ql[l+32]&0x0f|(qh[l]>>2&3)<<4) - 32
					q3 := int(ql[l]>>4|(qh[l]>>4&3)<<4) - 32
					q4 := int(ql[l+32]>>4|(qh[l]>>6&3)<<4) - 32
					y[n+l] = d * float32(int8(sc[is])) * float32(q1)
					y[n+l+32] = d * float32(int8(sc[is+2])) * float32(q2)
					y[n+l+64] = d * float32(int8(sc[is+4])) * float32(q3)
					y[n+l+96] = d * float32(int8(sc[is+6])) * float32(q4)
				}
				ql, qh, sc = ql[64:], qh[32:], sc[8:]
			}
		}
	}
	return nil
}

// scaleMinK4 unpacks the 6-bit scale and min of sub-block j from the
// 12-byte K-quant scales (ggml's get_scale_min_k4).
func scaleMinK4(j int, q []byte) (sc, m byte) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0x0f | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// StorageFormat returns the storage format (package lower's name: "f32",
// "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k",
// "q6_k") in which a tensor of type t reaches the compiled module, and
// false for a type archc cannot read.
func StorageFormat(t Type) (string, bool) {
	if !Supported(t) {
		return "", false
	}
	return strings.ToLower(t.String()), true
}
