package ggufmap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/archc/archc/driver/weights"
	"github.com/archc/archc/formats/gguf"
)

// cacheVersion changes whenever Materialize's output for the same GGUF file
// would change (layout, transforms, dequantization), invalidating caches.
const cacheVersion = "archc-gguf-f32-v1"

// cacheAlign is the alignment of every tensor in the cache file, so IREE
// can map the regions without copying.
const cacheAlign = 64

// reversePermuteRows undoes llama.cpp's permute for rope (see
// reversePermute) on f32 rows: src and dst hold rows*cols elements,
// row-major; they must not alias.
func reversePermuteRows(dst, src []float32, rows, cols, nHead int) error {
	return reversePermute(rows, nHead, func(out, in int) {
		copy(dst[out*cols:(out+1)*cols], src[in*cols:(in+1)*cols])
	})
}

// planned is one tensor of the file resolved for conversion: its HF name,
// shape and transform. A tensor made of interleaved GGUF tensors
// (interleave) holds them all in group, by part (t and tr are one of them).
type planned struct {
	t     gguf.Tensor
	hf    string
	shape []int64
	tr    transform
	group []planned
	vals  []float32 // a tensor the gguf section makes from metadata (dsl.GGUFValue): its values; t is zero
}

// elements is the number of values of the HF tensor.
func (p planned) elements() int64 {
	n := int64(1)
	for _, d := range p.shape {
		n *= d
	}
	return n
}

// ReadTensor returns the GGUF tensor called name dequantized to f32 and
// transformed to Hugging Face form (see Materialize), with its HF name and
// row-major shape. It reads the whole tensor into memory; it is meant for
// tests and small tensors. Errors: a name the model does not load (unknown
// or skipped), a read failure.
func (m *Model) ReadTensor(name string) (data []float32, hfName string, shape []int64, err error) {
	for _, p := range m.plan {
		if (p.vals == nil && p.t.Name != name && !p.has(name)) || (p.vals != nil && p.hf != name) {
			continue
		}
		fh, err := os.Open(m.Path)
		if err != nil {
			return nil, "", nil, fmt.Errorf("gguf: %v", err)
		}
		defer fh.Close()
		data = make([]float32, p.elements())
		if err := m.convert(fh, p, 0, int(p.shape[0]), data); err != nil {
			return nil, "", nil, err
		}
		return data, p.hf, p.shape, nil
	}
	return nil, "", nil, fmt.Errorf("gguf: %s has no tensor %q that family %s loads", m.Path, name, m.Family)
}

// has reports whether the GGUF tensor called name is part of p's group.
func (p planned) has(name string) bool {
	for _, q := range p.group {
		if q.t.Name == name {
			return true
		}
	}
	return false
}

