package rt_test

import (
	"context"
	"fmt"
	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/internal/testckpt"
	"os"
	"strings"
	"testing"

	"github.com/archc/archc/internal/testmodels"
)

// BenchmarkDecodeCall measures the fixed cost of one greedy decode call
// (Go → worker pipe → IREE → argmax in the worker → token id back) on a
// 1-layer copy of the tiny llama fixture, where the model's own work is a
// few microseconds: ns/op is the per-step overhead every decode pays.
// ARCHC_BENCH_DEVICE (local-task, local-sync) and ARCHC_BENCH_CFLAGS (extra
// iree-compile flags, space-separated) compare runtime and compiler
// settings, e.g. ARCHC_BENCH_DEVICE=local-sync go test ./rt -run '^$' -bench DecodeCall.
func BenchmarkDecodeCall(b *testing.B) {
	testmodels.NeedIREE(b)
	ctx := context.Background()
	dir := testckpt.FixtureCopy(b, nil, func(cfg map[string]any) { cfg["num_hidden_layers"] = 1 })
	m, err := launch.Open(ctx, dir, launch.Options{Device: os.Getenv("ARCHC_BENCH_DEVICE"), CompileFlags: strings.Fields(os.Getenv("ARCHC_BENCH_CFLAGS"))})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	if _, err := m.Prefill(ctx, []int32{1, 2, 3}, 0); err != nil {
		b.Fatal(err)
	}
	tok := []int32{5}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ids, err := m.DecodeGreedy(ctx, tok, []int{3}, []int{0})
		if err != nil {
			b.Fatal(err)
		}
		tok[0] = ids[0] // position 3 is rewritten each call: a fixed attention length
	}
}

// BenchmarkVerify compares one speculative verify call of K tokens
// (rt.Model.Verify, K = 2, 4, 9) with one decode step, at position 64,
// on the GGUF or model folder ARCHC_BENCH_MODEL (default: the 1-layer
// fixture copy, where only the per-call overhead shows). A verify call
// computes its whole bucket, so verify_K / decode is the cost of a
// speculative step in decode steps, before drafting: at 1B parameters and
// up on a CPU the matmuls of K rows are compute-bound, e.g.
// ARCHC_BENCH_MODEL=.cache/bench-models/llama-3.2-1b-q4_0.gguf go test ./rt -run '^$' -bench Verify -benchtime 20x.
func BenchmarkVerify(b *testing.B) {
	testmodels.NeedIREE(b)
	ctx := context.Background()
	path := os.Getenv("ARCHC_BENCH_MODEL")
	if path == "" {
		path = testckpt.FixtureCopy(b, nil, func(cfg map[string]any) { cfg["num_hidden_layers"] = 1 })
	}
	var o launch.Options
	o.Plan.Lower.Slots, o.Plan.Lower.DecodeBatches, o.Plan.Lower.MaxLen = 1, []int64{1}, 1024
	o.Plan.Lower.PrefillBuckets, o.Plan.Lower.VerifyBuckets = []int64{64}, []int64{2, 4, 9}
	m, err := launch.Open(ctx, path, o)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	prompt := make([]int32, 64)
	for i := range prompt {
		prompt[i] = int32(1 + i%200)
	}
	if _, err := m.Prefill(ctx, prompt, 0); err != nil {
		b.Fatal(err)
	}
	b.Run("decode", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := m.DecodeGreedy(ctx, []int32{5}, []int{64}, []int{0}); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, k := range []int{2, 4, 9} {
		b.Run(fmt.Sprintf("verify_%d", k), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := m.Verify(ctx, 0, prompt[:k], 64, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
