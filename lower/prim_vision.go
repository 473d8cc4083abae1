package lower

import (
	"fmt"
	"math"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// The primitives of an image encoder (DESIGN §4, Encoders): patch
// embedding, CLIP's class row, attention without a cache or a mask,
// Idefics3's pixel shuffle, a slice of rows (LLaVA's feature selection),
// and the decoder's side, masked_scatter. An encoder's graph has
// concrete shapes, [1, ...] (one image tile per call).

// patch_embed(pixels [1, C, H, W], weight [out, C, p, p], patch p, out)
// → [1, (H/p)·(W/p), out]: SiglipVisionEmbeddings.patch_embedding, an
// nn.Conv2d with kernel and stride p and no padding, its output grid
// flattened row by row (flatten(2).transpose(1, 2)).
func inferPatchEmbed(n *ir.Node, a *PatchEmbedAttrs) error {
	x := n.Args[0].Type
	p, out := a.Patch, a.Out
	if a.Temporal != nil || len(x.Shape) == 3 {
		return inferPatchRows(n, a)
	}
	if len(x.Shape) != 4 || x.Shape[0] != 1 || x.DType != ir.F32 {
		return fmt.Errorf("pixels must be one image tile [1, channels, height, width] f32 (an encoder's input), got %s", x)
	}
	c, h, w := int64(x.Shape[1]), int64(x.Shape[2]), int64(x.Shape[3])
	if p <= 0 || out <= 0 || c <= 0 || h%p != 0 || w%p != 0 {
		return fmt.Errorf("an image of %d×%d does not split into patches of %d (patch and out must be positive, the sides multiples of patch)", h, w, p)
	}
	n.Weights = []ir.Weight{{Name: n.Module + ".weight", Shape: []int64{out, c, p, p}}}
	if a.Bias {
		n.Weights = append(n.Weights, ir.Weight{Name: n.Module + ".bias", Shape: []int64{out}})
	}
	n.Type = ir.Type{Shape: ir.Shape{1, ir.Dim((h / p) * (w / p)), ir.Dim(out)}, DType: ir.F32}
	return nil
}

// inferPatchRows is patch_embed over patches already cut: pixels [1, n,
// C·T·p·p] → [1, n, out], weight nn.Conv3d's [out, C, T, p, p] with
// temporal T, else nn.Conv2d's [out, C, p, p] (Pixtral's patch_conv).
func inferPatchRows(n *ir.Node, a *PatchEmbedAttrs) error {
	x := n.Args[0].Type
	p, t, out := a.Patch, int64(1), a.Out
	if a.Temporal != nil {
		t = *a.Temporal
	}
	if len(x.Shape) != 3 || x.Shape[0] != 1 || x.Shape[1] <= 0 || x.DType != ir.F32 {
		return fmt.Errorf("with temporal, pixels must be patch rows [1, n, C·temporal·patch²] f32 (an encoder's input), got %s", x)
	}
	d := int64(x.Shape[2])
	if p <= 0 || t <= 0 || out <= 0 || d%(t*p*p) != 0 {
		return fmt.Errorf("rows of %d values are not C·temporal·patch² for temporal %d and patch %d (all positive)", d, t, p)
	}
	n.Weights = []ir.Weight{{Name: n.Module + ".weight", Shape: []int64{out, d / (t * p * p), t, p, p}}}
	if a.Temporal == nil {
		n.Weights[0].Shape = []int64{out, d / (p * p), p, p}
	}
	if a.Bias {
		n.Weights = append(n.Weights, ir.Weight{Name: n.Module + ".bias", Shape: []int64{out}})
	}
	n.Type = ir.Type{Shape: ir.Shape{1, x.Shape[1], ir.Dim(out)}, DType: ir.F32}
	return nil
}

// lowerPatchEmbed cuts the tile into patches, [1, gh, gw, C, p, p] rows
// flattened as the weight's [C, p, p] is, and multiplies them by the
// weight viewed [out, C·p·p]: the convolution as one matmul.
func lowerPatchEmbed(f *fn, n *ir.Node, a *PatchEmbedAttrs) codegen.Value {
	x := f.arg(n, 0)
	if len(x.Type.Shape) == 3 { // rows already cut: one matmul with the kernel viewed [out, C·T·p·p]
		d := x.Type.Shape[2]
		y := f.dot(x, f.reshape(f.weight(n.Weights[0].Name), a.Out, d), nil, nil, []int64{2}, []int64{1})
		if a.Bias {
			y = f.add(y, f.broadcastTrailing(f.weight(n.Weights[1].Name), y.Type))
		}
		return y
	}
	c, h, w, p := x.Type.Shape[1], x.Type.Shape[2], x.Type.Shape[3], a.Patch
	gh, gw := h/p, w/p
	patches := f.transpose(f.reshape(x, 1, c, gh, p, gw, p), 0, 2, 4, 1, 3, 5)
	patches = f.reshape(patches, 1, gh*gw, c*p*p)
	wt := f.reshape(f.weight(n.Weights[0].Name), a.Out, c*p*p)
	y := f.dot(patches, wt, nil, nil, []int64{2}, []int64{1})
	if a.Bias {
		y = f.add(y, f.broadcastTrailing(f.weight(n.Weights[1].Name), y.Type))
	}
	// The barrier keeps the patch transpose out of the next norm's
	// reduction: IREE 3.13 fused them and held a tile of the transposed
	// patches on the stack, 123 KB at SmolVLM's 1024 patches of 768
	// (past the CPU backend's 32 KiB: "exceeded stack allocation limit").
	return f.barrier(y)
}

// bidirectional_attention(q, k, v [batch, n, heads, d]) → [batch, n,
// heads·d]: softmax(q·kᵀ·scale)·v per head, every position seeing every
// other (SiglipAttention through eager_attention_forward, no mask, no
// cache; scale head_dim^-0.5 unless given, rounded to f32 as torch
// multiplies an f32 tensor by a Python float). With blocks [batch, n, c]
// i32, a query sees only the keys whose coordinates // block_size are its
// own in every column: attention within blocks, such as Qwen2.5-VL's
// windows of the patch grid (HF reorders the patches so that each window
// is a run for varlen attention, then restores the order: the same
// result as masking in place, which needs neither reordering).
func inferBidirectionalAttention(n *ir.Node, a *BidirectionalAttentionAttrs) error {
	q, k, v := n.Args[0].Type, n.Args[1].Type, n.Args[2].Type
	if len(q.Shape) != 4 || !q.Shape.Equal(k.Shape) || !q.Shape.Equal(v.Shape) {
		return fmt.Errorf("q, k and v must be [batch, n, heads, d] of one shape, got %s, %s and %s", q, k, v)
	}
	for _, d := range q.Shape[1:] {
		if d <= 0 {
			return fmt.Errorf("q's positions, heads and head size must be concrete (an encoder's), got %s", q)
		}
	}
	if len(n.Args) > 3 {
		b := n.Args[3].Type
		if len(b.Shape) != 3 || b.DType != ir.I32 || !b.Shape[:2].Equal(q.Shape[:2]) || b.Shape[2] <= 0 {
			return fmt.Errorf("blocks must be [batch, n, c] i32 over q's [batch, n] (each position's block coordinates), got %s for q %s", b, q)
		}
	}
	if a.BlockSize <= 0 {
		return fmt.Errorf("block_size must be positive, got %d", a.BlockSize)
	}
	n.Type = ir.Type{Shape: ir.Shape{q.Shape[0], q.Shape[1], q.Shape[2] * q.Shape[3]}, DType: ir.F32}
	return nil
}

func lowerBidirectionalAttention(f *fn, n *ir.Node, a *BidirectionalAttentionAttrs) codegen.Value {
	q, k, v := f.arg(n, 0), f.arg(n, 1), f.arg(n, 2)
	B, S, H, D := q.Type.Shape[0], q.Type.Shape[1], q.Type.Shape[2], q.Type.Shape[3]
	scale := 1 / math.Sqrt(float64(D))
	if a.Scale != nil {
		scale = *a.Scale
	}
	var real, keyBlocks codegen.Value // [S] i1: the real keys; [B, S, C] i32: each key's block
	if f.rows.Type.Elem != "" {       // a variable-size encoder: keys past the real rows are padding
		real = f.compare("LT", f.iota(codegen.T("i32", S), 0), f.broadcast(f.rows, codegen.T("i32", S)))
	}
	if len(n.Args) > 3 { // within blocks: every coordinate // block_size equal
		keyBlocks = f.blockIndex(f.arg(n, 3), a.BlockSize)
	}
	// masked is scores [B, H, R, S] of R queries whose blocks are qb
	// [B, R, C] with the padding keys and the keys of other blocks masked.
	masked := func(scores, qb codegen.Value) codegen.Value {
		scores = f.mul(scores, f.splat(scale, scores.Type))
		if real.Type.Elem != "" {
			scores = f.selectOp(f.broadcastDims(real, scores.Type.WithElem("i1"), 3), scores, f.splat(maskValue, scores.Type))
		}
		if keyBlocks.Type.Elem != "" {
			same := f.sameBlock(qb, keyBlocks) // [B,R,S]
			scores = f.selectOp(f.broadcastDims(same, scores.Type.WithElem("i1"), 0, 2, 3), scores, f.splat(maskValue, scores.Type))
		}
		return f.softmaxLast(scores)
	}
	var out codegen.Value // [B,H,S,D]
	if rows := f.queryBlockRows(B, H, S); rows == S {
		p := masked(f.dot(q, k, []int64{0, 2}, []int64{0, 2}, []int64{3}, []int64{3}), keyBlocks) // [B,H,S,S]
		out = f.dot(p, v, []int64{0, 1}, []int64{0, 2}, []int64{3}, []int64{1})
	} else {
		q, k, v := f.headsMajor(q), f.headsMajor(k), f.headsMajor(v) // [B,H,S,D]
		out = f.queryBlocks(S, rows, codegen.T("f32", B, H, S, D), 2, func(start codegen.Value) codegen.Value {
			var qb codegen.Value
			if keyBlocks.Type.Elem != "" {
				qb = f.dynamicSliceDim(keyBlocks, 1, start, rows)
			}
			qs := f.dynamicSliceDim(q, 2, start, rows)                                          // [B,H,R,D]
			p := masked(f.dot(qs, k, []int64{0, 1}, []int64{0, 1}, []int64{3}, []int64{3}), qb) // [B,H,R,S]
			return f.dot(p, v, []int64{0, 1}, []int64{0, 1}, []int64{3}, []int64{2})
		})
	}
	return f.reshape(f.transpose(out, 0, 2, 1, 3), B, S, H*D)
}

// queryBlockRows is the number of query rows attention over S keys
// computes at once: all S while the [B, H, S, S] f32 scores fit
// Options.ScoreBytes, else as many as fit it, at most queryBlockRows and
// at least one.
func (f *fn) queryBlockRows(B, H, S int64) int64 {
	budget := f.opts.ScoreBytes
	if budget <= 0 {
		budget = DefaultScoreBytes
	}
	perRow := B * H * S * 4
	if perRow*S <= budget {
		return S
	}
	return max(1, min(queryBlockRows, budget/perRow, S))
}

// queryBlockRows is the most query rows one trip of blocked attention
// computes. Measured on a 2-thread AVX-512 Xeon with IREE 3.13, 16 heads
// of 72 over 5120 keys (heads-major operands, headsMajor): 32 rows a trip
// 2.0 s, 64 rows 1.7–1.8 s, 128 rows 2.7 s, 256 rows 2.6 s; over 4096
// keys 64 and 128 rows both 1.0–1.1 s.
const queryBlockRows = 64

// headsMajor is x [B, S, H, D] as [B, H, S, D], materialized: an
// optimization barrier keeps IREE from folding the transpose into the
// contractions of blocked attention, which then batch over a strided
// dimension and ran 2× slower (16 heads of 72 over 5120 keys, 64 rows a
// trip: 3.7 s folded, 1.7 s materialized).
func (f *fn) headsMajor(x codegen.Value) codegen.Value {
	return f.Op("stablehlo.optimization_barrier", x.Type.With(x.Type.Shape[0], x.Type.Shape[2], x.Type.Shape[1], x.Type.Shape[3]), nil, f.transpose(x, 0, 2, 1, 3))
}

// queryBlocks builds out, of type t, block by block along dimension dim
// (S rows, rows at a time) in a loop: block(start) returns the rows
// [start, start + rows) of out. The last block starts at S − rows and
// overlaps the one before it when rows does not divide S; the overlapped
// rows are computed twice, equal.
func (f *fn) queryBlocks(S, rows int64, t codegen.Type, dim int, block func(start codegen.Value) codegen.Value) codegen.Value {
	trips := (S + rows - 1) / rows
	zero := f.Op("stablehlo.constant", t, codegen.Attrs{codegen.A("value", codegen.DenseFloats{Type: t, Values: []float64{0}})})
	return f.Loop(trips, []codegen.Value{zero}, func(i codegen.Value, acc []codegen.Value) []codegen.Value {
		start := f.Op("stablehlo.minimum", i.Type, nil, f.mul(i, f.constI32(rows)), f.constI32(S-rows))
		part := block(start)
		idx := []codegen.Value{acc[0], part}
		for d := range t.Shape {
			if d == dim {
				idx = append(idx, start)
			} else {
				idx = append(idx, f.constI32(0))
			}
		}
		return []codegen.Value{f.Op("stablehlo.dynamic_update_slice", t, nil, idx...)}
	})[0]
}

// dynamicSliceDim is x's rows [start, start + size) along dimension d, start
// an i32 scalar (clamped into x, as stablehlo.dynamic_slice does).
func (f *fn) dynamicSliceDim(x codegen.Value, d int, start codegen.Value, size int64) codegen.Value {
	sizes := append([]int64(nil), x.Type.Shape...)
	sizes[d] = size
	idx := []codegen.Value{x}
	for i := range sizes {
		if i == d {
			idx = append(idx, start)
		} else {
			idx = append(idx, f.constI32(0))
		}
	}
	return f.Op("stablehlo.dynamic_slice", x.Type.With(sizes...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(sizes))}, idx...)
}

