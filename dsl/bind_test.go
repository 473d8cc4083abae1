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
		{"prim too many", "", `linear(x, mlp.up_proj, 8, true, "linear", 1)`, "linear takes at most 5 arguments, got 6"},
		{"prim unknown keyword", "", `linear(x, mlp.up_proj, 8, bais: true)`, `linear has no parameter "bais" (did you mean bias?)`},
		{"prim given twice", "", `linear(x, mlp.up_proj, hidden_size, out: 8)`, `linear: parameter "out" given twice`},
		{"prim given twice by name", "", `linear(x, mlp.up_proj, out: 8, out: 8)`, `linear: parameter "out" given twice`},
		{"prim missing", "", `linear(x, mlp.up_proj)`, `linear: missing argument "out" (scalar)`},
		{"prim tensor for scalar", "", `linear(x, mlp.up_proj, x)`, `linear: argument "out" must be a scalar, got tensor`},
		{"prim scalar for tensor", "", `linear(hidden_size, mlp.up_proj, 8)`, `linear: argument "x" must be a tensor, got a config-time value`},
		{"prim scalar for module", "", `linear(x, hidden_size, 8)`, `linear: argument "weight" must be a weight module, got a config-time value`},
		{"block too many", "block f(a) { return a }", `f(x, x)`, "block f takes 1 argument, got 2"},
		{"block unknown keyword", "block f(a) { return a }", `f(b: x)`, `block f has no parameter "b" (did you mean a?)`},
		{"block given twice", "block f(a) { return a }", `f(x, a: x)`, `block f: parameter "a" given twice`},
		{"block missing", "block f(a, b) { return a + b }", `f(x)`, `block f: missing argument "b"`},
		{"module two inputs", "module up = linear(mlp.up_proj, 8)", `up(x, x)`, `module up takes one positional argument, its input (x), got 2; give the others by name`},
		{"module unknown keyword", "module up = linear(mlp.up_proj, 8)", `up(x, bais: true)`, `module up has no parameter "bais" (did you mean bias?)`},
		{"module given twice", "module up = linear(mlp.up_proj, 8)", `up(x, x: x)`, `module up: parameter "x" given twice`},
		{"module missing", "module up = linear(mlp.up_proj)", `up(x)`, `module up: missing argument "out" (scalar)`},
		{"module tensor for scalar", "module up = linear(mlp.up_proj, 8)", `up(x, out: x)`, `module up: argument "out" must be a scalar, got tensor`},
		{"module declared keyword unknown", "module up = linear(mlp.up_proj, 8, bais: true)", `up(x)`, `module up (linear) has no parameter "bais" (did you mean bias?)`},
		{"module declared too many", "module up = linear(mlp.up_proj, 8, true, \"linear\", 1)", `up(x)`, `module up: linear takes at most 5 arguments, the first of them the module's input, got 6`},
		{"module declared input", "module up = linear(x: 1, weight: mlp.up_proj, out: 8)", `up(x)`, `module up: "x" is the module's input, given where it is used`},
		{"module override unknown", "module up = linear(mlp.up_proj, 8)\n  module up.bais = true", `up(x)`, `module up.bais: linear has no parameter "bais" (did you mean bias?)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, checked := checkCall(t, tc.defs, tc.call)
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

// TestSurplusArgumentsOnce: a call with several surplus positional
// arguments is one diagnostic from Check, at the first surplus argument,
// saying how many the call gave (it was one per surplus argument, none
// saying how many were given).
func TestSurplusArgumentsOnce(t *testing.T) {
	cases := []struct {
		name string
		defs string // top-level items: blocks, modules
		call string // the call, bound to y in a layer
		want string // the one diagnostic
	}{
		{"prim", "", `activation(x, "silu", 3, 4)`, `t.arch:10:31: activation takes 2 arguments, got 4`},
		{"prim optional", "", `linear(x, mlp.up_proj, 8, true, "linear", 1, 2)`, `t.arch:10:51: linear takes at most 5 arguments, got 7`},
		{"block", "block f(a) { return a }", `f(x, x, x)`, `t.arch:10:14: block f takes 1 argument, got 3`},
		{"module", "module up = linear(mlp.up_proj, 8)", `up(x, x, x)`, `t.arch:10:15: module up takes one positional argument, its input (x), got 3; give the others by name`},
		{"module declared", "module up = linear(mlp.up_proj, 8, true, \"linear\", 1, 2)", `up(x)`, `t.arch:7:54: module up: linear takes at most 5 arguments, the first of them the module's input, got 7`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, checked := checkCall(t, tc.defs, tc.call)
			if len(checked) != 1 || checked[0] != tc.want {
				t.Errorf("Check: %q\nwant [%q]", checked, tc.want)
			}
		})
	}
}

// checkCall parses a one-layer family whose layer binds y to call, with
// defs (blocks, modules) at the top level, and returns the file and
// Check's diagnostics. The call sits on line 10, the defs on line 7.
func checkCall(t *testing.T, defs, call string) (*dsl.File, []string) {
	t.Helper()
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
`, defs, call)
	f, err := dsl.Parse("t.arch", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var checked []string
	for _, e := range dsl.Check(f, lower.Registry{}) {
		checked = append(checked, e.Error())
	}
	return f, checked
}
