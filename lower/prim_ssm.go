package lower

import (
	"fmt"
	"sort"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// State-space primitives: the causal depthwise convolution with its
// carried window and the Mamba1 selective scan with its recurrent state.
// Both declare their per-sequence state (ir.Node.States) and read and
// write it through state.go, which keeps the slot contract (lower.go).

// inferConv1d: x [batch, seq, channels], weight [channels, 1, kernel]
// (torch.nn.Conv1d with groups = channels), a window of the last
// kernel−1 inputs as state.
func inferConv1d(n *ir.Node, a *Conv1dAttrs) error {
	if a.Kernel < 1 {
		return fmt.Errorf("kernel %d must be at least 1 (conv_kernel / d_conv)", a.Kernel)
	}
	if a.Act != "" {
		if _, ok := activations[a.Act]; !ok {
			known := make([]string, 0, len(activations))
			for k := range activations {
				known = append(known, k)
			}
			sort.Strings(known)
			return fmt.Errorf("act %q is not supported (supported: %v)", a.Act, known)
		}
	}
	x := n.Args[0].Type
	c := lastDim(x)
	if len(x.Shape) != 3 || c <= 0 {
		return fmt.Errorf("x must be [batch, seq, channels] with concrete channels, got %s", x)
	}
	n.Weights = []ir.Weight{{Name: n.Module + ".weight", Shape: []int64{c, 1, a.Kernel}}}
	if a.Bias {
		n.Weights = append(n.Weights, ir.Weight{Name: n.Module + ".bias", Shape: []int64{c}})
	}
	if a.Kernel > 1 {
		n.States = []ir.State{{Kind: ir.Window, Name: "conv", Shape: []int64{a.Kernel - 1, c}}}
	}
	n.Type = x
	return nil
}

// lowerConv1d follows MambaMixer.slow_forward's convolution: the call's
// inputs after the carried window (HF's conv_state, zeros at position 0),
// out[t] = Σ_j w[:, 0, j] · in[t + j] (+ b), then act; the new window is
// the last kernel−1 inputs up to the row's last real token.
func lowerConv1d(f *fn, n *ir.Node, a *Conv1dAttrs) codegen.Value {
	x := f.arg(n, 0) // [B, S, C]
	B, S, C := x.Type.Shape[0], x.Type.Shape[1], x.Type.Shape[2]
	k := a.Kernel
	in := x
	if k > 1 {
		in = f.concat(1, f.readState(n, "conv"), x) // [B, k-1+S, C]
	}
	w := f.reshape(f.weight(n.Weights[0].Name), C, k)
	var out codegen.Value
	for j := int64(0); j < k; j++ {
		tap := f.broadcastTrailing(f.reshape(f.sliceDim(w, 1, j, j+1), C), x.Type)
		term := f.mul(f.sliceDim(in, 1, j, j+S), tap)
		if j == 0 {
			out = term
		} else {
			out = f.add(out, term)
		}
	}
	if a.Bias {
		out = f.add(out, f.broadcastTrailing(f.weight(n.Weights[1].Name), x.Type))
	}
	if a.Act != "" {
		out = activations[a.Act](f, out)
	}
	if k > 1 {
		win := make([]codegen.Value, B)
		zero := f.constI32(0)
		sizes := []int64{1, k - 1, C}
		for b := int64(0); b < B; b++ {
			row := in
			if B > 1 {
				row = f.sliceDim(in, 0, b, b+1)
			}
			if S == 1 { // decode: one real token, the window moves by one
				win[b] = f.sliceDim(row, 1, 1, k)
				continue
			}
			win[b] = f.Op("stablehlo.dynamic_slice", row.Type.With(sizes...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(sizes))}, row, zero, f.rowLen(int(b)), zero)
		}
		next := win[0]
		if B > 1 {
			next = f.concat(0, win...)
		}
		f.writeState(n, "conv", next)
	}
	return out
}

