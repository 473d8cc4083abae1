package golden

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/rt/engine"
)

// TestLongRoPEEngineReuse: the engine's prefix reuse asks the model's
// length policy (abi.LengthPolicy through rt.Model.ReusablePrefix). A
// slot whose cached keys were computed with LongRoPE's long factors (its
// previous request decoded past original_max_position_embeddings) does
// not count as a cached prefix for a short prompt, and one computed with
// the short factors does; the tokens equal the oracle's either way, and
// for both choices of a request for two (one copied from the other's slot).
func TestLongRoPEEngineReuse(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	t.Parallel() // compileHeavy
	dir := "testdata/phi3-longrope-cross"
	want := readOracle(t, dir)
	m, err := launch.Open(context.Background(), dir, execOptions(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, e := startEngine(t, m, engine.Options{})
	run := func(prompt []int32, maxTokens int) ([]int32, engine.Event) {
		ch, err := e.Submit(ctx, engine.Request{Prompt: prompt, MaxTokens: maxTokens})
		if err != nil {
			t.Fatal(err)
		}
		var toks []int32
		for ev := range ch {
			if ev.Done {
				if ev.Err != nil {
					t.Fatal(ev.Err)
				}
				return toks, ev
			}
			toks = append(toks, ev.Token)
		}
		t.Fatal("stream closed without a Done event")
		return nil, engine.Event{}
	}
	short := want.Prompts[1] // 70 tokens; original_max 80
	// 70 + 15 tokens: the decode crosses 80, so slot 0 ends with long-factor keys.
	if got, _ := run(short, want.MaxNewTokens); !cmp.Equal(got, want.Tokens[1]) {
		t.Fatalf("first run: %v, oracle %v", got, want.Tokens[1])
	}
	// The same prompt again: its 69-token prefix is in slot 0, with long keys.
	got, ev := run(short, 1)
	if ev.CachedTokens != 0 || got[0] != want.Tokens[1][0] {
		t.Errorf("over long-factor keys: %d cached tokens (want 0), first token %d (oracle %d)", ev.CachedTokens, got[0], want.Tokens[1][0])
	}
	// Slot 0 now holds the prompt with short keys (one new token, not fed).
	got, ev = run(short, want.MaxNewTokens)
	if ev.CachedTokens != len(short)-1 || !cmp.Equal(got, want.Tokens[1]) {
		t.Errorf("over short-factor keys: %d cached tokens (want %d), tokens %v (oracle %v)", ev.CachedTokens, len(short)-1, got, want.Tokens[1])
	}
	// Two choices of one request: the prompt prefilled in one slot and
	// copied into the other with its keys' tables, so the copy's decode
	// past 80 recomputes its keys with the long factors too.
	g := engine.NewGroup(2)
	var chs []<-chan engine.Event
	for range 2 {
		ch, err := e.Submit(ctx, engine.Request{Prompt: short, MaxTokens: want.MaxNewTokens, Group: g})
		if err != nil {
			t.Fatal(err)
		}
		chs = append(chs, ch)
	}
	for i, ch := range chs {
		var toks []int32
		for ev := range ch {
			if ev.Done {
				break
			}
			toks = append(toks, ev.Token)
		}
		if !cmp.Equal(toks, want.Tokens[1]) {
			t.Errorf("choice %d of a group: %v, oracle %v", i, toks, want.Tokens[1])
		}
	}
	if n := e.Stats().SharedPrefills; n != 1 {
		t.Errorf("%d slots got the group's prompt by a copy, want 1", n)
	}
}
