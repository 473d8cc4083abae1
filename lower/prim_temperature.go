package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// attn_temperature(x [batch, seq, ...], floor_scale, attn_scale, offset: 1) → same:
// Llama 4's attention temperature tuning of the queries of its NoPE layers
// (Llama4TextAttention.forward, models/llama4/modeling_llama4.py, when
// attn_temperature_tuning): each token's row is multiplied by
// log1p(floor((p + offset) / floor_scale)) · attn_scale + 1, p the token's
// absolute position (HF: arange(seq) + the cache's past length), every
// step in f32 as torch computes it (positions.float() + 1.0, divided by
// the int floor_scale, floored, log1p, times attn_scale, plus 1.0).
// Ministral 3's get_llama_4_attn_scale (models/ministral3) is offset 0:
// 1 + beta · log(1 + floor(p / original_max_position_embeddings)).
func inferAttnTemperature(n *ir.Node, a *AttnTemperatureAttrs) error {
	x := n.Args[0].Type
	if len(x.Shape) < 2 || x.Shape[0] != ir.Batch || x.Shape[1] != ir.Seq {
		return fmt.Errorf("x must be [batch, seq, ...], got %s", x)
	}
	if !(a.FloorScale > 0) {
		return fmt.Errorf("floor_scale must be positive (tokens per temperature step), got %g", a.FloorScale)
	}
	return inferSame(n)
}

func lowerAttnTemperature(f *fn, n *ir.Node, a *AttnTemperatureAttrs) codegen.Value {
	x := f.arg(n, 0)
	pos := f.convert(f.positions, "f32") // [B, S]
	t := pos.Type
	s := pos
	if a.Offset != 0 {
		s = f.add(pos, f.splat(a.Offset, t))
	}
	s = f.unary("stablehlo.floor", f.div(s, f.splat(a.FloorScale, t)))
	s = f.unary("stablehlo.log_plus_one", s)
	s = f.add(f.mul(s, f.splat(a.AttnScale, t)), f.splat(1, t))
	return f.mul(x, f.broadcastDims(s, x.Type, 0, 1))
}
