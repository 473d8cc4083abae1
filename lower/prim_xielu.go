package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// inferXIELU: xielu(x, m) keeps x's shape and reads the activation's two
// learned scalars, <m>.alpha_p and <m>.alpha_n, each [1] (as
// XIELUActivation stores them: before the softplus).
func inferXIELU(n *ir.Node, a *XIELUAttrs) error {
	if a.Eps > 0 {
		return fmt.Errorf("eps must be at most 0 (it caps the negative branch's x), got %g", a.Eps)
	}
	n.Weights = []ir.Weight{{Name: n.Module + ".alpha_p", Shape: []int64{1}}, {Name: n.Module + ".alpha_n", Shape: []int64{1}}}
	return inferSame(n)
}

// lowerXIELU is XIELUActivation._xielu_python (transformers/activations.py,
// the xIELU of arXiv:2411.13010) in its f32 operation order:
//
//	a_p = softplus(alpha_p); a_n = beta + softplus(alpha_n)
//	out = x > 0 ? (a_p·x)·x + beta·x : (expm1(min(x, eps)) − x)·a_n + beta·x
func lowerXIELU(f *fn, n *ir.Node, a *XIELUAttrs) codegen.Value {
	x := f.arg(n, 0)
	t := x.Type
	beta := f.splat(a.Beta, t)
	ap := f.broadcastTrailing(f.softplus(f.weight(n.Weights[0].Name)), t)
	an := f.softplus(f.weight(n.Weights[1].Name))
	an = f.broadcastTrailing(f.add(f.splat(a.Beta, an.Type), an), t)
	bx := f.mul(beta, x)
	pos := f.add(f.mul(f.mul(ap, x), x), bx)
	em := f.unary("stablehlo.exponential_minus_one", f.binary("stablehlo.minimum", x, f.splat(a.Eps, t)))
	neg := f.add(f.mul(f.sub(em, x), an), bx)
	return f.selectOp(f.compare("GT", x, f.splat(0, t)), pos, neg)
}
