package lower

import (
	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// fn lowers one graph instance (one entry point): the symbolic dimensions
// bound to batch and seq, and the per-call values primitives read.
type fn struct {
	*codegen.Func
	g       *ir.Graph
	opts    Options
	globals map[string]codegen.Global
	cache   *cacheLayout
	batch   int64
	seq     int64

	positions codegen.Value // [batch, seq] i32: absolute position of each token
	// ropePositions, in a module whose RoPE is multimodal (MRoPE), is the
	// entry point's rope_positions argument: [3, batch, seq] i32, each
	// token's (temporal, height, width) RoPE position.
	ropePositions codegen.Value
	context       codegen.Value        // i32: L, the cache positions attention reads (the dynamic dimension)
	starts        []codegen.Value      // per batch element, i32: position of its first token (KV write offset)
	slots         []codegen.Value      // per batch element, i32: its KV-cache slot
	mkSeqLens     func() codegen.Value // emits [batch] i32: each sequence's last real position + 1 (see seqLengths)
	hasLast       bool                 // prefill: logits come from one position of the chunk
	last          codegen.Value        // prefill: i32 index within the chunk of the token whose logits are returned
	allRows       bool                 // verify: the head runs on every position of the chunk
	inHead        bool                 // lowering nodes after the decoder layers

	vals     map[*ir.Node]codegen.Value
	selected map[*ir.Node]codegen.Value // pre-head values narrowed to the returned position
	weights  map[string]codegen.Value
	memo     map[string]codegen.Value   // per-call shared tables (e.g. RoPE cos/sin)
	shapes   map[string][]int64         // logical shape of each weight
	grouped  map[*ir.Node]codegen.Value // linear nodes computed by an earlier grouped kernel dispatch
	caches   map[string]codegen.Value   // current value of each KV-cache global, by name

	length    codegen.Value            // prefill: i32, the real tokens of the chunk (decode: unset, 1 per row)
	rows      codegen.Value            // a variable-size encoder's entry point: i32, its real rows (the rest padding)
	stateVals map[string]codegen.Value // current value of each state global, by name (state.go)
}

func newFn(f *codegen.Func, g *ir.Graph, opts Options, globals map[string]codegen.Global, cache *cacheLayout, batch, seq int64) *fn {
	r := &fn{Func: f, g: g, opts: opts, globals: globals, cache: cache, batch: batch, seq: seq, caches: map[string]codegen.Value{}, stateVals: map[string]codegen.Value{},
		vals: map[*ir.Node]codegen.Value{}, selected: map[*ir.Node]codegen.Value{},
		weights: map[string]codegen.Value{}, memo: map[string]codegen.Value{}, shapes: map[string][]int64{}, grouped: map[*ir.Node]codegen.Value{}}
	for _, w := range g.Weights {
		r.shapes[w.Name] = w.Shape
	}
	return r
}

// run lowers every node and returns the logits, [batch, 1, vocab] f32
// ([1, seq, vocab] with allRows).
// It stops at the first error (see Err), which names the node's position.
func (f *fn) run(tokens codegen.Value) codegen.Value {
	f.vals[f.g.Tokens] = tokens
	nodes := f.g.Nodes[1:]
	if f.g.MTP != nil { // the MTP module runs in its own entry point (mtp.go)
		nodes = f.g.Nodes[1:f.g.MTP.Start]
	}
	if !f.lowerNodes(nodes) {
		return tokens
	}
	f.SetLoc("logits", f.g.Logits.Pos.Filename, f.g.Logits.Pos.Line, f.g.Logits.Pos.Column)
	out := f.val(f.g.Logits)
	if !f.inHead && f.seq > 1 && !f.allRows { // no head section: select here
		out = f.selectLast(out)
	}
	if f.g.MTP != nil {
		f.writeHidden(f.vals[f.g.MTP.Hidden])
	}
	f.storeCaches()
	return out
}

// lowerNodes lowers nodes in order into f.vals; false after an error.
func (f *fn) lowerNodes(nodes []*ir.Node) bool {
	for _, n := range nodes {
		if n.Prim == "encoded" { // an encoder's rows: a prefill's argument, none elsewhere (masked_scatter)
			continue
		}
		if n.Prim == "pixels" || n.Prim == "index" { // an encoder's other inputs: its entry point's arguments (lowerEncoderAt)
			continue
		}
		if n.ID >= f.g.HeadStart && !f.inHead {
			f.inHead = true
			if !f.allRows {
				f.seq = 1
			}
		}
		f.SetLoc(n.Name, n.Pos.Filename, n.Pos.Line, n.Pos.Column)
		p, ok := primitives.lookup(n.Prim)
		if !ok {
			f.Errorf("no lowering for primitive %q", n.Prim)
			return false
		}
		v := f.lowerNode(p, n)
		if want := f.ty(n.Type); v.Type.String() != want.String() && f.Err() == nil {
			f.Errorf("%s lowered to %s, its shape rule says %s", n.Prim, v.Type, want)
		}
		if f.Err() != nil {
			return false
		}
		f.vals[n] = v
	}
	return true
}

// lowerNode runs a primitive's lowering. A lowering that panics (a bug, or
// a value left malformed by an error recorded before) becomes an error at
// the node's position instead of a crash.
func (f *fn) lowerNode(p *primitive, n *ir.Node) (v codegen.Value) {
	defer func() {
		if r := recover(); r != nil {
			f.Errorf("lowering %s failed: %v", n.Prim, r)
			v = codegen.Value{Type: f.ty(n.Type)}
		}
	}()
	return p.lower(f, n)
}

// arg returns the lowered value of a node's i-th tensor operand.
func (f *fn) arg(n *ir.Node, i int) codegen.Value { return f.val(n.Args[i]) }

// val returns a node's lowered value; inside the head, a value from before
// the head is narrowed to the position whose logits are returned.
func (f *fn) val(n *ir.Node) codegen.Value {
	v := f.vals[n]
	if !f.inHead || n.ID >= f.g.HeadStart || v.Type.Rank() < 2 || !f.hasLast {
		return v
	}
	if s, ok := f.selected[n]; ok {
		return s
	}
	s := f.selectLast(v)
	f.selected[n] = s
	return s
}

// selectLast narrows [1, S, ...] to [1, 1, ...] at position f.last.
func (f *fn) selectLast(v codegen.Value) codegen.Value {
	if !f.hasLast {
		return v
	}
	sizes := append([]int64{1, 1}, v.Type.Shape[2:]...)
	idx := []codegen.Value{f.constI32(0), f.last}
	for range v.Type.Shape[2:] {
		idx = append(idx, f.constI32(0))
	}
	return f.Op("stablehlo.dynamic_slice", v.Type.With(sizes...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(sizes))}, append([]codegen.Value{v}, idx...)...)
}

