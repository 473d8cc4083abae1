package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/formats/abi"
)

// lowerEncoder emits encode_<name> (abi.EncodeName) for an encoder graph
// (dsl.BuildEncoder): one tile [1, C, H, W] f32 in, its rows [N, width]
// f32 out. The encoder's shapes are concrete and it holds no state; its
// position_embedding reads positions 0..N−1 of the rows it is given.
func lowerEncoder(m *codegen.Module, e *ir.Graph, opts Options, globals map[string]codegen.Global) error {
	in := e.Tokens.Type.Shape
	shape := make([]int64, len(in))
	for i, d := range in {
		shape[i] = int64(d)
	}
	fn := m.NewFunc(abi.EncodeName(e.Encoder), codegen.T("f32", shape...))
	f := newFn(fn, e, opts, globals, &cacheLayout{site: map[int][]cacheEntry{}, states: &stateLayout{entry: map[stateKey]cacheEntry{}}}, 1, 1)
	out := f.run(fn.Args[0])
	if err := fn.Err(); err != nil {
		return err
	}
	fn.Return(f.reshape(out, out.Type.Shape[1], out.Type.Shape[2]))
	return fn.Err()
}

// Encoders describes the encoder entry points Lower emits for g, one per
// encoder in the order of the prefill's extra arguments (abi.Encoder).
// Each encoder's placeholder token comes from the decoder's merge,
// masked_scatter(x, tokens == ID, <encoder>). Errors: an encoder the
// decoder never merges, or merges at a mask that is not the tokens
// compared with one id.
func Encoders(g *ir.Graph) ([]abi.Encoder, error) {
	var out []abi.Encoder
	for i, in := range g.Inputs {
		e := g.Encoders[i]
		id, err := placeholder(g, in)
		if err != nil {
			return nil, err
		}
		shape := make([]int64, len(e.Tokens.Type.Shape))
		for j, d := range e.Tokens.Type.Shape {
			shape[j] = int64(d)
		}
		t := e.Logits.Type.Shape
		out = append(out, abi.Encoder{Name: e.Encoder, Input: shape, Rows: int64(t[1]), Width: int64(t[2]), Placeholder: id, Blocks: blocksOf(g, id)})
	}
	// The runtime keeps the runs of an encoder's placeholders in one
	// prefill chunk, no other blocks: any other mask is refused.
	for _, n := range g.Nodes {
		if n.Prim != "attention" {
			continue
		}
		b := attentionBlocks(n)
		if b == nil {
			continue
		}
		id, ok := tokensEq(g, b)
		known := false
		for _, e := range out {
			known = known || (ok && e.Placeholder == id)
		}
		if !known {
			return nil, fmt.Errorf("%s: attention's blocks must be the tokens compared with an encoder's placeholder id (`tokens == image_token_id`, the id of a masked_scatter merge), whose runs the runtime keeps in one prefill chunk", n.Pos)
		}
	}
	return out, nil
}

// blocksOf reports whether an attention call of g takes blocks: tokens ==
// id (the runs of id's tokens are blocks: abi.Encoder.Blocks).
func blocksOf(g *ir.Graph, id int32) bool {
	for _, n := range g.Nodes {
		if n.Prim != "attention" {
			continue
		}
		if b := attentionBlocks(n); b != nil {
			if v, ok := tokensEq(g, b); ok && v == id {
				return true
			}
		}
	}
	return false
}

// tokensEq reads a node eq(tokens, full_like(tokens, ID)) (either order)
// as ID.
func tokensEq(g *ir.Graph, eq *ir.Node) (int32, bool) {
	if eq.Prim != "eq" {
		return 0, false
	}
	for k, a := range eq.Args {
		other := eq.Args[1-k]
		if a == g.Tokens && other.Prim == "full_like" && other.Args[0] == g.Tokens {
			if v, ok := other.Decoded.(*FullLikeAttrs); ok {
				return int32(v.Value), true
			}
		}
	}
	return 0, false
}

// placeholder finds the token id at whose positions the decoder places
// encoder input in: the masked_scatter reading it, masked by eq(tokens,
// full_like(tokens, ID)).
func placeholder(g *ir.Graph, in *ir.Node) (int32, error) {
	for _, n := range g.Nodes {
		if n.Prim != "masked_scatter" || n.Args[2] != in {
			continue
		}
		if id, ok := tokensEq(g, n.Args[1]); ok {
			return id, nil
		}
		return 0, fmt.Errorf("%s: masked_scatter of encoder %s: the mask must be the tokens compared with one id (`tokens == image_token_id`), so that the runtime knows where the rows go", n.Pos, in.Name)
	}
	return 0, fmt.Errorf("%s: encoder %s is never merged into the decoder: use masked_scatter(x, tokens == image_token_id, %s)", in.Pos, in.Name, in.Name)
}
