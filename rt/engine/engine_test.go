package engine

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt"
)

const fixture = "../../golden/testdata/llama-tied"

// open loads the fixture with 3 slots of 128 positions.
func open(t *testing.T) *rt.Model { return openFixture(t, fixture, 128) }

// openFixture loads the fixture in dir with 3 slots of maxLen positions
// and decode batches 1 and 2, so a step of 3 running requests is split and
// padding is exercised; the model is closed when the test ends.
func openFixture(t *testing.T, dir string, maxLen int64) *rt.Model {
	t.Helper()
	testmodels.NeedIREE(t)
	var o launch.Options
	o.Plan.Lower.Slots = 3
	o.Plan.Lower.DecodeBatches = []int64{1, 2}
	o.Plan.Lower.MaxLen = maxLen
	m, err := launch.Open(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// collect reads a stream to its end.
func collect(t *testing.T, ch <-chan Event) ([]int32, Event) {
	t.Helper()
	var toks []int32
	for ev := range ch {
		if ev.Done {
			return toks, ev
		}
		toks = append(toks, ev.Token)
	}
	t.Fatal("stream closed without a Done event")
	return nil, Event{}
}

func prompts() [][]int32 {
	var ps [][]int32
	for n := 1; n <= 40; n += 7 { // 1, 8, 15, 22, 29, 36 tokens
		p := []int32{1}
		for i := 1; i < n; i++ {
			p = append(p, int32(3+(i*37+n)%250))
		}
		ps = append(ps, p)
	}
	return ps
}

// TestBatchedEqualsSingle: requests of different prompt lengths, running
// concurrently (more than the slots, so some queue), each get exactly the
// tokens they get alone, greedy and seeded sampling alike, with and
// without penalties.
func TestBatchedEqualsSingle(t *testing.T) {
	m := open(t)
	ctx := context.Background()
	type job struct {
		req  Request
		want []int32
	}
	var jobs []job
	for i, p := range prompts() {
		r := Request{Prompt: p, MaxTokens: 12 + i}
		switch {
		case i%2 == 1:
			r.Sampling = rt.SamplingOptions{Temperature: 0.9, TopP: 0.95, Seed: uint64(i)}
		case i == 2 || i == 4: // penalties, whose state the worker keeps per slot; sampled (2) and greedy (4)
			r.Sampling = rt.SamplingOptions{Temperature: 0.8 * float64(4-i) / 2, Seed: uint64(i), RepetitionPenalty: 1.3,
				FrequencyPenalty: 0.6, PresencePenalty: 0.2, DRY: rt.DRYOptions{Multiplier: 0.8, Breakers: []int32{2}}}
		}
		g, err := m.Generate(ctx, p, rt.GenerateOptions{MaxTokens: r.MaxTokens, Sampling: r.Sampling})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, job{r, g.Tokens})
	}
	e, err := New(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go e.Run(runCtx)

	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch, err := e.Submit(ctx, j.req)
			if err != nil {
				t.Error(err)
				return
			}
			got, last := collect(t, ch)
			if !slices.Equal(got, j.want) {
				t.Errorf("request %d (%d prompt tokens): batched %v, alone %v", i, len(j.req.Prompt), got, j.want)
			}
			wantReason := FinishLength
			if len(j.want) < j.req.MaxTokens {
				wantReason = FinishStop
			}
			if last.FinishReason != wantReason || last.CompletionTokens != len(got) || last.PromptTokens != len(j.req.Prompt) {
				t.Errorf("request %d: last event %+v, want %s with %d completion tokens", i, last, wantReason, len(got))
			}
		}()
	}
	wg.Wait()
	st := e.Stats()
	if st.Running != 0 || st.Queued != 0 {
		t.Errorf("after all requests: %+v, want nothing running or queued", st)
	}
}

