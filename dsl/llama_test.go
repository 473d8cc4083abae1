package dsl_test

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/internal/golden"
)

// tinyLlama is the part of a Llama config.json every test below shares.
const tinyLlama = `"vocab_size": 32, "hidden_size": 64, "intermediate_size": 96,
	"num_hidden_layers": 1, "num_attention_heads": 4`

func parseLlama(t *testing.T) *dsl.File {
	t.Helper()
	src, err := os.ReadFile("../archs/llama.arch")
	if err != nil {
		t.Fatal(err)
	}
	f, err := dsl.Parse("llama.arch", src)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func evalLlama(t *testing.T, f *dsl.File, config string) (map[string]any, map[string]any) {
	t.Helper()
	raw, err := dsl.DecodeConfig([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := dsl.EvalConfig(f, raw)
	if err != nil {
		t.Fatal(err)
	}
	return raw, cfg
}

func TestLlamaConfig(t *testing.T) {
	f := parseLlama(t)
	for _, tc := range []struct {
		name   string
		config string
		want   map[string]any // a subset of the evaluated fields
	}{
		{
			name:   "transformers v5 rope_parameters",
			config: `{` + tinyLlama + `, "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}`,
			want: map[string]any{
				"rope_theta":   500000.0,
				"rope_scaling": map[string]any{"rope_type": "default", "rope_theta": 500000.0},
			},
		},
		{
			name:   "transformers v5 integral rope_theta",
			config: `{` + tinyLlama + `, "rope_parameters": {"rope_type": "default", "rope_theta": 1000000}}`,
			want:   map[string]any{"rope_theta": 1000000.0},
		},
		{
			name:   "transformers v4 top-level rope_theta",
			config: `{` + tinyLlama + `, "rope_theta": 500000.0, "rope_scaling": null}`,
			want:   map[string]any{"rope_theta": 500000.0, "rope_scaling": nil, "rope_parameters": nil},
		},
		{
			name:   "transformers v4 rope_scaling dict",
			config: `{` + tinyLlama + `, "rope_theta": 500000, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}`,
			want:   map[string]any{"rope_theta": 500000.0, "rope_scaling": map[string]any{"rope_type": "llama3", "factor": 8.0}},
		},
		{
			name:   "no theta anywhere",
			config: `{` + tinyLlama + `}`,
			want:   map[string]any{"rope_theta": 10000.0, "rope_scaling": nil},
		},
		{
			name:   "head_dim null falls back to hidden_size // heads",
			config: `{` + tinyLlama + `, "head_dim": null, "num_key_value_heads": null}`,
			want:   map[string]any{"head_dim": int64(16), "num_key_value_heads": int64(4)},
		},
		{
			name:   "explicit head_dim and kv heads",
			config: `{` + tinyLlama + `, "head_dim": 32, "num_key_value_heads": 2}`,
			want:   map[string]any{"head_dim": int64(32), "num_key_value_heads": int64(2)},
		},
		{
			name:   "defaults",
			config: `{` + tinyLlama + `}`,
			want: map[string]any{
				"rms_norm_eps": 1e-6, "attention_bias": false, "mlp_bias": false,
				"tie_word_embeddings": false, "sliding_window": nil,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cfg := evalLlama(t, f, tc.config)
			got := map[string]any{}
			for k := range tc.want {
				v, ok := cfg[k]
				if !ok {
					t.Errorf("field %s not bound", k)
				}
				got[k] = v
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLlamaMatches(t *testing.T) {
	f := parseLlama(t)
	if diff := cmp.Diff([]string{"llama", "mistral (conditional)"}, dsl.ModelTypes(f)); diff != "" {
		t.Errorf("ModelTypes (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name   string
		config string
		want   bool
	}{
		{"llama", `{"model_type": "llama", ` + tinyLlama + `}`, true},
		{"llama with sliding_window", `{"model_type": "llama", "sliding_window": 4096, ` + tinyLlama + `}`, true},
		{"mistral sliding_window null", `{"model_type": "mistral", "sliding_window": null, ` + tinyLlama + `}`, true},
		{"mistral sliding_window absent", `{"model_type": "mistral", ` + tinyLlama + `}`, true},
		{"mistral sliding_window set", `{"model_type": "mistral", "sliding_window": 4096, ` + tinyLlama + `}`, false},
		{"unknown model_type", `{"model_type": "qwen2", ` + tinyLlama + `}`, false},
		{"no model_type", `{` + tinyLlama + `}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, cfg := evalLlama(t, f, tc.config)
			modelType, _ := raw["model_type"].(string)
			got, err := dsl.Matches(f, modelType, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Matches(%q) = %v, want %v", modelType, got, tc.want)
			}
		})
	}
}

// TestGrammar keeps the grammar's EBNF golden, so grammar changes show in
// review (go test -update rewrites testdata/grammar.ebnf).
func TestGrammar(t *testing.T) {
	golden.Check(t, "testdata/grammar.ebnf", []byte(dsl.Grammar()+"\n"))
}
