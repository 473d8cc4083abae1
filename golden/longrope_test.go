package golden

import (
	"context"
	"testing"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/rt"
)

// TestLongRoPEStaleCache: a slot's cached keys computed with LongRoPE's
// long factors (a sequence that grew past original_max_position_embeddings)
// are recomputed with the short ones before a shorter sequence reuses them
// as its prefix, and the other way round; each continuation's logits equal
// the oracle's for that prompt run afresh (HF runs every prompt in one
// call with the factors of its own length).
func TestLongRoPEStaleCache(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	t.Parallel() // compileHeavy
	dir := "testdata/phi3-longrope-cross"
	want := readOracle(t, dir)
	ctx := context.Background()
	m, err := launch.Open(ctx, dir, execOptions(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	short, long := want.Prompts[1], want.Prompts[2] // 70 and 90 tokens; original_max 80
	// Long-factor keys in slot 0: the 70-token prompt plus 15 generated
	// tokens (its decode crossed 80).
	if _, err := m.Generate(ctx, short, rt.GenerateOptions{MaxTokens: want.MaxNewTokens}); err != nil {
		t.Fatal(err)
	}
	// Reuse positions 0..68 for the same 70-token prompt: they must be
	// short-factor keys again.
	l, err := m.PrefillSlot(ctx, 0, short[len(short)-1:], len(short)-1)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(want.FirstLogits[1], l); d > logitsTolerance {
		t.Errorf("70-token prompt over a cache its 85-token run left: logits differ from the oracle by %g", d)
	}
	// Short-factor keys for 0..69 now; a 90-token prompt that shares
	// nothing but is written over them from position 70 on needs long
	// keys everywhere: prefill its first 70 tokens as a short prompt,
	// then continue.
	if _, err := m.PrefillSlot(ctx, 0, long[:70], 0); err != nil {
		t.Fatal(err)
	}
	if l, err = m.PrefillSlot(ctx, 0, long[70:], 70); err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(want.FirstLogits[2], l); d > logitsTolerance {
		t.Errorf("90-token prompt continued over its own short-factor prefix: logits differ from the oracle by %g", d)
	}
}
