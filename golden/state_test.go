package golden

// The slot contract (package lower's doc) on the fixtures whose graphs
// carry position-independent state (a conv window, a recurrent SSM state:
// lower.HasFixedState), through the runtime and the engine: a sequence at
// position 0 in a slot another sequence used starts from zero state; a
// padded decode row (what the engine sends) leaves its slot's state as it
// was; a call continuing at a position whose state the slot does not hold
// is refused; a cancelled request leaves nothing for the next; a slot's
// state copied into another continues there exactly; prefix reuse takes
// a slot's state only where it is held (a second chat turn) and
// recomputes a prompt that diverges earlier.

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/formats/abi"
	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/lower"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/engine"
)

// stateFixtures are the fixtures whose graph has a window or recurrent
// state and whose execution module is two-slot (batchedFixture: a cover of
// every state-reading primitive variant and fixed row kind, or every one
// under -batched-all or -fixture).
func stateFixtures(t *testing.T) []string {
	var out []string
	for _, dir := range fixtures(t) {
		p, err := driver.NewGraph(dir, driver.PlanOptions{})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if lower.HasFixedState(p.Graph) && batchedFixture(t, dir) {
			out = append(out, dir)
		}
	}
	if len(out) == 0 && *onlyFixture != "" {
		t.Skipf("-fixture %s has no window or recurrent state", *onlyFixture)
	}
	if len(out) == 0 {
		t.Fatal("no fixture with a window or recurrent state")
	}
	return out
}

func TestSlotContract(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	t.Parallel() // compileHeavy
	for _, dir := range stateFixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			want := readOracle(t, dir)
			m, err := launch.Open(context.Background(), dir, execOptions(t, dir))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if !m.Program.FixedState() {
				t.Fatal("the program does not say it holds fixed state (rt.Program.FixedState())")
			}
			t.Run("zero_start_in_used_slot", func(t *testing.T) { checkZeroStart(t, m, want) })
			t.Run("padded_row_keeps_state", func(t *testing.T) { checkPaddedRow(t, m, want) })
			t.Run("unheld_position_refused", func(t *testing.T) {
				if _, err := m.PrefillSlot(context.Background(), 0, want.Prompts[0], 3); err == nil || !strings.Contains(err.Error(), "not 3") {
					t.Errorf("continuing slot 0 at position 3, whose state it does not hold: %v, want an error", err)
				}
			})
			t.Run("engine_reuse_and_cancel", func(t *testing.T) { checkStateEngine(t, m, want) })
			t.Run("copied_state", func(t *testing.T) { checkCopy(t, m, want) })
		})
	}
}

// greedyFrom decodes n greedy tokens in slot after logits l of a sequence
// of length at; returns the tokens (the first from l).
func greedyFrom(t *testing.T, m *rt.Model, slot int, l []float32, at, n int) []int32 {
	t.Helper()
	var out []int32
	tok := rt.Argmax(l)
	for len(out) < n {
		out = append(out, tok)
		if len(out) == n {
			break
		}
		rows, err := m.DecodeBatch(context.Background(), []int32{tok}, []int{at}, []int{slot})
		if err != nil {
			t.Fatal(err)
		}
		tok, at = rt.Argmax(rows[0]), at+1
	}
	return out
}

// checkZeroStart: each slot is first used by one prompt to the end, then
// another prompt at position 0 in it gives the oracle's tokens.
func checkZeroStart(t *testing.T, m *rt.Model, want oracle) {
	ctx := context.Background()
	for slot := 0; slot < 2; slot++ {
		for _, i := range []int{1, 2, 0} {
			l, err := m.PrefillSlot(ctx, slot, want.Prompts[i], 0)
			if err != nil {
				t.Fatal(err)
			}
			got := greedyFrom(t, m, slot, l, len(want.Prompts[i]), want.MaxNewTokens)
			if diff := cmp.Diff(want.Tokens[i], got); diff != "" {
				t.Errorf("slot %d, prompt %d after another sequence used the slot (-oracle +got):\n%s", slot, i, diff)
			}
		}
	}
}

