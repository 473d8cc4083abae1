package codegen

import (
	"fmt"
	"strings"
)

// Value is an SSA value of a Func.
type Value struct {
	name string
	Type Type
}

func (v Value) String() string { return v.name }

// Func builds one exported function. Its op methods follow the builder
// pattern of XLA: a malformed op records the first error (see Err) and
// returns a placeholder, so lowering code reads like math without an error
// check after every op. Every op is also kept in structured form, for
// Module.Verify.
type Func struct {
	Name    string
	Args    []Value
	Results []Value
	lines   []string
	ops     []op
	next    int
	loc     string
	where   string // the current source position, for errors: "file:line:col: name"
	err     error
}

// op is one emitted operation as Verify sees it.
type op struct {
	name     string  // "stablehlo.add", "util.global.load", ...
	result   *Value  // nil for ops without a result
	attrs    Attrs   // typed attributes (see Func.Op)
	operands []Value // tensor and index operands, in order
	dims     []int64 // stablehlo.reduce: the reduced dimensions
	body     string  // stablehlo.reduce: the body op
	global   string  // util.global.load/store: the global's name
	callee   string  // flow.dispatch: "executable::export"
	where    string  // source position when the op was emitted
	loop     *region // stablehlo.while (Func.Loop): its body
	results  []Value // stablehlo.while: its results, the carried values
}

// NewFunc starts a function with the given argument types.
func (m *Module) NewFunc(name string, args ...Type) *Func {
	f := &Func{Name: name}
	for i, t := range args {
		f.Args = append(f.Args, Value{name: fmt.Sprintf("%%arg%d", i), Type: t})
	}
	m.Funcs = append(m.Funcs, f)
	return f
}

// SetLoc sets the location attached to ops emitted from now on: a name
// location wrapping a file location, e.g. loc("layers.0/q"("llama.arch":12:3)).
// Errors recorded from now on (Errorf, Module.Verify) start with it too.
func (f *Func) SetLoc(name, file string, line, col int) {
	f.loc = fmt.Sprintf("loc(%q(%q:%d:%d))", name, file, line, col)
	f.where = fmt.Sprintf("%s:%d:%d: %s", file, line, col, name)
}

// Err returns the first error recorded while building, or nil.
func (f *Func) Err() error { return f.err }

// Errorf records an error (the first one wins) in the builder, prefixed
// with the current source position (SetLoc) and the function name:
// `llama.arch:44:9: model.layers.0/attention (prefill_16): message`.
func (f *Func) Errorf(format string, args ...any) {
	if f.err == nil {
		f.err = fmt.Errorf("%s: %s", f.context(f.where), fmt.Sprintf(format, args...))
	}
}

// context names where an error arose: the source position, if any, and
// the function.
func (f *Func) context(where string) string {
	if where == "" {
		return f.Name
	}
	return where + " (" + f.Name + ")"
}

// Return sets the function results.
func (f *Func) Return(vals ...Value) { f.Results = vals }

func (f *Func) newValue(t Type) Value {
	v := Value{name: fmt.Sprintf("%%%d", f.next), Type: t}
	f.next++
	return v
}

// Op emits a generic-form op with one result:
// %r = "name"(operands) {attrs} : (operand types) -> result type.
// attrs are typed (nil for none); Verify reads them as values.
func (f *Func) Op(name string, result Type, attrs Attrs, operands ...Value) Value {
	r := f.newValue(result)
	var names, types []string
	for _, o := range operands {
		names = append(names, o.name)
		types = append(types, o.Type.String())
	}
	f.record(op{name: name, result: &r, attrs: attrs, operands: operands})
	text := ""
	if len(attrs) > 0 {
		text = " {" + attrs.String() + "}"
	}
	f.emit(fmt.Sprintf("%s = %q(%s)%s : (%s) -> %s", r.name, name, strings.Join(names, ", "), text, strings.Join(types, ", "), result))
	return r
}

func (f *Func) record(o op) {
	o.where = f.where
	f.ops = append(f.ops, o)
}

// Reduce emits stablehlo.reduce of x over dims with a binary body op
// ("stablehlo.add", "stablehlo.maximum") and scalar init value.
func (f *Func) Reduce(x, init Value, body string, dims ...int64) Value {
	var shape []int64
	for i, d := range x.Type.Shape {
		if !containsDim(dims, int64(i)) {
			shape = append(shape, d)
		}
	}
	r := f.newValue(x.Type.With(shape...))
	f.record(op{name: "stablehlo.reduce", result: &r, operands: []Value{x, init}, dims: dims, body: body})
	s := T(x.Type.Elem)
	f.emit(fmt.Sprintf("%s = \"stablehlo.reduce\"(%s, %s) ({\n    ^bb0(%%a: %s, %%b: %s):\n      %%c = %q(%%a, %%b) : (%s, %s) -> %s\n      \"stablehlo.return\"(%%c) : (%s) -> ()\n    }) {dimensions = %s} : (%s, %s) -> %s",
		r.name, x.name, init.name, s, s, body, s, s, s, s, valueText(I64s(dims)), x.Type, init.Type, r.Type))
	return r
}

