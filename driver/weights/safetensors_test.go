package weights

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/formats/tensor"
)

// writeST writes a safetensors file at path with the given raw JSON header
// (not validated, so tests can lie) followed by data.
func writeST(t *testing.T, path, header string, data []byte) {
	t.Helper()
	var b []byte
	b = binary.LittleEndian.AppendUint64(b, uint64(len(header)))
	b = append(b, header...)
	b = append(b, data...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func f32s(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func TestOpenSingle(t *testing.T) {
	dir := t.TempDir()
	hdr := `{"__metadata__":{"format":"pt"},` +
		`"a":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},` +
		`"b":{"dtype":"BF16","shape":[2],"data_offsets":[16,20]},` +
		`"s":{"dtype":"F16","shape":[],"data_offsets":[20,22]}}`
	data := append(f32s(1, 2, 3, 4), 0x80, 0x3f, 0x00, 0x40, 0x00, 0x3c) // bf16 1,2; f16 1
	writeST(t, filepath.Join(dir, "model.safetensors"), hdr, data)

	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(ix.Names(), ","); got != "a,b,s" {
		t.Fatalf("names %s", got)
	}
	a, err := ix.Lookup("a", []int64{2, 2})
	if err != nil {
		t.Fatal(err)
	}
	if a.Offset != int64(8+len(hdr)) || a.Length != 16 || a.DType != tensor.F32 {
		t.Fatalf("a = %+v", a)
	}
	ta, err := a.Read()
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := ta.F32(); v[3] != 4 {
		t.Fatalf("a data %v", v)
	}
	b, _ := ix.Lookup("b", nil)
	tb, _ := b.Read()
	if v, _ := tb.F32(); v[0] != 1 || v[1] != 2 || b.Offset != a.Offset+16 {
		t.Fatalf("b data %v at %d", v, b.Offset)
	}
	s, _ := ix.Lookup("s", []int64{})
	ts, _ := s.Read()
	if v, err := ts.F32(); err != nil || v[0] != 1 {
		t.Fatalf("scalar %v %v", v, err)
	}

	_, err = ix.Lookup("model.layers.0.mlp.up_proj.weight", nil)
	if err == nil || err.Error() != `model.safetensors: missing tensor "model.layers.0.mlp.up_proj.weight"` {
		t.Fatalf("missing: %v", err)
	}
	_, err = ix.Lookup("a", []int64{2, 4})
	if err == nil || err.Error() != `model.safetensors: tensor "a" has shape [2 2], the config implies [2 4]` {
		t.Fatalf("shape: %v", err)
	}
}

func TestOpenBad(t *testing.T) {
	ok := `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`
	cases := []struct {
		name, header string
		data         []byte
		raw          []byte // if set, written as the whole file instead
		want         string
	}{
		{name: "tiny file", raw: []byte{1, 2, 3}, want: "too short"},
		{name: "header longer than file", raw: binary.LittleEndian.AppendUint64(nil, 1000), want: "declares a 1000-byte header"},
		{name: "huge header", raw: binary.LittleEndian.AppendUint64(nil, 1<<62), want: "header"},
		{name: "bad json", header: `{"a":`, want: "malformed JSON"},
		{name: "truncated data", header: ok, data: f32s(1), want: "outside the 4 data bytes"},
		{name: "lying offsets", header: `{"a":{"dtype":"F32","shape":[2],"data_offsets":[4,100]}}`, data: f32s(1, 2), want: "outside"},
		{name: "reversed offsets", header: `{"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}}`, data: f32s(1, 2), want: "outside"},
		{name: "shape vs length", header: `{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, data: f32s(1, 2), want: `tensor "a" is F32[3] (3 elements) but its data is 8 bytes`},
		{name: "bad dtype", header: `{"q":{"dtype":"I8","shape":[8],"data_offsets":[0,8]}}`, data: f32s(1, 2), want: `tensor "q" has dtype I8: only F32, F16, BF16 (and U32`},
		{name: "f8 dtype", header: `{"q":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]}}`, data: f32s(1, 2), want: `dtype F8_E4M3`},
		{name: "negative dim", header: `{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, data: f32s(1, 2), want: "negative"},
		{name: "overlap", header: `{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}`, data: f32s(1, 2, 3), want: "overlap"},
		{name: "overlap nested", header: `{"big":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"y":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, data: f32s(1, 2, 3, 4), want: "overlap"},
		{name: "bad entry", header: `{"a":{"dtype":"F32","shape":"x","data_offsets":[0,8]}}`, data: f32s(1, 2), want: `tensor "a" has a malformed header entry`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "model.safetensors")
			if c.raw != nil {
				if err := os.WriteFile(p, c.raw, 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				writeST(t, p, c.header, c.data)
			}
			_, err := OpenFile(p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want error containing %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

func writeIndex(t *testing.T, dir string, wm map[string]string) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"total_size": 0}, "weight_map": wm})
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSharded(t *testing.T) {
	dir := t.TempDir()
	writeST(t, filepath.Join(dir, "model-00001-of-00002.safetensors"), `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, f32s(7))
	writeST(t, filepath.Join(dir, "model-00002-of-00002.safetensors"), `{"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, f32s(8, 9))
	writeIndex(t, dir, map[string]string{"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"})
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ix.Lookup("b", []int64{2})
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := b.Read()
	if v, _ := tb.F32(); v[1] != 9 || filepath.Base(b.File) != "model-00002-of-00002.safetensors" {
		t.Fatalf("b = %v in %s", v, b.File)
	}
	if _, err := ix.Lookup("c", nil); err == nil || err.Error() != `model.safetensors.index.json: missing tensor "c"` {
		t.Fatalf("missing: %v", err)
	}

	// The index names a shard that is not there.
	writeIndex(t, dir, map[string]string{"a": "model-00001-of-00002.safetensors", "c": "model-00003-of-00003.safetensors"})
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), `shard "model-00003-of-00003.safetensors", which is missing`) {
		t.Fatalf("missing shard: %v", err)
	}
	// The index puts a tensor in the wrong shard.
	writeIndex(t, dir, map[string]string{"a": "model-00002-of-00002.safetensors"})
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), `puts tensor "a" in model-00002-of-00002.safetensors`) {
		t.Fatalf("wrong shard: %v", err)
	}
	// A shard path escaping the folder.
	writeIndex(t, dir, map[string]string{"a": "../x.safetensors"})
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "outside the checkpoint folder") {
		t.Fatalf("escape: %v", err)
	}
	// No checkpoint at all.
	if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "neither model.safetensors") {
		t.Fatalf("empty dir: %v", err)
	}
}
