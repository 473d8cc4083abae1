package golden

import (
	"context"
	"fmt"
	"testing"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/internal/synthetic"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt"
)

// BenchmarkMoEDecode measures one greedy decode step of a synthetic
// Mixtral (2 layers, hidden 256, experts of intermediate 512, f32) for a
// number of experts E and experts per token k. Sparse dispatch makes the
// cost follow k, not E: each token gathers its k experts' weights (decode
// of one token: 1·k < E), so E = 64 costs about what E = 8 does at the same
// k, while k = 8 costs more. Each sub-benchmark compiles its own module
// first (not timed). Run: go test ./golden -run '^$' -bench MoEDecode.
func BenchmarkMoEDecode(b *testing.B) {
	testmodels.NeedIREE(b)
	for _, c := range []struct{ experts, k int }{{8, 2}, {64, 2}, {64, 8}} {
		b.Run(fmt.Sprintf("experts=%d/k=%d", c.experts, c.k), func(b *testing.B) {
			dir := syntheticMixtral(b, c.experts, c.k)
			ctx := context.Background()
			var o launch.Options
			o.Plan.Lower.MaxLen = 512
			m, err := launch.Open(ctx, dir, o)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			prompt := []int32{1, 5, 9, 13, 17, 21, 25, 29}
			if _, err := m.Prefill(ctx, prompt, 0); err != nil {
				b.Fatal(err)
			}
			tok, pos := int32(3), len(prompt)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l, err := m.Decode(ctx, tok, pos)
				if err != nil {
					b.Fatal(err)
				}
				tok, pos = rt.Argmax(l), pos+1
				if pos == m.MaxLen() {
					pos = len(prompt)
				}
			}
		})
	}
}

// syntheticMixtral writes a random-weight Mixtral checkpoint (2 layers,
// hidden 256, experts of intermediate 512) with the given experts and top
// k into a temp dir.
func syntheticMixtral(b *testing.B, experts, k int) string {
	return synthetic.Checkpoint(b, map[string]any{
		"model_type": "mixtral", "vocab_size": 512, "hidden_size": 256, "intermediate_size": 512,
		"num_hidden_layers": 2, "num_attention_heads": 8, "num_key_value_heads": 4,
		"num_local_experts": experts, "num_experts_per_tok": k, "max_position_embeddings": 4096,
		"rms_norm_eps": 1e-5, "rope_theta": 10000.0, "hidden_act": "silu", "tie_word_embeddings": false,
	}, uint64(experts*100+k))
}
