package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// The KV cache is one mutable global per distinct (kv_heads, head_dim)
// shape among the attention sites, of shape
//
//	[2·sites, slots, max_len, kv_heads, head_dim] f32
//
// where entry 2·i holds site i's keys and 2·i+1 its values. A function loads
// it once, updates it with a chain of dynamic_update_slice ops (which IREE
// performs in place), reads each site's rows from the updated value and
// stores it back once at the end.
//
// Why not one global per site: IREE 3.13 lets several mutable globals with
// the same splat initializer share one buffer, so writes to one cache showed
// up in another (found by the oracle tests; see the commit that introduced
// this file). One global per shape has one initializer of its own type.

// KVBytesPerToken is the KV-cache memory one token of one slot takes in g's
// module, in bytes: 2 (keys, values) × kv_heads × head_dim × 4 (f32) per
// attention site.
func KVBytesPerToken(g *ir.Graph) int64 {
	var n int64
	for _, node := range g.Nodes {
		if node.Site < 0 {
			continue
		}
		k := node.Args[1].Type.Shape // [batch, seq, kv_heads, head_dim]
		n += 2 * int64(k[2]) * int64(k[3]) * 4
	}
	return n
}

// cacheGroup is one KV-cache global.
type cacheGroup struct {
	global codegen.Global
	sites  []int // attention site indices, in order
}

// cacheLayout assigns every attention site to a cache group.
type cacheLayout struct {
	groups []*cacheGroup
	site   map[int]siteSlot
}

type siteSlot struct {
	group int
	index int64 // entry of the site's keys; values are index+1
}

func newCacheLayout(g *ir.Graph, opts Options) *cacheLayout {
	l := &cacheLayout{site: map[int]siteSlot{}}
	byShape := map[[2]int64]int{}
	for _, n := range g.Nodes {
		if n.Site < 0 {
			continue
		}
		k := n.Args[1].Type.Shape // [batch, seq, kv_heads, head_dim]
		key := [2]int64{int64(k[2]), int64(k[3])}
		gi, ok := byShape[key]
		if !ok {
			gi = len(l.groups)
			byShape[key] = gi
			l.groups = append(l.groups, &cacheGroup{})
		}
		grp := l.groups[gi]
		l.site[n.Site] = siteSlot{group: gi, index: int64(2 * len(grp.sites))}
		grp.sites = append(grp.sites, n.Site)
		grp.global.Type = codegen.T("f32", int64(2*len(grp.sites)), opts.Slots, opts.MaxLen, key[0], key[1])
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

// writeCache writes this call's keys and values, k and v [B, S, kv_heads,
// d], into the site's cache entries at (slots[b], position starts[b]) for
// each batch element b.
//
// Every write of a site comes before any read of it (readCache): reading
// the keys and then writing the values into the same value would keep the
// keys' view alive across the write, and IREE would then copy the whole
// cache to preserve it (31 copies of the cache per token on SmolLM2;
// iree-compile --compile-to=stream --iree-scheduling-dump-statistics-format
// counts them). Written this way the updates happen in place.
func (f *fn) writeCache(site int, k, v codegen.Value) {
	slot := f.cache.site[site]
	cur := f.cacheValue(slot.group)
	B := k.Type.Shape[0]
	zero := f.constI32(0)
	for kv, x := range []codegen.Value{k, v} {
		entry := f.constI32(slot.index + int64(kv))
		for b := int64(0); b < B; b++ {
			row := x
			if B > 1 {
				row = f.sliceDim(x, 0, b, b+1)
			}
			row = f.reshape(row, append([]int64{1}, row.Type.Shape...)...) // [1, 1, S, kv_heads, d]
			cur = f.Op("stablehlo.dynamic_update_slice", cur.Type, "", cur, row, entry, f.slots[b], f.starts[b], zero, zero)
		}
	}
	f.caches[slot.group] = cur
}

// readCache returns the site's keys and values for this call's slots,
// the first L positions of each (L = f.context, the positions this call's
// attention can see): [B, 1, L, kv_heads, d] each, L a dynamic dimension.
// Reading only the filled part makes attention cost follow the tokens held,
// not the cache capacity, with one compiled function for every length.
func (f *fn) readCache(site int) (keys, values codegen.Value) {
	slot := f.cache.site[site]
	cur := f.cacheValue(slot.group)
	t := cur.Type.Shape
	zero := f.constI32(0)
	full := []int64{1, 1, t[2], t[3], t[4]}
	// The dynamic prefix of a static [1, 1, max_len, kv_heads, d] row: its
	// bounds are the same for every site, so they are built once per function.
	starts, ok := f.memo["cache:starts"]
	if !ok {
		starts = f.Op("stablehlo.constant", codegen.T("i32", 5), "value = dense<0> : tensor<5xi32>")
		f.memo["cache:starts"] = starts
		f.memo["cache:strides"] = f.Op("stablehlo.constant", codegen.T("i32", 5), "value = dense<1> : tensor<5xi32>")
		f.memo["cache:limits"] = f.shapeOf(codegen.T("i32", 1, 1, codegen.Dynamic, t[3], t[4]))
	}
	strides, limits := f.memo["cache:strides"], f.memo["cache:limits"]
	read := func(kv int64) codegen.Value {
		entry := f.constI32(slot.index + kv)
		rows := make([]codegen.Value, len(f.slots))
		for b, s := range f.slots {
			row := f.Op("stablehlo.dynamic_slice", cur.Type.With(full...), "slice_sizes = "+codegen.I64Array(full), cur, entry, s, zero, zero, zero)
			rows[b] = f.Op("stablehlo.real_dynamic_slice", cur.Type.With(1, 1, codegen.Dynamic, t[3], t[4]), "", row, starts, limits, strides)
		}
		if len(rows) == 1 {
			return rows[0]
		}
		return f.concat(0, rows...)
	}
	return read(0), read(1)
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

// storeCaches writes every cache group this function updated back to its global.
func (f *fn) storeCaches() {
	for i, grp := range f.cache.groups {
		if v, ok := f.caches[i]; ok {
			f.GlobalStore(grp.global, v)
		}
	}
}
