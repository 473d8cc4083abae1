package lower

import (
	"fmt"
	"math"
	"sort"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// Pointwise primitives: elementwise arithmetic, activations, soft-capping
// and scaling. Each keeps its operand's shape.

func inferSame(n *ir.Node) error {
	n.Type = n.Args[0].Type
	return nil
}

func inferElementwise(n *ir.Node) error {
	x, y := n.Args[0].Type, n.Args[1].Type
	if len(x.Shape) != len(y.Shape) || x.DType != y.DType {
		return fmt.Errorf("operands differ: %s vs %s", x, y)
	}
	shape := make(ir.Shape, len(x.Shape))
	for i := range x.Shape { // torch broadcasting of equal ranks: a size-1 dimension stretches
		switch {
		case x.Shape[i] == y.Shape[i], y.Shape[i] == 1:
			shape[i] = x.Shape[i]
		case x.Shape[i] == 1:
			shape[i] = y.Shape[i]
		default:
			return fmt.Errorf("operands differ: %s vs %s", x, y)
		}
	}
	n.Type = ir.Type{Shape: shape, DType: x.DType}
	return nil
}

func lowerBinary(op string) func(*fn, *ir.Node) codegen.Value {
	return func(f *fn, n *ir.Node) codegen.Value {
		t := f.ty(n.Type)
		x, y := f.arg(n, 0), f.arg(n, 1)
		stretch := func(v codegen.Value) codegen.Value { // size-1 dimensions to t's
			if v.Type.String() == t.String() {
				return v
			}
			dims := make([]int64, t.Rank())
			for i := range dims {
				dims[i] = int64(i)
			}
			return f.broadcastDims(v, t, dims...)
		}
		return f.binary(op, stretch(x), stretch(y))
	}
}

func lowerSiLU(f *fn, n *ir.Node) codegen.Value { return f.silu(f.arg(n, 0)) }

// silu is x·sigmoid(x) (torch.nn.functional.silu).
func (f *fn) silu(x codegen.Value) codegen.Value { return f.mul(x, f.unary("stablehlo.logistic", x)) }

// lowerGeLUTanh follows torch.nn.functional.gelu(approximate="tanh") (HF
// "gelu_pytorch_tanh"): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
func lowerGeLUTanh(f *fn, n *ir.Node) codegen.Value { return f.geluTanh(f.arg(n, 0)) }

func (f *fn) geluTanh(x codegen.Value) codegen.Value {
	x3 := f.mul(f.mul(x, x), x)
	inner := f.mul(f.splat(math.Sqrt(2/math.Pi), x.Type), f.add(x, f.mul(f.splat(0.044715, x.Type), x3)))
	return f.mul(f.mul(f.splat(0.5, x.Type), x), f.add(f.splat(1, x.Type), f.unary("stablehlo.tanh", inner)))
}

func lowerSoftcap(f *fn, n *ir.Node, a *SoftcapAttrs) codegen.Value {
	x := f.arg(n, 0)
	if a.Cap == nil {
		return x
	}
	return f.softcap(x, *a.Cap)
}

// softcap is cap·tanh(x/cap) (HF Gemma 2 soft-capping); c > 0 (checkCap).
func (f *fn) softcap(x codegen.Value, c float64) codegen.Value {
	return f.mul(f.unary("stablehlo.tanh", f.div(x, f.splat(c, x.Type))), f.splat(c, x.Type))
}

// activations maps HF ACT2FN names (config hidden_act) to lowerings, each
// following its transformers.activations class.
var activations = map[string]func(*fn, codegen.Value) codegen.Value{
	"silu":              (*fn).silu,
	"swish":             (*fn).silu,
	"gelu_pytorch_tanh": (*fn).geluTanh,
	"gelu_new":          (*fn).geluTanh,
	"gelu_python_tanh":  (*fn).geluTanh,
	"gelu_fast":         (*fn).geluFast,
	"quick_gelu":        (*fn).quickGelu,
	"relu":              (*fn).relu,
	"relu2":             func(f *fn, x codegen.Value) codegen.Value { r := f.relu(x); return f.mul(r, r) },
	"sigmoid":           func(f *fn, x codegen.Value) codegen.Value { return f.unary("stablehlo.logistic", x) },
	"tanh":              func(f *fn, x codegen.Value) codegen.Value { return f.unary("stablehlo.tanh", x) },
	"linear":            func(_ *fn, x codegen.Value) codegen.Value { return x },
	"gelu":              (*fn).geluErf,
	"gelu_python":       (*fn).geluErf,
	"gelu_accurate":     (*fn).geluTanh,
	"gelu_10":           func(f *fn, x codegen.Value) codegen.Value { return f.clamp(f.geluErf(x), -10, 10) },
	"relu6":             func(f *fn, x codegen.Value) codegen.Value { return f.clamp(x, 0, 6) },
	"leaky_relu": func(f *fn, x codegen.Value) codegen.Value {
		return f.binary("stablehlo.maximum", x, f.mul(x, f.splat(0.01, x.Type)))
	},
	"mish":     (*fn).mish,
	"softplus": (*fn).softplus,
}

// softplus is torch.nn.functional.softplus (beta 1, threshold 20):
// log1p(exp(x)), and x itself where x > 20 (MambaMixer's dt).
func (f *fn) softplus(x codegen.Value) codegen.Value {
	soft := f.unary("stablehlo.log_plus_one", f.unary("stablehlo.exponential", x))
	return f.selectOp(f.compare("GT", x, f.splat(20, x.Type)), x, soft)
}

// geluErf is GELUActivation (torch gelu, approximate="none"):
// x/2·(1 + erf(x/√2)), erf by CHLO (IREE expands it to a polynomial
// within f32 rounding of the exact value).
func (f *fn) geluErf(x codegen.Value) codegen.Value {
	e := f.Op("chlo.erf", x.Type, nil, f.mul(x, f.splat(1/math.Sqrt2, x.Type)))
	return f.mul(f.mul(f.splat(0.5, x.Type), x), f.add(f.splat(1, x.Type), e))
}

// mish is MishActivation: x·tanh(softplus(x)), softplus as torch's
// (log1p(eˣ), and x itself above the threshold 20).
func (f *fn) mish(x codegen.Value) codegen.Value {
	sp := f.Op("stablehlo.log_plus_one", x.Type, nil, f.unary("stablehlo.exponential", x))
	sp = f.selectOp(f.compare("GT", x, f.splat(20, x.Type)), x, sp)
	return f.mul(x, f.unary("stablehlo.tanh", sp))
}

// clamp is min(max(x, lo), hi).
func (f *fn) clamp(x codegen.Value, lo, hi float64) codegen.Value {
	return f.binary("stablehlo.minimum", f.binary("stablehlo.maximum", x, f.splat(lo, x.Type)), f.splat(hi, x.Type))
}

// relu is max(x, 0) (nn.ReLU).
func (f *fn) relu(x codegen.Value) codegen.Value {
	return f.binary("stablehlo.maximum", x, f.splat(0, x.Type))
}

// geluFast is FastGELUActivation: 0.5·x·(1 + tanh(x·0.7978845608·(1 + 0.044715·x²))).
func (f *fn) geluFast(x codegen.Value) codegen.Value {
	inner := f.mul(f.mul(x, f.splat(0.7978845608, x.Type)), f.add(f.splat(1, x.Type), f.mul(f.mul(f.splat(0.044715, x.Type), x), x)))
	return f.mul(f.mul(f.splat(0.5, x.Type), x), f.add(f.splat(1, x.Type), f.unary("stablehlo.tanh", inner)))
}

// quickGelu is QuickGELUActivation: x·sigmoid(1.702·x).
func (f *fn) quickGelu(x codegen.Value) codegen.Value {
	return f.mul(x, f.unary("stablehlo.logistic", f.mul(f.splat(1.702, x.Type), x)))
}

func inferActivation(n *ir.Node, a *ActivationAttrs) error {
	name := a.Name
	if _, ok := activations[name]; !ok {
		known := make([]string, 0, len(activations))
		for k := range activations {
			known = append(known, k)
		}
		sort.Strings(known)
		return fmt.Errorf("activation %q is not supported (supported: %v)", name, known)
	}
	return inferSame(n)
}

func lowerActivation(f *fn, n *ir.Node, a *ActivationAttrs) codegen.Value {
	return activations[a.Name](f, f.arg(n, 0))
}

func inferSoftcap(n *ir.Node, a *SoftcapAttrs) error {
	if err := checkCap("cap", a.Cap); err != nil {
		return err
	}
	return inferSame(n)
}

// checkCap refuses a soft cap (softcap's cap, attention's softcap) that
// is not a positive finite number: HF applies cap·tanh(x/cap) to any
// value it is given (NaN for 0; a negative cap caps as its magnitude), so
// no other value can stand for "no cap", which is none.
func checkCap(name string, c *float64) error {
	if c != nil && !(*c > 0 && !math.IsInf(*c, 1)) {
		return fmt.Errorf("%s is %g: a soft cap must be a positive finite number (none for no cap)", name, *c)
	}
	return nil
}

func inferScale(n *ir.Node, _ *ScaleAttrs) error { return inferSame(n) }

func lowerScale(f *fn, n *ir.Node, a *ScaleAttrs) codegen.Value {
	x := f.arg(n, 0)
	return f.mul(x, f.splat(a.Factor, x.Type))
}

// divide(x, divisor) → x / divisor, the divisor rounded to f32 (torch's
// tensor / Python float: Granite's logits_scaling, MiniCPM's hidden /
// (hidden_size / dim_model_base)). The .arch operator `tensor / number`.
func inferDivide(n *ir.Node, a *DivideAttrs) error {
	if d := a.Divisor; float32(d) == 0 {
		return fmt.Errorf("divisor must be non-zero in f32, got %g", d)
	}
	return inferSame(n)
}

func lowerDivide(f *fn, n *ir.Node, a *DivideAttrs) codegen.Value {
	x := f.arg(n, 0)
	return f.div(x, f.splat(a.Divisor, x.Type))
}

// Elementwise tensor operations that activation and family definitions
// are written with (the .arch operators <, ==, ?: and ** on tensors reach
// them; see dsl's apply): comparisons giving an i1 mask, where, full_like,
// clamp and small integer powers.

// inferCompare: two f32 tensors of one shape, or two i32 tensors (token
// ids: `ids == image_token_id`), → an i1 mask of that shape.
func inferCompare(n *ir.Node) error {
	if err := inferElementwise(n); err != nil {
		return err
	}
	if n.Type.DType != ir.F32 && n.Type.DType != ir.I32 {
		return fmt.Errorf("compares f32 or i32 tensors, got %s", n.Type)
	}
	n.Type = ir.Type{Shape: n.Type.Shape, DType: ir.Bool}
	return nil
}

// lowerCompare is stablehlo.compare in direction dir (FLOAT: an ordered
// comparison, false with a NaN operand except for NE, as torch's).
func lowerCompare(dir string) func(*fn, *ir.Node) codegen.Value {
	return func(f *fn, n *ir.Node) codegen.Value { return f.compare(dir, f.arg(n, 0), f.arg(n, 1)) }
}

// inferWhere: where(cond, x, y) with cond an i1 mask and x, y f32, all of
// one shape.
func inferWhere(n *ir.Node) error {
	c, x, y := n.Args[0].Type, n.Args[1].Type, n.Args[2].Type
	if c.DType != ir.Bool {
		return fmt.Errorf("condition must be a mask (a comparison of tensors), got %s", c)
	}
	if !x.Shape.Equal(y.Shape) || x.DType != y.DType {
		return fmt.Errorf("branches differ: %s vs %s", x, y)
	}
	if !c.Shape.Equal(x.Shape) {
		return fmt.Errorf("condition %s and branches %s differ in shape", c, x)
	}
	n.Type = x
	return nil
}

func lowerWhere(f *fn, n *ir.Node) codegen.Value {
	return f.selectOp(f.arg(n, 0), f.arg(n, 1), f.arg(n, 2))
}

// inferFullLike: full_like(x, value) is an f32 tensor of x's shape (x may
// be a mask), every element value rounded to f32, as torch promotes a
// Python number operand of a tensor op; of an i32 x (token ids) and an
// integral value, an i32 tensor, as torch compares an integer tensor
// with a Python int.
func inferFullLike(n *ir.Node, a *FullLikeAttrs) error {
	if x := n.Args[0].Type; x.DType == ir.I32 {
		if a.Value != math.Trunc(a.Value) || math.Abs(a.Value) > math.MaxInt32 {
			return fmt.Errorf("an i32 tensor (token ids) compares with an int, got %v", a.Value)
		}
		n.Type = x
		return nil
	}
	n.Type = ir.Type{Shape: n.Args[0].Type.Shape, DType: ir.F32}
	return nil
}

func lowerFullLike(f *fn, n *ir.Node, a *FullLikeAttrs) codegen.Value {
	if n.Type.DType == ir.I32 {
		return f.broadcast(f.constI32(int64(a.Value)), f.arg(n, 0).Type)
	}
	return f.splat(a.Value, f.arg(n, 0).Type.WithElem("f32"))
}

// inferParameter: parameter(weight, shape) is the checkpoint tensor the
// weight path names itself (no .weight: a learned scalar or vector that a
// module holds as an nn.Parameter or buffer), stored with shape shape,
// as a graph value [1, 1, shape...] f32: the leading 1s stand for batch
// and seq, so that x * parameter(...) on an activation [batch, seq, ...]
// stretches it as torch's broadcasting does (Gemma4TextDecoderLayer's
// hidden_states *= layer_scalar, layer_scalar [1]).
func inferParameter(n *ir.Node, a *ParameterAttrs) error {
	if len(a.Shape) == 0 {
		return fmt.Errorf("shape must list the stored tensor's dimensions, got []")
	}
	shape := ir.Shape{1, 1}
	dims := a.Shape
	for len(dims) > 1 && len(dims) > len(a.Shape)-2 && dims[0] == 1 { // stored [1, 1, d] (RWKV's x_r) reads as [1, 1, d]
		dims = dims[1:]
	}
	for _, d := range dims {
		if d <= 0 {
			return fmt.Errorf("shape must be positive sizes, got %v", a.Shape)
		}
		shape = append(shape, ir.Dim(d))
	}
	n.Weights = []ir.Weight{{Name: n.Module, Shape: a.Shape}}
	n.Type = ir.Type{Shape: shape, DType: ir.F32}
	return nil
}

func lowerParameter(f *fn, n *ir.Node, a *ParameterAttrs) codegen.Value {
	return f.reshape(f.weight(n.Weights[0].Name), f.ty(n.Type).Shape...)
}

// inferClamp: clamp(x, min:, max:) with number bounds or none.
func inferClamp(n *ir.Node, a *ClampAttrs) error {
	if a.Min != nil && a.Max != nil && *a.Min > *a.Max {
		return fmt.Errorf("min %g is above max %g", *a.Min, *a.Max)
	}
	return inferSame(n)
}

// lowerClamp is torch.clamp: max with the lower bound, then min with the
// upper one (each only when given).
func lowerClamp(f *fn, n *ir.Node, a *ClampAttrs) codegen.Value {
	x := f.arg(n, 0)
	if a.Min != nil {
		x = f.binary("stablehlo.maximum", x, f.splat(*a.Min, x.Type))
	}
	if a.Max != nil {
		x = f.binary("stablehlo.minimum", x, f.splat(*a.Max, x.Type))
	}
	return x
}

// inferPow: pow(x, n) for n in {1, 2, 3}. torch's CPU pow kernel computes
// those exponents as x·x and x·x·x (pow_tensor_scalar_optimized_kernel);
// larger or fractional exponents go through std::pow, which products would
// not reproduce bit for bit, so they are refused.
func inferPow(n *ir.Node, a *PowAttrs) error {
	if e := a.Exponent; e != 1 && e != 2 && e != 3 {
		return fmt.Errorf("exponent must be the int 1, 2 or 3 (torch.pow computes those as products, which archc matches exactly), got %s", ir.FormatValue(e))
	}
	return inferSame(n)
}

func lowerPow(f *fn, n *ir.Node, a *PowAttrs) codegen.Value {
	x := f.arg(n, 0)
	out := x
	for i := 1.0; i < a.Exponent; i++ {
		out = f.mul(out, x)
	}
	return out
}