// convert dequantizes and transforms HF rows [r0, r1) of p into dst
// ((r1-r0)*cols elements). A tensor whose rows move (unpermute_qk,
// transpose, interleave) must be converted whole.
func (f *Model) convert(fh *os.File, p planned, r0, r1 int, dst []float32) error {
	rows := int(p.shape[0])
	if p.vals != nil {
		cols := len(p.vals) / rows
		copy(dst, p.vals[r0*cols:r1*cols])
		return nil
	}
	if p.tr.span != nil { // every other transform, then the span's entries regrouped
		if r0 != 0 || r1 != rows {
			return fmt.Errorf("gguf: internal error: regrouped tensor %q converted in part", p.t.Name)
		}
		moves, err := spanMoves(p.tr.span, p.shape)
		if err != nil {
			return fmt.Errorf("gguf: %s: tensor %q: %v", f.Path, p.t.Name, err)
		}
		raw := p
		raw.tr.span = nil
		raw.group = append([]planned(nil), p.group...)
		for k := range raw.group {
			raw.group[k].tr.span = nil
		}
		src := make([]float32, len(dst))
		if err := f.convert(fh, raw, 0, rows, src); err != nil {
			return err
		}
		copy(dst, src)
		for _, mv := range moves {
			copy(dst[mv.dst:mv.dst+mv.n], src[mv.src:mv.src+mv.n])
		}
		return nil
	}
	if (p.tr.transpose || p.tr.parts > 1) && (r0 != 0 || r1 != rows) {
		return fmt.Errorf("gguf: internal error: tensor %q converted in part", p.t.Name)
	}
	if p.tr.transpose || p.tr.parts > 1 {
		return f.convertParts(fh, p, dst)
	}
	if p.tr.channelsLast { // the file's [O, C, kh, kw] kernel, then each output row's values [kh, kw, C]
		if r0 != 0 || r1 != rows {
			return fmt.Errorf("gguf: internal error: channels_last tensor %q converted in part", p.t.Name)
		}
		gs := p.t.Shape()
		raw := p
		raw.shape, raw.tr.channelsLast = gs, false
		src := make([]float32, len(dst))
		if err := f.convert(fh, raw, 0, int(gs[0]), src); err != nil {
			return err
		}
		c, k := int(gs[1]), int(gs[2]*gs[3])
		for o := 0; o < int(gs[0]); o++ {
			for ch := 0; ch < c; ch++ {
				for i := 0; i < k; i++ {
					dst[(o*k+i)*c+ch] = src[(o*c+ch)*k+i]
				}
			}
		}
		return nil
	}
	if p.tr.reshape != nil { // the file's values in the file's shape, then viewed in p.shape (same order)
		if r0 != 0 || r1 != rows {
			return fmt.Errorf("gguf: internal error: reshaped tensor %q converted in part", p.t.Name)
		}
		raw := p
		raw.shape, raw.tr.reshape = p.t.Shape(), nil
		return f.convert(fh, raw, 0, int(raw.shape[0]), dst)
	}
	be, bb, _ := p.t.Type.BlockSize()
	if len(p.shape) == 1 && be > 1 && !p.tr.movesRows() && r0 == 0 && r1 == rows { // a block format's vector (a split row's slice): one row of blocks
		rows, r1 = 1, 1
	}
	cols := int(p.t.Elements()) / rows
	rowBytes := int64(cols) / be * bb
	raw := make([]byte, int64(r1-r0)*rowBytes)
	if _, err := fh.ReadAt(raw, p.t.Offset+int64(r0)*rowBytes); err != nil {
		return fmt.Errorf("gguf: %s: reading tensor %q: %v: the file changed since it was opened", f.Path, p.t.Name, err)
	}
	src := dst
	if p.tr.movesRows() {
		src = make([]float32, len(dst))
	}
	if err := gguf.Dequantize(p.t.Type, raw, src); err != nil {
		return fmt.Errorf("gguf: %s: tensor %q: %v", f.Path, p.t.Name, err)
	}
	if p.tr.movesRows() {
		if r0 != 0 || r1 != rows {
			return fmt.Errorf("gguf: internal error: permuted tensor %q converted in part", p.t.Name)
		}
		if err := moveRows(p.tr, rows, func(out, in int) { copy(dst[out*cols:(out+1)*cols], src[in*cols:(in+1)*cols]) }); err != nil {
			return fmt.Errorf("gguf: %s: tensor %q: %v", f.Path, p.t.Name, err)
		}
	}
	if p.tr.minusOne {
		for i := range dst {
			dst[i] -= 1
		}
	}
	if p.tr.hasMinus {
		for i := range dst {
			dst[i] -= p.tr.minus
		}
	}
	if p.tr.logNeg {
		for i, v := range dst {
			if !(v <= 0) {
				return fmt.Errorf("gguf: %s: tensor %q holds %v at %d: log_neg reads -exp(A_log), which is never positive", f.Path, p.t.Name, v, r0*cols+i)
			}
			dst[i] = float32(math.Log(-float64(v)))
		}
	}
	return nil
}

