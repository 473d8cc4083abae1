package dsl_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/lower"
)

// TestBindSameMessage feeds every call-binding error, of primitive, block
// and module calls, to both Check and Build and requires the same message
// at the same position from both: the two share one binder (bind.go), so
// neither accepts a call the other refuses.
func TestBindSameMessage(t *testing.T) {
	cases := []struct {
		name string
		defs string // top-level items: blocks, modules
		call string // the call, bound to y in a layer
		want string // the message
	}{
		{"prim too many", "", `linear(x, mlp.up_proj, 8, true, "linear", 1)`, "linear takes at most 5 arguments"},
		{"prim unknown keyword", "", `linear(x, mlp.up_proj, 8, bais: true)`, `linear has no parameter "bais" (did you mean bias?)`},
		{"prim given twice", "", `linear(x, mlp.up_proj, hidden_size, out: 8)`, `linear: parameter "out" given twice`},
		{"prim given twice by name", "", `linear(x, mlp.up_proj, out: 8, out: 8)`, `linear: parameter "out" given twice`},
		{"prim missing", "", `linear(x, mlp.up_proj)`, `linear: missing argument "out" (scalar)`},
		{"prim tensor for scalar", "", `linear(x, mlp.up_proj, x)`, `linear: argument "out" must be a scalar, got tensor`},
		{"prim scalar for tensor", "", `linear(hidden_size, mlp.up_proj, 8)`, `linear: argument "x" must be a tensor, got a config-time value`},
		{"prim scalar for module", "", `linear(x, hidden_size, 8)`, `linear: argument "weight" must be a weight module, got a config-time value`},
		{"block too many", "block f(a) { return a }", `f(x, x)`, "block f takes 1 arguments"},
		{"block unknown keyword", "block f(a) { return a }", `f(b: x)`, `block f has no parameter "b" (did you mean a?)`},
		{"block given twice", "block f(a) { return a }", `f(x, a: x)`, `block f: parameter "a" given twice`},
		{"block missing", "block f(a, b) { return a + b }", `f(x)`, `block f: missing argument "b"`},
		{"module two inputs", "module up = linear(mlp.up_proj, 8)", `up(x, x)`, `module up takes one positional argument, its input (x); give the others by name`},
		{"module unknown keyword", "module up = linear(mlp.up_proj, 8)", `up(x, bais: true)`, `module up has no parameter "bais" (did you mean bias?)`},
		{"module given twice", "module up = linear(mlp.up_proj, 8)", `up(x, x: x)`, `module up: parameter "x" given twice`},
		{"module missing", "module up = linear(mlp.up_proj)", `up(x)`, `module up: missing argument "out" (scalar)`},
		{"module tensor for scalar", "module up = linear(mlp.up_proj, 8)", `up(x, out: x)`, `module up: argument "out" must be a scalar, got tensor`},
		{"module declared keyword unknown", "module up = linear(mlp.up_proj, 8, bais: true)", `up(x)`, `module up (linear) has no parameter "bais" (did you mean bias?)`},
		{"module declared too many", "module up = linear(mlp.up_proj, 8, true, \"linear\", 1)", `up(x)`, `module up: linear takes at most 5 arguments, the first of them the module's input`},
		{"module declared input", "module up = linear(x: 1, weight: mlp.up_proj, out: 8)", `up(x)`, `module up: "x" is the module's input, given where it is used`},
		{"module override unknown", "module up = linear(mlp.up_proj, 8)\n  module up.bais = true", `up(x)`, `module up.bais: linear has no parameter "bais" (did you mean bias?)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := fmt.Sprintf(`arch t {
  match model_type "t"
  config {
    vocab_size:  int
    hidden_size: int
  }
  %s
  x = embedding(tokens, model.embed_tokens, vocab_size, hidden_size)
  for i in range(1) scope model.layers.{i} {
    y = %s
  }
  logits = linear(x, lm_head, vocab_size)
}
`, tc.defs, tc.call)
			f, err := dsl.Parse("t.arch", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			var checked []string
			for _, e := range dsl.Check(f, lower.Registry{}) {
				checked = append(checked, e.Error())
			}
			cfg, err := dsl.EvalConfig(f, map[string]any{"vocab_size": float64(16), "hidden_size": float64(8)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = dsl.Build(f, cfg, lower.Registry{})
			if err == nil {
				t.Fatalf("Build accepted %s; Check said %q", tc.call, checked)
			}
			built := err.Error()
			if !strings.HasSuffix(built, ": "+tc.want) {
				t.Errorf("Build: %s\nwant message %q", built, tc.want)
			}
			found := false
			for _, c := range checked {
				found = found || c == built
			}
			if !found {
				t.Errorf("Build: %s\nCheck: %q\nwant Check to report Build's error", built, checked)
			}
		})
	}
}
