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

// route(logits [..., E], top_k, ...) → [..., E] f32, as HF's TopKRouter
// modules compute it, in f32, in four stages (router; routerOf maps the
// keyword attributes onto them and refuses the combinations no router has):
//   - scoring: p = softmax(logits) (MixtralTopKRouter, Qwen2MoeTopKRouter,
//     OlmoeTopKRouter, DeepseekV2TopkRouter), sigmoid(logits) (scoring
//     "sigmoid": DeepseekV3TopkRouter, Glm4MoeTopkRouter), or the logits
//     themselves (softmax "after": GraniteMoeTopKRouter, GptOssTopKRouter,
//     Llama4Router);
//   - selection: torch.topk of p, ties to the lower expert index; with bias
//     (the node's Module: a tensor path stored as bias_shape, default [E];
//     e_score_correction_bias) the top k of p + bias, keeping p's values;
//     grouped (topk_method "group_limited_greedy", DeepseekV2TopkRouter),
//     the experts split into n_group equal groups, each scored by its
//     largest p, the topk_group best kept (ties: lower group first) and p
//     set to 0 outside them; "noaux_tc" (DeepseekV3TopkRouter) groups
//     scored by the sum of their two largest choice scores, the others'
//     choice scores set to -inf, keeping p;
//     "sparsemixer" (PhimoeTopKRouter's sparsemixer, at inference) takes
//     top_k rounds: the best expert not yet taken, weighted by its softmax
//     over the untaken experts within a relative band of it (see
//     sparsemixer), so selection and weights come together;
//   - normalisation: none, divided by their sum (norm: norm_topk_prob),
//     by max(sum, norm_min) (Ernie4_5_MoeTopKRouter's moe_norm_min), by
//     sum + norm_eps (Lfm2MoeTopKRouter's 1e-6), by their p-norm (norm_p:
//     DbrxFFN's moe_normalize_expert_weights), a softmax over the k kept
//     logits (softmax "after"), or the sigmoid of each kept logit (softmax
//     "after" with scoring "sigmoid": Llama4Router's sigmoid of the
//     -inf-filled top-k scores, 0 for the others);
//   - scaling: times scale (routed_scaling_factor).
func inferRoute(n *ir.Node, a *RouteAttrs) error {
	x := n.Args[0].Type
	e := lastDim(x)
	if e <= 0 {
		return fmt.Errorf("logits must end in a concrete number of experts, got %s", x)
	}
	r, err := routerOf(a, e, n.Module != "")
	if err != nil {
		return err
	}
	a.Router = r
	n.Weights = nil
	if r.selection.biased {
		shape, err := routeBiasShape(a.BiasShape, e)
		if err != nil {
			return err
		}
		n.Weights = []ir.Weight{{Name: n.Module, Shape: shape}}
	} else if a.BiasShape != nil {
		return fmt.Errorf("bias_shape needs bias")
	}
	n.Type = ir.Type{Shape: x.Shape, DType: ir.F32}
	return nil
}

// router is a route node's computation as orthogonal choices, each one
// stage of HF's TopKRouter modules: score every expert, select the top k
// (plain, by biased choice scores, or within the best groups), normalise
// the kept weights, scale them.
type router struct {
	topK      int64
	scoring   routeScoring
	selection routeSelection
	norm      routeNorm
	normMin   float64 // routeNormSumMin: the smallest sum divided by (moe_norm_min)
	normEps   float64 // normSum, normSumMin: added to the sum before dividing (norm_eps)
	normP     float64 // normPNorm: the p of the p-norm divided by (moe_normalize_expert_weights)
	scale     float64 // routed_scaling_factor; 1: none
	jitterEps float64 // selection sparsemixer: router_jitter_noise
}

// routeScoring is how the router scores the experts before the top k.
type routeScoring int

const (
	scoreSoftmax routeScoring = iota // p = softmax(logits) (MixtralTopKRouter, Qwen2MoeTopKRouter, OlmoeTopKRouter, DeepseekV2TopkRouter)
	scoreSigmoid                     // p = sigmoid(logits) (DeepseekV3TopkRouter, Glm4MoeTopkRouter)
	scoreLogits                      // p = logits; the kept k are normalised by routeNormSoftmax (GraniteMoeTopKRouter, GptOssTopKRouter)
)

// routeGrouping restricts the top k to the best groups of experts.
type routeGrouping int

