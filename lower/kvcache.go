package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// The KV cache is grouped by the (kv_heads, width) shape of the keys and
// values of the attention sites: each group is one row of the state table
// (statetable.go). Each site's keys and then its values take the next entry
// of the group of their shape; every entry is a mutable global of its own,
//
//	[1, slots, max_len, kv_heads, width] f32
//
// named <group>.<entry> ("kv_cache.0", "kv_cache.1", ...). When keys and
// values have one width (every family but MLA) site i's keys are entry 2·i
// and its values 2·i+1 of one group. A function loads an entry's global
// once, updates it with a chain of dynamic_update_slice ops (which IREE
// performs in place), reads the site's rows from the updated value and
// stores it back once at the end.
//
// Multi-head latent attention (DeepSeek-V2, MiniCPM3) caches the per-head
// keys and values after kv_b_proj, as attention sees them: keys [heads,
// qk_nope_head_dim + qk_rope_head_dim] (the rotated k_rot copied into every
// head) in one group, values [heads, v_head_dim] in another, so a token
// takes heads·(qk_nope + qk_rope + v_head_dim)·4 bytes per layer (MiniCPM3-4B:
// 40·(64 + 32 + 64)·4 = 25600 B per layer, 62 layers: 1.5 MiB per token).
// HF transformers caches the compressed latents instead ([kv_lora_rank +
// qk_rope_head_dim] per token and layer: 1152 B for MiniCPM3-4B) and
// re-expands them through kv_b_proj at every step; the expansion is
// per-token, so both give the same keys and values up to the matmul's
// row-blocking (float32 ulps). Caching the latents is the memory-saving
// form, left for later: it needs kv_b_proj inside the attention primitive.
//
// Why one global per entry: IREE folds a constant index into every dispatch
// that reads or writes through it. With every layer's entries stacked in
// one global ([entries, slots, ...], as before 2026-12-07) each layer's
// cache writes and attention reads were dispatches of their own (four per
// layer and entry point), so a module's dispatches, and its compile time,
// grew with the layers: SmolLM2-135M's (30 layers) compiled in 58 s of CPU.
// With one global per entry every layer runs the same dispatches on its own
// buffer: 17 s, and a 2-layer fixture's module 63 dispatches → 53.
//
// Why each global starts as a different splat (codegen.Global.Init, the
// global's ordinal among the module's states, mutableInits): IREE 3.13 lets
// several mutable globals with the same splat initializer share one buffer,
// so writes to one cache showed up in another (found by the oracle tests
// when each site had a global of its own). What a cache holds before a
// position is written is never read (the state table's reset rule
// "unread"), so the starting value is free to differ.

// cacheGroup is one KV-cache group: a row of the state table, one global
// per entry.
type cacheGroup struct {
	name    string           // "kv_cache", "kv_cache_1", ...: the state table's name of the group
	globals []codegen.Global // entry i: <name>.<i>, [1, slots, max_len, kv_heads, width]
}

// cacheLayout assigns the per-position rows of every attention site (the
// ir.KVCache states of a node, in node order: "keys" and "values", and
// any further per-position tensor the node caches beside them, such as
// the lightning indexer's keys of DeepSeek sparse attention) to an entry
// of a cache group.
type cacheLayout struct {
	groups []*cacheGroup
	site   map[int][]cacheEntry // by node ID: one entry per KVCache state, in its order
	states *stateLayout         // the position-independent states (state.go)
}

// cacheEntry is one site's keys or values (or one state): entry index of
// group group.
type cacheEntry struct {
	group int
	index int64
}

func newCacheLayout(g *ir.Graph, opts Options) *cacheLayout {
	l := &cacheLayout{site: map[int][]cacheEntry{}, states: newStateLayout(g, opts)}
	byShape := map[[2]int64]int{}
	for _, n := range g.Nodes {
		var entries []cacheEntry
		for _, st := range n.States {
			if st.Kind != ir.KVCache {
				continue
			}
			key := [2]int64{st.Shape[0], st.Shape[1]} // [kv_heads, width]
			gi, ok := byShape[key]
			if !ok {
				gi = len(l.groups)
				byShape[key] = gi
				name := "kv_cache"
				if gi > 0 {
					name = fmt.Sprintf("kv_cache_%d", gi)
				}
				l.groups = append(l.groups, &cacheGroup{name: name})
			}
			grp := l.groups[gi]
			i := int64(len(grp.globals))
			entries = append(entries, cacheEntry{group: gi, index: i})
			grp.globals = append(grp.globals, codegen.Global{
				Name: fmt.Sprintf("%s.%d", grp.name, i), Mutable: true,
				Type: codegen.T("f32", 1, opts.Slots, opts.MaxLen, key[0], key[1]),
			})
		}
		if len(entries) > 0 {
			l.site[n.ID] = entries
		}
	}
	mutableInits(l)
	return l
}

// mutableInits gives every state global of l (the KV-cache entries, then
// the window and recurrent states) a different starting splat, its
// ordinal: see "Why each global starts as a different splat" above.
func mutableInits(l *cacheLayout) {
	k := 0
	for _, grp := range l.groups {
		for i := range grp.globals {
			grp.globals[i].Init = float64(k)
			k++
		}
	}
	for _, grp := range l.states.groups {
		for i := range grp.globals {
			grp.globals[i].Init = float64(k)
			k++
		}
	}
}

