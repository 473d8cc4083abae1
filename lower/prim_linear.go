package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// linear(x [..., in], weight [out, in], out, bias: bool) → [..., out]:
// x·Wᵀ + b as HF nn.Linear; the bias tensor is <module>.bias [out]. A
// weight stored in a format with a hand-written kernel (Options.Kernels)
// is multiplied by that kernel, in its stored bytes; otherwise it is decoded
// to f32 in the graph and multiplied by stablehlo.dot_general. With layout
// "transposed" the weight is [in, out] and out = x·W + b, as
// transformers.pytorch_utils.Conv1D (GPT-2) computes it (addmm); such a
// weight always goes through dot_general. With layout "parameter" the
// weight is the tensor at the module path itself (an nn.Parameter, no
// .weight), [in, out], and out = x·W, as torch.matmul(x, W) in
// Gemma3MultiModalProjector (mm_input_projection_weight); no bias.
func inferLinear(n *ir.Node, a *LinearAttrs) error {
	out, bias := a.Out, a.Bias
	x := n.Args[0].Type
	in := lastDim(x)
	if in <= 0 || out <= 0 {
		return fmt.Errorf("needs concrete sizes, got x %s and out %d", x, out)
	}
	shape := []int64{out, in}
	name := n.Module + ".weight"
	switch a.Layout {
	case LinearLayoutTransposed:
		shape = []int64{in, out}
	case LinearLayoutParameter:
		if bias {
			return fmt.Errorf("layout \"parameter\" takes no bias (the module path is the weight tensor itself)")
		}
		shape, name = []int64{in, out}, n.Module
	}
	n.Weights = []ir.Weight{{Name: name, Shape: shape}}
	if bias {
		n.Weights = append(n.Weights, ir.Weight{Name: n.Module + ".bias", Shape: []int64{out}})
	}
	outShape := append(ir.Shape{}, x.Shape...)
	outShape[len(outShape)-1] = ir.Dim(out)
	n.Type = ir.Type{Shape: outShape, DType: ir.F32}
	return nil
}

func lowerLinear(f *fn, n *ir.Node, a *LinearAttrs) codegen.Value {
	x := f.arg(n, 0)
	if a.Layout == LinearLayoutTransposed || a.Layout == LinearLayoutParameter { // Conv1D, a parameter: x · W, W [in, out]
		y := f.dot(x, f.weight(n.Weights[0].Name), nil, nil, []int64{int64(x.Type.Rank() - 1)}, []int64{0})
		if len(n.Weights) > 1 {
			y = f.add(y, f.broadcastTrailing(f.weight(n.Weights[1].Name), y.Type))
		}
		return y
	}
	y, ok := f.groupedLinear(n, x)
	if !ok {
		y, ok = f.kernelLinear(x, n.Weights[0].Name)
	}
	if !ok {
		y = f.dot(x, f.weight(n.Weights[0].Name), nil, nil, []int64{int64(x.Type.Rank() - 1)}, []int64{1})
	}
	if len(n.Weights) > 1 {
		y = f.add(y, f.broadcastTrailing(f.weight(n.Weights[1].Name), y.Type))
	}
	return y
}

// heads(x [..., n·d], n) → [..., n, d]: splits the last dimension into heads.
func inferHeads(n *ir.Node, a *HeadsAttrs) error {
	h := a.N
	x := n.Args[0].Type
	last := lastDim(x)
	if h <= 0 || last <= 0 || last%h != 0 {
		return fmt.Errorf("cannot split %s into %d heads", x, h)
	}
	shape := append(ir.Shape{}, x.Shape[:len(x.Shape)-1]...)
	n.Type = ir.Type{Shape: append(shape, ir.Dim(h), ir.Dim(last/h)), DType: x.DType}
	return nil
}

func lowerHeads(f *fn, n *ir.Node, _ *HeadsAttrs) codegen.Value {
	t := f.ty(n.Type)
	return f.reshape(f.arg(n, 0), t.Shape...)
}

