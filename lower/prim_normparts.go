package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// The pieces a norm the table has no row for is written from in .arch:
// mean over the last axis, rsqrt and sqrt, tensor / tensor (div, a row
// over lowerBinary) and affine, the weight (and bias) a norm applies. With
// them NemotronLayerNorm1p, F.layer_norm(x, weight + 1, bias), is
//
//	d = x - mean(x, -1)
//	v = mean(d * d, -1)
//	affine(d * rsqrt(v + full_like(v, eps)), weight, offset: 1.0, bias: true)
//
// all in f32, as the norm primitives compute.

// mean(x [..., d], axis) → [..., 1], f32: the mean over the last axis,
// kept as a size-1 dimension so that it broadcasts against x
// (torch.mean(x, -1, keepdim=True)). axis must be -1 (or rank-1).
func inferMean(n *ir.Node, a *MeanAttrs) error {
	x := n.Args[0].Type
	axis := a.Axis
	if r := int64(len(x.Shape)); axis != -1 && axis != r-1 {
		return fmt.Errorf("axis must be -1 (the last of x's %d), got %d: mean reduces the last axis only", r, axis)
	}
	if x.DType != ir.F32 {
		return fmt.Errorf("x must be f32, got %s", x)
	}
	if lastDim(x) <= 0 {
		return fmt.Errorf("x must end in a concrete dimension, got %s", x)
	}
	shape := append(ir.Shape{}, x.Shape...)
	shape[len(shape)-1] = 1
	n.Type = ir.Type{Shape: shape, DType: ir.F32}
	return nil
}

func lowerMean(f *fn, n *ir.Node, _ *MeanAttrs) codegen.Value {
	x := f.arg(n, 0)
	d := x.Type.Shape[x.Type.Rank()-1]
	sum := f.reduceLast(x, "stablehlo.add", 0)
	mean := f.div(sum, f.splat(float64(d), sum.Type))
	return f.reshape(mean, f.ty(n.Type).Shape...)
}

// inferUnaryF32: an f32 tensor → the same type (rsqrt, sqrt).
func inferUnaryF32(n *ir.Node) error {
	if x := n.Args[0].Type; x.DType != ir.F32 {
		return fmt.Errorf("x must be f32, got %s", x)
	}
	return inferSame(n)
}

// lowerUnaryOp lowers an elementwise primitive to one StableHLO op.
func lowerUnaryOp(op string) func(*fn, *ir.Node) codegen.Value {
	return func(f *fn, n *ir.Node) codegen.Value { return f.unary(op, f.arg(n, 0)) }
}

// affine(x [..., d], weight, offset, bias) → [..., d]: x · (w + offset)
// (+ b), w = <weight>.weight [d] and, with bias: true, b = <weight>.bias
// [d], over the last dimension, in f32: the elementwise affine of a norm
// (torch.nn.LayerNorm's weight and bias; NemotronLayerNorm1p's weight + 1
// with offset 1).
func inferAffine(n *ir.Node, a *AffineAttrs) error {
	bias := a.Bias
	x := n.Args[0].Type
	d := lastDim(x)
	if d <= 0 || x.DType != ir.F32 {
		return fmt.Errorf("x must be f32 and end in a concrete dimension, got %s", x)
	}
	n.Weights = []ir.Weight{{Name: n.Module + ".weight", Shape: []int64{d}}}
	if bias {
		n.Weights = append(n.Weights, ir.Weight{Name: n.Module + ".bias", Shape: []int64{d}})
	}
	n.Type = x
	return nil
}

func lowerAffine(f *fn, n *ir.Node, a *AffineAttrs) codegen.Value {
	offset := a.Offset
	x := f.arg(n, 0)
	w := f.weight(n.Weights[0].Name)
	if offset != 0 {
		w = f.add(w, f.splat(offset, w.Type))
	}
	out := f.mul(x, f.broadcastTrailing(w, x.Type))
	if len(n.Weights) > 1 {
		out = f.add(out, f.broadcastTrailing(f.weight(n.Weights[1].Name), x.Type))
	}
	return out
}