// blockIndex is, for block coordinates b [B, S, C] i32 (non-negative), each
// coordinate's block: b // size.
func (f *fn) blockIndex(b codegen.Value, size int64) codegen.Value {
	if size == 1 {
		return b
	}
	return f.div(b, f.broadcast(f.constI32(size), b.Type))
}

// sameBlock is, for the blocks of R queries qb [B, R, C] and of S keys kb
// [B, S, C] (blockIndex), [B, R, S] i1: whether query i and key j are in
// the same block in every column m.
func (f *fn) sameBlock(qb, kb codegen.Value) codegen.Value {
	B, R, S, C := qb.Type.Shape[0], qb.Type.Shape[1], kb.Type.Shape[1], qb.Type.Shape[2]
	pair := codegen.T("i32", B, R, S)
	var same codegen.Value
	for m := int64(0); m < C; m++ {
		qc := f.reshape(f.sliceDim(qb, 2, m, m+1), B, R)
		kc := f.reshape(f.sliceDim(kb, 2, m, m+1), B, S)
		eq := f.compare("EQ", f.broadcastDims(qc, pair, 0, 1), f.broadcastDims(kc, pair, 0, 2))
		if m == 0 {
			same = eq
		} else {
			same = f.Op("stablehlo.and", eq.Type, nil, same, eq)
		}
	}
	return same
}