// convertParts converts a transposed or interleaved tensor whole into dst:
// each GGUF tensor of the group (or p alone) dequantized as stored (a
// chunk's rows un-permuted by its own unpermute_qk: InternLM2's attn_q and
// attn_k), its last two dimensions swapped back (transpose), then written to
// dst[..., part::parts] (interleave), as rows chunk part of parts along
// dimension -2 (chunk) or as columns chunk part of parts along the last
// dimension (chunk_cols), or as slice part of a new dimension of the HF
// tensor (stack).
func (f *Model) convertParts(fh *os.File, p planned, dst []float32) error {
	parts := p.group
	if parts == nil {
		parts = []planned{p}
	}
	n := len(parts)
	for k, q := range parts {
		gs := q.t.Shape()
		raw := q
		raw.shape, raw.tr, raw.group = gs, transform{minusOne: q.tr.minusOne, minus: q.tr.minus, hasMinus: q.tr.hasMinus, logNeg: q.tr.logNeg, permuteHeads: q.tr.permuteHeads}, nil
		vals := make([]float32, q.t.Elements())
		if err := f.convert(fh, raw, 0, int(gs[0]), vals); err != nil {
			return err
		}
		if q.tr.transpose { // [..., a, b] → [..., b, a]
			a, b := int(gs[len(gs)-2]), int(gs[len(gs)-1])
			t := make([]float32, len(vals))
			for m := 0; m < len(vals); m += a * b {
				for i := 0; i < a; i++ {
					for j := 0; j < b; j++ {
						t[m+j*a+i] = vals[m+i*b+j]
					}
				}
			}
			vals = t
		}
		if q.tr.stack { // [A..., B...] as [A..., part, B...] of [A..., parts, B...] (axis after A)
			inner := 1
			for _, d := range q.shape[q.tr.axis:] {
				inner *= int(d)
			}
			for o := 0; o < len(vals)/inner; o++ {
				copy(dst[(o*n+k)*inner:(o*n+k+1)*inner], vals[o*inner:(o+1)*inner])
			}
			continue
		}
		if q.tr.cols { // [..., R, C_k] as columns [Σ_{j<k} C_j, Σ_{j<=k} C_j) of each [..., R, Σ C]
			c := int(q.shape[len(q.shape)-1])
			before, total := 0, 0
			for j, o := range parts {
				w := int(o.shape[len(o.shape)-1])
				if j < k {
					before += w
				}
				total += w
			}
			for r := 0; r < len(vals)/c; r++ {
				copy(dst[r*total+before:r*total+before+c], vals[r*c:(r+1)*c])
			}
			continue
		}
		if q.tr.chunk { // [..., R_k, C] as rows [Σ_{j<k} R_j, Σ_{j<=k} R_j) of each [..., Σ R, C]
			c := int(q.shape[len(q.shape)-1])
			before, total := 0, 0
			for j, o := range parts {
				r := int(o.shape[len(o.shape)-2])
				if j < k {
					before += r
				}
				total += r
			}
			rc := int(q.shape[len(q.shape)-2]) * c
			for m := 0; m < len(vals)/rc; m++ {
				copy(dst[(m*total+before)*c:(m*total+before)*c+rc], vals[m*rc:(m+1)*rc])
			}
			continue
		}
		c := int(q.shape[len(q.shape)-1])
		for r := 0; r < len(vals)/c; r++ {
			for j := 0; j < c; j++ {
				dst[(r*c+j)*n+k] = vals[r*c+j]
			}
		}
	}
	return nil
}

// CachePath returns the file Materialize writes for m under cacheDir. Its
// name is a hash of cacheVersion, the GGUF file's size and modification
// time, its header bytes and the model's tensor plan (names, transforms),
// so a changed file, or a family that reads it differently, gets a new one.
func (m *Model) CachePath(cacheDir string) string { return m.cachePathFor(cacheDir, cacheVersion) }

func (m *Model) cachePathFor(cacheDir, version string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%d\x00", version, m.Size, m.ModTime)
	h.Write(m.HeaderSum())
	h.Write(m.planSum)
	return filepath.Join(cacheDir, "gguf-"+hex.EncodeToString(h.Sum(nil))[:32]+".f32")
}

