// Package codegen holds a StableHLO module under construction and prints it
// as MLIR text. Package lower fills a Module through Func builders; Print
// renders it deterministically (same module, same bytes): SSA values are
// numbered in emission order and nothing depends on map iteration.
//
// Ops are printed in MLIR's generic form ("stablehlo.add"(...)), which is
// unambiguous for every op; their attributes are typed values (Attrs:
// integers, integer arrays, dense constants, enums, #stablehlo structs)
// that Verify reads as values and Print renders in the order given; weights are IREE named parameters
// (util.global + #flow.parameter.named) and KV caches mutable util.globals.
package codegen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Type is a ranked tensor type; Elem is an MLIR element type ("f32", "bf16",
// "f16", "i32", "i8", "i1"). A nil Shape is a rank-0 tensor. Index is the
// builtin scalar `index` type instead (shape and Elem unused).
type Type struct {
	Shape []int64
	Elem  string
	Index bool
}

// T returns a tensor type.
func T(elem string, shape ...int64) Type { return Type{Shape: shape, Elem: elem} }

// Dynamic marks a dimension whose size is known only at run time ("?").
const Dynamic int64 = -1

// IsDynamic reports whether some dimension of t is Dynamic.
func (t Type) IsDynamic() bool {
	for _, d := range t.Shape {
		if d == Dynamic {
			return true
		}
	}
	return false
}

// IndexType is MLIR's `index`, the type of workload and size operands.
var IndexType = Type{Index: true}

func (t Type) String() string {
	if t.Index {
		return "index"
	}
	var sb strings.Builder
	sb.WriteString("tensor<")
	for _, d := range t.Shape {
		if d == Dynamic {
			sb.WriteByte('?')
		} else {
			sb.WriteString(strconv.FormatInt(d, 10))
		}
		sb.WriteByte('x')
	}
	sb.WriteString(t.Elem)
	sb.WriteByte('>')
	return sb.String()
}

// Rank is the number of dimensions.
func (t Type) Rank() int { return len(t.Shape) }

// NumElements is the product of the dimensions (1 for rank 0), or Dynamic
// when a dimension is.
func (t Type) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		if d == Dynamic {
			return Dynamic
		}
		n *= d
	}
	return n
}

// With returns t with a new shape and the same element type.
func (t Type) With(shape ...int64) Type { return Type{Shape: shape, Elem: t.Elem} }

// Global is a module-level tensor: a named parameter (Param != "") read from
// the "model" parameter scope, or a mutable state tensor that starts as the
// splat Init (zero unless set).
type Global struct {
	Name    string // symbol name without '@'
	Type    Type
	Param   string // parameter key, e.g. the checkpoint tensor name
	Mutable bool
	Init    float64 // a mutable global's starting value, every element
}

// Module is a StableHLO module: executables (hand-written kernels, printed
// verbatim), globals and functions, each in insertion order.
type Module struct {
	Name        string
	Executables []string
	Globals     []Global
	Funcs       []*Func
}

// AddExecutable appends the MLIR text of an executable (for example a
// stream.executable carrying a custom kernel) that functions dispatch to
// with Func.Dispatch.
func (m *Module) AddExecutable(text string) { m.Executables = append(m.Executables, text) }

// Dispatched reports the exports of executable exe that some function of
// m dispatches (Func.Dispatch), by export name: what an executable added
// after the functions needs to export.
func (m *Module) Dispatched(exe string) map[string]bool {
	out := map[string]bool{}
	for _, f := range m.Funcs {
		for _, o := range f.ops {
			if e, export, ok := strings.Cut(o.callee, "::"); ok && e == exe {
				out[export] = true
			}
		}
	}
	return out
}

// AddGlobal appends a global; names must be unique (the caller's job).
func (m *Module) AddGlobal(g Global) { m.Globals = append(m.Globals, g) }

// Print renders the module as MLIR text.
func (m *Module) Print() []byte {
	var sb strings.Builder
	fmt.Fprintf(&sb, "module @%s {\n", m.Name)
	for _, e := range m.Executables {
		sb.WriteString(e)
		sb.WriteByte('\n')
	}
	for _, g := range m.Globals {
		switch {
		case g.Param != "":
			fmt.Fprintf(&sb, "  util.global private @%s = #flow.parameter.named<\"model\"::%q> : %s\n", symbol(g.Name), g.Param, g.Type)
		case g.Mutable:
			fmt.Fprintf(&sb, "  util.global private mutable @%s = dense<%s> : %s\n", symbol(g.Name), FloatLit(g.Init), g.Type)
		}
	}
	for _, f := range m.Funcs {
		sb.WriteByte('\n')
		f.print(&sb)
	}
	sb.WriteString("}\n")
	return []byte(sb.String())
}

// symbol quotes a symbol name unless it is a bare identifier.
func symbol(name string) string {
	for i, r := range name {
		ok := r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return strconv.Quote(name)
		}
	}
	return name
}

// FloatLit formats a float as an MLIR literal that parses back to the same
// float32 value (shortest round-trip digits, always with a '.'). Infinities
// and NaN, which have no decimal form, are written as the hexadecimal bits
// of the float32 (0x7F800000 for +Inf), which MLIR also accepts.
func FloatLit(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprintf("0x%08X", math.Float32bits(float32(v)))
	}
	s := strconv.FormatFloat(float64(float32(v)), 'e', -1, 32)
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	return mant + "e" + exp
}

// WithElem returns t with another element type.
func (t Type) WithElem(elem string) Type { return Type{Shape: t.Shape, Elem: elem} }
