package lower

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/archc/archc/formats"
	"github.com/archc/archc/lower/internal/tablegen"
)

// TestTablesGenerated fails when primitives_gen.go is not what `go
// generate ./lower` writes from the data file.
func TestTablesGenerated(t *testing.T) {
	p, err := os.ReadFile("primitives.json")
	if err != nil {
		t.Fatal(err)
	}
	prims, err := tablegen.Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]byte{"primitives_gen.go": prims} {
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
	for _, c := range []struct{ prims, want string }{
		{`[{"name": "x", "params": ["a tensor"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}]`, `x: parameter "a tensor" is not`},
		{`[{"name": "x", "params": [], "infer": "i", "lower": "l"}]`, `x: shapes, math and hf are required`},
		{`[{"name": "x", "bogus": 1}]`, `unknown field "bogus"`},
		{`[{"name": "x", "params": ["a: optional int"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}]`, `x: optional parameter "a" needs an attrs entry`},
		{`[{"name": "x", "params": ["a: scalar int"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h", "attrs": [{"name": "a", "default": "1", "doc": "d"}]}]`, `x: attrs entry "a" is not an optional parameter`},
		{`[{"name": "x", "params": ["a: optional int"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h", "attrs": [{"name": "a", "doc": "d"}]}]`, `x: attrs entry "a" needs a default and a doc`},
		{`[{"name": "x", "params": ["a: scalar"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}]`, `x: parameter "a" needs a type (a: scalar TYPE)`},
		{`[{"name": "x", "params": ["a: tensor int"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}]`, `x: parameter "a" of kind tensor takes no type`},
		{`[{"name": "x", "params": ["a: scalar number"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}]`, `x: parameter "a": unknown type "number"`},
		{`[{"name": "x", "params": ["a: optional enum(p|q)"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h", "attrs": [{"name": "a", "default": "\"r\"", "doc": "d"}]}]`, `x: parameter "a": default "r" is not one of [p q]`},
		{`[{"name": "x", "params": ["a: scalar int"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}, {"name": "y", "struct": "XAttrs", "params": ["a: scalar float"], "infer": "i", "lower": "l", "shapes": "s", "math": "m", "hf": "h"}]`, `y: struct XAttrs is shared with x but the attributes differ`},
	} {
		_, err := tablegen.Generate([]byte(c.prims))
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
}

// TestStorageDecoders: every block format of the storage table
// (formats) has a decoder here, and every decoder a row.
func TestStorageDecoders(t *testing.T) {
	for _, r := range formats.Rows() {
		if _, ok := lookupStorage(r.Name); !ok {
			t.Errorf("storage format %s (formats/formats.json) has no decoder in lower (storage.go decoders)", r.Name)
		}
	}
	for name := range decoders {
		if r, ok := formats.Lookup(name); !ok || r.BlockElems == 1 {
			t.Errorf("decoder %s has no block-format row in formats/formats.json", name)
		}
	}
	if _, ok := lookupStorage("mlx_affine3_g32_bf16"); !ok {
		t.Error("lookupStorage(mlx_affine3_g32_bf16): no affine decoder")
	}
}