// pixel_shuffle(x [1, n, d], factor f) → [1, n/f², d·f²]: Idefics3Connector
// .pixel_shuffle, which regroups the √n×√n grid of rows into blocks of
// f×f neighbours, one row each, by its two view/permute steps.
func inferPixelShuffle(n *ir.Node, a *PixelShuffleAttrs) error {
	x := n.Args[0].Type
	f := a.Factor
	if len(x.Shape) != 3 || x.Shape[0] != 1 || x.Shape[1] <= 0 || x.Shape[2] <= 0 {
		return fmt.Errorf("x must be [1, n, d] with concrete n and d (an encoder's rows), got %s", x)
	}
	rows := int64(x.Shape[1])
	s := int64(math.Round(math.Sqrt(float64(rows))))
	if f <= 0 || s*s != rows || s%f != 0 {
		return fmt.Errorf("%d rows are not a square grid whose side is a multiple of factor %d", rows, f)
	}
	n.Type = ir.Type{Shape: ir.Shape{1, ir.Dim(rows / (f * f)), x.Shape[2] * ir.Dim(f*f)}, DType: x.DType}
	return nil
}

func lowerPixelShuffle(f *fn, n *ir.Node, a *PixelShuffleAttrs) codegen.Value {
	x := f.arg(n, 0)
	rows, d, k := x.Type.Shape[1], x.Type.Shape[2], a.Factor
	s := int64(math.Round(math.Sqrt(float64(rows))))
	y := f.transpose(f.reshape(x, 1, s, s/k, d*k), 0, 2, 1, 3)    // [1, s/k, s, d·k]
	y = f.transpose(f.reshape(y, 1, s/k, s/k, d*k*k), 0, 2, 1, 3) // [1, s/k, s/k, d·k²]
	return f.reshape(y, 1, rows/(k*k), d*k*k)
}

