package lower

import (
	"fmt"
	"math"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// The gated delta rule (gated DeltaNet: Qwen3-Next, Qwen3.5), the linear
// attention of Qwen3NextGatedDeltaNet. Its recurrent state is a matrix
// [v_heads, d_k, d_v] f32 per sequence (state.go); prefill is the chunked,
// matmul-shaped form of torch_chunk_gated_delta_rule (no loop over
// tokens), decode torch_recurrent_gated_delta_rule's one step.

// gdnL2Eps is l2norm's eps in torch_chunk_gated_delta_rule and
// torch_recurrent_gated_delta_rule (use_qk_l2norm_in_kernel).
const gdnL2Eps = 1e-6

// inferGatedDeltaRule: q, k [batch, seq, k_heads, d_k]; v [batch, seq,
// v_heads, d_v] with v_heads a multiple of k_heads; a, b [batch, seq,
// v_heads]; <module>.A_log and <module>.dt_bias [v_heads]; a recurrent
// state [v_heads, d_k, d_v]; the result [batch, seq, v_heads·d_v].
func inferGatedDeltaRule(n *ir.Node, a *GatedDeltaRuleAttrs) error {
	q, k, v, ga, gb := n.Args[0].Type, n.Args[1].Type, n.Args[2].Type, n.Args[3].Type, n.Args[4].Type
	for _, t := range []ir.Type{q, k, v} {
		if len(t.Shape) != 4 || t.Shape[0] != ir.Batch || t.Shape[1] != ir.Seq || t.Shape[2] <= 0 || t.Shape[3] <= 0 {
			return fmt.Errorf("q, k, v must be [batch, seq, heads, head_dim], got %s", t)
		}
	}
	if !k.Shape.Equal(q.Shape) {
		return fmt.Errorf("k %s must have q's shape %s", k, q)
	}
	hk, hv := q.Shape[2], v.Shape[2]
	if hv%hk != 0 {
		return fmt.Errorf("the value heads %d (linear_num_value_heads) must be a multiple of the key heads %d (linear_num_key_heads)", hv, hk)
	}
	if len(gb.Shape) != 3 || !gb.Shape[:2].Equal(v.Shape[:2]) || gb.Shape[2] != hv {
		return fmt.Errorf("b must be [batch, seq, v_heads %d], got %s", hv, gb)
	}
	channel := a.Decay == GatedDeltaRuleDecayChannel
	dk := q.Shape[3]
	switch {
	case channel && (len(ga.Shape) != 4 || !ga.Shape[:2].Equal(v.Shape[:2]) || ga.Shape[2] != hv || ga.Shape[3] != dk):
		return fmt.Errorf("a must be [batch, seq, v_heads %d, d_k %d] with decay \"channel\", got %s", hv, dk, ga)
	case !channel && (len(ga.Shape) != 3 || !ga.Shape[:2].Equal(v.Shape[:2]) || ga.Shape[2] != hv):
		return fmt.Errorf("a must be [batch, seq, v_heads %d], got %s", hv, ga)
	}
	if a.Chunk < 1 {
		return fmt.Errorf("chunk %d must be at least 1", a.Chunk)
	}
	H := int64(hv)
	n.Weights = []ir.Weight{
		{Name: n.Module + ".A_log", Shape: []int64{H}},
		{Name: n.Module + ".dt_bias", Shape: []int64{H}},
	}
	if channel { // KimiLinearForgetGate's shapes
		n.Weights[0].Shape = []int64{1, 1, H, 1}
		n.Weights[1].Shape = []int64{H * int64(dk)}
	}
	n.States = []ir.State{{Kind: ir.Recurrent, Name: "gdn", Shape: []int64{H, int64(q.Shape[3]), int64(v.Shape[3])}}}
	n.Type = ir.Type{Shape: ir.Shape{ir.Batch, ir.Seq, hv * v.Shape[3]}, DType: ir.F32}
	return nil
}

// lowerGatedDeltaRule follows Qwen3NextGatedDeltaNet.forward from the
// split q, k, v on (models/qwen3_next/modeling_qwen3_next.py), in f32
// (with decay "channel", KimiLinearDeltaAttention.forward: g per key
// channel, [B, S, H, Dk], decaying the state's rows one by one):
// β = sigmoid(b) (2·sigmoid(b) with allow_neg_eigval, as
// OlmoHybridGatedDeltaNet), g = −exp(A_log)·softplus(a + dt_bias), q and k
// L2-normalised and repeated to the value heads (repeat_interleave: value
// head h reads key head h / (v_heads / k_heads)). Decode (one token a row)
// is torch_recurrent_gated_delta_rule; prefill torch_chunk_gated_delta_rule
// (gdnChunked). Tokens past the row's length get g = 0 and β = 0, which
// leaves the state as it was, so the state written is the one after the
// last real token.
func lowerGatedDeltaRule(f *fn, n *ir.Node, a *GatedDeltaRuleAttrs) codegen.Value {
	q, k, v, ain, bin := f.arg(n, 0), f.arg(n, 1), f.arg(n, 2), f.arg(n, 3), f.arg(n, 4)
	B, S, Hk := q.Type.Shape[0], q.Type.Shape[1], q.Type.Shape[2]
	H, Dv := v.Type.Shape[2], v.Type.Shape[3]
	channel := ain.Type.Rank() == 4 // decay "channel": A_log [1, 1, H, 1], dt_bias [H·Dk] as [H, Dk]
	alog := f.weight(n.Weights[0].Name)
	if channel {
		alog = f.reshape(alog, H)
	}
	A := f.unary("stablehlo.negate", f.unary("stablehlo.exponential", alog)) // [H]
	dtb := f.weight(n.Weights[1].Name)
	if channel {
		dtb = f.reshape(dtb, H, ain.Type.Shape[3])
	}
	sp := f.softplus(f.add(ain, f.broadcastTrailing(dtb, ain.Type)))
	g := f.mul(f.broadcastDims(A, sp.Type, 2), sp) // [B, S, H] or [B, S, H, Dk]
	beta := f.unary("stablehlo.logistic", bin)
	if a.AllowNegEigval {
		beta = f.mul(beta, f.splat(2, beta.Type))
	}
	q = f.headsOf(f.l2Normalize(q, gdnL2Eps), 2, H/Hk) // [B, S, H, Dk]
	k = f.headsOf(f.l2Normalize(k, gdnL2Eps), 2, H/Hk)
	h0 := f.readState(n, "gdn") // [B, H, Dk, Dv]
	var y codegen.Value
	if S == 1 {
		y = f.gdnStep(n, q, k, v, g, beta, h0)
	} else {
		y = f.gdnChunked(n, q, k, v, g, beta, h0, a.Chunk)
	}
	return f.reshape(y, B, S, H*Dv)
}

// l2Normalize is HF's l2norm: x · rsqrt(Σ x² + eps) over the last axis.
func (f *fn) l2Normalize(x codegen.Value, eps float64) codegen.Value {
	r := x.Type.Rank()
	ss := f.reduceLast(f.mul(x, x), "stablehlo.add", 0)
	inv := f.unary("stablehlo.rsqrt", f.add(ss, f.splat(eps, ss.Type)))
	dims := make([]int64, r-1)
	for i := range dims {
		dims[i] = int64(i)
	}
	return f.mul(x, f.broadcastDims(inv, x.Type, dims...))
}

// gdnStep is one token per row, torch_recurrent_gated_delta_rule: S =
// exp(g)·S; S += k ⊗ β·(v − Sᵀk); out = Sᵀ(q / √d_k). Returns
// [B, 1, H, Dv].
func (f *fn) gdnStep(n *ir.Node, q, k, v, g, beta, h codegen.Value) codegen.Value {
	B, H, Dk, Dv := q.Type.Shape[0], q.Type.Shape[2], q.Type.Shape[3], v.Type.Shape[3]
	t4 := h.Type
	q2 := f.reshape(q, B, H, Dk)
	q2 = f.div(q2, f.splat(math.Sqrt(float64(Dk)), q2.Type))
	k2, v2 := f.reshape(k, B, H, Dk), f.reshape(v, B, H, Dv)
	if g.Type.Rank() == 4 { // per key channel: row d of S decays by exp(g_d)
		h = f.mul(h, f.broadcastDims(f.unary("stablehlo.exponential", f.reshape(g, B, H, Dk)), t4, 0, 1, 2))
	} else {
		h = f.mul(h, f.broadcastDims(f.unary("stablehlo.exponential", f.reshape(g, B, H)), t4, 0, 1))
	}
	mem := f.dot(h, k2, []int64{0, 1}, []int64{0, 1}, []int64{2}, []int64{2}) // [B, H, Dv]
	delta := f.mul(f.sub(v2, mem), f.broadcastDims(f.reshape(beta, B, H), v2.Type, 0, 1))
	h = f.add(h, f.mul(f.broadcastDims(k2, t4, 0, 1, 2), f.broadcastDims(delta, t4, 0, 1, 3)))
	f.writeState(n, "gdn", h)
	y := f.dot(h, q2, []int64{0, 1}, []int64{0, 1}, []int64{2}, []int64{2}) // [B, H, Dv]
	return f.reshape(y, B, 1, H, Dv)
}

// gdnChunked is torch_chunk_gated_delta_rule over a prefill call of S
// tokens in chunks of Q = min(chunk, S) (the tail padded with g = β = 0).
// Within a chunk, with c the cumulative sum of g and Γ[i, j] = exp(c_i −
// c_j) for j ≤ i (else 0): the triangular system (I + L)·X = [β·v |
// β·k·exp(c)], L the strictly lower part of (β·k·kᵀ)∘Γ, is solved as
// X = Π_m (I + N^(2^m))·rhs with N = −L (N is nilpotent: the product is
// Σ_j N^j = (I − N)⁻¹, ⌈log₂ Q⌉ factors; HF forward-substitutes), giving
// u (new values) and w (decayed keys). Then chunk by chunk (a loop over
// the S/Q chunks, not the tokens): v' = u − w·S; out = (q·exp(c))·S +
// ((q·kᵀ)∘Γ)·v'; S = exp(c_last)·S + (k·exp(c_last − c))ᵀ·v'. Returns
// [B, S, H, Dv].
func (f *fn) gdnChunked(n *ir.Node, q, k, v, g, beta, h codegen.Value, chunk int64) codegen.Value {
	B, S, H, Dk, Dv := q.Type.Shape[0], q.Type.Shape[1], q.Type.Shape[2], q.Type.Shape[3], v.Type.Shape[3]
	real := f.compare("LT", f.iota(codegen.T("i32", B, S, H), 1), f.broadcast(f.rowLen(0), codegen.T("i32", B, S, H)))
	channel := g.Type.Rank() == 4 // one decay per key channel: [B, S, H, Dk]
	if channel {
		g = f.selectOp(f.broadcastDims(real, g.Type.WithElem("i1"), 0, 1, 2), g, f.splat(0, g.Type))
	} else {
		g = f.selectOp(real, g, f.splat(0, g.Type))
	}
	beta = f.selectOp(real, beta, f.splat(0, beta.Type))
	q = f.mul(q, f.splat(math.Pow(float64(Dk), -0.5), q.Type))

	Q := min(chunk, S)
	C := (S + Q - 1) / Q
	// [B, S, H, ...] → [B, H, C, Q, ...], zero-padded to C·Q tokens.
	chunked := func(x codegen.Value) codegen.Value {
		if C*Q != S {
			sh := append([]int64(nil), x.Type.Shape...)
			sh[1] = C*Q - S
			x = f.concat(1, x, f.splat(0, codegen.T("f32", sh...)))
		}
		if x.Type.Rank() == 3 {
			return f.reshape(f.transpose(x, 0, 2, 1), B, H, C, Q)
		}
		d := x.Type.Shape[3]
		return f.reshape(f.transpose(x, 0, 2, 1, 3), B, H, C, Q, d)
	}
	q5, k5, v5, g4, b4 := chunked(q), chunked(k), chunked(v), chunked(g), chunked(beta)
	bat := []int64{0, 1, 2}
	kb := f.mul(k5, f.broadcastDims(b4, k5.Type, 0, 1, 2, 3))
	vb := f.mul(v5, f.broadcastDims(b4, v5.Type, 0, 1, 2, 3))

	var cum, lsys, attn codegen.Value
	if channel {
		cum = f.transpose(f.cumsumLast(f.transpose(g4, 0, 1, 2, 4, 3)), 0, 1, 2, 4, 3) // [B, H, C, Q, Dk]
	} else {
		cum = f.cumsumLast(g4) // [B, H, C, Q]
	}
	tq := codegen.T("f32", B, H, C, Q, Q)
	row, col := f.iota(tq.WithElem("i32"), 3), f.iota(tq.WithElem("i32"), 4)
	if channel { // Γ[i, j, d] = exp(c_i,d − c_j,d): (β·k·kᵀ)∘Γ and (q·kᵀ)∘Γ summed over d, as chunk_kimi_delta_attention
		t6 := codegen.T("f32", B, H, C, Q, Q, Dk)
		seg := f.sub(f.broadcastDims(cum, t6, 0, 1, 2, 3, 5), f.broadcastDims(cum, t6, 0, 1, 2, 4, 5))
		decay := f.maskedExp(f.compare("GE", f.iota(t6.WithElem("i32"), 3), f.iota(t6.WithElem("i32"), 4)), seg)
		pairs := func(a codegen.Value) codegen.Value { // Σ_d a_i,d · k_j,d · Γ[i, j, d]
			return f.reduceLast(f.mul(f.mul(f.broadcastDims(a, t6, 0, 1, 2, 3, 5), f.broadcastDims(k5, t6, 0, 1, 2, 4, 5)), decay), "stablehlo.add", 0)
		}
		lsys, attn = pairs(kb), pairs(q5)
	} else {
		seg := f.sub(f.broadcastDims(cum, tq, 0, 1, 2, 3), f.broadcastDims(cum, tq, 0, 1, 2, 4))
		decay := f.maskedExp(f.compare("GE", row, col), seg) // Γ
		lsys = f.mul(f.dot(kb, k5, bat, bat, []int64{4}, []int64{4}), decay)
		attn = f.mul(f.dot(q5, k5, bat, bat, []int64{4}, []int64{4}), decay)
	}
	nmat := f.selectOp(f.compare("GT", row, col), f.unary("stablehlo.negate", lsys), f.splat(0, tq))
	perToken := func(x codegen.Value, t codegen.Type) codegen.Value { // a [B, H, C, Q] or per-channel decay term over t
		if channel {
			return x
		}
		return f.broadcastDims(x, t, 0, 1, 2, 3)
	}

	ecum := f.unary("stablehlo.exponential", cum)
	x := f.concat(4, vb, f.mul(kb, perToken(ecum, kb.Type))) // [B, H, C, Q, Dv+Dk]
	for p, m := nmat, int64(1); m < Q; m *= 2 {
		x = f.add(x, f.dot(p, x, bat, bat, []int64{4}, []int64{3}))
		if 2*m < Q {
			p = f.dot(p, p, bat, bat, []int64{4}, []int64{3})
		}
	}
	u, w := f.sliceDim(x, 4, 0, Dv), f.sliceDim(x, 4, Dv, Dv+Dk)

	var last codegen.Value
	if channel {
		last = f.reshape(f.sliceDim(cum, 3, Q-1, Q), B, H, C, Dk)
	} else {
		last = f.reshape(f.sliceDim(cum, 3, Q-1, Q), B, H, C)
	}
	lastDims := []int64{0, 1, 2}
	if channel {
		lastDims = []int64{0, 1, 2, 4}
	}
	qd := f.mul(q5, perToken(ecum, q5.Type))
	kd := f.mul(k5, perToken(f.unary("stablehlo.exponential", f.sub(f.broadcastDims(last, cum.Type, lastDims...), cum)), k5.Type))
	chunkDecay := f.unary("stablehlo.exponential", last) // [B, H, C] or [B, H, C, Dk]

	at := func(x codegen.Value, c int64) codegen.Value { // chunk c of [B, H, C, ...] → [B, H, ...]
		sh := x.Type.Shape
		return f.reshape(f.sliceDim(x, 2, c, c+1), append([]int64{B, H}, sh[3:]...)...)
	}
	outs := make([]codegen.Value, C)
	b2 := []int64{0, 1}
	for c := int64(0); c < C; c++ {
		vNew := f.sub(at(u, c), f.dot(at(w, c), h, b2, b2, []int64{3}, []int64{2})) // [B, H, Q, Dv]
		o := f.add(f.dot(at(qd, c), h, b2, b2, []int64{3}, []int64{2}), f.dot(at(attn, c), vNew, b2, b2, []int64{3}, []int64{2}))
		outs[c] = f.reshape(o, B, H, 1, Q, Dv)
		dc := at(chunkDecay, c) // [B, H] or [B, H, Dk]: the state's rows decay by channel
		h = f.add(f.mul(h, f.broadcastDims(dc, h.Type, lastDims[:dc.Type.Rank()]...)), f.dot(at(kd, c), vNew, b2, b2, []int64{2}, []int64{2}))
	}
	f.writeState(n, "gdn", h)
	y := outs[0]
	if C > 1 {
		y = f.concat(2, outs...)
	}
	y = f.transpose(f.reshape(y, B, H, C*Q, Dv), 0, 2, 1, 3) // [B, C·Q, H, Dv]
	if C*Q != S {
		y = f.sliceDim(y, 1, 0, S)
	}
	return y
}