// merge_heads(x [..., n, d]) → [..., n·d]: heads undone, as HF's
// reshape(*input_shape, -1) after a per-head split (Qwen3NextAttention's
// gate, the per-key-head groups of Qwen3-Next's in_proj_qkvz).
func inferMergeHeads(n *ir.Node) error {
	x := n.Args[0].Type
	r := len(x.Shape)
	if r < 3 || x.Shape[r-1] <= 0 || x.Shape[r-2] <= 0 {
		return fmt.Errorf("x must be [..., n, d] with concrete n and d, got %s", x)
	}
	shape := append(ir.Shape{}, x.Shape[:r-2]...)
	n.Type = ir.Type{Shape: append(shape, x.Shape[r-2]*x.Shape[r-1]), DType: x.DType}
	return nil
}

func lowerMergeHeads(f *fn, n *ir.Node) codegen.Value {
	return f.reshape(f.arg(n, 0), f.ty(n.Type).Shape...)
}

// slice(x [..., n], start, stop) → [..., stop - start]: x[..., start:stop],
// how HF splits a fused projection's output (Phi-3's qkv_proj rows
// [q | k | v], gate_up_proj's [gate | up] by chunk(2, dim=-1)).
func inferSlice(n *ir.Node, a *SliceAttrs) error {
	start, stop := a.Start, a.Stop
	x := n.Args[0].Type
	last := lastDim(x)
	if last <= 0 || start < 0 || stop <= start || stop > last {
		return fmt.Errorf("cannot take [%d:%d] of the last dimension of %s", start, stop, x)
	}
	shape := append(ir.Shape{}, x.Shape...)
	shape[len(shape)-1] = ir.Dim(stop - start)
	n.Type = ir.Type{Shape: shape, DType: x.DType}
	return nil
}

func lowerSlice(f *fn, n *ir.Node, a *SliceAttrs) codegen.Value {
	x := f.arg(n, 0)
	return f.sliceDim(x, x.Type.Rank()-1, a.Start, a.Stop)
}

// concat(x [..., a], y [..., b]) → [..., a + b]: torch.cat((x, y), dim=-1).
// The other dimensions must agree, except that a dimension of size 1 in one
// operand stretches to the other's (torch's expand before the cat: MLA's
// k_rot, one head shared by every head's k_nope in DeepseekV2Attention).
func inferConcat(n *ir.Node) error {
	x, y := n.Args[0].Type, n.Args[1].Type
	if len(x.Shape) != len(y.Shape) || len(x.Shape) == 0 || x.DType != y.DType {
		return fmt.Errorf("cannot concatenate %s and %s (same rank and dtype needed)", x, y)
	}
	shape := append(ir.Shape{}, x.Shape...)
	for i := range shape[:len(shape)-1] {
		switch a, b := x.Shape[i], y.Shape[i]; {
		case a == b:
		case a == 1:
			shape[i] = b
		case b != 1:
			return fmt.Errorf("cannot concatenate %s and %s: dimension %d differs and neither is 1", x, y, i)
		}
	}
	shape[len(shape)-1] = ir.Dim(lastDim(x) + lastDim(y))
	n.Type = ir.Type{Shape: shape, DType: x.DType}
	return nil
}

func lowerConcat(f *fn, n *ir.Node) codegen.Value {
	t := f.ty(n.Type)
	r := int64(t.Rank())
	parts := []codegen.Value{f.arg(n, 0), f.arg(n, 1)}
	for i, p := range parts {
		want := append(append([]int64{}, t.Shape[:r-1]...), p.Type.Shape[r-1])
		if p.Type.String() != p.Type.With(want...).String() {
			dims := make([]int64, r)
			for d := range dims {
				dims[d] = int64(d)
			}
			parts[i] = f.broadcastDims(p, p.Type.With(want...), dims...)
		}
	}
	return f.concat(r-1, parts...)
}

// add_bias(x [..., d], bias) → [..., d]: x + b, b the tensor at the bias
// path itself [d], a bare bias parameter added to a module's output
// (JetMoeMoE and JetMoeMoA: layer_output + self.bias).
func inferAddBias(n *ir.Node) error {
	d := lastDim(n.Args[0].Type)
	if d <= 0 {
		return fmt.Errorf("x must end in a concrete size, got %s", n.Args[0].Type)
	}
	n.Weights = []ir.Weight{{Name: n.Module, Shape: []int64{d}}}
	return inferSame(n)
}

func lowerAddBias(f *fn, n *ir.Node) codegen.Value {
	x := f.arg(n, 0)
	return f.add(x, f.broadcastTrailing(f.weight(n.Weights[0].Name), x.Type))
}
