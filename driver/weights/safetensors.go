// Package weights indexes Hugging Face safetensors checkpoints without
// reading tensor data: it returns, for each tensor, the file and the
// absolute byte range of its data, so the runtime can hand file regions to
// IREE as named parameters.
//
// The header is parsed here with encoding/json rather than with
// github.com/nlpodyssey/safetensors: that library's ReadMetadata/Deserialize
// take the whole file as a []byte (they check the data length against the
// buffer), its validation is unexported and its errors name neither the
// tensor nor the fix, and its dtype set lacks the F8 types, so an F8
// checkpoint would fail with a parse error instead of "unsupported dtype".
// The format is small: an 8-byte little-endian header length, a JSON object
// {name: {dtype, shape, data_offsets:[begin,end]}, "__metadata__": {...}},
// then the data, with offsets relative to the end of the header.
package weights

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/archc/archc/formats/tensor"
)

// maxHeader bounds the JSON header (the reference implementation uses 100 MB).
const maxHeader = 100 << 20

// Info locates one tensor's data inside a checkpoint file.
type Info struct {
	File   string       // absolute path of the .safetensors file
	Offset int64        // absolute byte offset of the data in File
	Length int64        // data length in bytes (NumElements(Shape) * DType.Size() for a plain DType)
	DType  tensor.DType // F32, F16, BF16 or U32 ("" for a block-quantized Format)
	Shape  []int64      // row-major shape; empty for a scalar
	// Format is the storage format when the bytes are not plain DType
	// elements (package lower's names, e.g. "q4_1" for GGUF Q4_1 blocks);
	// "" means DType.
	Format string
	// Source, for an MLX affine tensor (Affine), holds its stored parts;
	// File is empty until PackAffine has written them as one.
	Source *AffineSource
	// Stack, for a tensor stacked from others (Index.Stack), holds its
	// parts in order; File is empty until PackStacks has written them as
	// one.
	Stack []Info
}

// Index maps tensor names to their locations in a checkpoint.
type Index struct {
	// Source names what was opened, for error messages: "model.safetensors"
	// or "model.safetensors.index.json".
	Source string
	// Tensors maps a tensor name (e.g. "model.embed_tokens.weight") to its
	// location.
	Tensors map[string]Info
}

// Open indexes the checkpoint in the Hugging Face folder dir: a sharded
// model.safetensors.index.json if present, else model.safetensors. It reads
// only headers. Errors name the file and the problem: missing files, a
// truncated or oversized header, offsets outside the file or overlapping,
// a dtype other than F32/F16/BF16, or a shape that disagrees with the byte
// length.
func Open(dir string) (*Index, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("weights: bad folder %q: %v", dir, err)
	}
	idxPath := filepath.Join(abs, "model.safetensors.index.json")
	if _, err := os.Stat(idxPath); err == nil {
		return openSharded(abs, idxPath)
	}
	single := filepath.Join(abs, "model.safetensors")
	if _, err := os.Stat(single); err != nil {
		return nil, fmt.Errorf("weights: %s has neither model.safetensors nor model.safetensors.index.json: point at a Hugging Face checkpoint folder", abs)
	}
	m, err := OpenFile(single)
	if err != nil {
		return nil, err
	}
	return &Index{Source: "model.safetensors", Tensors: m}, nil
}

// openSharded reads a model.safetensors.index.json ({"weight_map": {tensor:
// shard file}}) and indexes every shard it names. Every tensor the weight
// map assigns to a shard must be in that shard.
func openSharded(dir, idxPath string) (*Index, error) {
	base := filepath.Base(idxPath)
	raw, err := os.ReadFile(idxPath)
	if err != nil {
		return nil, fmt.Errorf("weights: %v", err)
	}
	var doc struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("weights: %s is not valid JSON (%v): re-download the checkpoint", base, err)
	}
	if len(doc.WeightMap) == 0 {
		return nil, fmt.Errorf("weights: %s has no \"weight_map\" entries: re-download the checkpoint", base)
	}
	shards := map[string]bool{}
	for _, f := range doc.WeightMap {
		shards[f] = true
	}
	names := make([]string, 0, len(shards))
	for f := range shards {
		names = append(names, f)
	}
	sort.Strings(names)

	ix := &Index{Source: base, Tensors: map[string]Info{}}
	owner := map[string]string{} // tensor -> shard it was found in
	for _, shard := range names {
		if !filepath.IsLocal(shard) {
			return nil, fmt.Errorf("weights: %s names shard %q outside the checkpoint folder: fix the weight_map", base, shard)
		}
		p := filepath.Join(dir, shard)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("weights: %s names shard %q, which is missing: download all shards into %s", base, shard, dir)
		}
		m, err := OpenFile(p)
		if err != nil {
			return nil, err
		}
		for name, info := range m {
			if prev, dup := owner[name]; dup {
				return nil, fmt.Errorf("weights: tensor %q is in both %s and %s: the checkpoint is inconsistent", name, prev, shard)
			}
			owner[name] = shard
			ix.Tensors[name] = info
		}
	}
	for name, shard := range doc.WeightMap {
		if owner[name] != shard {
			return nil, fmt.Errorf("weights: %s puts tensor %q in %s, but that shard does not hold it: re-download the checkpoint", base, name, shard)
		}
	}
	return ix, nil
}

// headerEntry is one tensor entry of a safetensors JSON header.
type headerEntry struct {
	DType       string   `json:"dtype"`
	Shape       []int64  `json:"shape"`
	DataOffsets []uint64 `json:"data_offsets"`
}

