package golden

// Speculative decoding with the model's own multi-token-prediction (MTP)
// module (rt.MTPDrafter; the mtp modules of archs/deepseek_v3.arch,
// archs/glm4_moe.arch, archs/mimo.arch and archs/qwen3_next.arch, which
// qwen3_5 and qwen3_5_moe inherit): on the deepseek_v3 (MLA, routed
// experts), glm4_moe (GQA, routed experts), mimo (Qwen2, MiMo's
// model.mtp_layers convention), qwen3_next (a hybrid: mtp.fc beside
// mtp.layers.0, a MoE layer) and qwen3_5 (its vision-language wrapper, a
// dense layer) fixtures given a random MTP layer, greedy
// output with MTP drafts equals the HF oracle's token for token, and the
// module's logits equal mtp_reference.py's, an independent numpy reference
// written from the DeepSeek-V3 report and MiMo's code.
//
// HF's models have no MTP layer, so the fixtures have none (mimo's has
// one, replaced): mtpFixture adds one (model.layers.3.*,
// model.mtp_layers.0.*: the shapes the .arch reads) to a copy, its values
// drawn from splitmix64 (mtpValues), a generator mtp_reference.py repeats,
// so the tree holds no MTP weights.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/internal/testckpt"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/engine"
)

// mtpFixtures are the fixtures whose family has an MTP module, and
// mtpNamedOnly those the MTP tests run only under -fixture: qwen3_5_moe's
// module is qwen3_next's MoE layer under qwen3_5's scope, both run here
// (its own module would be another cold compile of every CI run).
var (
	mtpFixtures  = []string{"deepseek_v3", "glm4_moe", "mimo", "qwen3_next", "qwen3_5"}
	mtpNamedOnly = []string{"qwen3_5_moe"}
)

// mtpRun is the fixtures the MTP tests run: mtpFixtures, or under
// -fixture the named one if its family has an MTP module.
func mtpRun() []string {
	if *onlyFixture == "" {
		return mtpFixtures
	}
	if slices.Contains(mtpFixtures, *onlyFixture) || slices.Contains(mtpNamedOnly, *onlyFixture) {
		return []string{*onlyFixture}
	}
	return nil
}

// mtpSeed seeds the MTP layer's values (mtp_reference.py's SEED).
const mtpSeed = 31

// mtpValues fills the MTP layer's tensors, in name order, each in
// row-major order, from one splitmix64 stream: u uniform in [-1, 1) from a
// draw's top 53 bits; a norm weight is 1 + u/10, any other 0.2·u (the
// fixture's initializer_range).
func mtpValues(names []string, shapes map[string][]int64) map[string][]float32 {
	state := uint64(mtpSeed)
	next := func() float64 {
		state += 0x9E3779B97F4A7C15
		z := state
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		z ^= z >> 31
		return float64(z>>11)/(1<<53)*2 - 1
	}
	out := map[string][]float32{}
	for _, name := range names {
		n := int64(1)
		for _, d := range shapes[name] {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			if strings.Contains(name, "norm") {
				v[i] = float32(1 + next()/10)
			} else {
				v[i] = float32(0.2 * next())
			}
		}
		out[name] = v
	}
	return out
}

// mtpOptions is the module every MTP test compiles for the fixture
// name: the MTP module and verify buckets of 2 and 4 tokens (one-token and
// chained drafts), with execOptions' two slots for mtpTwoSlots (the engine
// and copied-slot tests' fixture) and one slot for the others, whose tests
// run one sequence (decode of two and the slot copies were about a
// quarter of each of their modules). One configuration per fixture for
// every test, so each compiles once (deepseek_v3 compiled a one-slot
// module beside it: 34 s of a cold CI run).
func mtpOptions(t *testing.T, name string) launch.Options {
	o := execOptions(t, "")
	if name != mtpTwoSlots {
		o.Plan.Lower.Slots, o.Plan.Lower.DecodeBatches = 1, []int64{1}
	}
	o.Plan.Lower.VerifyBuckets = []int64{2, 4}
	o.Plan.Lower.MTP = true
	return o
}

