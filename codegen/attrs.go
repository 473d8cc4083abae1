package codegen

import (
	"fmt"
	"strings"
)

// Op attributes, kept typed: the builder prints them as MLIR (the text
// inside an op's braces) and Verify reads the values, never the text.
// Printing is deterministic: attributes and struct fields in the order
// given, integers in decimal, floats by FloatLit.

// Attr is one attribute of an op, name = value:
// A("permutation", I64s{1, 0}) prints `permutation = array<i64: 1, 0>`.
type Attr struct {
	Name  string
	Value AttrValue
}

// A returns the attribute name = v.
func A(name string, v AttrValue) Attr { return Attr{Name: name, Value: v} }

// Attrs are an op's attributes, in printing order.
type Attrs []Attr

// AttrValue is a typed attribute value: Int, I64s, Ints, Enum, Struct,
// DenseInts or DenseFloats.
type AttrValue interface {
	// print appends the value's MLIR text.
	print(b *strings.Builder)
}

// Int is an integer attribute: `3 : i64`, or bare `3` with Type "" (a
// field of a #stablehlo struct such as index_vector_dim).
type Int struct {
	V    int64
	Type string // the integer type, "i64"; "" prints no type
}

// I64s is a dense i64 array attribute: `array<i64: 0, 1>` (`array<i64>`
// when empty).
type I64s []int64

// Ints is a bracketed integer list, as the fields of #stablehlo structs
// take them: `[0, 1]`.
type Ints []int64

// Enum is a dialect enum attribute: Enum{"stablehlo", "comparison_direction",
// "LT"} prints `#stablehlo<comparison_direction LT>`.
type Enum struct {
	Dialect, Kind, Value string
}

// Struct is a dialect struct attribute with named fields:
// Struct{"stablehlo.dot", ...} prints `#stablehlo.dot<a = [0], b = [1]>`.
type Struct struct {
	Name   string
	Fields Attrs
}

// DenseInts is an integer elements attribute of Type: one value (a
// splat, `dense<0> : tensor<5xi32>`) or, with List, every element
// (`dense<[1, 2]> : tensor<2xi32>`).
type DenseInts struct {
	Type   Type
	Values []int64
	List   bool
}

// DenseFloats is a float elements attribute of Type, each value rounded
// to f32 and printed by FloatLit: a splat, or with List every element.
type DenseFloats struct {
	Type   Type
	Values []float64
	List   bool
}

func (v Int) print(b *strings.Builder) {
	fmt.Fprint(b, v.V)
	if v.Type != "" {
		b.WriteString(" : " + v.Type)
	}
}

func (v I64s) print(b *strings.Builder) {
	if len(v) == 0 {
		b.WriteString("array<i64>")
		return
	}
	b.WriteString("array<i64: ")
	writeInts(b, v)
	b.WriteString(">")
}

func (v Ints) print(b *strings.Builder) {
	b.WriteString("[")
	writeInts(b, v)
	b.WriteString("]")
}

func (v Enum) print(b *strings.Builder) {
	fmt.Fprintf(b, "#%s<%s %s>", v.Dialect, v.Kind, v.Value)
}

func (v Struct) print(b *strings.Builder) {
	b.WriteString("#" + v.Name + "<")
	v.Fields.print(b)
	b.WriteString(">")
}

func (v DenseInts) print(b *strings.Builder) {
	parts := make([]string, len(v.Values))
	for i, x := range v.Values {
		parts[i] = fmt.Sprint(x)
	}
	writeDense(b, parts, v.List, v.Type)
}

func (v DenseFloats) print(b *strings.Builder) {
	parts := make([]string, len(v.Values))
	for i, x := range v.Values {
		parts[i] = FloatLit(x)
	}
	writeDense(b, parts, v.List, v.Type)
}

func writeDense(b *strings.Builder, parts []string, list bool, t Type) {
	b.WriteString("dense<")
	if list {
		b.WriteString("[" + strings.Join(parts, ", ") + "]")
	} else if len(parts) > 0 {
		b.WriteString(parts[0])
	}
	b.WriteString("> : " + t.String())
}

func writeInts(b *strings.Builder, xs []int64) {
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(b, x)
	}
}

func (as Attrs) print(b *strings.Builder) {
	for i, a := range as {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.Name + " = ")
		a.Value.print(b)
	}
}

// String is the attributes' MLIR text, as inside an op's braces.
func (as Attrs) String() string {
	var b strings.Builder
	as.print(&b)
	return b.String()
}

// valueText is one value's MLIR text.
func valueText(v AttrValue) string {
	var b strings.Builder
	v.print(&b)
	return b.String()
}

// find returns the value of attribute name, looking into struct values'
// fields too (dot_general's dimension numbers sit in one struct).
func (as Attrs) find(name string) (AttrValue, bool) {
	for _, a := range as {
		if a.Name == name {
			return a.Value, true
		}
		if s, ok := a.Value.(Struct); ok {
			if v, ok := s.Fields.find(name); ok {
				return v, true
			}
		}
	}
	return nil, false
}

// ints reads an integer list attribute (I64s or Ints).
func (as Attrs) ints(name string) ([]int64, error) {
	v, ok := as.find(name)
	switch v := v.(type) {
	case I64s:
		return append([]int64{}, v...), nil
	case Ints:
		return append([]int64{}, v...), nil
	}
	if !ok {
		return nil, fmt.Errorf("missing attribute %s", name)
	}
	return nil, fmt.Errorf("attribute %s is not an integer list", name)
}

// int reads an integer attribute.
func (as Attrs) int(name string) (int64, error) {
	v, ok := as.find(name)
	if i, isInt := v.(Int); isInt {
		return i.V, nil
	}
	if !ok {
		return 0, fmt.Errorf("missing attribute %s", name)
	}
	return 0, fmt.Errorf("attribute %s is not an integer", name)
}

// enum reads an enum attribute's value, "" when absent or not an enum.
func (as Attrs) enum(name string) string {
	v, _ := as.find(name)
	e, _ := v.(Enum)
	return e.Value
}
