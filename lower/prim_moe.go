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
// index, as torch.topk orders them. topk_method "group_limited_greedy"
// (DeepseekV2TopkRouter) first splits the experts into n_group equal groups,
// scores each group by its largest p, keeps the topk_group best groups
// (ties: lower group first) and sets p to 0 outside them, then takes the
// top k; "noaux_tc" (DeepseekV3TopkRouter, Glm4MoeTopkRouter) scores each
// group by the sum of its two largest choice scores (p + bias), keeps the
// topk_group best, sets the others' choice scores to -inf and takes the top
// k of the choice scores, keeping p; "greedy" (the default) is the plain top
// k. scoring "sigmoid" (those routers) takes p = sigmoid(logits) instead of
// the softmax. bias (the node's
// Module: a tensor path, stored as bias_shape, default [E]) is added to p
// to choose the top k only, the kept values being p's
// (Ernie4_5_MoeTopKRouter's e_score_correction_bias); norm_min clamps the
// norm's sum from below (moe_norm_min).
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
	method, _, _, err := routeGroups(n, e)
	if err != nil {
		return err
	}
	if _, err := routeScoring(n); err != nil {
		return err
	}
	if _, err := floatAttr(n, "norm_min", 0); err != nil {
		return err
	}
	n.Weights = nil
	if n.Module != "" {
		if mode, _ := routeMode(n); mode != "before" || method == "group_limited_greedy" {
			return fmt.Errorf(`bias is added to the scores before the top k: it needs softmax "before" and topk_method "greedy" or "noaux_tc"`)
		}
		shape, err := routeBiasShape(n, e)
		if err != nil {
			return err
		}
		n.Weights = []ir.Weight{{Name: n.Module, Shape: shape}}
	} else if n.Attrs["bias_shape"] != nil {
		return fmt.Errorf("bias_shape needs bias")
	}
	n.Type = ir.Type{Shape: x.Shape, DType: ir.F32}
	return nil
}

// routeBiasShape reads bias_shape: a list of positive ints whose product
// is the number of experts; none is [experts].
func routeBiasShape(n *ir.Node, experts int64) ([]int64, error) {
	v := n.Attrs["bias_shape"]
	if v == nil {
		return []int64{experts}, nil
	}
	l, ok := v.([]any)
	var shape []int64
	prod := int64(1)
	for _, d := range l {
		if d, isInt := d.(int64); isInt && d > 0 {
			shape, prod = append(shape, d), prod*d
			continue
		}
		ok = false
	}
	if !ok || len(shape) == 0 || prod != experts {
		return nil, fmt.Errorf("bias_shape must be a list of positive ints whose product is the %d experts, got %s", experts, showValue(v))
	}
	return shape, nil
}

// routeGroups reads topk_method and, for group_limited_greedy and
// noaux_tc, n_group and topk_group (groups 0: plain top k).
func routeGroups(n *ir.Node, experts int64) (method string, groups, top int64, err error) {
	method, ok := n.Attrs["topk_method"].(string)
	if n.Attrs["topk_method"] == nil {
		method, ok = "greedy", true
	}
	switch {
	case ok && method == "greedy":
		return method, 0, 0, nil
	case !ok || method != "group_limited_greedy" && method != "noaux_tc":
		return "", 0, 0, fmt.Errorf(`topk_method %s is not supported (supported: "greedy", "group_limited_greedy", "noaux_tc")`, showValue(n.Attrs["topk_method"]))
	}
	if mode, _ := routeMode(n); mode != "before" {
		return "", 0, 0, fmt.Errorf(`topk_method %q scores groups by probabilities: it needs softmax "before"`, method)
	}
	groups, gerr := intAttr(n, "n_group")
	top, terr := intAttr(n, "topk_group")
	if gerr != nil || terr != nil || groups < 1 || experts%groups != 0 || top < 1 || top > groups {
		return "", 0, 0, fmt.Errorf(`topk_method %q needs n_group dividing the %d experts and topk_group in [1, n_group], got n_group %s and topk_group %s`,
			method, experts, showValue(n.Attrs["n_group"]), showValue(n.Attrs["topk_group"]))
	}
	if method == "noaux_tc" && experts/groups < 2 {
		return "", 0, 0, fmt.Errorf(`topk_method "noaux_tc" scores a group by its two largest scores: it needs groups of at least 2 experts, got %d experts in %d groups`, experts, groups)
	}
	return method, groups, top, nil
}

