package lower

import (
	"slices"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/formats/abi"
)

// Multi-token prediction (ir.Graph.MTP, the .arch's mtp module), lowered
// with Options.MTP. The module drafts for speculative decoding from the
// target's own hidden state, so the target keeps it: prefill, decode and
// verify write the hidden state of every position they run (the
// module's Hidden node, the last decoder layer's output before the final
// norm, which a module that reads the normed state norms itself) into a
// global beside the KV cache, entry 0 of a KV-cache row of its own in the
// state table,
//
//	mtp_hidden.0 [1, slots, max_len, hidden] f32
//
// a row per position, written and dropped as KV rows are (rows past the
// positions a slot holds are never read; a rejected draft's rows are
// overwritten by the next call). The module runs in its own entry point,
//
//	mtp_K(tokens: [1, K] i32, slot: i32, start: i32, len: i32, chain: i32) -> logits [K, vocab] f32
//
// (abi.MTPName): for positions t = start..start+len-1 of one sequence,
// tokens[t-start] is the token at t+1 and the hidden state is mtp_hidden's
// row t, except, with chain nonzero, the first position's, which is the
// module's own output at the position before (a chained draft: it takes
// the place of the body's mtp_state, ir.MTP.State, where the module
// binds one, else of the hidden state itself); it
// returns the module's logits for each position (the token at
// t+2) and writes its own layer's keys and values at t, in the module's
// KV-cache entries (the cache layout holds its attention site like any
// other), so its attention at t sees the module's rows 0..t, as a layer
// of the target sees its own. Its buckets are the prefill's and the
// verify's (a prompt's catch-up, then the one or two positions a verify
// step adds). A module that binds mtp_hidden (ir.MTP.Next) keeps its
// output at the last position run per slot,
//
//	mtp_chain [slots, 1, hidden] f32
//
// scratch that only the next call with chain set reads: a chained draft
// runs the module again at the next position on its own draft token.

// mtpHiddenGlobal is the hidden-state global of g's module.
func mtpHiddenGlobal(g *ir.Graph, opts Options) codegen.Global {
	h := int64(g.MTP.Hidden.Type.Shape[2])
	// One entry of a KV-cache row of the state table (statetable.go), so
	// named and laid out as the KV cache's entries (kvcache.go); of a type
	// no other state has, so its starting splat may be theirs.
	return codegen.Global{Name: "mtp_hidden.0", Type: codegen.T("f32", 1, opts.Slots, opts.MaxLen, h), Mutable: true}
}

// mtpChainGlobal is the chained-draft global of g's module (ir.MTP.Next).
func mtpChainGlobal(g *ir.Graph, opts Options) codegen.Global {
	h := int64(g.MTP.Hidden.Type.Shape[2])
	return codegen.Global{Name: "mtp_chain", Type: codegen.T("f32", opts.Slots, 1, h), Mutable: true}
}

// MTPBuckets are the chunk lengths of the mtp_K entry points Lower emits
// for opts: the prefill and verify buckets, ascending, each once.
func MTPBuckets(opts Options) []int64 {
	out := slices.Concat(opts.VerifyBuckets, opts.PrefillBuckets)
	slices.Sort(out)
	return slices.Compact(out)
}

// writeHidden writes this call's hidden states h [B, S, hidden] into
// mtp_hidden at (slots[b], starts[b]) for each batch element b.
func (f *fn) writeHidden(h codegen.Value) {
	gl := mtpHiddenGlobal(f.g, f.opts)
	cur := f.GlobalLoad(gl)
	zero := f.constI32(0)
	B := h.Type.Shape[0]
	for b := int64(0); b < B; b++ {
		row := h
		if B > 1 {
			row = f.sliceDim(h, 0, b, b+1)
		}
		row = f.reshape(row, append([]int64{1}, row.Type.Shape...)...) // [1, 1, S, hidden]
		cur = f.Op("stablehlo.dynamic_update_slice", cur.Type, nil, cur, row, zero, f.slots[b], f.starts[b], zero)
	}
	f.GlobalStore(gl, cur)
}

