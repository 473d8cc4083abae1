package rt

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"sync"

	"github.com/archc/archc/formats/abi"
	"github.com/archc/archc/rt/chat"
	"github.com/archc/archc/rt/vision"
)

// ImageError is an error about one image of a request: Index is its
// place among the request's images (0-based), so that a server can name
// the field it came from.
type ImageError struct {
	Index int
	Err   error
}

func (e *ImageError) Error() string { return fmt.Sprintf("image %d: %v", e.Index, e.Err) }
func (e *ImageError) Unwrap() error { return e.Err }

// Images are a prompt's images made ready for a vision-language model:
// each one's tile grid (for its placeholder's expansion, vision.ExpandPrompt)
// and the encoder rows of all their tiles in order (the processor's
// order: each image's tiles row-major, then its global image).
type Images struct {
	Grids   []vision.Grid
	Encoded *Encoded
	// Tiles counts the tiles encoded and Cached those whose rows came
	// from the cache (the same tile seen before, e.g. a second turn).
	Tiles, Cached int
}

// EncodeImages decodes each image (any format vision.Decode reads, within
// lim), preprocesses it with proc (the model's processor, equal to its
// Hugging Face processor's PIL backend) and runs every tile through the
// model's image encoder, reusing the rows of a tile seen before (by its
// content). Errors: the model has no image encoder, or an *ImageError for
// an image that does not decode or preprocess, or a worker failure.
func (m *Model) EncodeImages(ctx context.Context, proc *vision.Processor, images [][]byte, lim vision.Limits) (*Images, error) {
	if len(m.Program.Encoders) == 0 {
		return nil, fmt.Errorf("model %s reads text only (its family %s declares no image encoder: images for it are not supported): send no images", m.Program.Dir, m.Program.Family)
	}
	enc := m.Program.Encoders[0]
	out := &Images{Encoded: &Encoded{Rows: make([][]float32, len(m.Program.Encoders))}}
	var rows []float32
	for i, data := range images {
		img, err := vision.Decode(data, lim)
		if err != nil {
			return nil, &ImageError{Index: i, Err: err}
		}
		px, _, err := proc.Preprocess(img)
		if err != nil {
			return nil, &ImageError{Index: i, Err: err}
		}
		if px.Patches != nil { // Qwen2-VL: the image's patch rows through a variable-size encoder
			r, hit, err := m.encodePatches(ctx, enc, proc, px)
			if err != nil {
				return nil, &ImageError{Index: i, Err: err}
			}
			out.Tiles++
			if hit {
				out.Cached++
			}
			rows = append(rows, r...)
			out.Grids = append(out.Grids, proc.GridOf(px))
			continue
		}
		tile := 3 * px.Height * px.Width
		if want := enc.Input; len(want) != 4 || want[1] != 3 || int(want[2]) != px.Height || int(want[3]) != px.Width {
			return nil, &ImageError{Index: i, Err: fmt.Errorf("the processor makes tiles of 3×%d×%d, the model's encoder takes %v: the processor config does not fit the model", px.Height, px.Width, want)}
		}
		for t := range px.Tiles {
			r, hit, err := m.encodeCached(ctx, enc.Name, px.PixelValues[t*tile:(t+1)*tile])
			if err != nil {
				return nil, err
			}
			out.Tiles++
			if hit {
				out.Cached++
			}
			rows = append(rows, r...)
		}
		out.Grids = append(out.Grids, proc.GridOf(px))
	}
	out.Encoded.Rows[0] = rows
	return out, nil
}

// encodeCacheTiles bounds the encoder-row cache (tiles): a few images'
// worth (SmolVLM splits an image into up to 17 tiles).
const encodeCacheTiles = 256

// encodeCache holds encoder rows by the SHA-256 of the tile's pixels,
// evicting the oldest entry past encodeCacheTiles.
type encodeCache struct {
	mu    sync.Mutex
	rows  map[[32]byte][]float32
	order [][32]byte
}

