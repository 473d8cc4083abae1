package dsl_test

import (
	"strings"
	"testing"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/lower"
)

// loopSrc is a two-layer family whose stack runs loops times with shared
// weights (Nanbeige's num_loops): layer i of the loop reads
// model.layers.{i % 2} and applies the top-level model.norm, through
// root(...), after every pass but the last. NORM replaces that weight in
// the error cases.
const loopSrc = `arch looped {
  match model_type "looped"
  config {
    loops: int
  }
  block between(x) { return (i + 1) % 2 == 0 && i + 1 < loops * 2 ? rms_norm(x, NORM, eps: 1e-6) : x }
  x = embedding(tokens, model.embed_tokens, 16, 8)
  for i in range(loops * 2) scope model.layers.{i % 2} {
    q = heads(linear(x, q_proj, 8), 2)
    a = attention(q, heads(linear(x, k_proj, 8), 2), heads(linear(x, v_proj, 8), 2))
    x = between(x + linear(a, o_proj, 8))
  }
  logits = linear(rms_norm(x, model.norm, eps: 1e-6), lm_head, 16)
}
`

func buildLoop(t *testing.T, norm string, loops int64) (*ir.Graph, error) {
	t.Helper()
	f := parseOrFatal(t, "looped.arch", strings.Replace(loopSrc, "NORM", norm, 1))
	if errs := dsl.Check(f, lower.Registry{}); errs != nil {
		return nil, errs[0]
	}
	cfg, err := dsl.EvalConfig(f, map[string]any{"loops": loops})
	if err != nil {
		t.Fatal(err)
	}
	return dsl.Build(f, cfg, lower.Registry{})
}

// TestBuildLoopedStack: a layer loop over loops * layers with the scope
// model.layers.{i % layers} reads each layer's weights once (shared by
// the passes) and gives every pass its own KV cache site; root(model.norm)
// inside the loop is the top-level norm, applied between passes.
func TestBuildLoopedStack(t *testing.T) {
	g, err := buildLoop(t, "root(model.norm)", 3)
	if err != nil {
		t.Fatal(err)
	}
	if g.Sites != 6 {
		t.Errorf("sites %d, want 6 (3 passes of 2 layers)", g.Sites)
	}
	names := map[string]int{}
	for _, w := range g.Weights {
		names[w.Name]++
	}
	for _, w := range []string{"model.layers.0.q_proj.weight", "model.layers.1.o_proj.weight", "model.norm.weight"} {
		if names[w] != 1 {
			t.Errorf("weight %s listed %d times, want once", w, names[w])
		}
	}
	if len(g.Weights) != 1+2*4+1+1 {
		t.Errorf("%d weights, want 11 (embedding, 2 layers of 4 projections, norm, head)", len(g.Weights))
	}
	var norms []int
	for _, n := range g.Nodes {
		if n.Prim == "rms_norm" {
			if n.Module != "model.norm" {
				t.Errorf("rms_norm reads %s, want model.norm", n.Module)
			}
			norms = append(norms, n.Layer)
		}
	}
	if want := []int{1, 3, -1}; len(norms) != 3 || norms[0] != want[0] || norms[1] != want[1] || norms[2] != want[2] {
		t.Errorf("model.norm applied in layers %v, want %v (after passes 1 and 2, then the head)", norms, want)
	}
}

// TestBuildRootErrors: root takes one bare weight path, never a bound
// name or an expression (archc check reports the latter); without root the same path is the loop scope's.
func TestBuildRootErrors(t *testing.T) {
	g, err := buildLoop(t, "model.norm", 2)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range g.Weights {
		found = found || w.Name == "model.layers.1.model.norm.weight"
	}
	if !found {
		t.Errorf("a weight path without root is relative to the loop scope: no model.layers.1.model.norm.weight")
	}
	for _, c := range []struct{ norm, want string }{
		{"root(x)", "x is a bound name"},
		{"root(model.norm + 1)", `unknown name "model"`},
	} {
		_, err := buildLoop(t, c.norm, 2)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.norm, err, c.want)
		}
	}
}
