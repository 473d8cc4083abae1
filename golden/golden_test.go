// Tests of the two validation tiers on the fixtures in testdata/ (written by
// gen_fixtures.py): the structural tier (the emitted module's summary —
// digest of its bytes with the line:column of its locations removed,
// globals, and per entry point the op counts by op and by .arch binding,
// golden.Summarize — equals testdata/<fixture>/emit.summary; refresh with
// go test ./golden -update; the per-primitive goldens of lower/testdata and
// the located goldens of located_test.go hold the MLIR itself) and the oracle tier
// (greedy tokens equal the HF fp32 oracle exactly; first-step logits within
// 1e-4 max abs).
//
// -run matches subtest names as regular expressions, so -run
// TestExecution/glm4 also runs glm4_moe: anchor it (-run
// 'TestExecution/^glm4$') or name the fixture exactly with -fixture glm4.
package golden

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/driver/kernels"
	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/internal/golden"
	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/engine"

	"github.com/archc/archc/internal/testmodels"
)

// oracle is oracle.json as written by gen_fixtures.py.
type oracle struct {
	Prompts      [][]int32   `json:"prompts"`
	MaxNewTokens int         `json:"max_new_tokens"`
	Tokens       [][]int32   `json:"tokens"`
	FirstLogits  [][]float64 `json:"first_logits"`
}

// onlyFixture is -fixture: run the per-fixture tests on the fixture of
// exactly this name (testdata/NAME) and no other.
var onlyFixture = flag.String("fixture", "", "run the per-fixture tests on testdata/NAME only (an exact name, unlike -run's regular expressions: -fixture glm4 is not glm4_moe)")

// allFixtures lists the fixture folders (testdata/*/config.json).
func allFixtures(t *testing.T) []string {
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

// fixtures is allFixtures, or only testdata/<-fixture> when the flag is
// set (a fatal error if it is no fixture).
func fixtures(t *testing.T) []string {
	t.Helper()
	dirs := allFixtures(t)
	if *onlyFixture != "" {
		want := filepath.Join("testdata", *onlyFixture)
		if !slices.Contains(dirs, want) {
			t.Fatalf("-fixture %s: no %s/config.json", *onlyFixture, want)
		}
		return []string{want}
	}
	return dirs
}

// TestEmitGolden: each fixture's module emits the same bytes twice, and
// its summary (golden.Summarize: a digest of the text with locations
// stripped, the globals, op counts per entry point) is
// testdata/<fixture>/emit.summary. scripts/emit-replay.sh writes the
// modules themselves, to diff two trees op for op.
func TestEmitGolden(t *testing.T) {
	dirs := fixtures(t)
	if *onlyFixture == "" {
		dirs = append(dirs, visionFixtures(t)...)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			p, err := driver.NewPlan(dir, driver.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			again, err := driver.NewPlan(dir, driver.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(p.MLIR, again.MLIR) {
				t.Fatal("emitting the same model twice gave different bytes")
			}
			golden.Check(t, filepath.Join(dir, "emit.summary"), golden.Summarize(p.MLIR))
		})
	}
}

// TestEveryFamilyHasFixture fails for a built-in family that no fixture
// exercises: a new family costs a fixture spec, golden/fixtures/FAMILY.py, no code.
func TestEveryFamilyHasFixture(t *testing.T) {
	fams, err := driver.BuiltinFamilies()
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string][]string{}
	for _, dir := range append(allFixtures(t), visionFixtures(t)...) {
		p, err := driver.NewPlan(dir, driver.PlanOptions{})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		covered[p.Family.Name] = append(covered[p.Family.Name], filepath.Base(dir))
	}
	for _, f := range fams {
		if len(f.ModelTypes()) == 0 {
			continue // a base or mixin: the families that mix it in have the fixtures
		}
		if len(covered[f.Name]) == 0 {
			t.Errorf("family %s (%s) has no fixture under testdata/: write golden/fixtures/%s.py (archc new does) and run gen_fixtures.py --only NAME", f.Name, f.Path, f.Name)
		} else {
			t.Logf("%-8s %v", f.Name, covered[f.Name])
		}
	}
}

