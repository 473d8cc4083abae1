// Package gguf reads GGUF checkpoints (llama.cpp's single-file format) for
// archc: the Hugging Face config.json equivalent of their metadata (Config),
// the GGUF → Hugging Face tensor name table (HFName), exact dequantization of
// the supported ggml types to f32 (Dequantize), and Materialize, which writes
// every tensor dequantized, HF-named and HF-shaped into one cached f32 file
// and returns a weights.Index pointing into it, so a GGUF file runs through
// the same path as a safetensors checkpoint.
//
// Headers are parsed with github.com/gpustack/gguf-parser-go. What that
// library does not check is checked here before or after it runs: the
// key/value section is walked first with bounded reads (so a lying count or
// length cannot make the library allocate without bound, and split files or
// big-endian files are refused with a clear error), and afterwards every
// tensor's dims, type, alignment, byte range and overlap with the others
// are validated against the file size. Any panic inside the library is
// turned into an error. Every error is one line naming the file and the
// problem.
//
// Layout conventions: a GGUF tensor's dims are ggml's ne[0], ne[1], ...
// with ne[0] the fastest-varying (contiguous) dimension, so the row-major
// Hugging Face shape is the dims reversed; quantization blocks run along
// ne[0]. GGUF stores some tensors transformed relative to Hugging Face
// (llama's Q/K rows permuted for its rope layout, Gemma norm weights stored
// as 1+w); the transforms are undone exactly as transformers' GGUF loader
// undoes them (see Materialize).
package gguf

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strings"

	parser "github.com/gpustack/gguf-parser-go"

	"github.com/archc/archc/rt/tensor"
)

// Limits on what a header may declare. They are far above any real model
// and keep absurd headers from causing huge allocations.
const (
	maxTensors     = 1 << 20 // tensors per file
	maxKVs         = 1 << 20 // metadata key/value pairs
	maxKeyLen      = 1 << 16 // bytes in a metadata key
	maxElements    = 1 << 40 // elements in one tensor
	maxDims        = 4       // ggml's GGML_MAX_DIMS
	defaultAlign   = 32      // GGUF's default general.alignment
	maxAlign       = 1 << 16 // largest general.alignment accepted
	maxArrayNested = 1       // arrays of arrays are allowed one level deep
)

// Type is a ggml tensor element type, numbered as in ggml.h (GGML_TYPE_*).
type Type uint32

// The ggml types this package knows by name. Dequantize supports F32, F16,
// BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K and Q6_K.
const (
	F32  Type = 0
	F16  Type = 1
	Q4_0 Type = 2
	Q4_1 Type = 3
	Q5_0 Type = 6
	Q5_1 Type = 7
	Q8_0 Type = 8
	Q8_1 Type = 9
	Q2_K Type = 10
	Q3_K Type = 11
	Q4_K Type = 12
	Q5_K Type = 13
	Q6_K Type = 14
	Q8_K Type = 15
	BF16 Type = 30
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

// File is an opened, validated GGUF file. Its tensor data is read lazily
// from Path.
type File struct {
	Path    string   // absolute path
	Arch    string   // general.architecture, e.g. "llama", "gemma3"
	Tensors []Tensor // in file order
	// DataOffset is the absolute offset where tensor data starts (the end
	// of the aligned header).
	DataOffset int64
	// Size and ModTime (Unix nanoseconds) identify the file version that
	// was opened; Materialize keys its cache on them and on the header.
	Size    int64
	ModTime int64

	byName map[string]int
	kv     map[string]parser.GGUFMetadataKV
	hdrSum []byte // sha256 of the header bytes [0, DataOffset)
}

// Open parses and validates the GGUF file at path, reading only its header
// (large metadata arrays such as the tokenizer vocabulary are skipped, but
// their lengths are kept). Errors, each one line naming the file: a file
// that is not GGUF, is big-endian, version 1, or split into shards; a
// header that is truncated or declares more entries or longer strings than
// the file holds; a tensor with no name or a duplicate name, 0 or more than
// 4 dims, a zero or absurd dimension, an unknown type, a first dim not a
// multiple of its type's block size, data not aligned to general.alignment,
// data outside the file, or data overlapping another tensor's.
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
	pre, err := prewalk(abs, st.Size())
	if err != nil {
		return nil, fmt.Errorf("gguf: %s: %v", abs, err)
	}
	gf, err := parse(abs)
	if err != nil {
		return nil, fmt.Errorf("gguf: %s: %v: the file is truncated or not a valid GGUF file", abs, err)
	}
	f := &File{Path: abs, Size: st.Size(), ModTime: st.ModTime().UnixNano(), kv: map[string]parser.GGUFMetadataKV{}, byName: map[string]int{}}
	for _, kv := range gf.Header.MetadataKV {
		f.kv[kv.Key] = kv
	}
	arch, ok := f.kv["general.architecture"]
	if !ok || arch.ValueType != parser.GGUFMetadataValueTypeString {
		return nil, fmt.Errorf("gguf: %s has no general.architecture string: the file is not a model GGUF", abs)
	}
	f.Arch = arch.ValueString()
	if gf.TensorDataStartOffset != pre.dataStart {
		return nil, fmt.Errorf("gguf: %s: header parsers disagree on where tensor data starts (%d vs %d): the file is corrupt", abs, gf.TensorDataStartOffset, pre.dataStart)
	}
	f.DataOffset = pre.dataStart
	f.hdrSum = pre.sum
	if f.DataOffset > f.Size {
		return nil, fmt.Errorf("gguf: %s: tensor data would start at byte %d but the file is %d bytes: the file is truncated", abs, f.DataOffset, f.Size)
	}
	if err := f.addTensors(gf.TensorInfos, pre.align); err != nil {
		return nil, fmt.Errorf("gguf: %s: %v", abs, err)
	}
	return f, nil
}

