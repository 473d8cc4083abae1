package lower

import (
	"github.com/archc/archc/codegen"
)

// Thin typed wrappers over StableHLO ops used by the primitive lowerings.
// Each computes its result type; misuse records an error in the builder.

func (f *fn) binary(op string, x, y codegen.Value) codegen.Value {
	if x.Type.String() != y.Type.String() {
		f.Errorf("%s of %s and %s", op, x.Type, y.Type)
	}
	return f.Op(op, x.Type, nil, x, y)
}

func (f *fn) add(x, y codegen.Value) codegen.Value { return f.binary("stablehlo.add", x, y) }
func (f *fn) sub(x, y codegen.Value) codegen.Value { return f.binary("stablehlo.subtract", x, y) }
func (f *fn) mul(x, y codegen.Value) codegen.Value { return f.binary("stablehlo.multiply", x, y) }
func (f *fn) div(x, y codegen.Value) codegen.Value { return f.binary("stablehlo.divide", x, y) }

func (f *fn) unary(op string, x codegen.Value) codegen.Value { return f.Op(op, x.Type, nil, x) }

func (f *fn) convert(x codegen.Value, elem string) codegen.Value {
	return f.Op("stablehlo.convert", x.Type.With(x.Type.Shape...).WithElem(elem), nil, x)
}

func (f *fn) reshape(x codegen.Value, shape ...int64) codegen.Value {
	t := x.Type.With(shape...)
	if t.NumElements() != x.Type.NumElements() {
		f.Errorf("reshape %s to %v", x.Type, shape)
	}
	return f.Op("stablehlo.reshape", t, nil, x)
}

func (f *fn) transpose(x codegen.Value, perm ...int64) codegen.Value {
	shape := make([]int64, len(perm))
	for i, p := range perm {
		shape[i] = x.Type.Shape[p]
	}
	return f.Op("stablehlo.transpose", x.Type.With(shape...), codegen.Attrs{codegen.A("permutation", codegen.I64s(perm))}, x)
}

// broadcastDims broadcasts x into type t, x's dimension i landing on dims[i].
// A t with a dynamic dimension (the context length) gets
// dynamic_broadcast_in_dim with t's run-time shape.
func (f *fn) broadcastDims(x codegen.Value, t codegen.Type, dims ...int64) codegen.Value {
	if dims == nil {
		dims = []int64{}
	}
	rt := t.With(t.Shape...).WithElem(x.Type.Elem)
	if t.IsDynamic() {
		attrs := codegen.Attrs{codegen.A("broadcast_dimensions", codegen.I64s(dims))}
		var same []int64 // operand dims of run-time size: the result's, not broadcast
		for i, d := range x.Type.Shape {
			if d == codegen.Dynamic {
				same = append(same, int64(i))
			}
		}
		if same != nil {
			attrs = append(attrs, codegen.A("known_nonexpanding_dimensions", codegen.I64s(same)))
		}
		return f.Op("stablehlo.dynamic_broadcast_in_dim", rt, attrs, x, f.shapeOf(t))
	}
	return f.Op("stablehlo.broadcast_in_dim", rt, codegen.Attrs{codegen.A("broadcast_dimensions", codegen.I64s(dims))}, x)
}

// shapeOf returns t's run-time shape as a [rank] i32 tensor, its dynamic
// dimension being the context length f.context (once per function and
// shape).
func (f *fn) shapeOf(t codegen.Type) codegen.Value {
	key := "shape:" + t.With(t.Shape...).WithElem("i32").String()
	if v, ok := f.memo[key]; ok {
		return v
	}
	parts := make([]codegen.Value, len(t.Shape))
	for i, d := range t.Shape {
		if d == codegen.Dynamic {
			parts[i] = f.reshape(f.context, 1)
		} else {
			parts[i] = f.Op("stablehlo.constant", codegen.T("i32", 1), codegen.Attrs{codegen.A("value", codegen.DenseInts{Type: codegen.T("i32", 1), Values: []int64{d}})})
		}
	}
	v := f.concat(0, parts...)
	f.memo[key] = v
	return v
}

