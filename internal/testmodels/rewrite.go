package testmodels

import (
	"os"
	"testing"

	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/internal/ggufbuild"
)

// GGUFEdit is a small GGUF file's metadata, in order, and tensors (RewriteGGUF).
type GGUFEdit struct {
	KVs     []ggufbuild.KV
	Tensors []ggufbuild.Tensor[gguf.Type]
}

// Set replaces the value of metadata key (appending it when absent).
func (e *GGUFEdit) Set(key string, v any) {
	for i := range e.KVs {
		if e.KVs[i].Key == key {
			e.KVs[i].Val = v
			return
		}
	}
	e.KVs = append(e.KVs, ggufbuild.KV{Key: key, Val: v})
}

// Drop removes metadata key and the tensor called key, where present.
func (e *GGUFEdit) Drop(name string) {
	var kvs []ggufbuild.KV
	for _, kv := range e.KVs {
		if kv.Key != name {
			kvs = append(kvs, kv)
		}
	}
	var ts []ggufbuild.Tensor[gguf.Type]
	for _, t := range e.Tensors {
		if t.Name != name {
			ts = append(ts, t)
		}
	}
	e.KVs, e.Tensors = kvs, ts
}

// RewriteGGUF writes to dst the small GGUF file src (an mmproj twin) as
// edit changed it, integers as 32-bit and floats as float32 (as gguf-py
// writes an mmproj's). It fails the test on an error or a value it cannot
// write.
func RewriteGGUF(t testing.TB, src, dst string, edit func(e *GGUFEdit)) {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	var e GGUFEdit
	for _, k := range f.Keys() {
		if k == "general.alignment" {
			continue
		}
		v, _ := f.Value(k)
		switch x := v.(type) {
		case uint64:
			v = uint32(x)
		case int64:
			v = int32(x)
		case float64:
			v = float32(x)
		case gguf.ArrayInfo:
			arr, _ := f.Array(k)
			switch a := arr.(type) {
			case []float64:
				fs := make([]float32, len(a))
				for i, y := range a {
					fs[i] = float32(y)
				}
				v = fs
			case []string:
				v = a
			case []int64:
				is := make([]int32, len(a))
				for i, y := range a {
					is[i] = int32(y)
				}
				v = is
			default:
				t.Fatalf("%s: RewriteGGUF cannot write the %s array %s", src, x.Elem, k)
			}
		}
		e.KVs = append(e.KVs, ggufbuild.KV{Key: k, Val: v})
	}
	raw, err := os.ReadFile(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range f.Tensors {
		dims := make([]uint64, len(ti.Dims))
		for i, d := range ti.Dims {
			dims[i] = uint64(d)
		}
		e.Tensors = append(e.Tensors, ggufbuild.Tensor[gguf.Type]{Name: ti.Name, Type: ti.Type, Dims: dims, Data: raw[ti.Offset : ti.Offset+ti.Size]})
	}
	edit(&e)
	if err := os.WriteFile(dst, ggufbuild.Build(e.KVs, e.Tensors), 0o644); err != nil {
		t.Fatal(err)
	}
}
