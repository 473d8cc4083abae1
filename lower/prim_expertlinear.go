package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// expert_linear(x, weights [..., E], weight [E, out, in], out, reduce,
// top_k): one routed projection per slot, JetMoE's mixture of attention
// heads (JetMoeMoA, models/jetmoe/modeling_jetmoe.py). A token's slots are
// the k experts with a nonzero weight, in expert-index order (expertSlots;
// k the top_k of the route call giving weights, or top_k). map (reduce
// false, JetMoeMoA.map): x [..., in] → [..., k·out], slot j holding
// W_{e_j} · x (JetMoeParallelExperts: F.linear with weight[e]); reduce
// (JetMoeMoA.reduce without its bias): x [..., k·in], one input per slot,
// → [..., out] = Σ_j weights[e_j] · W_{e_j} · x_j, added in expert-index
// order as HF's index_add_. HF orders a token's slots by router score;
// the slots' projections meet again only in reduce's sum (each attention
// head is its own), so the order changes nothing but that sum's rounding,
// and HF's sum runs in expert-index order too.
//
// Two lowerings, as experts: when T·k < E (decode) the k·T expert matrices
// are gathered; otherwise every expert's projection is one dot_general
// (map: [T, E, out], each slot selecting its expert's row exactly; reduce:
// the weighted slot inputs scattered to their experts, [T, E, in], then
// one contraction over experts and inputs).
func inferExpertLinear(n *ir.Node, a *ExpertLinearAttrs) error {
	x, w := n.Args[0].Type, n.Args[1].Type
	e, in, out := lastDim(w), lastDim(x), a.Out
	if e <= 0 || in <= 0 || out <= 0 {
		return fmt.Errorf("needs concrete sizes, got x %s, weights %s and out %d", x, w, out)
	}
	if len(x.Shape) != len(w.Shape) || !x.Shape[:len(x.Shape)-1].Equal(w.Shape[:len(w.Shape)-1]) {
		return fmt.Errorf("x %s and weights %s must have the same leading dimensions", x, w)
	}
	switch {
	case a.TopK != nil:
		a.Slots = *a.TopK
	default:
		r, ok := n.Args[1].Decoded.(*RouteAttrs)
		if !ok {
			return fmt.Errorf("weights do not come from route: give top_k (the slots per token)")
		}
		a.Slots = r.Router.topK
	}
	k := a.Slots
	if k < 1 || k > e {
		return fmt.Errorf("top_k %d must be in [1, %d] (the number of experts)", k, e)
	}
	shape := append(ir.Shape{}, x.Shape...)
	if a.Reduce {
		if in%k != 0 {
			return fmt.Errorf("reduce: x's last dimension %d must hold top_k %d equal slot inputs", in, k)
		}
		in /= k
		shape[len(shape)-1] = ir.Dim(out)
	} else {
		shape[len(shape)-1] = ir.Dim(k * out)
	}
	n.Weights = []ir.Weight{{Name: n.Module + ".weight", Shape: []int64{e, out, in}}}
	n.Type = ir.Type{Shape: shape, DType: ir.F32}
	return nil
}

func lowerExpertLinear(f *fn, n *ir.Node, a *ExpertLinearAttrs) codegen.Value {
	x, w := f.arg(n, 0), f.arg(n, 1)
	res := f.ty(n.Type)
	e, k, out := lastDim2(w), a.Slots, a.Out
	t := w.Type.NumElements() / e
	in := lastDim2(x)
	if a.Reduce {
		in /= k
	}
	w = f.reshape(w, t, e)
	idx, vals := f.expertSlots(w, k) // [T, k] i32 ascending, [T, k] f32
	name := n.Weights[0].Name
	if t*k < e { // the used experts' matrices, gathered: [T·k, out, in]
		ws := f.gatherExperts(name, f.reshape(idx, t*k))
		var xs codegen.Value
		if a.Reduce {
			xs = f.reshape(x, t*k, in)
		} else {
			xs = f.reshape(f.broadcastDims(f.reshape(x, t, in), codegen.T("f32", t, k, in), 0, 2), t*k, in)
		}
		y := f.reshape(f.dot(xs, ws, []int64{0}, []int64{0}, []int64{1}, []int64{2}), t, k, out)
		if !a.Reduce {
			return f.reshape(y, res.Shape...)
		}
		y = f.mul(y, f.broadcastDims(vals, y.Type, 0, 1))
		acc := f.splat(0, codegen.T("f32", t, out))
		for j := int64(0); j < k; j++ {
			acc = f.add(acc, f.reshape(f.sliceDim(y, 1, j, j+1), t, out))
		}
		return f.reshape(acc, res.Shape...)
	}
	wf := f.weight(name) // [E, out, in]
	iota := f.iota(codegen.T("i32", t, e), 1)
	slot := func(j int64) codegen.Value { // [T, E] i1: the expert of slot j
		return f.compare("EQ", iota, f.broadcastLeading(f.reshape(f.sliceDim(idx, 1, j, j+1), t), iota.Type))
	}
	if !a.Reduce {
		all := f.dot(f.reshape(x, t, in), wf, nil, nil, []int64{1}, []int64{2}) // [T, E, out]
		var ys []codegen.Value
		for j := int64(0); j < k; j++ {
			at := f.broadcastDims(slot(j), all.Type.WithElem("i1"), 0, 1)
			ys = append(ys, f.Reduce(f.selectOp(at, all, f.splat(0, all.Type)), f.constF32(0), "stablehlo.add", 1))
		}
		return f.reshape(f.concat(1, ys...), res.Shape...)
	}
	xs := f.reshape(x, t, k, in)
	z := f.splat(0, codegen.T("f32", t, e, in)) // slot inputs times their weights, at their experts
	for j := int64(0); j < k; j++ {
		xj := f.mul(f.reshape(f.sliceDim(xs, 1, j, j+1), t, in), f.broadcastDims(f.reshape(f.sliceDim(vals, 1, j, j+1), t), codegen.T("f32", t, in), 0))
		at := f.broadcastDims(slot(j), z.Type.WithElem("i1"), 0, 1)
		z = f.selectOp(at, f.broadcastDims(xj, z.Type, 0, 2), z)
	}
	y := f.dot(z, wf, nil, nil, []int64{1, 2}, []int64{0, 2}) // [T, out]
	return f.reshape(y, res.Shape...)
}