// broadcast broadcasts a rank-0 value to t's shape.
func (f *fn) broadcast(x codegen.Value, t codegen.Type) codegen.Value { return f.broadcastDims(x, t) }

// broadcastLeading broadcasts x over leading dimensions of t (x's dims are t's innermost).
func (f *fn) broadcastTrailing(x codegen.Value, t codegen.Type) codegen.Value {
	off := int64(t.Rank() - x.Type.Rank())
	dims := make([]int64, x.Type.Rank())
	for i := range dims {
		dims[i] = off + int64(i)
	}
	return f.broadcastDims(x, t, dims...)
}

// broadcastLeading broadcasts x over trailing dimensions of t (x's dims are t's outermost).
func (f *fn) broadcastLeading(x codegen.Value, t codegen.Type) codegen.Value {
	dims := make([]int64, x.Type.Rank())
	for i := range dims {
		dims[i] = int64(i)
	}
	return f.broadcastDims(x, t, dims...)
}

func (f *fn) constF32(v float64) codegen.Value {
	return f.Op("stablehlo.constant", codegen.T("f32"), codegen.Attrs{codegen.A("value", codegen.DenseFloats{Type: codegen.T("f32"), Values: []float64{v}})})
}

func (f *fn) constI32(v int64) codegen.Value {
	return f.Op("stablehlo.constant", codegen.T("i32"), codegen.Attrs{codegen.A("value", codegen.DenseInts{Type: codegen.T("i32"), Values: []int64{v}})})
}

// constF32s is a rank-1 f32 constant.
func (f *fn) constF32s(vs []float64) codegen.Value {
	t := codegen.T("f32", int64(len(vs)))
	return f.Op("stablehlo.constant", t, codegen.Attrs{codegen.A("value", codegen.DenseFloats{Type: t, Values: vs, List: true})})
}

// splat broadcasts an f32 scalar constant to t.
func (f *fn) splat(v float64, t codegen.Type) codegen.Value { return f.broadcast(f.constF32(v), t) }

// slice is a static slice with unit strides.
func (f *fn) slice(x codegen.Value, start, limit []int64) codegen.Value {
	shape := make([]int64, len(start))
	strides := make([]int64, len(start))
	for i := range start {
		shape[i] = limit[i] - start[i]
		strides[i] = 1
	}
	attrs := codegen.Attrs{codegen.A("start_indices", codegen.I64s(start)), codegen.A("limit_indices", codegen.I64s(limit)), codegen.A("strides", codegen.I64s(strides))}
	return f.Op("stablehlo.slice", x.Type.With(shape...), attrs, x)
}

// sliceDim slices dimension d of x to [lo, hi).
func (f *fn) sliceDim(x codegen.Value, d int, lo, hi int64) codegen.Value {
	start := make([]int64, x.Type.Rank())
	limit := append([]int64(nil), x.Type.Shape...)
	start[d], limit[d] = lo, hi
	return f.slice(x, start, limit)
}

func (f *fn) concat(d int64, xs ...codegen.Value) codegen.Value {
	shape := append([]int64(nil), xs[0].Type.Shape...)
	for _, x := range xs[1:] {
		shape[d] += x.Type.Shape[d]
	}
	return f.Op("stablehlo.concatenate", xs[0].Type.With(shape...), codegen.Attrs{codegen.A("dimension", codegen.Int{V: d, Type: "i64"})}, xs...)
}

