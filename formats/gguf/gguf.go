// Package gguf reads GGUF checkpoints (llama.cpp's single-file format) for
// archc: the container (header, metadata, tensor infos: Open, Value,
// Array, Strings, Lookup) and exact dequantization of the supported ggml
// types to f32 (Dequantize), with the storage format each type reaches
// the compiled module in (StorageFormat). It knows nothing of model
// families and imports none of the compiler: reading a file through a
// family's gguf section (config, Hugging Face names, transforms, the
// packed weight file) is driver/ggufmap's. The tokenizer reads its
// tokenizer.ggml.* metadata from the same File.
//
// The header is read once, by one reader (header.go): one pass over the
// magic, version, counts, metadata and tensor infos with bounded reads (a
// lying count or length cannot make it allocate without bound; split files
// and big-endian files are refused with a clear error), after which every
// tensor's dims, type, alignment, byte range and overlap with the others
// are validated against the file size. github.com/gpustack/gguf-parser-go
// supplies only ggml's type table (names, block sizes) and the split-file
// naming convention; its own header parser walks the file without the
// limits above and reports a truncated file as a block-layout mismatch, so
// it is not used. Every error is one line naming the file and the problem.
//
// Layout conventions: a GGUF tensor's dims are ggml's ne[0], ne[1], ...
// with ne[0] the fastest-varying (contiguous) dimension, so the row-major
// Hugging Face shape is the dims reversed; quantization blocks run along
// ne[0]. GGUF stores some tensors transformed relative to Hugging Face
// (llama's Q/K rows permuted for its rope layout, Gemma norm weights stored
// as 1+w); the transforms are undone exactly as transformers' GGUF loader
// undoes them (driver/ggufmap's Pack).
package gguf

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	parser "github.com/gpustack/gguf-parser-go"

	"github.com/archc/archc/formats/tensor"
)

// Limits on what a header may declare. They are far above any real model
// and keep absurd headers from causing huge allocations.
const (
	maxTensors     = 1 << 20 // tensors per file
	maxKVs         = 1 << 20 // metadata key/value pairs
	maxKeyLen      = 1 << 16 // bytes in a metadata key or tensor name
	maxHeader      = 1 << 28 // bytes of header (Gemma 3's, with its 262k-token vocabulary, is 6 MiB)
	maxElements    = 1 << 40 // elements in one tensor
	maxDims        = 4       // ggml's GGML_MAX_DIMS
	defaultAlign   = 32      // GGUF's default general.alignment
	maxAlign       = 1 << 16 // largest general.alignment accepted
	maxArrayNested = 1       // arrays of arrays are allowed one level deep
)

// Type is a ggml tensor element type, numbered as in ggml.h (GGML_TYPE_*).
type Type uint32

// The ggml types this package knows by name. Dequantize supports F32, F16,
// BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K and Q6_K (SupportedTypes).
const (
	F32    Type = 0
	F16    Type = 1
	Q4_0   Type = 2
	Q4_1   Type = 3
	Q5_0   Type = 6
	Q5_1   Type = 7
	Q8_0   Type = 8
	Q8_1   Type = 9
	Q2_K   Type = 10
	Q3_K   Type = 11
	Q4_K   Type = 12
	Q5_K   Type = 13
	Q6_K   Type = 14
	Q8_K   Type = 15
	IQ4_XS Type = 23
	BF16   Type = 30
)

// String returns ggml's name for the type ("Q4_K", "F16", ...), or
// "type(N)" for a number ggml does not define.
func (t Type) String() string {
	s := parser.GGMLType(t).String()
	if strings.HasPrefix(s, "GGMLType(") || s == "" {
		return fmt.Sprintf("type(%d)", uint32(t))
	}
	return s
}

// BlockSize returns the elements per quantization block (1 for plain
// float types) and the bytes per block; ok is false for a type ggml does
// not define or has removed.
func (t Type) BlockSize() (elems, bytes int64, ok bool) {
	tr, found := parser.GGMLType(t).Trait()
	if !found || tr.BlockSize == 0 || tr.TypeSize == 0 {
		return 0, 0, false
	}
	return int64(tr.BlockSize), int64(tr.TypeSize), true
}

// SupportedTypes returns the types Dequantize supports (Supported): the
// plain float types, then the quantized ones, each in ggml's numbering.
func SupportedTypes() []Type {
	var float, quant []Type
	for t := Type(0); t < 64; t++ {
		if !Supported(t) {
			continue
		}
		if be, _, _ := t.BlockSize(); be == 1 {
			float = append(float, t)
		} else {
			quant = append(quant, t)
		}
	}
	return append(float, quant...)
}

