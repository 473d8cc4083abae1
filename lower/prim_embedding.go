package lower

import (
	"fmt"
	"math"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// embedding(ids [batch, seq] i32, weight [num_embeddings, embedding_dim])
// → [batch, seq, embedding_dim]: a row gather (HF nn.Embedding).
func inferEmbedding(n *ir.Node, a *EmbeddingAttrs) error {
	num, dim := a.NumEmbeddings, a.EmbeddingDim
	if num <= 0 || dim <= 0 {
		return fmt.Errorf("num_embeddings and embedding_dim must be positive, got %d and %d", num, dim)
	}
	ids := n.Args[0].Type
	if ids.DType != ir.I32 {
		return fmt.Errorf("ids must be i32 token ids, got %s", ids)
	}
	n.Weights = []ir.Weight{{Name: n.Module + ".weight", Shape: []int64{num, dim}}}
	n.Type = ir.Type{Shape: append(append(ir.Shape{}, ids.Shape...), ir.Dim(dim)), DType: ir.F32}
	return nil
}

// lowerEmbedding gathers the stored rows of the ids, then decodes only
// those (a block-quantized table is never decoded whole).
func lowerEmbedding(f *fn, n *ir.Node, _ *EmbeddingAttrs) codegen.Value {
	return f.gatherRows(n, f.arg(n, 0))
}

// gatherRows gathers the rows ids [batch, seq] i32 of the node's first
// weight and decodes only those.
func (f *fn) gatherRows(n *ir.Node, ids codegen.Value) codegen.Value {
	out := f.gatherDecoded(n, ids)
	if out.Type.Elem == "" {
		return codegen.Value{Type: f.ty(n.Type)}
	}
	// The barrier keeps the gather out of its consumer's dispatch: IREE
	// 3.13 fuses it into a following norm's reduction and then holds an
	// 8-row tile of the gathered rows on the stack, 8·width·4 bytes, past
	// the CPU backend's 32 KiB limit from width 1024 at a 512-token prefill
	// and from width 2048 at any ("exceeded stack allocation limit"): every
	// model of hidden size 2048 or more failed to compile.
	return f.barrier(f.reshape(out, f.ty(n.Type).Shape...))
}

// gatherDecoded is the rows ids (i32, any shape) of the node's first
// weight, decoded: [number of ids, columns] f32 (an empty Value where the
// weight is absent, as in a signature-only lowering).
func (f *fn) gatherDecoded(n *ir.Node, ids codegen.Value) codegen.Value {
	raw, st, shape := f.stored(n.Weights[0].Name)
	if raw.Type.Elem == "" {
		return raw
	}
	r := int64(ids.Type.Rank())
	width := raw.Type.Shape[1]
	attrs := gatherAttrs(codegen.Ints{r}, r, codegen.I64s{1, width})
	rowsShape := append(append([]int64{}, ids.Type.Shape...), width)
	rows := f.Op("stablehlo.gather", raw.Type.With(rowsShape...), attrs, raw, ids)
	return f.decodeRows(st, f.reshape(rows, ids.Type.NumElements(), width), shape[1])
}

// position_embedding(x [batch, seq, ...], weight [num_positions,
// embedding_dim]) → [batch, seq, embedding_dim]: the learned absolute
// position embedding of each token, weight[position] (GPT2Model's
// wpe(position_ids), position_ids = cache position + arange(seq)). x (the
// token ids) only gives the batch and seq. In an encoder, x [1, n, ...]
// (one tile's rows) reads rows 0..n−1 (Idefics3VisionEmbeddings's
// position_ids of a whole tile; SiglipVisionEmbeddings's
// position_ids). A position past num_positions
// (HF: an index error) reads the last row, as stablehlo.gather clamps.
func inferPositionEmbedding(n *ir.Node, a *PositionEmbeddingAttrs) error {
	num, dim := a.NumPositions, a.EmbeddingDim
	if num <= 0 || dim <= 0 {
		return fmt.Errorf("num_positions and embedding_dim must be positive, got %d and %d", num, dim)
	}
	x := n.Args[0].Type
	encoder := len(x.Shape) >= 2 && x.Shape[0] == 1 && x.Shape[1] > 0
	if len(x.Shape) < 2 || !encoder && (x.Shape[0] != ir.Batch || x.Shape[1] != ir.Seq) {
		return fmt.Errorf("x must be [batch, seq, ...] (the token ids) or an encoder's [1, n, ...], got %s", x)
	}
	if encoder && int64(x.Shape[1]) > num {
		return fmt.Errorf("%d positions but the table holds %d", x.Shape[1], num)
	}
	n.Weights = []ir.Weight{{Name: n.Module + ".weight", Shape: []int64{num, dim}}}
	n.Type = ir.Type{Shape: ir.Shape{x.Shape[0], x.Shape[1], ir.Dim(dim)}, DType: ir.F32}
	return nil
}

func lowerPositionEmbedding(f *fn, n *ir.Node, _ *PositionEmbeddingAttrs) codegen.Value {
	if x := n.Args[0].Type; x.Shape[1] > 0 { // an encoder's rows: positions 0..n−1
		return f.gatherRows(n, f.iota(codegen.T("i32", 1, int64(x.Shape[1])), 1))
	}
	return f.gatherRows(n, f.positions)
}

// interpolated_position_embedding(grid [1, n, 2] i32, weight
// [num_positions, embedding_dim]) → [1, n, embedding_dim]: a square
// learned position table resampled bilinearly (align_corners) to each
// patch's cell of its image's grid, as Qwen3VLVisionModel's
// fast_pos_embed_interpolate (transformers 5.24:
// get_vision_interpolation_indices_and_weights in vision_utils.py, then
// (pos_embed(indices) * weights).sum(1)) computes it.
func inferInterpolatedPositionEmbedding(n *ir.Node, a *InterpolatedPositionEmbeddingAttrs) error {
	num, dim := a.NumPositions, a.EmbeddingDim
	if num <= 0 || dim <= 0 {
		return fmt.Errorf("num_positions and embedding_dim must be positive, got %d and %d", num, dim)
	}
	if side := int64(math.Round(math.Sqrt(float64(num)))); side*side != num {
		return fmt.Errorf("num_positions %d is not a square: the table is a side × side grid (vision_config.num_position_embeddings)", num)
	}
	g := n.Args[0].Type
	if len(g.Shape) != 3 || g.Shape[0] != 1 || g.Shape[1] <= 0 || g.Shape[2] != 2 || g.DType != ir.I32 {
		return fmt.Errorf("grid must be [1, n, 2] i32 (each patch's row and column: an encoder's index table), got %s", g)
	}
	n.Weights = []ir.Weight{{Name: n.Module + ".weight", Shape: []int64{num, dim}}}
	n.Type = ir.Type{Shape: ir.Shape{1, g.Shape[1], ir.Dim(dim)}, DType: ir.F32}
	return nil
}

func lowerInterpolatedPositionEmbedding(f *fn, n *ir.Node, a *InterpolatedPositionEmbeddingAttrs) codegen.Value {
	grid := f.arg(n, 0)
	rows := grid.Type.Shape[1]
	side := int64(math.Round(math.Sqrt(float64(a.NumPositions))))
	if f.rows.Type.Elem != "" { // padding rows read cell (0, 0) and leave the extents alone
		real := f.compare("LT", f.iota(grid.Type, 1), f.broadcast(f.rows, grid.Type))
		grid = f.selectOp(real, grid, f.broadcast(f.constI32(0), grid.Type))
	}
	if a.Antialias {
		return f.antialiasedPositions(n, grid, side)
	}
	vec := codegen.T("f32", rows)
	// axis gives one axis's two taps [rows] i32 and their weights [rows] f32.
	axis := func(m int64) (taps [2]codegen.Value, weights [2]codegen.Value) {
		idx := f.reshape(f.sliceDim(grid, 2, m, m+1), rows)
		last := f.Reduce(idx, f.constI32(0), "stablehlo.maximum", 0) // extent − 1
		den := f.convert(f.binary("stablehlo.maximum", last, f.constI32(1)), "f32")
		src := f.div(f.mul(f.convert(idx, "f32"), f.splat(float64(side-1), vec)), f.broadcast(den, vec))
		fl := f.unary("stablehlo.floor", src)
		frac := f.sub(src, fl)
		base := f.convert(fl, "i32")
		lo, hi := f.broadcast(f.constI32(0), idx.Type), f.broadcast(f.constI32(side-1), idx.Type)
		for o := int64(0); o < 2; o++ {
			t := f.add(base, f.broadcast(f.constI32(o), idx.Type))
			taps[o] = f.binary("stablehlo.maximum", f.binary("stablehlo.minimum", t, hi), lo)
			d := f.unary("stablehlo.abs", f.sub(frac, f.splat(float64(o), vec)))
			weights[o] = f.binary("stablehlo.maximum", f.sub(f.splat(1, vec), d), f.splat(0, vec))
		}
		return taps, weights
	}
	rt, rw := axis(0)
	ct, cw := axis(1)
	var ids, ws []codegen.Value
	for i := 0; i < 2; i++ {
		for j := 0; j < 2; j++ {
			ids = append(ids, f.reshape(f.add(f.mul(rt[i], f.broadcast(f.constI32(side), rt[i].Type)), ct[j]), 1, rows))
			ws = append(ws, f.mul(rw[i], cw[j]))
		}
	}
	table := f.barrier(f.gatherDecoded(n, f.concat(1, ids...))) // [4·rows, dim]: tap k of row r at k·rows + r (the barrier: see gatherRows)
	dim := table.Type.Shape[1]
	var out codegen.Value
	for k, w := range ws {
		p := f.mul(f.sliceDim(table, 0, int64(k)*rows, int64(k+1)*rows), f.broadcastDims(w, table.Type.With(rows, dim), 0))
		if k == 0 {
			out = p
		} else {
			out = f.add(out, p)
		}
	}
	return f.reshape(out, 1, rows, dim)
}

// antialiasedPositions is interpolated_position_embedding with antialias:
// Siglip2VisionEmbeddings.resize_positional_embeddings (transformers
// 5.24, models/siglip2/modeling_siglip2.py), F.interpolate(mode="bilinear",
// align_corners=False, antialias=True) of the side × side table to each
// image's grid written as one weight matrix: per axis a [rows, side] f32
// matrix of triangle weights (support max(side/extent, 1), normalised per
// row), their per-row outer product [rows, side²] times the table.
func (f *fn) antialiasedPositions(n *ir.Node, grid codegen.Value, side int64) codegen.Value {
	rows := grid.Type.Shape[1]
	vec, mat := codegen.T("f32", rows), codegen.T("f32", rows, side)
	axis := func(m int64) codegen.Value { // [rows, side]
		idx := f.reshape(f.sliceDim(grid, 2, m, m+1), rows)
		extent := f.convert(f.add(f.Reduce(idx, f.constI32(0), "stablehlo.maximum", 0), f.constI32(1)), "f32")
		scale := f.div(f.constF32(float64(side)), extent)
		support := f.broadcast(f.binary("stablehlo.maximum", scale, f.constF32(1)), mat)
		centre := f.sub(f.mul(f.add(f.convert(idx, "f32"), f.splat(0.5, vec)), f.broadcast(scale, vec)), f.splat(0.5, vec))
		d := f.div(f.unary("stablehlo.abs", f.sub(f.iota(mat, 1), f.broadcastDims(centre, mat, 0))), support)
		w := f.binary("stablehlo.maximum", f.sub(f.splat(1, mat), d), f.splat(0, mat))
		return f.div(w, f.broadcastDims(f.Reduce(w, f.constF32(0), "stablehlo.add", 1), mat, 0))
	}
	rw, cw := axis(0), axis(1)
	cube := codegen.T("f32", rows, side, side)
	w := f.reshape(f.mul(f.broadcastDims(rw, cube, 0, 1), f.broadcastDims(cw, cube, 0, 2)), rows, side*side)
	table := f.weight(n.Weights[0].Name) // [side², dim]
	out := f.dot(w, table, nil, nil, []int64{1}, []int64{0})
	return f.reshape(out, 1, rows, table.Type.Shape[1])
}
