package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/formats"
)

// A storage format is one row of the weight-storage table (package
// formats, from formats.json): how a checkpoint tensor of logical shape
// [..., cols] sits in its global (the checkpoint's own bytes). Float
// formats are declared in their dtype; block formats (GGUF's
// quantizations, MLX affine) as the stored rows of blocks, [rows,
// cols/blockElems·blockBytes] i8, exactly the bytes of the file. This
// package adds how the graph decodes each to f32: next to the op that
// reads the weight (plain lowering), or inside a hand-written kernel
// (kernel.go) where one exists for the format and the host.
type storage struct {
	name       string // format name as in Options.WeightDTypes
	elem       string // MLIR element type of the global
	blockElems int64  // weights per block (1 for float formats)
	blockBytes int64  // bytes per block
	// decode turns blocks [rows, nb, blockBytes] i8 into [rows, nb,
	// blockElems] f32, operation for operation as the format's reference
	// does in float32. nil for float formats (a convert).
	decode func(f *fn, b codegen.Value) codegen.Value
}

// decoders are the decoders of the table's block formats, by name (MLX
// affine formats get theirs from their parameters, storage_affine.go).
// TestStorageDecoders checks that every block format has one.
var decoders = map[string]func(f *fn, b codegen.Value) codegen.Value{
	"q8_0": decodeQ8_0,
	"q4_0": decodeQ4_0,
	"q4_1": decodeQ4_1,
	"q5_0": decodeQ5_0,
	"q5_1": decodeQ5_1,
	"q4_k": decodeQ4_K,
	"q5_k": decodeQ5_K,
	"q6_k": decodeQ6_K,
}

// StorageFormats lists the weight storage formats Lower accepts in
// Options.WeightDTypes, sorted, with the MLX affine family as its pattern
// (formats.Names).
func StorageFormats() []string { return formats.Names() }

// lookupStorage returns the row of the storage table named name with its
// decoder: a fixed row, or an MLX affine row built from its parameters.
// ok is false for an unknown name or a block format without a decoder.
func lookupStorage(name string) (*storage, bool) {
	r, ok := formats.Lookup(name)
	if !ok {
		return nil, false
	}
	s := &storage{name: r.Name, elem: r.Elem, blockElems: r.BlockElems, blockBytes: r.BlockBytes}
	if r.BlockElems == 1 {
		return s, true
	}
	if s.decode = decoders[name]; s.decode == nil {
		s.decode = affineDecoder(name)
	}
	return s, s.decode != nil
}

// storageOf returns the format of a weight ("f32" when not listed).
func (o Options) storageOf(name string) (*storage, error) {
	dt := o.WeightDTypes[name]
	if dt == "" {
		dt = "f32"
	}
	s, ok := lookupStorage(dt)
	if !ok {
		return nil, fmt.Errorf("weight %s: unknown storage format %q (known: %v)", name, dt, StorageFormats())
	}
	return s, nil
}

// globalType is the type of the global holding a weight of logical shape
// shape in format s: the shape itself for float formats, [rows, row bytes]
// i8 for block formats (rows: the product of the outer dimensions).
func (s *storage) globalType(shape []int64) (codegen.Type, error) {
	if s.decode == nil {
		return codegen.T(s.elem, shape...), nil
	}
	rows, cols := int64(1), shape[len(shape)-1]
	for _, d := range shape[:len(shape)-1] {
		rows *= d
	}
	if cols%s.blockElems != 0 {
		return codegen.Type{}, fmt.Errorf("a %s weight needs rows of a multiple of %d elements, got shape %v", s.name, s.blockElems, shape)
	}
	return codegen.T("i8", rows, cols/s.blockElems*s.blockBytes), nil
}

// decodeRows turns stored rows raw [r, rowBytes] (block formats) or [r,
// cols] (float formats) into f32 [r, cols].
func (f *fn) decodeRows(s *storage, raw codegen.Value, cols int64) codegen.Value {
	if s.decode == nil {
		if raw.Type.Elem == "f32" {
			return raw
		}
		return f.convert(raw, "f32")
	}
	r := raw.Type.Shape[0]
	nb := cols / s.blockElems
	out := s.decode(f, f.reshape(raw, r, nb, s.blockBytes))
	return f.reshape(out, r, cols)
}

