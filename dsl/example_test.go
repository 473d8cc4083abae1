package dsl_test

import (
	"fmt"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/lower"
)

// Parse reports the first syntax error with its position.
func ExampleParse() {
	_, err := dsl.Parse("tiny.arch", []byte(`arch tiny {
  match model_type "tiny"
  logits = linear(x, lm_head 32)
}`))
	fmt.Println(err)
	// Output:
	// tiny.arch:3:30: unexpected token "32" (expected ")")
}

// Check reports every problem it finds in a parsed file, sorted by
// position, with a did-you-mean hint where a close name exists.
func ExampleCheck() {
	src := `arch tiny {
  match model_type "tiny"
  config {
    vocab_size:  int
    hidden_size: int
  }
  x = embedding(tokens, model.embed_tokens, vocab_size, hidden_size)
  x = rms_nrom(x, model.norm, eps: 1e-6)
  for i in range(2) scope model.layers.{i} {}
  logits = linear(x, lm_head, vocab_size, bais: true)
}`
	f, err := dsl.Parse("tiny.arch", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range dsl.Check(f, lower.Registry{}) {
		fmt.Println(e)
	}
	// Output:
	// tiny.arch:8:7: unknown primitive "rms_nrom" (did you mean rms_norm?)
	// tiny.arch:10:43: linear has no parameter "bais" (did you mean bias?)
}

// Inspect visits every node under a node in source order; returning false
// skips a node's children. Here: the calls of each block, outermost first,
// without looking inside module declarations.
func ExampleInspect() {
	f, err := dsl.Parse("tiny.arch", []byte(`arch tiny extends llama {
  module up = linear(mlp.up_proj, intermediate_size)
  block mlp(h) { return down_proj(act(up(h)) * up(h, bias: false)) }
  block head(x) { return linear(norm(x, model.norm), lm_head, vocab_size) }
}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	dsl.Inspect(f, func(n dsl.Node) bool {
		switch n := n.(type) {
		case *dsl.Module:
			return false
		case *dsl.Block:
			var calls []string
			dsl.Inspect(n, func(n dsl.Node) bool {
				if c, ok := n.(*dsl.Call); ok {
					calls = append(calls, c.Name)
				}
				return true
			})
			fmt.Println(n.Name+":", calls)
			return false
		}
		return true
	})
	// Output:
	// mlp: [down_proj act up up]
	// head: [linear norm]
}