// dtypes are the safetensors dtypes archc reads; U32 only as the packed
// values of MLX affine quantization (Affine).
var dtypes = map[string]tensor.DType{"F32": tensor.F32, "F16": tensor.F16, "BF16": tensor.BF16, "U32": tensor.U32}

// OpenFile indexes one .safetensors file, reading only its header. Offsets
// in the result are absolute file offsets. See Open for the errors.
func OpenFile(path string) (map[string]Info, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("weights: bad path %q: %v", path, err)
	}
	base := filepath.Base(abs)
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("weights: %v", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("weights: %v", err)
	}
	size := st.Size()
	var lenBuf [8]byte
	if _, err := io.ReadFull(f, lenBuf[:]); err != nil {
		return nil, fmt.Errorf("weights: %s is %d bytes, too short for a safetensors header: the file is truncated or not safetensors", base, size)
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > maxHeader || int64(n) > size-8 {
		return nil, fmt.Errorf("weights: %s declares a %d-byte header but the file is %d bytes: the file is truncated or not safetensors", base, n, size)
	}
	hdr := make([]byte, n)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return nil, fmt.Errorf("weights: %s: reading header: %v", base, err)
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &entries); err != nil {
		return nil, fmt.Errorf("weights: %s has a malformed JSON header (%v): the file is corrupt", base, err)
	}
	dataStart := 8 + int64(n)
	dataLen := size - dataStart

	out := make(map[string]Info, len(entries))
	type span struct {
		name       string
		begin, end uint64
	}
	var spans []span
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	sort.Strings(names) // the first bad tensor reported is the same every run
	for _, name := range names {
		raw := entries[name]
		if name == "__metadata__" {
			continue
		}
		var e headerEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("weights: %s: tensor %q has a malformed header entry (%v): the file is corrupt", base, name, err)
		}
		dt, ok := dtypes[e.DType]
		if !ok {
			return nil, fmt.Errorf("weights: %s: tensor %q has dtype %s: only F32, F16, BF16 (and U32 for MLX affine-quantized weights) are supported, convert the checkpoint", base, name, e.DType)
		}
		if len(e.DataOffsets) != 2 || e.DataOffsets[0] > e.DataOffsets[1] || e.DataOffsets[1] > uint64(dataLen) {
			return nil, fmt.Errorf("weights: %s: tensor %q has data_offsets %v outside the %d data bytes: the file is truncated or corrupt", base, name, e.DataOffsets, dataLen)
		}
		elems, err := tensor.NumElements(e.Shape)
		if err != nil {
			return nil, fmt.Errorf("weights: %s: tensor %q: %v", base, name, err)
		}
		length := int64(e.DataOffsets[1] - e.DataOffsets[0])
		if elems > (1<<62)/int64(dt.Size()) || elems*int64(dt.Size()) != length {
			return nil, fmt.Errorf("weights: %s: tensor %q is %s%v (%d elements) but its data is %d bytes: the file is corrupt", base, name, e.DType, e.Shape, elems, length)
		}
		spans = append(spans, span{name, e.DataOffsets[0], e.DataOffsets[1]})
		out[name] = Info{File: abs, Offset: dataStart + int64(e.DataOffsets[0]), Length: length, DType: dt, Shape: e.Shape}
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].begin != spans[j].begin {
			return spans[i].begin < spans[j].begin
		}
		return spans[i].name < spans[j].name
	})
	// Compare each span with the furthest-reaching earlier one, so a large
	// tensor covering several later ones is caught too. Empty tensors occupy
	// no bytes and cannot overlap.
	var far *span
	for i := range spans {
		b := &spans[i]
		if b.begin == b.end {
			continue
		}
		if far != nil && b.begin < far.end {
			return nil, fmt.Errorf("weights: %s: tensors %q [%d,%d) and %q [%d,%d) overlap: the file is corrupt", base, far.name, far.begin, far.end, b.name, b.begin, b.end)
		}
		if far == nil || b.end > far.end {
			far = b
		}
	}
	return out, nil
}

// Lookup returns the tensor called name. If wantShape is non-nil the stored
// shape must equal it. Errors read like
// `model.safetensors: missing tensor "model.layers.0.mlp.up_proj.weight"` or
// `model.safetensors: tensor "x" has shape [64 32], the config implies [64 64]`.
func (ix *Index) Lookup(name string, wantShape []int64) (Info, error) {
	info, ok := ix.Tensors[name]
	if !ok {
		return Info{}, fmt.Errorf("%s: missing tensor %q", ix.Source, name)
	}
	if wantShape != nil && !slices.Equal(info.Shape, wantShape) {
		return Info{}, fmt.Errorf("%s: tensor %q has shape %v, the config implies %v", ix.Source, name, info.Shape, wantShape)
	}
	return info, nil
}

// Names returns the tensor names, sorted.
func (ix *Index) Names() []string {
	names := make([]string, 0, len(ix.Tensors))
	for n := range ix.Tensors {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Read loads the tensor's bytes from disk (Length bytes at Offset of File).
// It is meant for tests and small tensors; the runtime passes file regions
// to IREE instead. It returns an error if the file is shorter than recorded.
func (i Info) Read() (tensor.Tensor, error) {
	f, err := os.Open(i.File)
	if err != nil {
		return tensor.Tensor{}, fmt.Errorf("weights: %v", err)
	}
	defer f.Close()
	buf := make([]byte, i.Length)
	if _, err := f.ReadAt(buf, i.Offset); err != nil {
		return tensor.Tensor{}, fmt.Errorf("weights: reading %d bytes at %d of %s: %v: the file changed since it was indexed", i.Length, i.Offset, i.File, err)
	}
	return tensor.Tensor{DType: i.DType, Shape: append([]int64{}, i.Shape...), Data: buf}, nil
}
