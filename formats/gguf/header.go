package gguf

// The GGUF header reader: the one pass over a file's header that Open
// makes. Layout (little-endian; gguf.h, docs/gguf.md in ggml):
//
//	magic "GGUF" | version u32 | tensor count u64 | metadata count u64
//	metadata:    key (string) | value type u32 | value
//	tensor info: name (string) | n_dims u32 | ne[n_dims] u64 | ggml type u32 | data offset u64
//	padding to general.alignment, then tensor data
//
// A string is a u64 byte length and the bytes; an array value is an
// element type u32, a u64 length and the elements. Every read is checked
// against the bytes left in the file and against maxHeader before anything
// is allocated, so no count or length in a corrupt file can make the
// reader allocate more than the header's own size (times a small factor).

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"strings"
)

// GGUF metadata value types (gguf.h, GGUF_TYPE_*).
const (
	tUint8   = 0
	tInt8    = 1
	tUint16  = 2
	tInt16   = 3
	tUint32  = 4
	tInt32   = 5
	tFloat32 = 6
	tBool    = 7
	tString  = 8
	tArray   = 9
	tUint64  = 10
	tInt64   = 11
	tFloat64 = 12
)

// valueTypes names each metadata value type and gives its encoded size
// (0: variable, string and array).
var valueTypes = [...]struct {
	name string
	size int64
}{
	tUint8:   {"uint8", 1},
	tInt8:    {"int8", 1},
	tUint16:  {"uint16", 2},
	tInt16:   {"int16", 2},
	tUint32:  {"uint32", 4},
	tInt32:   {"int32", 4},
	tFloat32: {"float32", 4},
	tBool:    {"bool", 1},
	tString:  {"string", 0},
	tArray:   {"array", 0},
	tUint64:  {"uint64", 8},
	tInt64:   {"int64", 8},
	tFloat64: {"float64", 8},
}

func typeName(t uint32) string {
	if t < uint32(len(valueTypes)) {
		return valueTypes[t].name
	}
	return fmt.Sprintf("type(%d)", t)
}

// minEncoded is the fewest bytes one value of type t takes in the file.
func minEncoded(t uint32) int64 {
	switch t {
	case tString:
		return 8 // length
	case tArray:
		return 12 // element type and length
	}
	return valueTypes[t].size
}

// meta is one metadata value as stored: typ is its value type; v is a
// scalar as its Go type (uint8 … float64, bool, string) or an array.
type meta struct {
	typ uint32
	v   any
}

// array is an array metadata value: its element type, length and
// elements as a typed slice ([]uint8, []int8, []uint16, []int16, []uint32,
// []int32, []float32, []bool, []string, []uint64, []int64, []float64, or
// []array for arrays of arrays).
type array struct {
	elem uint32
	n    int64
	vals any
}

// tensorInfo is one tensor info entry as stored.
type tensorInfo struct {
	name   string
	dims   []uint64
	typ    uint32
	offset uint64 // relative to the start of tensor data
}

// header is what one pass over the header yields.
type header struct {
	keys    []string // metadata keys in file order
	kv      map[string]meta
	tensors []tensorInfo
	align   int64
	infoEnd int64  // byte just past the last tensor info
	sum     []byte // sha256 of bytes [0, infoEnd)
}

// errPastEnd is a read past the end of the file; errTooBig a read past
// maxHeader.
var (
	errPastEnd = errors.New("past the end of the file")
	errTooBig  = errors.New("header too large")
)

// reader reads the header with bounds: never past size or maxHeader, and
// hashing every byte it consumes.
type reader struct {
	r       *bufio.Reader
	pos     int64
	size    int64
	h       hash.Hash
	scratch []byte
}

// check reports whether n more bytes may be read.
func (r *reader) check(n int64) error {
	switch {
	case n < 0 || n > r.size-r.pos:
		return errPastEnd
	case n > maxHeader-r.pos:
		return errTooBig
	}
	return nil
}

// next returns the next n bytes, valid until the next call.
func (r *reader) next(n int64) ([]byte, error) {
	if err := r.check(n); err != nil {
		return nil, err
	}
	if int64(cap(r.scratch)) < n {
		r.scratch = make([]byte, n)
	}
	b := r.scratch[:n]
	if _, err := io.ReadFull(r.r, b); err != nil {
		return nil, errPastEnd // the file shrank while being read
	}
	r.pos += n
	r.h.Write(b)
	return b, nil
}

