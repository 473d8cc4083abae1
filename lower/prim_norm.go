package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// rms_norm(x [..., d], weight [d], eps) → [..., d], following HF
// LlamaRMSNorm.forward: x * rsqrt(mean(x², -1) + eps), then weight * that,
// in f32.
func inferRMSNorm(n *ir.Node) error {
	if _, err := floatAttr(n, "eps", 0); err != nil {
		return err
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

func lowerRMSNorm(f *fn, n *ir.Node) codegen.Value {
	eps, _ := floatAttr(n, "eps", 0)
	x := f.arg(n, 0)
	return f.mul(f.broadcastTrailing(f.weight(n.Weights[0].Name), x.Type), f.rmsNormalize(x, eps))
}

// lowerRMSNorm1p follows HF GemmaRMSNorm.forward: the normalized x times
// (1 + w), in f32.
func lowerRMSNorm1p(f *fn, n *ir.Node) codegen.Value {
	eps, _ := floatAttr(n, "eps", 0)
	x := f.arg(n, 0)
	w := f.weight(n.Weights[0].Name)
	w = f.add(f.splat(1, w.Type), w)
	return f.mul(f.rmsNormalize(x, eps), f.broadcastTrailing(w, x.Type))
}

// rmsNormalize returns x * rsqrt(mean(x², -1) + eps) over the last dimension.
func (f *fn) rmsNormalize(x codegen.Value, eps float64) codegen.Value {
	d := x.Type.Shape[x.Type.Rank()-1]
	sum := f.reduceLast(f.mul(x, x), "stablehlo.add", 0)
	mean := f.div(sum, f.splat(float64(d), sum.Type))
	inv := f.unary("stablehlo.rsqrt", f.add(mean, f.splat(eps, sum.Type)))
	return f.mul(x, f.broadcastLeading(inv, x.Type))
}
