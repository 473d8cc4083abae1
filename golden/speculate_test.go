package golden

// Speculative decoding (rt/speculate.go) on one fixture of each kind of
// state: greedy output with speculation equals the HF oracle's, token for
// token, whatever the drafter proposes: drafts wholly right, right then
// wrong, wrong from the first token, longer than what is left, and prompt
// lookup's own. A wrong draft exercises the rollback: KV rows past the
// accepted point left behind, a recurrent state re-run from its snapshot.

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/engine"
)

// specFixtures are one fixture per kind of state a verify step must roll
// back: dense attention, routed experts, multi-head latent attention, a
// sliding window (8 tokens: drafts cross it), DeltaNet beside attention
// (conv windows and recurrent state), Mamba (recurrent state only).
var specFixtures = []string{"llama-tied", "qwen3_moe", "deepseek_v2", "mistral-sliding", "qwen3_next", "mamba"}

// specEngineFixtures also run through the engine with speculation on
// (checkSpecEngine). Every spec fixture runs TestExecution's module
// (execOptions gives these fixtures the verify bucket), so speculation
// compiles nothing of its own.
var specEngineFixtures = []string{"llama-tied", "qwen3_next"}

// specVerify is the verify bucket execOptions gives specFixtures: 8 drafted tokens
// at most (6 for a fixed-state model, whose drafts are even and whose
// oracle run is 16 tokens).
const specVerify = 9

// scriptedDrafter proposes the oracle's own continuation of whichever of
// its sequences the asked one follows, spoiled by a rule that changes
// with each step: wholly right, right for half then wrong, wrong from the
// first token. Wrong tokens are the right one + 1.
type scriptedDrafter struct {
	want  [][]int32 // prompt then the oracle's tokens, per prompt
	vocab int32
	step  int
}

func (d *scriptedDrafter) Name() string { return "scripted" }