// mtpTwoSlots is the fixture of the MTP tests that need a second slot
// (TestMTPEngine, TestMTPCopiedSlot).
const mtpTwoSlots = "deepseek_v3"

// mtpFixture copies fixture name with an MTP layer of random values and
// returns its folder.
func mtpFixture(t *testing.T, name string) string {
	t.Helper()
	o := driver.PlanOptions{}
	o.Lower.MTP = true
	p, err := driver.NewGraph(filepath.Join("testdata", name, "config.json"), o)
	if err != nil {
		t.Fatal(err)
	}
	shapes := map[string][]int64{}
	var names []string
	for _, w := range p.Graph.MTP.Weights {
		shapes[w.Name] = w.Shape
		names = append(names, w.Name)
	}
	sort.Strings(names)
	vals := mtpValues(names, shapes)
	dir := testckpt.FixtureCopyOf(t, name, func(ts map[string]testckpt.STTensor) {
		for _, name := range names {
			data := make([]byte, 0, 4*len(vals[name]))
			for _, x := range vals[name] {
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(x))
			}
			stacked, per, isExperts := strings.Cut(name, ".mlp.experts.")
			if !isExperts { // an expert per tensor, as the published checkpoint stores them
				ts[name] = testckpt.STTensor{DType: "F32", Shape: shapes[name], Data: data}
				continue
			}
			e := shapes[name][0]
			size := len(data) / int(e)
			for j := range e {
				ts[fmt.Sprintf("%s.mlp.experts.%d.%s", stacked, j, per)] = testckpt.STTensor{DType: "F32", Shape: shapes[name][1:], Data: data[int(j)*size : int(j+1)*size]}
			}
		}
	}, nil)
	return dir
}

func TestMTPGreedyEqualsOracle(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	for _, name := range mtpRun() {
		t.Run(name, func(t *testing.T) { checkMTPGreedy(t, name) })
	}
}

