package lower

import (
	"fmt"

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
	raw, st, shape := f.stored(n.Weights[0].Name)
	if raw.Type.Elem == "" {
		return codegen.Value{Type: f.ty(n.Type)}
	}
	r := int64(ids.Type.Rank())
	width := raw.Type.Shape[1]
	attrs := gatherAttrs(codegen.Ints{r}, r, codegen.I64s{1, width})
	rowsShape := append(append([]int64{}, ids.Type.Shape...), width)
	rows := f.Op("stablehlo.gather", raw.Type.With(rowsShape...), attrs, raw, ids)
	out := f.decodeRows(st, f.reshape(rows, ids.Type.NumElements(), width), shape[1])
	// The barrier keeps the gather out of its consumer's dispatch: IREE
	// 3.13 fuses it into a following norm's reduction and then holds an
	// 8-row tile of the gathered rows on the stack, 8·width·4 bytes, past
	// the CPU backend's 32 KiB limit from width 1024 at a 512-token prefill
	// and from width 2048 at any ("exceeded stack allocation limit"): every
	// model of hidden size 2048 or more failed to compile.
	return f.barrier(f.reshape(out, f.ty(n.Type).Shape...))
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
