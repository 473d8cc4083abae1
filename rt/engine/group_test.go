package engine

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/archc/archc/rt"
)

// hybridFixture holds a KV cache (its attention layer) and conv windows
// per slot.
const hybridFixture = "../../golden/testdata/lfm2"

// openHybrid loads the hybrid fixture with 3 slots of 100 positions: not
// a multiple of the 64-token copy block, so a copy's last block is moved
// back (lower's copy.go).
func openHybrid(t *testing.T) *rt.Model { return openFixture(t, hybridFixture, 100) }

// choices are the requests of one n = len(samplings) group on prompt p.
func choices(p []int32, maxTokens int) []Request {
	var rs []Request
	for _, s := range []rt.SamplingOptions{
		{}, // greedy
		{Temperature: 0.9, TopP: 0.95, Seed: 11},
		{Temperature: 0.7, Seed: 12, RepetitionPenalty: 1.3, FrequencyPenalty: 0.5, DRY: rt.DRYOptions{Multiplier: 0.8, Breakers: []int32{2}}},
		{Temperature: 1.1, TopK: 20, Seed: 13},
	} {
		rs = append(rs, Request{Prompt: p, MaxTokens: maxTokens, Sampling: s})
	}
	return rs
}

type outcome struct {
	toks []int32
	last Event
}

// runAll submits reqs (as one group if g is set) and collects each.
func runAll(t *testing.T, e *Engine, ctx context.Context, reqs []Request, g *Group) []outcome {
	t.Helper()
	var chs []<-chan Event
	for _, r := range reqs {
		r.Group = g
		ch, err := e.Submit(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		chs = append(chs, ch)
	}
	out := make([]outcome, len(chs))
	for i, ch := range chs {
		out[i].toks, out[i].last = collect(t, ch)
	}
	return out
}

// alone is each request's tokens generated alone (slot 0, no engine):
// taken before an engine runs on m, whose slots' contents it would
// change behind the engine's back.
func alone(t *testing.T, m *rt.Model, reqs []Request) [][]int32 {
	t.Helper()
	var out [][]int32
	for _, r := range reqs {
		g, err := m.Generate(context.Background(), r.Prompt, rt.GenerateOptions{MaxTokens: r.MaxTokens, Sampling: r.Sampling})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, g.Tokens)
	}
	return out
}

// fixtures are the models the group tests run on: a KV cache only, and
// a KV cache with conv windows.
var groupFixtures = []struct {
	name string
	open func(*testing.T) *rt.Model
}{{"llama", open}, {"hybrid", openHybrid}}