// checkCopy: a prompt prefilled in slot 0 and copied into slot 1, which
// held another sequence (rt.Model.CopySlot: the KV cache, windows and
// recurrent states, as a request's n > 1 choices share a prefill), gives
// the oracle's tokens decoded in slot 1, and then in slot 0.
func checkCopy(t *testing.T, m *rt.Model, want oracle) {
	ctx := context.Background()
	for i, p := range want.Prompts {
		if _, err := m.PrefillSlot(ctx, 1, want.Prompts[(i+1)%len(want.Prompts)], 0); err != nil {
			t.Fatal(err)
		}
		l, err := m.PrefillSlot(ctx, 0, p, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.CopySlot(ctx, 0, []int{1}, len(p)); err != nil {
			t.Fatal(err)
		}
		for _, slot := range []int{1, 0} {
			got := greedyFrom(t, m, slot, l, len(p), want.MaxNewTokens)
			if diff := cmp.Diff(want.Tokens[i], got); diff != "" {
				t.Errorf("prompt %d copied from slot 0 into slot 1, decoded in slot %d (-oracle +got):\n%s", i, slot, diff)
			}
		}
	}
}

// checkPaddedRow: slot 0 decodes part of prompt 1's answer; then slot 1
// runs prompt 2 in decode batches of 2 whose other row is a padded row for
// slot 0 (token 0 at the first position slot 0 does not hold, as the
// engine pads); then slot 0 finishes its answer, equal to the oracle's.
func checkPaddedRow(t *testing.T, m *rt.Model, want oracle) {
	ctx := context.Background()
	p0, p1 := want.Prompts[1], want.Prompts[2]
	l, err := m.PrefillSlot(ctx, 0, p0, 0)
	if err != nil {
		t.Fatal(err)
	}
	half := want.MaxNewTokens / 2
	got0 := greedyFrom(t, m, 0, l, len(p0), half)
	held := len(p0) + half - 1 // slot 0 holds the prompt and all but its latest token
	l, err = m.PrefillSlot(ctx, 1, p1, 0)
	if err != nil {
		t.Fatal(err)
	}
	tok, at := rt.Argmax(l), len(p1)
	var got1 []int32
	for len(got1) < want.MaxNewTokens {
		got1 = append(got1, tok)
		rows, err := m.DecodeBatch(ctx, []int32{tok, 0}, []int{at, held}, []int{1, 0})
		if err != nil {
			t.Fatal(err)
		}
		tok, at = rt.Argmax(rows[0]), at+1
	}
	if diff := cmp.Diff(want.Tokens[2], got1); diff != "" {
		t.Errorf("prompt 2 beside padded rows (-oracle +got):\n%s", diff)
	}
	rows, err := m.DecodeBatch(ctx, []int32{got0[half-1]}, []int{held}, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	got0 = append(got0, greedyFrom(t, m, 0, rows[0], held+1, want.MaxNewTokens-half)...)
	if diff := cmp.Diff(want.Tokens[1], got0); diff != "" {
		t.Errorf("prompt 1 after %d padded rows in its slot (-oracle +got):\n%s", want.MaxNewTokens, diff)
	}
}

// checkStateEngine: through the engine, a request cancelled after its
// first token leaves nothing for the next request; a second turn that
// extends a finished turn's tokens reuses the slot's state (CachedTokens)
// and continues exactly; a prompt that diverges inside a slot's tokens is
// recomputed (no cached tokens) and gives the tokens it gives alone.
func checkStateEngine(t *testing.T, m *rt.Model, want oracle) {
	ctx := context.Background()
	P, T := want.Prompts[2], want.Tokens[2]
	k := want.MaxNewTokens / 2
	turn2 := append(append([]int32{}, P...), T[:k]...)
	diverge := append(append([]int32{}, P[:len(P)/2]...), T[0], T[1])
	ref, err := m.Generate(ctx, diverge, rt.GenerateOptions{MaxTokens: k})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(m, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ectx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { e.Run(ectx); close(done) }()
	defer func() { cancel(); <-done }()
	run := func(rctx context.Context, prompt []int32, n int, stopAfter int, stop func()) ([]int32, engine.Event) {
		ch, err := e.Submit(rctx, engine.Request{Prompt: prompt, MaxTokens: n})
		if err != nil {
			t.Fatal(err)
		}
		var got []int32
		for ev := range ch {
			if ev.Done {
				return got, ev
			}
			got = append(got, ev.Token)
			if len(got) == stopAfter {
				stop()
			}
		}
		t.Fatal("event stream ended without a last event")
		return nil, engine.Event{}
	}
	for i := range 2 { // cancel in each slot once
		rctx, rcancel := context.WithCancel(ctx)
		_, ev := run(rctx, want.Prompts[i], want.MaxNewTokens, 1, rcancel)
		rcancel()
		if ev.FinishReason != engine.FinishCancelled && ev.FinishReason != engine.FinishLength {
			t.Errorf("cancelled request finished with %q (%v)", ev.FinishReason, ev.Err)
		}
	}
	for _, i := range []int{1, 0} {
		got, ev := run(ctx, want.Prompts[i], want.MaxNewTokens, -1, nil)
		if diff := cmp.Diff(want.Tokens[i], got); diff != "" {
			t.Errorf("prompt %d after cancelled requests (-oracle +engine):\n%s", i, diff)
		}
		if ev.CachedTokens != 0 {
			t.Errorf("prompt %d reused %d tokens of another sequence's state", i, ev.CachedTokens)
		}
	}
	got, ev := run(ctx, P, k, -1, nil)
	if diff := cmp.Diff(T[:k], got); diff != "" {
		t.Errorf("first turn (-oracle +engine):\n%s", diff)
	}
	got, ev = run(ctx, turn2, want.MaxNewTokens-k, -1, nil)
	if diff := cmp.Diff(T[k:], got); diff != "" {
		t.Errorf("second turn (-oracle +engine):\n%s", diff)
	}
	if wantCached := len(P) + k - 1; ev.CachedTokens != wantCached {
		t.Errorf("second turn reused %d tokens, want %d (the first turn's state)", ev.CachedTokens, wantCached)
	}
	got, ev = run(ctx, diverge, k, -1, nil)
	if diff := cmp.Diff(ref.Tokens, got); diff != "" {
		t.Errorf("a prompt diverging inside the slot's tokens (-alone +engine):\n%s", diff)
	}
	if ev.CachedTokens != 0 {
		t.Errorf("a prompt diverging at position %d reused %d tokens: a state is held only where the slot's tokens end", len(P)/2, ev.CachedTokens)
	}
}

// snapshotFixture is the hybrid fixture TestStateSnapshots runs: gated
// DeltaNet layers (a conv window and a recurrent state) beside full
// attention, as Qwen3.5 is.
const snapshotFixture = "qwen3_5"

// TestStateSnapshots: a module with saved state buffers
// (lower.Options.StateSnapshots, `infer serve --state-snapshots`) keeps the
// recurrent state after a prompt's end. A chat's next turn that shares
// only that prompt (its template re-renders the answer: the first token
// after it differs) reuses the whole prompt from the saved buffer although
// the parity buffers have moved on with the answer, and its logits and
// greedy tokens equal those of the same sequence prefilled from position
// 0; the oracle's tokens for the prompt hold through it.
func TestStateSnapshots(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	t.Parallel() // compileHeavy
	dir := filepath.Join("testdata", snapshotFixture)
	want := readOracle(t, dir)
	o := oracleOptions()
	o.Plan.Lower.StateSnapshots = 2
	m, err := launch.Open(context.Background(), dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !slices.ContainsFunc(m.Program.States, func(g abi.StateGroup) bool { return g.Kind.Fixed() && g.Saved == 2 }) {
		t.Fatalf("%s: the state table has no fixed row with 2 saved buffers:\n%s", snapshotFixture, m.Program.States.Format())
	}
	ctx := context.Background()
	a := want.Prompts[0]
	l, err := m.PrefillSlot(ctx, 0, a, 0)
	if err != nil {
		t.Fatal(err)
	}
	answer := greedyFrom(t, m, 0, l, len(a), want.MaxNewTokens)
	if diff := cmp.Diff(want.Tokens[0], answer); diff != "" {
		t.Fatalf("turn 1 with saved buffers (-oracle +got):\n%s", diff)
	}
	// Turn 2: the prompt, then a re-rendered answer (not the generated
	// first token) and more.
	b := append(slices.Clone(a), (answer[0]+1)%int32(m.Vocab), 3, 5, 7, 11)
	if got := m.ReusablePrefix(0, len(a), len(b)); got != len(a) {
		t.Fatalf("the slot serves %d of turn 2's %d shared tokens, want all (the saved state of the prompt's end)", got, len(a))
	}
	lb, err := m.PrefillSlot(ctx, 0, b[len(a):], len(a))
	if err != nil {
		t.Fatal(err)
	}
	got := greedyFrom(t, m, 0, lb, len(b), want.MaxNewTokens)
	ref, err := m.PrefillSlot(ctx, 0, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff32(lb, ref); d > 1e-4 {
		t.Errorf("turn 2 continued from the saved state: logits %g from those of its prefill from position 0", d)
	}
	if diff := cmp.Diff(greedyFrom(t, m, 0, ref, len(b), want.MaxNewTokens), got); diff != "" {
		t.Errorf("turn 2 from the saved state (-from position 0 +from the saved state):\n%s", diff)
	}
}