const (
	groupNone routeGrouping = iota // top k of all experts
	groupMax                       // groups scored by their largest p, the others' p set to 0 (DeepseekV2's group_limited_greedy)
	groupTop2                      // groups scored by the sum of their two largest choice scores, the others set to -inf (DeepseekV3's noaux_tc)
)

// routeSelection is how the k experts are chosen.
type routeSelection struct {
	biased      bool // the choice scores are p + bias (e_score_correction_bias); the kept values are p's
	grouping    routeGrouping
	groups, top int64 // grouped: n_group equal groups of consecutive experts, topk_group of them kept
	sparsemixer bool  // PhimoeTopKRouter's sparsemixer: rounds of masked softmaxes (router.jitterEps)
}

// keepsChoice reports whether the kept values are the choice scores the
// top k ran on (plain top k, group_limited_greedy's masked p) rather than
// gathered from p (a bias, noaux_tc's -inf fill).
func (s routeSelection) keepsChoice() bool { return !s.biased && s.grouping != groupTop2 }

// routeNorm is how the k kept weights are normalised.
type routeNorm int

const (
	normNone    routeNorm = iota // kept as they are
	normSum                      // divided by their sum (norm_topk_prob)
	normSumMin                   // divided by max(sum, norm_min) (Ernie4_5_MoeTopKRouter's moe_norm_min)
	normSoftmax                  // softmax over the k kept logits (softmax "after")
	normSigmoid                  // sigmoid of each kept logit (softmax "after", scoring "sigmoid": Llama4Router)
	normPNorm                    // divided by their p-norm (Σ |v|^p)^(1/p) (DbrxFFN's moe_normalize_expert_weights)
)

// routerOf maps route's .arch attributes onto the router's choices and
// checks their combination for experts experts; biased: the call names a
// bias tensor.
func routerOf(a *RouteAttrs, experts int64, biased bool) (router, error) {
	r := router{topK: a.TopK, scale: a.Scale, selection: routeSelection{biased: biased}}
	if k := a.TopK; k < 1 || k > experts {
		return r, fmt.Errorf("top_k %d must be in [1, %d] (the number of experts)", k, experts)
	}
	after := a.Softmax == RouteSoftmaxAfter
	switch {
	case after && a.Scoring == RouteScoringSigmoid:
		r.scoring, r.norm = scoreLogits, normSigmoid
	case after:
		r.scoring, r.norm = scoreLogits, normSoftmax
	case a.Scoring == RouteScoringSigmoid:
		r.scoring = scoreSigmoid
	}
	switch {
	case a.Norm && after && r.norm == normSigmoid:
		return r, fmt.Errorf(`norm with softmax "after" and scoring "sigmoid" is no router's (Llama4Router keeps the sigmoids as they are)`)
	case a.Norm && after:
		return r, fmt.Errorf(`norm with softmax "after" would divide by a sum that is already 1: the softmax over the k kept logits normalises them`)
	case a.Norm && a.NormMin != nil:
		r.norm, r.normMin = normSumMin, *a.NormMin
	case a.Norm:
		r.norm = normSum
	case a.NormMin != nil:
		return r, fmt.Errorf("norm_min clamps the sum that norm divides by: it needs norm: true")
	}
	if a.NormP != nil {
		switch p := *a.NormP; {
		case !a.Norm || after:
			return r, fmt.Errorf("norm_p is the p-norm that norm divides by: it needs norm: true")
		case a.NormMin != nil || a.NormEps != nil:
			return r, fmt.Errorf("norm_p divides by the p-norm: it takes no norm_min or norm_eps (no router has both)")
		case !(p > 0) || math.IsInf(p, 1):
			return r, fmt.Errorf("norm_p must be a positive finite p, got %g", p)
		case p != 1: // the 1-norm of the kept (non-negative) weights is their sum
			r.norm, r.normP = normPNorm, p
		}
	}
	if a.NormEps != nil {
		if !a.Norm || after {
			return r, fmt.Errorf("norm_eps is added to the sum that norm divides by: it needs norm: true")
		}
		r.normEps = *a.NormEps
	}
	if a.JitterEps != nil && a.TopkMethod != RouteTopkMethodSparsemixer {
		return r, fmt.Errorf(`jitter_eps is the band of topk_method "sparsemixer": it needs topk_method "sparsemixer"`)
	}
	if a.TopkMethod == RouteTopkMethodSparsemixer {
		switch {
		case a.JitterEps == nil || *a.JitterEps < 0:
			return r, fmt.Errorf(`topk_method "sparsemixer" needs jitter_eps >= 0 (router_jitter_noise), got %s`, showFloat(a.JitterEps))
		case after || a.Scoring != RouteScoringSoftmax || a.Norm || biased || a.NGroup != nil || a.TopkGroup != nil:
			return r, fmt.Errorf(`topk_method "sparsemixer" computes its own weights (a softmax per round): it takes no softmax "after", scoring, norm, bias or groups`)
		}
		r.selection.sparsemixer, r.jitterEps = true, *a.JitterEps
		return r, nil
	}
	if a.TopkMethod != RouteTopkMethodGreedy {
		method := string(a.TopkMethod)
		if after {
			return r, fmt.Errorf(`topk_method %q scores groups by probabilities: it needs softmax "before"`, method)
		}
		var groups, top int64
		if a.NGroup != nil && a.TopkGroup != nil {
			groups, top = *a.NGroup, *a.TopkGroup
		}
		if groups < 1 || experts%groups != 0 || top < 1 || top > groups {
			return r, fmt.Errorf(`topk_method %q needs n_group dividing the %d experts and topk_group in [1, n_group], got n_group %s and topk_group %s`,
				method, experts, showInt(a.NGroup), showInt(a.TopkGroup))
		}
		r.selection.groups, r.selection.top = groups, top
		r.selection.grouping = groupMax
		if a.TopkMethod == RouteTopkMethodNoauxTc {
			if experts/groups < 2 {
				return r, fmt.Errorf(`topk_method "noaux_tc" scores a group by its two largest scores: it needs groups of at least 2 experts, got %d experts in %d groups`, experts, groups)
			}
			r.selection.grouping = groupTop2
		}
	}
	if biased && (after || r.selection.grouping == groupMax) {
		return r, fmt.Errorf(`bias is added to the scores before the top k: it needs softmax "before" and topk_method "greedy" or "noaux_tc"`)
	}
	return r, nil
}

