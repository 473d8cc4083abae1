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