// dot is stablehlo.dot_general; the result is batch dims, then x's free
// dims, then y's free dims.
func (f *fn) dot(x, y codegen.Value, xBatch, yBatch, xContract, yContract []int64) codegen.Value {
	var shape []int64
	for _, d := range xBatch {
		shape = append(shape, x.Type.Shape[d])
	}
	for i, d := range x.Type.Shape {
		if !in(int64(i), xBatch) && !in(int64(i), xContract) {
			shape = append(shape, d)
		}
	}
	for i, d := range y.Type.Shape {
		if !in(int64(i), yBatch) && !in(int64(i), yContract) {
			shape = append(shape, d)
		}
	}
	attrs := codegen.Attrs{codegen.A("dot_dimension_numbers", codegen.Struct{Name: "stablehlo.dot", Fields: codegen.Attrs{
		codegen.A("lhs_batching_dimensions", codegen.Ints(xBatch)), codegen.A("rhs_batching_dimensions", codegen.Ints(yBatch)),
		codegen.A("lhs_contracting_dimensions", codegen.Ints(xContract)), codegen.A("rhs_contracting_dimensions", codegen.Ints(yContract)),
	}})}
	return f.Op("stablehlo.dot_general", x.Type.With(shape...), attrs, x, y)
}

// compare is stablehlo.compare (SIGNED for integers, FLOAT for floats).
func (f *fn) compare(dir string, x, y codegen.Value) codegen.Value {
	kind := "FLOAT"
	if x.Type.Elem[0] == 'i' {
		kind = "SIGNED"
	}
	return f.compareAs(dir, kind, x, y)
}

// barrier is stablehlo.optimization_barrier of one value: the compiler
// may not fuse or move computation across it.
func (f *fn) barrier(x codegen.Value) codegen.Value {
	return f.Op("stablehlo.optimization_barrier", x.Type, nil, x)
}

// compareAs is stablehlo.compare with an explicit comparison type
// ("SIGNED", "UNSIGNED", "FLOAT").
func (f *fn) compareAs(dir, kind string, x, y codegen.Value) codegen.Value {
	attrs := codegen.Attrs{
		codegen.A("comparison_direction", codegen.Enum{Dialect: "stablehlo", Kind: "comparison_direction", Value: dir}),
		codegen.A("compare_type", codegen.Enum{Dialect: "stablehlo", Kind: "comparison_type", Value: kind}),
	}
	return f.Op("stablehlo.compare", x.Type.WithElem("i1"), attrs, x, y)
}

func (f *fn) selectOp(pred, x, y codegen.Value) codegen.Value {
	return f.Op("stablehlo.select", x.Type, nil, pred, x, y)
}

func (f *fn) iota(t codegen.Type, dim int64) codegen.Value {
	if t.IsDynamic() {
		return f.Op("stablehlo.dynamic_iota", t, codegen.Attrs{codegen.A("iota_dimension", codegen.Int{V: dim, Type: "i64"})}, f.shapeOf(t))
	}
	return f.Op("stablehlo.iota", t, codegen.Attrs{codegen.A("iota_dimension", codegen.Int{V: dim, Type: "i64"})})
}

// reduceLast reduces x's innermost dimension with body ("stablehlo.add" or
// "stablehlo.maximum") from init.
func (f *fn) reduceLast(x codegen.Value, body string, init float64) codegen.Value {
	return f.Reduce(x, f.constF32(init), body, int64(x.Type.Rank()-1))
}

func in(x int64, xs []int64) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// gatherAttrs are the attributes of a stablehlo.gather of whole slices of
// a stacked operand's first dimension (collapsed) at rank-1 indices:
// offset dimensions offset, index_vector_dim ivd, slice sizes sizes.
func gatherAttrs(offset codegen.Ints, ivd int64, sizes codegen.I64s) codegen.Attrs {
	return codegen.Attrs{
		codegen.A("dimension_numbers", codegen.Struct{Name: "stablehlo.gather", Fields: codegen.Attrs{
			codegen.A("offset_dims", offset), codegen.A("collapsed_slice_dims", codegen.Ints{0}),
			codegen.A("start_index_map", codegen.Ints{0}), codegen.A("index_vector_dim", codegen.Int{V: ivd}),
		}}),
		codegen.A("slice_sizes", sizes),
	}
}
