package ggufmap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/archc/archc/formats/gguf"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/lower"
)

// oracleDoc is the part of golden/<model>/oracle.json this test reads
// (see golden/smollm2/gen_oracle.py).
type oracleDoc struct {
	GGUFFile string         `json:"gguf_file"`
	GGUFSize int64          `json:"gguf_size"`
	Config   map[string]any `json:"config"`
	Weights  map[string]struct {
		Shape  []int64 `json:"shape"`
		SHA256 string  `json:"sha256"`
		Sum    float64 `json:"sum"`
	} `json:"weights"`
}

// modelsDir is $ARCHC_MODELS or .cache/models under the repository root.
func modelsDir() string {
	if d := os.Getenv("ARCHC_MODELS"); d != "" {
		return d
	}
	return filepath.Join("..", "..", ".cache", "models")
}

// TestRealCheckpoints checks the built-in families' reading of the real
// GGUF checkpoints (Model.Config, Materialize) against transformers' GGUF
// loader (golden/<model>/oracle.json): the config values (with the family's
// defaults, and the sliding layers of the IR the config builds), the set of
// HF tensor names and shapes, and the sha256 of every tensor's f32 bytes —
// so dequantization and the transforms are bit-exact. A missing checkpoint skips, unless the environment has CI set
// (fetch them with scripts/fetch-models.sh and scripts/fetch-gemma3.sh).
func TestRealCheckpoints(t *testing.T) {
	for _, m := range []string{"smollm2", "gemma3"} {
		t.Run(m, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "golden", m, "oracle.json"))
			if err != nil {
				t.Skipf("no oracle for %s: %v", m, err)
			}
			var doc oracleDoc
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(modelsDir(), m, doc.GGUFFile)
			st, err := os.Stat(path)
			if err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("%s missing in CI: %v (run scripts/fetch-models.sh / scripts/fetch-gemma3.sh)", path, err)
				}
				t.Skipf("%s not present: %v", path, err)
			}
			if st.Size() != doc.GGUFSize {
				t.Fatalf("%s is %d bytes, the oracle was made from %d: re-fetch the model", path, st.Size(), doc.GGUFSize)
			}
			g, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			f := mustRead(t, g)
			checkConfig(t, f, doc.Config)
			if testing.Short() {
				t.Skip("-short: skipping Materialize of the real checkpoint")
			}
			ix, err := f.Materialize(context.Background(), t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for n := range doc.Weights {
				want = append(want, n)
			}
			for n := range ix.Tensors {
				got = append(got, n)
			}
			sort.Strings(want)
			sort.Strings(got)
			if !slices.Equal(got, want) {
				t.Fatalf("tensor names differ from transformers':\n got %v\nwant %v", got, want)
			}
			fh, err := os.Open(ix.Tensors[got[0]].File)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			bad := 0
			for _, n := range want {
				info, w := ix.Tensors[n], doc.Weights[n]
				if !slices.Equal(info.Shape, w.Shape) {
					t.Errorf("%s: shape %v, transformers %v", n, info.Shape, w.Shape)
					continue
				}
				h := sha256.New()
				if _, err := io.Copy(h, io.NewSectionReader(fh, info.Offset, info.Length)); err != nil {
					t.Fatal(err)
				}
				if s := hex.EncodeToString(h.Sum(nil)); s != w.SHA256 {
					bad++
					if bad <= 5 {
						data, _, _, _ := f.ReadTensor(ggufNameOf(f, n))
						sum := 0.0
						for _, v := range data {
							sum += float64(v)
						}
						t.Errorf("%s: f32 bytes differ from transformers' (sum %v, transformers %v)", n, sum, w.Sum)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d tensors differ", bad, len(want))
			}
		})
	}
}

func ggufNameOf(f *Model, hf string) string {
	for _, t := range f.Tensors {
		if n, ok := f.HFName(t.Name); ok && n == hf {
			return t.Name
		}
	}
	return ""
}

// checkConfig compares the family's config for the file (its gguf fields
// with the family's defaults, plus the fields it does not declare) with
// transformers' config for the same file, and transformers' layer_types
// with the sliding windows of the IR built from it. transformers 5 nests
// rope settings in rope_parameters.
func checkConfig(t *testing.T, f *Model, hf map[string]any) {
	t.Helper()
	fam, err := familyOf(f.File)
	if err != nil {
		t.Fatal(err)
	}
	c, err := dsl.EvalConfig(fam, f.Config)
	if err != nil {
		t.Fatal(err)
	}
	if lt, ok := hf["layer_types"].([]any); ok {
		g, err := dsl.Build(fam, c, lower.Registry{})
		if err != nil {
			t.Fatal(err)
		}
		var got []any
		for _, n := range g.Nodes {
			if n.Prim == "attention" {
				got = append(got, map[bool]any{true: "sliding_attention", false: "full_attention"}[n.Attrs["window"] != nil])
			}
		}
		if !reflect.DeepEqual(got, lt) {
			t.Errorf("attention windows by layer %v, transformers layer_types %v", got, lt)
		}
	}
	for k, v := range f.Config {
		if _, ok := c[k]; !ok {
			c[k] = v
		}
	}
	norm := func(v any) any { // JSON numbers decode as float64
		switch x := v.(type) {
		case int64:
			return float64(x)
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = e
			}
			return out
		}
		return v
	}
	keys := []string{"model_type", "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
		"num_attention_heads", "num_key_value_heads", "head_dim", "rms_norm_eps", "max_position_embeddings",
		"tie_word_embeddings", "bos_token_id", "eos_token_id", "pad_token_id", "hidden_act", "attention_bias",
		"sliding_window", "query_pre_attn_scalar", "final_logit_softcapping",
		"attn_logit_softcapping", "hidden_activation"}
	for _, k := range keys {
		hv, ok := hf[k]
		if !ok {
			continue
		}
		gv, gok := c[k]
		if k == "sliding_window" && hv == nil && !gok {
			continue
		}
		if !gok || !reflect.DeepEqual(norm(gv), hv) {
			t.Errorf("config %s = %#v, transformers %#v", k, gv, hv)
		}
	}
	rp, _ := hf["rope_parameters"].(map[string]any)
	if full, ok := rp["full_attention"].(map[string]any); ok {
		if c["rope_theta"] != full["rope_theta"] {
			t.Errorf("rope_theta %v, transformers full_attention %v", c["rope_theta"], full["rope_theta"])
		}
		if sl, ok := rp["sliding_attention"].(map[string]any); ok && c["rope_local_base_freq"] != sl["rope_theta"] {
			t.Errorf("rope_local_base_freq %v, transformers sliding_attention %v", c["rope_local_base_freq"], sl["rope_theta"])
		}
	} else if rp != nil && c["rope_theta"] != rp["rope_theta"] {
		t.Errorf("rope_theta %v, transformers %v", c["rope_theta"], rp["rope_theta"])
	}
}