func (r *reader) u32() (uint32, error) {
	b, err := r.next(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *reader) u64() (uint64, error) {
	b, err := r.next(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// errLong is a string longer than its limit.
type errLong struct{ n, limit uint64 }

func (e errLong) Error() string {
	return fmt.Sprintf("a %d-byte string does not fit the %d-byte limit", e.n, e.limit)
}

// str reads a length-prefixed string of at most limit bytes.
func (r *reader) str(limit uint64) (string, error) {
	n, err := r.u64()
	if err != nil {
		return "", err
	}
	if n > limit {
		return "", errLong{n, limit}
	}
	if n > uint64(r.size-r.pos) {
		return "", errPastEnd
	}
	b, err := r.next(int64(n))
	return string(b), err
}

// scalar decodes one fixed-size value of type t from b.
func scalar(t uint32, b []byte) any {
	le := binary.LittleEndian
	switch t {
	case tUint8:
		return b[0]
	case tInt8:
		return int8(b[0])
	case tUint16:
		return le.Uint16(b)
	case tInt16:
		return int16(le.Uint16(b))
	case tUint32:
		return le.Uint32(b)
	case tInt32:
		return int32(le.Uint32(b))
	case tFloat32:
		return math.Float32frombits(le.Uint32(b))
	case tBool:
		return b[0] != 0
	case tUint64:
		return le.Uint64(b)
	case tInt64:
		return int64(le.Uint64(b))
	case tFloat64:
		return math.Float64frombits(le.Uint64(b))
	}
	return nil // not a scalar type; value never asks
}

// value reads a metadata value of type t; depth counts enclosing arrays.
func (r *reader) value(t uint32, depth int) (any, error) {
	switch {
	case t == tString:
		return r.str(math.MaxUint64)
	case t == tArray:
		return r.array(depth)
	case t < uint32(len(valueTypes)):
		b, err := r.next(valueTypes[t].size)
		if err != nil {
			return nil, err
		}
		return scalar(t, b), nil
	}
	return nil, fmt.Errorf("unknown value type %d", t)
}

// chunk is how many bytes of a scalar array are read at a time.
const chunk = 1 << 16

func (r *reader) array(depth int) (any, error) {
	if depth >= maxArrayNested+1 {
		return nil, fmt.Errorf("arrays nested more than %d deep", maxArrayNested+1)
	}
	et, err := r.u32()
	if err != nil {
		return nil, err
	}
	if et >= uint32(len(valueTypes)) {
		return nil, fmt.Errorf("an array of unknown value type %d", et)
	}
	n, err := r.u64()
	if err != nil {
		return nil, err
	}
	least := minEncoded(et)
	if n > uint64(r.size-r.pos)/uint64(least) {
		return nil, errPastEnd
	}
	if err := r.check(int64(n) * least); err != nil {
		return nil, err
	}
	a := array{elem: et, n: int64(n)}
	le := binary.LittleEndian
	switch et {
	case tString:
		v := make([]string, 0, n) // n*8 bytes are in the file and within maxHeader
		for range n {
			s, err := r.str(math.MaxUint64)
			if err != nil {
				return nil, err
			}
			v = append(v, s)
		}
		a.vals = v
	case tArray:
		v := make([]array, 0, n)
		for range n {
			e, err := r.array(depth + 1)
			if err != nil {
				return nil, err
			}
			v = append(v, e.(array))
		}
		a.vals = v
	case tUint8:
		a.vals, err = scalars(r, n, 1, func(b []byte) uint8 { return b[0] })
	case tInt8:
		a.vals, err = scalars(r, n, 1, func(b []byte) int8 { return int8(b[0]) })
	case tUint16:
		a.vals, err = scalars(r, n, 2, le.Uint16)
	case tInt16:
		a.vals, err = scalars(r, n, 2, func(b []byte) int16 { return int16(le.Uint16(b)) })
	case tUint32:
		a.vals, err = scalars(r, n, 4, le.Uint32)
	case tInt32:
		a.vals, err = scalars(r, n, 4, func(b []byte) int32 { return int32(le.Uint32(b)) })
	case tFloat32:
		a.vals, err = scalars(r, n, 4, func(b []byte) float32 { return math.Float32frombits(le.Uint32(b)) })
	case tBool:
		a.vals, err = scalars(r, n, 1, func(b []byte) bool { return b[0] != 0 })
	case tUint64:
		a.vals, err = scalars(r, n, 8, le.Uint64)
	case tInt64:
		a.vals, err = scalars(r, n, 8, func(b []byte) int64 { return int64(le.Uint64(b)) })
	case tFloat64:
		a.vals, err = scalars(r, n, 8, func(b []byte) float64 { return math.Float64frombits(le.Uint64(b)) })
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// scalars reads n values of size bytes each, decoded by dec; the caller
// has checked that their bytes are in the file and within maxHeader.
func scalars[T any](r *reader, n uint64, size int64, dec func([]byte) T) ([]T, error) {
	out := make([]T, 0, n)
	for uint64(len(out)) < n {
		k := min(int64(n)-int64(len(out)), chunk/size)
		b, err := r.next(k * size)
		if err != nil {
			return nil, err
		}
		for j := int64(0); j < k; j++ {
			out = append(out, dec(b[j*size:]))
		}
	}
	return out, nil
}

// readHeader makes the one pass over the header of the size-byte file at
// path. Its errors are one line, without the file name.
func readHeader(path string, size int64) (*header, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	r := &reader{r: bufio.NewReaderSize(fh, int(min(size, 1<<20))), size: size, h: sha256.New()}
	// fail turns a read error into the message for the part being read.
	fail := func(what string, err error) error {
		switch {
		case errors.Is(err, errPastEnd):
			return fmt.Errorf("truncated header: %s runs past the end of the %d-byte file", what, size)
		case errors.Is(err, errTooBig):
			return fmt.Errorf("%s runs past byte %d: no real GGUF header is that large, the file is corrupt", what, int64(maxHeader))
		}
		return fmt.Errorf("%s: %v: the file is corrupt", what, err)
	}
	magic, err := r.next(4)
	if err != nil || string(magic) != "GGUF" {
		return nil, fmt.Errorf("not a GGUF file (no \"GGUF\" magic): point at a .gguf file")
	}
	ver, err := r.u32()
	if err != nil {
		return nil, fail("the version", err)
	}
	switch {
	case ver > 0xffff:
		return nil, fmt.Errorf("big-endian GGUF files are not supported: convert it to little-endian")
	case ver < 2 || ver > 3:
		return nil, fmt.Errorf("GGUF version %d is not supported (2 and 3 are): re-convert the model with a current llama.cpp", ver)
	}
	nt, err := r.u64()
	if err != nil {
		return nil, fail("the tensor count", err)
	}
	nkv, err := r.u64()
	if err != nil {
		return nil, fail("the metadata count", err)
	}
	if nt > maxTensors {
		return nil, fmt.Errorf("the header declares %d tensors, more than the %d this reader accepts: the file is corrupt", nt, maxTensors)
	}
	if nkv > maxKVs {
		return nil, fmt.Errorf("the header declares %d metadata entries, more than the %d this reader accepts: the file is corrupt", nkv, maxKVs)
	}
	// A metadata entry takes at least 13 bytes (key length, type, a 1-byte
	// value), a tensor info 32 (name length, n_dims, one dim, type, offset).
	if nkv*13+nt*32 > uint64(size-r.pos) {
		return nil, fmt.Errorf("truncated header: it declares %d metadata entries and %d tensors, more than the %d-byte file can hold", nkv, nt, size)
	}
	h := &header{kv: make(map[string]meta, nkv), align: defaultAlign}
	for i := uint64(0); i < nkv; i++ {
		key, err := r.str(maxKeyLen)
		if err != nil {
			return nil, fail(fmt.Sprintf("metadata entry %d key", i), err)
		}
		t, err := r.u32()
		if err != nil {
			return nil, fail(fmt.Sprintf("metadata %q type", key), err)
		}
		switch {
		case strings.HasPrefix(key, "split."):
			return nil, fmt.Errorf("metadata %q marks a split GGUF: merge the shards first (llama-gguf-split --merge)", key)
		case key == "general.alignment" && t != tUint32:
			return nil, fmt.Errorf("general.alignment has value type %s, must be uint32: the file is corrupt", typeName(t))
		case key == "general.architecture" && t != tString:
			return nil, fmt.Errorf("general.architecture has value type %s, must be string: the file is corrupt", typeName(t))
		}
		if _, dup := h.kv[key]; dup {
			return nil, fmt.Errorf("metadata %q appears twice: the file is corrupt", key)
		}
		v, err := r.value(t, 0)
		if err != nil {
			return nil, fail(fmt.Sprintf("metadata %q value", key), err)
		}
		if key == "general.alignment" {
			a := v.(uint32)
			if a == 0 || a&(a-1) != 0 || a > maxAlign {
				return nil, fmt.Errorf("general.alignment is %d: it must be a power of two up to %d", a, maxAlign)
			}
			h.align = int64(a)
		}
		h.keys = append(h.keys, key)
		h.kv[key] = meta{typ: t, v: v}
	}
	h.tensors = make([]tensorInfo, 0, min(nt, chunk))
	for i := uint64(0); i < nt; i++ {
		name, err := r.str(maxKeyLen)
		if err != nil {
			return nil, fail(fmt.Sprintf("tensor info %d name", i), err)
		}
		nd, err := r.u32()
		if err != nil {
			return nil, fail(fmt.Sprintf("tensor %q dims", name), err)
		}
		if nd == 0 || nd > maxDims {
			return nil, fmt.Errorf("tensor %q has %d dims: ggml allows 1 to %d", name, nd, maxDims)
		}
		ti := tensorInfo{name: name, dims: make([]uint64, nd)}
		for d := range ti.dims {
			if ti.dims[d], err = r.u64(); err != nil {
				return nil, fail(fmt.Sprintf("tensor %q dims", name), err)
			}
		}
		if ti.typ, err = r.u32(); err != nil {
			return nil, fail(fmt.Sprintf("tensor %q type", name), err)
		}
		if ti.offset, err = r.u64(); err != nil {
			return nil, fail(fmt.Sprintf("tensor %q offset", name), err)
		}
		h.tensors = append(h.tensors, ti)
	}
	h.infoEnd = r.pos
	h.sum = r.h.Sum(nil)
	return h, nil
}
