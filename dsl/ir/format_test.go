package ir_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/archc/archc/dsl/ir"
)

// tinyGraph is tokens → embedding → (loop ends) → linear head.
func tinyGraph() *ir.Graph {
	pos := func(l, c int) lexer.Position { return lexer.Position{Filename: "archs/tiny.arch", Line: l, Column: c} }
	tok := &ir.Node{ID: 0, Prim: "tokens", Name: "tokens", Type: ir.Type{Shape: ir.Shape{ir.Batch, ir.Seq}, DType: ir.I32}, Layer: -1, Site: -1, Pos: pos(1, 1)}
	emb := &ir.Node{ID: 1, Prim: "embedding", Args: []*ir.Node{tok}, Module: "model.embed_tokens", Attrs: map[string]any{"num_embeddings": int64(8), "embedding_dim": int64(4)},
		Type: ir.Type{Shape: ir.Shape{ir.Batch, ir.Seq, 4}, DType: ir.F32}, Layer: -1, Site: -1, Name: "model.embed_tokens", Pos: pos(3, 12)}
	head := &ir.Node{ID: 2, Prim: "softcap", Args: []*ir.Node{emb}, Attrs: map[string]any{"cap": 30.0},
		Type: ir.Type{Shape: ir.Shape{ir.Batch, ir.Seq, 4}, DType: ir.F32}, Layer: -1, Site: -1, Name: "head/softcap", Pos: pos(5, 10)}
	return &ir.Graph{Arch: "tiny", File: "archs/tiny.arch", Tokens: tok, Nodes: []*ir.Node{tok, emb, head}, HeadStart: 2, Logits: head,
		Weights: []ir.Weight{{Name: "model.embed_tokens.weight", Shape: []int64{8, 4}, Pos: pos(3, 27)}}}
}

func ExampleGraph_Format() {
	s, err := tinyGraph().Format(ir.FormatOptions{Kind: "prefill"})
	if err != nil {
		panic(err)
	}
	fmt.Print(s)
	// Output:
	// arch tiny (archs/tiny.arch)
	// graph prefill: batch = 1, seq = the chunk's tokens; from %2 on (after the layer loop) seq = 1, the returned position
	// %0 = tokens name=tokens : [1, seq]i32 @tiny.arch:1:1
	// %1 = embedding(%0) module=model.embed_tokens attrs={embedding_dim: 4, num_embeddings: 8} : [1, seq, 4]f32 @tiny.arch:3:12
	// %2 = softcap(%1) name=head/softcap attrs={cap: 30.0} : [1, 1, 4]f32 @tiny.arch:5:10
	// weights:
	//   model.embed_tokens.weight [8 4] @tiny.arch:3:27
	// head_start: 2
	// sites: 0
	// logits: %2
}

// TestFormatKinds: decode binds seq to 1 everywhere and keeps batch; no
// kind keeps both symbols; an unknown kind is an error.
func TestFormatKinds(t *testing.T) {
	g := tinyGraph()
	dec, err := g.Format(ir.FormatOptions{Kind: "decode"})
	if err != nil || !strings.Contains(dec, ": [batch, 1, 4]f32 @tiny.arch:3:12") || !strings.Contains(dec, ": [batch, 1, 4]f32 @tiny.arch:5:10") {
		t.Errorf("decode: %v\n%s", err, dec)
	}
	sym, err := g.Format(ir.FormatOptions{})
	if err != nil || !strings.Contains(sym, ": [batch, seq, 4]f32 @tiny.arch:5:10") || strings.Contains(sym, "graph ") {
		t.Errorf("symbolic: %v\n%s", err, sym)
	}
	if _, err := g.Format(ir.FormatOptions{Kind: "train"}); err == nil || !strings.Contains(err.Error(), `"train"`) {
		t.Errorf("unknown kind: %v", err)
	}
	if got := ir.FormatValue([]any{nil, 2.0, 1e-6, "s", true, int64(3)}); got != `[none, 2.0, 1e-06, "s", true, 3]` {
		t.Errorf("FormatValue = %s", got)
	}
}
