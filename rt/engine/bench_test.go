package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/internal/testmodels"
)

// BenchmarkPrefixReuse reports the time to first token of a second chat
// turn on SmolLM2 (the first turn's ~400-token prompt, its answer and 8
// more tokens) when its slot still holds the first turn (reuse_ttft_ms)
// and when it starts from an empty cache (fresh_ttft_ms). It uses the
// serving shape of `infer serve --max-batch 4 --max-len 1024`.
func BenchmarkPrefixReuse(b *testing.B) {
	testmodels.NeedIREE(b)
	var o launch.Options
	o.Plan.Lower.Slots, o.Plan.Lower.MaxLen = 4, 1024
	o.Plan.Lower.DecodeBatches = []int64{1, 2, 4}
	ctx := context.Background()
	m, err := launch.Open(ctx, testmodels.GGUF(b, "smollm2"), o)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	first := []int32{1}
	for i := 1; i < 400; i++ {
		first = append(first, int32(100+(i*7919)%20000))
	}
	ttft := func(e *Engine, p []int32) (time.Duration, []int32) {
		t0 := time.Now()
		ch, err := e.Submit(ctx, Request{Prompt: p, MaxTokens: 16})
		if err != nil {
			b.Fatal(err)
		}
		var d time.Duration
		var out []int32
		for ev := range ch {
			if ev.Done {
				break
			}
			if out == nil {
				d = time.Since(t0)
			}
			out = append(out, ev.Token)
		}
		return d, out
	}
	var reuse, fresh time.Duration
	for i := 0; i < b.N; i++ {
		e, _ := New(m, Options{})
		rctx, stop := context.WithCancel(ctx)
		go e.Run(rctx)
		_, out := ttft(e, first)
		second := slices.Concat(first, out, []int32{11, 12, 13, 14, 15, 16, 17, 18})
		d, _ := ttft(e, second)
		reuse += d
		stop()
		e2, _ := New(m, Options{})
		rctx2, stop2 := context.WithCancel(ctx)
		go e2.Run(rctx2)
		d, _ = ttft(e2, second)
		fresh += d
		stop2()
	}
	b.ReportMetric(float64(reuse.Milliseconds())/float64(b.N), "reuse_ttft_ms")
	b.ReportMetric(float64(fresh.Milliseconds())/float64(b.N), "fresh_ttft_ms")
}
