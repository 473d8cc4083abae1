package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// The KV cache is one mutable global per distinct (kv_heads, width) shape
// among the keys and values of the attention sites, of shape
//
//	[entries, slots, max_len, kv_heads, width] f32
//
// Each site's keys and then its values take the next entry of the global of
// their shape. When keys and values have one width (every family but MLA)
// site i's keys are entry 2·i and its values 2·i+1 of one global,
// [2·sites, slots, max_len, kv_heads, head_dim]. A function loads a global
// once, updates it with a chain of dynamic_update_slice ops (which IREE
// performs in place), reads each site's rows from the updated value and
// stores it back once at the end.
//
// Multi-head latent attention (DeepSeek-V2, MiniCPM3) caches the per-head
// keys and values after kv_b_proj, as attention sees them: keys [heads,
// qk_nope_head_dim + qk_rope_head_dim] (the rotated k_rot copied into every
// head) in one global, values [heads, v_head_dim] in another, so a token
// takes heads·(qk_nope + qk_rope + v_head_dim)·4 bytes per layer (MiniCPM3-4B:
// 40·(64 + 32 + 64)·4 = 25600 B per layer, 62 layers: 1.5 MiB per token).
// HF transformers caches the compressed latents instead ([kv_lora_rank +
// qk_rope_head_dim] per token and layer: 1152 B for MiniCPM3-4B) and
// re-expands them through kv_b_proj at every step; the expansion is
// per-token, so both give the same keys and values up to the matmul's
// row-blocking (float32 ulps). Caching the latents is the memory-saving
// form, left for later: it needs kv_b_proj inside the attention primitive.
//
// Why not one global per site: IREE 3.13 lets several mutable globals with
// the same splat initializer share one buffer, so writes to one cache showed
// up in another (found by the oracle tests; see the commit that introduced
// this file). One global per shape has one initializer of its own type.

// cacheGroup is one KV-cache global.
type cacheGroup struct {
	global  codegen.Global
	entries int64 // keys or values of one site each, in order
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

// cacheEntry is one site's keys or values: entry index of global group.
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
				l.groups = append(l.groups, &cacheGroup{})
			}
			grp := l.groups[gi]
			entries = append(entries, cacheEntry{group: gi, index: grp.entries})
			grp.entries++
			grp.global.Type = codegen.T("f32", grp.entries, opts.Slots, opts.MaxLen, key[0], key[1])
		}
		if len(entries) > 0 {
			l.site[n.ID] = entries
		}
	}
	for i, grp := range l.groups {
		grp.global.Name = "kv_cache"
		if i > 0 {
			grp.global.Name = fmt.Sprintf("kv_cache_%d", i)
		}
		grp.global.Mutable = true
	}
	return l
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
	f.cacheValue(f.cache.site[site][0].group) // loaded before the constants, as one group always was
	zero := f.constI32(0)
	for kv, x := range xs {
		e := f.cache.site[site][kv]
		cur := f.cacheValue(e.group)
		entry := f.constI32(e.index)
		for b := int64(0); b < B; b++ {
			row := x
			if B > 1 {
				row = f.sliceDim(x, 0, b, b+1)
			}
			row = f.reshape(row, append([]int64{1}, row.Type.Shape...)...) // [1, 1, S, kv_heads, width]
			cur = f.Op("stablehlo.dynamic_update_slice", cur.Type, nil, cur, row, entry, f.slots[b], f.starts[b], zero, zero)
		}
		f.caches[e.group] = cur
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
		e := f.cache.site[site][kv]
		cur := f.cacheValue(e.group)
		t := cur.Type.Shape
		full := []int64{1, 1, t[2], t[3], t[4]}
		limits := f.shapeOf(codegen.T("i32", 1, 1, codegen.Dynamic, t[3], t[4]))
		entry := f.constI32(e.index)
		rows := make([]codegen.Value, len(f.slots))
		for b, s := range f.slots {
			row := f.Op("stablehlo.dynamic_slice", cur.Type.With(full...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(full))}, cur, entry, s, zero, zero, zero)
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

// cacheValue returns the current value of a cache group in this function,
// loading the global on first use.
func (f *fn) cacheValue(group int) codegen.Value {
	if v, ok := f.caches[group]; ok {
		return v
	}
	v := f.GlobalLoad(f.cache.groups[group].global)
	f.caches[group] = v
	return v
}

// storeCaches writes every cache group and state group this function
// updated back to its global.
func (f *fn) storeCaches() {
	defer f.storeStates()
	for i, grp := range f.cache.groups {
		if v, ok := f.caches[i]; ok {
			f.GlobalStore(grp.global, v)
		}
	}
}
