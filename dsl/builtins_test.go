package dsl_test

import (
	"strings"
	"testing"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/lower"
)

// TestBlockBuiltins: len, int and str reach blocks, on config-time values
// (issue 30: `len()` worked in config expressions only).
func TestBlockBuiltins(t *testing.T) {
	src := `arch b {
  match model_type "b"
  config {
    vocab_size:  int
    hidden_size: int
    widths:      list = [4, 8, 12]
  }
  block width(i) { return widths[len(widths) - 1 - i] * int(hidden_size / 8) }
  x = embedding(tokens, model.embed_tokens, vocab_size, hidden_size)
  for i in range(len(widths)) scope model.layers.{i} {
    x = linear(x, proj, width(i))
    x = linear(x, back, hidden_size)
  }
  logits = linear(x, lm_head, vocab_size)
}
`
	f, err := dsl.Parse("b.arch", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if errs := dsl.Check(f, lower.Registry{}); errs != nil {
		t.Fatalf("check: %v", errs)
	}
	cfg, err := dsl.EvalConfig(f, map[string]any{"vocab_size": int64(16), "hidden_size": int64(16)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := dsl.Build(f, cfg, lower.Registry{})
	if err != nil {
		t.Fatal(err)
	}
	var outs []int64
	for _, n := range g.Nodes {
		for _, w := range n.Weights {
			if strings.HasSuffix(w.Name, ".proj.weight") {
				outs = append(outs, w.Shape[0])
			}
		}
	}
	// width(i) = widths[2 - i] * 2: 24, 16, 8 for layers 0, 1, 2.
	if len(outs) != 3 || outs[0] != 24 || outs[1] != 16 || outs[2] != 8 {
		t.Errorf("proj widths = %v, want [24 16 8]", outs)
	}
}
