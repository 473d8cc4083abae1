package lower

import (
	"fmt"
	"sort"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// primitive is one row of the primitive table: the signature and shape rule
// the IR builder uses, and the StableHLO lowering. Each primitive's rule and
// lowering sit together in prim_<name>.go.
type primitive struct {
	ir.Primitive
	lower func(f *fn, n *ir.Node) codegen.Value
}

type table map[string]*primitive

// primitives is the primitive table (read-only after init). One row per
// primitive: name, parameters, shape rule, lowering, whether it owns a KV cache.
var primitives = table{}

func init() {
	for _, p := range []*primitive{
		row("embedding", inferEmbedding, lowerEmbedding, false, tensor("ids"), module("weight"), scalar("num_embeddings"), scalar("embedding_dim")),               // out[b,s] = weight[ids[b,s]]
		row("rms_norm", inferRMSNorm, lowerRMSNorm, false, tensor("x"), module("weight"), scalar("eps")),                                                          // out = x·rsqrt(mean(x²) + eps)·w
		row("rms_norm_1p", inferRMSNorm, lowerRMSNorm1p, false, tensor("x"), module("weight"), scalar("eps")),                                                     // out = x·rsqrt(mean(x²) + eps)·(1 + w)
		row("linear", inferLinear, lowerLinear, false, tensor("x"), module("weight"), scalar("out"), optional("bias")),                                            // out = x·Wᵀ (+ b)
		row("heads", inferHeads, lowerHeads, false, tensor("x"), scalar("n")),                                                                                     // [..., n·d] → [..., n, d]
		row("rope", inferRoPE, lowerRoPE, false, tensor("x"), scalar("theta"), optional("scaling")),                                                               // out = x·cos + rotate_half(x)·sin
		row("attention", inferAttention, lowerAttention, true, tensor("q"), tensor("k"), tensor("v"), optional("scale"), optional("softcap"), optional("window")), // softmax(softcap(q·kᵀ·scale) + mask)·v, GQA, KV cache
		row("activation", inferActivation, lowerActivation, false, tensor("x"), scalar("name")),                                                                   // HF ACT2FN[name](x)
		row("silu", inferSame, lowerSiLU, false, tensor("x")),                                                                                                     // out = x·sigmoid(x)
		row("gelu_tanh", inferSame, lowerGeLUTanh, false, tensor("x")),                                                                                            // out = x/2·(1 + tanh(√(2/π)·(x + 0.044715x³)))
		row("softcap", inferSoftcap, lowerSoftcap, false, tensor("x"), optional("cap")),                                                                           // out = cap·tanh(x/cap); cap none: x
		row("scale", inferScale, lowerScale, false, tensor("x"), scalar("factor")),                                                                                // out = x·factor (factor rounded to f32)
		row("add", inferElementwise, lowerBinary("stablehlo.add"), false, tensor("x"), tensor("y")),                                                               // out = x + y
		row("sub", inferElementwise, lowerBinary("stablehlo.subtract"), false, tensor("x"), tensor("y")),                                                          // out = x - y
		row("mul", inferElementwise, lowerBinary("stablehlo.multiply"), false, tensor("x"), tensor("y")),                                                          // out = x * y
	} {
		primitives[p.Name] = p
	}
}

func row(name string, infer func(*ir.Node) error, lower func(*fn, *ir.Node) codegen.Value, cache bool, params ...ir.Param) *primitive {
	return &primitive{Primitive: ir.Primitive{Name: name, Params: params, Infer: infer, Cache: cache}, lower: lower}
}

func tensor(name string) ir.Param   { return ir.Param{Name: name, Kind: ir.Tensor} }
func module(name string) ir.Param   { return ir.Param{Name: name, Kind: ir.Module} }
func scalar(name string) ir.Param   { return ir.Param{Name: name, Kind: ir.Scalar} }
func optional(name string) ir.Param { return ir.Param{Name: name, Kind: ir.Scalar, Optional: true} }

func (t table) lookup(name string) (*primitive, bool) {
	p, ok := t[name]
	return p, ok
}

// Registry is the primitive table as the dsl package sees it.
type Registry struct{}

// Primitive returns a primitive's signature and shape rule.
func (Registry) Primitive(name string) (*ir.Primitive, bool) {
	p, ok := primitives[name]
	if !ok {
		return nil, false
	}
	return &p.Primitive, true
}

// Names lists the primitives, sorted.
func (Registry) Names() []string {
	out := make([]string, 0, len(primitives))
	for n := range primitives {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Attribute readers for shape rules: each errors naming the parameter.

func intAttr(n *ir.Node, name string) (int64, error) {
	v, ok := n.Attrs[name].(int64)
	if !ok {
		return 0, fmt.Errorf("%s must be an int, got %v", name, n.Attrs[name])
	}
	return v, nil
}

func floatAttr(n *ir.Node, name string, def float64) (float64, error) {
	switch v := n.Attrs[name].(type) {
	case nil:
		return def, nil
	case float64:
		return v, nil
	case int64:
		return float64(v), nil
	}
	return 0, fmt.Errorf("%s must be a number, got %v", name, n.Attrs[name])
}

func boolAttr(n *ir.Node, name string) (bool, error) {
	switch v := n.Attrs[name].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	}
	return false, fmt.Errorf("%s must be a bool, got %v", name, n.Attrs[name])
}

// lastDim returns the innermost dimension: a size, or a negative symbol
// (ir.Batch, ir.Seq) that shape rules must reject where a size is needed.
func lastDim(t ir.Type) int64 {
	if len(t.Shape) == 0 {
		return -1
	}
	return int64(t.Shape[len(t.Shape)-1])
}
