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

// topkMask is x >= θ per row of x [..., n] (n may be the dynamic context
// length), θ the k-th largest entry of the row (the row's minimum where n
// <= k): the k largest, and every entry tied with the k-th. θ is found
// exactly without a sort: each f32 maps to an i32 key of the same order
// (its bits, the magnitude bits flipped for a negative number; −0 lands
// just below +0), and θ's key is the largest key with at least k entries
// at or above it, built bit by bit from the top (32 steps of a compare
// and a count over the row, in the unsigned order key ^ 2³¹). The cost is
// 32·n per row whatever k is, and every step reduces over one dimension
// of the row only (a count over [n, n] pairs does not compile on IREE
// 3.13's CPU backend for a dynamic n).
func (f *fn) topkMask(x codegen.Value, k int64) codegen.Value {
	it := x.Type.WithElem("i32")
	bits := f.Op("stablehlo.bitcast_convert", it, nil, x)
	zero := f.broadcast(f.constI32(0), it)
	flipped := f.binary("stablehlo.xor", bits, f.broadcast(f.constI32(0x7fffffff), it))
	key := f.selectOp(f.compare("LT", bits, zero), flipped, bits)

	rank := x.Type.Rank()
	rows := codegen.T("i32", x.Type.Shape[:rank-1]...)
	sign := f.broadcast(f.constI32(-1<<31), rows)
	kk := f.broadcast(f.constI32(k), rows)
	ans := f.broadcast(f.constI32(0), rows) // θ's key ^ 2³¹, in the unsigned order
	for bit := 31; bit >= 0; bit-- {
		b := int64(1) << bit
		if bit == 31 {
			b = -1 << 31
		}
		cand := f.Op("stablehlo.or", rows, nil, ans, f.broadcast(f.constI32(b), rows))
		at := f.compare("GE", key, f.broadcastLeading(f.binary("stablehlo.xor", cand, sign), it))
		count := f.Reduce(f.convert(at, "i32"), f.constI32(0), "stablehlo.add", int64(rank-1))
		ans = f.selectOp(f.compare("GE", count, kk), cand, ans)
	}
	return f.compare("GE", key, f.broadcastLeading(f.binary("stablehlo.xor", ans, sign), it))
}