// routeScoring reads scoring: "softmax" (the default) or "sigmoid", the
// latter only before the top k.
func routeScoring(n *ir.Node) (string, error) {
	switch v := n.Attrs["scoring"].(type) {
	case nil:
		return "softmax", nil
	case string:
		if v == "softmax" {
			return v, nil
		}
		if mode, _ := routeMode(n); v == "sigmoid" && mode == "before" {
			return v, nil
		}
		if v == "sigmoid" {
			return "", fmt.Errorf(`scoring "sigmoid" scores every expert before the top k: it needs softmax "before"`)
		}
	}
	return "", fmt.Errorf(`scoring must be "softmax" or "sigmoid", got %s`, showValue(n.Attrs["scoring"]))
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
		if scoring, _ := routeScoring(n); scoring == "sigmoid" {
			x = f.barrier(f.unary("stablehlo.logistic", x))
		} else {
			x = f.barrier(f.softmaxLast(x))
		}
	}
	choice := x // the scores the top k is taken of
	if n.Module != "" {
		choice = f.add(x, f.broadcastTrailing(f.reshape(f.weight(n.Weights[0].Name), e), x.Type))
	}
	method, groups, top, _ := routeGroups(n, e)
	switch method {
	case "group_limited_greedy":
		choice = f.groupLimit(choice, groups, top, false, 0)
	case "noaux_tc":
		choice = f.groupLimit(choice, groups, top, true, math.Inf(-1))
	}
	var idx, vals codegen.Value
	if n.Module == "" && method != "noaux_tc" {
		idx, vals = f.topK(choice, k)
	} else { // choose by the choice scores, keep p
		idx, _ = f.topK(choice, k)
		vals = f.gatherLast(x, idx)
	}
	if mode == "after" {
		vals = f.softmaxLast(vals)
	}
	if norm {
		s := f.reduceLast(vals, "stablehlo.add", 0)
		if n.Attrs["norm_min"] != nil {
			lo, _ := floatAttr(n, "norm_min", 0)
			s = f.binary("stablehlo.maximum", s, f.splat(lo, s.Type))
		}
		vals = f.div(vals, f.broadcastLeading(s, vals.Type))
	}
	if scale != 1 {
		vals = f.mul(vals, f.splat(scale, vals.Type))
	}
	return f.reshape(f.scatterDense(idx, vals, e), out.Shape...)
}

func lastDim2(x codegen.Value) int64 { return x.Type.Shape[x.Type.Rank()-1] }

// groupLimit keeps, in each row of p [T, E] (scores), the experts of the
// top best of its groups groups (E/groups consecutive experts each, scored
// by their largest p, or with top2 the sum of their two largest; ties to
// the lower group) and sets the others to fill, as DeepseekV2TopkRouter's
// group_limited_greedy (max, masked_fill(0.0)) and DeepseekV3TopkRouter's
// noaux_tc (top-2 sum, masked_fill(-inf)).
func (f *fn) groupLimit(p codegen.Value, groups, top int64, top2 bool, fill float64) codegen.Value {
	t, e := p.Type.Shape[0], p.Type.Shape[1]
	size := e / groups
	var best codegen.Value // [T, groups]
	if top2 {
		_, two := f.topK(f.reshape(p, t*groups, size), 2)
		best = f.reshape(f.reduceLast(two, "stablehlo.add", 0), t, groups)
	} else {
		best = f.reduceLast(f.reshape(p, t, groups, size), "stablehlo.maximum", math.Inf(-1))
	}
	idx, _ := f.topK(best, top)
	kept := f.scatterDense(idx, f.splat(1, codegen.T("f32", t, top)), groups) // 1 for the kept groups
	mask := f.compare("NE", kept, f.splat(0, kept.Type))
	mask = f.reshape(f.broadcastDims(mask, codegen.T("i1", t, groups, size), 0, 1), t, e)
	return f.selectOp(mask, p, f.splat(fill, p.Type))
}

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

