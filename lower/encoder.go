package lower

import (
	"fmt"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/formats/abi"
)

// DefaultEncoderSizes are the sizes a variable-size encoder is compiled
// for when Options.EncoderSizes is unset, in its rows (Qwen2-VL: 14×14
// patches): 256 patches is a 224×224 image (64 image tokens), 1024 a
// 448×448 one (256 tokens), 5120 the most Qwen2VLImageProcessor's default
// max_pixels (28·28·1280) gives, e.g. 1344×672 (1280 tokens). Each size is
// 4–5× the last, so an input pads to at most 5× its rows (the rows cost
// linearly in the tower's projections, quadratically in its attention:
// 5120 rows hold 100 MiB of scores per head), in three entry points. A
// larger image (a checkpoint whose processor allows more pixels) is
// refused naming the limit; Options.EncoderSizes (infer's --image-sizes)
// raises it.
var DefaultEncoderSizes = []int64{256, 1024, 5120}

// MaxEncoderSize bounds a variable-size encoder's sizes: 65536 patches is
// Qwen2-VL's published max_pixels (12845056) in 14-pixel patches. Every
// image runs padded to a size, and the encoder's attention holds size²
// scores per head.
const MaxEncoderSize = 65536

// lowerEncoder emits the entry points of an encoder graph
// (dsl.BuildEncoder): encode_<name> (abi.EncodeName), its inputs in (one
// tile [1, C, H, W] f32, and any others), its rows [N, width] f32 out;
// for a variable-size encoder one encode_<name>_<size>
// (abi.EncodeSizeName) per size (ir.Graph.Sizes), taking the real row
// count n i32 after its inputs, which the encoder's attention reads
// (fn.rows: keys past n are masked). The encoder's shapes are concrete
// and it holds no state; its position_embedding reads positions 0..N−1
// of the rows it is given.
func lowerEncoder(m *codegen.Module, e *ir.Graph, opts Options, globals map[string]codegen.Global) error {
	if e.Sizes == nil {
		return lowerEncoderAt(m, e, abi.EncodeName(e.Encoder), false, opts, globals)
	}
	for _, g := range e.Sizes {
		if err := lowerEncoderAt(m, g, abi.EncodeSizeName(g.Encoder, g.Size), true, opts, globals); err != nil {
			return err
		}
	}
	return nil
}

// lowerEncoderAt emits one entry point name of encoder graph e; sized:
// it takes the real row count last.
func lowerEncoderAt(m *codegen.Module, e *ir.Graph, name string, sized bool, opts Options, globals map[string]codegen.Global) error {
	var args []codegen.Type
	for _, in := range append([]*ir.Node{e.Tokens}, e.Inputs...) {
		args = append(args, codegen.T(string(in.Type.DType), concrete(in.Type.Shape)...))
	}
	if sized {
		args = append(args, codegen.T("i32"))
	}
	fn := m.NewFunc(name, args...)
	f := newFn(fn, e, opts, globals, &cacheLayout{site: map[int][]cacheEntry{}, states: &stateLayout{entry: map[stateKey]cacheEntry{}}}, 1, 1)
	for i, in := range e.Inputs {
		f.vals[in] = fn.Args[1+i]
	}
	if sized {
		f.rows = fn.Args[len(fn.Args)-1]
	}
	out := f.run(fn.Args[0])
	if err := fn.Err(); err != nil {
		return err
	}
	fn.Return(f.reshape(out, out.Type.Shape[1], out.Type.Shape[2]))
	return fn.Err()
}

// concrete is a concrete shape as int64s.
func concrete(s ir.Shape) []int64 {
	out := make([]int64, len(s))
	for i, d := range s {
		out[i] = int64(d)
	}
	return out
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
		t := e.Logits.Type.Shape
		enc := abi.Encoder{Name: e.Encoder, Input: concrete(e.Tokens.Type.Shape), Rows: int64(t[1]), Width: int64(t[2]), Placeholder: id, Blocks: blocksOf(g, id)}
		for _, x := range e.Inputs {
			enc.Extra = append(enc.Extra, abi.EncoderInput{Name: x.Name, Shape: concrete(x.Type.Shape), DType: string(x.Type.DType)})
		}
		for _, s := range e.Sizes {
			for _, x := range append([]*ir.Node{s.Tokens}, s.Inputs...) {
				if len(x.Type.Shape) < 2 || int64(x.Type.Shape[1]) != s.Size {
					return nil, fmt.Errorf("%s: encoder %s's input %s is %s at size %d: a variable-size encoder's inputs take the size as their first dimension", x.Pos, e.Encoder, x.Name, x.Type, s.Size)
				}
			}
			enc.Sizes = append(enc.Sizes, abi.EncoderSize{Size: s.Size, Rows: int64(s.Logits.Type.Shape[1])})
		}
		out = append(out, enc)
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
// encoder input in: the masked_scatter calls reading it, each masked by
// eq(tokens, full_like(tokens, ID)) with one ID (a family may merge an
// encoder's rows more than once: Qwen3-VL's deepstack features after the
// first decoder layers, at the image tokens again).
func placeholder(g *ir.Graph, in *ir.Node) (int32, error) {
	var first *ir.Node
	var id int32
	for _, n := range g.Nodes {
		if n.Prim != "masked_scatter" || n.Args[2] != in {
			continue
		}
		v, ok := tokensEq(g, n.Args[1])
		if !ok {
			return 0, fmt.Errorf("%s: masked_scatter of encoder %s: the mask must be the tokens compared with one id (`tokens == image_token_id`), so that the runtime knows where the rows go", n.Pos, in.Name)
		}
		if first != nil && v != id {
			return 0, fmt.Errorf("%s: masked_scatter of encoder %s at the tokens == %d, but %s merges it at the tokens == %d: an encoder's rows have one placeholder", n.Pos, in.Name, v, first.Pos, id)
		}
		if first == nil {
			first, id = n, v
		}
	}
	if first == nil {
		return 0, fmt.Errorf("%s: encoder %s is never merged into the decoder: use masked_scatter(x, tokens == image_token_id, %s)", in.Pos, in.Name, in.Name)
	}
	return id, nil
}