// Byte-level helpers for the decoders: b is [..., n] i8.

// field is bytes [lo, hi) of the innermost dimension.
func (f *fn) field(b codegen.Value, lo, hi int64) codegen.Value {
	return f.sliceDim(b, b.Type.Rank()-1, lo, hi)
}

// f16At reads the little-endian f16 at byte offset off of each block, as
// f32: [...] from [..., n].
func (f *fn) f16At(b codegen.Value, off int64) codegen.Value { return f.floatAt(b, off, "f16") }

// floatAt reads the little-endian float of type elem (f32, f16 or bf16) at
// byte offset off of each block, as f32: [...] from [..., n].
func (f *fn) floatAt(b codegen.Value, off int64, elem string) codegen.Value {
	n := int64(2)
	if elem == "f32" {
		n = 4
	}
	raw := f.field(b, off, off+n)
	shape := raw.Type.Shape[:raw.Type.Rank()-1]
	x := f.Op("stablehlo.bitcast_convert", codegen.T(elem, shape...), nil, raw)
	if elem == "f32" {
		return x
	}
	return f.convert(x, "f32")
}

func (f *fn) constI8(v int64, t codegen.Type) codegen.Value {
	c := f.Op("stablehlo.constant", codegen.T("i8"), codegen.Attrs{codegen.A("value", codegen.DenseInts{Type: codegen.T("i8"), Values: []int64{int64(v)}})})
	return f.broadcast(c, t)
}

func (f *fn) andI8(x codegen.Value, mask int64) codegen.Value {
	return f.Op("stablehlo.and", x.Type, nil, x, f.constI8(mask, x.Type))
}

func (f *fn) orI8(x, y codegen.Value) codegen.Value { return f.Op("stablehlo.or", x.Type, nil, x, y) }

func (f *fn) shrI8(x codegen.Value, n int64) codegen.Value {
	return f.Op("stablehlo.shift_right_logical", x.Type, nil, x, f.constI8(n, x.Type))
}

func (f *fn) shlI8(x codegen.Value, n int64) codegen.Value {
	return f.Op("stablehlo.shift_left", x.Type, nil, x, f.constI8(n, x.Type))
}

// shrEach shifts x [..., a, n] right by shifts[i] along a new axis:
// [..., a, len(shifts), n], as numpy's x[..., None, :] >> shifts[:, None].
func (f *fn) shrEach(x codegen.Value, shifts []int64) codegen.Value {
	r := x.Type.Rank()
	shape := append(append(append([]int64{}, x.Type.Shape[:r-1]...), int64(len(shifts))), x.Type.Shape[r-1])
	t := x.Type.With(shape...)
	dims := make([]int64, 0, r)
	for i := 0; i < r-1; i++ {
		dims = append(dims, int64(i))
	}
	dims = append(dims, int64(r))
	xb := f.broadcastDims(x, t, dims...)
	vals := make([]int64, len(shifts))
	for i, s := range shifts {
		vals[i] = int64(s)
	}
	ct := codegen.T("i8", int64(len(shifts)))
	c := f.Op("stablehlo.constant", ct, codegen.Attrs{codegen.A("value", codegen.DenseInts{Type: ct, Values: vals, List: true})})
	return f.Op("stablehlo.shift_right_logical", t, nil, xb, f.broadcastDims(c, t, int64(r-1)))
}

// nibbles16 unpacks qs [..., 16] (byte j: element j low, j+16 high) into
// [..., 32] values 0..15, as gguf-py's (qs >> [0, 4]) & 0x0F.
func (f *fn) nibbles16(qs codegen.Value) codegen.Value {
	return f.concat(int64(qs.Type.Rank()-1), f.andI8(qs, 0x0f), f.andI8(f.shrI8(qs, 4), 0x0f))
}

