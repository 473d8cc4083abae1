package dsl_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/lower"
)

const parentSrc = `arch base {
  match model_type "base"
  config {
    vocab_size:  int
    hidden_size: int
    eps:         float = 1e-6
  }
  block norm(x, w) { return rms_norm(x, w, eps: eps) }
  block head(x) { return linear(norm(x, model.norm), lm_head, vocab_size) }
  x = embedding(tokens, model.embed_tokens, vocab_size, hidden_size)
  logits = head(x)
}
`

const childSrc = `arch child extends base {
  match model_type "child"
  config {
    eps:   float = 1e-5
    extra: int   = 3
  }
  block norm(x, w) { return rms_norm_1p(x, w, eps: eps) }
}
`

func parseOrFatal(t *testing.T, name, src string) *dsl.File {
	t.Helper()
	f, err := dsl.Parse(name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestResolveExtends(t *testing.T) {
	parent := parseOrFatal(t, "base.arch", parentSrc)
	child := parseOrFatal(t, "child.arch", childSrc)
	files := map[string]*dsl.File{"base": parent}
	lookup := func(name string) (*dsl.File, error) {
		if f, ok := files[name]; ok {
			return f, nil
		}
		return nil, fmt.Errorf("no family %q", name)
	}
	f, err := dsl.Resolve(child, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if errs := dsl.Check(f, lower.Registry{}); errs != nil {
		t.Fatalf("merged file does not check: %v", errs)
	}
	if got := dsl.ModelTypes(f); len(got) != 1 || got[0] != "child" {
		t.Errorf("match clauses = %v, want only the child's", got)
	}
	cfg, err := dsl.EvalConfig(f, map[string]any{"vocab_size": int64(16), "hidden_size": int64(8)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg["eps"] != 1e-5 || cfg["extra"] != int64(3) {
		t.Errorf("config = %v, want the child's eps default and its new field", cfg)
	}
	g, err := dsl.Build(f, cfg, lower.Registry{})
	if err != nil {
		t.Fatal(err)
	}
	var prims []string
	for _, n := range g.Nodes {
		prims = append(prims, n.Prim)
	}
	if got := strings.Join(prims, " "); got != "tokens embedding rms_norm_1p linear" {
		t.Errorf("nodes = %q: the parent's dataflow must call the child's norm block", got)
	}

	// Errors: an unknown parent and a cycle.
	orphan := parseOrFatal(t, "orphan.arch", strings.Replace(childSrc, "extends base", "extends nobody", 1))
	if _, err := dsl.Resolve(orphan, lookup); err == nil || !strings.Contains(err.Error(), `orphan.arch:1:1: arch child extends nobody`) {
		t.Errorf("unknown parent: got %v", err)
	}
	files["base"] = parseOrFatal(t, "base.arch", strings.Replace(parentSrc, "arch base {", "arch base extends child {", 1))
	files["child"] = child
	if _, err := dsl.Resolve(child, lookup); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("cycle: got %v", err)
	}
}

func TestParseNestingLimit(t *testing.T) {
	src := "arch deep {\n  logits = " + strings.Repeat("(", 300) + "x" + strings.Repeat(")", 300) + "\n}\n"
	_, err := dsl.Parse("deep.arch", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "deep.arch:2:") || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("got %v, want a positioned nesting error", err)
	}
}
