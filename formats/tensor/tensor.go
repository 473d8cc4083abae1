// Package tensor holds host tensors: a dtype, a shape and little-endian,
// row-major bytes. It is the currency between the weights loader, the IREE
// worker and the inference engine.
package tensor

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DType is an element type, spelled like the MLIR element type ("f32",
// "bf16", "i32", ...), so it can be pasted into MLIR text as is.
type DType string

// Supported element types.
const (
	F32  DType = "f32"  // IEEE-754 binary32, 4 bytes
	F16  DType = "f16"  // IEEE-754 binary16, 2 bytes
	BF16 DType = "bf16" // bfloat16 (top half of a binary32), 2 bytes
	I32  DType = "i32"  // two's complement int32, 4 bytes
	I64  DType = "i64"  // two's complement int64, 8 bytes
	U32  DType = "ui32" // unsigned int32, 4 bytes (MLX's packed quantized values)
)

// Size returns the bytes per element, or 0 for an unknown dtype.
func (d DType) Size() int {
	switch d {
	case F32, I32, U32:
		return 4
	case F16, BF16:
		return 2
	case I64:
		return 8
	}
	return 0
}

// Valid reports whether d is one of the supported dtypes.
func (d DType) Valid() bool { return d.Size() != 0 }

// ParseDType parses an MLIR element type name ("f32", "f16", "bf16", "i32",
// "i64"). It returns an error naming the input and the supported names.
func ParseDType(s string) (DType, error) {
	d := DType(s)
	if !d.Valid() {
		return "", fmt.Errorf("unsupported dtype %q: use one of f32, f16, bf16, i32, i64, ui32", s)
	}
	return d, nil
}

// Tensor is a host tensor. Data holds NumElements(Shape) * DType.Size()
// bytes, little-endian, row-major (last dimension fastest). A rank-0
// (scalar) tensor has an empty Shape and one element.
type Tensor struct {
	DType DType
	Shape []int64
	Data  []byte
}

// NumElements returns the product of shape (1 for rank 0). It returns an
// error for a negative dimension or an overflowing product.
func NumElements(shape []int64) (int64, error) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension: dimensions must be >= 0", shape)
		}
		if d != 0 && n > math.MaxInt64/d {
			return 0, fmt.Errorf("shape %v has too many elements: it overflows int64", shape)
		}
		n *= d
	}
	return n, nil
}

// Validate checks that the dtype is supported and that len(Data) matches
// the shape; it returns an error naming the mismatch otherwise.
func (t Tensor) Validate() error {
	if !t.DType.Valid() {
		return fmt.Errorf("tensor has unsupported dtype %q: use one of f32, f16, bf16, i32, i64, ui32", t.DType)
	}
	n, err := NumElements(t.Shape)
	if err != nil {
		return err
	}
	if want := n * int64(t.DType.Size()); int64(len(t.Data)) != want {
		return fmt.Errorf("tensor %s%v has %d data bytes, its shape needs %d: fix the shape or the data", t.DType, t.Shape, len(t.Data), want)
	}
	return nil
}

// String returns a short description like "f32[1 256]" (no data).
func (t Tensor) String() string { return fmt.Sprintf("%s%v", t.DType, t.Shape) }

// FromF32 builds an f32 tensor, copying v. It returns an error if len(v)
// does not match the shape.
func FromF32(shape []int64, v []float32) (Tensor, error) {
	t := Tensor{DType: F32, Shape: append([]int64{}, shape...), Data: make([]byte, 4*len(v))}
	for i, x := range v {
		binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(x))
	}
	return t, t.Validate()
}

// FromI32 builds an i32 tensor, copying v. It returns an error if len(v)
// does not match the shape.
func FromI32(shape []int64, v []int32) (Tensor, error) {
	t := Tensor{DType: I32, Shape: append([]int64{}, shape...), Data: make([]byte, 4*len(v))}
	for i, x := range v {
		binary.LittleEndian.PutUint32(t.Data[4*i:], uint32(x))
	}
	return t, t.Validate()
}

// ScalarI32 builds a rank-0 i32 tensor holding v.
func ScalarI32(v int32) Tensor {
	t, _ := FromI32(nil, []int32{v}) // cannot fail: one element, rank 0
	return t
}

// F32 returns the elements as float32. f32 is decoded directly; f16 and
// bf16 are widened exactly. Other dtypes, or a Data length that does not
// match the shape, return an error.
func (t Tensor) F32() ([]float32, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	sz := t.DType.Size()
	out := make([]float32, len(t.Data)/sz)
	switch t.DType {
	case F32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
		}
	case BF16:
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(t.Data[2*i:])) << 16)
		}
	case F16:
		for i := range out {
			out[i] = F16ToF32(binary.LittleEndian.Uint16(t.Data[2*i:]))
		}
	default:
		return nil, fmt.Errorf("tensor %s cannot be read as float32: only f32, f16 and bf16 can", t)
	}
	return out, nil
}

// I32 returns the elements of an i32 tensor. Other dtypes, or a Data length
// that does not match the shape, return an error.
func (t Tensor) I32() ([]int32, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if t.DType != I32 {
		return nil, fmt.Errorf("tensor %s cannot be read as int32: only i32 can", t)
	}
	out := make([]int32, len(t.Data)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return out, nil
}

// F16ToF32 converts IEEE-754 binary16 bits to float32 exactly, including
// subnormals, infinities and NaN.
func F16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf / NaN
		return math.Float32frombits(sign | 0xff<<23 | mant<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	case mant == 0: // signed zero
		return math.Float32frombits(sign)
	}
	// subnormal: value = mant * 2^-24
	f := float32(mant) * (1.0 / (1 << 24))
	if sign != 0 {
		f = -f
	}
	return f
}
