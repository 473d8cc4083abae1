package engine

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/internal/synthetic"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt"
)

// BenchmarkPrefixReuse reports the time to first token of a second chat
// turn (the first turn's 400-token prompt, its 16-token answer and 8 more
// tokens) when its slot still holds the first turn (reuse_ttft_ms) and
// when it starts from an empty slot (fresh_ttft_ms), in the serving shape
// of `infer serve --max-batch 4 --max-len 1024`, on
//   - smollm2: SmolLM2-135M Q4_1 (attention: the KV cache's prefix is
//     reused);
//   - mamba2: a synthetic Mamba2 (2 layers, hidden 1024, state 128, f32,
//     as golden's BenchmarkRecurrentState): the slot's conv windows and
//     SSM state after the first turn are reused, as a hybrid model's are.
func BenchmarkPrefixReuse(b *testing.B) {
	for _, c := range []struct {
		name  string
		model func(b *testing.B) string
		vocab int
	}{
		{"smollm2", func(b *testing.B) string { return testmodels.GGUF(b, "smollm2") }, 20000},
		{"mamba2", func(b *testing.B) string {
			return synthetic.Checkpoint(b, map[string]any{
				"model_type": "mamba2", "vocab_size": 512, "hidden_size": 1024, "num_hidden_layers": 2,
				"num_heads": 32, "head_dim": 64, "state_size": 128, "n_groups": 1, "expand": 2,
				"conv_kernel": 4, "chunk_size": 256, "layer_norm_epsilon": 1e-5, "tie_word_embeddings": false,
			}, 1)
		}, 400},
	} {
		b.Run(c.name, func(b *testing.B) {
			testmodels.NeedIREE(b)
			prefixReuse(b, openServing(b, c.model(b)), benchPrompt(c.vocab))
		})
	}
}

func prefixReuse(b *testing.B, m *rt.Model, first []int32) {
	ctx := context.Background()
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
	b.ReportMetric(float64(reuse.Microseconds())/1000/float64(b.N), "reuse_ttft_ms")
	b.ReportMetric(float64(fresh.Microseconds())/1000/float64(b.N), "fresh_ttft_ms")
}

// BenchmarkGroupTTFT reports the time to first token of a request for
// n = 4 choices of a 400-token prompt on SmolLM2 (serving shape as
// BenchmarkPrefixReuse), the choices sampled with seeds 1..4: with the
// prompt prefilled once and copied into the other three slots (a Group:
// shared_*), and with each choice prefilling it in its own slot
// (separate requests, the path before groups: separate_*). *_first_ms is
// the first choice's first token (a stream's first chunk), *_all_ms the
// last choice's (every choice has started). Each run starts a new engine,
// so no slot's cache is reused.
func BenchmarkGroupTTFT(b *testing.B) {
	ctx := context.Background()
	testmodels.NeedIREE(b)
	m := openServing(b, testmodels.GGUF(b, "smollm2"))
	prompt := benchPrompt(20000)
	ttft := func(group bool) (first, all time.Duration) {
		e, _ := New(m, Options{})
		rctx, stop := context.WithCancel(ctx)
		defer stop()
		go e.Run(rctx)
		var g *Group
		if group {
			g = NewGroup(4)
		}
		t0 := time.Now()
		var chs []<-chan Event
		for i := range 4 {
			ch, err := e.Submit(ctx, Request{Prompt: prompt, MaxTokens: 4, Sampling: rt.SamplingOptions{Temperature: 1, Seed: uint64(1 + i)}, Group: g})
			if err != nil {
				b.Fatal(err)
			}
			chs = append(chs, ch)
		}
		firsts := make([]time.Duration, len(chs))
		var wg sync.WaitGroup
		for i, ch := range chs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ev := range ch {
					if ev.Done {
						return
					}
					if firsts[i] == 0 {
						firsts[i] = time.Since(t0)
					}
				}
			}()
		}
		wg.Wait()
		if st := e.Stats(); group && st.SharedPrefills != 3 {
			b.Fatalf("%d slots got the prompt by a copy, want 3", st.SharedPrefills)
		}
		return slices.Min(firsts), slices.Max(firsts)
	}
	var sf, sa, gf, ga time.Duration
	for i := 0; i < b.N; i++ {
		f, a := ttft(false)
		sf, sa = sf+f, sa+a
		f, a = ttft(true)
		gf, ga = gf+f, ga+a
	}
	n := float64(b.N)
	b.ReportMetric(float64(sf.Milliseconds())/n, "separate_first_ms")
	b.ReportMetric(float64(sa.Milliseconds())/n, "separate_all_ms")
	b.ReportMetric(float64(gf.Milliseconds())/n, "shared_first_ms")
	b.ReportMetric(float64(ga.Milliseconds())/n, "shared_all_ms")
}

// openServing loads the model at path in the serving shape of `infer
// serve --max-batch 4 --max-len 1024`; the model is closed when the
// benchmark ends.
func openServing(b *testing.B, path string) *rt.Model {
	b.Helper()
	var o launch.Options
	o.Plan.Lower.Slots, o.Plan.Lower.MaxLen = 4, 1024
	o.Plan.Lower.DecodeBatches = []int64{1, 2, 4}
	m, err := launch.Open(context.Background(), path, o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	return m
}

// benchPrompt is a 400-token prompt: BOS, then ids spread over 100 ..
// 100+vocab-1.
func benchPrompt(vocab int) []int32 {
	p := []int32{1}
	for i := 1; i < 400; i++ {
		p = append(p, int32(100+(i*7919)%vocab))
	}
	return p
}