// merge_rows(x [1, n, d], factor k) → [1, n/k, d·k]: each run of k
// consecutive rows as one (Qwen2VLPatchMerger's view(-1, hidden·merge²):
// the processor orders each merge window's patches consecutively).
func inferMergeRows(n *ir.Node, a *MergeRowsAttrs) error {
	x := n.Args[0].Type
	k := a.Factor
	if len(x.Shape) != 3 || x.Shape[0] != 1 || x.Shape[1] <= 0 || x.Shape[2] <= 0 {
		return fmt.Errorf("x must be [1, n, d] with concrete n and d (an encoder's rows), got %s", x)
	}
	if k <= 0 || int64(x.Shape[1])%k != 0 {
		return fmt.Errorf("%d rows do not group in runs of %d (factor must be positive and divide the rows)", x.Shape[1], k)
	}
	n.Type = ir.Type{Shape: ir.Shape{1, x.Shape[1] / ir.Dim(k), x.Shape[2] * ir.Dim(k)}, DType: x.DType}
	return nil
}

func lowerMergeRows(f *fn, n *ir.Node, a *MergeRowsAttrs) codegen.Value {
	x := f.arg(n, 0)
	rows, d, k := x.Type.Shape[1], x.Type.Shape[2], a.Factor
	if a.ChannelMajor { // [rows/k, k, d] → [rows/k, d, k]
		x = f.transpose(f.reshape(x, rows/k, k, d), 0, 2, 1)
	}
	return f.reshape(x, 1, rows/k, d*k)
}