// TestPrefixReuse: a request that extends the previous request's prompt
// and output reuses that slot's cache and still gets its own tokens.
func TestPrefixReuse(t *testing.T) {
	m := open(t)
	ctx := context.Background()
	first := prompts()[3]
	e, _ := New(m, Options{})
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go e.Run(runCtx)
	ch, err := e.Submit(ctx, Request{Prompt: first, MaxTokens: 6})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := collect(t, ch)
	second := slices.Concat(first, out, []int32{7, 8, 9})
	ch, err = e.Submit(ctx, Request{Prompt: second, MaxTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	got, last := collect(t, ch)
	// The slot holds first and all of out but its last token (never fed).
	if want := len(first) + len(out) - 1; last.CachedTokens != want {
		t.Errorf("cached tokens %d, want %d", last.CachedTokens, want)
	}
	stop()
	time.Sleep(10 * time.Millisecond)
	alone, err := m.Generate(ctx, second, rt.GenerateOptions{MaxTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, alone.Tokens) {
		t.Errorf("with a reused prefix %v, alone %v", got, alone.Tokens)
	}
}

// TestCancelAndErrors: a cancelled request ends with FinishCancelled and
// frees its slot; bad requests and a full queue are refused up front.
func TestCancelAndErrors(t *testing.T) {
	m := open(t)
	ctx := context.Background()
	e, _ := New(m, Options{QueueSize: 1})
	for _, c := range []struct {
		r    Request
		want string
	}{
		{Request{MaxTokens: 4}, "the prompt is empty"},
		{Request{Prompt: []int32{1}, MaxTokens: 0}, "max_tokens 0"},
		{Request{Prompt: []int32{1, 2}, MaxTokens: 200}, "the prompt (2 tokens) plus max_tokens (200) exceed the context length of 128 tokens"},
		{Request{Prompt: []int32{1, 99999}, MaxTokens: 4}, "token id 99999 is outside the vocabulary"},
		{Request{Prompt: []int32{1}, MaxTokens: 4, Sampling: rt.SamplingOptions{TopP: 2}}, "top-p 2"},
	} {
		if _, err := e.Submit(ctx, c.r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.r, err, c.want)
		}
	}
	// Not running yet: the one queue place fills.
	if _, err := e.Submit(ctx, Request{Prompt: []int32{1}, MaxTokens: 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Submit(ctx, Request{Prompt: []int32{1}, MaxTokens: 4}); !errors.Is(err, ErrQueueFull) {
		t.Errorf("second request with a queue of 1: %v, want ErrQueueFull", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	go e.Run(runCtx)
	for i := 0; i < 500 && e.Stats().Queued > 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	reqCtx, cancel := context.WithCancel(ctx)
	ch, err := e.Submit(reqCtx, Request{Prompt: prompts()[2], MaxTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	<-ch // first token
	cancel()
	_, last := collect(t, ch)
	if last.FinishReason != FinishCancelled {
		t.Errorf("cancelled request ended with %+v", last)
	}
	stop()
	for i := 0; i < 100 && !errors.Is(submitErr(e), ErrClosed); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if err := submitErr(e); !errors.Is(err, ErrClosed) {
		t.Errorf("after Run returned: %v, want ErrClosed", err)
	}
}

// TestRefusedSequenceEndsAlone: a request whose sampling the worker
// refuses at seq_start (here a grammar whose vocabulary file is missing;
// in serving, a schema llguidance cannot build) ends with that error, and
// the request running beside it goes on, unrestarted and unchanged.
func TestRefusedSequenceEndsAlone(t *testing.T) {
	m := open(t)
	ctx := context.Background()
	e, _ := New(m, Options{})
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go e.Run(runCtx)
	p := prompts()[2]
	good, err := e.Submit(ctx, Request{Prompt: p, MaxTokens: 24})
	if err != nil {
		t.Fatal(err)
	}
	<-good // running
	bad, err := e.Submit(ctx, Request{Prompt: prompts()[1], MaxTokens: 8,
		Sampling: rt.SamplingOptions{Grammar: &rt.Grammar{Lark: "start: \"a\"", Vocab: filepath.Join(t.TempDir(), "missing.json")}}})
	if err != nil {
		t.Fatal(err)
	}
	if toks, last := collect(t, bad); len(toks) != 0 || last.Err == nil || !strings.Contains(last.Err.Error(), "StartSeq") {
		t.Errorf("refused request: %d tokens, %+v; want no token and the worker's StartSeq error", len(toks), last)
	}
	toks, last := collect(t, good)
	if last.Err != nil || len(toks) != 23 {
		t.Fatalf("the request beside it: %d more tokens, %+v; want 23 and no error", len(toks), last)
	}
	if st := e.Stats(); st.Restarts != 0 {
		t.Errorf("%d worker restarts, want 0", st.Restarts)
	}
	stop()
	time.Sleep(10 * time.Millisecond)
	alone, err := m.Generate(ctx, p, rt.GenerateOptions{MaxTokens: 24})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(toks, alone.Tokens[1:]) {
		t.Errorf("beside the refused request %v, alone %v", toks, alone.Tokens[1:])
	}
}

func submitErr(e *Engine) error {
	_, err := e.Submit(context.Background(), Request{Prompt: []int32{1}, MaxTokens: 1})
	return err
}

// TestBatchFor: the smallest compiled batch that holds the running
// requests, padded only with spare slots; else the largest that fits.
func TestBatchFor(t *testing.T) {
	e := &Engine{batches: []int{1, 2, 4, 8}, slots: make([]slot, 8)}
	running := func(n int) {
		for i := range e.slots {
			e.slots[i].owner = nil
			if i < n {
				e.slots[i].owner = &seq{decode: true}
			}
		}
	}
	for _, c := range []struct{ running, n, want int }{
		{1, 1, 1}, {2, 2, 2}, {3, 3, 4}, {4, 4, 4}, {5, 5, 8}, {8, 8, 8},
	} {
		running(c.running)
		if got := e.batchFor(c.n); got != c.want {
			t.Errorf("%d running: batch %d, want %d", c.n, got, c.want)
		}
	}
	// Seven requests decoding in seven slots: batch 8 would need a padding
	// row in a slot outside the batch and there is none, so 4 (then 2, 1).
	e.slots = make([]slot, 7)
	running(7)
	if got := e.batchFor(7); got != 4 {
		t.Errorf("7 running in 7 slots: batch %d, want 4 (8 cannot be padded)", got)
	}
}
