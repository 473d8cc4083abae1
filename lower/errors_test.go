package lower_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/lower"
)

// tinyLlama is llama.arch on a config small enough to lower in a few
// milliseconds, with rows of 256 so that every GGUF block format fits.
const tinyLlama = `{"model_type": "llama", "vocab_size": 64, "hidden_size": 256,
	"intermediate_size": 256, "num_hidden_layers": 1, "num_attention_heads": 4,
	"num_key_value_heads": 2, "rope_theta": 10000.0}`

// buildLlama builds llama.arch's graph for tinyLlama.
func buildLlama(t *testing.T) *ir.Graph {
	t.Helper()
	src, err := os.ReadFile("../archs/llama.arch")
	if err != nil {
		t.Fatal(err)
	}
	f, err := dsl.Parse("llama.arch", src)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := dsl.DecodeConfig([]byte(tinyLlama))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := dsl.EvalConfig(f, raw)
	if err != nil {
		t.Fatal(err)
	}
	g, err := dsl.Build(f, cfg, lower.Registry{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func options() lower.Options {
	o := lower.DefaultOptions()
	o.MaxLen = 64
	return o
}

// TestLowerVerifies lowers llama with every weight storage format, with and
// without (stand-in) kernels, and requires a module that passes Verify:
// the storage decoders, kernel dispatches and KV-cache ops, not only the
// f32 path of the golden fixtures, must be well typed.
func TestLowerVerifies(t *testing.T) {
	g := buildLlama(t)
	formats := []string{"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "q5_k", "q6_k"}
	kernels := &lower.Kernels{Bitcode: []byte{0}, Formats: formats, Rows: 8, MaxK: 4096, Target: "test"}
	amx := *kernels
	amx.AMXMinM, amx.AMXRows = 64, 16 // prefill_64 on the AMX entry points, prefill_16 not
	for _, fm := range formats {
		for _, k := range []*lower.Kernels{nil, kernels, &amx} {
			o := options()
			o.WeightDTypes = map[string]string{}
			for _, w := range g.Weights {
				if len(w.Shape) == 2 {
					o.WeightDTypes[w.Name] = fm
				}
			}
			o.Kernels = k
			m, err := lower.Lower(g, o)
			if err != nil {
				t.Fatalf("%s (kernels %v): %v", fm, k != nil, err)
			}
			if err := m.Verify(); err != nil {
				t.Fatalf("%s (kernels %v): %v", fm, k != nil, err)
			}
			text := string(m.Print())
			if k != nil && !strings.Contains(text, "flow.dispatch @archc_kernels") {
				t.Fatalf("%s: no kernel dispatch in the module; the test no longer covers them", fm)
			}
			if k == nil || fm == "f32" {
				continue
			}
			// q, k, v and gate, up read one input: one grouped dispatch
			// each (a format compared by pointer once split every group).
			mm3 := "@archc_kernels::@mm3_" + fm + "["
			if n := strings.Count(text, mm3); n == 0 {
				t.Errorf("%s: no grouped projection (%s) in the module", fm, mm3)
			}
			want := 0
			if k.AMXMinM > 0 {
				want = 1
			}
			for _, d := range []string{"@archc_kernels::@split3[", "@archc_kernels::@mm3x_" + fm + "[", "@archc_kernels::@mmx_" + fm + "["} {
				if got := strings.Count(text, d); (got > 0) != (want > 0) {
					t.Errorf("%s (AMX from %d tokens): %d dispatches of %s", fm, k.AMXMinM, got, d)
				}
			}
		}
	}
}

// TestLowerErrorsCarryPositions: a lowering that disagrees with the shape
// rule, an op the verifier rejects and a graph without a layer loop each
// fail with the .arch position of the node at fault.
func TestLowerErrorsCarryPositions(t *testing.T) {
	find := func(g *ir.Graph, module string) *ir.Node {
		for _, n := range g.Nodes {
			if n.Module == module {
				return n
			}
		}
		t.Fatalf("no node reads %s", module)
		return nil
	}

	// The IR claims a type the lowering does not produce.
	g := buildLlama(t)
	n := find(g, "model.layers.0.self_attn.q_proj")
	n.Type.Shape = ir.Shape{ir.Batch, ir.Seq, 128}
	_, err := lower.Lower(g, options())
	want := fmt.Sprintf("llama.arch:%d:%d: model.layers.0.self_attn.q_proj (prefill_16): linear lowered to tensor<1x16x256xf32>, its shape rule says tensor<1x16x128xf32>", n.Pos.Line, n.Pos.Column)
	if err == nil || err.Error() != want {
		t.Errorf("shape rule mismatch: got %v, want %s", err, want)
	}

	// A weight declared with a shape that does not fit its input: the
	// dot_general is ill-typed, and Verify names the linear node.
	g = buildLlama(t)
	for i, w := range g.Weights {
		if w.Name == "model.layers.0.mlp.down_proj.weight" {
			g.Weights[i].Shape = []int64{256, 128}
		}
	}
	_, err = lower.Lower(g, options())
	if err == nil || !strings.HasPrefix(err.Error(), "llama.arch:59:25: model.layers.0.mlp.down_proj (prefill_16): stablehlo.dot_general: contracting dimension") {
		t.Errorf("ill-typed dot_general: got %v", err)
	}

	// No layer loop: nothing separates the layers from the head.
	g = buildLlama(t)
	g.HeadStart = 0
	_, err = lower.Lower(g, options())
	if err == nil || !strings.HasPrefix(err.Error(), "llama.arch:6:1: arch llama has no decoder-layer loop") {
		t.Errorf("no layer loop: got %v", err)
	}

	// A weight in an unknown storage format is reported where the .arch
	// names it.
	g = buildLlama(t)
	o := options()
	o.WeightDTypes = map[string]string{"model.norm.weight": "q9_9"}
	_, err = lower.Lower(g, o)
	if err == nil || !strings.HasPrefix(err.Error(), "llama.arch:67:27: weight model.norm.weight: unknown storage format") {
		t.Errorf("unknown storage format: got %v", err)
	}
}

// TestAttrErrorAtPosition: a malformed attribute is reported once, by the
// generated decoder, at the .arch position of the call, naming the
// attribute and what it must be.
func TestAttrErrorAtPosition(t *testing.T) {
	src, err := os.ReadFile("../archs/llama.arch")
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(src), "rms_norm(x, weight, eps: rms_norm_eps)", `rms_norm(x, weight, eps: "tiny")`, 1)
	if bad == string(src) {
		t.Fatal("llama.arch no longer calls rms_norm(x, weight, eps: rms_norm_eps); update the test")
	}
	f, err := dsl.Parse("llama.arch", []byte(bad))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := dsl.DecodeConfig([]byte(tinyLlama))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := dsl.EvalConfig(f, raw)
	if err != nil {
		t.Fatal(err)
	}
	_, err = dsl.Build(f, cfg, lower.Registry{})
	want := `llama.arch:34:12: rms_norm: eps must be a number, got "tiny"`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want an error starting %q", err, want)
	}
}
