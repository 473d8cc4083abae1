package formats

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/archc/archc/formats/internal/formatgen"
)

// TestGenerated fails when formats_gen.go is not what `go generate
// ./formats` writes from formats.json.
func TestGenerated(t *testing.T) {
	data, err := os.ReadFile("formats.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := formatgen.Generate(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("formats_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("formats_gen.go is stale: run `go generate ./formats`")
	}
}

// TestDataErrors: a malformed formats.json is an error naming the entry.
func TestDataErrors(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{`[{"name": "q", "elem": "f32", "block_elems": 32, "block_bytes": 18, "layout": "l", "formula": "f", "reference": "r"}]`, `q: a float format has block_elems 1`},
		{`[{"name": "f32", "elem": "f64", "block_elems": 1, "block_bytes": 8}]`, `f32: elem "f64"`},
		{`[{"name": "f32", "elem": "f32", "block_elems": 1, "block_bytes": 4}]`, `f32: layout, formula and reference are required`},
		{`[{"name": "x", "bogus": 1}]`, `unknown field "bogus"`},
		{`[{"name": "a", "ggml_type": 0, "elem": "f32", "block_elems": 1, "block_bytes": 4, "layout": "l", "formula": "f", "reference": "r"},
		   {"name": "b", "ggml_type": 0, "elem": "f16", "block_elems": 1, "block_bytes": 2, "layout": "l", "formula": "f", "reference": "r"}]`, `b: ggml_type 0 is negative or taken`},
	} {
		if _, err := formatgen.Generate([]byte(c.data)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

func TestLookup(t *testing.T) {
	if f, ok := GGML(12); !ok || f != "q4_k" {
		t.Errorf("GGML(12) = %q, %v; want q4_k (GGML_TYPE_Q4_K)", f, ok)
	}
	if _, ok := GGML(10); ok {
		t.Error("GGML(10) (Q2_K) has a row; archc does not decode Q2_K")
	}
	if f, ok := Lookup("q8_0"); !ok || f.BlockElems != 32 || f.BlockBytes != 34 || f.Elem != "i8" {
		t.Errorf("Lookup(q8_0) = %+v, %v", f, ok)
	}
	name, ok := Affine(4, 64, "bf16")
	if f, ok2 := Lookup(name); !ok || !ok2 || name != "mlx_affine4_g64_bf16" || f.BlockElems != 64 || f.BlockBytes != 2*2+64*4/8 {
		t.Errorf("Affine(4, 64, bf16) = %q, %v; Lookup: %+v", name, ok, f)
	}
	for _, bad := range [][3]any{{7, 64, "f16"}, {4, 16, "f16"}} {
		if _, ok := Affine(bad[0].(int), bad[1].(int), bad[2].(string)); ok {
			t.Errorf("Affine%v: MLX writes no such format", bad)
		}
	}
	if _, ok := Lookup("q2_k"); ok {
		t.Error("Lookup(q2_k): no such row")
	}
	names := Names()
	if len(names) != len(Rows())+1 || !strings.Contains(strings.Join(names, " "), AffinePattern) {
		t.Errorf("Names() = %v", names)
	}
}
