package dsl_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/lower"
)

// fuzzConfig is the config.json fuzzed files are evaluated against.
const fuzzConfig = `{"model_type": "llama", "vocab_size": 32, "hidden_size": 16,
	"intermediate_size": 24, "num_hidden_layers": 1, "num_attention_heads": 4,
	"rope_parameters": {"rope_theta": 10000.0}, "sliding_window": null}`

// fuzzGGUF is the GGUF file fuzzed gguf sections read.
var fuzzGGUF = fakeGGUF{arch: "llama",
	meta: map[string]any{
		"general.name": "fuzz", "llama.block_count": int64(2), "llama.embedding_length": int64(8),
		"llama.context_length": int64(16), "llama.feed_forward_length": int64(16),
		"llama.attention.layer_norm_rms_epsilon": 1e-5, "llama.rope.scaling.type": "linear",
		"llama.attention.head_count": int64(2), "llama.attention.sliding_window_pattern": []any{true, false},
		"tokenizer.ggml.tokens": []any{"a", "b"},
	},
	tensors: map[string][]int64{"token_embd.weight": {2, 8}, "blk.0.attn_q.weight": {8, 8}},
}

// FuzzParse checks that Parse, Check, EvalConfig, Matches and the gguf
// section's ClaimsGGUF and EvalGGUF never panic,
// and that every diagnostic is a *dsl.Error with a position. Seeds: the
// corpus in testdata/fuzz/FuzzParse, the built-in families and every .arch
// source under testdata. (Build is not fuzzed: a fuzzed layer count or
// width can legitimately ask for unbounded work.)
func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob("../archs/*.arch")
	more, _ := filepath.Glob("testdata/check/*.arch")
	for _, p := range append(paths, more...) {
		if src, err := os.ReadFile(p); err == nil {
			f.Add(src)
		}
	}
	cases, _ := filepath.Glob("testdata/parse/*.txtar")
	for _, p := range cases {
		if ar, err := txtar.ParseFile(p); err == nil {
			for _, file := range ar.Files {
				if file.Name == "in.arch" {
					f.Add(file.Data)
				}
			}
		}
	}
	raw, err := dsl.DecodeConfig([]byte(fuzzConfig))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := dsl.Parse("fuzz.arch", src)
		if err != nil {
			var e *dsl.Error
			if !errors.As(err, &e) || e.Pos.Line < 1 {
				t.Fatalf("Parse error %q is not a positioned *dsl.Error", err)
			}
			return
		}
		diags := dsl.Check(file, lower.Registry{})
		for _, d := range diags {
			if d.Msg == "" || d.Pos.Line < 1 {
				t.Fatalf("diagnostic without message or position: %#v", d)
			}
		}
		if len(diags) > 0 {
			return
		}
		cfg, err := dsl.EvalConfig(file, raw)
		if err != nil {
			return
		}
		_, _ = dsl.Matches(file, "llama", cfg)
		_ = dsl.ModelTypes(file)
		_ = dsl.GGUFArchs(file)
		if _, err := dsl.ClaimsGGUF(file, fuzzGGUF); err != nil {
			return
		}
		if r, err := dsl.EvalGGUF(file, fuzzGGUF); err == nil {
			r.Tensor("blk.0.attn_q.weight")
		}
	})
}