// supportedList is SupportedTypes as "F32, F16, ...".
func supportedList() string {
	var names []string
	for _, t := range SupportedTypes() {
		names = append(names, t.String())
	}
	return strings.Join(names, ", ")
}

// Tensor describes one tensor stored in a GGUF file.
type Tensor struct {
	Name   string  // GGUF name, e.g. "blk.0.attn_q.weight"
	Type   Type    // ggml element type
	Dims   []int64 // ggml ne[0], ne[1], ...: ne[0] is contiguous; 1 to 4 dims, each >= 1
	Offset int64   // absolute byte offset of the data in the file
	Size   int64   // bytes of data: elements / block elements * block bytes
}

// Elements returns the number of elements (the product of Dims).
func (t Tensor) Elements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Shape returns the row-major (Hugging Face / numpy) shape: Dims reversed.
func (t Tensor) Shape() []int64 {
	s := make([]int64, len(t.Dims))
	for i, d := range t.Dims {
		s[len(t.Dims)-1-i] = d
	}
	return s
}

// File is an opened, validated GGUF file: its metadata, read whole, and
// its tensor infos. Tensor data is read lazily from Path.
type File struct {
	Path    string   // absolute path
	Arch    string   // general.architecture, e.g. "llama", "gemma3"
	Tensors []Tensor // in file order
	// DataOffset is the absolute offset where tensor data starts (the end
	// of the aligned header).
	DataOffset int64
	// Size and ModTime (Unix nanoseconds) identify the file version that
	// was opened; Pack and Materialize key their caches on them and on the header.
	Size    int64
	ModTime int64

	byName map[string]int
	keys   []string // metadata keys in file order
	kv     map[string]meta
	hdrSum []byte // sha256 of the header bytes up to the end of the tensor infos
}

// Open reads and validates the GGUF file at path, reading only its header
// (the metadata, including large arrays such as the tokenizer vocabulary,
// and the tensor infos), in one pass. Errors, each one line naming the
// file: a file that is not GGUF, is big-endian, version 1, or split into
// shards; a truncated header ("truncated header: ..."); a header that
// declares more entries or longer strings than the file holds, or a
// metadata key twice; a tensor with no name or a duplicate name, 0 or more
// than 4 dims, a zero or absurd dimension, a type ggml does not define
// (named, with the supported types), a first dim not a multiple of its
// type's block size, data not aligned to general.alignment, data past the
// end of the file ("truncated: tensor X needs bytes [a, b) but the file
// has N bytes"), or data overlapping another tensor's.
//
// A tensor of a type ggml defines but Dequantize does not support (Q2_K,
// IQ4_XS, ...) does not fail Open, so the metadata and tokenizer of such a
// file stay readable; CheckTypes reports it.
func Open(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: bad path %q: %v", path, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, fmt.Errorf("gguf: %v", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("gguf: %s is not a regular file: point at a .gguf file", abs)
	}
	if shards := parser.CompleteShardGGUFFilename(abs); len(shards) > 1 {
		return nil, fmt.Errorf("gguf: %s is one shard of a split GGUF (%d shards): merge them first (llama-gguf-split --merge)", abs, len(shards))
	}
	h, err := readHeader(abs, st.Size())
	if err != nil {
		return nil, fmt.Errorf("gguf: %s: %v", abs, err)
	}
	f := &File{Path: abs, Size: st.Size(), ModTime: st.ModTime().UnixNano(), keys: h.keys, kv: h.kv, hdrSum: h.sum, byName: map[string]int{}}
	arch, ok := f.kv["general.architecture"]
	if !ok {
		return nil, fmt.Errorf("gguf: %s has no general.architecture string: the file is not a model GGUF", abs)
	}
	f.Arch = arch.v.(string)
	f.DataOffset = (h.infoEnd + h.align - 1) / h.align * h.align
	if err := f.addTensors(h.tensors, h.align); err != nil {
		return nil, fmt.Errorf("gguf: %s: %v", abs, err)
	}
	return f, nil
}