// gatherLast returns x[t, idx[t, j]] for x [T, E] f32 and idx [T, k] i32:
// per j, the row's one selected entry plus zeros (exact).
func (f *fn) gatherLast(x, idx codegen.Value) codegen.Value {
	t, k := idx.Type.Shape[0], idx.Type.Shape[1]
	iota := f.iota(codegen.T("i32", x.Type.Shape...), 1)
	var vs []codegen.Value
	for j := int64(0); j < k; j++ {
		at := f.compare("EQ", iota, f.broadcastLeading(f.reshape(f.sliceDim(idx, 1, j, j+1), t), iota.Type))
		v := f.reduceLast(f.selectOp(at, x, f.splat(0, x.Type)), "stablehlo.add", 0)
		vs = append(vs, f.reshape(v, t, 1))
	}
	return f.concat(1, vs...)
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
// gate, up, down, gate_up, layout, bias, interleaved, alpha, limit) →
// [..., H]: Σ_e weights[e] · down_e(act(gate_e x) · up_e x) over the
// experts with a nonzero weight, as HF's Experts modules
// (MixtralExperts.forward, GptOssExperts.forward, experts_implementation
// "eager"): each used expert's output times its weight, added into zeros
// in expert-index order. The weights are stacked tensors
// <experts>.NAME.weight [E, rows, cols]; a checkpoint that stores one
// tensor per expert (<experts>.<e>.NAME.weight) has them stacked at load
// (ir.Weight.Parts). layout "transposed" reads GptOssExperts' parameters
// instead: <experts>.NAME [E, in, out], applied as x · W; bias adds each
// projection's stacked bias (<experts>.NAME.bias [E, out], transposed:
// <experts>.NAME_bias) before the weighting; interleaved splits a fused
// gate_up into its even (gate) and odd (up) columns; act "clamped_swiglu"
// is GptOssExperts._apply_gate: g = min(g, limit), u = clamp(u, ±limit),
// (u + 1) · g · sigmoid(alpha · g).
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
	lay, err := expertsLayoutOf(n)
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
	type proj struct {
		name    string
		out, in int64
	}
	projs := []proj{{lay.names.gate, inter, h}, {lay.names.up, inter, h}}
	if lay.names.gateUp != "" {
		projs = []proj{{lay.names.gateUp, 2 * inter, h}}
	}
	projs = append(projs, proj{lay.names.down, h, inter})
	n.Weights = nil
	for _, p := range projs { // [E, out, in] (transposed: [E, in, out])
		wt := ir.Weight{Name: n.Module + "." + p.name + ".weight", Shape: []int64{e, p.out, p.in}}
		if lay.transposed {
			wt = ir.Weight{Name: n.Module + "." + p.name, Shape: []int64{e, p.in, p.out}}
		}
		for i := int64(0); i < e && !lay.transposed; i++ {
			wt.Parts = append(wt.Parts, fmt.Sprintf("%s.%d.%s.weight", n.Module, i, p.name))
		}
		n.Weights = append(n.Weights, wt)
	}
	for _, p := range projs { // biases [E, out], after the projections
		if !lay.bias {
			break
		}
		b := ir.Weight{Name: n.Module + "." + p.name + ".bias", Shape: []int64{e, p.out}}
		if lay.transposed {
			b.Name = n.Module + "." + p.name + "_bias"
		}
		for i := int64(0); i < e && !lay.transposed; i++ {
			b.Parts = append(b.Parts, fmt.Sprintf("%s.%d.%s.bias", n.Module, i, p.name))
		}
		n.Weights = append(n.Weights, b)
	}
	n.Type = ir.Type{Shape: x.Shape, DType: ir.F32}
	return nil
}

