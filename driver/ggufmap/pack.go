package ggufmap

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/archc/archc/driver/weights"
	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/formats/tensor"
)

// packVersion changes whenever Pack's output for the same GGUF file would
// change, invalidating cached packed files.
const packVersion = "archc-gguf-packed-v2" // v2: regroup_span of whole blocks keeps the format

// packedFormat is the format a planned tensor is packed in: its own,
// except that a tensor whose values must change (Gemma's 1+w norms,
// PLaMo 2's w+c norms, Mamba's -exp(A_log)) or whose blocks do not stay rows (transpose,
// interleave, a reshape that changes a block format's rows, a
// regroup_span that splits blocks) is stored dequantized to f32 with the
// change applied.
func packedFormat(p planned) string {
	if p.vals != nil || p.tr.minusOne || p.tr.hasMinus || p.tr.logNeg || p.tr.transpose || p.tr.parts > 1 || p.tr.channelsLast {
		return "f32"
	}
	if p.tr.span != nil {
		if _, ok := spanBlockMoves(p); !ok {
			return "f32"
		}
	}
	if be, _, _ := p.t.Type.BlockSize(); p.tr.reshape != nil && be > 1 {
		if gs := p.t.Shape(); gs[len(gs)-1] != p.shape[len(p.shape)-1] { // blocks would straddle the new rows
			return "f32"
		}
	}
	s, _ := gguf.StorageFormat(p.t.Type)
	return s
}

// Formats returns, for every tensor Pack writes, its Hugging Face name and
// storage format.
func (m *Model) Formats() map[string]string {
	out := make(map[string]string, len(m.plan))
	for _, p := range m.plan {
		out[p.hf] = packedFormat(p)
	}
	return out
}

// PackPath returns the file Pack writes for m under cacheDir.
func (m *Model) PackPath(cacheDir string) string {
	return strings.TrimSuffix(m.cachePathFor(cacheDir, packVersion), ".f32") + ".packed"
}

// Pack writes every tensor of m as it is stored (same bytes, same size)
// into one file under cacheDir (PackPath; each tensor 64-byte aligned, so
// IREE maps it without copying), named and shaped as Hugging Face names
// and shapes it (HFName; GGUF dims reversed), and returns an index of that
// file in which each tensor's Format is its storage format (Formats). The
// only changes are the transforms the family's gguf section names, as
// transformers' GGUF loader makes them: unpermute_qk moves whole rows of
// blocks (exact for any block format), and a tensor whose values change
// (minus_one: Gemma's norm weights, stored as 1+w) or whose layout does
// (transpose, interleave: GPT-OSS experts) is dequantized to f32 with the
// change applied. An existing file of the expected size is reused without
// reading tensor data; a new one is written under a temporary name and
// renamed. progress, if not nil, gets the tensor bytes written so far and
// their total (alignment padding not counted: it ends at done == total).
// Errors name the GGUF file and the problem (unsupported type or tensor,
// read or write failure, ctx ending).
func (m *Model) Pack(ctx context.Context, cacheDir string, progress func(done, total int64)) (*weights.Index, error) {
	return m.write(ctx, cacheDir, progress, packedFormat, m.PackPath)
}