// ty binds an IR type's symbolic dimensions for this instance.
func (f *fn) ty(t ir.Type) codegen.Type {
	shape := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		switch d {
		case ir.Batch:
			shape[i] = f.batch
		case ir.Seq:
			shape[i] = f.seq
		default:
			shape[i] = int64(d)
		}
	}
	return codegen.T(string(t.DType), shape...)
}

// weight loads a checkpoint tensor (once per function) decoded to f32, in
// its logical shape (the IR's).
func (f *fn) weight(name string) codegen.Value {
	if v, ok := f.weights[name]; ok {
		return v
	}
	raw, st, shape := f.stored(name)
	if raw.Type.Elem == "" {
		return codegen.Value{Type: codegen.T("f32")}
	}
	cols := shape[len(shape)-1]
	v := f.decodeRows(st, f.reshape(raw, raw.Type.NumElements()/raw.Type.Shape[raw.Type.Rank()-1], raw.Type.Shape[raw.Type.Rank()-1]), cols)
	v = f.reshape(v, shape...)
	f.weights[name] = v
	return v
}

// stored loads a checkpoint tensor's global as stored (once per function)
// and returns it with its storage format and logical shape.
func (f *fn) stored(name string) (codegen.Value, *storage, []int64) {
	g, ok := f.globals[name]
	if !ok {
		f.Errorf("weight %s has no global", name)
		return codegen.Value{}, nil, nil
	}
	st, err := f.opts.storageOf(name)
	if err != nil {
		f.Errorf("%v", err)
		return codegen.Value{}, nil, nil
	}
	key := "stored:" + name
	v, ok := f.memo[key]
	if !ok {
		v = f.GlobalLoad(g)
		f.memo[key] = v
	}
	return v, st, f.shapes[name]
}
