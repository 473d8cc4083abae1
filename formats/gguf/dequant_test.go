package gguf

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

func putF16(b []byte, bits uint16) { binary.LittleEndian.PutUint16(b, bits) }

// TestDequantizeKnownValues checks each format on hand-built blocks whose
// values are worked out by hand from the format's definition.
func TestDequantizeKnownValues(t *testing.T) {
	type check struct {
		i    int
		want float32
	}
	cases := []struct {
		typ    Type
		n      int
		raw    func() []byte
		checks []check
	}{
		{F32, 2, func() []byte { return f32s(1.5, -0.25) }, []check{{0, 1.5}, {1, -0.25}}},
		{F16, 6, func() []byte {
			b := make([]byte, 12)
			for i, h := range []uint16{0x3c00, 0xc000, 0x0001, 0x7c00, 0x3555, 0x8000} {
				putF16(b[2*i:], h)
			}
			return b
		}, []check{{0, 1}, {1, -2}, {2, float32(math.Ldexp(1, -24))}, {3, float32(math.Inf(1))}, {4, 0.333251953125}, {5, float32(math.Copysign(0, -1))}}},
		{BF16, 2, func() []byte {
			b := make([]byte, 4)
			putF16(b, 0x3f80)
			putF16(b[2:], 0xc0a0)
			return b
		}, []check{{0, 1}, {1, -5}}},
		{Q8_0, 32, func() []byte {
			b := make([]byte, 34)
			putF16(b, 0x3800) // d = 0.5
			for i, q := range []int8{-128, -1, 0, 1, 127} {
				b[2+i] = byte(q)
			}
			return b
		}, []check{{0, -64}, {1, -0.5}, {2, 0}, {3, 0.5}, {4, 63.5}}},
		{Q4_0, 32, func() []byte {
			b := make([]byte, 18)
			putF16(b, 0x4000) // d = 2
			b[2] = 0x3f       // y[0] = (15-8)*2, y[16] = (3-8)*2
			return b
		}, []check{{0, 14}, {16, -10}, {1, -16}}},
		{Q4_1, 32, func() []byte {
			b := make([]byte, 20)
			putF16(b, 0x3c00)     // d = 1
			putF16(b[2:], 0xb800) // m = -0.5
			b[4+1] = 0xa5         // y[1] = 5-0.5, y[17] = 10-0.5
			return b
		}, []check{{1, 4.5}, {17, 9.5}, {0, -0.5}}},
		{Q5_0, 32, func() []byte {
			b := make([]byte, 22)
			putF16(b, 0x3c00) // d = 1
			binary.LittleEndian.PutUint32(b[2:], 1|1<<16)
			b[6] = 0x21 // y[0] = (1|16)-16, y[16] = (2|16)-16
			return b
		}, []check{{0, 1}, {16, 2}, {1, -16}, {17, -16}}},
		{Q5_1, 32, func() []byte {
			b := make([]byte, 24)
			putF16(b, 0x3800)     // d = 0.5
			putF16(b[2:], 0x3c00) // m = 1
			binary.LittleEndian.PutUint32(b[4:], 1<<31)
			b[8+15] = 0xf0 // y[15] = 0*0.5+1, y[31] = (15|16)*0.5+1
			return b
		}, []check{{15, 1}, {31, 16.5}}},
		{Q4_K, 256, func() []byte {
			b := make([]byte, 144)
			putF16(b, 0x3c00)     // d = 1
			putF16(b[2:], 0x3800) // dmin = 0.5
			sc := b[4:16]
			sc[0] = 0x42 // sub-block 0 scale 2; top bits feed sub-block 4's scale
			sc[4] = 3    // sub-block 0 min 3
			sc[8] = 0x21 // sub-block 4: scale low 1 (| 1<<4 = 17), min low 2
			qs := b[16:]
			qs[0] = 0x07  // y[0] = 2*7 - 0.5*3
			qs[64] = 0x05 // y[128] = 17*5 - 0.5*2
			return b
		}, []check{{0, 12.5}, {128, 84}, {160, 0}, {32, 0}}},
		{Q5_K, 256, func() []byte {
			b := make([]byte, 176)
			putF16(b, 0x3c00) // d = 1, dmin = 0
			b[4+0] = 1        // sub-block 0 scale 1
			b[4+1] = 2        // sub-block 1 scale 2
			b[16+0] = 0x03    // qh[0]: high bit for sub-blocks 0 and 1
			b[48+0] = 0x03    // ql[0]: y[0] = (3+16)*1, y[32] = (0+16)*2
			return b
		}, []check{{0, 19}, {32, 32}, {64, 0}}},
		{Q6_K, 256, func() []byte {
			b := make([]byte, 210)
			b[0] = 0x0a             // ql[0]
			b[128] = 0x02           // qh[0]: q1 high bits 2
			b[192+0] = 4            // scale 0
			b[192+4] = 0xff         // scale 4 = -1
			putF16(b[208:], 0x3400) // d = 0.25
			// y[0] = 0.25*4*((10|2<<4)-32) ; y[64] = 0.25*-1*((0|0)-32)
			return b
		}, []check{{0, 10}, {64, 8}}},
	}
	for _, c := range cases {
		t.Run(c.typ.String(), func(t *testing.T) {
			dst := make([]float32, c.n)
			if err := Dequantize(c.typ, c.raw(), dst); err != nil {
				t.Fatal(err)
			}
			for _, ch := range c.checks {
				if math.Float32bits(dst[ch.i]) != math.Float32bits(ch.want) {
					t.Errorf("y[%d] = %v, want %v", ch.i, dst[ch.i], ch.want)
				}
			}
		})
	}
}