// execOptions is the configuration the execution tests compile for the
// fixture in dir: one prefill chunk of 32 tokens and decode of one
// sequence, and for a batchedFixture two KV-cache slots, decode of two
// sequences and the slot copies (the serving shape), so one compiled
// module per fixture serves every check of TestExecution (and the
// safetensors and F32 GGUF runs of TestGGUFTwinsExecution and
// TestLongRoPEStaleCache: the same MLIR, compiled once). A fixture the
// speculative tests run (specFixtures) also gets their verify bucket, so
// they share that module instead of compiling one of their own (about
// 120 s of a cold CI run's compiles for 20 s more here). The oracle
// prompts (up to 29 tokens) fit one chunk; prefill_matches_decode
// prefills in two chunks, the second mid-cache, and the 70- and 90-token
// LongRoPE prompts take three. Buckets other than 32 are the same lowering
// at another static length (the structural goldens hold the default 16
// and 64; the real-checkpoint tier runs them). Batched decode and the
// copies were a third of each module's compile (a cold CI run compiles
// about a hundred of these modules); batchedCoverSet says which fixtures
// keep them.
func execOptions(t *testing.T, dir string) launch.Options {
	t.Helper()
	var o launch.Options
	o.Plan.Lower.Slots = 1
	o.Plan.Lower.DecodeBatches = []int64{1}
	if batchedFixture(t, dir) {
		o.Plan.Lower.Slots = 2
		o.Plan.Lower.DecodeBatches = []int64{1, 2}
	}
	o.Plan.Lower.PrefillBuckets = []int64{32}
	o.Plan.Lower.EncoderSizes = []int64{32, 64} // a variable-size encoder (Qwen2-VL): the fixtures' images of 24 patches pad to 32
	if slices.Contains(specFixtures, filepath.Base(dir)) {
		o.Plan.Lower.VerifyBuckets = []int64{specVerify}
	}
	return o
}

// oracleOptions is the smallest module that runs checkOracle: one slot,
// decode of one sequence and execOptions' prefill chunk. The tests that
// only compare greedy generation with an oracle (the Q8_0 GGUF twins, the
// tensor-operation variants of arcee) compile it: two entry points
// instead of three.
func oracleOptions() launch.Options {
	var o launch.Options
	o.Plan.Lower.Slots = 1
	o.Plan.Lower.DecodeBatches = []int64{1}
	o.Plan.Lower.PrefillBuckets = []int64{32}
	return o
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

// needIREE skips when the IREE venv is missing outside CI; in CI it fails.
func needIREE(t *testing.T) { testmodels.NeedIREE(t) }

// buildKernels builds archc's kernels into the compile cache before a
// test's parallel subtests open models. launch.Open (driver.Compile) builds them on first use,
// and two first builds at once give two bitcodes (driver/kernels compiles in a
// fresh temporary folder whose name the bitcode records), so the same
// module would be compiled twice, under two cache keys.
func buildKernels(t *testing.T) {
	t.Helper()
	dir, err := ireetool.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kernels.Build(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
}

// compileHeavy: every test that compiles modules calls t.Parallel at its
// top level (after needIREE and buildKernels, which run first, one at a
// time), and its fixtures run as parallel subtests. So all of them, and
// not one test after another, share the -test.parallel (GOMAXPROCS) slots:
// a cold run has no tail where one test's last compile runs alone while
// the next test waits, and the package's compiles start with the first
// parallel test. Two tests asking for one module at once compile it once
// (ireetool.Compile locks the cache key; the other waits and reads it).

// TestExecution runs the execution tiers on every fixture, one loaded model
// per fixture: the oracle tier, prefill/decode consistency, EOS handling
// and the serve tier (batched decode equals single-sequence decode, on
// batchedFixture's fixtures; the engine on every one, in as many slots as
// its module has). Fixtures run in parallel, at most -test.parallel (GOMAXPROCS) at once,
// so one fixture's compile overlaps another's run.
func TestExecution(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	t.Parallel() // compileHeavy
	for _, dir := range fixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			want := readOracle(t, dir)
			ctx := context.Background()
			m, err := launch.Open(ctx, dir, execOptions(t, dir))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			t.Run("oracle", func(t *testing.T) { checkOracle(t, m, want) })
			t.Run("prefill_matches_decode", func(t *testing.T) { checkPrefillMatchesDecode(t, m) })
			t.Run("eos", func(t *testing.T) { checkEOS(t, m, want) })
			t.Run("sampling", func(t *testing.T) { checkSampling(t, m, want) })
			if batchedFixture(t, dir) {
				t.Run("batched_matches_single", func(t *testing.T) { checkBatched(t, m, want) })
			} else {
				t.Log("batched_matches_single: not run; the fixtures of batchedCoverSet run every primitive variant, weight format and state kind of this one batched (-batched-all runs it here)")
			}
			t.Run("engine", func(t *testing.T) { checkEngine(t, m, want.Prompts, want.Tokens, want.MaxNewTokens, nil) })
		})
	}
}

