package golden

import (
	"context"
	"testing"
	"time"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/internal/synthetic"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/lower"
	"github.com/archc/archc/rt"
)

// recurrentModels are the synthetic models of BenchmarkRecurrentState,
// f32, two recurrent layers each and no attention:
//   - mamba2: hidden 1024, 32 heads × head_dim 64, state 128, one group,
//     chunk 256;
//   - gdn: Qwen3.5-shaped gated DeltaNet (qwen3_5_text, Qwen3.5-0.8B's
//     layer: hidden 1024, 16 key and 16 value heads of 128, conv kernel 4,
//     MLP 3584), both layers linear_attention.
//
// attnKV is the KV cache per token the same model would need if its
// layers were attention instead (layers × 2 × kv_heads × head_dim × 4 B):
// Mamba2 as multi-head attention over its hidden size, the gated DeltaNet
// as Qwen3.5's attention layers (2 KV heads of 256).
var recurrentModels = []struct {
	name   string
	cfg    map[string]any
	attnKV int64
}{
	{"mamba2", map[string]any{
		"model_type": "mamba2", "vocab_size": 512, "hidden_size": 1024, "num_hidden_layers": 2,
		"num_heads": 32, "head_dim": 64, "state_size": 128, "n_groups": 1, "expand": 2,
		"conv_kernel": 4, "chunk_size": 256, "layer_norm_epsilon": 1e-5, "tie_word_embeddings": false,
	}, 2 * 2 * 1024 * 4},
	{"gdn", map[string]any{
		"model_type": "qwen3_5_text", "vocab_size": 512, "hidden_size": 1024, "intermediate_size": 3584,
		"num_hidden_layers": 2, "layer_types": []string{"linear_attention", "linear_attention"},
		"num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256,
		"linear_num_key_heads": 16, "linear_num_value_heads": 16, "linear_key_head_dim": 128,
		"linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "rms_norm_eps": 1e-6,
		"tie_word_embeddings": false, "max_position_embeddings": 8192,
	}, 2 * 2 * 2 * 256 * 4},
}

// BenchmarkRecurrentState measures the state-space and linear-attention
// layers' promise on synthetic models (recurrentModels):
//
//   - decode: one greedy decode step after 64 tokens (slot 0) and one after
//     4096 (slot 1), alternating; the state does not grow, so the two
//     should cost the same (issue 18's bar: tok/s-ratio(4096/64), held=4096's
//     tok/s over held=64's, at least 0.95);
//   - prefill=512: one chunked prefill of 512 tokens (the scan's matmul
//     form), against steps=512: the same 512 tokens as one-token steps
//     (bar: 4× faster);
//   - the metrics state-B/slot (lower.StateBytesPerSlot: windows and
//     recurrent states, both parity buffers) and attn-KV-B/slot@4096 (what
//     the same layers as attention would cache for 4096 tokens).
//
// Each model compiles first (not timed). Run:
// go test ./golden -run '^$' -bench RecurrentState -benchtime 20x.
func BenchmarkRecurrentState(b *testing.B) {
	testmodels.NeedIREE(b)
	for i, rm := range recurrentModels {
		b.Run(rm.name, func(b *testing.B) {
			dir := synthetic.Checkpoint(b, rm.cfg, uint64(i+1))
			g, err := driver.NewGraph(dir, driver.PlanOptions{})
			if err != nil {
				b.Fatal(err)
			}
			state := lower.StateBytesPerSlot(g.Graph, 0)
			ctx := context.Background()
			var o launch.Options
			o.Plan.Lower.MaxLen = 8192
			o.Plan.Lower.Slots = 2
			o.Plan.Lower.PrefillBuckets = []int64{512}
			m, err := launch.Open(ctx, dir, o)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			prompt := make([]int32, 4096)
			for i := range prompt {
				prompt[i] = int32(1 + (i*7)%500)
			}
			b.Run("decode", func(b *testing.B) {
				// Slot 0 holds 64 tokens, slot 1 4096; the steps alternate
				// between them, so both see the same machine (a shared
				// machine's load drifts more than the difference sought).
				held := []int{64, 4096}
				tok := []int32{3, 3}
				for s, n := range held {
					if _, err := m.PrefillSlot(ctx, s, prompt[:n], 0); err != nil {
						b.Fatal(err)
					}
				}
				var spent [2]time.Duration
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					for s := range held {
						t0 := time.Now()
						l, err := m.DecodeBatch(ctx, tok[s:s+1], held[s:s+1], []int{s}) // the same position each time: the held state continues there
						spent[s] += time.Since(t0)
						if err != nil {
							b.Fatal(err)
						}
						tok[s] = rt.Argmax(l[0])
					}
				}
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
				b.ReportMetric(ms(spent[0]), "ms/tok@held=64")
				b.ReportMetric(ms(spent[1]), "ms/tok@held=4096")
				b.ReportMetric(float64(spent[0])/float64(spent[1]), "tok/s-ratio(4096/64)")
				b.ReportMetric(float64(state), "state-B/slot")
				b.ReportMetric(float64(rm.attnKV*4096), "attn-KV-B/slot@4096")
			})
			b.Run("prefill=512", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := m.Prefill(ctx, prompt[:512], 0); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("steps=512", func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if _, err := m.Prefill(ctx, prompt[:1], 0); err != nil {
						b.Fatal(err)
					}
					for p := 1; p < 512; p++ {
						if _, err := m.Decode(ctx, prompt[p], p); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		})
	}
}