// expertsLayout is how an experts call's weights are stored and combined
// (its attributes, checked).
type expertsLayout struct {
	names        expertNameSet
	act          string  // an ACT2FN name, or "clamped_swiglu"
	transposed   bool    // GptOssExperts' [E, in, out] parameters <experts>.NAME
	bias         bool    // stacked biases [E, out]
	interleaved  bool    // fused gate_up: gate = [..., ::2], up = [..., 1::2]
	alpha, limit float64 // clamped_swiglu's sigmoid gain and clamp
}

func expertsLayoutOf(n *ir.Node) (expertsLayout, error) {
	l := expertsLayout{act: "silu"}
	var err error
	if l.names, err = expertNames(n); err != nil {
		return l, err
	}
	if v, ok := n.Attrs["act"]; ok && v != nil {
		if l.act, ok = v.(string); !ok {
			return l, fmt.Errorf("act must be an activation name (string), got %v", v)
		}
	}
	if _, ok := activations[l.act]; !ok && l.act != "clamped_swiglu" {
		return l, fmt.Errorf("activation %q is not supported", l.act)
	}
	switch v := n.Attrs["layout"]; v {
	case nil, "linear":
	case "transposed":
		l.transposed = true
	default:
		return l, fmt.Errorf(`layout must be "linear" ([experts, out, in] <experts>.NAME.weight) or "transposed" ([experts, in, out] <experts>.NAME, GptOssExperts), got %v`, v)
	}
	if l.bias, err = boolAttr(n, "bias"); err != nil {
		return l, err
	}
	if l.interleaved, err = boolAttr(n, "interleaved"); err != nil {
		return l, err
	}
	if l.interleaved && l.names.gateUp == "" {
		return l, fmt.Errorf("interleaved needs a fused gate_up tensor (gate_up: NAME)")
	}
	if l.alpha, err = floatAttr(n, "alpha", 1.702); err != nil {
		return l, err
	}
	if l.limit, err = floatAttr(n, "limit", 7.0); err != nil {
		return l, err
	}
	return l, nil
}

// inDim is the dimension of a stacked projection [E, ., .] that meets the
// activations: in of [E, out, in], or of [E, in, out] when transposed.
func (l expertsLayout) inDim() int64 {
	if l.transposed {
		return 1
	}
	return 2
}