// masked_scatter(x [batch, seq, d], mask [batch, seq] i1, rows) → [batch,
// seq, d]: HF's inputs_embeds.masked_scatter(image_mask, image_features).
// rows is an encoder's output as the decoder reads it (the encoder's name):
// a prefill's argument holding the encoder's rows, in order, at the
// positions the mask selects (the runtime places them); a decode or verify
// step has no such argument and returns x, as HF's generate passes
// pixel_values at the first step only. With offset, the merged columns
// are rows[..., offset:offset + d] (an encoder returning several row sets
// side by side: Qwen3-VL's merger and deepstack mergers); with add, they
// are added to x at the mask (Qwen3VLTextModel._deepstack_process). Rows
// too narrow for the decoder's hidden size (offset + d past the encoder's
// width, or without offset a width other than d) are an error here, at the
// .arch line of the merge.
func inferMaskedScatter(n *ir.Node, a *MaskedScatterAttrs) error {
	x, mask, rows := n.Args[0].Type, n.Args[1].Type, n.Args[2].Type
	if n.Args[2].Prim != "encoded" {
		return fmt.Errorf("rows must be an encoder's output (the encoder's name, e.g. image), got a %s", n.Args[2].Prim)
	}
	if len(x.Shape) != 3 || x.Shape[0] != ir.Batch || x.Shape[1] != ir.Seq || x.DType != ir.F32 {
		return fmt.Errorf("x must be the decoder's [batch, seq, d] f32, got %s", x)
	}
	if mask.DType != ir.Bool || !mask.Shape.Equal(x.Shape[:2]) {
		return fmt.Errorf("mask must be [batch, seq] i1 (a comparison of the tokens), got %s", mask)
	}
	d, w := int64(x.Shape[2]), int64(rows.Shape[2])
	if a.Offset == nil {
		if w != d {
			return fmt.Errorf("encoder %s's output has width %d but the decoder's embeddings %d: the encoder's projector must end at the decoder's hidden size (or give offset: the column its %d start at)", n.Args[2].Name, w, d, d)
		}
	} else if off := *a.Offset; off < 0 || off+d > w {
		return fmt.Errorf("offset %d: columns [%d, %d) of encoder %s's output, which is %d wide", off, off, off+d, n.Args[2].Name, w)
	}
	n.Type = x
	return nil
}

func lowerMaskedScatter(f *fn, n *ir.Node, a *MaskedScatterAttrs) codegen.Value {
	x := f.arg(n, 0)
	rows, ok := f.vals[n.Args[2]]
	if !ok {
		return x
	}
	if a.Offset != nil && (*a.Offset != 0 || rows.Type.Shape[2] != x.Type.Shape[2]) {
		rows = f.sliceDim(rows, 2, *a.Offset, *a.Offset+x.Type.Shape[2])
	}
	if a.Add {
		rows = f.add(x, rows)
	}
	mask := f.broadcastDims(f.arg(n, 1), x.Type.WithElem("i1"), 0, 1)
	return f.selectOp(mask, rows, x)
}

