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

// appendCache writes x [B, S, kv_heads, d] (kv 0: keys, 1: values of the
// site) at (slots[b], position starts[b]) for each batch element b, and
// returns that site's updated rows of those slots: [B, max_len, kv_heads, d].
func (f *fn) appendCache(site int, kv int64, x codegen.Value) codegen.Value {
	slot := f.cache.site[site]
	cur := f.cacheValue(slot.group)
	B := x.Type.Shape[0]
	zero := f.constI32(0)
	entry := f.constI32(slot.index + kv)
	for b := int64(0); b < B; b++ {
		row := x
		if B > 1 {
			row = f.sliceDim(x, 0, b, b+1)
		}
		row = f.reshape(row, append([]int64{1}, row.Type.Shape...)...) // [1, 1, S, kv_heads, d]
		cur = f.Op("stablehlo.dynamic_update_slice", cur.Type, "", cur, row, entry, f.slots[b], f.starts[b], zero, zero)
	}
	f.caches[slot.group] = cur
	t := cur.Type.Shape
	sizes := []int64{1, 1, t[2], t[3], t[4]}
	rows := make([]codegen.Value, B)
	for b := range rows {
		r := f.Op("stablehlo.dynamic_slice", cur.Type.With(sizes...), "slice_sizes = "+codegen.I64Array(sizes), cur, entry, f.slots[b], zero, zero, zero)
		rows[b] = f.reshape(r, 1, t[2], t[3], t[4])
	}
	if B == 1 {
		return rows[0]
	}
	return f.concat(0, rows...)
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
