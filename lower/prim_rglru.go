package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// The real-gated linear recurrent unit (RG-LRU) of Griffin / RecurrentGemma
// (RecurrentGemmaRglru, models/recurrent_gemma/modeling_recurrent_gemma.py):
// a diagonal linear recurrence whose decay and input gates are
// block-diagonal projections of the input. Its recurrent state is one
// vector [width] f32 per sequence (state.go); prefill is a log-depth scan
// over the chunk's tokens, decode _rnn_scan's one step.

// inferRGLRU: x [batch, seq, width], width a multiple of heads;
// <module>.recurrent_param [width], the gates' weights [heads, width/heads,
// width/heads] and biases [heads, width/heads]; a recurrent state [width].
func inferRGLRU(n *ir.Node, a *RGLRUAttrs) error {
	x := n.Args[0].Type
	w := lastDim(x)
	if len(x.Shape) != 3 || w <= 0 {
		return fmt.Errorf("x must be [batch, seq, width] with concrete width, got %s", x)
	}
	if a.Heads < 1 || w%a.Heads != 0 {
		return fmt.Errorf("heads %d (num_attention_heads) must be positive and divide the width %d (lru_width)", a.Heads, w)
	}
	H, bw := a.Heads, w/a.Heads
	n.Weights = []ir.Weight{
		{Name: n.Module + ".recurrent_param", Shape: []int64{w}},
		{Name: n.Module + ".input_gate_weight", Shape: []int64{H, bw, bw}},
		{Name: n.Module + ".input_gate_bias", Shape: []int64{H, bw}},
		{Name: n.Module + ".recurrent_gate_weight", Shape: []int64{H, bw, bw}},
		{Name: n.Module + ".recurrent_gate_bias", Shape: []int64{H, bw}},
	}
	n.States = []ir.State{{Kind: ir.Recurrent, Name: "rglru", Shape: []int64{w}}}
	n.Type = x
	return nil
}

// lowerRGLRU follows RecurrentGemmaRglru.forward in f32: the gates
// i = sigmoid(x·W_i + b_i) and r = sigmoid(x·W_r + b_r) per block of
// width/heads channels (torch.baddbmm over the heads), log a = −8·r·
// softplus(recurrent_param), a = exp(log a), the input i·x times
// √(1 − exp(2·log a)); a token at position 0 resets (a = 0, factor 1).
// Then _rnn_scan's h_t = a_t·h_{t−1} + b_t. Decode is that one step.
// Prefill scans the chunk in ⌈log₂ S⌉ rounds (Hillis–Steele): each token
// holds the map h ↦ A·h + B of the tokens up to it, composed with the one
// d tokens earlier, (A, B) ← (A·A′, A·B′ + B); then h_t = A_t·h₀ + B_t.
// Tokens past the row's length get the identity map (a = 1, b = 0), so
// the state written, the last token's h, is the one after the last real
// token.
func lowerRGLRU(f *fn, n *ir.Node, a *RGLRUAttrs) codegen.Value {
	x := f.arg(n, 0) // [B, S, W]
	B, S, W := x.Type.Shape[0], x.Type.Shape[1], x.Type.Shape[2]
	H := a.Heads
	bw := W / H
	xh := f.reshape(x, B, S, H, bw)
	gate := func(w, b string) codegen.Value { // sigmoid(x_h · W_h + b_h), [B, S, W]
		y := f.transpose(f.dot(xh, f.weight(w), []int64{2}, []int64{0}, []int64{3}, []int64{1}), 1, 2, 0, 3) // [B, S, H, bw]
		y = f.add(y, f.broadcastDims(f.weight(b), y.Type, 2, 3))
		return f.unary("stablehlo.logistic", f.reshape(y, B, S, W))
	}
	ig := gate(n.Weights[1].Name, n.Weights[2].Name)
	rg := gate(n.Weights[3].Name, n.Weights[4].Name)
	sp := f.broadcastTrailing(f.softplus(f.weight(n.Weights[0].Name)), x.Type)
	logA := f.mul(f.mul(f.splat(-8, x.Type), rg), sp)
	decay := f.unary("stablehlo.exponential", logA)
	mult := f.unary("stablehlo.sqrt", f.sub(f.splat(1, x.Type), f.unary("stablehlo.exponential", f.mul(f.splat(2, x.Type), logA))))
	reset := f.broadcastDims(f.compare("EQ", f.positions, f.broadcast(f.constI32(0), f.positions.Type)), x.Type.WithElem("i1"), 0, 1)
	mult = f.selectOp(reset, f.splat(1, x.Type), mult)
	decay = f.selectOp(reset, f.splat(0, x.Type), decay)
	in := f.mul(f.mul(x, ig), mult)
	if S > 1 {
		real := f.compare("LT", f.iota(codegen.T("i32", B, S), 1), f.broadcast(f.rowLen(0), codegen.T("i32", B, S)))
		real3 := f.broadcastDims(real, x.Type.WithElem("i1"), 0, 1)
		decay = f.selectOp(real3, decay, f.splat(1, x.Type))
		in = f.selectOp(real3, in, f.splat(0, x.Type))
	}
	for d := int64(1); d < S; d *= 2 { // inclusive scan of (decay, in) along the tokens
		shifted := func(v codegen.Value, pad float64) codegen.Value {
			return f.concat(1, f.splat(pad, x.Type.With(B, d, W)), f.sliceDim(v, 1, 0, S-d))
		}
		in = f.add(f.mul(decay, shifted(in, 0)), in)
		decay = f.mul(decay, shifted(decay, 1))
	}
	h0 := f.broadcastDims(f.readState(n, "rglru"), x.Type, 0, 2) // [B, W] over the tokens
	h := f.add(f.mul(decay, h0), in)
	f.writeState(n, "rglru", f.reshape(f.sliceDim(h, 1, S-1, S), B, W))
	return h
}