// bits32 expands the little-endian 32-bit word qh [..., 4] into [..., 32]
// values 0/1, bit j for element j.
func (f *fn) bits32(qh codegen.Value) codegen.Value {
	outer := qh.Type.Shape[:qh.Type.Rank()-1]
	col := f.reshape(qh, append(append([]int64{}, outer...), 4, 1)...)
	b := f.andI8(f.shrEach(col, []int64{0, 1, 2, 3, 4, 5, 6, 7}), 1) // [..., 4, 8, 1]: byte i, bit j
	return f.reshape(b, append(append([]int64{}, outer...), 32)...)
}

// scaleBlock broadcasts a per-block scale [..., nb] over blocks [..., nb, e].
func (f *fn) scaleBlock(s codegen.Value, t codegen.Type) codegen.Value {
	return f.broadcastLeading(s, t.WithElem("f32"))
}

func (f *fn) toF32(x codegen.Value) codegen.Value { return f.convert(x, "f32") }

// decodeQ8_0: blocks {f16 d; i8 q[32]}; d * q.
func decodeQ8_0(f *fn, b codegen.Value) codegen.Value {
	q := f.toF32(f.field(b, 2, 34))
	return f.mul(f.scaleBlock(f.f16At(b, 0), q.Type), q)
}

// decodeQ4_0: blocks {f16 d; u8 qs[16]}; d * (q - 8).
func decodeQ4_0(f *fn, b codegen.Value) codegen.Value {
	q := f.nibbles16(f.field(b, 2, 18))
	q = f.toF32(f.Op("stablehlo.subtract", q.Type, nil, q, f.constI8(8, q.Type)))
	return f.mul(f.scaleBlock(f.f16At(b, 0), q.Type), q)
}

// decodeQ4_1: blocks {f16 d, m; u8 qs[16]}; d * q + m.
func decodeQ4_1(f *fn, b codegen.Value) codegen.Value {
	q := f.toF32(f.nibbles16(f.field(b, 4, 20)))
	return f.add(f.mul(f.scaleBlock(f.f16At(b, 0), q.Type), q), f.scaleBlock(f.f16At(b, 2), q.Type))
}

// decodeQ5_0: blocks {f16 d; u32 qh; u8 qs[16]}; d * ((ql | qh << 4) - 16).
func decodeQ5_0(f *fn, b codegen.Value) codegen.Value {
	q := f.orI8(f.nibbles16(f.field(b, 6, 22)), f.shlI8(f.bits32(f.field(b, 2, 6)), 4))
	q = f.toF32(f.Op("stablehlo.subtract", q.Type, nil, q, f.constI8(16, q.Type)))
	return f.mul(f.scaleBlock(f.f16At(b, 0), q.Type), q)
}

// decodeQ5_1: blocks {f16 d, m; u32 qh; u8 qs[16]}; d * (ql | qh << 4) + m.
func decodeQ5_1(f *fn, b codegen.Value) codegen.Value {
	q := f.toF32(f.orI8(f.nibbles16(f.field(b, 8, 24)), f.shlI8(f.bits32(f.field(b, 4, 8)), 4)))
	return f.add(f.mul(f.scaleBlock(f.f16At(b, 0), q.Type), q), f.scaleBlock(f.f16At(b, 2), q.Type))
}

// scaleMinK4 unpacks the 12-byte K-quant scales [..., 12] into the 6-bit
// scales and mins of the 8 sub-blocks, [..., 8] each, as gguf-py's
// Q4_K.get_scale_min.
func (f *fn) scaleMinK4(s codegen.Value) (sc, mn codegen.Value) {
	d, m, md := f.field(s, 0, 4), f.field(s, 4, 8), f.field(s, 8, 12)
	last := int64(s.Type.Rank() - 1)
	sc = f.concat(last, f.andI8(d, 0x3f), f.orI8(f.andI8(md, 0x0f), f.andI8(f.shrI8(d, 2), 0x30)))
	mn = f.concat(last, f.andI8(m, 0x3f), f.orI8(f.shrI8(md, 4), f.andI8(f.shrI8(m, 2), 0x30)))
	return sc, mn
}

