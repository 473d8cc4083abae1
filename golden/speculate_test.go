package golden

// Speculative decoding (rt/speculate.go) on one fixture of each kind of
// state: greedy output with speculation equals the HF oracle's, token for
// token, whatever the drafter proposes: drafts wholly right, right then
// wrong, wrong from the first token, longer than what is left, and prompt
// lookup's own. A wrong draft exercises the rollback: KV rows past the
// accepted point left behind, a recurrent state re-run from its snapshot.

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/rt"
)

// specFixtures are one fixture per kind of state a verify step must roll
// back: dense attention, routed experts, multi-head latent attention, a
// sliding window (8 tokens: drafts cross it), DeltaNet beside attention
// (conv windows and recurrent state), Mamba (recurrent state only).
var specFixtures = []string{"llama-tied", "qwen3_moe", "deepseek_v2", "mistral-sliding", "qwen3_next", "mamba"}

// specVerify is the verify bucket the tests compile: 8 drafted tokens
// at most (6 for a fixed-state model, whose drafts are even and whose
// oracle run is 16 tokens).
const specVerify = 9

// scriptedDrafter proposes the oracle's own continuation, spoiled by a
// rule that changes with each step: wholly right, right for half then
// wrong, wrong from the first token. Wrong tokens are the right one + 1.
type scriptedDrafter struct {
	want  []int32 // prompt then the oracle's tokens
	vocab int32
	step  int
}

func (d *scriptedDrafter) Name() string { return "scripted" }

func (d *scriptedDrafter) Draft(_ context.Context, seq []int32, max int) []int32 {
	if !slices.Equal(seq, d.want[:min(len(seq), len(d.want))]) {
		return nil // off the oracle's path: the test fails on the tokens
	}
	out := make([]int32, max)
	for i := range out {
		at := len(seq) + i
		if at < len(d.want) {
			out[i] = d.want[at]
		} else {
			out[i] = int32(i) % d.vocab // past the oracle's run
		}
	}
	wrong := map[int]int{0: max, 1: max / 2, 2: 0}[d.step%3]
	for i := wrong; i < max; i++ {
		out[i] = (out[i] + 1) % d.vocab
	}
	d.step++
	return out
}

func TestSpeculativeGreedyEqualsOracle(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	for _, name := range specFixtures {
		dir := filepath.Join("testdata", name)
		if *onlyFixture != "" && *onlyFixture != name {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := readOracle(t, dir)
			o := oracleOptions()
			o.Plan.Lower.VerifyBuckets = []int64{specVerify}
			m, err := launch.Open(context.Background(), dir, o)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for i, prompt := range want.Prompts {
				full := append(slices.Clone(prompt), want.Tokens[i]...)
				for _, tc := range []struct {
					name string
					d    rt.Drafter
					max  int
				}{
					{"scripted", &scriptedDrafter{want: full, vocab: int32(m.Vocab)}, 0},
					{"scripted_short", &scriptedDrafter{want: full, vocab: int32(m.Vocab)}, 2},
					{"ngram", rt.PromptLookup{}, 0},
				} {
					g, err := m.Generate(context.Background(), prompt, rt.GenerateOptions{
						MaxTokens: want.MaxNewTokens, Speculative: &rt.Speculation{Drafter: tc.d, DraftMax: tc.max},
					})
					if err != nil {
						t.Fatalf("prompt %d, %s drafts: %v", i, tc.name, err)
					}
					if diff := cmp.Diff(want.Tokens[i], g.Tokens); diff != "" {
						t.Errorf("prompt %d, %s drafts: tokens differ from the HF oracle (-oracle +speculative):\n%s", i, tc.name, diff)
					}
					if tc.name == "scripted" && (g.Spec.Drafts == 0 || g.Spec.Accepted == 0 || g.Spec.Accepted == g.Spec.Drafted) {
						t.Errorf("prompt %d: scripted drafts should be partly accepted; got %+v", i, g.Spec)
					}
				}
			}
		})
	}
}
