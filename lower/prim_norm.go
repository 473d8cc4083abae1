package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// rms_norm(x [..., d], weight [d], eps) → [..., d], following HF
// LlamaRMSNorm.forward: x * rsqrt(mean(x², -1) + eps), then weight * that,
// in f32.
func inferRMSNorm(n *ir.Node, a *RMSNormAttrs) error {
	if eps := a.Eps; !(eps >= 0) {
		return fmt.Errorf("eps %g must be >= 0 (a negative epsilon can make rsqrt's argument negative: NaN)", eps)
	}
	x := n.Args[0].Type
	d := lastDim(x)
	if d <= 0 {
		return fmt.Errorf("x must end in a concrete dimension, got %s", x)
	}
	n.Weights = []ir.Weight{{Name: n.Module + ".weight", Shape: []int64{d}}}
	n.Type = x
	return nil
}

func lowerRMSNorm(f *fn, n *ir.Node, a *RMSNormAttrs) codegen.Value {
	x := f.arg(n, 0)
	return f.mul(f.broadcastTrailing(f.weight(n.Weights[0].Name), x.Type), f.rmsNormalize(x, a.Eps))
}

func inferRMSNormalize(n *ir.Node, a *RMSNormalizeAttrs) error {
	if eps := a.Eps; !(eps >= 0) {
		return fmt.Errorf("eps %g must be >= 0 (a negative epsilon can make rsqrt's argument negative: NaN)", eps)
	}
	return inferSame(n)
}

// lowerRMSNormalize is RMS normalization without a weight, in f32
// (FalconMambaWeightlessRMSNorm: its weight is a buffer of ones, unused).
func lowerRMSNormalize(f *fn, n *ir.Node, a *RMSNormalizeAttrs) codegen.Value {
	return f.rmsNormalize(f.arg(n, 0), a.Eps)
}

// lowerRMSNorm1p follows HF GemmaRMSNorm.forward: the normalized x times
// (1 + w), in f32.
func lowerRMSNorm1p(f *fn, n *ir.Node, a *RMSNormAttrs) codegen.Value {
	x := f.arg(n, 0)
	w := f.weight(n.Weights[0].Name)
	w = f.add(f.splat(1, w.Type), w)
	return f.mul(f.rmsNormalize(x, a.Eps), f.broadcastTrailing(w, x.Type))
}

// rmsNormalize returns x * rsqrt(mean(x², -1) + eps) over the last dimension.
func (f *fn) rmsNormalize(x codegen.Value, eps float64) codegen.Value {
	d := x.Type.Shape[x.Type.Rank()-1]
	sum := f.reduceLast(f.mul(x, x), "stablehlo.add", 0)
	mean := f.div(sum, f.splat(float64(d), sum.Type))
	inv := f.unary("stablehlo.rsqrt", f.add(mean, f.splat(eps, sum.Type)))
	return f.mul(x, f.broadcastLeading(inv, x.Type))
}

// layer_norm(x [..., d], weight, eps, bias, per_head) → [..., d]: the
// mean-subtracting LayerNorm over the last dimension, in f32:
// (x - mean(x)) * rsqrt(mean((x - mean(x))²) + eps) * w (+ b), as HF
// CohereLayerNorm.forward and torch.nn.LayerNorm (bias: true reads
// <module>.bias). Weights are [d], or per head (x [..., heads, d]):
// per_head: true reads one [heads, d] tensor (CohereLayerNorm with a
// (heads, head_dim) shape); per_head: "NAME" reads a module list,
// <module>.NAME.<h>.weight [d] for each head h (StableLmLayerNormPerHead's
// norms).
func inferLayerNorm(n *ir.Node, a *LayerNormAttrs) error {
	if eps := a.Eps; !(eps >= 0) {
		return fmt.Errorf("eps %g must be >= 0 (a negative epsilon can make rsqrt's argument negative: NaN)", eps)
	}
	bias := a.Bias
	x := n.Args[0].Type
	d := lastDim(x)
	if d <= 0 {
		return fmt.Errorf("x must end in a concrete dimension, got %s", x)
	}
	params := []string{"weight"}
	if bias {
		params = append(params, "bias")
	}
	n.Weights = nil
	switch ph := a.PerHead; {
	case ph.Name == "":
		shape := []int64{d}
		if ph.On {
			if len(x.Shape) < 2 || x.Shape[len(x.Shape)-2] <= 0 {
				return fmt.Errorf("per_head needs x [..., heads, d], got %s", x)
			}
			shape = []int64{int64(x.Shape[len(x.Shape)-2]), d}
		}
		for _, p := range params {
			n.Weights = append(n.Weights, ir.Weight{Name: n.Module + "." + p, Shape: shape})
		}
	default:
		if len(x.Shape) < 2 || x.Shape[len(x.Shape)-2] <= 0 {
			return fmt.Errorf("per_head %q needs a module list name and x [..., heads, d], got %s", ph.Name, x)
		}
		for h := 0; h < int(x.Shape[len(x.Shape)-2]); h++ {
			for _, p := range params {
				n.Weights = append(n.Weights, ir.Weight{Name: fmt.Sprintf("%s.%s.%d.%s", n.Module, ph.Name, h, p), Shape: []int64{d}})
			}
		}
	}
	n.Type = x
	return nil
}

func lowerLayerNorm(f *fn, n *ir.Node, a *LayerNormAttrs) codegen.Value {
	eps, bias := a.Eps, a.Bias
	x := f.arg(n, 0)
	if concreteRows(n.Args[0].Type) {
		// An encoder's rows (a static count, no batch or seq): IREE 3.13
		// fuses the producer of x into this two-pass reduction and keeps a
		// tile of it on the stack, 120 KB at SmolVLM-256M's 1024 patches of
		// 768 (past the CPU backend's 32 KiB). The barrier keeps it apart;
		// decoders (symbolic rows) are unchanged.
		x = f.barrier(x)
	}
	d := x.Type.Shape[x.Type.Rank()-1]
	sum := f.reduceLast(x, "stablehlo.add", 0)
	mean := f.div(sum, f.splat(float64(d), sum.Type))
	c := f.sub(x, f.broadcastLeading(mean, x.Type))
	variance := f.div(f.reduceLast(f.mul(c, c), "stablehlo.add", 0), f.splat(float64(d), mean.Type))
	inv := f.unary("stablehlo.rsqrt", f.add(variance, f.splat(eps, variance.Type)))
	y := f.mul(c, f.broadcastLeading(inv, x.Type))
	per := 1
	if bias {
		per = 2
	}
	// The weights of one parameter (weight, then bias), joined into one
	// [heads, d] tensor when stored per head as a module list.
	param := func(k int) codegen.Value {
		if a.PerHead.Name == "" {
			return f.weight(n.Weights[k].Name)
		}
		var rows []codegen.Value
		for i := k; i < len(n.Weights); i += per {
			rows = append(rows, f.reshape(f.weight(n.Weights[i].Name), 1, d))
		}
		return f.concat(0, rows...)
	}
	y = f.mul(f.broadcastTrailing(param(0), x.Type), y)
	if bias {
		y = f.add(y, f.broadcastTrailing(param(1), x.Type))
	}
	return y
}

// concreteRows reports whether t has no symbolic dimension (an encoder's
// value: one tile's rows, every size static).
func concreteRows(t ir.Type) bool {
	for _, d := range t.Shape {
		if d < 0 {
			return false
		}
	}
	return true
}
