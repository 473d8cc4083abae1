// Tests of the fixtures' GGUF twins (written by gen_gguf_fixtures.py with
// gguf-py, as llama.cpp's converter writes them): each family reads them
// through its .arch gguf section. model.f32.gguf must be the safetensors
// folder exactly (same family and emitted module; same weights, up to the
// float32 rounding of Gemma's stored 1 + w; same logits; a bf16-stored
// folder widened to f32 first: f32Folder); model.q8_0.gguf must
// generate token-exact against oracle.q8_0.json, the HF fp32 oracle on its
// dequantized values.
package golden

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"github.com/archc/archc/driver"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/driver/weights"
	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/internal/testckpt"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt"
)

// ggufFixtures returns the fixture folders that have GGUF twins; every
// fixture of gen_fixtures.py (all but the MLX twins) whose family reads
// GGUF files (has a gguf section: llama.cpp has the architecture) must
// have them, unless its gguf.skip file says why a twin cannot be the same
// model.
func ggufFixtures(t *testing.T) []string {
	t.Helper()
	// The twins are generated, not committed: gguf.sha256 lists them
	// (gen_gguf_fixtures.py adds them), make_gguf_twins.py writes them.
	manifest, merr := os.ReadFile(filepath.Join("testdata", "gguf.sha256"))
	if merr != nil {
		t.Fatal(merr)
	}
	var out []string
	for _, dir := range fixtures(t) {
		_, err := os.Stat(filepath.Join(dir, "model.f32.gguf"))
		cfg, cerr := os.ReadFile(filepath.Join(dir, "config.json"))
		skip, serr := os.ReadFile(filepath.Join(dir, "gguf.skip"))
		listed := bytes.Contains(manifest, []byte("  "+filepath.Base(dir)+"/model.f32.gguf\n"))
		switch {
		case cerr != nil:
			t.Fatal(cerr)
		case serr == nil:
			t.Logf("%s: no GGUF twins: %s", dir, bytes.TrimSpace(skip))
		case listed:
			for _, twin := range []string{"model.f32.gguf", "model.q8_0.gguf"} {
				testmodels.GGUFTwin(t, filepath.Join(dir, twin))
			}
			out = append(out, dir)
		case err == nil:
			t.Errorf("%s has GGUF twins that testdata/gguf.sha256 does not list: run golden/gen_gguf_fixtures.py --only %s", dir, filepath.Base(dir))
		case !bytes.Contains(cfg, []byte(`"quantization"`)) && readsGGUF(t, dir):
			t.Errorf("%s has no GGUF twins: run golden/gen_gguf_fixtures.py", dir)
		}
	}
	return out
}

// readsGGUF reports whether the family of a fixture claims a GGUF
// architecture.
func readsGGUF(t *testing.T, dir string) bool {
	p, err := driver.NewPlan(dir, driver.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Family.GGUFArchs()) > 0
}

// TestGGUFTwinsPlan: the F32 twin plans to the same family and emits the
// same module as the safetensors folder (so the same config reached the
// graph: a config.json and GGUF metadata spell rope and eps differently);
// the Q8_0 twin plans to the F32 twin's family and config, with weights
// declared in their stored formats.
func TestGGUFTwinsPlan(t *testing.T) {
	for _, dir := range ggufFixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want, err := driver.NewPlan(f32Folder(t, dir), driver.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f32, err := driver.NewPlan(filepath.Join(dir, "model.f32.gguf"), driver.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if f32.Family.Name != want.Family.Name {
				t.Errorf("F32 twin: family %s, the safetensors folder's is %s", f32.Family.Name, want.Family.Name)
			}
			if folded := foldedTwin(dir); folded != "" {
				t.Logf("F32 twin: modules not compared: %s", folded)
			} else if !bytes.Equal(f32.MLIR, want.MLIR) {
				t.Errorf("F32 twin: the emitted module differs from the safetensors folder's")
			}
			checkUnread(t, f32)
			q8, err := driver.NewPlan(filepath.Join(dir, "model.q8_0.gguf"), driver.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if q8.Family.Name != want.Family.Name {
				t.Errorf("Q8_0 twin: family %s, the safetensors folder's is %s", q8.Family.Name, want.Family.Name)
			}
			if diff := cmp.Diff(f32.Config, q8.Config); diff != "" {
				t.Errorf("Q8_0 twin: config (-f32 +q8_0):\n%s", diff)
			}
			formats, norms := map[string]int{}, 0
			for name, f := range q8.Options.WeightDTypes {
				formats[f]++
				if strings.Contains(name, "norm") {
					norms++
				}
			}
			// (OLMo's LayerNorm has no weights: all its tensors are matrices.)
			if formats["q8_0"] == 0 || (norms > 0 && formats["f32"] == 0) {
				t.Errorf("Q8_0 twin: weights declared as %v, want q8_0 matrices and f32 norms", formats)
			}
		})
	}
}

