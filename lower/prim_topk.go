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
// length), true where the entry is at least the row's k-th largest: the k
// largest, and every entry tied with the k-th (all of the row where
// n <= k). The k-th largest is read from the row sorted in descending
// order (one stablehlo.sort, O(n log n) per row; a rank count over the
// row's [n, n] pairs did not compile on IREE's CPU backend for a dynamic
// n, and costs n² per row).
func (f *fn) topkMask(x codegen.Value, k int64) codegen.Value {
	rank := x.Type.Rank()
	n := x.Type.Shape[rank-1]
	sorted := f.SortDescending(x, int64(rank-1))
	at := f.constI32(min(k, max(n, 1)) - 1) // a static row: its k-th entry, or its last
	if n == codegen.Dynamic {
		at = f.binary("stablehlo.minimum", f.constI32(k-1), f.sub(f.context, f.constI32(1)))
	}
	sizes := append(append([]int64{}, x.Type.Shape[:rank-1]...), 1)
	zero := f.constI32(0)
	idx := make([]codegen.Value, rank)
	for i := range idx {
		idx[i] = zero
	}
	idx[rank-1] = at
	kth := f.Op("stablehlo.dynamic_slice", x.Type.With(sizes...), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s(sizes))}, append([]codegen.Value{sorted}, idx...)...)
	dims := make([]int64, rank)
	for i := range dims {
		dims[i] = int64(i)
	}
	return f.compare("GE", x, f.broadcastDims(kth, x.Type, dims...))
}
