package lower

import (
	"github.com/archc/archc/codegen"
	"github.com/archc/archc/formats"
)

// affineDecoder returns the decoder of an MLX affine format
// (formats.Affine; the block layout is driver/weights' affine packing of one
// group: scale and bias, then the packed values), or nil for another name.
func affineDecoder(name string) func(f *fn, b codegen.Value) codegen.Value {
	bits, gs, elem, ok := formats.ParseAffine(name)
	if !ok {
		return nil
	}
	sz := int64(2)
	if elem == "f32" {
		sz = 4
	}
	return func(f *fn, b codegen.Value) codegen.Value { return decodeAffine(f, b, bits, gs, elem, sz) }
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
