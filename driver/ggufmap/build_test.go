package ggufmap

import (
	"encoding/binary"
	"testing"

	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/internal/ggufbuild"
)

// The tests build their GGUF files with internal/ggufbuild (shared with
// formats/gguf.s tests), through these local names.

// kv is one metadata entry (ggufbuild.KV).
type kv struct {
	Key string
	Val any
}

// tdesc is one tensor (ggufbuild.Tensor).
type tdesc struct {
	Name string
	Type gguf.Type
	Dims []uint64
	Data []byte
}

func buildGGUF(kvs []kv, ts []tdesc) []byte {
	bk := make([]ggufbuild.KV, len(kvs))
	for i, e := range kvs {
		bk[i] = ggufbuild.KV(e)
	}
	bt := make([]ggufbuild.Tensor[gguf.Type], len(ts))
	for i, e := range ts {
		bt[i] = ggufbuild.Tensor[gguf.Type](e)
	}
	return ggufbuild.Build(bk, bt)
}

func tinyLlama(extra ...kv) ([]kv, []tdesc) {
	kvs, ts := ggufbuild.TinyLlama[gguf.Type]()
	out := make([]kv, 0, len(kvs)+len(extra))
	for _, e := range kvs {
		out = append(out, kv(e))
	}
	out = append(out, extra...)
	outT := make([]tdesc, len(ts))
	for i, e := range ts {
		outT[i] = tdesc(e)
	}
	return out, outT
}

var (
	f32s      = ggufbuild.F32s
	seq       = ggufbuild.Seq
	writeFile = ggufbuild.WriteFile
)

// openBuilt opens a built GGUF file written to a temp file.
func openBuilt(t *testing.T, kvs []kv, ts []tdesc) *gguf.File {
	t.Helper()
	f, err := gguf.Open(writeFile(t, "m.gguf", buildGGUF(kvs, ts)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// openTiny opens tinyLlama written to a temp file.
func openTiny(t *testing.T) *gguf.File {
	t.Helper()
	kvs, ts := tinyLlama()
	return openBuilt(t, kvs, ts)
}

// putF16 writes an f16's bits little-endian.
func putF16(b []byte, bits uint16) { binary.LittleEndian.PutUint16(b, bits) }