// class_embedding(x [1, n, d], weight [d]) → [1, n + 1, d]:
// CLIPVisionEmbeddings's learned class row, torch.cat([class_embeds,
// patch_embeds], dim=1), before the position embeddings. The weight is
// the tensor at the path itself (an nn.Parameter, no .weight).
func inferClassEmbedding(n *ir.Node) error {
	x := n.Args[0].Type
	if len(x.Shape) != 3 || x.Shape[0] != 1 || x.Shape[1] <= 0 || x.Shape[2] <= 0 || x.DType != ir.F32 {
		return fmt.Errorf("x must be [1, n, d] f32 with concrete n and d (an encoder's rows), got %s", x)
	}
	n.Weights = []ir.Weight{{Name: n.Module, Shape: []int64{int64(x.Shape[2])}}}
	n.Type = ir.Type{Shape: ir.Shape{1, x.Shape[1] + 1, x.Shape[2]}, DType: ir.F32}
	return nil
}

func lowerClassEmbedding(f *fn, n *ir.Node) codegen.Value {
	x := f.arg(n, 0)
	cls := f.reshape(f.weight(n.Weights[0].Name), 1, 1, x.Type.Shape[2])
	return f.concat(1, cls, x)
}

// slice_rows(x [1, n, ...], start, stop: none) → [1, stop − start, ...]:
// x[:, start:stop], rows of an encoder (LlavaModel.get_image_features's
// selected_image_feature[:, 1:], the class row dropped).
func inferSliceRows(n *ir.Node, a *SliceRowsAttrs) error {
	x := n.Args[0].Type
	if len(x.Shape) < 2 || x.Shape[0] != 1 || x.Shape[1] <= 0 {
		return fmt.Errorf("x must be [1, n, ...] with concrete n (an encoder's rows), got %s", x)
	}
	rows := int64(x.Shape[1])
	stop := rows
	if a.Stop != nil {
		stop = *a.Stop
	}
	if a.Start < 0 || stop <= a.Start || stop > rows {
		return fmt.Errorf("cannot take rows [%d:%d] of %s", a.Start, stop, x)
	}
	shape := append(ir.Shape{}, x.Shape...)
	shape[1] = ir.Dim(stop - a.Start)
	n.Type = ir.Type{Shape: shape, DType: x.DType}
	return nil
}

func lowerSliceRows(f *fn, n *ir.Node, a *SliceRowsAttrs) codegen.Value {
	x := f.arg(n, 0)
	return f.sliceDim(x, 1, a.Start, a.Start+int64(n.Type.Shape[1]))
}

// avg_pool(x [1, n, d], kernel k) → [1, n/k², d]: Gemma3MultiModalProjector's
// pooling: the rows, a √n×√n grid of patches (row by row), viewed [d, √n, √n],
// nn.AvgPool2d(kernel_size=k, stride=k), flattened back to rows: each output
// row the mean of a k×k block of neighbouring patches, blocks row by row.
func inferAvgPool(n *ir.Node, a *AvgPoolAttrs) error {
	x := n.Args[0].Type
	k := a.Kernel
	if len(x.Shape) != 3 || x.Shape[0] != 1 || x.Shape[1] <= 0 || x.Shape[2] <= 0 || x.DType != ir.F32 {
		return fmt.Errorf("x must be [1, n, d] f32 with concrete n and d (an encoder's rows), got %s", x)
	}
	rows := int64(x.Shape[1])
	s := int64(math.Round(math.Sqrt(float64(rows))))
	if k <= 0 || s*s != rows || s%k != 0 {
		return fmt.Errorf("%d rows are not a square grid whose side is a multiple of kernel %d", rows, k)
	}
	n.Type = ir.Type{Shape: ir.Shape{1, ir.Dim(rows / (k * k)), x.Shape[2]}, DType: ir.F32}
	return nil
}

func lowerAvgPool(f *fn, n *ir.Node, a *AvgPoolAttrs) codegen.Value {
	x := f.arg(n, 0)
	rows, d, k := x.Type.Shape[1], x.Type.Shape[2], a.Kernel
	s := int64(math.Round(math.Sqrt(float64(rows))))
	g := f.reshape(x, s/k, k, s/k, k, d) // [py, i, px, j, d]
	sum := f.Reduce(g, f.constF32(0), "stablehlo.add", 1, 3)
	out := f.div(sum, f.splat(float64(k*k), sum.Type))
	return f.reshape(out, 1, rows/(k*k), d)
}
