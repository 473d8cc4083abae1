package tensor

import (
	"math"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	x, err := FromF32([]int64{2, 2}, []float32{1, -2.5, 3, 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.F32()
	if err != nil {
		t.Fatal(err)
	}
	if got[1] != -2.5 || got[3] != 1e-3 || len(got) != 4 {
		t.Fatalf("got %v", got)
	}
	s := ScalarI32(-7)
	if len(s.Shape) != 0 || len(s.Data) != 4 {
		t.Fatalf("scalar: %v %d bytes", s, len(s.Data))
	}
	if v, err := s.I32(); err != nil || v[0] != -7 {
		t.Fatalf("I32() = %v, %v", v, err)
	}
}

func TestErrors(t *testing.T) {
	if _, err := FromF32([]int64{3}, []float32{1, 2}); err == nil || !strings.Contains(err.Error(), "needs 12") {
		t.Fatalf("want length error, got %v", err)
	}
	if _, err := ScalarI32(1).F32(); err == nil {
		t.Fatal("i32 read as f32 must fail")
	}
	if _, err := (Tensor{DType: "q4", Data: nil}).F32(); err == nil || !strings.Contains(err.Error(), `"q4"`) {
		t.Fatalf("want dtype error, got %v", err)
	}
	if _, err := NumElements([]int64{2, -1}); err == nil {
		t.Fatal("negative dim must fail")
	}
	if _, err := ParseDType("f64"); err == nil {
		t.Fatal("f64 must be rejected")
	}
}

func TestHalfFloats(t *testing.T) {
	cases := []struct {
		h    uint16
		want float32
	}{
		{0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0001, float32(math.Ldexp(1, -24))},
		{0x0000, 0}, {0x3555, 0.333251953125},
	}
	for _, c := range cases {
		if got := F16ToF32(c.h); got != c.want {
			t.Errorf("F16ToF32(%#x) = %v, want %v", c.h, got, c.want)
		}
	}
	if !math.IsInf(float64(F16ToF32(0xfc00)), -1) || !math.IsNaN(float64(F16ToF32(0x7e00))) {
		t.Error("inf/nan wrong")
	}
	bf := Tensor{DType: BF16, Shape: []int64{2}, Data: []byte{0x80, 0x3f, 0x20, 0xc0}} // 1.0, -2.5
	got, err := bf.F32()
	if err != nil || got[0] != 1 || got[1] != -2.5 {
		t.Fatalf("bf16: %v %v", got, err)
	}
	f16 := Tensor{DType: F16, Shape: nil, Data: []byte{0x00, 0x3c}}
	if got, err := f16.F32(); err != nil || got[0] != 1 {
		t.Fatalf("f16 scalar: %v %v", got, err)
	}
}