// Materialize writes every tensor of m, dequantized to f32 (exactly, see
// Dequantize), transformed to Hugging Face form by the transforms its
// family's gguf section names (as transformers' GGUF loader does it:
// unpermute_qk is LlamaTensorProcessor's row un-permutation, minus_one
// Gemma2TensorProcessor's norm.weight - 1), named as Hugging Face names it
// (HFName; skipped tensors left out) and in row-major HF shape (GGUF dims
// reversed), into one file under cacheDir (CachePath), as Pack writes its
// file but every tensor in f32. It is the independent reading the tests
// hold Pack's blocks and the safetensors against (archc runs Pack's file).
// Reuse, progress, cancellation and errors are Pack's.
func (m *Model) Materialize(ctx context.Context, cacheDir string, progress func(done, total int64)) (*weights.Index, error) {
	return m.write(ctx, cacheDir, progress, func(planned) string { return "f32" }, m.CachePath)
}

// writeCacheFile creates the cache file out in folder dir atomically
// (weights.WriteCacheFile); errors name the GGUF file and the step.
func (f *Model) writeCacheFile(dir, out string, write func(tmp *os.File) error) error {
	return weights.WriteCacheFile("gguf: "+f.Path, dir, out, write)
}

// spanMove copies n values from src to dst (flat offsets into a tensor).
type spanMove struct{ dst, src, n int }

// spanMoves returns the copies regroup_span(axis, offset, parts, heads,
// sizes...) makes on a tensor of the given (Hugging Face) shape: along
// dimension axis, the entries [offset, offset + heads·Σsizes) are held by
// the file as [parts, heads, size_p] and by HF as [heads, parts, size_p];
// HF entry (h, p, j) is file entry (p, h, j). sizes has one entry (every
// part that size) or parts entries. Entries outside the span stay.
func spanMoves(args, shape []int64) ([]spanMove, error) {
	if len(args) < 5 {
		return nil, fmt.Errorf("regroup_span%v: it takes axis, offset, parts, heads and one or more sizes", args)
	}
	axis, offset, parts, heads := int(args[0]), int(args[1]), int(args[2]), int(args[3])
	sizes := args[4:]
	if len(sizes) == 1 && parts > 1 {
		sizes = slices.Repeat(sizes, parts)
	}
	if axis < 0 || axis >= len(shape) || offset < 0 || parts < 1 || heads < 1 || len(sizes) != parts {
		return nil, fmt.Errorf("regroup_span%v does not fit a tensor of shape %v (axis within its dimensions, offset >= 0, parts and heads >= 1, one size or one per part)", args, shape)
	}
	per := 0 // one head's entries, all parts
	for _, s := range sizes {
		if s < 1 {
			return nil, fmt.Errorf("regroup_span%v: a size is at least 1", args)
		}
		per += int(s)
	}
	if offset+heads*per > int(shape[axis]) {
		return nil, fmt.Errorf("regroup_span%v: entries [%d, %d) along dimension %d of shape %v", args, offset, offset+heads*per, axis, shape)
	}
	outer, inner := 1, 1
	for _, d := range shape[:axis] {
		outer *= int(d)
	}
	for _, d := range shape[axis+1:] {
		inner *= int(d)
	}
	n := int(shape[axis])
	var out []spanMove
	for o := 0; o < outer; o++ {
		base := o * n * inner
		before := 0 // the file's entries of the parts before p, all heads
		for p, s := range sizes {
			hfPart := 0 // part p's place within one head's entries in HF
			for _, t := range sizes[:p] {
				hfPart += int(t)
			}
			for h := 0; h < heads; h++ {
				dst := offset + h*per + hfPart
				src := offset + before + h*int(s)
				out = append(out, spanMove{base + dst*inner, base + src*inner, int(s) * inner})
			}
			before += heads * int(s)
		}
	}
	return out, nil
}
