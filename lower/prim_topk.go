package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// topk_mask(x [..., n] f32, k) → [..., n] i1: true at the k largest
// entries of each row, every entry equal to the k-th largest kept too
// (torch.topk keeps exactly k, choosing among ties in an unspecified
// order: a selection that a tie crosses is not defined by HF either); all
// true where n <= k. The selection DeepSeek sparse attention makes of its
// lightning indexer's scores (DeepseekV32Indexer's index_scores.topk,
// scattered into DeepseekV32Attention's index_mask); attention's
// index_topk computes it by the same lowering over the cached keys.
func inferTopkMask(n *ir.Node, a *TopkMaskAttrs) error {
	x := n.Args[0].Type
	if len(x.Shape) < 1 || x.DType != ir.F32 {
		return fmt.Errorf("x must be an f32 tensor [..., n], got %s", x)
	}
	if a.K < 1 {
		return fmt.Errorf("k must be at least 1, got %d", a.K)
	}
	n.Type = ir.Type{Shape: x.Shape, DType: ir.Bool}
	return nil
}

func lowerTopkMask(f *fn, n *ir.Node, a *TopkMaskAttrs) codegen.Value {
	return f.topkMask(f.arg(n, 0), a.K)
}

// topkMask is, per row of x [..., n] (n may be the dynamic context
// length), true where fewer than k entries of the row are strictly
// greater: the k largest, and every entry tied with the k-th (all of the
// row where n <= k). Computed without a sort, as the rank of each entry
// (a count over the row's [n, n] pairs).
func (f *fn) topkMask(x codegen.Value, k int64) codegen.Value {
	rank := x.Type.Rank()
	shape := append(append([]int64{}, x.Type.Shape...), x.Type.Shape[rank-1])
	pairs := codegen.T("f32", shape...)
	lead := make([]int64, rank-1)
	for i := range lead {
		lead[i] = int64(i)
	}
	self := f.broadcastDims(x, pairs, append(append([]int64{}, lead...), int64(rank-1))...) // [..., t, t'] = x[t]
	other := f.broadcastDims(x, pairs, append(append([]int64{}, lead...), int64(rank))...) // [..., t, t'] = x[t']
	above := f.convert(f.compare("GT", other, self), "i32")
	count := f.Reduce(above, f.constI32(0), "stablehlo.add", int64(rank)) // [..., t]: entries above x[t]
	return f.compare("LT", count, f.broadcast(f.constI32(k), count.Type))
}
