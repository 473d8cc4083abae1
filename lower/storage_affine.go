package lower

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/archc/archc/codegen"
)

// affinePattern names the MLX affine family in StorageFormats.
const affinePattern = "mlx_affine<bits>_g<group_size>_<f32|f16|bf16>"

var affineName = regexp.MustCompile(`^mlx_affine([0-9]+)_g([0-9]+)_(f32|f16|bf16)$`)

// AffineFormat is the storage format name of MLX affine quantization
// (mlx.core.quantize, mode "affine") with bits per weight (2, 3, 4, 5, 6
// or 8), group_size weights per group (32, 64 or 128) and scales and
// biases of element type scaleElem (f32, f16 or bf16), e.g.
// "mlx_affine4_g64_bf16". It returns false for parameters MLX does not
// write.
func AffineFormat(bits, groupSize int, scaleElem string) (string, bool) {
	name := fmt.Sprintf("mlx_affine%d_g%d_%s", bits, groupSize, scaleElem)
	_, ok := affineStorage(name)
	return name, ok
}

// affineStorage is the storage row of an MLX affine format. A block is one
// group as rt/weights' affine packing lays it out: the group's scale and
// bias (scaleElem, little-endian) then its group_size·bits/8 bytes of
// packed values, the little-endian bit stream mlx.core.quantize writes
// (value j in bits [j·bits, (j+1)·bits)).
func affineStorage(name string) (*storage, bool) {
	m := affineName.FindStringSubmatch(name)
	if m == nil {
		return nil, false
	}
	bits, _ := strconv.ParseInt(m[1], 10, 64)
	gs, _ := strconv.ParseInt(m[2], 10, 64)
	switch bits {
	case 2, 3, 4, 5, 6, 8:
	default:
		return nil, false
	}
	switch gs {
	case 32, 64, 128:
	default:
		return nil, false
	}
	elem := m[3]
	sz := int64(2)
	if elem == "f32" {
		sz = 4
	}
	return &storage{
		name:       name,
		elem:       "i8",
		blockElems: gs,
		blockBytes: 2*sz + gs*bits/8,
		decode: func(f *fn, b codegen.Value) codegen.Value {
			return decodeAffine(f, b, bits, gs, elem, sz)
		},
	}, true
}

// decodeAffine decodes MLX affine groups [r, nb, blockBytes] i8 to [r, nb,
// gs] f32 with the arithmetic of mlx.core.dequantize (mlx/backend/cpu/
// quantized.cpp): w = scale·q + bias in the scales' type, that is in f32
// with each of the product and the sum rounded to that type.
func decodeAffine(f *fn, b codegen.Value, bits, gs int64, elem string, sz int64) codegen.Value {
	r, nb := b.Type.Shape[0], b.Type.Shape[1]
	// Eight values occupy exactly `bits` bytes; unpack unit by unit.
	u := f.reshape(f.field(b, 2*sz, b.Type.Shape[2]), r, nb, gs/8, bits)
	vals := make([]codegen.Value, 8)
	for k := int64(0); k < 8; k++ {
		lo, sh := k*bits/8, k*bits%8
		v := f.field(u, lo, lo+1)
		if sh > 0 {
			v = f.shrI8(v, sh)
		}
		if sh+bits > 8 {
			v = f.orI8(v, f.shlI8(f.field(u, lo+1, lo+2), 8-sh))
		}
		if bits < 8 {
			v = f.andI8(v, 1<<bits-1)
		}
		vals[k] = v
	}
	q := f.reshape(f.concat(3, vals...), r, nb, gs)
	qf := f.toF32(f.Op("stablehlo.bitcast_convert", q.Type.WithElem("ui8"), nil, q))
	round := func(x codegen.Value) codegen.Value {
		switch elem {
		case "f32":
			return x
		case "bf16":
			return f.roundBF16(x)
		}
		return f.toF32(f.convert(x, elem))
	}
	w := round(f.mul(f.scaleBlock(f.floatAt(b, 0, elem), qf.Type), qf))
	return round(f.add(w, f.scaleBlock(f.floatAt(b, sz, elem), qf.Type)))
}

// roundBF16 rounds f32 values x to the nearest bfloat16 (ties to even) and
// returns them as f32, with integer operations on the bits. A convert pair
// (f32→bf16→f32) is not used: IREE 3.13 compiled it, fused into the
// embedding's gather, to values other than round-to-nearest-even (the
// llama-mlx-q4 fixture's embeddings differed from mlx.core.dequantize by a
// bf16 ulp, while the same decode outside a gather was bit-exact). Finite
// values only (NaN payloads are not preserved).
func (f *fn) roundBF16(x codegen.Value) codegen.Value {
	u := x.Type.WithElem("ui32")
	c := func(v uint32) codegen.Value {
		k := f.Op("stablehlo.constant", codegen.T("ui32"), codegen.Attrs{codegen.A("value", codegen.DenseInts{Type: codegen.T("ui32"), Values: []int64{int64(v)}})})
		return f.broadcast(k, u)
	}
	b := f.Op("stablehlo.bitcast_convert", u, nil, x)
	lsb := f.Op("stablehlo.and", u, nil, f.Op("stablehlo.shift_right_logical", u, nil, b, c(16)), c(1))
	b = f.Op("stablehlo.add", u, nil, f.Op("stablehlo.add", u, nil, b, c(0x7fff)), lsb)
	b = f.Op("stablehlo.and", u, nil, b, c(0xffff0000))
	return f.Op("stablehlo.bitcast_convert", x.Type, nil, b)
}
