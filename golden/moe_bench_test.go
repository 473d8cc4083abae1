package golden

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/internal/testckpt"
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

// syntheticMixtral writes a random-weight Mixtral checkpoint (config.json
// and model.safetensors, per-expert tensors as published checkpoints hold
// them) with the given experts and top k into a temp dir.
func syntheticMixtral(b *testing.B, experts, k int) string {
	const hidden, inter, vocab, layers, heads, kvHeads = 256, 512, 512, 2, 8, 4
	dir := b.TempDir()
	cfg := map[string]any{
		"model_type": "mixtral", "vocab_size": vocab, "hidden_size": hidden, "intermediate_size": inter,
		"num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": kvHeads,
		"num_local_experts": experts, "num_experts_per_tok": k, "max_position_embeddings": 4096,
		"rms_norm_eps": 1e-5, "rope_theta": 10000.0, "hidden_act": "silu", "tie_word_embeddings": false,
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(experts), uint64(k)))
	ts := map[string]testckpt.STTensor{}
	add := func(name string, std float64, shape ...int64) {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		data := make([]byte, 4*n)
		for i := int64(0); i < n; i++ {
			v := float32(std * r.NormFloat64())
			if std == 0 {
				v = 1
			}
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(v))
		}
		ts[name] = testckpt.STTensor{DType: "F32", Shape: shape, Data: data}
	}
	hd := int64(hidden / heads)
	add("model.embed_tokens.weight", 1, vocab, hidden)
	add("model.norm.weight", 0, hidden)
	add("lm_head.weight", 0.05, vocab, hidden)
	for l := 0; l < layers; l++ {
		p := fmt.Sprintf("model.layers.%d.", l)
		add(p+"input_layernorm.weight", 0, hidden)
		add(p+"post_attention_layernorm.weight", 0, hidden)
		add(p+"self_attn.q_proj.weight", 0.05, heads*hd, hidden)
		add(p+"self_attn.k_proj.weight", 0.05, kvHeads*hd, hidden)
		add(p+"self_attn.v_proj.weight", 0.05, kvHeads*hd, hidden)
		add(p+"self_attn.o_proj.weight", 0.05, hidden, heads*hd)
		add(p+"block_sparse_moe.gate.weight", 0.05, int64(experts), hidden)
		for e := 0; e < experts; e++ {
			q := fmt.Sprintf("%sblock_sparse_moe.experts.%d.", p, e)
			add(q+"w1.weight", 0.05, inter, hidden)
			add(q+"w3.weight", 0.05, inter, hidden)
			add(q+"w2.weight", 0.05, hidden, inter)
		}
	}
	testckpt.WriteSafetensors(b, filepath.Join(dir, "model.safetensors"), ts)
	return dir
}
