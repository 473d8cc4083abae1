package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// RWKV-7's two stateful pieces: the token shift (the previous token's
// input, a window of one token carried as state) and the generalized delta
// rule with a diagonal-plus-low-rank transition (the "wkv7" kernel). Both
// keep their per-sequence state through state.go.

// inferTokenShift: x [batch, seq, channels] → the same shape; a window of
// the last input as state.
func inferTokenShift(n *ir.Node) error {
	x := n.Args[0].Type
	c := lastDim(x)
	if len(x.Shape) != 3 || c <= 0 {
		return fmt.Errorf("x must be [batch, seq, channels] with concrete channels, got %s", x)
	}
	n.States = []ir.State{{Kind: ir.Window, Name: "shift", Shape: []int64{1, c}}}
	n.Type = x
	return nil
}

// lowerTokenShift is RWKV's time shift: out[t] = x[t−1], the token before
// the call's first from the carried window (zeros at position 0); the new
// window is the row's last real token.
func lowerTokenShift(f *fn, n *ir.Node) codegen.Value {
	x := f.arg(n, 0) // [B, S, C]
	B, S, C := x.Type.Shape[0], x.Type.Shape[1], x.Type.Shape[2]
	in := f.concat(1, f.readState(n, "shift"), x) // [B, 1+S, C]
	out := f.sliceDim(in, 1, 0, S)
	win := make([]codegen.Value, B)
	zero := f.constI32(0)
	sizes := []int64{1, 1, C}
	for b := int64(0); b < B; b++ {
		row := in
		if B > 1 {
			row = f.sliceDim(in, 0, b, b+1)
		}
		if S == 1 { // decode: the one token is the new window
			win[b] = f.sliceDim(row, 1, 1, 2)
			continue
		}
		win[b] = f.Op("stablehlo.dynamic_slice", row.Type.With(sizes...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(sizes))}, row, zero, f.rowLen(int(b)), zero)
	}
	next := win[0]
	if B > 1 {
		next = f.concat(0, win...)
	}
	f.writeState(n, "shift", next)
	return out
}

// inferDPLRDeltaRule: r, log_w, k, a, b [batch, seq, heads, d_k]; v [batch,
// seq, heads, d_v]; a recurrent state [heads, d_k, d_v]; the result
// [batch, seq, heads, d_v].
func inferDPLRDeltaRule(n *ir.Node, a *DPLRDeltaRuleAttrs) error {
	names := []string{"r", "log_w", "k", "v", "a", "b"}
	for i, arg := range n.Args {
		t := arg.Type
		if len(t.Shape) != 4 || t.Shape[0] != ir.Batch || t.Shape[1] != ir.Seq || t.Shape[2] <= 0 || t.Shape[3] <= 0 {
			return fmt.Errorf("%s must be [batch, seq, heads, head_dim], got %s", names[i], t)
		}
	}
	r, v := n.Args[0].Type, n.Args[3].Type
	for _, i := range []int{1, 2, 4, 5} {
		if !n.Args[i].Type.Shape.Equal(r.Shape) {
			return fmt.Errorf("%s %s must have r's shape %s", names[i], n.Args[i].Type, r)
		}
	}
	if v.Shape[2] != r.Shape[2] {
		return fmt.Errorf("v has %d heads, r %d: they must agree", v.Shape[2], r.Shape[2])
	}
	if a.Chunk < 1 {
		return fmt.Errorf("chunk %d must be at least 1", a.Chunk)
	}
	n.States = []ir.State{{Kind: ir.Recurrent, Name: "wkv", Shape: []int64{int64(r.Shape[2]), int64(r.Shape[3]), int64(v.Shape[3])}}}
	n.Type = ir.Type{Shape: ir.Shape{ir.Batch, ir.Seq, v.Shape[2], v.Shape[3]}, DType: ir.F32}
	return nil
}