// split separates an experts node's weights (in n.Weights order) into the
// projections and their biases (nil without bias).
func (l expertsLayout) split(ws []codegen.Value) (proj, bias []codegen.Value) {
	if !l.bias {
		return ws, nil
	}
	return ws[:len(ws)/2], ws[len(ws)/2:]
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
// the n-th expert weights (in n.Weights order, all f32): gu [N, 2I, H]
// (fused) or g, u [N, I, H], then d [N, H, I], each + its bias [N, out]
// (transposed: [N, H, 2I], ..., [N, I, H]) → [N, H].
func (f *fn) expertMLP(n *ir.Node, xs codegen.Value, ws []codegen.Value) codegen.Value {
	lay, _ := expertsLayoutOf(n)
	proj, bias := lay.split(ws)
	apply := func(i int, v codegen.Value) codegen.Value { // [N, ., .] · [N, C] → [N, R]
		y := f.dot(v, proj[i], []int64{0}, []int64{0}, []int64{1}, []int64{lay.inDim()})
		if bias != nil {
			y = f.add(y, bias[i])
		}
		return y
	}
	g, u := f.gateUp(n, lay, len(proj), func(i int) codegen.Value { return apply(i, xs) })
	return apply(len(proj)-1, f.glu(lay, g, u))
}

// gateUp returns the gate and up projections, project(i) applying
// projection i; a fused gate_up is split gate first (torch chunk(2, -1))
// or, interleaved, into its even and odd columns (gate_up[..., ::2],
// gate_up[..., 1::2]).
func (f *fn) gateUp(n *ir.Node, lay expertsLayout, nproj int, project func(int) codegen.Value) (g, u codegen.Value) {
	if nproj == 3 {
		return project(0), project(1)
	}
	inter, _ := intAttr(n, "intermediate")
	gu := project(0)
	d := gu.Type.Rank() - 1
	if lay.interleaved {
		pairs := f.reshape(gu, append(append([]int64(nil), gu.Type.Shape[:d]...), inter, 2)...)
		col := func(j int64) codegen.Value {
			return f.reshape(f.sliceDim(pairs, d+1, j, j+1), pairs.Type.Shape[:d+1]...)
		}
		return col(0), col(1)
	}
	return f.sliceDim(gu, d, 0, inter), f.sliceDim(gu, d, inter, 2*inter)
}

// glu combines the gate and up projections: act(g) · u, or for
// clamped_swiglu (GptOssExperts._apply_gate) g = min(g, limit),
// u = clamp(u, -limit, limit), (u + 1) · g · sigmoid(g · alpha).
func (f *fn) glu(lay expertsLayout, g, u codegen.Value) codegen.Value {
	if lay.act != "clamped_swiglu" {
		return f.mul(activations[lay.act](f, g), u)
	}
	g = f.Op("stablehlo.minimum", g.Type, "", g, f.splat(lay.limit, g.Type))
	u = f.Op("stablehlo.maximum", u.Type, "", u, f.splat(-lay.limit, u.Type))
	u = f.Op("stablehlo.minimum", u.Type, "", u, f.splat(lay.limit, u.Type))
	glu := f.mul(g, f.unary("stablehlo.logistic", f.mul(g, f.splat(lay.alpha, g.Type))))
	return f.mul(f.add(u, f.splat(1, u.Type)), glu)
}

// expertsDense runs every expert on every token: x [T, H], w [T, E].
// The gate/up projections of all experts are one dot_general ([T, E, I]),
// down is batched over experts ([E, T, H]); each expert's output is
// weighted (an unused expert's weight is exactly zero) and the experts
// summed.
func (f *fn) expertsDense(n *ir.Node, x, w codegen.Value) codegen.Value {
	lay, _ := expertsLayoutOf(n)
	ws := make([]codegen.Value, len(n.Weights))
	for i, wt := range n.Weights {
		ws[i] = f.weight(wt.Name)
	}
	proj, bias := lay.split(ws)
	g, u := f.gateUp(n, lay, len(proj), func(i int) codegen.Value { // [T, H] · [E, R, H] → [T, E, R] (+ bias [E, R])
		y := f.dot(x, proj[i], nil, nil, []int64{1}, []int64{lay.inDim()})
		if bias != nil {
			y = f.add(y, f.broadcastDims(bias[i], y.Type, 1, 2))
		}
		return y
	})
	m := f.transpose(f.glu(lay, g, u), 1, 0, 2)                                                // [E, T, I]
	y := f.dot(m, proj[len(proj)-1], []int64{0}, []int64{0}, []int64{2}, []int64{lay.inDim()}) // [E, T, H]
	if bias != nil {
		y = f.add(y, f.broadcastDims(bias[len(bias)-1], y.Type, 0, 2))
	}
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
// [E, rows, cols] (or a stacked bias [E, cols]) at expert indices idx [N]
// i32 and decodes them: [N, rows, cols] (or [N, cols]) f32.
func (f *fn) gatherExperts(name string, idx codegen.Value) codegen.Value {
	raw, st, shape := f.stored(name)
	if raw.Type.Elem == "" {
		return codegen.Value{Type: codegen.T("f32")}
	}
	if len(shape) == 2 {
		b := f.gatherExperts3(raw, st, []int64{shape[0], 1, shape[1]}, idx)
		return f.reshape(b, idx.Type.Shape[0], shape[1])
	}
	return f.gatherExperts3(raw, st, shape, idx)
}

func (f *fn) gatherExperts3(raw codegen.Value, st *storage, shape []int64, idx codegen.Value) codegen.Value {
	e, rows, cols := shape[0], shape[1], shape[2]
	width := raw.Type.Shape[raw.Type.Rank()-1]
	r3 := f.reshape(raw, e, rows, width)
	nn := idx.Type.Shape[0]
	attrs := fmt.Sprintf("dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, %d, %d>", rows, width)
	g := f.Op("stablehlo.gather", raw.Type.With(nn, rows, width), attrs, r3, idx)
	out := f.decodeRows(st, f.reshape(g, nn*rows, width), cols)
	return f.reshape(out, nn, rows, cols)
}