// lowerMTP emits mtp_K (abi.MTPName): the MTP module over K positions of
// one sequence, set up as verify_K is (every row returned, the cache
// written at start..), its hidden states read from mtp_hidden.
func lowerMTP(m *codegen.Module, g *ir.Graph, opts Options, globals map[string]codegen.Global, cache *cacheLayout, k int64) error {
	args := []codegen.Type{codegen.T("i32", 1, k), codegen.T("i32"), codegen.T("i32"), codegen.T("i32"), codegen.T("i32")}
	mrope := MRoPE(g)
	if mrope {
		args = append(args, codegen.T("i32", 3, 1, k))
	}
	fn := m.NewFunc(abi.MTPName(k), args...)
	f := newFn(fn, g, opts, globals, cache, 1, k)
	tokens, slot, start, length, chain := fn.Args[0], fn.Args[1], fn.Args[2], fn.Args[3], fn.Args[4]
	if mrope {
		f.ropePositions = fn.Args[5]
	}
	f.context = f.add(start, f.constI32(k))
	f.slots = []codegen.Value{slot}
	iota := fn.Op("stablehlo.iota", codegen.T("i32", 1, k), codegen.Attrs{codegen.A("iota_dimension", codegen.Int{V: 1, Type: "i64"})})
	f.positions = f.add(iota, f.broadcast(start, codegen.T("i32", 1, k)))
	f.starts = []codegen.Value{start}
	f.allRows = true
	f.inHead = true
	f.length = length
	f.mkSeqLens = func() codegen.Value { return f.reshape(f.add(start, length), 1) }
	gl := mtpHiddenGlobal(g, opts)
	all := f.GlobalLoad(gl)
	h := gl.Type.Shape[3]
	sizes := []int64{1, 1, k, h}
	zero := f.constI32(0)
	hidden := f.Op("stablehlo.dynamic_slice", all.Type.With(sizes...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(sizes))}, all, zero, slot, start, zero)
	hidden = f.reshape(hidden, 1, k, h)
	var chainGl codegen.Global
	// chained replaces row 0 of v, the state the module reads, with the
	// module's own last output (a chained draft).
	chained := func(v codegen.Value) codegen.Value { return v }
	if g.MTP.Next != nil {
		chainGl = mtpChainGlobal(g, opts)
		chained = func(v codegen.Value) codegen.Value {
			prev := f.GlobalLoad(chainGl)
			one := []int64{1, 1, h}
			row := f.Op("stablehlo.dynamic_slice", prev.Type.With(one...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(one))}, prev, slot, zero, zero)
			upd := f.Op("stablehlo.dynamic_update_slice", v.Type, nil, v, row, zero, zero, zero)
			on := f.broadcast(f.compare("NE", chain, zero), v.Type.WithElem("i1"))
			return f.selectOp(on, upd, v)
		}
	}
	f.vals[g.Tokens] = tokens
	body := g.Nodes[g.MTP.Start:]
	if st := g.MTP.State; st != nil { // the fed-back state replaces the body's mtp_state (its norms of the target's state are the target's alone)
		f.vals[g.MTP.Hidden] = hidden
		at := slices.Index(body, st) + 1
		if !f.lowerNodes(body[:at]) {
			return fn.Err()
		}
		f.vals[st] = chained(f.val(st))
		body = body[at:]
	} else {
		f.vals[g.MTP.Hidden] = chained(hidden)
	}
	if !f.lowerNodes(body) {
		return fn.Err()
	}
	f.SetLoc("mtp_logits", g.MTP.Logits.Pos.Filename, g.MTP.Logits.Pos.Line, g.MTP.Logits.Pos.Column)
	logits := f.val(g.MTP.Logits)
	if g.MTP.Next != nil { // keep the last real position's output for a chained call
		out := f.val(g.MTP.Next)
		one := []int64{1, 1, h}
		last := f.Op("stablehlo.dynamic_slice", out.Type.With(one...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(one))}, out, zero, f.sub(length, f.constI32(1)), zero)
		prev := f.GlobalLoad(chainGl)
		f.GlobalStore(chainGl, f.Op("stablehlo.dynamic_update_slice", prev.Type, nil, prev, last, slot, zero, zero))
	}
	f.storeCaches()
	if err := fn.Err(); err != nil {
		return err
	}
	fn.Return(f.reshape(logits, k, logits.Type.Shape[2]))
	return fn.Err()
}