// lowerDPLRDeltaRule is RWKV-7's wkv7 recurrence (mlx-lm rwkv7.py's
// _wkv7_step_ops, wkv7_kernel), kept transposed per head as M = Sᵀ
// [d_k, d_v], w_t = exp(log_w_t): u_t = Mᵀ_{t−1} a_t; M_t =
// diag(w_t)·M_{t−1} + b_t u_tᵀ + k_t v_tᵀ; out_t = Mᵀ_t r_t. Decode is that
// step; prefill the chunked form (dplrChunked). Tokens past the row's
// length get log_w = 0 and a = b = k = v = 0, which leave the state as it
// was.
func lowerDPLRDeltaRule(f *fn, n *ir.Node, a *DPLRDeltaRuleAttrs) codegen.Value {
	r, w, k, v, av, bv := f.arg(n, 0), f.arg(n, 1), f.arg(n, 2), f.arg(n, 3), f.arg(n, 4), f.arg(n, 5)
	S := r.Type.Shape[1]
	h0 := f.readState(n, "wkv") // [B, H, Dk, Dv]
	if S == 1 {
		return f.dplrStep(n, r, w, k, v, av, bv, h0)
	}
	return f.dplrChunked(n, r, w, k, v, av, bv, h0, a.Chunk)
}

// dplrStep is one token per row. Returns [B, 1, H, Dv].
func (f *fn) dplrStep(n *ir.Node, r, w, k, v, a, b, h codegen.Value) codegen.Value {
	B, H, Dk, Dv := r.Type.Shape[0], r.Type.Shape[2], r.Type.Shape[3], v.Type.Shape[3]
	t4 := h.Type
	vec := func(x codegen.Value, d int64) codegen.Value { return f.reshape(x, B, H, d) }
	b2 := []int64{0, 1}
	u := f.dot(h, vec(a, Dk), b2, b2, []int64{2}, []int64{2}) // [B, H, Dv]
	h = f.mul(h, f.broadcastDims(f.unary("stablehlo.exponential", vec(w, Dk)), t4, 0, 1, 2))
	h = f.add(h, f.mul(f.broadcastDims(vec(b, Dk), t4, 0, 1, 2), f.broadcastDims(u, t4, 0, 1, 3)))
	h = f.add(h, f.mul(f.broadcastDims(vec(k, Dk), t4, 0, 1, 2), f.broadcastDims(vec(v, Dv), t4, 0, 1, 3)))
	f.writeState(n, "wkv", h)
	y := f.dot(h, vec(r, Dk), b2, b2, []int64{2}, []int64{2}) // [B, H, Dv]
	return f.reshape(y, B, 1, H, Dv)
}