// SortDescending emits stablehlo.sort of x along dim, largest first (a
// float comparison: NaN-free inputs sort totally); the result has x's
// type, and dim may be dynamic. IREE lowers it to one linalg_ext.sort
// dispatch per row block.
func (f *Func) SortDescending(x Value, dim int64) Value {
	r := f.newValue(x.Type)
	f.record(op{name: "stablehlo.sort", result: &r, operands: []Value{x}, dims: []int64{dim}})
	s := T(x.Type.Elem)
	f.emit(fmt.Sprintf("%s = \"stablehlo.sort\"(%s) ({\n    ^bb0(%%a: %s, %%b: %s):\n      %%c = \"stablehlo.compare\"(%%a, %%b) {comparison_direction = #stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type FLOAT>} : (%s, %s) -> tensor<i1>\n      \"stablehlo.return\"(%%c) : (tensor<i1>) -> ()\n    }) {dimension = %d : i64, is_stable = false} : (%s) -> %s",
		r.name, x.name, s, s, s, s, dim, x.Type, r.Type))
	return r
}

// Index emits an `index` constant.
func (f *Func) Index(n int64) Value {
	r := f.newValue(IndexType)
	f.record(op{name: "arith.constant", result: &r})
	f.emit(fmt.Sprintf("%s = arith.constant %d : index", r.name, n))
	return r
}

// Dispatch emits a flow.dispatch of entry point @exe::@export over workload
// (index values) with operands args (tensors, then index values) and one
// tensor result: the call of a hand-written kernel (Module.AddExecutable).
func (f *Func) Dispatch(exe, export string, workload []Value, result Type, args ...Value) Value {
	r := f.newValue(result)
	f.record(op{name: "flow.dispatch", result: &r, operands: append(append([]Value{}, workload...), args...), callee: exe + "::" + export})
	var wl, names, types []string
	for _, w := range workload {
		wl = append(wl, w.name)
	}
	for _, a := range args {
		names = append(names, a.name)
		types = append(types, a.Type.String())
	}
	f.emit(fmt.Sprintf("%s = flow.dispatch @%s::@%s[%s](%s) : (%s) -> %s", r.name, exe, export,
		strings.Join(wl, ", "), strings.Join(names, ", "), strings.Join(types, ", "), result))
	return r
}

// GlobalLoad reads a module global.
func (f *Func) GlobalLoad(g Global) Value {
	r := f.newValue(g.Type)
	f.record(op{name: "util.global.load", result: &r, global: g.Name})
	f.emit(fmt.Sprintf("%s = util.global.load @%s : %s", r.name, symbol(g.Name), g.Type))
	return r
}

// GlobalStore writes a mutable module global.
func (f *Func) GlobalStore(g Global, v Value) {
	if v.Type.String() != g.Type.String() {
		f.Errorf("store of %s into global %s of type %s", v.Type, g.Name, g.Type)
	}
	f.record(op{name: "util.global.store", operands: []Value{v}, global: g.Name})
	f.emit(fmt.Sprintf("util.global.store %s, @%s : %s", v.name, symbol(g.Name), g.Type))
}

func (f *Func) emit(line string) {
	if f.loc != "" {
		line += " " + f.loc
	}
	f.lines = append(f.lines, line)
}

func (f *Func) print(sb *strings.Builder) {
	var args, results, rets []string
	for _, a := range f.Args {
		args = append(args, a.name+": "+a.Type.String())
	}
	for _, r := range f.Results {
		results = append(results, r.Type.String())
		rets = append(rets, r.name)
	}
	fmt.Fprintf(sb, "  func.func @%s(%s) -> (%s) {\n", f.Name, strings.Join(args, ", "), strings.Join(results, ", "))
	for _, l := range f.lines {
		sb.WriteString("    ")
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	if len(rets) == 0 {
		sb.WriteString("    func.return\n  }\n")
		return
	}
	fmt.Fprintf(sb, "    func.return %s : %s\n  }\n", strings.Join(rets, ", "), strings.Join(results, ", "))
}

func containsDim(dims []int64, d int64) bool {
	for _, x := range dims {
		if x == d {
			return true
		}
	}
	return false
}
