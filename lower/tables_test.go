package lower

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/archc/archc/lower/internal/tablegen"
)

// TestTablesGenerated fails when primitives_gen.go or storage_gen.go is not
// what `go generate ./lower` writes from the data files.
func TestTablesGenerated(t *testing.T) {
	p, err := os.ReadFile("primitives.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.ReadFile("storage_formats.json")
	if err != nil {
		t.Fatal(err)
	}
	prims, storage, err := tablegen.Generate(p, s)
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]byte{"primitives_gen.go": prims, "storage_gen.go": storage} {
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `go generate ./lower`", file)
		}
	}
}

// TestTablesDataErrors: a malformed data file is an error naming the entry.
func TestTablesDataErrors(t *testing.T) {
	s, _ := os.ReadFile("storage_formats.json")
	p, _ := os.ReadFile("primitives.json")
	for _, c := range []struct{ prims, storage, want string }{
		{`[{"name": "x", "params": ["a tensor"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}]`, string(s), `x: parameter "a tensor" is not`},
		{`[{"name": "x", "params": [], "infer": "i", "lower": "l"}]`, string(s), `x: shapes, math and hf are required`},
		{`[{"name": "x", "bogus": 1}]`, string(s), `unknown field "bogus"`},
		{`[{"name": "x", "params": ["a: optional int"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}]`, string(s), `x: optional parameter "a" needs an attrs entry`},
		{`[{"name": "x", "params": ["a: scalar int"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h", "attrs": [{"name": "a", "default": "1", "doc": "d"}]}]`, string(s), `x: attrs entry "a" is not an optional parameter`},
		{`[{"name": "x", "params": ["a: optional int"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h", "attrs": [{"name": "a", "doc": "d"}]}]`, string(s), `x: attrs entry "a" needs a default and a doc`},
		{`[{"name": "x", "params": ["a: scalar"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}]`, string(s), `x: parameter "a" needs a type (a: scalar TYPE)`},
		{`[{"name": "x", "params": ["a: tensor int"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}]`, string(s), `x: parameter "a" of kind tensor takes no type`},
		{`[{"name": "x", "params": ["a: scalar number"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}]`, string(s), `x: parameter "a": unknown type "number"`},
		{`[{"name": "x", "params": ["a: optional enum(p|q)"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h", "attrs": [{"name": "a", "default": "\"r\"", "doc": "d"}]}]`, string(s), `x: parameter "a": default "r" is not one of [p q]`},
		{`[{"name": "x", "params": ["a: scalar int"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}, {"name": "y", "struct": "XAttrs", "params": ["a: scalar float"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}]`, string(s), `y: struct XAttrs is shared with x but the attributes differ`},
		{string(p), `[{"name": "q", "elem": "i8", "block_elems": 32, "block_bytes": 18, "layout": "l", "formula": "f", "reference": "r"}]`, `q: a block format (block_elems > 1) names its Go decoder`},
		{string(p), `[{"name": "f32", "elem": "f64", "block_elems": 1, "block_bytes": 8}]`, `f32: elem "f64"`},
	} {
		_, _, err := tablegen.Generate([]byte(c.prims), []byte(c.storage))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error containing %q", err, c.want)
		}
	}
}

// TestPrimitiveDocs: every primitive of the table is documented, in order,
// and every row of the table has its data-file entry.
func TestPrimitiveDocs(t *testing.T) {
	docs := Primitives()
	if len(docs) != len(primitives) {
		t.Fatalf("%d documented primitives, %d in the table", len(docs), len(primitives))
	}
	for _, d := range docs {
		if primitives[d.Name] == nil || d.Math == "" || d.HF == "" || !strings.HasPrefix(d.Signature, d.Name+"(") {
			t.Errorf("primitive %q: doc %+v", d.Name, d)
		}
	}
	if f, ok := GGMLFormat(12); !ok || f != "q4_k" {
		t.Errorf("GGMLFormat(12) = %q, %v; want q4_k (GGML_TYPE_Q4_K)", f, ok)
	}
	if _, ok := GGMLFormat(10); ok {
		t.Error("GGMLFormat(10) (Q2_K) has a row; archc does not decode Q2_K")
	}
}
