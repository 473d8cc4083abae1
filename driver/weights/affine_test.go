package weights

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/archc/archc/dsl"
)

// mlxFixture is an MLX 4-bit, group-32, bf16-scales folder written by
// mlx-lm (golden/gen_mlx_fixtures.py).
const mlxFixture = "../../golden/testdata/llama-mlx-q4"

func readConfig(t *testing.T, dir string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := dsl.DecodeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestAffineView(t *testing.T) {
	ix, err := Open(mlxFixture)
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseAffineQuant(readConfig(t, mlxFixture))
	if err != nil || q == nil {
		t.Fatalf("ParseAffineQuant = %v, %v", q, err)
	}
	if q.Default != (AffineParams{GroupSize: 32, Bits: 4}) {
		t.Errorf("default params %+v, want group 32 bits 4", q.Default)
	}
	v, err := Affine(ix, q)
	if err != nil {
		t.Fatal(err)
	}
	const name = "model.layers.0.mlp.down_proj.weight" // [64, 128] logical
	info := v.Tensors[name]
	if !slices.Equal(info.Shape, []int64{64, 128}) || info.Format != "mlx_affine4_g32_bf16" || info.File != "" {
		t.Errorf("%s: shape %v format %q file %q, want [64 128] mlx_affine4_g32_bf16 and no file before packing", name, info.Shape, info.Format, info.File)
	}
	// 64 rows · 4 groups · (2 + 2 + 16) bytes: the three parts' size.
	if info.Length != 64*4*20 {
		t.Errorf("%s: length %d, want %d", name, info.Length, 64*4*20)
	}
	for n := range v.Tensors {
		if strings.HasSuffix(n, ".scales") || strings.HasSuffix(n, ".biases") {
			t.Errorf("%s is still in the logical view", n)
		}
	}
	if !v.NeedsPack() {
		t.Error("NeedsPack = false before PackAffine")
	}

	dir := t.TempDir()
	packed, err := v.PackAffine(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if packed.NeedsPack() {
		t.Error("NeedsPack = true after PackAffine")
	}
	got, err := packed.Tensors[name].Read()
	if err != nil {
		t.Fatal(err)
	}
	if packed.Tensors[name].Offset%64 != 0 {
		t.Errorf("offset %d is not 64-byte aligned", packed.Tensors[name].Offset)
	}
	// Group g of row r: scale, bias, then bytes [16g, 16g+16) of row r.
	src := info.Source
	qs, _ := src.Weight.Read()
	sc, _ := src.Scales.Read()
	bi, _ := src.Biases.Read()
	for _, rg := range [][2]int{{0, 0}, {0, 3}, {17, 2}, {63, 3}} {
		r, g := rg[0], rg[1]
		blk := got.Data[(r*4+g)*20:][:20]
		want := slices.Concat(sc.Data[(r*4+g)*2:][:2], bi.Data[(r*4+g)*2:][:2], qs.Data[r*64+g*16:][:16])
		if !bytes.Equal(blk, want) {
			t.Errorf("row %d group %d: packed %x, want %x", r, g, blk, want)
		}
	}
	// A second pack reuses the file.
	st, _ := os.Stat(packed.Tensors[name].File)
	again, err := v.PackAffine(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	st2, _ := os.Stat(again.Tensors[name].File)
	if !os.SameFile(st, st2) || !st.ModTime().Equal(st2.ModTime()) {
		t.Error("second PackAffine rewrote the cache file")
	}
}

func TestParseAffineQuantErrors(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"quantization": {"group_size": 64, "bits": 4, "mode": "mxfp4"}}`, `mode mxfp4 is not supported`},
		{`{"quantization_config": {"quant_method": "gptq", "bits": 4}}`, `quant_method "gptq" is not supported`},
		{`{"quantization": {"group_size": 64, "bits": 7}}`, `bits 7 and group_size 64 is not supported`},
		{`{"quantization": {"group_size": 48, "bits": 4}}`, `bits 4 and group_size 48 is not supported`},
		{`{"quantization": {"bits": 4}}`, `needs integer group_size and bits`},
		{`{"quantization": {"group_size": 64, "bits": 4, "model.layers.0.mlp": {"group_size": 64, "bits": 9}}}`, `quantization.model.layers.0.mlp: MLX affine quantization with bits 9`},
		{`{"quantization": {"group_size": 64, "bits": 4, "lm_head": true}}`, `quantization.lm_head: true is not a quantization`},
	} {
		cfg, err := dsl.DecodeConfig([]byte(c.json))
		if err != nil {
			t.Fatal(err)
		}
		_, err = ParseAffineQuant(cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.json, err, c.want)
		}
	}
	if q, err := ParseAffineQuant(map[string]any{"hidden_size": int64(8)}); q != nil || err != nil {
		t.Errorf("no quantization: got %v, %v; want nil, nil", q, err)
	}
}

func TestAffineErrors(t *testing.T) {
	ix, err := Open(mlxFixture)
	if err != nil {
		t.Fatal(err)
	}
	cfg := readConfig(t, mlxFixture)

	// The config says 8 bits, the data is 4-bit.
	q, _ := ParseAffineQuant(cfg)
	q.Default.Bits = 8
	if _, err := Affine(ix, q); err == nil || !strings.Contains(err.Error(), "do not match bits 8 and group_size 32") {
		t.Errorf("wrong bits: %v", err)
	}

	// A U32 weight without its scales.
	q, _ = ParseAffineQuant(cfg)
	broken := &Index{Source: ix.Source, Tensors: map[string]Info{}}
	for n, info := range ix.Tensors {
		if n != "lm_head.scales" {
			broken.Tensors[n] = info
		}
	}
	if _, err := Affine(broken, q); err == nil || !strings.Contains(err.Error(), `"lm_head.weight" is U32 without "lm_head.scales"`) {
		t.Errorf("missing scales: %v", err)
	}

	// A module the config marks unquantized but stored quantized.
	q, _ = ParseAffineQuant(cfg)
	q.Modules["lm_head"] = nil
	if _, err := Affine(ix, q); err == nil || !strings.Contains(err.Error(), "quantization.lm_head is false") {
		t.Errorf("inconsistent module: %v", err)
	}
}
