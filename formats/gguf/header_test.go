package gguf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const supportedNames = "F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K"

func TestSupportedTypes(t *testing.T) {
	var names []string
	for _, ty := range SupportedTypes() {
		names = append(names, ty.String())
	}
	if got := strings.Join(names, ", "); got != supportedNames {
		t.Errorf("SupportedTypes = %s, want %s", got, supportedNames)
	}
}

// TestUnsupportedType: a tensor of a type ggml defines but Dequantize does
// not opens (its metadata stays readable) and CheckTypes names the
// tensor, the type and the supported types; a type ggml does not define
// fails Open with the same information.
func TestUnsupportedType(t *testing.T) {
	for _, c := range []struct {
		typ   Type
		bytes int // of 256 elements
	}{{Q2_K, 84}, {Q3_K, 110}, {IQ4_XS, 136}, {Q8_K, 292}} {
		t.Run(c.typ.String(), func(t *testing.T) {
			kvs, ts := tinyLlama()
			ts[1] = tdesc{"output_norm.weight", c.typ, []uint64{256}, make([]byte, c.bytes)}
			f := openBuilt(t, kvs, ts)
			if v, _ := f.Value("general.architecture"); v != "llama" {
				t.Errorf("metadata unreadable: %v", v)
			}
			err := f.CheckTypes()
			want := fmt.Sprintf(`gguf: %s: tensor "output_norm.weight" has type %s, which archc cannot dequantize (supported: %s): use a GGUF with a supported quantization`, f.Path, c.typ, supportedNames)
			if err == nil || err.Error() != want {
				t.Errorf("CheckTypes:\n got %v\nwant %s", err, want)
			}
			bad, _ := f.Lookup("output_norm.weight")
			if err := f.CheckType(bad); err == nil || err.Error() != want {
				t.Errorf("CheckType: got %v", err)
			}
			good, _ := f.Lookup("token_embd.weight")
			if err := f.CheckType(good); err != nil {
				t.Errorf("CheckType(F32): %v", err)
			}
		})
	}
	t.Run("several", func(t *testing.T) {
		kvs, ts := tinyLlama()
		ts[1] = tdesc{"output_norm.weight", Q3_K, []uint64{256}, make([]byte, 110)}
		ts[2] = tdesc{"blk.0.attn_norm.weight", Q2_K, []uint64{256}, make([]byte, 84)}
		err := openBuilt(t, kvs, ts).CheckTypes()
		if err == nil || !strings.Contains(err.Error(), `tensor "output_norm.weight" has type Q3_K (and 1 more tensors of unsupported types)`) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("all supported", func(t *testing.T) {
		if err := openTiny(t).CheckTypes(); err != nil {
			t.Error(err)
		}
	})
	t.Run("unknown number", func(t *testing.T) {
		kvs, ts := tinyLlama()
		ts[1] = tdesc{"output_norm.weight", Type(99), []uint64{4}, make([]byte, 16)}
		mustFail(t, buildGGUF(kvs, ts), `tensor "output_norm.weight" has type type(99), which ggml does not define: the file is corrupt or newer than this reader (archc reads `+supportedNames+")")
	})
}

// TestTruncatedData: a file cut anywhere in its tensor data is reported as
// truncated, naming the first tensor (by offset) that does not fit, the
// bytes it needs and the file's size.
func TestTruncatedData(t *testing.T) {
	kvs, ts := tinyLlama()
	full := buildGGUF(kvs, ts)
	whole, err := Open(writeFile(t, "whole.gguf", full))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cut.gguf")
	for n := whole.DataOffset; n < int64(len(full)); n++ {
		if err := os.WriteFile(p, full[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		var first *Tensor
		for i, tt := range whole.Tensors {
			if tt.Offset+tt.Size > n && (first == nil || tt.Offset < first.Offset) {
				first = &whole.Tensors[i]
			}
		}
		want := fmt.Sprintf("gguf: %s: truncated: tensor %q needs bytes [%d, %d) but the file has %d bytes", p, first.Name, first.Offset, first.Offset+first.Size, n)
		if _, err := Open(p); err == nil || err.Error() != want {
			t.Fatalf("cut at %d:\n got %v\nwant %s", n, err, want)
		}
	}
}

// TestTruncatedHeader: a file cut anywhere after the magic and before the
// end of the tensor infos is reported as a truncated header.
func TestTruncatedHeader(t *testing.T) {
	kvs, ts := tinyLlama()
	full := buildGGUF(kvs, ts)
	h, err := readHeader(writeFile(t, "whole.gguf", full), int64(len(full)))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cut.gguf")
	for n := 4; n < int(h.infoEnd); n++ {
		if err := os.WriteFile(p, full[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(p)
		if err == nil || !strings.HasPrefix(err.Error(), "gguf: "+p+": truncated header: ") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("cut at %d: got %v, want a truncated header", n, err)
		}
	}
	cut := bytes.Index(full, []byte("tokenizer.ggml.tokens")) + len("tokenizer.ggml.tokens") + 20
	_, err = Open(writeFile(t, "mid.gguf", full[:cut]))
	if want := fmt.Sprintf(`truncated header: metadata "tokenizer.ggml.tokens" value runs past the end of the %d-byte file`, cut); err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("got %v, want ...%s", err, want)
	}
}

// TestMetadata: every value type reads back, converted as documented, in
// file order.
func TestMetadata(t *testing.T) {
	kvs := []kv{
		{"general.architecture", "llama"},
		{"u8", uint8(200)},
		{"i16", int16(-7)},
		{"u32", uint32(1 << 31)},
		{"i32", int32(-5)},
		{"f32", float32(0.1)},
		{"f64", 0.25},
		{"b", true},
		{"u64", uint64(math.MaxUint64)},
		{"au32", []uint32{1, 2}},
		{"ai32", []int32{-1, 3}},
		{"af32", []float32{0.5, -2}},
		{"ab", []bool{true, false}},
		{"as", []string{"x", "", "ü"}},
		{"nested", [][]uint32{{1}, {2, 3}}},
	}
	f := openBuilt(t, kvs, nil)
	var keys []string
	for _, e := range kvs {
		keys = append(keys, e.Key)
	}
	if !slices.Equal(f.Keys(), keys) {
		t.Errorf("Keys = %v", f.Keys())
	}
	values := map[string]any{
		"u8": uint64(200), "i16": int64(-7), "u32": uint64(1 << 31), "i32": int64(-5),
		"f32": float64(float32(0.1)), "f64": 0.25, "b": true, "u64": uint64(math.MaxUint64),
		"au32":   ArrayInfo{"uint32", 2, []any{uint64(1), uint64(2)}},
		"as":     ArrayInfo{"string", 3, []any{"x", "", "ü"}},
		"nested": ArrayInfo{"array", 2, []any{ArrayInfo{"uint32", 1, []any{uint64(1)}}, ArrayInfo{"uint32", 2, []any{uint64(2), uint64(3)}}}},
	}
	for k, want := range values {
		if got, ok := f.Value(k); !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("Value(%s) = %#v, want %#v", k, got, want)
		}
	}
	arrays := map[string]any{
		"au32": []uint64{1, 2}, "ai32": []int64{-1, 3}, "af32": []float64{0.5, -2},
		"ab": []bool{true, false}, "as": []string{"x", "", "ü"},
		"nested": []ArrayInfo{{"uint32", 1, []any{uint64(1)}}, {"uint32", 2, []any{uint64(2), uint64(3)}}},
	}
	for k, want := range arrays {
		if got, ok := f.Array(k); !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("Array(%s) = %#v, want %#v", k, got, want)
		}
	}
	if s, ok := f.Strings("as"); !ok || !slices.Equal(s, []string{"x", "", "ü"}) {
		t.Errorf("Strings = %v", s)
	}
	s, _ := f.Strings("as")
	s[0] = "changed"
	if s2, _ := f.Strings("as"); s2[0] != "x" {
		t.Error("Strings shares its slice with the File")
	}
	for _, k := range []string{"u32", "missing"} {
		if _, ok := f.Array(k); ok {
			t.Errorf("Array(%s) ok", k)
		}
	}
	if _, ok := f.Strings("au32"); ok {
		t.Error("Strings of a uint32 array ok")
	}
}

func TestHeaderCorrupt(t *testing.T) {
	kvs, ts := tinyLlama()
	t.Run("duplicate key", func(t *testing.T) {
		mustFail(t, buildGGUF(append(kvs[:2:2], kv{"general.name", "again"}), nil), `metadata "general.name" appears twice`)
	})
	t.Run("architecture type", func(t *testing.T) {
		mustFail(t, buildGGUF(append([]kv{{"general.architecture", uint32(1)}}, kvs[1:]...), ts), "general.architecture has value type uint32, must be string")
	})
	t.Run("unknown value type", func(t *testing.T) {
		b := buildGGUF(kvs[:2], nil)
		i := bytes.Index(b, []byte("general.name")) + len("general.name")
		binary.LittleEndian.PutUint32(b[i:], 13)
		mustFail(t, b, `metadata "general.name" value: unknown value type 13: the file is corrupt`)
	})
	t.Run("nested too deep", func(t *testing.T) {
		var b bytes.Buffer
		le := binary.LittleEndian
		b.Write(buildGGUF(nil, nil)[:24])
		le.PutUint64(b.Bytes()[16:], 1)
		binary.Write(&b, le, uint64(1))
		b.WriteString("k")
		// array of arrays of arrays of uint8
		for _, v := range []any{uint32(9), uint32(9), uint64(1), uint32(9), uint64(1), uint32(9), uint64(1), uint32(0), uint64(0)} {
			binary.Write(&b, le, v)
		}
		mustFail(t, b.Bytes(), "nested")
	})
	t.Run("array longer than the file", func(t *testing.T) {
		b := buildGGUF(append(kvs[:1:1], kv{"a", []uint32{1, 2}}), nil)
		i := bytes.Index(b, []byte{2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0})
		binary.LittleEndian.PutUint64(b[i:], 1<<40)
		mustFail(t, b, `truncated header: metadata "a" value runs past the end`)
	})
}
