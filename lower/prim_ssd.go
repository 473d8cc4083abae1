package lower

import (
	"fmt"
	"math"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// The Mamba2 state-space dual (SSD) scan and the gated RMSNorm that
// follows it (Mamba2, Bamba, Granite-4.0-H, Nemotron-H, Falcon-H1). The
// scan's recurrent state is [heads, head_dim, state] f32 per sequence
// (state.go); prefill is the chunked, matmul-shaped form (no loop over
// tokens), decode the one-step recurrence.

// inferSSDScan: x [batch, seq, heads·head_dim]; dt [batch, seq, heads];
// b, c [batch, seq, groups·state]; <module>.A_log, <module>.D and
// <module>.dt_bias [heads] (none with decay: the rates are the call's);
// a recurrent state [heads, head_dim, state].
func inferSSDScan(n *ir.Node, a *SSDScanAttrs) error {
	H, G := a.Heads, a.Groups
	if H < 1 || G < 1 || H%G != 0 {
		return fmt.Errorf("heads %d (num_heads / mamba_n_heads) must be a positive multiple of groups %d (n_groups / mamba_n_groups)", H, G)
	}
	if a.Chunk < 1 {
		return fmt.Errorf("chunk %d (chunk_size) must be at least 1", a.Chunk)
	}
	x, dt, b, c := n.Args[0].Type, n.Args[1].Type, n.Args[2].Type, n.Args[3].Type
	d := lastDim(x)
	if len(x.Shape) != 3 || d <= 0 || d%H != 0 {
		return fmt.Errorf("x must be [batch, seq, heads·head_dim] with heads %d, got %s", H, x)
	}
	if len(dt.Shape) != 3 || !dt.Shape[:2].Equal(x.Shape[:2]) || lastDim(dt) != H {
		return fmt.Errorf("dt must be [batch, seq, heads %d] beside x %s, got %s", H, x, dt)
	}
	gn := lastDim(b)
	if len(b.Shape) != 3 || gn <= 0 || gn%G != 0 || !b.Shape[:2].Equal(x.Shape[:2]) || !c.Shape.Equal(b.Shape) {
		return fmt.Errorf("b and c must be [batch, seq, groups %d · state] alike, got b %s, c %s (x %s)", G, b, c, x)
	}
	switch {
	case a.Decay == nil:
		n.Weights = []ir.Weight{
			{Name: n.Module + ".A_log", Shape: []int64{H}},
			{Name: n.Module + ".D", Shape: []int64{H}},
			{Name: n.Module + ".dt_bias", Shape: []int64{H}},
		}
	case int64(len(a.Decay)) != H:
		return fmt.Errorf("decay must hold one rate per head (%d), got %d", H, len(a.Decay))
	case a.DtMin != nil || a.DtMax != nil:
		return fmt.Errorf("decay takes dt as given: no dt_min or dt_max with it")
	}
	n.States = []ir.State{{Kind: ir.Recurrent, Name: "ssm", Shape: []int64{H, d / H, gn / G}}}
	n.Type = x
	return nil
}

// lowerSSDScan follows Mamba2Mixer.forward's torch path
// (models/mamba2/modeling_mamba2.py) in f32: A = −exp(A_log) per head,
// dt = softplus(dt + dt_bias), B and C shared by the heads of a group.
// Decode (one token a row) is mamba2_selective_state_update:
// h = exp(dt·A)·h + (dt·B)·x, y = h·C + D·x (no dt clamp there, as in
// HF). Prefill is mamba2_chunk_scan with dt clamped to time_step_limit:
// per chunk of `chunk` tokens the quadratic (attention-like) term
// (C·Bᵀ ∘ exp(segsum(A·dt)))·(x·dt), the chunk's end states, the
// recurrence between chunks as one matmul over chunk totals, and the
// carried states read through C (cumulative sums by cumsumLast). Tokens past the row's length get dt = 0,
// which leaves the state as it was, so the state written is the one after
// the last real token. With decay (MiniMax's lightning attention) A is the
// call's −decay, dt is used as it comes and there is no D skip.
func lowerSSDScan(f *fn, n *ir.Node, a *SSDScanAttrs) codegen.Value {
	x, dtIn, bm, cm := f.arg(n, 0), f.arg(n, 1), f.arg(n, 2), f.arg(n, 3)
	B, S, HP := x.Type.Shape[0], x.Type.Shape[1], x.Type.Shape[2]
	H, G := a.Heads, a.Groups
	P, N, R := HP/H, bm.Type.Shape[2]/G, H/G
	if a.Decay != nil { // lightning attention: A = −decay, dt as given, no skip
		neg := make([]float64, len(a.Decay))
		for i, v := range a.Decay {
			neg[i] = -v
		}
		A := f.constF32s(neg)
		return f.reshape(f.ssdScan(n, x, dtIn, bm, cm, A, f.readState(n, "ssm"), a, H, G, P, N, R), B, S, HP)
	}
	A := f.unary("stablehlo.negate", f.unary("stablehlo.exponential", f.weight(n.Weights[0].Name))) // [H]
	Dw := f.weight(n.Weights[1].Name)
	dt := f.softplus(f.add(dtIn, f.broadcastTrailing(f.weight(n.Weights[2].Name), dtIn.Type))) // [B, S, H]
	h0 := f.readState(n, "ssm")                                                                // [B, H, P, N]
	skip := f.mul(f.reshape(x, B, S, H, P), f.broadcastDims(Dw, codegen.T("f32", B, S, H, P), 2))
	y := f.ssdScan(n, x, dt, bm, cm, A, h0, a, H, G, P, N, R)
	return f.reshape(f.add(y, skip), B, S, HP)
}

// ssdScan is the decode step (one token a row) or the chunked prefill
// from the carried state h0: y [B, S, H, P] without the D skip.
func (f *fn) ssdScan(n *ir.Node, x, dt, bm, cm, A, h0 codegen.Value, a *SSDScanAttrs, H, G, P, N, R int64) codegen.Value {
	if x.Type.Shape[1] == 1 {
		return f.ssdStep(n, x, dt, bm, cm, A, h0, H, G, P, N, R)
	}
	return f.ssdChunked(n, x, dt, bm, cm, A, h0, a, H, G, P, N, R)
}

// headsOf expands a per-group tensor v [..., G, N] (group axis at gAxis,
// everything after it kept) to per-head [..., G·R, N]: head h reads group
// h / R (torch's repeat_interleave over the heads).
func (f *fn) headsOf(v codegen.Value, gAxis int, R int64) codegen.Value {
	if R == 1 {
		return v
	}
	sh := v.Type.Shape
	out := append(append(append([]int64(nil), sh[:gAxis+1]...), R), sh[gAxis+1:]...)
	dims := make([]int64, len(sh))
	for i := range sh {
		dims[i] = int64(i)
		if i > gAxis {
			dims[i]++
		}
	}
	e := f.broadcastDims(v, codegen.T("f32", out...), dims...)
	merged := append(append(append([]int64(nil), sh[:gAxis]...), sh[gAxis]*R), sh[gAxis+1:]...)
	return f.reshape(e, merged...)
}

// ssdStep is one token per row: mamba2_selective_state_update. Returns
// y [B, 1, H, P] without the D skip.
func (f *fn) ssdStep(n *ir.Node, x, dt, bm, cm, A, h codegen.Value, H, G, P, N, R int64) codegen.Value {
	B := x.Type.Shape[0]
	t4 := codegen.T("f32", B, H, P, N)
	dt2 := f.reshape(dt, B, H)
	dA := f.unary("stablehlo.exponential", f.mul(dt2, f.broadcastDims(A, dt2.Type, 1))) // [B, H]
	bh := f.headsOf(f.reshape(bm, B, G, N), 1, R)                                       // [B, H, N]
	ch := f.headsOf(f.reshape(cm, B, G, N), 1, R)
	dB := f.mul(f.broadcastDims(dt2, bh.Type, 0, 1), bh)                                                // [B, H, N]
	dBx := f.mul(f.broadcastDims(dB, t4, 0, 1, 3), f.broadcastDims(f.reshape(x, B, H, P), t4, 0, 1, 2)) // [B, H, P, N]
	h = f.add(f.mul(h, f.broadcastDims(dA, t4, 0, 1)), dBx)
	f.writeState(n, "ssm", h)
	y := f.dot(h, ch, []int64{0, 1}, []int64{0, 1}, []int64{3}, []int64{2}) // [B, H, P]
	return f.reshape(y, B, 1, H, P)
}

// ssdChunked is mamba2_chunk_scan over a prefill chunk of S tokens in
// chunks of Q = min(chunk, S) (the padded tail has dt = 0). Returns
// y [B, S, H, P] without the D skip.
func (f *fn) ssdChunked(n *ir.Node, x, dt, bm, cm, A, h0 codegen.Value, a *SSDScanAttrs, H, G, P, N, R int64) codegen.Value {
	B, S := x.Type.Shape[0], x.Type.Shape[1]
	if a.DtMin != nil && !math.IsInf(*a.DtMin, 0) {
		dt = f.binary("stablehlo.maximum", dt, f.splat(*a.DtMin, dt.Type))
	}
	if a.DtMax != nil && !math.IsInf(*a.DtMax, 0) {
		dt = f.binary("stablehlo.minimum", dt, f.splat(*a.DtMax, dt.Type))
	}
	real := f.compare("LT", f.iota(codegen.T("i32", B, S, H), 1), f.broadcast(f.rowLen(0), codegen.T("i32", B, S, H)))
	dt = f.selectOp(real, dt, f.splat(0, dt.Type))

	Q := min(a.Chunk, S)
	C := (S + Q - 1) / Q
	pad := func(v codegen.Value) codegen.Value { // [B, S, ...] → [B, C·Q, ...] with zeros
		if C*Q == S {
			return v
		}
		sh := append([]int64(nil), v.Type.Shape...)
		sh[1] = C*Q - S
		return f.concat(1, v, f.splat(0, codegen.T("f32", sh...)))
	}
	x4 := f.reshape(pad(x), B, C, Q, H, P)
	dtp := pad(dt)                                                                                     // [B, CQ, H]
	xdt := f.mul(x4, f.broadcastDims(f.reshape(dtp, B, C, Q, H), x4.Type, 0, 1, 2, 3))                 // [B, C, Q, H, P]
	adt := f.transpose(f.reshape(f.mul(dtp, f.broadcastDims(A, dtp.Type, 2)), B, C, Q, H), 0, 3, 1, 2) // [B, H, C, Q]
	b5 := f.reshape(pad(bm), B, C, Q, G, N)
	c5 := f.reshape(pad(cm), B, C, Q, G, N)

	acum := f.cumsumLast(adt) // [B, H, C, Q]: A·dt summed over each chunk up to each token

	// 1. Within each chunk: L[l, s] = exp(acum[l] − acum[s]) for s <= l, else 0.
	tl := codegen.T("f32", B, H, C, Q, Q)
	seg := f.sub(f.broadcastDims(acum, tl, 0, 1, 2, 3), f.broadcastDims(acum, tl, 0, 1, 2, 4))
	causal := f.compare("GE", f.iota(tl.WithElem("i32"), 3), f.iota(tl.WithElem("i32"), 4))
	L := f.maskedExp(causal, seg)
	gg := f.dot(c5, b5, []int64{0, 1, 3}, []int64{0, 1, 3}, []int64{4}, []int64{4}) // [B, C, G, Ql, Qs]
	gh := f.headsOf(gg, 2, R)                                                       // [B, C, H, Ql, Qs]
	M := f.mul(gh, f.transpose(L, 0, 2, 1, 3, 4))
	yDiag := f.dot(M, xdt, []int64{0, 1, 2}, []int64{0, 1, 3}, []int64{4}, []int64{2}) // [B, C, H, Ql, P]

	// 2. Each chunk's end state from its own tokens.
	last := f.reshape(f.sliceDim(acum, 3, Q-1, Q), B, H, C)
	decay := f.unary("stablehlo.exponential", f.sub(f.broadcastDims(last, acum.Type, 0, 1, 2), acum)) // [B, H, C, Q]
	bh := f.headsOf(b5, 3, R)                                                                         // [B, C, Q, H, N]
	bDecay := f.mul(bh, f.broadcastDims(decay, bh.Type, 0, 3, 1, 2))
	states := f.transpose(f.dot(bDecay, xdt, []int64{0, 1, 3}, []int64{0, 1, 3}, []int64{2}, []int64{2}), 0, 1, 2, 4, 3) // [B, C, H, P, N]

	// 3. Between chunks: start state of chunk c = Σ_z exp(tot[z+1..c]) · states_z,
	// z = 0 the carried state.
	all := f.concat(1, f.reshape(h0, B, 1, H, P, N), states) // [B, C+1, H, P, N]
	tot := f.concat(2, f.splat(0, codegen.T("f32", B, H, 1)), last)
	ccum := f.cumsumLast(tot) // [B, H, C+1]
	tz := codegen.T("f32", B, H, C+1, C+1)
	cseg := f.sub(f.broadcastDims(ccum, tz, 0, 1, 2), f.broadcastDims(ccum, tz, 0, 1, 3))
	ccausal := f.compare("GE", f.iota(tz.WithElem("i32"), 2), f.iota(tz.WithElem("i32"), 3))
	decayChunk := f.maskedExp(ccausal, cseg)
	starts := f.dot(decayChunk, all, []int64{0, 1}, []int64{0, 2}, []int64{3}, []int64{1}) // [B, H, C+1, P, N]
	f.writeState(n, "ssm", f.reshape(f.sliceDim(starts, 2, C, C+1), B, H, P, N))
	prev := f.sliceDim(starts, 2, 0, C) // [B, H, C, P, N]

	// 4. The carried states read through C, decayed to each position.
	ch := f.headsOf(c5, 3, R)                                                           // [B, C, Q, H, N]
	yOff := f.dot(ch, prev, []int64{0, 1, 3}, []int64{0, 2, 1}, []int64{4}, []int64{4}) // [B, C, H, Ql, P]
	yOff = f.mul(yOff, f.broadcastDims(f.unary("stablehlo.exponential", acum), yOff.Type, 0, 2, 1, 3))
	y := f.reshape(f.transpose(f.add(yDiag, yOff), 0, 1, 3, 2, 4), B, C*Q, H, P)
	if C*Q != S {
		y = f.sliceDim(y, 1, 0, S)
	}
	return y
}

// cumsumLast is the inclusive prefix sum over x's last axis, in log₂(n)
// shifted adds (Hillis–Steele). Not a product with a constant triangle of
// ones: IREE 3.13 at O3 miscompiled that dot_general (the mamba2
// prefill came out wrong by up to 70 in the cumulative sums).
func (f *fn) cumsumLast(x codegen.Value) codegen.Value {
	r := x.Type.Rank()
	n := x.Type.Shape[r-1]
	for k := int64(1); k < n; k *= 2 {
		sh := append([]int64(nil), x.Type.Shape...)
		sh[r-1] = k
		shifted := f.concat(int64(r-1), f.splat(0, codegen.T("f32", sh...)), f.sliceDim(x, r-1, 0, n-k))
		x = f.add(x, shifted)
	}
	return x
}

// maskedExp is exp(x) where mask holds and 0 elsewhere. The masked-out x
// (a segment sum above the diagonal, positive) never reaches exp: IREE's
// O3 exp is a polynomial that is not exact for arguments far outside f32's
// range, and exp(-1e30) came out huge, not 0.
func (f *fn) maskedExp(mask, x codegen.Value) codegen.Value {
	zero := f.splat(0, x.Type)
	return f.selectOp(mask, f.unary("stablehlo.exponential", f.selectOp(mask, x, zero)), zero)
}

// inferRMSNormGated: x, gate [..., d] alike, weight [d], d a multiple of
// groups.
func inferRMSNormGated(n *ir.Node, a *RMSNormGatedAttrs) error {
	x, g := n.Args[0].Type, n.Args[1].Type
	d := lastDim(x)
	if a.Groups < 1 || d <= 0 || d%a.Groups != 0 {
		return fmt.Errorf("the width %d of x must be a multiple of groups %d (n_groups)", d, a.Groups)
	}
	if !g.Shape.Equal(x.Shape) {
		return fmt.Errorf("gate %s must have x's shape %s", g, x)
	}
	if !(a.Eps >= 0) {
		return fmt.Errorf("eps %g must be >= 0", a.Eps)
	}
	n.Weights = []ir.Weight{{Name: n.Module + ".weight", Shape: []int64{d}}}
	n.Type = x
	return nil
}

// lowerRMSNormGated follows MambaRMSNormGated.forward
// (models/mamba2/modeling_mamba2.py) in f32: x · silu(gate), RMS-normalised
// over each of `groups` equal slices of the last dimension, times w;
// norm_before_gate (FalconH1RMSNormGated) gates after the weight instead.
func lowerRMSNormGated(f *fn, n *ir.Node, a *RMSNormGatedAttrs) codegen.Value {
	x, gate := f.arg(n, 0), f.arg(n, 1)
	sh := x.Type.Shape
	d := sh[len(sh)-1]
	silu := activations["silu"]
	if !a.NormBeforeGate {
		x = f.mul(x, silu(f, gate))
	}
	grouped := append(append([]int64(nil), sh[:len(sh)-1]...), a.Groups, d/a.Groups)
	y := f.reshape(f.rmsNormalize(f.reshape(x, grouped...), a.Eps), sh...)
	y = f.mul(f.broadcastTrailing(f.weight(n.Weights[0].Name), y.Type), y)
	if a.NormBeforeGate {
		y = f.mul(y, silu(f, gate))
	}
	return y
}