// write is Pack with each tensor in the format format gives it (its own or
// "f32"), into the file path names under cacheDir.
func (m *Model) write(ctx context.Context, cacheDir string, progress func(done, total int64), format func(planned) string, path func(string) string) (*weights.Index, error) {
	plan := m.plan
	abs, err := filepath.Abs(cacheDir)
	if err != nil {
		return nil, fmt.Errorf("gguf: bad cache folder %q: %v", cacheDir, err)
	}
	out := path(abs)
	ix := &weights.Index{Source: m.Path, Tensors: map[string]weights.Info{}}
	offs := make([]int64, len(plan))
	lens := make([]int64, len(plan))
	var total, payload int64 // the file's size; its tensor bytes (what progress counts)
	for i, p := range plan {
		total = (total + cacheAlign - 1) / cacheAlign * cacheAlign
		offs[i] = total
		format := format(p)
		n := p.t.Size
		info := weights.Info{File: out, Offset: total, Shape: p.shape, Format: format}
		if format == "f32" {
			n = p.elements() * 4
			info.DType = tensor.F32
		} else if dt, err := tensor.ParseDType(format); err == nil {
			info.DType = dt
		}
		info.Length, lens[i] = n, n
		ix.Tensors[p.hf] = info
		total += n
		payload += n
	}
	if st, err := os.Stat(out); err == nil && st.Size() == total {
		if progress != nil {
			progress(payload, payload)
		}
		return ix, nil
	}
	src, err := os.Open(m.Path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %v", err)
	}
	defer src.Close()
	err = m.writeCacheFile(abs, out, func(tmp *os.File) error {
		var done int64
		for i, p := range plan {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("gguf: %s: packing weights: %w", m.Path, err)
			}
			data, err := m.packedBytes(src, p, format(p))
			if err != nil {
				return err
			}
			if int64(len(data)) != lens[i] {
				return fmt.Errorf("gguf: internal error: tensor %q packs to %d bytes, planned %d", p.t.Name, len(data), lens[i])
			}
			if _, err := tmp.WriteAt(data, offs[i]); err != nil {
				return fmt.Errorf("gguf: %s: writing cache file %s: %v", m.Path, tmp.Name(), err)
			}
			done += lens[i]
			if progress != nil {
				progress(done, payload)
			}
		}
		if err := tmp.Truncate(total); err != nil {
			return fmt.Errorf("gguf: %s: writing cache file %s: %v", m.Path, tmp.Name(), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// packedBytes returns one tensor's bytes in format, which is "f32" or
// packedFormat's (see Pack).
func (f *Model) packedBytes(src *os.File, p planned, format string) ([]byte, error) {
	if format == "f32" {
		rows := int(p.shape[0])
		vals := make([]float32, p.elements())
		if err := f.convert(src, p, 0, rows, vals); err != nil {
			return nil, err
		}
		b := make([]byte, 4*len(vals))
		for k, v := range vals {
			binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(v))
		}
		return b, nil
	}
	raw := make([]byte, p.t.Size)
	if _, err := src.ReadAt(raw, p.t.Offset); err != nil && err != io.EOF {
		return nil, fmt.Errorf("gguf: %s: reading tensor %q: %v: the file changed since it was opened", f.Path, p.t.Name, err)
	}
	out := raw
	if p.tr.movesRows() {
		rows := int(p.shape[0])
		rowBytes := len(raw) / rows
		out = make([]byte, len(raw))
		if err := moveRows(p.tr, rows, func(dst, from int) {
			copy(out[dst*rowBytes:(dst+1)*rowBytes], raw[from*rowBytes:(from+1)*rowBytes])
		}); err != nil {
			return nil, fmt.Errorf("gguf: %s: tensor %q: %v", f.Path, p.t.Name, err)
		}
	}
	if p.tr.span != nil { // applied last, as Materialize does; entries outside the span stay
		moves, _ := spanBlockMoves(p) // whole blocks: packedFormat checked
		from := out
		out = append([]byte(nil), from...)
		for _, m := range moves {
			copy(out[m.dst:m.dst+m.n], from[m.src:m.src+m.n])
		}
	}
	return out, nil
}

// spanBlockMoves returns p's regroup_span (spanMoves) as copies of whole
// blocks of its storage format, in bytes, and whether every copy is whole
// blocks: the span's rows, or its columns in multiples of the block (Qwen3.5's
// value heads of 128 in ssm_out). Then the blocks move as they are stored,
// as unpermute_qk's rows do, and the tensor keeps its format (exact: no
// value changes). The flat offsets of the Hugging Face shape are the file's
// (a GGUF tensor's dimension 0 is the innermost; blocks run along it).
func spanBlockMoves(p planned) ([]spanMove, bool) {
	be, bs, ok := p.t.Type.BlockSize()
	if !ok {
		return nil, false
	}
	moves, err := spanMoves(p.tr.span, p.shape)
	if err != nil {
		return nil, false
	}
	out := make([]spanMove, len(moves))
	for i, m := range moves {
		dst, src, n := int64(m.dst), int64(m.src), int64(m.n)
		if dst%be != 0 || src%be != 0 || n%be != 0 {
			return nil, false
		}
		out[i] = spanMove{dst: int(dst / be * bs), src: int(src / be * bs), n: int(n / be * bs)}
	}
	return out, true
}

// moveRows calls move(dst, src) for every HF row of a tensor whose rows
// move (transform.movesRows): unpermute_qk (reversePermute) or regroup
// (regroupRows).
func moveRows(tr transform, rows int, move func(dst, src int)) error {
	if tr.regroupParts != 0 {
		return regroupRows(rows, tr.regroupParts, tr.regroupHeads, move)
	}
	return reversePermute(rows, tr.permuteHeads, move)
}

// regroupRows calls move(dst, src) for every HF row of a fused per-head
// projection whose rows the file holds grouped by part: viewing them as
// [parts, heads, r] (r = rows/parts/heads), HF row (h, k, j) is file row
// (k, h, j) (GPTNeoXModel.modify_tensors turns query_key_value's per-head
// [q | k | v] into [all q | all k | all v]).
func regroupRows(rows, parts, heads int, move func(dst, src int)) error {
	if parts <= 0 || heads <= 0 || rows%(parts*heads) != 0 {
		return fmt.Errorf("%d rows cannot be split into %d parts of %d heads", rows, parts, heads)
	}
	r := rows / parts / heads
	for h := 0; h < heads; h++ {
		for k := 0; k < parts; k++ {
			for j := 0; j < r; j++ {
				move((h*parts+k)*r+j, (k*heads+h)*r+j)
			}
		}
	}
	return nil
}

// reversePermute calls move(dst, src) for every output row of llama.cpp's
// Q/K permutation undone (transformers' _reverse_permute_weights): viewing
// the rows as [nHead, dim, 2] with dim = rows/nHead/2, output row (h, a, j)
// is input row (h, j, a).
func reversePermute(rows, nHead int, move func(dst, src int)) error {
	if nHead <= 0 || rows%(2*nHead) != 0 {
		return fmt.Errorf("%d rows cannot be split into %d heads of row pairs", rows, nHead)
	}
	dim := rows / nHead / 2
	for h := 0; h < nHead; h++ {
		for a := 0; a < 2; a++ {
			for j := 0; j < dim; j++ {
				move(h*2*dim+a*dim+j, h*2*dim+j*2+a)
			}
		}
	}
	return nil
}