// checkMTPGreedy: the oracle's prompts with and without MTP drafts, then
// the third along the reference with every draft checked.
func checkMTPGreedy(t *testing.T, name string) {
	want := readOracle(t, filepath.Join("testdata", name))
	o := mtpOptions(t, name)
	m, err := launch.Open(context.Background(), mtpFixture(t, name), o)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, err := rt.NewMTPDrafter(m)
	if err != nil {
		t.Fatal(err)
	}
	// One token per step; two on a model with a recurrent state, whose
	// drafts have an even length (rt.Model.MaxDraft).
	draftMax := 1
	if m.Program.FixedState() {
		draftMax = 2
	}
	var total rt.SpecStats
	for i, prompt := range want.Prompts {
		for _, spec := range []*rt.Speculation{nil, {Drafter: d, DraftMax: draftMax}} {
			g, err := m.Generate(context.Background(), prompt, rt.GenerateOptions{MaxTokens: want.MaxNewTokens, Speculative: spec})
			if err != nil {
				t.Fatalf("prompt %d (mtp %v): %v", i, spec != nil, err)
			}
			if diff := cmp.Diff(want.Tokens[i], g.Tokens); diff != "" {
				t.Errorf("prompt %d (mtp drafts: %v): tokens differ from the HF oracle (-oracle +archc):\n%s", i, spec != nil, diff)
			}
			total.Add(g.Spec)
		}
	}
	if total.Drafts == 0 {
		t.Errorf("the MTP drafter never drafted: %+v", total)
	}
	t.Logf("MTP drafts with random weights: %+v", total)
	// Along the reference's sequence, every draft checked and half the
	// steps accepting one.
	ref := readMTPReference(t, name)
	c := &checkedMTP{t: t, d: d, ref: ref}
	g, err := m.Generate(context.Background(), want.Prompts[2], rt.GenerateOptions{MaxTokens: want.MaxNewTokens, Speculative: &rt.Speculation{Drafter: c, DraftMax: draftMax}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Tokens[2], g.Tokens); diff != "" {
		t.Errorf("prompt 2 (checked MTP drafts): tokens differ from the HF oracle (-oracle +archc):\n%s", diff)
	}
	if c.checked < 5 || g.Spec.Accepted == 0 {
		t.Errorf("checked %d MTP drafts, %+v: want several, some accepted", c.checked, g.Spec)
	}
	t.Logf("checked MTP drafts: %d, %+v", c.checked, g.Spec)
}

// TestMTPEngine: through the continuous-batching engine (two slots), with
// MTP drafts on, speculating and plain requests side by side give the
// oracle's tokens, twice (the second round in slots the first left), and
// so do two requests sharing one prefill (copy_cache); every MTP draft
// along the third prompt's sequence is the reference module's.
func TestMTPEngine(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	want := readOracle(t, filepath.Join("testdata", mtpTwoSlots))
	o := mtpOptions(t, mtpTwoSlots)
	m, err := launch.Open(context.Background(), mtpFixture(t, mtpTwoSlots), o)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, err := rt.NewMTPDrafter(m)
	if err != nil {
		t.Fatal(err)
	}
	c := &checkedMTP{t: t, d: d, ref: readMTPReference(t, "deepseek_v3")} // drafts on the third prompt checked
	ctx, e := startEngine(t, m, engine.Options{Speculative: &rt.Speculation{Drafter: c, DraftMax: 1}})
	var reqs []engine.Request
	for _, p := range want.Prompts {
		for _, off := range []bool{false, true} {
			reqs = append(reqs, engine.Request{Prompt: p, MaxTokens: want.MaxNewTokens, NoSpeculation: off})
		}
	}
	for round := range 2 {
		for i, got := range submitAll(t, ctx, e, reqs) {
			if diff := cmp.Diff(want.Tokens[i/2], got); diff != "" {
				t.Errorf("round %d: prompt %d (speculation off: %v) through the engine (-oracle +engine):\n%s", round, i/2, reqs[i].NoSpeculation, diff)
			}
		}
	}
	// A group of two sharing the third prompt's prefill: the second slot
	// gets the first's KV rows, hidden states and MTP rows by a copy.
	g := engine.NewGroup(2)
	group := []engine.Request{{Prompt: want.Prompts[2], MaxTokens: want.MaxNewTokens, Group: g}, {Prompt: want.Prompts[2], MaxTokens: want.MaxNewTokens, Group: g}}
	for i, got := range submitAll(t, ctx, e, group) {
		if diff := cmp.Diff(want.Tokens[2], got); diff != "" {
			t.Errorf("group member %d (-oracle +engine):\n%s", i, diff)
		}
	}
	if st := e.Stats(); st.Spec.Drafts == 0 || st.SharedPrefills == 0 || c.checked == 0 {
		t.Errorf("the engine did not draft with MTP (%+v, %d checked) or share a prefill (%d)", st.Spec, c.checked, st.SharedPrefills)
	}
	t.Logf("engine: %+v, %d MTP drafts checked", e.Stats().Spec, c.checked)
}

// TestMTPCopiedSlot: after CopySlot gives a slot another slot's prompt
// (whose MTP rows the other slot never computed: the module runs only
// when drafting), the MTP drafter does not trust what it recorded of the
// slot before: its draft is the reference module's.
func TestMTPCopiedSlot(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	want := readOracle(t, filepath.Join("testdata", mtpTwoSlots))
	ref := readMTPReference(t, mtpTwoSlots)
	o := mtpOptions(t, mtpTwoSlots)
	m, err := launch.Open(context.Background(), mtpFixture(t, mtpTwoSlots), o)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, err := rt.NewMTPDrafter(m)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	k := len(want.Prompts[2])
	seq := ref.Sequence[:k+1] // the prompt and its first token
	draft := func(slot int) {
		t.Helper()
		if got := d.Draft(ctx, slot, seq, 1); len(got) != 1 || got[0] != ref.Argmax[k-1] {
			t.Errorf("slot %d: MTP draft %v, the reference module's %d", slot, got, ref.Argmax[k-1])
		}
	}
	if _, err := m.PrefillSlot(ctx, 1, seq[:k], 0); err != nil {
		t.Fatal(err)
	}
	draft(1) // slot 1: module rows for the prompt
	other := want.Prompts[1]
	if _, err := m.PrefillSlot(ctx, 0, other, 0); err != nil {
		t.Fatal(err)
	}
	d.Draft(ctx, 0, append(slices.Clone(other), 5), 1) // slot 0: module rows for another prompt
	if _, err := m.PrefillSlot(ctx, 0, seq[:k], 0); err != nil {
		t.Fatal(err)
	}
	if err := m.CopySlot(ctx, 0, []int{1}, k); err != nil {
		t.Fatal(err)
	}
	draft(1) // slot 1 now holds slot 0's module rows, the other prompt's
}

// mtpReference is testdata/<fixture>/mtp_reference.json: the MTP
// module's logits at positions Rows of Sequence (the oracle's third
// prompt and its tokens) and its argmax at every position.
type mtpReference struct {
	Sequence []int32     `json:"sequence"`
	Rows     []int       `json:"rows"`
	Logits   [][]float64 `json:"logits"`
	Argmax   []int32     `json:"argmax"`
	// Chains are chained drafts: with Sequence known through Pos (the
	// target holding h_0..h_{Pos-1}), the module's first draft and each
	// next one from its own output (rt.MTPDrafter with max > 1).
	Chains []struct {
		Pos    int     `json:"pos"`
		Drafts []int32 `json:"drafts"`
	} `json:"chains"`
}

func readMTPReference(t *testing.T, name string) mtpReference {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name, "mtp_reference.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref mtpReference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// checkedMTP drafts with the MTP drafter, checks each draft along the
// reference's sequence against the reference's argmax, and proposes the
// oracle's next token instead on every other step, so that steps accept
// a draft (random MTP weights draft wrong) and the drafter catches up
// over the accepted positions.
type checkedMTP struct {
	t             *testing.T
	d             *rt.MTPDrafter
	ref           mtpReference
	step, checked int
}

func (c *checkedMTP) Name() string { return "checked-mtp" }

func (c *checkedMTP) Draft(ctx context.Context, slot int, seq []int32, max int) []int32 {
	d := c.d.Draft(ctx, slot, seq, max)
	onPath := len(seq)+max <= len(c.ref.Sequence) && slices.Equal(seq, c.ref.Sequence[:len(seq)])
	if onPath && len(d) >= 1 { // the first token of a draft is the module's on the target's states
		if want := c.ref.Argmax[len(seq)-2]; d[0] != want {
			c.t.Errorf("after %d tokens the MTP drafter drafted %d, mtp_reference.py's module %d", len(seq), d[0], want)
		}
		c.checked++
	}
	if c.step++; c.step%2 == 0 && onPath { // every other step, a draft that is accepted
		return c.ref.Sequence[len(seq) : len(seq)+max]
	}
	return d
}

// TestMTPReference: the MTP module's logits at some positions of a
// sequence equal mtp_reference.py's within 1e-4 (max abs), run at once
// after a prefill of the sequence, and run as a speculating decode runs
// it: a first chunk, then position by position (its KV rows carried
// between calls).
func TestMTPReference(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	for _, name := range mtpRun() {
		t.Run(name, func(t *testing.T) { checkMTPReference(t, name) })
	}
}

func checkMTPReference(t *testing.T, name string) {
	ref := readMTPReference(t, name)
	o := mtpOptions(t, name)
	m, err := launch.Open(context.Background(), mtpFixture(t, name), o)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	seq := ref.Sequence
	check := func(how string, rows [][]float32) {
		if len(rows) != len(seq)-1 {
			t.Fatalf("%s: %d rows, want %d", how, len(rows), len(seq)-1)
		}
		for i, r := range ref.Rows {
			worst := 0.0
			for v, want := range ref.Logits[i] {
				worst = math.Max(worst, math.Abs(float64(rows[r][v])-want))
			}
			if worst > 1e-4 {
				t.Errorf("%s: position %d: MTP logits differ from mtp_reference.py's by %.3g (max abs)", how, r, worst)
			}
		}
		for r, want := range ref.Argmax {
			if got := rt.Argmax(rows[r]); got != want {
				t.Errorf("%s: position %d: MTP argmax %d, mtp_reference.py's %d", how, r, got, want)
			}
		}
	}
	if _, err := m.PrefillSlot(ctx, 0, seq, 0); err != nil {
		t.Fatal(err)
	}
	rows, err := m.MTPLogits(ctx, 0, seq[1:], 0)
	if err != nil {
		t.Fatal(err)
	}
	check("at once", rows)
	rows, err = m.MTPLogits(ctx, 0, seq[1:6], 0)
	if err != nil {
		t.Fatal(err)
	}
	for p := 5; p < len(seq)-1; p++ {
		r, err := m.MTPLogits(ctx, 0, seq[p+1:p+2], p)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r...)
	}
	check("position by position", rows)
}

// TestMTPChained: chained drafts (--speculative mtp:3) equal the
// reference's, and greedy output with them equals the HF oracle's.
func TestMTPChained(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	for _, name := range mtpRun() {
		t.Run(name, func(t *testing.T) {
			ref := readMTPReference(t, name)
			want := readOracle(t, filepath.Join("testdata", name))
			o := mtpOptions(t, name)
			m, err := launch.Open(context.Background(), mtpFixture(t, name), o)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if !m.Program.MTPChain {
				t.Fatal("the module does not chain (mtp_hidden unbound)")
			}
			d, err := rt.NewMTPDrafter(m)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for _, c := range ref.Chains {
				if _, err := m.PrefillSlot(ctx, 0, ref.Sequence[:c.Pos], 0); err != nil {
					t.Fatal(err)
				}
				if got := d.Draft(ctx, 0, ref.Sequence[:c.Pos+1], len(c.Drafts)); !slices.Equal(got, c.Drafts) {
					t.Errorf("after %d tokens: chained MTP drafts %v, the reference's %v", c.Pos+1, got, c.Drafts)
				}
			}
			var spec rt.SpecStats
			for i, prompt := range want.Prompts {
				g, err := m.Generate(ctx, prompt, rt.GenerateOptions{MaxTokens: want.MaxNewTokens, Speculative: &rt.Speculation{Drafter: d, DraftMax: 3}})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want.Tokens[i], g.Tokens); diff != "" {
					t.Errorf("prompt %d, chained MTP drafts: tokens differ from the HF oracle (-oracle +archc):\n%s", i, diff)
				}
				spec.Add(g.Spec)
			}
			if spec.Drafted <= spec.Drafts {
				t.Errorf("no chained drafts: %+v", spec)
			}
			t.Logf("chained MTP drafts: %+v", spec)
		})
	}
}