func (d *scriptedDrafter) Draft(_ context.Context, _ int, seq []int32, max int) []int32 {
	var want []int32
	for _, w := range d.want {
		if len(w) >= len(seq) && slices.Equal(seq, w[:len(seq)]) {
			want = w
		}
	}
	if want == nil {
		return nil // off the oracle's path: the test fails on the tokens
	}
	out := make([]int32, max)
	for i := range out {
		at := len(seq) + i
		if at < len(want) {
			out[i] = want[at]
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
	t.Parallel() // compileHeavy
	for _, name := range specFixtures {
		dir := filepath.Join("testdata", name)
		if *onlyFixture != "" && *onlyFixture != name {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want := readOracle(t, dir)
			engineToo := slices.Contains(specEngineFixtures, name)
			m, err := launch.Open(context.Background(), dir, execOptions(t, dir)) // TestExecution's module, with the verify bucket
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			var full [][]int32
			for i, p := range want.Prompts {
				full = append(full, append(slices.Clone(p), want.Tokens[i]...))
			}
			for i, prompt := range want.Prompts {
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
			if engineToo {
				t.Run("engine", func(t *testing.T) { checkSpecEngine(t, m, want, full) })
			}
		})
	}
}

// checkSpecEngine: through the continuous-batching engine with
// speculation on, speculating and plain requests side by side (every
// prompt twice, once with NoSpeculation, more requests than slots) each
// give the oracle's tokens; a speculating request cancelled after its
// first tokens leaves its slot clean (the prompts run again after it still
// give the oracle's tokens); a sampled request speculates too.
func checkSpecEngine(t *testing.T, m *rt.Model, want oracle, full [][]int32) {
	ctx, e := startEngine(t, m, engine.Options{Speculative: &rt.Speculation{Drafter: &scriptedDrafter{want: full, vocab: int32(m.Vocab)}}})
	var reqs []engine.Request
	for _, p := range want.Prompts {
		for _, off := range []bool{false, true} {
			reqs = append(reqs, engine.Request{Prompt: p, MaxTokens: want.MaxNewTokens, NoSpeculation: off})
		}
	}
	oracleCheck := func(stage string) {
		for i, got := range submitAll(t, ctx, e, reqs) {
			if diff := cmp.Diff(want.Tokens[i/2], got); diff != "" {
				t.Errorf("%s: prompt %d (speculation off: %v) through the engine (-oracle +engine):\n%s", stage, i/2, reqs[i].NoSpeculation, diff)
			}
		}
	}
	before := e.Stats().Spec
	oracleCheck("side by side")
	if st := e.Stats().Spec; st.Drafts == before.Drafts || st.Accepted == before.Accepted {
		t.Errorf("the engine did not speculate: %+v", st)
	}
	// A speculating request cancelled after its first tokens.
	cctx, stop := context.WithCancel(ctx)
	ch, err := e.Submit(cctx, engine.Request{Prompt: want.Prompts[2], MaxTokens: want.MaxNewTokens})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ev := range ch {
		if n++; n == 3 {
			stop()
		}
		if ev.Done {
			break
		}
	}
	stop()
	oracleCheck("after a cancel")
	// A sampled request speculates and ends normally.
	sampled := engine.Request{Prompt: want.Prompts[1], MaxTokens: want.MaxNewTokens, Sampling: rt.SamplingOptions{Temperature: 0.8, TopP: 0.9, Seed: 3}}
	if got := submitAll(t, ctx, e, []engine.Request{sampled})[0]; len(got) == 0 || len(got) > want.MaxNewTokens {
		t.Errorf("sampled: %d tokens, want 1 to %d", len(got), want.MaxNewTokens)
	}
}

// TestSpeculativeSamplingDistribution: sampled output with speculation
// keeps the target distribution. On one fixture, a prompt's first three
// tokens are drawn plainly and with speculation under as many seeds each
// (temperature 0.7, top-k 3: few outcomes, and drafts of the greedy
// continuation, accepted often); a chi-square two-sample test over the
// outcomes (rare ones pooled) must not reject equality at the 0.1% level.
func TestSpeculativeSamplingDistribution(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	t.Parallel() // compileHeavy
	dir := filepath.Join("testdata", "llama-tied")
	want := readOracle(t, dir)
	m, err := launch.Open(context.Background(), dir, execOptions(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	prompt := want.Prompts[1]
	greedy := append(slices.Clone(prompt), want.Tokens[1]...)
	const runs, steps = 400, 4
	draws := func(spec *rt.Speculation) (map[string]int, rt.SpecStats) {
		counts := map[string]int{}
		var st rt.SpecStats
		for seed := range uint64(runs) {
			g, err := m.Generate(context.Background(), prompt, rt.GenerateOptions{
				MaxTokens: steps, Speculative: spec,
				Sampling: rt.SamplingOptions{Temperature: 0.7, TopK: 3, Seed: seed},
			})
			if err != nil {
				t.Fatal(err)
			}
			counts[fmt.Sprint(g.Tokens)]++
			st.Add(g.Spec)
		}
		return counts, st
	}
	plain, _ := draws(nil)
	spec, st := draws(&rt.Speculation{Drafter: greedyDrafter(greedy)})
	if st.Accepted < runs/4 {
		t.Fatalf("too few drafts accepted for the test to say much: %+v", st)
	}
	stat, df := chiSquare2(plain, spec, 10)
	if crit := chiSquareCritical(df); stat > crit {
		t.Errorf("sampled outcomes differ with speculation: chi-square %.1f > %.1f (df %d, p < 0.001)\nplain: %v\nspeculative: %v", stat, crit, df, plain, spec)
	}
	t.Logf("chi-square %.1f, df %d (critical %.1f); speculation %+v", stat, df, chiSquareCritical(df), st)
}

// greedyDrafter drafts, after any sequence, the greedy continuation's
// tokens at the same positions: right where the sampled sequence followed
// it, and a valid draft (any draft is) where not.
type greedyDrafter []int32

func (greedyDrafter) Name() string { return "greedy-path" }

func (g greedyDrafter) Draft(_ context.Context, _ int, seq []int32, max int) []int32 {
	if len(seq) >= len(g) {
		return nil
	}
	return slices.Clone(g[len(seq):min(len(g), len(seq)+max)])
}

// chiSquare2 is the two-sample chi-square statistic of equal-size samples
// a and b over their outcomes, outcomes seen fewer than pool times in all
// pooled into one, and its degrees of freedom.
func chiSquare2(a, b map[string]int, pool int) (float64, int) {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var stat float64
	cells := 0
	var ra, rb int
	add := func(x, y int) {
		if x+y > 0 {
			d := float64(x - y)
			stat += d * d / float64(x+y)
			cells++
		}
	}
	for k := range keys {
		if a[k]+b[k] < pool {
			ra, rb = ra+a[k], rb+b[k]
			continue
		}
		add(a[k], b[k])
	}
	add(ra, rb)
	return stat, max(cells-1, 1)
}

// chiSquareCritical is the chi-square distribution's 99.9th percentile for
// df degrees of freedom (Wilson–Hilferty's approximation, z = 3.09).
func chiSquareCritical(df int) float64 {
	k := float64(df)
	c := 1 - 2/(9*k) + 3.09*math.Sqrt(2/(9*k))
	return k * c * c * c
}

// TestSpeculativeDraftModel: a draft model (rt.ModelDrafter) keeps greedy
// output equal to the oracle's: the target itself as its own draft (every
// draft right but for chunk-versus-step rounding), and a Mamba fixture of
// the same vocabulary (drafts mostly wrong; a recurrent draft model's
// state is recomputed where its sequence was cut back).
func TestSpeculativeDraftModel(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	t.Parallel() // compileHeavy
	ctx := context.Background()
	dir := filepath.Join("testdata", "llama-tied")
	want := readOracle(t, dir)
	m, err := launch.Open(ctx, dir, execOptions(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, draftDir := range []string{dir, filepath.Join("testdata", "mamba")} {
		t.Run(filepath.Base(draftDir), func(t *testing.T) {
			dm, err := launch.Open(ctx, draftDir, execOptions(t, draftDir)) // TestExecution's module: two slots, as the target

			if err != nil {
				t.Fatal(err)
			}
			defer dm.Close()
			d, err := rt.NewModelDrafter(dm, m)
			if err != nil {
				t.Fatal(err)
			}
			var st rt.SpecStats
			for i, prompt := range want.Prompts {
				g, err := m.Generate(ctx, prompt, rt.GenerateOptions{MaxTokens: want.MaxNewTokens, Speculative: &rt.Speculation{Drafter: d}})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want.Tokens[i], g.Tokens); diff != "" {
					t.Errorf("prompt %d: tokens differ from the HF oracle (-oracle +speculative):\n%s", i, diff)
				}
				st.Add(g.Spec)
			}
			if st.Drafts == 0 {
				t.Errorf("no drafts: %+v", st)
			}
			if draftDir == dir && st.Accepted < st.Drafted*9/10 {
				t.Errorf("the target as its own draft model: %d of %d drafted tokens accepted, want nearly all", st.Accepted, st.Drafted)
			}
			t.Logf("%+v", st)
		})
	}
}