// encodeCached is Encode with the rows of a tile seen before taken from
// the cache; hit says so.
func (m *Model) encodeCached(ctx context.Context, name string, tile []float32) ([]float32, bool, error) {
	return m.cachedRows(name, tile, func() ([]float32, error) { return m.Encode(ctx, name, tile) })
}

// encodePatches runs one image's patch rows (px.Patches, Qwen2-VL's
// pixel_values, with its grid px.GridTHW) through the variable-size
// encoder enc with each patch's (row, column) (vision.QwenPatchPositions),
// reusing the rows of an image seen before; hit says so. An image of
// several tiles (px.TileGrids: LFM2-VL's tiles and thumbnail) runs tile by
// tile, each with its own grid, hit when every tile's rows were cached.
func (m *Model) encodePatches(ctx context.Context, enc abi.Encoder, proc *vision.Processor, px *vision.Idefics3Output) ([]float32, bool, error) {
	if enc.Sizes == nil || len(enc.Extra) != 1 {
		return nil, false, fmt.Errorf("the processor makes patch rows, the model's encoder %s takes fixed tiles %v: the processor config does not fit the model", enc.Name, enc.Input)
	}
	n := len(px.Patches) / max(px.PatchDim, 1)
	if len(enc.Input) != 3 || int(enc.Input[2]) != px.PatchDim {
		return nil, false, fmt.Errorf("the processor makes patches of %d values, the model's encoder takes %v: the processor config does not fit the model", px.PatchDim, enc.Input)
	}
	merge := proc.PatchMerge()
	if s := enc.Sizes[0]; s.Rows <= 0 || s.Size != s.Rows*int64(merge*merge) {
		return nil, false, fmt.Errorf("the processor's merge_size is %d (%d patches an image token), the model's encoder %s makes %d rows of %d patches (spatial_merge_size %s): the processor config does not fit the model", merge, merge*merge, enc.Name, s.Rows, s.Size, mergeOf(s))
	}
	if px.TileGrids != nil { // LFM2-VL: each tile (and thumbnail) its own run, hit when all were cached
		var rows []float32
		hits, at := 0, 0
		for _, g := range px.TileGrids {
			k := g[0] * g[1] * g[2]
			if at+k > n {
				return nil, false, fmt.Errorf("the processor's tile grids %v hold more than its %d patch rows", px.TileGrids, n)
			}
			tile, pos := px.Patches[at*px.PatchDim:(at+k)*px.PatchDim], vision.QwenPatchPositions(g, merge)
			r, hit, err := m.cachedRows(enc.Name, tile, func() ([]float32, error) { return m.EncodeSized(ctx, enc.Name, k, tile, pos) })
			if err != nil {
				return nil, false, err
			}
			if hit {
				hits++
			}
			rows, at = append(rows, r...), at+k
		}
		return rows, hits == len(px.TileGrids), nil
	}
	pos := vision.QwenPatchPositions(px.GridTHW, merge)
	return m.cachedRows(enc.Name, px.Patches, func() ([]float32, error) {
		return m.EncodeSized(ctx, enc.Name, n, px.Patches, pos)
	})
}

// mergeOf is the merge window's side an encoder size implies
// (Size/Rows = side²), or "unknown" where it is no square.
func mergeOf(s abi.EncoderSize) string {
	if s.Rows > 0 && s.Size%s.Rows == 0 {
		k := s.Size / s.Rows
		for m := int64(1); m*m <= k; m++ {
			if m*m == k {
				return fmt.Sprint(m)
			}
		}
	}
	return "unknown"
}