// f32Folder is dir, or for a fixture whose checkpoint is stored in bf16
// (gen_fixtures.py's stored_dtype, for the tracked tree's size) a copy of
// it with every bf16 tensor widened to f32, which is exact: the checkpoint
// as llama.cpp's converter reads it (convert_hf_to_gguf.py widens bf16 to
// f32 before it writes a tensor), and what the F32 twin must be exactly
// (same module, weights bit for bit, same logits). The bf16 folder itself
// (bf16 weight globals) is held to the HF oracle by TestExecution.
func f32Folder(t *testing.T, dir string) string {
	t.Helper()
	infos, err := weights.OpenFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(slices.Collect(maps.Values(infos)), func(i weights.Info) bool { return strings.EqualFold(string(i.DType), "bf16") }) {
		return dir
	}
	return testckpt.FixtureCopyOf(t, filepath.Base(dir), func(ts map[string]testckpt.STTensor) {
		for name, x := range ts {
			if x.DType != "BF16" {
				continue
			}
			wide := make([]byte, 2*len(x.Data))
			for i := range len(x.Data) / 2 {
				binary.LittleEndian.PutUint32(wide[4*i:], uint32(binary.LittleEndian.Uint16(x.Data[2*i:]))<<16)
			}
			ts[name] = testckpt.STTensor{DType: "F32", Shape: x.Shape, Data: wide}
		}
	}, nil)
}

// foldedTwin returns the reason a fixture's twins fold parameters into
// their weights (its gguf.folded file: llama.cpp's Falcon-H1 multipliers),
// or "" for a twin that is the safetensors folder's model exactly. A
// folded twin is the same model with other weights and other constants in
// its module: the modules and weights are not compared, and the F32 twin's
// logits are held within the oracle tier's 1e-4.
func foldedTwin(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "gguf.folded"))
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(b))
}

// checkUnread: the only tensors a twin holds that its family does not read
// (driver.Plan.Unread) are those of blocks past the model's layers, the
// multi-token-prediction layers llama.cpp writes as extra blocks (the
// glm4_moe twin has one).
func checkUnread(t *testing.T, p *driver.Plan) {
	t.Helper()
	layers, _ := p.Config["num_hidden_layers"].(int64)
	for _, name := range p.Unread {
		var blk int64 = -1
		if rest, ok := strings.CutPrefix(name, "blk."); ok {
			if n, err := strconv.ParseInt(strings.Split(rest, ".")[0], 10, 64); err == nil {
				blk = n
			}
		}
		if blk < layers {
			t.Errorf("%s: tensor %q is not read, but it is not an extra block's (past layer %d)", p.GGUF.Path, name, layers-1)
		}
	}
	if len(p.Unread) > 0 {
		t.Logf("%s: %d tensors of extra blocks not read (multi-token prediction)", p.GGUF.Path, len(p.Unread))
	}
}