// entryGlobal is the global of cache entry e.
func (l *cacheLayout) entryGlobal(e cacheEntry) codegen.Global {
	return l.groups[e.group].globals[e.index]
}

// writeCache writes this call's keys and values, k [B, S, kv_heads, d] and
// v [B, S, kv_heads, dv], and any further per-position rows the node
// caches (xs[i] into its KVCache state i, [B, S, rows, width]), into the
// cache entries of attention node n at (slots[b], position starts[b]) for
// each batch element b.
//
// Every write of a site comes before any read of it (readCache): reading
// the keys and then writing the values into the same value would keep the
// keys' view alive across the write, and IREE would then copy the whole
// cache to preserve it (31 copies of the cache per token on SmolLM2;
// iree-compile --compile-to=stream --iree-scheduling-dump-statistics-format
// counts them). Written this way the updates happen in place.
func (f *fn) writeCache(n *ir.Node, xs ...codegen.Value) {
	B := xs[0].Type.Shape[0]
	site := n.ID
	zero := f.constI32(0)
	for kv, x := range xs {
		e := f.cache.site[site][kv]
		cur := f.cacheValue(e)
		for b := int64(0); b < B; b++ {
			row := x
			if B > 1 {
				row = f.sliceDim(x, 0, b, b+1)
			}
			row = f.reshape(row, append([]int64{1}, row.Type.Shape...)...) // [1, 1, S, kv_heads, width]
			cur = f.Op("stablehlo.dynamic_update_slice", cur.Type, nil, cur, row, zero, f.slots[b], f.starts[b], zero, zero)
		}
		f.caches[f.cache.entryGlobal(e).Name] = cur
	}
}

// readCache returns attention node n's keys and values for this call's slots,
// the first L positions of each (L = f.context, the positions this call's
// attention can see): [B, 1, L, kv_heads, d] and [B, 1, L, kv_heads, dv],
// L a dynamic dimension.
// Reading only the filled part makes attention cost follow the tokens held,
// not the cache capacity, with one compiled function for every length.
func (f *fn) readCache(n *ir.Node) (keys, values codegen.Value) {
	kv := f.readCacheEntries(n, 0, 1)
	return kv[0], kv[1]
}

// readCacheEntry returns node n's KVCache state kv (0 keys, 1 values, 2...
// further per-position rows) for this call's slots, the first L positions of
// each: [B, 1, L, rows, width], L dynamic (as readCache).
func (f *fn) readCacheEntry(n *ir.Node, kv int) codegen.Value {
	return f.readCacheEntries(n, kv)[0]
}

// readCacheEntries is readCacheEntry of each of kvs, in order.
func (f *fn) readCacheEntries(n *ir.Node, kvs ...int) []codegen.Value {
	site := n.ID
	zero := f.constI32(0)
	// The dynamic prefix of a static [1, 1, max_len, kv_heads, width] row:
	// its bounds depend only on the row's shape, so they are built once per
	// function (and shape).
	starts, ok := f.memo["cache:starts"]
	if !ok {
		starts = f.Op("stablehlo.constant", codegen.T("i32", 5), codegen.Attrs{codegen.A("value", codegen.DenseInts{Type: codegen.T("i32", 5), Values: []int64{0}})})
		f.memo["cache:starts"] = starts
		f.memo["cache:strides"] = f.Op("stablehlo.constant", codegen.T("i32", 5), codegen.Attrs{codegen.A("value", codegen.DenseInts{Type: codegen.T("i32", 5), Values: []int64{1}})})
	}
	strides := f.memo["cache:strides"]
	read := func(kv int) codegen.Value {
		cur := f.cacheValue(f.cache.site[site][kv])
		t := cur.Type.Shape
		full := []int64{1, 1, t[2], t[3], t[4]}
		limits := f.shapeOf(codegen.T("i32", 1, 1, codegen.Dynamic, t[3], t[4]))
		rows := make([]codegen.Value, len(f.slots))
		for b, s := range f.slots {
			row := f.Op("stablehlo.dynamic_slice", cur.Type.With(full...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(full))}, cur, zero, s, zero, zero, zero)
			rows[b] = f.Op("stablehlo.real_dynamic_slice", cur.Type.With(1, 1, codegen.Dynamic, t[3], t[4]), nil, row, starts, limits, strides)
		}
		if len(rows) == 1 {
			return rows[0]
		}
		return f.concat(0, rows...)
	}
	out := make([]codegen.Value, len(kvs))
	for i, kv := range kvs {
		out[i] = read(kv)
	}
	return out
}

// cacheValue returns the current value of cache entry e's global in this
// function, loading the global on first use.
func (f *fn) cacheValue(e cacheEntry) codegen.Value {
	gl := f.cache.entryGlobal(e)
	if v, ok := f.caches[gl.Name]; ok {
		return v
	}
	v := f.GlobalLoad(gl)
	f.caches[gl.Name] = v
	return v
}

// storeCaches writes every cache and state global this function updated
// back, in layout order.
func (f *fn) storeCaches() {
	defer f.storeStates()
	for _, grp := range f.cache.groups {
		for _, gl := range grp.globals {
			if v, ok := f.caches[gl.Name]; ok {
				f.GlobalStore(gl, v)
			}
		}
	}
}
