package rt

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/archc/archc/formats/abi"
	"github.com/archc/archc/formats/tensor"
)

// Encoded is what a prompt with images carries beside its token ids: for
// each of the module's encoders (Program.Encoders, in order), the rows of
// its placeholder tokens among the prompt's tokens, in the order they
// occur, Width f32 each, concatenated (a tile's rows as Encode returns
// them, tile after tile, image after image). A nil Encoded, or no rows for
// an encoder, is a prompt without images.
//
// For a module with multimodal RoPE (Program.MRoPE) Positions holds each
// token's (temporal, height, width) RoPE position ([3][tokens], HF's
// get_rope_index over the prompt's ids and image grids) and RoPEDelta the
// offset of every later position (rope_deltas: the largest position + 1
// − the prompt's length); nil Positions: each token's position is its
// cache position (a prompt without images). mrope.go.
type Encoded struct {
	Rows      [][]float32 // per encoder: [placeholders, Width] f32, row-major
	Positions [3][]int32
	RoPEDelta int64
}

// Encode runs one preprocessed image tile through the module's encoder
// named name (abi.EncodeName): tile is [1, C, H, W] f32 as the encoder's
// Input says (the family's processor's pixel_values of one tile); the
// result is its rows, [Rows, Width] f32. Errors: no such encoder, a tile
// of another size, a worker failure.
func (m *Model) Encode(ctx context.Context, name string, tile []float32) ([]float32, error) {
	e, err := m.encoder(name)
	if err != nil {
		return nil, err
	}
	n := int64(1)
	for _, d := range e.Input {
		n *= d
	}
	if int64(len(tile)) != n {
		return nil, fmt.Errorf("encode %s: a tile of %d values, the encoder takes %v (%d)", name, len(tile), e.Input, n)
	}
	t, err := tensor.FromF32(e.Input, tile)
	if err != nil {
		return nil, err
	}
	return m.encodeCall(ctx, name, abi.EncodeName(name), []tensor.Tensor{t}, e.Rows, e.Width)
}

// encodeCall calls encoder name's entry point fn with args and checks its
// one result is [rows, width] f32.
func (m *Model) encodeCall(ctx context.Context, name, fn string, args []tensor.Tensor, rows, width int64) ([]float32, error) {
	out, err := m.worker.Call(ctx, fn, args)
	if err != nil {
		return nil, err
	}
	if len(out) != 1 {
		return nil, fmt.Errorf("encode %s: worker returned %d results, want 1", name, len(out))
	}
	r, err := out[0].F32()
	if err != nil {
		return nil, err
	}
	if int64(len(r)) != rows*width {
		return nil, fmt.Errorf("encode %s: worker returned %v, want [%d %d]", name, out[0].Shape, rows, width)
	}
	return r, nil
}

// EncodeSized runs n rows through the variable-size encoder named name
// (abi.Encoder.Sizes) in the smallest size that holds them: pixels [n,
// Input[2]] f32 and grid [n, Extra[0] row] i32 (Qwen2-VL: the patch rows
// and each patch's (row, column)), zero-padded to the size, with n last
// (abi.EncodeSizeName); the result is the first n·rows/size rows, [rows,
// Width] f32 row-major. Errors: no such encoder or one of fixed shapes,
// inputs of other widths, more rows than the largest size (naming it and
// the option that raises it), a worker failure.
func (m *Model) EncodeSized(ctx context.Context, name string, n int, pixels []float32, grid []int32) ([]float32, error) {
	e, err := m.encoder(name)
	if err != nil {
		return nil, err
	}
	if e.Sizes == nil || len(e.Extra) != 1 || len(e.Input) != 3 || len(e.Extra[0].Shape) < 2 || e.Extra[0].DType != "i32" {
		return nil, fmt.Errorf("encode %s: not an encoder of variable size over pixels and an index table (inputs %v, %v)", name, e.Input, e.Extra)
	}
	pw := int(e.Input[2])
	gw := 1
	for _, d := range e.Extra[0].Shape[2:] {
		gw *= int(d)
	}
	if n <= 0 || len(pixels) != n*pw || len(grid) != n*gw {
		return nil, fmt.Errorf("encode %s: %d rows of %d pixel values and %d index values, the encoder takes rows of %d and %d", name, n, len(pixels), len(grid), pw, gw)
	}
	var size abi.EncoderSize
	for _, s := range e.Sizes {
		if int64(n) <= s.Size {
			size = s
			break
		}
	}
	if size.Size == 0 {
		return nil, fmt.Errorf("an image of %d patches is larger than the model's largest encoder size, %d patches: send a smaller image, or compile larger sizes (infer's --image-sizes)", n, e.Sizes[len(e.Sizes)-1].Size)
	}
	if int64(n)*size.Rows%size.Size != 0 {
		return nil, fmt.Errorf("encode %s: %d rows do not give whole output rows (%d per %d)", name, n, size.Rows, size.Size)
	}
	px := make([]float32, int(size.Size)*pw)
	copy(px, pixels)
	gd := make([]int32, int(size.Size)*gw)
	copy(gd, grid)
	gshape := append([]int64{1, size.Size}, e.Extra[0].Shape[2:]...)
	a, err := tensor.FromF32([]int64{1, size.Size, int64(pw)}, px)
	if err != nil {
		return nil, err
	}
	b, err := tensor.FromI32(gshape, gd)
	if err != nil {
		return nil, err
	}
	rows, err := m.encodeCall(ctx, name, abi.EncodeSizeName(name, size.Size), []tensor.Tensor{a, b, tensor.ScalarI32(int32(n))}, size.Rows, e.Width)
	if err != nil {
		return nil, err
	}
	return rows[:int64(n)*size.Rows/size.Size*e.Width], nil
}

