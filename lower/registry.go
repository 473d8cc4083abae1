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

//go:generate go run ./internal/tablegen/gen

// primitives is the primitive table (read-only after init), indexed by
// name. Its rows are data: primitives.json, from which `go generate`
// writes primitiveRows (primitives_gen.go); each row's shape rule and
// lowering sit together in prim_<name>.go.
var primitives = table{}

func init() {
	for _, p := range primitiveRows {
		primitives[p.Name] = p
	}
}

// PrimitiveDoc documents one primitive of the table, from primitives.json.
type PrimitiveDoc struct {
	Name      string // the name .arch files call
	Signature string // parameters in call order; "name:" marks an optional keyword argument
	Shapes    string // operand and result shapes
	Math      string // semantics in one line
	HF        string // the Hugging Face / torch code it follows numerically
	Cache     bool   // owns a per-layer KV cache
	Attrs     []AttrDoc
}

// AttrDoc documents one optional parameter (keyword attribute) of a
// primitive, from primitives.json.
type AttrDoc struct {
	Name    string // the keyword, e.g. "bias"
	Default string // its value when absent, as .arch spells it ("false", "none", "head_dim ** -0.5")
	Doc     string // what other values do
}

// Primitives documents the primitive table, in its data file's order.
func Primitives() []PrimitiveDoc { return append([]PrimitiveDoc(nil), primitiveDocs...) }

func row(name string, infer func(*ir.Node) error, lower func(*fn, *ir.Node) codegen.Value, cache bool, params ...ir.Param) *primitive {
	return &primitive{Primitive: ir.Primitive{Name: name, Params: params, Infer: infer, Cache: cache}, lower: lower}
}

func tensor(name string) ir.Param   { return ir.Param{Name: name, Kind: ir.Tensor} }
func module(name string) ir.Param   { return ir.Param{Name: name, Kind: ir.Module} }
func scalar(name string) ir.Param   { return ir.Param{Name: name, Kind: ir.Scalar} }
func optional(name string) ir.Param { return ir.Param{Name: name, Kind: ir.Scalar, Optional: true} }

// optionalModule is a keyword parameter that takes a weight path (the
// node's Module when given), e.g. attention's sinks.
func optionalModule(name string) ir.Param {
	return ir.Param{Name: name, Kind: ir.Module, Optional: true}
}

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