// cachedRows returns the rows of key's content (name and values) from the
// encode cache, or computes them with run and keeps them.
func (m *Model) cachedRows(name string, values []float32, run func() ([]float32, error)) ([]float32, bool, error) {
	h := sha256.New()
	h.Write([]byte(name))
	var b [4]byte
	for _, v := range values {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		h.Write(b[:])
	}
	var key [32]byte
	copy(key[:], h.Sum(nil))
	c := &m.encodes
	c.mu.Lock()
	r, ok := c.rows[key]
	c.mu.Unlock()
	if ok {
		return r, true, nil
	}
	r, err := run()
	if err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rows == nil {
		c.rows = map[[32]byte][]float32{}
	}
	if _, ok := c.rows[key]; !ok {
		c.rows[key] = r
		c.order = append(c.order, key)
		if len(c.order) > encodeCacheTiles {
			delete(c.rows, c.order[0])
			c.order = c.order[1:]
		}
	}
	return r, false, nil
}

// EncodeChatImages renders a conversation whose messages carry image
// parts (chat.Part) with the chat template and add_generation_prompt,
// replaces the template's image placeholders, in order, with each image's
// expansion (proc, grids from EncodeImages) and tokenizes the result with
// the tokenizer's special tokens, as a Hugging Face processor called on
// the rendered text does. Errors: no chat template, a template error, a
// placeholder count that is not the image count (a template that writes
// no image placeholder among them), a tokenizer error.
func (t *Text) EncodeChatImages(msgs []chat.Message, proc *vision.Processor, grids []vision.Grid) ([]int32, error) {
	if t.ChatTemplate == "" {
		return nil, fmt.Errorf("the model has no chat template (tokenizer_config.json chat_template, chat_template.jinja or GGUF tokenizer.chat_template)")
	}
	text, err := chat.Render(t.ChatTemplate, t.Messages(msgs), t.chatOptions())
	if err != nil {
		return nil, err
	}
	if text, err = proc.Expand(text, grids); err != nil {
		return nil, fmt.Errorf("%w (the chat template writes %s for each image part)", err, proc.Placeholder())
	}
	return t.Tokenizer.Encode(text, true)
}

// ImagePositions sets enc's M-RoPE positions for prompt (a model whose
// RoPE is multimodal, Program.MRoPE; nothing otherwise): HF's
// get_rope_index over the prompt's ids and its images' grids (grids, from
// EncodeImages, in prompt order), with the processor's merge size and the
// tokenizer's "<|vision_start|>" (-1 when it has none: not checked).
// Errors: the tokenizer's image token (proc.RowToken) is not the token
// the model merges image rows at (its config's image_token_id, for any
// model with an encoder); a run of image placeholders that does not match
// its grid.
func (m *Model) ImagePositions(prompt []int32, enc *Encoded, grids []vision.Grid, proc *vision.Processor, text *Text) error {
	if proc != nil && text != nil && text.Tokenizer != nil && len(m.Program.Encoders) > 0 {
		tok, ph := proc.RowToken(), m.Program.Encoders[0].Placeholder
		if id, ok := text.Tokenizer.TokenID(tok); ok && id != ph {
			return fmt.Errorf("the model merges image rows at token id %d (its config's image_token_id), but the tokenizer's %s is %d: give the model's own config.json and tokenizer (or set image_token_id to %d)", ph, tok, id, id)
		}
	}
	if !m.Program.MRoPE || enc == nil || proc == nil || proc.Qwen == nil || len(m.Program.Encoders) == 0 {
		return nil
	}
	thw := make([][3]int, len(grids))
	for i, g := range grids {
		thw[i] = g.THW
	}
	start := int32(-1)
	if text != nil && text.Tokenizer != nil {
		if id, ok := text.Tokenizer.TokenID(vision.VisionStart); ok {
			start = id
		}
	}
	pos, delta, err := vision.MRoPEPositions(prompt, thw, m.Program.Encoders[0].Placeholder, start, proc.Qwen.MergeSize)
	if err != nil {
		return err
	}
	enc.Positions, enc.RoPEDelta = pos, delta
	return nil
}