func (m *Model) encoder(name string) (abi.Encoder, error) {
	var names []string
	for _, e := range m.Program.Encoders {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	if len(names) == 0 {
		return abi.Encoder{}, fmt.Errorf("model %s has no encoder %q: it is a text-only model (its family declares no encoder)", m.Program.Family, name)
	}
	return abi.Encoder{}, fmt.Errorf("model %s has no encoder %q (it has %v)", m.Program.Family, name, names)
}

// placed is the cursor of an Encoded over a prompt's chunks: next[e] is
// the index of encoder e's next row.
type placed struct {
	enc  *Encoded
	next []int
	at   int // the next token's index into enc.Positions
}

// holds reports whether token t takes a row of the cursor.
func (p *placed) holds(encs []abi.Encoder, t int32) bool {
	for i, e := range encs {
		if p.enc != nil && i < len(p.enc.Rows) && len(p.enc.Rows[i]) > 0 && t == e.Placeholder {
			return true
		}
	}
	return false
}

// placeRows verifies that enc holds exactly one row per placeholder token of
// tokens for every encoder (HF raises "Image features and image tokens do
// not match" otherwise) and returns the cursor at its first row.
func (m *Model) placeRows(enc *Encoded, tokens []int32) (*placed, error) {
	encs := m.Program.Encoders
	if err := m.checkPositions(enc, len(tokens)); err != nil {
		return nil, err
	}
	if enc != nil && len(enc.Rows) > len(encs) {
		return nil, fmt.Errorf("prefill: rows for %d encoders, model %s has %d", len(enc.Rows), m.Program.Family, len(encs))
	}
	for i, e := range encs {
		var rows []float32
		if enc != nil && i < len(enc.Rows) {
			rows = enc.Rows[i]
		}
		if len(rows) == 0 {
			continue // no image: the placeholder tokens keep their embeddings
		}
		count := 0
		for _, t := range tokens {
			if t == e.Placeholder {
				count++
			}
		}
		if int64(len(rows)) != int64(count)*e.Width {
			return nil, fmt.Errorf("prefill: %d rows of encoder %s (%d values of width %d) for %d placeholder tokens (id %d) in the prompt: each image tile's rows take one placeholder each", int64(len(rows))/max(e.Width, 1), e.Name, len(rows), e.Width, count, e.Placeholder)
		}
	}
	return &placed{enc: enc, next: make([]int, len(encs))}, nil
}

// positions returns the M-RoPE positions of the cursor's next n tokens
// ([3][n]; none without explicit positions) and advances it.
func (p *placed) positions(n int) [3][]int32 {
	var out [3][]int32
	if p == nil || p.enc == nil || p.enc.Positions[0] == nil {
		return out
	}
	for k, ps := range p.enc.Positions {
		out[k] = ps[p.at:min(len(ps), p.at+n)]
	}
	p.at += n
	return out
}

// args returns a chunk's encoder arguments, [1, bucket, Width] f32 each:
// the next rows at the positions of the placeholder tokens of chunk (the
// first n real ones), zeros elsewhere, and advances the cursor.
// A nil cursor gives zeros (a prompt without images).
func (p *placed) args(encs []abi.Encoder, chunk []int32, bucket int) ([]tensor.Tensor, error) {
	var out []tensor.Tensor
	for i, e := range encs {
		buf := make([]float32, int64(bucket)*e.Width)
		var rows []float32
		if p != nil && p.enc != nil && i < len(p.enc.Rows) {
			rows = p.enc.Rows[i]
		}
		if len(rows) > 0 {
			w := int(e.Width)
			for j, t := range chunk {
				if t == e.Placeholder {
					copy(buf[j*w:(j+1)*w], rows[p.next[i]*w:(p.next[i]+1)*w])
					p.next[i]++
				}
			}
		}
		t, err := tensor.FromF32([]int64{1, int64(bucket), e.Width}, buf)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// CheckEncoded reports whether enc fits prompt: rows for the module's
// encoders only, each exactly one per placeholder token (placeRows's
// errors); a nil enc always fits.
func (m *Model) CheckEncoded(prompt []int32, enc *Encoded) error {
	_, err := m.placeRows(enc, prompt)
	return err
}

// EncodedFrom is enc for tokens[k:]: each encoder's rows after those of
// its placeholders in tokens[:k] (a prompt whose first k tokens are already
// in the cache). Nil for a nil enc.
func (m *Model) EncodedFrom(enc *Encoded, tokens []int32, k int) *Encoded {
	if enc == nil || k == 0 {
		return enc
	}
	out := &Encoded{Rows: make([][]float32, len(enc.Rows)), RoPEDelta: enc.RoPEDelta}
	for ax, p := range enc.Positions {
		if p != nil {
			out.Positions[ax] = p[min(len(p), k):]
		}
	}
	for i, rows := range enc.Rows {
		if i >= len(m.Program.Encoders) || len(rows) == 0 {
			continue
		}
		e := m.Program.Encoders[i]
		skip := 0
		for _, t := range tokens[:k] {
			if t == e.Placeholder {
				skip++
			}
		}
		out.Rows[i] = rows[min(len(rows), skip*int(e.Width)):]
	}
	return out
}

// PositionKeys gives each position of prompt the key of the encoder row
// enc places there (FNV-1a of the row's float32 bits, never 0), 0 where a
// token keeps its own embedding; nil when enc places no rows. Two prompts
// whose tokens and keys agree up to a position hold the same KV cache up
// to it: the engine reuses a prefix through image positions only so (a
// second turn about the same image).
func (m *Model) PositionKeys(prompt []int32, enc *Encoded) []uint64 {
	if enc == nil {
		return nil
	}
	var keys []uint64
	for i, rows := range enc.Rows {
		if i >= len(m.Program.Encoders) || len(rows) == 0 {
			continue
		}
		if keys == nil {
			keys = make([]uint64, len(prompt))
		}
		e := m.Program.Encoders[i]
		w, next := int(e.Width), 0
		for p, t := range prompt {
			if t != e.Placeholder || (next+1)*w > len(rows) {
				continue
			}
			h := fnv.New64a()
			var b [4]byte
			for _, v := range rows[next*w : (next+1)*w] {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
				h.Write(b[:])
			}
			keys[p] = h.Sum64() | 1
			next++
		}
	}
	return keys
}

// PrefillChunkEncoded is PrefillChunk for a prompt with images: enc holds
// the rows of the placeholder tokens among tokens (EncodedFrom gives them
// for the rest of a prompt). Errors as PrefillChunk's and CheckEncoded's.
func (m *Model) PrefillChunkEncoded(ctx context.Context, slot int, tokens []int32, start int, enc *Encoded) ([]float32, int, error) {
	if len(tokens) == 0 {
		return nil, 0, fmt.Errorf("prefill: no tokens")
	}
	if err := m.checkTokens(tokens, start); err != nil {
		return nil, 0, err
	}
	if err := m.checkSlots([]int{slot}); err != nil {
		return nil, 0, err
	}
	rows, err := m.placeRows(enc, tokens)
	if err != nil {
		return nil, 0, err
	}
	total := start + len(tokens)
	if err := m.refresh(ctx, slot, start, total); err != nil {
		return nil, 0, err
	}
	return m.prefillChunk(ctx, slot, tokens, start, total, rows)
}