// parse runs the library parser, turning its panics into errors.
func parse(path string) (gf *parser.GGUFFile, err error) {
	defer func() {
		if r := recover(); r != nil {
			gf, err = nil, fmt.Errorf("malformed header (%v)", r)
		}
	}()
	return parser.ParseGGUFFile(path, parser.SkipLargeMetadata())
}

// addTensors validates the parsed tensor infos and records them.
func (f *File) addTensors(infos parser.GGUFTensorInfos, align int64) error {
	type span struct {
		name       string
		begin, end int64
	}
	spans := make([]span, 0, len(infos))
	dataLen := f.Size - f.DataOffset
	for _, ti := range infos {
		if ti.Name == "" {
			return fmt.Errorf("a tensor has an empty name: the file is corrupt")
		}
		if _, dup := f.byName[ti.Name]; dup {
			return fmt.Errorf("tensor %q appears twice: the file is corrupt", ti.Name)
		}
		if len(ti.Dimensions) == 0 || len(ti.Dimensions) > maxDims {
			return fmt.Errorf("tensor %q has %d dims: ggml allows 1 to %d", ti.Name, len(ti.Dimensions), maxDims)
		}
		t := Tensor{Name: ti.Name, Type: Type(ti.Type), Dims: make([]int64, len(ti.Dimensions))}
		elems := uint64(1)
		for i, d := range ti.Dimensions {
			hi, lo := bits.Mul64(elems, d)
			if d == 0 || hi != 0 || lo > maxElements {
				return fmt.Errorf("tensor %q has dims %v: each must be >= 1 and the product at most %d", ti.Name, ti.Dimensions, int64(maxElements))
			}
			elems = lo
			t.Dims[i] = int64(d)
		}
		be, bb, ok := t.Type.BlockSize()
		if !ok {
			return fmt.Errorf("tensor %q has unknown ggml type %s: the file is corrupt or newer than this reader", ti.Name, t.Type)
		}
		if t.Dims[0]%be != 0 {
			return fmt.Errorf("tensor %q is %s with first dim %d, not a multiple of the %d-element block: the file is corrupt", ti.Name, t.Type, t.Dims[0], be)
		}
		t.Size = int64(elems) / be * bb
		if ti.Offset > uint64(dataLen) || uint64(t.Size) > uint64(dataLen)-ti.Offset {
			return fmt.Errorf("tensor %q needs bytes [%d, %d) of the %d data bytes: the file is truncated", ti.Name, ti.Offset, ti.Offset+uint64(t.Size), dataLen)
		}
		if int64(ti.Offset)%align != 0 {
			return fmt.Errorf("tensor %q data offset %d is not a multiple of general.alignment %d: the file is corrupt", ti.Name, ti.Offset, align)
		}
		t.Offset = f.DataOffset + int64(ti.Offset)
		f.byName[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
		spans = append(spans, span{t.Name, int64(ti.Offset), int64(ti.Offset) + t.Size})
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

// Lookup returns the tensor with the GGUF name, if present.
func (f *File) Lookup(name string) (Tensor, bool) {
	i, ok := f.byName[name]
	if !ok {
		return Tensor{}, false
	}
	return f.Tensors[i], true
}

// Value returns the metadata value under key, converted to a Go value:
// int64 for signed integers, uint64 for unsigned ones, float64, bool,
// string, or ArrayInfo for an array. ok is false when the key is absent.
func (f *File) Value(key string) (v any, ok bool) {
	kv, ok := f.kv[key]
	if !ok {
		return nil, false
	}
	return convertValue(kv.ValueType, kv.Value), true
}

// ArrayInfo is the value of an array metadata entry: its element type
// name ("uint32", "string", ...), its length, and its elements when they
// were read (Open reads only small per-layer arrays; Values is nil for
// skipped ones such as tokenizer.ggml.tokens). Elements are converted as
// in Value.
type ArrayInfo struct {
	Elem   string
	Len    int64
	Values []any
}

func convertValue(t parser.GGUFMetadataValueType, v any) any {
	switch x := v.(type) {
	case uint8:
		return uint64(x)
	case uint16:
		return uint64(x)
	case uint32:
		return uint64(x)
	case uint64:
		return x
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case float32:
		return float64(x)
	case float64:
		return x
	case bool, string:
		return x
	case parser.GGUFMetadataKVArrayValue:
		a := ArrayInfo{Elem: typeName(x.Type), Len: int64(x.Len)}
		if x.Array != nil {
			a.Values = make([]any, len(x.Array))
			for i, e := range x.Array {
				a.Values[i] = convertValue(x.Type, e)
			}
		}
		return a
	}
	return v
}

func typeName(t parser.GGUFMetadataValueType) string {
	switch t {
	case parser.GGUFMetadataValueTypeUint8:
		return "uint8"
	case parser.GGUFMetadataValueTypeInt8:
		return "int8"
	case parser.GGUFMetadataValueTypeUint16:
		return "uint16"
	case parser.GGUFMetadataValueTypeInt16:
		return "int16"
	case parser.GGUFMetadataValueTypeUint32:
		return "uint32"
	case parser.GGUFMetadataValueTypeInt32:
		return "int32"
	case parser.GGUFMetadataValueTypeFloat32:
		return "float32"
	case parser.GGUFMetadataValueTypeBool:
		return "bool"
	case parser.GGUFMetadataValueTypeString:
		return "string"
	case parser.GGUFMetadataValueTypeArray:
		return "array"
	case parser.GGUFMetadataValueTypeUint64:
		return "uint64"
	case parser.GGUFMetadataValueTypeInt64:
		return "int64"
	case parser.GGUFMetadataValueTypeFloat64:
		return "float64"
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// prewalked is what prewalk learns from the header.
type prewalked struct {
	align     int64
	dataStart int64
	sum       []byte
}

// scalarSize gives the encoded size of each fixed-size metadata type.
var scalarSize = map[uint32]int64{0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

// hdrReader reads the header with bounds: it never reads past size, and
// it hashes every byte it consumes.
type hdrReader struct {
	r    *bufio.Reader
	pos  int64
	size int64
	h    hash.Hash
}

var errShort = errors.New("short")

func (r *hdrReader) bytes(n int64) ([]byte, error) {
	if n < 0 || n > r.size-r.pos {
		return nil, errShort
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.r, b); err != nil {
		return nil, errShort
	}
	r.pos += n
	r.h.Write(b)
	return b, nil
}

func (r *hdrReader) skip(n int64) error {
	if n < 0 || n > r.size-r.pos {
		return errShort
	}
	for n > 0 {
		c := min(n, 1<<16)
		if _, err := r.bytes(c); err != nil {
			return err
		}
		n -= c
	}
	return nil
}

func (r *hdrReader) u32() (uint32, error) {
	b, err := r.bytes(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *hdrReader) u64() (uint64, error) {
	b, err := r.bytes(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// str reads a length-prefixed string of at most limit bytes (limit < 0:
// bounded only by the file).
func (r *hdrReader) str(limit int64) (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	if n > uint64(r.size-r.pos) || (limit >= 0 && n > uint64(limit)) {
		return "", fmt.Errorf("a %d-byte string at byte %d does not fit", n, r.pos)
	}
	b, err := r.bytes(int64(n))
	return string(b), err
}

// skipValue skips a metadata value of type t; for the few keys Open needs
// it checks the type.
func (r *hdrReader) skipValue(t uint32, depth int) error {
	if sz, ok := scalarSize[t]; ok {
		return r.skip(sz)
	}
	switch t {
	case 8: // string
		n, err := r.u64()
		if err != nil {
			return err
		}
		if n > uint64(r.size-r.pos) {
			return errShort
		}
		return r.skip(int64(n))
	case 9: // array
		if depth >= maxArrayNested+1 {
			return fmt.Errorf("arrays nested deeper than %d at byte %d", maxArrayNested+1, r.pos)
		}
		et, err := r.u32()
		if err != nil {
			return err
		}
		n, err := r.u64()
		if err != nil {
			return err
		}
		if n > uint64(r.size-r.pos) {
			return fmt.Errorf("an array at byte %d declares %d elements, more than the bytes left", r.pos, n)
		}
		if sz, ok := scalarSize[et]; ok {
			return r.skip(int64(n) * sz)
		}
		if et != 8 && et != 9 {
			return fmt.Errorf("an array at byte %d has unknown element type %d", r.pos, et)
		}
		for i := uint64(0); i < n; i++ {
			if err := r.skipValue(et, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown metadata value type %d at byte %d", t, r.pos)
}

// prewalk reads the whole header (key/value pairs and tensor infos) with
// bounded reads before the library sees it. It rejects what the library
// would mishandle (big-endian and v1 files, split files, a bad
// general.alignment, counts and lengths beyond the file) and computes the
// aligned start of tensor data and a hash of the header bytes.
func prewalk(path string, size int64) (*prewalked, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	h := sha256.New()
	r := &hdrReader{r: bufio.NewReaderSize(fh, 1<<20), size: size, h: h}
	bad := func(what string, err error) (*prewalked, error) {
		if errors.Is(err, errShort) {
			return nil, fmt.Errorf("the header ends early (%s, at byte %d of %d): the file is truncated or not GGUF", what, r.pos, size)
		}
		return nil, fmt.Errorf("%s: %v: the file is corrupt", what, err)
	}
	magic, err := r.bytes(4)
	if err != nil || string(magic) != "GGUF" {
		return nil, fmt.Errorf("not a GGUF file (no \"GGUF\" magic): point at a .gguf file")
	}
	ver, err := r.u32()
	if err != nil {
		return bad("version", err)
	}
	switch {
	case ver > 0xffff:
		return nil, fmt.Errorf("big-endian GGUF files are not supported: convert it to little-endian")
	case ver < 2 || ver > 3:
		return nil, fmt.Errorf("GGUF version %d is not supported (2 and 3 are): re-convert the model with a current llama.cpp", ver)
	}
	nt, err := r.u64()
	if err != nil {
		return bad("tensor count", err)
	}
	nkv, err := r.u64()
	if err != nil {
		return bad("metadata count", err)
	}
	if nt > maxTensors || nt > uint64(size)/24 {
		return nil, fmt.Errorf("the header declares %d tensors, impossible in a %d-byte file: the file is corrupt", nt, size)
	}
	if nkv > maxKVs || nkv > uint64(size)/13 {
		return nil, fmt.Errorf("the header declares %d metadata entries, impossible in a %d-byte file: the file is corrupt", nkv, size)
	}
	align := int64(defaultAlign)
	for i := uint64(0); i < nkv; i++ {
		key, err := r.str(maxKeyLen)
		if err != nil {
			return bad(fmt.Sprintf("metadata entry %d key", i), err)
		}
		t, err := r.u32()
		if err != nil {
			return bad(fmt.Sprintf("metadata %q type", key), err)
		}
		switch {
		case strings.HasPrefix(key, "split."):
			return nil, fmt.Errorf("metadata %q marks a split GGUF: merge the shards first (llama-gguf-split --merge)", key)
		case key == "general.alignment":
			if t != 4 {
				return nil, fmt.Errorf("general.alignment has value type %d, must be uint32: the file is corrupt", t)
			}
			a, err := r.u32()
			if err != nil {
				return bad(key, err)
			}
			if a == 0 || a&(a-1) != 0 || a > maxAlign {
				return nil, fmt.Errorf("general.alignment is %d: it must be a power of two up to %d", a, maxAlign)
			}
			align = int64(a)
			continue
		case key == "general.architecture" && t != 8:
			return nil, fmt.Errorf("general.architecture has value type %d, must be string: the file is corrupt", t)
		}
		if err := r.skipValue(t, 0); err != nil {
			return bad(fmt.Sprintf("metadata %q value", key), err)
		}
	}
	for i := uint64(0); i < nt; i++ {
		name, err := r.str(maxKeyLen)
		if err != nil {
			return bad(fmt.Sprintf("tensor info %d name", i), err)
		}
		nd, err := r.u32()
		if err != nil {
			return bad(fmt.Sprintf("tensor %q dims", name), err)
		}
		if nd == 0 || nd > maxDims {
			return nil, fmt.Errorf("tensor %q has %d dims: ggml allows 1 to %d", name, nd, maxDims)
		}
		if err := r.skip(int64(nd)*8 + 4 + 8); err != nil {
			return bad(fmt.Sprintf("tensor %q info", name), err)
		}
	}
	start := (r.pos + align - 1) / align * align
	return &prewalked{align: align, dataStart: start, sum: h.Sum(nil)}, nil
}

// f16 converts IEEE-754 binary16 bits to float32 exactly (one definition,
// in package tensor).
func f16(h uint16) float32 { return tensor.F16ToF32(h) }