// dplrChunked is the recurrence over a prefill call of S tokens in chunks
// of Q = min(chunk, S) (the tail padded with log_w = 0, a = b = k = v = 0).
// Within a chunk, with c_t = Σ_{s≤t} log_w_s per key channel (c⁻_t = c_t −
// log_w_t) and M₀ the state entering it, unrolling gives
//
//	u_t = (a_t∘e^{c⁻_t})ᵀM₀ + Σ_{j<t} P[t,j] u_j + Σ_{j<t} K[t,j] v_j,
//	P[t,j] = Σ_d a_td b_jd e^{c⁻_td − c_jd},  K[t,j] likewise with k_j,
//
// a unit lower triangular system (I − P)·U = A'M₀ + K·V, solved as
// Π_m (I + P^(2^m)) applied to [K·V | A'] (P is nilpotent; no token loop),
// so that U = U₀ + W·M₀. Then chunk by chunk (a loop over the S/Q chunks):
// out = (r∘e^c)ᵀM₀ + Rb·U + Rk·V with Rb[t,j] = Σ_d r_td b_jd e^{c_td −
// c_jd} (j ≤ t) and Rk with k_j; M = e^{c_Q}∘M₀ + (b∘e^{c_Q − c})ᵀU +
// (k∘e^{c_Q − c})ᵀV. Every exponent is a sum of log_w ≤ 0 over a span of
// the chunk. Returns [B, S, H, Dv].
func (f *fn) dplrChunked(n *ir.Node, r, w, k, v, a, b, h codegen.Value, chunk int64) codegen.Value {
	B, S, H, Dk, Dv := r.Type.Shape[0], r.Type.Shape[1], r.Type.Shape[2], r.Type.Shape[3], v.Type.Shape[3]
	real3 := f.compare("LT", f.iota(codegen.T("i32", B, S, H), 1), f.broadcast(f.rowLen(0), codegen.T("i32", B, S, H)))
	mask := func(x codegen.Value) codegen.Value {
		return f.selectOp(f.broadcastDims(real3, x.Type.WithElem("i1"), 0, 1, 2), x, f.splat(0, x.Type))
	}
	lw := mask(w) // 0 past the row's length
	k, v, a, b = mask(k), mask(v), mask(a), mask(b)

	Q := min(chunk, S)
	C := (S + Q - 1) / Q
	chunked := func(x codegen.Value) codegen.Value { // [B, S, H, d] → [B, H, C, Q, d]
		d := x.Type.Shape[3]
		if C*Q != S {
			x = f.concat(1, x, f.splat(0, codegen.T("f32", B, C*Q-S, H, d)))
		}
		return f.reshape(f.transpose(x, 0, 2, 1, 3), B, H, C, Q, d)
	}
	r5, lw5, k5, v5, a5, b5 := chunked(r), chunked(lw), chunked(k), chunked(v), chunked(a), chunked(b)
	cum := f.transpose(f.cumsumLast(f.transpose(lw5, 0, 1, 2, 4, 3)), 0, 1, 2, 4, 3) // [B, H, C, Q, Dk]
	cex := f.sub(cum, lw5)

	t6 := codegen.T("f32", B, H, C, Q, Q, Dk)
	row6, col6 := f.iota(t6.WithElem("i32"), 3), f.iota(t6.WithElem("i32"), 4)
	colCum := f.broadcastDims(cum, t6, 0, 1, 2, 4, 5)
	strict := f.maskedExp(f.compare("GT", row6, col6), f.sub(f.broadcastDims(cex, t6, 0, 1, 2, 3, 5), colCum))
	incl := f.maskedExp(f.compare("GE", row6, col6), f.sub(f.broadcastDims(cum, t6, 0, 1, 2, 3, 5), colCum))
	pairs := func(x, y, decay codegen.Value) codegen.Value { // Σ_d x_i,d · y_j,d · decay[i, j, d]: [B, H, C, Q, Q]
		return f.reduceLast(f.mul(f.mul(f.broadcastDims(x, t6, 0, 1, 2, 3, 5), f.broadcastDims(y, t6, 0, 1, 2, 4, 5)), decay), "stablehlo.add", 0)
	}
	pm, km := pairs(a5, b5, strict), pairs(a5, k5, strict)
	rb, rk := pairs(r5, b5, incl), pairs(r5, k5, incl)

	bat := []int64{0, 1, 2}
	x := f.concat(4, f.dot(km, v5, bat, bat, []int64{4}, []int64{3}), f.mul(a5, f.unary("stablehlo.exponential", cex))) // [B, H, C, Q, Dv+Dk]
	for p, m := pm, int64(1); m < Q; m *= 2 {
		x = f.add(x, f.dot(p, x, bat, bat, []int64{4}, []int64{3}))
		if 2*m < Q {
			p = f.dot(p, p, bat, bat, []int64{4}, []int64{3})
		}
	}
	u0, wm := f.sliceDim(x, 4, 0, Dv), f.sliceDim(x, 4, Dv, Dv+Dk)

	last := f.reshape(f.sliceDim(cum, 3, Q-1, Q), B, H, C, Dk)
	toEnd := f.unary("stablehlo.exponential", f.sub(f.broadcastDims(last, cum.Type, 0, 1, 2, 4), cum)) // e^{c_Q − c_j}
	rd := f.mul(r5, f.unary("stablehlo.exponential", cum))
	bd, kd := f.mul(b5, toEnd), f.mul(k5, toEnd)
	chunkDecay := f.unary("stablehlo.exponential", last) // [B, H, C, Dk]

	at := func(x codegen.Value, c int64) codegen.Value { // chunk c of [B, H, C, ...] → [B, H, ...]
		sh := x.Type.Shape
		return f.reshape(f.sliceDim(x, 2, c, c+1), append([]int64{B, H}, sh[3:]...)...)
	}
	outs := make([]codegen.Value, C)
	b2 := []int64{0, 1}
	for c := int64(0); c < C; c++ {
		u := f.add(at(u0, c), f.dot(at(wm, c), h, b2, b2, []int64{3}, []int64{2})) // [B, H, Q, Dv]
		vc := at(v5, c)
		o := f.add(f.dot(at(rd, c), h, b2, b2, []int64{3}, []int64{2}), f.dot(at(rb, c), u, b2, b2, []int64{3}, []int64{2}))
		o = f.add(o, f.dot(at(rk, c), vc, b2, b2, []int64{3}, []int64{2}))
		outs[c] = f.reshape(o, B, H, 1, Q, Dv)
		h = f.mul(h, f.broadcastDims(at(chunkDecay, c), h.Type, 0, 1, 2))
		h = f.add(h, f.dot(at(bd, c), u, b2, b2, []int64{2}, []int64{2}))
		h = f.add(h, f.dot(at(kd, c), vc, b2, b2, []int64{2}, []int64{2}))
	}
	f.writeState(n, "wkv", h)
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
