package lower

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

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
	// Types gives each scalar and keyword parameter's attribute type, by
	// name, as primitives.json spells it: int, float, bool, string, name,
	// enum(a|b), ints, dict, length, flag_or_name.
	Types map[string]string
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

// optionalTensor is a tensor parameter a call may leave out (attention's
// k and v, which a call sharing an earlier layer's KV cache does not
// give); the node's Args then hold only the tensors given, in order.
func optionalTensor(name string) ir.Param {
	return ir.Param{Name: name, Kind: ir.Tensor, Optional: true}
}

// shared marks p's calls that give attribute attr (an earlier decoder
// layer's index) as reading that layer's state instead of owning one
// (ir.Primitive.ShareState; attention's kv_layer).
func shared(attr string, p *primitive) *primitive {
	p.ShareState = attr
	return p
}

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

// Attribute decoders, called by the generated decode<Struct> functions
// (primitives_gen.go) once per node: each takes the parameter's name and
// its evaluated value (never nil: an absent optional parameter keeps its
// default) and errors naming the parameter and what it must be.

func decodeInt(name string, v any) (int64, error) {
	if i, ok := v.(int64); ok {
		return i, nil
	}
	return 0, fmt.Errorf("%s must be an int, got %s", name, showValue(v))
}

func decodeFloat(name string, v any) (float64, error) {
	switch v := v.(type) {
	case float64:
		return v, nil
	case int64:
		return float64(v), nil
	}
	return 0, fmt.Errorf("%s must be a number, got %s", name, showValue(v))
}

func decodeBool(name string, v any) (bool, error) {
	if b, ok := v.(bool); ok {
		return b, nil
	}
	return false, fmt.Errorf("%s must be a bool, got %s", name, showValue(v))
}

func decodeString(name string, v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", fmt.Errorf("%s must be a string, got %s", name, showValue(v))
}

// decodeName reads a non-empty string: a tensor or activation name.
func decodeName(name string, v any) (string, error) {
	s, ok := v.(string)
	switch {
	case !ok:
		return "", fmt.Errorf("%s must be a name (string), got %s", name, showValue(v))
	case s == "":
		return "", fmt.Errorf("%s must be a name, got an empty string", name)
	}
	return s, nil
}

// decodeEnum reads one of the choices (strings) of an enum attribute.
func decodeEnum[T ~string](name string, v any, choices ...T) (T, error) {
	if s, ok := v.(string); ok {
		for _, c := range choices {
			if string(c) == s {
				return c, nil
			}
		}
	}
	quoted := make([]string, len(choices))
	for i, c := range choices {
		quoted[i] = strconv.Quote(string(c))
	}
	return "", fmt.Errorf("%s must be %s, got %s", name, strings.Join(quoted, " or "), showValue(v))
}

// decodeInts reads a list of ints.
func decodeInts(name string, v any) ([]int64, error) {
	l, ok := v.([]any)
	out := make([]int64, 0, len(l))
	for _, e := range l {
		i, isInt := e.(int64)
		if !isInt {
			ok = false
			break
		}
		out = append(out, i)
	}
	if !ok {
		return nil, fmt.Errorf("%s must be a list of ints, got %s", name, showValue(v))
	}
	return out, nil
}

// decodeFloats reads a list of numbers (ints are taken as floats).
func decodeFloats(name string, v any) ([]float64, error) {
	l, ok := v.([]any)
	out := make([]float64, 0, len(l))
	for _, e := range l {
		switch x := e.(type) {
		case float64:
			out = append(out, x)
		case int64:
			out = append(out, float64(x))
		default:
			ok = false
		}
		if !ok {
			break
		}
	}
	if !ok {
		return nil, fmt.Errorf("%s must be a list of numbers, got %s", name, showValue(v))
	}
	return out, nil
}

// decodeDict reads a dict (a config sub-object such as rope_scaling).
func decodeDict(name string, v any) (map[string]any, error) {
	if d, ok := v.(map[string]any); ok {
		return d, nil
	}
	return nil, fmt.Errorf("%s must be a dict or none, got %s", name, showValue(v))
}

// decodeLength reads a non-negative length; a float is floored, as
// Python's int() does on a positive value.
func decodeLength(name string, v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		if v >= 0 {
			return v, nil
		}
	case float64:
		if v >= 0 && v < 1<<53 {
			return int64(math.Floor(v)), nil
		}
	}
	return 0, fmt.Errorf("%s must be a non-negative number, got %s", name, showValue(v))
}

// FlagOrName is an attribute that is either a bool or a name (layer_norm's
// per_head: true, or the name of a per-head weight list).
type FlagOrName struct {
	On   bool   // true, or a name given
	Name string // the name, when one was given
}

func decodeFlagOrName(name string, v any) (FlagOrName, error) {
	switch v := v.(type) {
	case bool:
		return FlagOrName{On: v}, nil
	case string:
		if v != "" {
			return FlagOrName{On: true, Name: v}, nil
		}
	}
	return FlagOrName{}, fmt.Errorf("%s must be a bool or a name, got %s", name, showValue(v))
}

// undecoded reports a node that reached its lowering without the typed
// attributes its Infer rule decodes (a node not built by the IR builder).
func (f *fn) undecoded(n *ir.Node) codegen.Value {
	f.Errorf("%s: attributes not decoded (the node did not go through its shape rule)", n.Prim)
	return codegen.Value{Type: codegen.T("f32")}
}

// lastDim returns the innermost dimension: a size, or a negative symbol
// (ir.Batch, ir.Seq) that shape rules must reject where a size is needed.
func lastDim(t ir.Type) int64 {
	if len(t.Shape) == 0 {
		return -1
	}
	return int64(t.Shape[len(t.Shape)-1])
}