// addTensors validates the tensor infos and records them.
func (f *File) addTensors(infos []tensorInfo, align int64) error {
	type span struct {
		name       string
		begin, end int64 // relative to DataOffset
	}
	spans := make([]span, 0, len(infos))
	var past *tensorInfo // the out-of-file tensor that starts first
	for i := range infos {
		ti := &infos[i]
		if ti.name == "" {
			return fmt.Errorf("a tensor has an empty name: the file is corrupt")
		}
		if _, dup := f.byName[ti.name]; dup {
			return fmt.Errorf("tensor %q appears twice: the file is corrupt", ti.name)
		}
		t := Tensor{Name: ti.name, Type: Type(ti.typ), Dims: make([]int64, len(ti.dims))}
		elems := uint64(1)
		for i, d := range ti.dims {
			hi, lo := bits.Mul64(elems, d)
			if d == 0 || hi != 0 || lo > maxElements {
				return fmt.Errorf("tensor %q has dims %v: each must be >= 1 and the product at most %d", ti.name, ti.dims, int64(maxElements))
			}
			elems = lo
			t.Dims[i] = int64(d)
		}
		be, bb, ok := t.Type.BlockSize()
		if !ok {
			return fmt.Errorf("tensor %q has type %s, which ggml does not define: the file is corrupt or newer than this reader (archc reads %s)", ti.name, t.Type, supportedList())
		}
		if t.Dims[0]%be != 0 {
			return fmt.Errorf("tensor %q is %s with first dim %d, not a multiple of the %d-element block: the file is corrupt", ti.name, t.Type, t.Dims[0], be)
		}
		t.Size = int64(elems) / be * bb
		if dataLen := uint64(max(0, f.Size-f.DataOffset)); ti.offset > dataLen || uint64(t.Size) > dataLen-ti.offset {
			if past == nil || ti.offset < past.offset {
				past = ti
			}
		} else {
			t.Offset = f.DataOffset + int64(ti.offset)
			spans = append(spans, span{t.Name, int64(ti.offset), int64(ti.offset) + t.Size})
		}
		f.byName[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
	}
	if past != nil {
		t := f.Tensors[f.byName[past.name]]
		if past.offset > uint64(f.Size) {
			return fmt.Errorf("truncated: tensor %q starts at data offset %d, past the end of the %d-byte file", t.Name, past.offset, f.Size)
		}
		begin := f.DataOffset + int64(past.offset)
		return fmt.Errorf("truncated: tensor %q needs bytes [%d, %d) but the file has %d bytes", t.Name, begin, begin+t.Size, f.Size)
	}
	for _, ti := range infos {
		if int64(ti.offset)%align != 0 {
			return fmt.Errorf("tensor %q data offset %d is not a multiple of general.alignment %d: the file is corrupt", ti.name, ti.offset, align)
		}
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].begin != spans[j].begin {
			return spans[i].begin < spans[j].begin
		}
		return spans[i].name < spans[j].name
	})
	for i := 1; i < len(spans); i++ {
		// Sorted by begin, every span non-empty, and the earlier spans do not
		// overlap (else we returned), so the predecessor ends furthest.
		if spans[i].begin < spans[i-1].end {
			return fmt.Errorf("tensors %q [%d,%d) and %q [%d,%d) overlap: the file is corrupt", spans[i-1].name, spans[i-1].begin, spans[i-1].end, spans[i].name, spans[i].begin, spans[i].end)
		}
	}
	return nil
}

// CheckType returns nil when Dequantize supports t's type, else an error
// naming the file, the tensor, its type and the supported types.
func (f *File) CheckType(t Tensor) error {
	if Supported(t.Type) {
		return nil
	}
	return f.typeError(t, 0)
}

// CheckTypes returns CheckType's error for the first tensor (in file
// order) whose type Dequantize does not support, counting the others; nil
// when every tensor's type is supported.
func (f *File) CheckTypes() error {
	first, more := -1, 0
	for i, t := range f.Tensors {
		switch {
		case Supported(t.Type):
		case first < 0:
			first = i
		default:
			more++
		}
	}
	if first < 0 {
		return nil
	}
	return f.typeError(f.Tensors[first], more)
}

func (f *File) typeError(t Tensor, more int) error {
	also := ""
	if more > 0 {
		also = fmt.Sprintf(" (and %d more tensors of unsupported types)", more)
	}
	return fmt.Errorf("gguf: %s: tensor %q has type %s%s, which archc cannot dequantize (supported: %s): use a GGUF with a supported quantization", f.Path, t.Name, t.Type, also, supportedList())
}

// Lookup returns the tensor with the GGUF name, if present.
func (f *File) Lookup(name string) (Tensor, bool) {
	i, ok := f.byName[name]
	if !ok {
		return Tensor{}, false
	}
	return f.Tensors[i], true
}

// Keys returns the metadata keys in file order.
func (f *File) Keys() []string { return slices.Clone(f.keys) }

// Value returns the metadata value under key, converted to a Go value:
// int64 for signed integers, uint64 for unsigned ones, float64 (a float32
// widened exactly), bool, string, or ArrayInfo for an array. ok is false
// when the key is absent.
func (f *File) Value(key string) (v any, ok bool) {
	m, ok := f.kv[key]
	if !ok {
		return nil, false
	}
	if a, isArr := m.v.(array); isArr {
		return a.info(), true
	}
	return widen(m.v), true
}

