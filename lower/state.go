package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// Per-sequence state that is not indexed by position (ir.Window,
// ir.Recurrent: a causal conv's last k−1 inputs, a Mamba ssm_state) is
// grouped by kind and per-slot shape (each group one row of the state
// table, statetable.go). Each state a node declares (ir.Node.States) takes
// the next entry of the group of its kind and shape, in node order, and
// every entry is a mutable global of its own, named <group>.<entry>
// ("state.0", "state_1.3"), of shape
//
//	[1, 2+snapshots, slots, shape...] f32
//
// (one global per entry so that every layer runs the same dispatches, and
// each starting as a different splat: kvcache.go says why). The axis of size 2 is a pair of
// buffers chosen by position parity: the state a slot holds after its
// first p tokens is at buffer p mod 2. A call at positions start..start+n−1
// (n real tokens) reads buffer start mod 2 and writes buffer
// (start+n) mod 2. So a fixed-size state obeys the KV cache's rule (a call
// writes only where its slot's held tokens end; what a slot holds before
// its first unheld position is never overwritten): a padded decode row at
// the first position its slot does not hold (the engine's padding) writes
// the other buffer and leaves the held state as it was. Buffers 2.. are
// saved copies (Options.StateSnapshots) that prefill and decode never
// touch: snapshot_state (copy.go) copies a parity buffer into one of them
// and back.
//
// A row starting at position 0 reads zeros, whatever the buffer holds, so
// a sequence never sees state left by the slot's previous user (so what a
// global starts as is never read).

// stateGroup is one state group: a row of the state table, one global per
// entry.
type stateGroup struct {
	name    string           // "state", "state_1", ...: the state table's name of the group
	kind    ir.StateKind     // of every entry (ir.Window or ir.Recurrent)
	shape   []int64          // per-slot shape of its entries
	globals []codegen.Global // entry i: <name>.<i>, [1, 2+snapshots, slots, shape...]
}

// stateLayout assigns every declared state to an entry of a group.
type stateLayout struct {
	groups []*stateGroup
	entry  map[stateKey]cacheEntry
}

type stateKey struct {
	node int
	name string
}

func newStateLayout(g *ir.Graph, opts Options) *stateLayout {
	l := &stateLayout{entry: map[stateKey]cacheEntry{}}
	byShape := map[string]int{}
	for _, n := range g.Nodes {
		for _, st := range n.States {
			if st.Kind == ir.KVCache { // kvcache.go
				continue
			}
			key := fmt.Sprint(st.Kind, st.Shape)
			gi, ok := byShape[key]
			if !ok {
				gi = len(l.groups)
				byShape[key] = gi
				name := "state"
				if gi > 0 {
					name = fmt.Sprintf("state_%d", gi)
				}
				l.groups = append(l.groups, &stateGroup{name: name, kind: st.Kind, shape: st.Shape})
			}
			grp := l.groups[gi]
			i := int64(len(grp.globals))
			l.entry[stateKey{n.ID, st.Name}] = cacheEntry{group: gi, index: i}
			grp.globals = append(grp.globals, codegen.Global{
				Name: fmt.Sprintf("%s.%d", grp.name, i), Mutable: true,
				Type: codegen.T("f32", append([]int64{1, 2 + opts.StateSnapshots, opts.Slots}, grp.shape...)...),
			})
		}
	}
	return l
}

// rowLen is the number of real tokens of row b in this call, i32: the
// prefill's len, 1 in decode.
func (f *fn) rowLen(b int) codegen.Value {
	if f.length.Type.Elem != "" {
		return f.length
	}
	return f.constI32(1)
}

// stateValue returns the current value of state entry e's global in this
// function, loading the global on first use.
func (f *fn) stateValue(e cacheEntry) codegen.Value {
	gl := f.cache.states.groups[e.group].globals[e.index]
	if v, ok := f.stateVals[gl.Name]; ok {
		return v
	}
	v := f.GlobalLoad(gl)
	f.stateVals[gl.Name] = v
	return v
}

func (f *fn) stateEntry(n *ir.Node, name string) (cacheEntry, []int64, bool) {
	e, ok := f.cache.states.entry[stateKey{n.ID, name}]
	if !ok {
		f.Errorf("%s declares no state %q", n.Prim, name)
		return e, nil, false
	}
	return e, f.cache.states.groups[e.group].shape, true
}

// parity is (x mod 2) for a non-negative i32 scalar.
func (f *fn) parity(x codegen.Value) codegen.Value {
	return f.binary("stablehlo.remainder", x, f.constI32(2))
}

// readState returns the state `name` of node n for every row of this
// call, [batch, shape...] f32: the buffer of the row's start position in
// the row's slot, or zeros for a row starting at position 0.
func (f *fn) readState(n *ir.Node, name string) codegen.Value {
	e, shape, ok := f.stateEntry(n, name)
	if !ok {
		return codegen.Value{Type: codegen.T("f32", append([]int64{f.batch}, shape...)...)}
	}
	cur := f.stateValue(e)
	zero := f.constI32(0)
	sizes := append([]int64{1, 1, 1}, shape...)
	one := codegen.T("f32", shape...)
	rows := make([]codegen.Value, len(f.slots))
	for b, slot := range f.slots {
		idx := []codegen.Value{cur, zero, f.parity(f.starts[b]), slot}
		for range shape {
			idx = append(idx, zero)
		}
		row := f.Op("stablehlo.dynamic_slice", cur.Type.With(sizes...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(sizes))}, idx...)
		row = f.reshape(row, shape...)
		fresh := f.broadcast(f.compare("EQ", f.starts[b], zero), one.WithElem("i1"))
		row = f.selectOp(fresh, f.splat(0, one), row)
		rows[b] = f.reshape(row, append([]int64{1}, shape...)...)
	}
	if len(rows) == 1 {
		return rows[0]
	}
	return f.concat(0, rows...)
}

// writeState stores v, [batch, shape...] f32, as state `name` of node n:
// row b into its slot's buffer of position start[b] + len[b] (the state
// after the row's last real token).
func (f *fn) writeState(n *ir.Node, name string, v codegen.Value) {
	e, shape, ok := f.stateEntry(n, name)
	if !ok {
		return
	}
	cur := f.stateValue(e)
	zero := f.constI32(0)
	for b, slot := range f.slots {
		row := v
		if len(f.slots) > 1 {
			row = f.sliceDim(v, 0, int64(b), int64(b)+1)
		}
		row = f.reshape(row, append([]int64{1, 1, 1}, shape...)...)
		idx := []codegen.Value{cur, row, zero, f.parity(f.add(f.starts[b], f.rowLen(b))), slot}
		for range shape {
			idx = append(idx, zero)
		}
		cur = f.Op("stablehlo.dynamic_update_slice", cur.Type, nil, idx...)
	}
	f.stateVals[f.cache.states.groups[e.group].globals[e.index].Name] = cur
}

// storeStates writes every state global this function updated back, in
// layout order.
func (f *fn) storeStates() {
	for _, grp := range f.cache.states.groups {
		for _, gl := range grp.globals {
			if v, ok := f.stateVals[gl.Name]; ok {
				f.GlobalStore(gl, v)
			}
		}
	}
}
