package codegen

import (
	"fmt"
	"strings"
)

// region is the body of a counted loop as Verify sees it: its block
// arguments (the counter, then the carried values), its ops and the values
// it yields (the next carried values, counter excluded).
type region struct {
	args    []Value
	ops     []op
	results []Value
}

// Loop emits a counted loop: stablehlo.while whose first carried value is
// an i32 counter i running 0, 1, …, trips−1 and whose other carried values
// start at init. body builds one trip: it gets the counter (tensor<i32>)
// and the current carried values, may use any value defined before the
// loop (StableHLO's regions see the enclosing scope) and returns the next
// carried values, of the same types. Loop returns the carried values after
// the last trip. Values body defines stay inside the loop: using one
// after it is an error of Verify.
//
// A loop keeps one trip's temporaries live at a time, which no unrolled
// form guarantees (IREE schedules independent dispatches side by side and
// their transients with them): an encoder's attention over thousands of
// rows runs its queries a block per trip instead of materializing every
// score at once (lower's bidirectional_attention).
func (f *Func) Loop(trips int64, init []Value, body func(i Value, carried []Value) []Value) []Value {
	id := f.next
	f.next++
	counter := T("i32")
	types := append([]Type{counter}, typesOf(init)...)
	condArgs := blockArgs(fmt.Sprintf("%%w%dc", id), types)
	bodyArgs := blockArgs(fmt.Sprintf("%%w%db", id), types)

	// The body is built into fresh line and op lists, then set back.
	lines, ops := f.lines, f.ops
	f.lines, f.ops = nil, nil
	next := body(bodyArgs[0], bodyArgs[1:])
	one := f.Op("stablehlo.constant", counter, Attrs{A("value", DenseInts{Type: counter, Values: []int64{1}})})
	step := f.Op("stablehlo.add", counter, nil, bodyArgs[0], one)
	bodyLines, bodyOps := f.lines, f.ops
	f.lines, f.ops = lines, ops
	if len(next) != len(init) {
		f.Errorf("loop body returns %d values for %d carried", len(next), len(init))
		next = init
	}
	yield := append([]Value{step}, next...)

	results := make([]Value, len(init))
	name := fmt.Sprintf("%%%d", id)
	for i, v := range init {
		results[i] = Value{name: fmt.Sprintf("%s#%d", name, i+1), Type: v.Type}
	}
	operands := append([]Value{f.constCounter(0)}, init...)
	f.record(op{name: "stablehlo.while", operands: operands, loop: &region{args: bodyArgs, ops: bodyOps, results: yield}, results: results})

	var sb strings.Builder
	fmt.Fprintf(&sb, "%s:%d = \"stablehlo.while\"(%s) ({\n", name, len(types), names(operands))
	fmt.Fprintf(&sb, "    ^bb0(%s):\n", argList(condArgs))
	fmt.Fprintf(&sb, "      %%w%dn = \"stablehlo.constant\"() {value = dense<%d> : tensor<i32>} : () -> tensor<i32>\n", id, trips)
	fmt.Fprintf(&sb, "      %%w%dlt = \"stablehlo.compare\"(%s, %%w%dn) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>\n", id, condArgs[0].name, id)
	fmt.Fprintf(&sb, "      \"stablehlo.return\"(%%w%dlt) : (tensor<i1>) -> ()\n", id)
	sb.WriteString("    }, {\n")
	fmt.Fprintf(&sb, "    ^bb0(%s):\n", argList(bodyArgs))
	for _, l := range bodyLines {
		sb.WriteString("      ")
		sb.WriteString(strings.ReplaceAll(l, "\n", "\n  "))
		sb.WriteByte('\n')
	}
	fmt.Fprintf(&sb, "      \"stablehlo.return\"(%s) : (%s) -> ()\n", names(yield), typeList(types))
	fmt.Fprintf(&sb, "    }) : (%s) -> (%s)", typeList(types), typeList(types))
	f.emit(sb.String())
	return results
}

// constCounter emits an i32 scalar constant.
func (f *Func) constCounter(v int64) Value {
	t := T("i32")
	return f.Op("stablehlo.constant", t, Attrs{A("value", DenseInts{Type: t, Values: []int64{v}})})
}

func typesOf(vs []Value) []Type {
	ts := make([]Type, len(vs))
	for i, v := range vs {
		ts[i] = v.Type
	}
	return ts
}

func blockArgs(prefix string, types []Type) []Value {
	args := make([]Value, len(types))
	for i, t := range types {
		args[i] = Value{name: fmt.Sprintf("%s%d", prefix, i), Type: t}
	}
	return args
}

func names(vs []Value) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.name
	}
	return strings.Join(s, ", ")
}

func argList(vs []Value) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.name + ": " + v.Type.String()
	}
	return strings.Join(s, ", ")
}

func typeList(ts []Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}

// loopScope is the scope of a loop's body: the values defined before the
// loop and its block arguments (the counter, then the carried values).
func loopScope(o op, defined map[string]Type) map[string]Type {
	scope := make(map[string]Type, len(defined)+len(o.loop.args))
	for k, v := range defined {
		scope[k] = v
	}
	for _, a := range o.loop.args {
		scope[a.name] = a.Type
	}
	return scope
}

// checkYield checks that a loop's body yields values of its scope with the
// carried types, the counter first.
func checkYield(o op, scope map[string]Type) error {
	for i, y := range o.loop.results {
		if t, ok := scope[y.name]; !ok || t.String() != o.loop.args[i].Type.String() {
			return fmt.Errorf("the body's value %d (%s %s) is not a value of the body of type %s", i, y.name, y.Type, o.loop.args[i].Type)
		}
	}
	return nil
}