// TestGGUFTwinsWeights: the F32 twin, read through its family (names,
// Q/K un-permutation, minus_one, minus, reshape, log_neg, splits), holds
// the safetensors tensors bit for bit; a minus_one or minus(c) tensor
// (Gemma's and Nemotron's norms, PLaMo 2's) holds
// float32(float32(w + c) - c), what llama.cpp's stored w + c gives back; a log_neg tensor (Mamba's
// A_log, stored as A = -exp(A_log)) is within logNegTolerance of A_log:
// exp is not injective on float32 (for |A_log| < ln 2 neighbouring
// values share their exp), so llama.cpp's A does not determine A_log.
func TestGGUFTwinsWeights(t *testing.T) {
	for _, dir := range ggufFixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			if folded := foldedTwin(dir); folded != "" {
				t.Skipf("weights not compared: %s", folded)
			}
			p, err := driver.NewPlan(filepath.Join(dir, "model.f32.gguf"), driver.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.GGUF.Materialize(context.Background(), t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			// The safetensors folder's tensors as its plan binds them (a
			// wrapper's scoped names, model.language_model.*, also as
			// the graph names them).
			sp, err := driver.NewPlan(f32Folder(t, dir), driver.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := sp.Weights
			for _, w := range p.Graph.Weights { // MoE experts: per-expert tensors, stacked as the GGUF holds them
				if _, ok := want.Tensors[w.Name]; !ok && w.Parts != nil {
					if err := want.Stack(w.Name, w.Parts); err != nil {
						t.Fatal(err)
					}
					for _, part := range w.Parts {
						delete(want.Tensors, part)
					}
				}
			}
			// The tensors the family reads (a checkpoint may hold more:
			// Apertus's xIELU beta and eps buffers, fixed in the graph;
			// the GGUF twin's must be exactly those).
			read := map[string]bool{}
			for _, w := range p.Graph.Weights {
				read[w.Name] = true
			}
			for name := range want.Tensors {
				if !read[name] {
					delete(want.Tensors, name)
				}
			}
			if diff := cmp.Diff(want.Names(), got.Names()); diff != "" {
				t.Fatalf("tensor names the family reads (-safetensors +gguf):\n%s", diff)
			}
			for _, name := range want.Names() {
				w := readF32(t, want, name)
				g := readF32(t, got, name)
				if len(w) != len(g) {
					t.Fatalf("%s: %d values, safetensors %d", name, len(g), len(w))
				}
				c, minus := p.GGUF.Minus(name) // Gemma's and Nemotron's norms (1 + w), PLaMo 2's (w + c)
				logNeg := slices.Contains(p.GGUF.Transforms(name), "log_neg")
				for i := range w {
					x := w[i]
					if minus {
						x = (x + c) - c
					}
					if logNeg && math.Abs(float64(g[i])-float64(x)) <= logNegTolerance(x) {
						continue
					}
					if math.Float32bits(x) != math.Float32bits(g[i]) {
						t.Errorf("%s[%d] = %v, want %v (safetensors %v)", name, i, g[i], x, w[i])
						break
					}
				}
			}
		})
	}
}

// logNegTolerance bounds |log(-A) - x| for A = -exp(x) as llama.cpp's
// converter stores it (torch's float32 exp, within an ulp: a relative
// error of 2^-23, which log turns into an absolute one) and log_neg reads
// it back (float64 log, rounded to float32: half an ulp of x).
func logNegTolerance(x float32) float64 {
	ulp := float64(math.Nextafter32(float32(math.Abs(float64(x))), float32(math.Inf(1)))) - math.Abs(float64(x))
	return math.Ldexp(1, -22) + ulp
}

// readF32 reads an f32 tensor of an index.
// A stacked view (weights.Index.Stack) reads as its parts in order.
func readF32(t *testing.T, ix *weights.Index, name string) []float32 {
	t.Helper()
	info := ix.Tensors[name]
	parts := info.Stack
	if parts == nil {
		parts = []weights.Info{info}
	}
	var out []float32
	for _, part := range parts {
		tt, err := part.Read()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(tt.Data)/4; i++ {
			out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(tt.Data[4*i:])))
		}
	}
	return out
}