// TestDequantizeMatchesGGUFPy compares bit for bit with gguf-py's
// dequantize on random blocks (testdata/quants.json, from gen_quants.py).
func TestDequantizeMatchesGGUFPy(t *testing.T) {
	data, err := os.ReadFile("testdata/quants.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Type string
		Raw  string
		Want []uint32
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	byName := map[string]Type{"F32": F32, "F16": F16, "BF16": BF16, "Q4_0": Q4_0, "Q4_1": Q4_1, "Q5_0": Q5_0, "Q5_1": Q5_1, "Q8_0": Q8_0, "Q4_K": Q4_K, "Q5_K": Q5_K, "Q6_K": Q6_K}
	seen := map[string]bool{}
	for _, c := range cases {
		typ, ok := byName[c.Type]
		if !ok {
			t.Fatalf("unknown type %s in quants.json", c.Type)
		}
		seen[c.Type] = true
		raw, err := hex.DecodeString(c.Raw)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]float32, len(c.Want))
		if err := Dequantize(typ, raw, dst); err != nil {
			t.Fatalf("%s: %v", c.Type, err)
		}
		bad := 0
		for i, w := range c.Want {
			if got := math.Float32bits(dst[i]); got != w && bad < 5 {
				t.Errorf("%s: y[%d] = %v (%#08x), gguf-py %v (%#08x)", c.Type, i, dst[i], got, math.Float32frombits(w), w)
				bad++
			}
		}
	}
	// Every type the storage table supports has a Go dequantizer, checked
	// against gguf-py here.
	for _, typ := range SupportedTypes() {
		if !seen[typ.String()] {
			t.Errorf("%s is supported (formats/formats.json) but quants.json has no %s case: add it to gen_quants.py and Dequantize", typ, typ)
		}
	}
}

func TestDequantizeErrors(t *testing.T) {
	err := Dequantize(Q2_K, make([]byte, 84), make([]float32, 256))
	if err == nil || !strings.Contains(err.Error(), "Q2_K") {
		t.Errorf("Q2_K: got %v, want an error naming Q2_K", err)
	}
	err = Dequantize(Q8_0, make([]byte, 33), make([]float32, 32))
	if err == nil || !strings.Contains(err.Error(), "34 bytes") {
		t.Errorf("short Q8_0: got %v, want a length error", err)
	}
	err = Dequantize(Q4_K, make([]byte, 144), make([]float32, 200))
	if err == nil {
		t.Error("partial block: want an error")
	}
}

func TestF16AllFinite(t *testing.T) {
	// Every finite binary16 value converts exactly: check against the
	// value computed from its fields in float64.
	for h := 0; h < 1<<16; h++ {
		e, m := (h>>10)&0x1f, h&0x3ff
		if e == 0x1f {
			continue
		}
		var v float64
		if e == 0 {
			v = math.Ldexp(float64(m), -24)
		} else {
			v = math.Ldexp(float64(m|0x400), e-25)
		}
		if h&0x8000 != 0 {
			v = -v
		}
		if got := f16(uint16(h)); float64(got) != v || math.Signbit(float64(got)) != (h&0x8000 != 0) {
			t.Fatalf("f16(%#04x) = %v, want %v", h, got, v)
		}
	}
}
