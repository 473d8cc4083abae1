package rt_test

import (
	"context"
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
