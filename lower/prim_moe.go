package lower

import (
	"fmt"
	"math"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// Mixture of experts, as two primitives: route turns router logits into
// dense routing weights (zero for the experts a token does not use), and
// experts applies the expert MLPs a token uses, weighted. Keeping the
// routing weights dense ([..., experts]) lets a family combine them with
// plain arithmetic and keeps both primitives small; experts recovers the
// selected indices from the weights' nonzero pattern (see expertSlots).

// route(logits [..., E], top_k, softmax, norm, scale) → [..., E] f32, as
// HF's TopKRouter modules compute it, in f32:
//   - softmax "before" (MixtralTopKRouter, Qwen2MoeTopKRouter,
//     OlmoeTopKRouter): p = softmax(logits); keep torch.topk(p, k);
//   - softmax "after" (GraniteMoeTopKRouter): keep torch.topk(logits, k),
//     then softmax over those k values;
//
// then norm divides the kept values by their sum (norm_topk_prob) and scale
// multiplies them (routed_scaling_factor). Ties go to the lower expert
// index, as torch.topk orders them.
func inferRoute(n *ir.Node) error {
	k, err := intAttr(n, "top_k")
	if err != nil {
		return err
	}
	if _, err := routeMode(n); err != nil {
		return err
	}
	if _, err := boolAttr(n, "norm"); err != nil {
		return err
	}
	if _, err := floatAttr(n, "scale", 1); err != nil {
		return err
	}
	x := n.Args[0].Type
	e := lastDim(x)
	if e <= 0 {
		return fmt.Errorf("logits must end in a concrete number of experts, got %s", x)
	}
	if k < 1 || k > e {
		return fmt.Errorf("top_k %d must be in [1, %d] (the number of experts)", k, e)
	}
	n.Type = ir.Type{Shape: x.Shape, DType: ir.F32}
	return nil
}

func routeMode(n *ir.Node) (string, error) {
	switch v := n.Attrs["softmax"].(type) {
	case nil:
		return "before", nil
	case string:
		if v == "before" || v == "after" {
			return v, nil
		}
	}
	return "", fmt.Errorf(`softmax must be "before" (softmax over all experts, then top_k) or "after" (top_k, then softmax over them), got %v`, n.Attrs["softmax"])
}

func lowerRoute(f *fn, n *ir.Node) codegen.Value {
	k, _ := intAttr(n, "top_k")
	mode, _ := routeMode(n)
	norm, _ := boolAttr(n, "norm")
	scale, _ := floatAttr(n, "scale", 1)
	x := f.arg(n, 0)
	out := x.Type
	e := lastDim2(x)
	x = f.reshape(x, x.Type.NumElements()/e, e)
	if mode == "before" {
		// The barrier keeps IREE 3.13 from fusing the top-k selection's
		// integer ops into the softmax dispatch, which it then fails to
		// compile ("vector.store ... restricted to workgroup distributed
		// contexts").
		x = f.barrier(f.softmaxLast(x))
	}
	idx, vals := f.topK(x, k)
	if mode == "after" {
		vals = f.softmaxLast(vals)
	}
	if norm {
		s := f.reduceLast(vals, "stablehlo.add", 0)
		vals = f.div(vals, f.broadcastLeading(s, vals.Type))
	}
	if scale != 1 {
		vals = f.mul(vals, f.splat(scale, vals.Type))
	}
	return f.reshape(f.scatterDense(idx, vals, e), out.Shape...)
}

func lastDim2(x codegen.Value) int64 { return x.Type.Shape[x.Type.Rank()-1] }

// topK returns the k largest entries of each row of x [T, E] f32 and their
// indices, largest first, a tie going to the lower index (torch.topk's
// order): idx [T, k] i32, vals [T, k] f32. It takes k passes of max, the
// lowest index attaining it, and masking that entry.
func (f *fn) topK(x codegen.Value, k int64) (idx, vals codegen.Value) {
	t, e := x.Type.Shape[0], x.Type.Shape[1]
	iota := f.iota(codegen.T("i32", t, e), 1)
	var is, vs []codegen.Value
	for j := int64(0); j < k; j++ {
		m := f.reduceLast(x, "stablehlo.maximum", math.Inf(-1))
		at := f.compare("EQ", x, f.broadcastLeading(m, x.Type))
		i := f.Reduce(f.selectOp(at, iota, f.broadcast(f.constI32(e), iota.Type)), f.constI32(e), "stablehlo.minimum", 1)
		x = f.selectOp(f.compare("EQ", iota, f.broadcastLeading(i, iota.Type)), f.splat(math.Inf(-1), x.Type), x)
		is, vs = append(is, f.reshape(i, t, 1)), append(vs, f.reshape(m, t, 1))
	}
	return f.concat(1, is...), f.concat(1, vs...)
}

// scatterDense places vals [T, k] at columns idx [T, k] (distinct per row)
// of a zero [T, e] matrix; each entry is one value plus zeros, so exact.
func (f *fn) scatterDense(idx, vals codegen.Value, e int64) codegen.Value {
	t, k := idx.Type.Shape[0], idx.Type.Shape[1]
	dense := codegen.T("f32", t, e)
	iota := f.iota(codegen.T("i32", t, e), 1)
	out := f.splat(0, dense)
	for j := int64(0); j < k; j++ {
		at := f.compare("EQ", iota, f.broadcastLeading(f.reshape(f.sliceDim(idx, 1, j, j+1), t), iota.Type))
		out = f.selectOp(at, f.broadcastLeading(f.reshape(f.sliceDim(vals, 1, j, j+1), t), dense), out)
	}
	return out
}

// experts(x [..., H], weights [..., E], experts module, intermediate, act,
// gate, up, down, gate_up) → [..., H]: Σ_e weights[e] · down_e(act(gate_e
// x) · up_e x) over the experts with a nonzero weight, as HF's Experts
// modules (MixtralExperts.forward, experts_implementation "eager"): each
// used expert's output times its weight, added into zeros in expert-index
// order. The weights are stacked tensors <experts>.NAME.weight [E, rows,
// cols]; a checkpoint that stores one tensor per expert
// (<experts>.<e>.NAME.weight) has them stacked at load (ir.Weight.Parts).
//
// Two lowerings, equal in value: when the weights come from route with
// top_k k and the call's tokens T satisfy T·k < E (decode), only the k
// experts of each token are gathered and computed (sparse dispatch: the
// cost follows k, not E); otherwise (prefill, large batches) every expert
// runs on every token and the weights, zero for unused experts, select.
func inferExperts(n *ir.Node) error {
	inter, err := intAttr(n, "intermediate")
	if err != nil {
		return err
	}
	act := "silu"
	if v, ok := n.Attrs["act"]; ok && v != nil {
		if act, ok = v.(string); !ok {
			return fmt.Errorf("act must be an activation name (string), got %v", v)
		}
	}
	if _, ok := activations[act]; !ok {
		return fmt.Errorf("activation %q is not supported", act)
	}
	names, err := expertNames(n)
	if err != nil {
		return err
	}
	if v, ok := n.Attrs["top_k"]; ok && v != nil {
		if k, isInt := v.(int64); !isInt || k < 1 {
			return fmt.Errorf("top_k must be a positive int, got %v", v)
		}
	}
	x, w := n.Args[0].Type, n.Args[1].Type
	h, e := lastDim(x), lastDim(w)
	if h <= 0 || e <= 0 || inter <= 0 {
		return fmt.Errorf("needs concrete sizes, got x %s, weights %s and intermediate %d", x, w, inter)
	}
	if len(x.Shape) != len(w.Shape) {
		return fmt.Errorf("x %s and weights %s must have the same leading dimensions", x, w)
	}
	for i := range x.Shape[:len(x.Shape)-1] {
		if x.Shape[i] != w.Shape[i] {
			return fmt.Errorf("x %s and weights %s must have the same leading dimensions", x, w)
		}
	}
	stacked := func(name string, rows, cols int64) ir.Weight {
		wt := ir.Weight{Name: n.Module + "." + name + ".weight", Shape: []int64{e, rows, cols}}
		for i := int64(0); i < e; i++ {
			wt.Parts = append(wt.Parts, fmt.Sprintf("%s.%d.%s.weight", n.Module, i, name))
		}
		return wt
	}
	if names.gateUp != "" {
		n.Weights = []ir.Weight{stacked(names.gateUp, 2*inter, h)}
	} else {
		n.Weights = []ir.Weight{stacked(names.gate, inter, h), stacked(names.up, inter, h)}
	}
	n.Weights = append(n.Weights, stacked(names.down, h, inter))
	n.Type = ir.Type{Shape: x.Shape, DType: ir.F32}
	return nil
}

type expertNameSet struct{ gate, up, down, gateUp string }

func expertNames(n *ir.Node) (expertNameSet, error) {
	s := expertNameSet{gate: "gate_proj", up: "up_proj", down: "down_proj"}
	for _, a := range []struct {
		key string
		dst *string
	}{{"gate", &s.gate}, {"up", &s.up}, {"down", &s.down}, {"gate_up", &s.gateUp}} {
		switch v := n.Attrs[a.key].(type) {
		case nil:
		case string:
			if v == "" {
				return s, fmt.Errorf("%s must be a tensor name, got an empty string", a.key)
			}
			*a.dst = v
		default:
			return s, fmt.Errorf("%s must be a tensor name (string), got %v", a.key, v)
		}
	}
	return s, nil
}

func lowerExperts(f *fn, n *ir.Node) codegen.Value {
	x, w := f.arg(n, 0), f.arg(n, 1)
	out := x.Type
	h, e := lastDim2(x), lastDim2(w)
	t := x.Type.NumElements() / h
	x, w = f.reshape(x, t, h), f.reshape(w, t, e)
	var y codegen.Value
	if k, ok := routedTopK(n); ok && t*k < e {
		y = f.expertsSparse(n, x, w, k)
	} else {
		y = f.expertsDense(n, x, w)
	}
	return f.reshape(y, out.Shape...)
}

// routedTopK returns experts node n's top_k attribute, or else the top_k of
// the route node giving its weights.
func routedTopK(n *ir.Node) (int64, bool) {
	if k, ok := n.Attrs["top_k"].(int64); ok {
		return k, true
	}
	r := n.Args[1]
	if r.Prim != "route" {
		return 0, false
	}
	k, err := intAttr(r, "top_k")
	return k, err == nil
}

// expertMLP applies the experts' gated MLP to xs [N, H], row n through
// the n-th expert weights: gu [N, 2I, H] (fused) or g, u [N, I, H], then
// d [N, H, I] (all f32) → [N, H].
func (f *fn) expertMLP(n *ir.Node, xs codegen.Value, proj []codegen.Value) codegen.Value {
	apply := func(wt, v codegen.Value) codegen.Value { // [N, R, C] · [N, C] → [N, R]
		return f.dot(v, wt, []int64{0}, []int64{0}, []int64{1}, []int64{2})
	}
	g, u := f.gateUp(n, proj, func(wt codegen.Value) codegen.Value { return apply(wt, xs) })
	return apply(proj[len(proj)-1], f.mul(f.expertAct(n, g), u))
}

// gateUp returns the gate and up projections, project applying one stacked
// projection; a fused gate_up is split gate first (torch chunk(2, -1)).
func (f *fn) gateUp(n *ir.Node, proj []codegen.Value, project func(codegen.Value) codegen.Value) (g, u codegen.Value) {
	if len(proj) == 3 {
		return project(proj[0]), project(proj[1])
	}
	inter, _ := intAttr(n, "intermediate")
	gu := project(proj[0])
	d := gu.Type.Rank() - 1
	return f.sliceDim(gu, d, 0, inter), f.sliceDim(gu, d, inter, 2*inter)
}

func (f *fn) expertAct(n *ir.Node, x codegen.Value) codegen.Value {
	act, _ := n.Attrs["act"].(string)
	if act == "" {
		act = "silu"
	}
	return activations[act](f, x)
}

// expertsDense runs every expert on every token: x [T, H], w [T, E].
// The gate/up projections of all experts are one dot_general ([T, E, I]),
// down is batched over experts ([E, T, H]); each expert's output is
// weighted (an unused expert's weight is exactly zero) and the experts
// summed.
func (f *fn) expertsDense(n *ir.Node, x, w codegen.Value) codegen.Value {
	proj := make([]codegen.Value, len(n.Weights))
	for i, wt := range n.Weights {
		proj[i] = f.weight(wt.Name)
	}
	g, u := f.gateUp(n, proj, func(wt codegen.Value) codegen.Value { // [T, H] · [E, R, H] → [T, E, R]
		return f.dot(x, wt, nil, nil, []int64{1}, []int64{2})
	})
	m := f.transpose(f.mul(f.expertAct(n, g), u), 1, 0, 2)                           // [E, T, I]
	y := f.dot(m, proj[len(proj)-1], []int64{0}, []int64{0}, []int64{2}, []int64{2}) // [E, T, H]
	y = f.mul(y, f.broadcastDims(f.transpose(w, 1, 0), y.Type, 0, 1))
	return f.Reduce(y, f.constF32(0), "stablehlo.add", 0)
}

// expertsSparse computes only the k experts each token uses: x [T, H],
// w [T, E] with k nonzero entries per row. The used experts' indices come
// in ascending order (expertSlots); their stored weights are gathered
// (k·T expert slices, never the other experts' bytes), decoded and applied,
// and the weighted outputs added in that order into zeros, as the dense
// lowering and HF's index_add_ do.
func (f *fn) expertsSparse(n *ir.Node, x, w codegen.Value, k int64) codegen.Value {
	t, h := x.Type.Shape[0], x.Type.Shape[1]
	idx, vals := f.expertSlots(w, k) // [T, k] i32 ascending, [T, k] f32
	flat := f.reshape(idx, t*k)
	var ps []codegen.Value
	for _, wt := range n.Weights {
		ps = append(ps, f.gatherExperts(wt.Name, flat))
	}
	xs := f.broadcastDims(x, codegen.T("f32", t, k, h), 0, 2)
	y := f.reshape(f.expertMLP(n, f.reshape(xs, t*k, h), ps), t, k, h)
	y = f.mul(y, f.broadcastDims(vals, y.Type, 0, 1))
	acc := f.splat(0, x.Type)
	for j := int64(0); j < k; j++ {
		acc = f.add(acc, f.reshape(f.sliceDim(y, 1, j, j+1), t, h))
	}
	return acc
}

// expertSlots returns, for routing weights w [T, E] with k selected experts
// per row, their indices in ascending order [T, k] i32 and their weights
// [T, k] f32. The selected experts are the row's top k (ties to the lower
// index, as route chose them; an expert whose weight underflowed to zero
// may be swapped for another zero-weight one, which adds the same zero).
func (f *fn) expertSlots(w codegen.Value, k int64) (idx, vals codegen.Value) {
	t, e := w.Type.Shape[0], w.Type.Shape[1]
	top, _ := f.topK(w, k)
	iota := f.iota(codegen.T("i32", t, e), 1)
	none := f.broadcast(f.constI32(e), iota.Type)
	chosen := f.splat(0, codegen.T("f32", t, e)) // 1 where selected
	for j := int64(0); j < k; j++ {
		at := f.compare("EQ", iota, f.broadcastLeading(f.reshape(f.sliceDim(top, 1, j, j+1), t), iota.Type))
		chosen = f.selectOp(at, f.splat(1, chosen.Type), chosen)
	}
	sel := f.compare("GT", chosen, f.splat(0, chosen.Type))
	var is, vs []codegen.Value
	for j := int64(0); j < k; j++ {
		i := f.Reduce(f.selectOp(sel, iota, none), f.constI32(e), "stablehlo.minimum", 1) // lowest remaining
		at := f.compare("EQ", iota, f.broadcastLeading(i, iota.Type))
		v := f.reduceLast(f.selectOp(at, w, f.splat(0, w.Type)), "stablehlo.add", 0)
		sel = f.selectOp(at, f.compare("NE", iota, iota), sel)
		is, vs = append(is, f.reshape(i, t, 1)), append(vs, f.reshape(v, t, 1))
	}
	return f.concat(1, is...), f.concat(1, vs...)
}

// gatherExperts gathers the stored slices of stacked weight name
// [E, rows, cols] at expert indices idx [N] i32 and decodes them:
// [N, rows, cols] f32.
func (f *fn) gatherExperts(name string, idx codegen.Value) codegen.Value {
	raw, st, shape := f.stored(name)
	if raw.Type.Elem == "" {
		return codegen.Value{Type: codegen.T("f32")}
	}
	e, rows, cols := shape[0], shape[1], shape[2]
	width := raw.Type.Shape[raw.Type.Rank()-1]
	r3 := f.reshape(raw, e, rows, width)
	nn := idx.Type.Shape[0]
	attrs := fmt.Sprintf("dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, %d, %d>", rows, width)
	g := f.Op("stablehlo.gather", raw.Type.With(nn, rows, width), attrs, r3, idx)
	out := f.decodeRows(st, f.reshape(g, nn*rows, width), cols)
	return f.reshape(out, nn, rows, cols)
}