// kQuant finishes Q4_K and Q5_K: (d · sc) * q - dmin · m per 32-element
// sub-block; q [..., nb, 8, 32] i8.
func (f *fn) kQuant(b, q codegen.Value) codegen.Value {
	sc, mn := f.scaleMinK4(f.field(b, 4, 16)) // [r, nb, 8]
	qf := f.toF32(q)
	d := f.mul(f.broadcastLeading(f.f16At(b, 0), sc.Type.WithElem("f32")), f.toF32(sc))
	dm := f.mul(f.broadcastLeading(f.f16At(b, 2), mn.Type.WithElem("f32")), f.toF32(mn))
	w := f.sub(f.mul(f.broadcastLeading(d, qf.Type), qf), f.broadcastLeading(dm, qf.Type))
	sh := w.Type.Shape
	return f.reshape(w, sh[0], sh[1], 256)
}

// lowHigh unpacks chunks [..., c, 32] of nibbles into [..., 2c, 32]:
// sub-block 2i the low nibbles of chunk i, 2i+1 the high ones.
func (f *fn) lowHigh(q codegen.Value) codegen.Value {
	n := f.andI8(f.shrEach(q, []int64{0, 4}), 0x0f) // [..., c, 2, 32]
	sh := q.Type.Shape
	return f.reshape(n, append(append([]int64{}, sh[:len(sh)-2]...), 2*sh[len(sh)-2], 32)...)
}

// decodeQ4_K: super-blocks {f16 d, dmin; u8 scales[12]; u8 qs[128]}.
func decodeQ4_K(f *fn, b codegen.Value) codegen.Value {
	r, nb := b.Type.Shape[0], b.Type.Shape[1]
	return f.kQuant(b, f.lowHigh(f.reshape(f.field(b, 16, 144), r, nb, 4, 32)))
}

// decodeQ5_K: super-blocks {f16 d, dmin; u8 scales[12]; u8 qh[32]; u8 qs[128]};
// the 5th bit of sub-block i is bit i of qh.
func decodeQ5_K(f *fn, b codegen.Value) codegen.Value {
	r, nb := b.Type.Shape[0], b.Type.Shape[1]
	ql := f.lowHigh(f.reshape(f.field(b, 48, 176), r, nb, 4, 32))                                             // [r, nb, 8, 32]
	qh := f.andI8(f.shrEach(f.reshape(f.field(b, 16, 48), r, nb, 1, 32), []int64{0, 1, 2, 3, 4, 5, 6, 7}), 1) // [r, nb, 1, 8, 32]
	return f.kQuant(b, f.orI8(ql, f.shlI8(f.reshape(qh, r, nb, 8, 32), 4)))
}

// decodeQ6_K: super-blocks {u8 ql[128]; u8 qh[64]; i8 scales[16]; f16 d};
// groups of 16 with (d · sc) * ((ql | qh << 4) - 32).
func decodeQ6_K(f *fn, b codegen.Value) codegen.Value {
	r, nb := b.Type.Shape[0], b.Type.Shape[1]
	ql := f.andI8(f.shrEach(f.reshape(f.field(b, 0, 128), r, nb, 2, 64), []int64{0, 4}), 0x0f)      // [r, nb, 2, 2, 64]
	qh := f.andI8(f.shrEach(f.reshape(f.field(b, 128, 192), r, nb, 2, 32), []int64{0, 2, 4, 6}), 3) // [r, nb, 2, 4, 32]
	q := f.orI8(f.reshape(ql, r, nb, 8, 32), f.shlI8(f.reshape(qh, r, nb, 8, 32), 4))
	q = f.Op("stablehlo.subtract", q.Type, nil, q, f.constI8(32, q.Type))
	qf := f.toF32(f.reshape(q, r, nb, 16, 16))
	sc := f.toF32(f.field(b, 192, 208)) // [r, nb, 16]
	d := f.mul(f.broadcastLeading(f.f16At(b, 208), sc.Type), sc)
	return f.reshape(f.mul(f.broadcastLeading(d, qf.Type), qf), r, nb, 256)
}