// TestMTPRefused: --speculative mtp's compile option on a model without
// an MTP module fails at the plan, naming the model; so does it on a
// family whose module does not build for the config (glm4_moe_lite
// inherits deepseek_v3's, whose layer reads mlp_layer_types[i], one entry
// per decoder layer), which without it still plans.
func TestMTPRefused(t *testing.T) {
	dir := testckpt.FixtureCopyOf(t, "glm4_moe_lite", nil, func(c map[string]any) { c["num_nextn_predict_layers"] = 1 })
	if _, err := driver.NewGraph(dir, driver.PlanOptions{}); err != nil {
		t.Errorf("glm4_moe_lite with an MTP layer in its config, without MTP: %v", err)
	}
	o := driver.PlanOptions{}
	o.Lower.MTP = true
	_, err := driver.NewGraph(dir, o)
	var no *driver.NoMTPError
	if !errors.As(err, &no) || no.Reason == nil || !strings.Contains(err.Error(), "does not build") {
		t.Errorf("glm4_moe_lite with MTP: got %v, want a NoMTPError with its reason", err)
	}
	t.Log(err)
	dir = filepath.Join("testdata", "llama-tied")
	_, err = driver.NewGraph(dir, o)
	if !errors.As(err, &no) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "llama") {
		t.Fatalf("got %v, want a NoMTPError naming %s and its family", err, dir)
	}
}