// ArrayInfo is the value of an array metadata entry: its element type
// name ("uint32", "string", ...), its length, and its elements, converted
// as in Value (arrays of arrays hold ArrayInfo elements). For long arrays
// such as tokenizer.ggml.tokens, Strings and Array avoid boxing every
// element.
type ArrayInfo struct {
	Elem   string
	Len    int64
	Values []any
}

// Array returns the elements of the array metadata entry under key as a
// typed slice, converted as in Value: []string, []bool, []int64 (signed
// integer elements), []uint64 (unsigned), []float64, or []ArrayInfo for an
// array of arrays. The slice is the caller's. ok is false when the key is
// absent or its value is not an array.
func (f *File) Array(key string) (elems any, ok bool) {
	a, ok := f.kv[key].v.(array)
	if !ok {
		return nil, false
	}
	switch v := a.vals.(type) {
	case []string:
		return slices.Clone(v), true
	case []bool:
		return slices.Clone(v), true
	case []uint8:
		return widenAll[uint64](v), true
	case []uint16:
		return widenAll[uint64](v), true
	case []uint32:
		return widenAll[uint64](v), true
	case []uint64:
		return slices.Clone(v), true
	case []int8:
		return widenAll[int64](v), true
	case []int16:
		return widenAll[int64](v), true
	case []int32:
		return widenAll[int64](v), true
	case []int64:
		return slices.Clone(v), true
	case []float32:
		return widenAll[float64](v), true
	case []float64:
		return slices.Clone(v), true
	case []array:
		out := make([]ArrayInfo, len(v))
		for i, e := range v {
			out[i] = e.info()
		}
		return out, true
	}
	return nil, false
}

// Strings returns the elements of the string array under key (a copy of
// the slice; the strings are shared). ok is false when the key is absent
// or its value is not an array of strings.
func (f *File) Strings(key string) ([]string, bool) {
	a, ok := f.kv[key].v.(array)
	if !ok || a.elem != tString {
		return nil, false
	}
	return slices.Clone(a.vals.([]string)), true
}

// info converts an array to its ArrayInfo, elements widened.
func (a array) info() ArrayInfo {
	out := ArrayInfo{Elem: typeName(a.elem), Len: a.n, Values: make([]any, 0, a.n)}
	switch v := a.vals.(type) {
	case []string:
		out.Values = appendAny(out.Values, v)
	case []bool:
		out.Values = appendAny(out.Values, v)
	case []uint8:
		out.Values = appendAny(out.Values, widenAll[uint64](v))
	case []uint16:
		out.Values = appendAny(out.Values, widenAll[uint64](v))
	case []uint32:
		out.Values = appendAny(out.Values, widenAll[uint64](v))
	case []uint64:
		out.Values = appendAny(out.Values, v)
	case []int8:
		out.Values = appendAny(out.Values, widenAll[int64](v))
	case []int16:
		out.Values = appendAny(out.Values, widenAll[int64](v))
	case []int32:
		out.Values = appendAny(out.Values, widenAll[int64](v))
	case []int64:
		out.Values = appendAny(out.Values, v)
	case []float32:
		out.Values = appendAny(out.Values, widenAll[float64](v))
	case []float64:
		out.Values = appendAny(out.Values, v)
	case []array:
		for _, e := range v {
			out.Values = append(out.Values, e.info())
		}
	}
	return out
}

func appendAny[T any](dst []any, src []T) []any {
	for _, x := range src {
		dst = append(dst, x)
	}
	return dst
}

// widenAll converts numbers to the widest type of their kind.
func widenAll[W, T uint64 | int64 | float64 | uint8 | uint16 | uint32 | int8 | int16 | int32 | float32](v []T) []W {
	out := make([]W, len(v))
	for i, x := range v {
		out[i] = W(x)
	}
	return out
}

// widen converts a scalar as Value does.
func widen(v any) any {
	switch x := v.(type) {
	case uint8:
		return uint64(x)
	case uint16:
		return uint64(x)
	case uint32:
		return uint64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	}
	return v // uint64, int64, float64, bool, string
}

// f16 converts IEEE-754 binary16 bits to float32 exactly (one definition,
// in package tensor).
func f16(h uint16) float32 { return tensor.F16ToF32(h) }

// IsFile reports whether path is a .gguf file (not a folder).
func IsFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && strings.HasSuffix(strings.ToLower(path), ".gguf")
}
