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

// BenchmarkMamba2 measures a synthetic Mamba2 (2 layers, hidden 1024,
// 32 heads × head_dim 64, state 128, one group, chunk 256, f32):
//
//   - decode/held=64 and decode/held=4096: one greedy decode step after 64
//     or 4096 tokens; the state does not grow, so the two should cost the
//     same;
//   - prefill=512: one chunked prefill of 512 tokens (the SSD scan's
//     matmul form), against steps=512: the same 512 tokens as one-token
//     steps.
//
// The module compiles first (not timed). Run:
// go test ./golden -run '^$' -bench Mamba2 -benchtime 20x.
func BenchmarkMamba2(b *testing.B) {
	testmodels.NeedIREE(b)
	dir := syntheticMamba2(b)
	ctx := context.Background()
	var o launch.Options
	o.Plan.Lower.MaxLen = 8192
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
	for _, held := range []int{64, 4096} {
		b.Run(fmt.Sprintf("decode/held=%d", held), func(b *testing.B) {
			if _, err := m.Prefill(ctx, prompt[:held], 0); err != nil {
				b.Fatal(err)
			}
			tok := int32(3)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l, err := m.Decode(ctx, tok, held) // the same position each time: the held state continues there
				if err != nil {
					b.Fatal(err)
				}
				tok = rt.Argmax(l)
			}
		})
	}
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
}

// syntheticMamba2 writes a random-weight Mamba2 checkpoint (config.json
// and model.safetensors) into a temp dir.
func syntheticMamba2(b *testing.B) string {
	const hidden, layers, heads, headDim, state, groups, vocab, kernel = 1024, 2, 32, 64, 128, 1, 512, 4
	dir := b.TempDir()
	cfg := map[string]any{
		"model_type": "mamba2", "vocab_size": vocab, "hidden_size": hidden, "num_hidden_layers": layers,
		"num_heads": heads, "head_dim": headDim, "state_size": state, "n_groups": groups, "expand": 2,
		"conv_kernel": kernel, "chunk_size": 256, "layer_norm_epsilon": 1e-5, "tie_word_embeddings": false,
	}
	raw, err := json.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), raw, 0o644); err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2, 1024))
	ts := map[string]testckpt.STTensor{}
	add := func(name string, mean, std float64, shape ...int64) {
		n := int64(1)
		for _, d := range shape {
			n *= d
		}
		data := make([]byte, 4*n)
		for i := int64(0); i < n; i++ {
			binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(mean+std*r.NormFloat64())))
		}
		ts[name] = testckpt.STTensor{DType: "F32", Shape: shape, Data: data}
	}
	inner := int64(2 * hidden)
	conv := inner + 2*groups*state
	add("backbone.embeddings.weight", 0, 1, vocab, hidden)
	add("backbone.norm_f.weight", 1, 0, hidden)
	add("lm_head.weight", 0, 0.05, vocab, hidden)
	for l := 0; l < layers; l++ {
		p := fmt.Sprintf("backbone.layers.%d.", l)
		add(p+"norm.weight", 1, 0, hidden)
		add(p+"mixer.in_proj.weight", 0, 0.03, inner+conv+heads, hidden)
		add(p+"mixer.conv1d.weight", 0, 0.3, conv, 1, kernel)
		add(p+"mixer.conv1d.bias", 0, 0.1, conv)
		add(p+"mixer.A_log", 1, 0.5, heads)
		add(p+"mixer.D", 1, 0.1, heads)
		add(p+"mixer.dt_bias", -2, 0.5, heads)
		add(p+"mixer.norm.weight", 1, 0, inner)
		add(p+"mixer.out_proj.weight", 0, 0.02, hidden, inner)
	}
	testckpt.WriteSafetensors(b, filepath.Join(dir, "model.safetensors"), ts)
	return dir
}