// TestMTPGGUF: llama.cpp's GGUF convention for MTP layers (the MTP layer
// is an extra block, block_count includes nextn_predict_layers, its
// blk.{n}.nextn.{eh_proj,enorm,hnorm,shared_head_norm} beside the block's
// own tensors), on twins gguf_convert.py writes with such a block (a copy
// of a decoder layer, a random eh_proj): glm4moe (GLM-4.5: the block is
// model.layers.{n} in the checkpoint too) and qwen3next (Qwen3-Next: the
// checkpoint's mtp.layers.0 and mtp.fc, which qwen3_next.arch's gguf
// section renames the block to) and qwen35 (Qwen3.5, which inherits those
// rows). Without MTP the plan names the block's
// tensors unread; with it, reads all but the nextn copies of the embedding
// and head (the twins have none), and greedy output with MTP drafts equals
// the HF oracle's.
func TestMTPGGUF(t *testing.T) {
	for _, name := range []string{"glm4_moe", "qwen3_next", "qwen3_5"} {
		if *onlyFixture != "" && *onlyFixture != name {
			continue
		}
		t.Run(name, func(t *testing.T) { checkMTPGGUF(t, name) })
	}
}

func checkMTPGGUF(t *testing.T, name string) {
	twin := testmodels.GGUFTwin(t, filepath.Join("testdata", name, "model.f32.gguf"))
	plain, err := driver.NewPlan(twin, driver.PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Layers int `json:"num_hidden_layers"`
		Text   struct {
			Layers int `json:"num_hidden_layers"`
		} `json:"text_config"` // a wrapper's (Qwen3.5)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", name, "config.json"))
	if err == nil {
		err = json.Unmarshal(raw, &cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	block := fmt.Sprintf("blk.%d.", max(cfg.Layers, cfg.Text.Layers)) // the MTP block follows the decoder's
	if !plain.HasMTP || !slices.Contains(plain.Unread, block+"nextn.eh_proj.weight") || !slices.Contains(plain.Unread, block+"attn_q.weight") {
		t.Errorf("without MTP: has MTP %v, unread %v; want %s* unread", plain.HasMTP, plain.Unread, block)
	}
	o := driver.PlanOptions{}
	o.Lower.MTP = true
	withMTP, err := driver.NewPlan(twin, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(withMTP.Unread) != 0 || withMTP.Graph.MTP == nil {
		t.Errorf("with MTP: unread %v (want none), MTP module %v", withMTP.Unread, withMTP.Graph.MTP != nil)
	}
	needIREE(t)
	buildKernels(t)
	lo := mtpOptions(t, name)
	m, err := launch.Open(context.Background(), twin, lo)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, err := rt.NewMTPDrafter(m)
	if err != nil {
		t.Fatal(err)
	}
	want := readOracle(t, filepath.Join("testdata", name))
	var spec rt.SpecStats
	for i, prompt := range want.Prompts {
		g, err := m.Generate(context.Background(), prompt, rt.GenerateOptions{MaxTokens: want.MaxNewTokens, Speculative: &rt.Speculation{Drafter: d}}) // chained: up to 3 (an even length where the state is recurrent)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.Tokens[i], g.Tokens); diff != "" {
			t.Errorf("prompt %d: tokens with MTP drafts differ from the HF oracle (-oracle +archc):\n%s", i, diff)
		}
		spec.Add(g.Spec)
	}
	if spec.Drafts == 0 {
		t.Errorf("no MTP drafts: %+v", spec)
	}
	t.Logf("GGUF MTP drafts: %+v", spec)
}