// checkOracle: greedy tokens equal the HF fp32 oracle exactly and the
// first-step logits are within logitsTolerance.
func checkOracle(t *testing.T, m *rt.Model, want oracle) {
	for i, prompt := range want.Prompts {
		g, err := m.Generate(context.Background(), prompt, rt.GenerateOptions{MaxTokens: want.MaxNewTokens})
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
}

// checkPrefillMatchesDecode: a prompt run as prefill (in two chunks, the
// second starting mid-cache) gives the same next-token logits as the same
// prompt fed token by token via decode.
func checkPrefillMatchesDecode(t *testing.T, m *rt.Model) {
	ctx := context.Background()
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
}

// checkEOS: generation stops right after an EOS token, which is kept (as
// HF generate keeps it).
func checkEOS(t *testing.T, m *rt.Model, want oracle) {
	saved := m.EOS
	defer func() { m.EOS = saved }()
	m.EOS = []int32{want.Tokens[0][2]}
	g, err := m.Generate(context.Background(), want.Prompts[0], rt.GenerateOptions{MaxTokens: want.MaxNewTokens})
	if err != nil {
		t.Fatal(err)
	}
	stop := slices.Index(want.Tokens[0], want.Tokens[0][2]) + 1
	if diff := cmp.Diff(want.Tokens[0][:stop], g.Tokens); diff != "" {
		t.Errorf("with EOS = the third oracle token, tokens (-want +got):\n%s", diff)
	}
}

// checkSampling: sampling in the worker with top-k 1 keeps only the
// argmax, so it reproduces the oracle at any temperature and seed; a
// seeded sampled run repeats.
func checkSampling(t *testing.T, m *rt.Model, want oracle) {
	ctx := context.Background()
	gen := func(o rt.SamplingOptions) []int32 {
		g, err := m.Generate(ctx, want.Prompts[1], rt.GenerateOptions{MaxTokens: want.MaxNewTokens, Sampling: o})
		if err != nil {
			t.Fatal(err)
		}
		return g.Tokens
	}
	if diff := cmp.Diff(want.Tokens[1], gen(rt.SamplingOptions{Temperature: 1.7, TopK: 1, Seed: 9})); diff != "" {
		t.Errorf("top-k 1 sampling differs from the greedy oracle (-oracle +sampled):\n%s", diff)
	}
	o := rt.SamplingOptions{Temperature: 1, TopP: 0.95, Seed: 5}
	if a, b := gen(o), gen(o); !slices.Equal(a, b) {
		t.Errorf("seed %d gave %v, then %v", o.Seed, a, b)
	}
}

// checkEngine is the serving tier: the prompts submitted all at once to
// the continuous-batching engine (more requests than slots: some queue;
// each prompt twice, the second time sharing the first's prefix cache),
// and each request's greedy tokens equal the oracle's.
func checkEngine(t *testing.T, m *rt.Model, prompts, want [][]int32, maxNew int, stop []int32) {
	ctx, e := startEngine(t, m, engine.Options{})
	var reqs []engine.Request
	for range 2 {
		for _, p := range prompts {
			reqs = append(reqs, engine.Request{Prompt: p, MaxTokens: maxNew, StopTokens: stop})
		}
	}
	for i, got := range submitAll(t, ctx, e, reqs) {
		if diff := cmp.Diff(want[i%len(prompts)], got); diff != "" {
			t.Errorf("prompt %d (round %d) through the engine (-oracle +engine):\n%s", i%len(prompts), i/len(prompts), diff)
		}
	}
}

// startEngine runs an engine for m with opts until the test ends, and
// returns it and the context to submit under.
func startEngine(t *testing.T, m *rt.Model, opts engine.Options) (context.Context, *engine.Engine) {
	t.Helper()
	e, err := engine.New(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ctx, e
}

// submitAll submits every request at once and returns each one's
// tokens once all have ended; a request ending with an error fails t.
func submitAll(t *testing.T, ctx context.Context, e *engine.Engine, reqs []engine.Request) [][]int32 {
	t.Helper()
	out := make([][]int32, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		ch, err := e.Submit(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ev := range ch {
				if ev.Done {
					if ev.Err != nil {
						t.Errorf("request %d: %v", i, ev.Err)
					}
					return
				}
				out[i] = append(out[i], ev.Token)
			}
		}()
	}
	wg.Wait()
	return out
}

// checkBatched is the serve tier: two sequences of different lengths
// prefilled into their own cache slots and then decoded together, one
// batched call per step with ragged positions (batch order opposite to slot
// order), produce exactly the oracle's single-sequence tokens.
func checkBatched(t *testing.T, m *rt.Model, want oracle) {
	ctx := context.Background()
	seqs := []int{2, 1}  // oracle prompts, in batch order
	slots := []int{1, 0} // the cache slot of each
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
	for step := 0; ; step++ {
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
