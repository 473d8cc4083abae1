// Tests of the two validation tiers on the fixtures in testdata/ (written by
// gen_fixtures.py): the structural tier (emitted MLIR is byte-exact against
// testdata/<fixture>/emit.mlir; refresh with go test ./golden -update) and
// the oracle tier (greedy tokens equal the HF fp32 oracle exactly; first-step
// logits within 1e-4 max abs).
package golden

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/internal/golden"
	"github.com/archc/archc/rt"

	"github.com/archc/archc/internal/testmodels"
)

// oracle is oracle.json as written by gen_fixtures.py.
type oracle struct {
	Prompts      [][]int32   `json:"prompts"`
	MaxNewTokens int         `json:"max_new_tokens"`
	Tokens       [][]int32   `json:"tokens"`
	FirstLogits  [][]float64 `json:"first_logits"`
}

// execOptions is the configuration the execution tests compile: two
// KV-cache slots and decode entry points for batches of 1 and 2 (the
// serving shape), so one compiled module per fixture serves every test.
func execOptions() rt.Options {
	var o rt.Options
	o.Plan.Lower.Slots = 2
	o.Plan.Lower.DecodeBatches = []int64{1, 2}
	return o
}

// TestBatchedDecodeMatchesSingle is the serve tier: two sequences of
// different lengths prefilled into their own cache slots and then decoded
// together, one batched call per step with ragged positions (and the batch
// order opposite to the slot order), produce exactly the oracle's
// single-sequence tokens.
func TestBatchedDecodeMatchesSingle(t *testing.T) {
	needIREE(t)
	for _, dir := range fixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want := readOracle(t, dir)
			ctx := context.Background()
			m, err := rt.Open(ctx, dir, execOptions())
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			seqs := []int{2, 1}  // oracle prompts, in batch order
			slots := []int{1, 0} // the cache slot of each: batch order differs from slot order
			var toks []int32
			var pos []int
			got := make([][]int32, len(seqs))
			for b, i := range seqs {
				l, err := m.PrefillSlot(ctx, slots[b], want.Prompts[i], 0)
				if err != nil {
					t.Fatal(err)
				}
				toks = append(toks, rt.Argmax(l))
				pos = append(pos, len(want.Prompts[i]))
			}
			for step := 0; step < want.MaxNewTokens; step++ {
				for b := range seqs {
					got[b] = append(got[b], toks[b])
				}
				if step == want.MaxNewTokens-1 {
					break
				}
				rows, err := m.DecodeBatch(ctx, toks, pos, slots)
				if err != nil {
					t.Fatal(err)
				}
				for b := range seqs {
					toks[b], pos[b] = rt.Argmax(rows[b]), pos[b]+1
				}
			}
			for b, i := range seqs {
				if diff := cmp.Diff(want.Tokens[i], got[b]); diff != "" {
					t.Errorf("prompt %d in a batch of 2 (slot %d): tokens differ from single-sequence (-oracle +batched):\n%s", i, slots[b], diff)
				}
			}
		})
	}
}

// readOracle reads a fixture's oracle.json; a fixture without one fails.
func readOracle(t *testing.T, dir string) oracle {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "oracle.json"))
	if err != nil {
		t.Fatalf("fixture without oracle: %v", err)
	}
	var o oracle
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatalf("%s/oracle.json: %v", dir, err)
	}
	return o
}

// logitsTolerance is the max abs difference allowed against the oracle's
// first-step logits (DESIGN §7).
const logitsTolerance = 1e-4

func fixtures(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob("testdata/*/config.json")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no fixtures under testdata/ (%v)", err)
	}
	for i, d := range dirs {
		dirs[i] = filepath.Dir(d)
	}
	return dirs
}

func TestEmitGolden(t *testing.T) {
	for _, dir := range fixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			p, err := rt.NewPlan(dir, rt.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			again, err := rt.NewPlan(dir, rt.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(p.MLIR, again.MLIR) {
				t.Fatal("emitting the same model twice gave different bytes")
			}
			golden.Check(t, filepath.Join(dir, "emit.mlir"), p.MLIR)
		})
	}
}