// inferSelectiveScan: x, dt [batch, seq, d]; b, c [batch, seq, state];
// <module>.A_log [d, state] and <module>.D [d]; a recurrent state
// [d, state].
func inferSelectiveScan(n *ir.Node) error {
	x, dt, b, c := n.Args[0].Type, n.Args[1].Type, n.Args[2].Type, n.Args[3].Type
	if len(x.Shape) != 3 || lastDim(x) <= 0 {
		return fmt.Errorf("x must be [batch, seq, d] with concrete d, got %s", x)
	}
	if !dt.Shape.Equal(x.Shape) {
		return fmt.Errorf("dt %s must have x's shape %s", dt, x)
	}
	N := lastDim(b)
	if len(b.Shape) != 3 || N <= 0 || !b.Shape[:2].Equal(x.Shape[:2]) || !c.Shape.Equal(b.Shape) {
		return fmt.Errorf("b and c must be [batch, seq, state] alike, got b %s, c %s (x %s)", b, c, x)
	}
	d := lastDim(x)
	n.Weights = []ir.Weight{{Name: n.Module + ".A_log", Shape: []int64{d, N}}, {Name: n.Module + ".D", Shape: []int64{d}}}
	n.States = []ir.State{{Kind: ir.Recurrent, Name: "ssm", Shape: []int64{d, N}}}
	n.Type = x
	return nil
}

// lowerSelectiveScan follows MambaMixer.slow_forward in f32: A =
// −exp(A_log), dA = exp(A · dt), dBu = (dt · b) · x, then token by token
// h = dA_t · h + dBu_t and y_t = h · c_t (a dot over the state), and
// y + x · D. In a prefill chunk the tokens past the row's length leave h
// as it is (dA = 1, dBu = 0), so the state written is the one after the
// last real token.
func lowerSelectiveScan(f *fn, n *ir.Node) codegen.Value {
	x, dt, bm, cm := f.arg(n, 0), f.arg(n, 1), f.arg(n, 2), f.arg(n, 3)
	B, S, D := x.Type.Shape[0], x.Type.Shape[1], x.Type.Shape[2]
	N := bm.Type.Shape[2]
	t4 := codegen.T("f32", B, S, D, N)
	A := f.unary("stablehlo.negate", f.unary("stablehlo.exponential", f.weight(n.Weights[0].Name))) // [D, N]
	dt4 := f.broadcastDims(dt, t4, 0, 1, 2)
	dA := f.unary("stablehlo.exponential", f.mul(f.broadcastDims(A, t4, 2, 3), dt4))
	dBu := f.mul(f.mul(dt4, f.broadcastDims(bm, t4, 0, 1, 3)), f.broadcastDims(x, t4, 0, 1, 2))
	if S > 1 {
		real := f.compare("LT", f.iota(codegen.T("i32", B, S), 1), f.broadcast(f.rowLen(0), codegen.T("i32", B, S)))
		real4 := f.broadcastDims(real, t4.WithElem("i1"), 0, 1)
		dA = f.selectOp(real4, dA, f.splat(1, t4))
		dBu = f.selectOp(real4, dBu, f.splat(0, t4))
	}
	h := f.readState(n, "ssm") // [B, D, N]
	ys := make([]codegen.Value, S)
	for t := int64(0); t < S; t++ {
		step := func(v codegen.Value) codegen.Value { return f.reshape(f.sliceDim(v, 1, t, t+1), B, D, N) }
		h = f.add(f.mul(step(dA), h), step(dBu))
		ct := f.reshape(f.sliceDim(cm, 1, t, t+1), B, N)
		ys[t] = f.reshape(f.dot(h, ct, []int64{0}, []int64{0}, []int64{2}, []int64{1}), B, 1, D)
	}
	f.writeState(n, "ssm", h)
	y := ys[0]
	if S > 1 {
		y = f.concat(1, ys...)
	}
	return f.add(y, f.mul(x, f.broadcastTrailing(f.weight(n.Weights[1].Name), x.Type)))
}