// TestGroupSharesPrefill: the n choices of a prompt, prefilled once and
// copied into the other slots (KV cache, and the hybrid fixture's conv
// windows), get exactly the tokens of the separate-prefill path (each
// choice its own request) and of each choice alone, greedy, sampled and
// penalized alike; on prompts of 1 token, of one copy block and of two (the
// second, on the hybrid fixture, moved back from the slot's end), and on a
// second turn that reuses a slot's prefix. A group larger than the slots
// runs its choices separately, with the same tokens.
func TestGroupSharesPrefill(t *testing.T) {
	for _, fx := range groupFixtures {
		t.Run(fx.name, func(t *testing.T) {
			m := fx.open(t)
			if !m.CanCopy() {
				t.Fatal("a module with 3 slots cannot copy a slot's state")
			}
			ctx := context.Background()
			type groupCase struct {
				what string
				reqs []Request
				want [][]int32
			}
			var cases []groupCase
			add := func(what string, p []int32, n int) [][]int32 {
				reqs := choices(p, 10)[:n]
				c := groupCase{what, reqs, alone(t, m, reqs)}
				cases = append(cases, c)
				return c.want
			}
			add("1-token prompt", prompts()[0], 3)
			turn := add("22-token prompt", prompts()[3], 3)
			add("second turn", slices.Concat(prompts()[3], turn[0], []int32{7, 8}), 3)
			add("80-token prompt", longPrompt(80), 2)
			add("group of 4 on 3 slots", prompts()[3], 4)

			e, err := New(m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			runCtx, stop := context.WithCancel(ctx)
			defer stop()
			go e.Run(runCtx)
			for _, c := range cases {
				n := len(c.reqs)
				sep := runAll(t, e, ctx, c.reqs, nil)
				before := e.Stats().SharedPrefills
				grp := runAll(t, e, ctx, c.reqs, NewGroup(n))
				want := n - 1
				if n > 3 {
					want = 0 // more choices than slots: separate requests
				}
				if shared := e.Stats().SharedPrefills - before; shared != want {
					t.Errorf("%s: %d slots got the prompt by a copy, want %d", c.what, shared, want)
				}
				for j := range c.reqs {
					if !slices.Equal(grp[j].toks, sep[j].toks) || !slices.Equal(grp[j].toks, c.want[j]) {
						t.Errorf("%s: choice %d: shared prefill %v, separate prefills %v, alone %v", c.what, j, grp[j].toks, sep[j].toks, c.want[j])
					}
					if g, s := grp[j].last, sep[j].last; g.FinishReason != s.FinishReason || g.CompletionTokens != s.CompletionTokens || g.PromptTokens != len(c.reqs[j].Prompt) {
						t.Errorf("%s: choice %d ended %+v, separately %+v", c.what, j, g, s)
					}
					if n <= 3 && grp[j].last.CachedTokens != grp[0].last.CachedTokens {
						t.Errorf("%s: choice %d reports %d cached tokens, choice 0 %d", c.what, j, grp[j].last.CachedTokens, grp[0].last.CachedTokens)
					}
				}
			}
			if st := e.Stats(); st.Running != 0 || st.Queued != 0 {
				t.Errorf("after the groups: %+v, want nothing running or queued", st)
			}
		})
	}
}

// TestGroupCancel: a cancelled group leaves nothing behind. Members
// waiting for the rest of their group end when their context does (and
// the group's last member then runs alone); a group cancelled right after
// it is submitted, during its prefill or while decoding ends every
// member; when only the prefilling member's context ends, the others
// prefill on their own, exactly. Afterwards a group and a request get
// their exact tokens from the slots the cancelled ones used, and once Run
// has returned no slot has an owner, nothing is pending or queued and no
// member waits for a leader.
func TestGroupCancel(t *testing.T) {
	for _, fx := range groupFixtures {
		t.Run(fx.name, func(t *testing.T) {
			m := fx.open(t)
			ctx := context.Background()
			reqs := choices(prompts()[4], 40)[:3]
			want := alone(t, m, reqs)
			e, err := New(m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			runCtx, stop := context.WithCancel(ctx)
			defer stop()
			done := make(chan struct{})
			go func() { e.Run(runCtx); close(done) }()
			submit := func(ctx context.Context, r Request, g *Group) <-chan Event {
				r.Group = g
				ch, err := e.Submit(ctx, r)
				if err != nil {
					t.Fatal(err)
				}
				return ch
			}

			// Two members of three wait for the third; cancelled, they end.
			cctx, cancel := context.WithCancel(ctx)
			g := NewGroup(3)
			waiting := []<-chan Event{submit(cctx, reqs[0], g), submit(cctx, reqs[1], g)}
			cancel()
			for i, ch := range waiting {
				if toks, last := collect(t, ch); len(toks) != 0 || last.FinishReason != FinishCancelled {
					t.Errorf("waiting member %d: %v then %+v, want FinishCancelled", i, toks, last)
				}
			}
			if st := e.Stats(); st.Queued != 0 || st.Running != 0 {
				t.Errorf("a cancelled incomplete group: %+v, want nothing queued or running", st)
			}
			if toks, _ := collect(t, submit(ctx, reqs[2], g)); !slices.Equal(toks, want[2]) {
				t.Errorf("the last member of a cancelled group: %v, alone %v", toks, want[2])
			}

			// Cancelled at once, during the prefill or the decode.
			for _, d := range []time.Duration{0, 100 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, -1} {
				cctx, cancel := context.WithCancel(ctx)
				g := NewGroup(3)
				var chs []<-chan Event
				for _, r := range reqs {
					chs = append(chs, submit(cctx, r, g))
				}
				if d < 0 {
					<-chs[0] // a first token: the prefill is shared
				} else {
					time.Sleep(d)
				}
				cancel()
				for i, ch := range chs {
					toks, last := collect(t, ch)
					if last.FinishReason != FinishCancelled && !slices.Equal(toks, want[i]) {
						t.Errorf("cancel after %v: member %d ended %+v with %v, alone %v", d, i, last, toks, want[i])
					}
				}
			}

			// Only the first member's context ends.
			cctx, cancel = context.WithCancel(ctx)
			g = NewGroup(3)
			chs := []<-chan Event{submit(cctx, reqs[0], g), submit(ctx, reqs[1], g), submit(ctx, reqs[2], g)}
			cancel()
			collect(t, chs[0])
			for i := 1; i < 3; i++ {
				if toks, _ := collect(t, chs[i]); !slices.Equal(toks, want[i]) {
					t.Errorf("member %d of a group whose first member was cancelled: %v, alone %v", i, toks, want[i])
				}
			}

			// The slots serve a group and a request exactly afterwards.
			for i, o := range runAll(t, e, ctx, reqs, NewGroup(3)) {
				if !slices.Equal(o.toks, want[i]) {
					t.Errorf("after the cancellations: member %d %v, alone %v", i, o.toks, want[i])
				}
			}
			if toks, _ := collect(t, submit(ctx, reqs[1], nil)); !slices.Equal(toks, want[1]) {
				t.Errorf("after the cancellations: a request %v, alone %v", toks, want[1])
			}
			stop()
			<-done
			for i, sl := range e.slots {
				if sl.owner != nil {
					t.Errorf("slot %d still has an owner", i)
				}
			}
			if e.pending != nil || len(e.queue) != 0 {
				t.Error("a group is still pending or queued")
			}
			if st := e.Stats(); st.Running != 0 || st.Queued != 0 || st.KVTokens != 0 {
				t.Errorf("after Run: %+v, want nothing running, queued or held", st)
			}
		})
	}
}

// longPrompt is a prompt of n tokens (ids below the fixtures' 256).
func longPrompt(n int) []int32 {
	p := []int32{1}
	for i := 1; i < n; i++ {
		p = append(p, int32(3+(i*53+n)%250))
	}
	return p
}