// showInt formats an optional int for an error message.
func showInt(v *int64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprint(*v)
}

// showFloat formats an optional float for an error message.
func showFloat(v *float64) string {
	if v == nil {
		return "none"
	}
	return fmt.Sprint(*v)
}

// routeBiasShape checks bias_shape: positive ints whose product is the
// number of experts; none is [experts].
func routeBiasShape(shape []int64, experts int64) ([]int64, error) {
	if shape == nil {
		return []int64{experts}, nil
	}
	prod := int64(1)
	ok := len(shape) > 0
	for _, d := range shape {
		ok = ok && d > 0
		prod *= d
	}
	if !ok || prod != experts {
		return nil, fmt.Errorf("bias_shape must be a list of positive ints whose product is the %d experts, got %v", experts, shape)
	}
	return shape, nil
}

func lowerRoute(f *fn, n *ir.Node, a *RouteAttrs) codegen.Value {
	r := a.Router
	x := f.arg(n, 0)
	out := x.Type
	e := lastDim2(x)
	x = f.reshape(x, x.Type.NumElements()/e, e)
	if r.selection.sparsemixer {
		idx, vals := f.sparsemixer(x, r.topK, r.jitterEps)
		return f.reshape(f.scatterDense(idx, vals, e), out.Shape...)
	}
	// The barrier keeps IREE 3.13 from fusing the top-k selection's
	// integer ops into the softmax dispatch, which it then fails to
	// compile ("vector.store ... restricted to workgroup distributed
	// contexts").
	switch r.scoring {
	case scoreSigmoid:
		x = f.barrier(f.unary("stablehlo.logistic", x))
	case scoreSoftmax:
		x = f.barrier(f.softmaxLast(x))
	}
	choice := x // the scores the top k is taken of
	if r.selection.biased {
		choice = f.add(x, f.broadcastTrailing(f.reshape(f.weight(n.Weights[0].Name), e), x.Type))
	}
	switch s := r.selection; s.grouping {
	case groupMax:
		choice = f.groupLimit(choice, s.groups, s.top, false, 0)
	case groupTop2:
		choice = f.groupLimit(choice, s.groups, s.top, true, math.Inf(-1))
	}
	var idx, vals codegen.Value
	if r.selection.keepsChoice() {
		idx, vals = f.topK(choice, r.topK)
	} else { // choose by the choice scores, keep p
		idx, _ = f.topK(choice, r.topK)
		vals = f.gatherLast(x, idx)
	}
	switch r.norm {
	case normSoftmax:
		vals = f.softmaxLast(vals)
	case normSigmoid:
		vals = f.unary("stablehlo.logistic", vals)
	case normPNorm: // torch.norm(v, p): sqrt(Σ v²) for 2, else (Σ |v|^p)^(1/p)
		var s codegen.Value
		if r.normP == 2 {
			s = f.unary("stablehlo.sqrt", f.reduceLast(f.mul(vals, vals), "stablehlo.add", 0))
		} else {
			pw := f.binary("stablehlo.power", f.unary("stablehlo.abs", vals), f.splat(r.normP, vals.Type))
			s = f.reduceLast(pw, "stablehlo.add", 0)
			s = f.binary("stablehlo.power", s, f.splat(1/r.normP, s.Type))
		}
		vals = f.div(vals, f.broadcastLeading(s, vals.Type))
	case normSum, normSumMin:
		s := f.reduceLast(vals, "stablehlo.add", 0)
		if r.norm == normSumMin {
			s = f.binary("stablehlo.maximum", s, f.splat(r.normMin, s.Type))
		}
		if r.normEps != 0 {
			s = f.add(s, f.splat(r.normEps, s.Type))
		}
		vals = f.div(vals, f.broadcastLeading(s, vals.Type))
	}
	if r.scale != 1 {
		vals = f.mul(vals, f.splat(r.scale, vals.Type))
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

// sparsemixer is PhimoeTopKRouter's routing at inference (sparsemixer in
// models/phimoe/modeling_phimoe.py with training false; HF always takes
// two rounds) on the router logits s [T, E] f32: round j takes m = the
// largest logit among the experts not yet taken and i its expert (ties to
// the lower index); experts whose gap (m − s) / max(|s|, m), taken with the
// logits s of every expert, exceeds 2·eps, and the experts already taken,
// are set to −inf; expert i gets its softmax over what is left. Returns
// idx [T, k] i32 and vals [T, k] f32, in round order.
func (f *fn) sparsemixer(s codegen.Value, k int64, eps float64) (idx, vals codegen.Value) {
	t, e := s.Type.Shape[0], s.Type.Shape[1]
	iota := f.iota(codegen.T("i32", t, e), 1)
	abs := f.unary("stablehlo.abs", s)
	ninf, band := f.splat(math.Inf(-1), s.Type), f.splat(2*eps, s.Type)
	untaken := s // the logits with the experts taken so far at -inf
	var is, vs []codegen.Value
	for j := int64(0); j < k; j++ {
		m := f.broadcastLeading(f.reduceLast(untaken, "stablehlo.maximum", math.Inf(-1)), s.Type)
		at := f.compare("EQ", untaken, m)
		i := f.Reduce(f.selectOp(at, iota, f.broadcast(f.constI32(e), iota.Type)), f.constI32(e), "stablehlo.minimum", 1)
		gap := f.div(f.sub(m, s), f.binary("stablehlo.maximum", abs, m))
		// The barrier keeps the softmax dispatch free of the selection's
		// integer ops (IREE 3.13's "vector.store" failure, as in lowerRoute).
		g := f.barrier(f.softmaxLast(f.barrier(f.selectOp(f.compare("GT", gap, band), ninf, untaken))))
		picked := f.compare("EQ", iota, f.broadcastLeading(i, iota.Type))
		w := f.reduceLast(f.selectOp(picked, g, f.splat(0, s.Type)), "stablehlo.add", 0)
		untaken = f.selectOp(picked, ninf, untaken)
		is, vs = append(is, f.reshape(i, t, 1)), append(vs, f.reshape(w, t, 1))
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
// gate, up, down, gate_up, layout, bias, interleaved, alpha, limit, gated)
// → [..., H]: Σ_e weights[e] · down_e(act(gate_e x) · up_e x) (gated
// false: down_e(act(up_e x)), NemotronHExperts) over the experts with a
// nonzero weight, as HF's Experts modules (MixtralExperts.forward,
// GptOssExperts.forward, experts_implementation "eager"): each used
// expert's output times its weight, added into zeros
// in expert-index order. The weights are stacked tensors
// <experts>.NAME.weight [E, rows, cols]; a checkpoint that stores one
// tensor per expert (<experts>.<e>.NAME.weight) has them stacked at load
// (ir.Weight.Parts). layout "transposed" reads GptOssExperts' parameters
// instead: <experts>.NAME [E, in, out], applied as x · W; layout
// "parameter" Gemma4TextExperts': <experts>.NAME [E, out, in], the
// stacked nn.Parameter itself (no .weight), applied as x · Wᵀ; bias adds each
// projection's stacked bias (<experts>.NAME.bias [E, out], transposed:
// <experts>.NAME_bias) before the weighting; interleaved splits a fused
// gate_up into its even (gate) and odd (up) columns; act "clamped_swiglu"
// is GptOssExperts._apply_gate: g = min(g, limit), u = clamp(u, ±limit),
// (u + 1) · g · sigmoid(alpha · g); another act with limit is Step3p5's
// ClampedSwiGLU, min(act(g), limit) · clamp(u, ±limit). weighting "input" multiplies each
// expert's input by its weight instead of its output, Σ_e mlp_e(w_e · x)
// (Llama4TextMoe: routed_in = x · router_scores; an unused expert sees
// zeros, and without biases gives zeros).
//
// Three lowerings, equal in value up to f32 rounding order: when the
// weights come from route with top_k k and every projection's stored
// format has one of archc's matmul kernels, the (token, expert) pairs are
// grouped by expert and each used expert's stored weights multiply its
// rows (experts_kernel.go), at any T. Otherwise, when the call's tokens T
// satisfy T·k < E (decode), only the k experts of each token are gathered,
// decoded and computed (sparse dispatch: the cost follows k, not E); else
// (prefill, large batches) every expert runs on every token and the
// weights, zero for unused experts, select.
func inferExperts(n *ir.Node, a *ExpertsAttrs) error {
	inter := a.Intermediate
	lay, err := expertsLayoutOf(a)
	if err != nil {
		return err
	}
	a.Plan = lay
	if a.TopK != nil && *a.TopK < 1 {
		return fmt.Errorf("top_k must be a positive int, got %d", *a.TopK)
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
	names := lay.proj
	projs := []proj{{names.gate, inter, h}, {names.up, inter, h}}
	switch {
	case names.fused():
		projs = []proj{{names.gateUp, 2 * inter, h}}
	case names.ungated:
		projs = []proj{{names.up, inter, h}}
	}
	projs = append(projs, proj{names.down, h, inter})
	n.Weights = nil
	for _, p := range projs { // [E, out, in] (transposed: [E, in, out]; flat: [E·I, H])
		wt := ir.Weight{Name: n.Module + "." + p.name + ".weight", Shape: []int64{e, p.out, p.in}}
		switch {
		case lay.transposed:
			wt = ir.Weight{Name: n.Module + "." + p.name, Shape: []int64{e, p.in, p.out}}
		case lay.flat:
			wt = ir.Weight{Name: n.Module + "." + p.name, Shape: []int64{e * inter, h}}
		case lay.parameter:
			wt.Name = n.Module + "." + p.name
		}
		for i := int64(0); i < e && !lay.transposed && !lay.flat && !lay.parameter; i++ {
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

// expertsLayout is how an experts call's weights are stored and combined,
// as orthogonal choices: which projections (split gate and up, or one
// fused gate_up, halves or interleaved), their stored layout, whether
// they carry biases, and the gating activation (an ACT2FN name, or the
// clamped SwiGLU of GptOssExperts).
type expertsLayout struct {
	inter      int64 // the intermediate size
	proj       expertProjections
	transposed bool // GptOssExperts' [E, in, out] parameters <experts>.NAME
	flat       bool // DbrxExpertGLU's [E·I, H] parameters <experts>.NAME: gate, up [E, out, in], down [E, in, out]
	parameter  bool // Gemma4TextExperts' [E, out, in] parameters <experts>.NAME (no .weight)
	bias       bool // stacked biases [E, out]
	gate       expertGate
	input      bool // weighting "input": the weight scales the expert's input (Llama4TextMoe)
}

// expertProjections names the stacked projections under the experts
// module: gate and up, or one fused gateUp (gate rows first, or
// interleaved columns), or up alone (ungated), and down.
type expertProjections struct {
	gate, up, down, gateUp string
	interleaved            bool // fused gate_up: gate = [..., ::2], up = [..., 1::2]
	ungated                bool // no gate projection: down(act(up x)) (NemotronHExperts)
}

func (p expertProjections) fused() bool { return p.gateUp != "" }

// expertGate is the gating activation: act(g) · u with an ACT2FN name,
// capped (Step3p5's ClampedSwiGLU: min(act(g), limit) · clamp(u, ±limit))
// or clamped (GptOssExperts._apply_gate) with its sigmoid gain and clamp.
type expertGate struct {
	act          string // an ACT2FN name; "" when clamped
	clamped      bool
	capped       bool    // act with limit: act(g) at most limit, u in [-limit, limit]
	alpha, limit float64 // clamped: swiglu_alpha, swiglu_limit; capped: limit
}

// expertsLayoutOf checks an experts call's layout attributes.
func expertsLayoutOf(a *ExpertsAttrs) (expertsLayout, error) {
	l := expertsLayout{
		inter:      a.Intermediate,
		proj:       expertProjections{gate: a.Gate, up: a.Up, down: a.Down, gateUp: a.GateUp, interleaved: a.Interleaved, ungated: !a.Gated},
		transposed: a.Layout == ExpertsLayoutTransposed,
		flat:       a.Layout == ExpertsLayoutFlat,
		parameter:  a.Layout == ExpertsLayoutParameter,
		bias:       a.Bias,
		input:      a.Weighting == ExpertsWeightingInput,
	}
	switch _, ok := activations[a.Act]; {
	case a.Act == "clamped_swiglu":
		l.gate = expertGate{clamped: true, alpha: 1.702, limit: 7.0} // GptOssConfig's swiglu_alpha, swiglu_limit defaults
		if a.Alpha != nil {
			l.gate.alpha = *a.Alpha
		}
		if a.Limit != nil {
			l.gate.limit = *a.Limit
		}
	case !ok:
		return l, fmt.Errorf("activation %q is not supported", a.Act)
	case a.Alpha != nil:
		return l, fmt.Errorf("alpha is clamped_swiglu's: act %q does not read it", a.Act)
	case a.Limit != nil:
		if !(*a.Limit > 0) {
			return l, fmt.Errorf("limit must be positive, got %g (leave it out for no clamp)", *a.Limit)
		}
		l.gate = expertGate{act: a.Act, capped: true, limit: *a.Limit}
	default:
		l.gate = expertGate{act: a.Act}
	}
	if l.flat && (l.proj.fused() || l.bias) {
		return l, fmt.Errorf(`layout "flat" is DbrxExpertGLU's three [experts · intermediate, hidden] parameters: no gate_up, no biases`)
	}
	if l.parameter && l.bias {
		return l, fmt.Errorf("layout \"parameter\" (Gemma4TextExperts' stacked parameters) has no biases")
	}
	if l.input && l.bias {
		return l, fmt.Errorf(`weighting "input" with bias: an unused expert would add its biases (Llama4TextMoe has none)`)
	}
	if l.proj.interleaved && !l.proj.fused() {
		return l, fmt.Errorf("interleaved needs a fused gate_up tensor (gate_up: NAME)")
	}
	if l.proj.ungated && (l.proj.fused() || l.gate.clamped || l.gate.capped) {
		return l, fmt.Errorf("gated false has no gate projection: it takes neither gate_up, act \"clamped_swiglu\" nor limit")
	}
	return l, nil
}

// inDim is the dimension of a stacked projection [E, ., .] that meets the
// activations: in of [E, out, in], or of [E, in, out] when transposed (and
// for flat's down projection, [E, I, H] applied as x · W).
func (l expertsLayout) inDim(down bool) int64 {
	if l.transposed || l.flat && down {
		return 1
	}
	return 2
}

// stacked returns stacked weight name [E, rows, cols] decoded to f32 (a
// flat layout's [E·I, H] viewed as [E, I, H]).
func (f *fn) stacked(lay expertsLayout, name string) codegen.Value {
	v := f.weight(name)
	if lay.flat && v.Type.Rank() == 2 {
		v = f.reshape(v, v.Type.Shape[0]/lay.inter, lay.inter, v.Type.Shape[1])
	}
	return v
}

// split separates an experts node's weights (in n.Weights order) into the
// projections and their biases (nil without bias).
func (l expertsLayout) split(ws []codegen.Value) (proj, bias []codegen.Value) {
	if !l.bias {
		return ws, nil
	}
	return ws[:len(ws)/2], ws[len(ws)/2:]
}

func lowerExperts(f *fn, n *ir.Node, a *ExpertsAttrs) codegen.Value {
	x, w := f.arg(n, 0), f.arg(n, 1)
	out := x.Type
	h, e := lastDim2(x), lastDim2(w)
	t := x.Type.NumElements() / h
	x, w = f.reshape(x, t, h), f.reshape(w, t, e)
	var y codegen.Value
	k, routed := routedTopK(n, a)
	if routed && k <= e {
		if yk, ok := f.expertsKernel(n, a.Plan, x, w, k); ok {
			return f.reshape(yk, out.Shape...)
		}
	}
	if routed && t*k < e {
		y = f.expertsSparse(n, a.Plan, x, w, k)
	} else {
		y = f.expertsDense(n, a.Plan, x, w)
	}
	return f.reshape(y, out.Shape...)
}

// routedTopK returns experts node n's top_k attribute, or else the top_k of
// the route node giving its weights.
func routedTopK(n *ir.Node, a *ExpertsAttrs) (int64, bool) {
	if a.TopK != nil {
		return *a.TopK, true
	}
	if r, ok := n.Args[1].Decoded.(*RouteAttrs); ok {
		return r.Router.topK, true
	}
	return 0, false
}

// expertMLP applies the experts' MLP to xs [N, H], row n through the
// n-th expert weights (in n.Weights order, all f32): gu [N, 2I, H]
// (fused), g, u [N, I, H] or u alone (ungated), then d [N, H, I], each + its bias [N, out]
// (transposed: [N, H, 2I], ..., [N, I, H]) → [N, H].
func (f *fn) expertMLP(lay expertsLayout, xs codegen.Value, ws []codegen.Value) codegen.Value {
	proj, bias := lay.split(ws)
	apply := func(i int, v codegen.Value) codegen.Value { // [N, ., .] · [N, C] → [N, R]
		y := f.dot(v, proj[i], []int64{0}, []int64{0}, []int64{1}, []int64{lay.inDim(i == len(proj)-1)})
		if bias != nil {
			y = f.add(y, bias[i])
		}
		return y
	}
	return apply(len(proj)-1, f.expertHidden(lay, len(proj), func(i int) codegen.Value { return apply(i, xs) }))
}

// expertHidden is the experts' activated intermediate, project(i)
// applying projection i: act(gate) · up (glu), or act(up) ungated.
func (f *fn) expertHidden(lay expertsLayout, nproj int, project func(int) codegen.Value) codegen.Value {
	if lay.proj.ungated {
		return activations[lay.gate.act](f, project(0))
	}
	g, u := f.gateUp(lay, nproj, project)
	return f.glu(lay.gate, g, u)
}

// gateUp returns the gate and up projections, project(i) applying
// projection i; a fused gate_up is split gate first (torch chunk(2, -1))
// or, interleaved, into its even and odd columns (gate_up[..., ::2],
// gate_up[..., 1::2]).
func (f *fn) gateUp(lay expertsLayout, nproj int, project func(int) codegen.Value) (g, u codegen.Value) {
	if nproj == 3 {
		return project(0), project(1)
	}
	inter := lay.inter
	gu := project(0)
	d := gu.Type.Rank() - 1
	if lay.proj.interleaved {
		pairs := f.reshape(gu, append(append([]int64(nil), gu.Type.Shape[:d]...), inter, 2)...)
		col := func(j int64) codegen.Value {
			return f.reshape(f.sliceDim(pairs, d+1, j, j+1), pairs.Type.Shape[:d+1]...)
		}
		return col(0), col(1)
	}
	return f.sliceDim(gu, d, 0, inter), f.sliceDim(gu, d, inter, 2*inter)
}

// glu combines the gate and up projections: act(g) · u; capped
// (Step3p5's ClampedSwiGLU) min(act(g), limit) · clamp(u, -limit, limit);
// or for clamped_swiglu (GptOssExperts._apply_gate) g = min(g, limit),
// u = clamp(u, -limit, limit), (u + 1) · g · sigmoid(g · alpha).
func (f *fn) glu(lay expertGate, g, u codegen.Value) codegen.Value {
	clampU := func() codegen.Value {
		v := f.Op("stablehlo.maximum", u.Type, nil, u, f.splat(-lay.limit, u.Type))
		return f.Op("stablehlo.minimum", u.Type, nil, v, f.splat(lay.limit, u.Type))
	}
	switch {
	case lay.capped:
		a := activations[lay.act](f, g)
		return f.mul(f.Op("stablehlo.minimum", a.Type, nil, a, f.splat(lay.limit, a.Type)), clampU())
	case !lay.clamped:
		return f.mul(activations[lay.act](f, g), u)
	}
	g = f.Op("stablehlo.minimum", g.Type, nil, g, f.splat(lay.limit, g.Type))
	u = clampU()
	glu := f.mul(g, f.unary("stablehlo.logistic", f.mul(g, f.splat(lay.alpha, g.Type))))
	return f.mul(f.add(u, f.splat(1, u.Type)), glu)
}

// expertsDense runs every expert on every token: x [T, H], w [T, E].
// The gate/up projections of all experts are one dot_general ([T, E, I]),
// down is batched over experts ([E, T, H]); each expert's output is
// weighted (an unused expert's weight is exactly zero) and the experts
// summed.
func (f *fn) expertsDense(n *ir.Node, lay expertsLayout, x, w codegen.Value) codegen.Value {
	ws := make([]codegen.Value, len(n.Weights))
	for i, wt := range n.Weights {
		ws[i] = f.stacked(lay, wt.Name)
	}
	proj, bias := lay.split(ws)
	if lay.input { // Σ_e mlp_e(w_e · x): the scaled inputs [E, T, H], batched over experts
		e := w.Type.Shape[1]
		xs := f.mul(f.broadcastDims(x, codegen.T("f32", e, x.Type.Shape[0], x.Type.Shape[1]), 1, 2),
			f.broadcastDims(f.transpose(w, 1, 0), codegen.T("f32", e, x.Type.Shape[0], x.Type.Shape[1]), 0, 1))
		apply := func(i int, v codegen.Value) codegen.Value { // [E, T, C] · [E, R, C] → [E, T, R]
			return f.dot(v, proj[i], []int64{0}, []int64{0}, []int64{2}, []int64{lay.inDim(i == len(proj)-1)})
		}
		y := apply(len(proj)-1, f.expertHidden(lay, len(proj), func(i int) codegen.Value { return apply(i, xs) })) // [E, T, H]
		return f.Reduce(y, f.constF32(0), "stablehlo.add", 0)
	}
	h := f.expertHidden(lay, len(proj), func(i int) codegen.Value { // [T, H] · [E, R, H] → [T, E, R] (+ bias [E, R])
		y := f.dot(x, proj[i], nil, nil, []int64{1}, []int64{lay.inDim(false)})
		if bias != nil {
			y = f.add(y, f.broadcastDims(bias[i], y.Type, 1, 2))
		}
		return y
	})
	m := f.transpose(h, 1, 0, 2)                                                                   // [E, T, I]
	y := f.dot(m, proj[len(proj)-1], []int64{0}, []int64{0}, []int64{2}, []int64{lay.inDim(true)}) // [E, T, H]
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
func (f *fn) expertsSparse(n *ir.Node, lay expertsLayout, x, w codegen.Value, k int64) codegen.Value {
	t, h := x.Type.Shape[0], x.Type.Shape[1]
	idx, vals := f.expertSlots(w, k) // [T, k] i32 ascending, [T, k] f32
	flat := f.reshape(idx, t*k)
	var ps []codegen.Value
	for _, wt := range n.Weights {
		if lay.flat { // [E·I, H] gathered as [E, I, H]
			ps = append(ps, f.gatherExpertsAs(wt.Name, flat, []int64{wt.Shape[0] / lay.inter, lay.inter, wt.Shape[1]}))
			continue
		}
		ps = append(ps, f.gatherExperts(wt.Name, flat))
	}
	xs := f.broadcastDims(x, codegen.T("f32", t, k, h), 0, 2)
	if lay.input {
		xs = f.mul(xs, f.broadcastDims(vals, xs.Type, 0, 1))
	}
	y := f.reshape(f.expertMLP(lay, f.reshape(xs, t*k, h), ps), t, k, h)
	if !lay.input {
		y = f.mul(y, f.broadcastDims(vals, y.Type, 0, 1))
	}
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

// gatherExpertsAs is gatherExperts for a weight stored as shape [E, rows,
// cols] but declared otherwise (a flat [E·rows, cols]).
func (f *fn) gatherExpertsAs(name string, idx codegen.Value, shape []int64) codegen.Value {
	raw, st, _ := f.stored(name)
	if raw.Type.Elem == "" {
		return codegen.Value{Type: codegen.T("f32")}
	}
	return f.gatherExperts3(raw, st, shape, idx)
}

func (f *fn) gatherExperts3(raw codegen.Value, st *storage, shape []int64, idx codegen.Value) codegen.Value {
	e, rows, cols := shape[0], shape[1], shape[2]
	width := raw.Type.Shape[raw.Type.Rank()-1]
	r3 := f.reshape(raw, e, rows, width)
	nn := idx.Type.Shape[0]
	attrs := gatherAttrs(codegen.Ints{1, 2}, 1, codegen.I64s{1, rows, width})
	g := f.Op("stablehlo.gather", raw.Type.With(nn, rows, width), attrs, r3, idx)
	out := f.decodeRows(st, f.reshape(g, nn*rows, width), cols)
	return f.reshape(out, nn, rows, cols)
}