// TestEveryFamilyHasFixture fails for a built-in family that no fixture
// exercises: a new family costs a fixture entry in gen_fixtures.py, no code.
func TestEveryFamilyHasFixture(t *testing.T) {
	fams, err := rt.BuiltinFamilies()
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string][]string{}
	for _, dir := range fixtures(t) {
		p, err := rt.NewPlan(dir, rt.PlanOptions{})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		covered[p.Family.Name] = append(covered[p.Family.Name], filepath.Base(dir))
	}
	for _, f := range fams {
		if len(covered[f.Name]) == 0 {
			t.Errorf("family %s (%s) has no fixture under testdata/: add one to gen_fixtures.py", f.Name, f.Path)
		} else {
			t.Logf("%-8s %v", f.Name, covered[f.Name])
		}
	}
}

// needIREE skips when the IREE venv is missing outside CI; in CI it fails.
func needIREE(t *testing.T) { testmodels.NeedIREE(t) }

func TestOracle(t *testing.T) {
	needIREE(t)
	for _, dir := range fixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want := readOracle(t, dir)
			ctx := context.Background()
			m, err := rt.Open(ctx, dir, execOptions())
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			for i, prompt := range want.Prompts {
				g, err := m.Generate(ctx, prompt, rt.GenerateOptions{MaxTokens: want.MaxNewTokens})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want.Tokens[i], g.Tokens); diff != "" {
					t.Errorf("prompt %d: tokens differ from the HF oracle (-oracle +archc):\n%s", i, diff)
				}
				if d := maxAbsDiff(want.FirstLogits[i], g.FirstLogits); d > logitsTolerance {
					t.Errorf("prompt %d: first-step logits differ from the oracle by %g (max abs), tolerance %g", i, d, logitsTolerance)
				}
			}
		})
	}
}

// TestEOS checks that generation stops right after an EOS token (which is
// kept, as HF generate keeps it).
func TestEOS(t *testing.T) {
	needIREE(t)
	dir := fixtures(t)[0]
	want := readOracle(t, dir)
	ctx := context.Background()
	m, err := rt.Open(ctx, dir, execOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.EOS = []int32{want.Tokens[0][2]}
	g, err := m.Generate(ctx, want.Prompts[0], rt.GenerateOptions{MaxTokens: want.MaxNewTokens})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Tokens[0][:3], g.Tokens); diff != "" {
		t.Errorf("with EOS = the third oracle token, tokens (-want +got):\n%s", diff)
	}
}

// TestPrefillMatchesDecode checks that a prompt run as prefill (in two
// chunks, the second starting mid-cache) gives the same next-token logits as
// the same prompt fed token by token via decode.
func TestPrefillMatchesDecode(t *testing.T) {
	needIREE(t)
	for _, dir := range fixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ctx := context.Background()
			m, err := rt.Open(ctx, dir, execOptions())
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			prompt := []int32{1, 17, 42, 99, 3, 250, 7, 64, 128, 5, 6, 200, 31, 77, 8, 19, 23, 40, 41}
			if _, err := m.Prefill(ctx, prompt[:11], 0); err != nil {
				t.Fatal(err)
			}
			viaPrefill, err := m.Prefill(ctx, prompt[11:], 11)
			if err != nil {
				t.Fatal(err)
			}
			var viaDecode []float32
			for pos, tok := range prompt {
				if viaDecode, err = m.Decode(ctx, tok, pos); err != nil {
					t.Fatal(err)
				}
			}
			if d := maxAbsDiff32(viaPrefill, viaDecode); d > 1e-5 {
				t.Errorf("prefill and token-by-token decode logits differ by %g (max abs)", d)
			}
		})
	}
}

func maxAbsDiff(want []float64, got []float32) float64 {
	if len(want) != len(got) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range want {
		d = math.Max(d, math.Abs(want[i]-float64(got[i])))
	}
	return d
}

func maxAbsDiff32(a, b []float32) float64 {
	w := make([]float64, len(a))
	for i, v := range a {
		w[i] = float64(v)
	}
	return maxAbsDiff(w, b)
}