// TestGGUFTwinsExecution runs the twins: the F32 twin generates the
// safetensors folder's tokens with bit-identical first-step logits (also
// for the Gemma families: their norm weights w' = (1 + w) - 1 round, but
// the graph's 1 + w' is 1 + w again; for a twin with log_neg tensors, whose
// A_log may differ from the checkpoint's by an ulp or two (see
// TestGGUFTwinsWeights), within the oracle tier's 1e-4), and the Q8_0 twin generates
// oracle.q8_0.json's tokens exactly, first-step logits within 1e-4. The
// safetensors folder and the F32 twin compile TestExecution's module
// (execOptions: one compile serves all three, the cache has it), the Q8_0
// twin the smaller oracleOptions module; the Q8_0 twins run are a subset
// covering every way a quantized weight is read (q8Cover: each is a cold
// compile of its own; -q8-all runs all). Fixtures run in parallel, as in
// TestExecution.
func TestGGUFTwinsExecution(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	t.Parallel() // compileHeavy
	ctx := context.Background()
	dirs := ggufFixtures(t)
	q8run := q8Cover(t, dirs)
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			base := readOracle(t, dir)
			tol := 0.0
			if foldedTwin(dir) != "" {
				tol = 1e-4
			}
			if p, err := driver.NewGraph(filepath.Join(dir, "model.f32.gguf"), driver.PlanOptions{}); err != nil {
				t.Fatal(err)
			} else {
				for _, w := range p.Graph.Weights {
					if slices.Contains(p.GGUF.Transforms(w.Name), "log_neg") {
						tol = 1e-4
					}
				}
			}
			if folder := f32Folder(t, dir); folder != dir && tol == 0 {
				// The twin's module is the widened folder's byte for byte
				// (TestGGUFTwinsPlan) and its weights are bit for bit
				// (TestGGUFTwinsWeights), so its logits are too; running
				// it would compile an f32 module no other test uses (the
				// bf16 folder's own module reads bf16 weights): about 25 s
				// of a cold CI run per fixture. The f32 fixtures' twins
				// run the GGUF load path end to end.
				t.Logf("F32 twin not run: module and weights equal the widened bf16 folder's (TestGGUFTwinsPlan, TestGGUFTwinsWeights)")
			} else {
				checkF32Twin(t, ctx, folder, dir, base, tol)
			}

			if !q8run[dir] {
				t.Logf("Q8_0 twin not run: the covering subset's twins exercise its variants (q8Cover; -q8-all runs it)")
				return
			}
			data, err := os.ReadFile(filepath.Join(dir, "oracle.q8_0.json"))
			if err != nil {
				t.Fatal(err)
			}
			var want oracle
			if err := json.Unmarshal(data, &want); err != nil {
				t.Fatal(err)
			}
			q8, err := launch.Open(ctx, filepath.Join(dir, "model.q8_0.gguf"), oracleOptions())
			if err != nil {
				t.Fatal(err)
			}
			defer q8.Close()
			checkOracle(t, q8, want)
		})
	}
}

// checkF32Twin: dir's F32 twin generates the tokens of folder (dir, or
// its bf16 weights widened: f32Folder) on base's prompts, first-step
// logits within tol (0: bit for bit).
func checkF32Twin(t *testing.T, ctx context.Context, folder, dir string, base oracle, tol float64) {
	t.Helper()
	st, err := launch.Open(ctx, folder, execOptions(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f32, err := launch.Open(ctx, filepath.Join(dir, "model.f32.gguf"), execOptions(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	defer f32.Close()
	for i, prompt := range base.Prompts {
		a, err := st.Generate(ctx, prompt, rt.GenerateOptions{MaxTokens: base.MaxNewTokens})
		if err != nil {
			t.Fatal(err)
		}
		b, err := f32.Generate(ctx, prompt, rt.GenerateOptions{MaxTokens: base.MaxNewTokens})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(a.Tokens, b.Tokens); diff != "" {
			t.Errorf("F32 twin, prompt %d: tokens differ from the safetensors folder's (-safetensors +gguf):\n%s", i, diff)
		}
		if d := maxAbsDiff32(a.FirstLogits, b.FirstLogits); d > tol {
			t.Errorf("F32 twin, prompt %d: first-step logits differ from the safetensors folder's by %g (max abs, allowed %g)", i, d, tol)
		} else if d != 0 {
			t.Logf("F32 twin, prompt %d: first-step logits differ from the safetensors folder's by %g (max abs; log_neg rounds A_log, or the twin folds parameters)", i, d)
		}
	}
}
