package lower

import (
	"slices"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// Routed experts through archc's matmul kernels (kernel.go's mme export).
//
// The plain lowerings decode expert weights to f32 in the graph:
// expertsSparse gathers and decodes the k experts of every token (k·T
// expert matrices decoded, the same expert once per token using it), and
// expertsDense, taken when T·k ≥ E (any prefill chunk of a real MoE),
// decodes every expert and runs it on every token: at OLMoE-1B-7B's shape
// (64 experts of 1024 × 2048) that is 1.5 GB of f32 and 64× the
// arithmetic per layer. When every projection's stored format has a
// kernel, expertsKernel instead groups the T·k (token, expert) pairs by
// expert and runs each expert's rows through the format's kernel on its
// stored bytes: each used expert's weights are read once per call, as
// llama.cpp's grouped MUL_MAT_ID reads them, and a decode step reads only
// the k experts it uses.
//
// The grouping is computed in the graph from the routing weights w [T, E]
// (k nonzero per row): the pairs in slot order (token-major, experts
// ascending, as expertSlots gives them), pos[i] the place of pair i in
// expert order (stable), inv its inverse, off [E+1] the first place of each
// expert. Projections run on rows in expert order; the outputs return to
// slot order and are weighted and summed over a token's k experts in
// ascending expert order, as expertsSparse adds them.

// expertsKernel lowers experts call n (x [T, H], w [T, E], k experts per
// token) through the kernels; a projection whose format has no kernel (or
// whose rows the kernels do not take) decodes each place's expert in the
// graph instead. ok is false when no projection has a kernel (or the
// layout stores experts another way), and the caller takes a plain
// lowering. Numerics: each product is a kernel dot product
// (f32 products and accumulation, or the int8 precision's), equal to the
// plain lowering's within f32 rounding order.
func (f *fn) expertsKernel(n *ir.Node, lay expertsLayout, x, w codegen.Value, k int64) (codegen.Value, bool) {
	if f.opts.Kernels == nil || lay.transposed || lay.flat {
		return codegen.Value{}, false
	}
	nproj := len(n.Weights)
	if lay.bias {
		nproj /= 2
	}
	sts := make([]*storage, nproj) // nil: no kernel for that projection
	kernels := 0
	for i, wt := range n.Weights[:nproj] {
		if st, ok := f.expertFormat(wt.Name); ok {
			sts[i] = st
			kernels++
		}
	}
	if kernels == 0 {
		return codegen.Value{}, false
	}
	g := f.groupByExpert(w, k)
	rows := g.rowsOf(f, x)
	if lay.input {
		rows = f.mul(rows, f.broadcastDims(g.sortedVals(f), rows.Type, 0))
	}
	project := func(i int, v codegen.Value) codegen.Value {
		var y codegen.Value
		if sts[i] != nil {
			y = f.expertDispatch(sts[i], n.Weights[i].Name, v, g.off, g.used, g.e)
		} else { // each place's expert decoded: [m, C] · [m, R, C] → [m, R]
			y = f.dot(v, f.gatherExperts(n.Weights[i].Name, g.sortedIDs(f)), []int64{0}, []int64{0}, []int64{1}, []int64{2})
		}
		if lay.bias {
			y = f.add(y, f.gatherExperts(n.Weights[nproj+i].Name, g.sortedIDs(f))) // + bias [m, out]
		}
		return y
	}
	hidden := f.expertHidden(lay, nproj, func(i int) codegen.Value { return project(i, rows) })
	return g.combine(f, project(nproj-1, hidden), !lay.input), true
}

// expertGroups is the grouping of T tokens' k (token, expert) pairs by
// expert: ids [m = T·k] the pairs' experts in slot order (token-major,
// ascending experts), vals [T, k] their routing weights, pos [m] pair i's
// place in expert order (stable), inv [m] the pair at each place, off
// [e+1] the first place of each expert (off[e] = m), used [min(e, m)]
// the experts with pairs, ascending, then e for the entries left; all i32
// but vals.
type expertGroups struct {
	ids, vals, pos, inv, off, used codegen.Value
	t, k, e                        int64
}

// groupByExpert groups the pairs routing weights w [T, E] select (k
// nonzero per row).
func (f *fn) groupByExpert(w codegen.Value, k int64) expertGroups {
	t, e := w.Type.Shape[0], w.Type.Shape[1]
	idx, vals := f.expertSlots(w, k)
	ids := f.reshape(idx, t*k)
	pos, inv, off := f.expertOrder(ids, e)
	return expertGroups{ids: ids, vals: vals, pos: pos, inv: inv, off: off, used: f.usedExperts(off, min(e, t*k)), t: t, k: k, e: e}
}

// rowsOf returns x [T, C]'s rows in expert order: [m, C], place p holding
// the token of pair inv[p].
func (g expertGroups) rowsOf(f *fn, x codegen.Value) codegen.Value {
	tok := f.div(g.inv, f.broadcast(f.constI32(g.k), g.inv.Type))
	return f.barrier(f.takeRows(x, tok))
}

// sortedVals returns the routing weight of each place in expert order [m].
func (g expertGroups) sortedVals(f *fn) codegen.Value {
	m := g.t * g.k
	return f.reshape(f.takeRows(f.reshape(g.vals, m, 1), g.inv), m)
}

// sortedIDs returns the expert of each place in expert order [m].
func (g expertGroups) sortedIDs(f *fn) codegen.Value {
	m := g.t * g.k
	return f.reshape(f.takeRows(f.reshape(g.ids, m, 1), g.inv), m)
}

// combine returns each token's sum over its k experts of ys [m, H] (rows
// in expert order), times the routing weights when weighted, added into
// zeros in ascending expert order: [T, H].
func (g expertGroups) combine(f *fn, ys codegen.Value, weighted bool) codegen.Value {
	h := ys.Type.Shape[1]
	y := f.reshape(f.barrier(f.takeRows(ys, g.pos)), g.t, g.k, h) // slot order
	if weighted {
		y = f.mul(y, f.broadcastDims(g.vals, y.Type, 0, 1))
	}
	acc := f.splat(0, codegen.T("f32", g.t, h))
	for j := int64(0); j < g.k; j++ {
		acc = f.add(acc, f.reshape(f.sliceDim(y, 1, j, j+1), g.t, h))
	}
	return acc
}

// expertFormat returns the storage of stacked expert weight name [E, N, K]
// when a kernel multiplies it: a kernel format, K within the kernels'
// longest row and a multiple of 32.
func (f *fn) expertFormat(name string) (*storage, bool) {
	k := f.opts.Kernels
	st, err := f.opts.storageOf(name)
	if err != nil || !slices.Contains(k.Formats, st.name) {
		return nil, false
	}
	shape := f.shapes[name]
	if len(shape) != 3 || shape[2] > k.MaxK || shape[2]%32 != 0 {
		return nil, false
	}
	return st, true
}

// expertOrder groups m (token, expert) pairs by expert: ids [m] i32 (each
// in [0, e)) → pos [m] (pair i's place in expert order, ties in pair
// order), inv [m] (the pair at each place) and off [e+1] (the first place
// of each expert; off[e] = m), all i32. Counting, not sorting: pos[i] is
// the number of pairs before pair i in that order, an [m, m] comparison
// reduced, which IREE fuses into one dispatch.
func (f *fn) expertOrder(ids codegen.Value, e int64) (pos, inv, off codegen.Value) {
	m := ids.Type.Shape[0]
	sq := codegen.T("i32", m, m)
	other := f.broadcastDims(ids, sq, 1) // [i, j] = ids[j]
	mine := f.broadcastDims(ids, sq, 0)  // [i, j] = ids[i]
	ii, jj := f.iota(sq, 0), f.iota(sq, 1)
	before := f.Op("stablehlo.or", codegen.T("i1", m, m), nil, f.compare("LT", other, mine),
		f.Op("stablehlo.and", codegen.T("i1", m, m), nil, f.compare("EQ", other, mine), f.compare("LT", jj, ii)))
	one, zero := f.broadcast(f.constI32(1), sq), f.broadcast(f.constI32(0), sq)
	pos = f.Reduce(f.selectOp(before, one, zero), f.constI32(0), "stablehlo.add", 1)
	at := f.compare("EQ", f.broadcastDims(pos, sq, 1), ii) // [p, i]: pos[i] == p
	inv = f.Reduce(f.selectOp(at, jj, zero), f.constI32(0), "stablehlo.add", 1)
	oe := codegen.T("i32", e+1, m)
	below := f.compare("LT", f.broadcastDims(ids, oe, 1), f.iota(oe, 0)) // [x, i]: ids[i] < x
	off = f.Reduce(f.selectOp(below, f.broadcast(f.constI32(1), oe), f.broadcast(f.constI32(0), oe)), f.constI32(0), "stablehlo.add", 1)
	return pos, inv, off
}

// usedExperts returns the experts with rows by off [e+1] (expertOrder's),
// ascending, then e: [u] i32. The j-th is the expert with rows whose rank
// among them is j: an [e, e] count and a [u, e] selection, reduced.
func (f *fn) usedExperts(off codegen.Value, u int64) codegen.Value {
	e := off.Type.Shape[0] - 1
	has := f.compare("GT", f.sliceDim(off, 0, 1, e+1), f.sliceDim(off, 0, 0, e)) // [e]: expert has rows
	sq := codegen.T("i32", e, e)
	zero := f.broadcast(f.constI32(0), sq)
	below := f.Op("stablehlo.and", codegen.T("i1", e, e), nil, f.broadcastDims(has, codegen.T("i1", e, e), 1), f.compare("LT", f.iota(sq, 1), f.iota(sq, 0)))
	rank := f.Reduce(f.selectOp(below, f.broadcast(f.constI32(1), sq), zero), f.constI32(0), "stablehlo.add", 1) // [e]: used experts before each
	ue := codegen.T("i32", u, e)
	at := f.Op("stablehlo.and", codegen.T("i1", u, e), nil, f.broadcastDims(has, codegen.T("i1", u, e), 1), f.compare("EQ", f.broadcastDims(rank, ue, 1), f.iota(ue, 0)))
	return f.Reduce(f.selectOp(at, f.iota(ue, 1), f.broadcast(f.constI32(e), ue)), f.constI32(e), "stablehlo.minimum", 1)
}

// takeRows returns rows idx [m] i32 of x [r, c]: [m, c].
func (f *fn) takeRows(x, idx codegen.Value) codegen.Value {
	c := x.Type.Shape[1]
	return f.Op("stablehlo.gather", x.Type.With(idx.Type.Shape[0], c), gatherAttrs(codegen.Ints{1}, 1, codegen.I64s{1, c}), x, idx)
}

// expertDispatch runs rows x [m, K] (grouped by expert as off [e+1] says)
// through stacked weight name [e, N, K] stored as st: [m, N] f32. used
// [u] lists the experts with rows then e (expertGroups.used): one
// workgroup row per entry, so a decode step's k experts take k rows of
// workgroups, not e.
func (f *fn) expertDispatch(st *storage, name string, x, off, used codegen.Value, e int64) codegen.Value {
	raw, _, _ := f.stored(name)
	shape := f.shapes[name]
	N, K := shape[1], shape[2]
	width := raw.Type.Shape[raw.Type.Rank()-1]
	raw = f.reshape(raw, e*N, width)
	rb := width // a stored row's bytes: the kernel steps e·N rows of them to expert e
	switch raw.Type.Elem {
	case "f16", "bf16":
		rb *= 2
	case "f32", "i32":
		rb *= 4
	}
	m := x.Type.Shape[0]
	u := used.Type.Shape[0]
	nv, uv := f.Index(N), f.Index(u)
	return f.Dispatch(kernelExecutable, "mme_"+st.name, []codegen.Value{nv, uv}, codegen.T("f32", m, N),
		x, raw, off, used, f.Index(m), nv, f.Index(K), f.Index(rb), f.Index(e), uv)
}
