package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/internal/testmodels"
)

// TestPlanVariantErrors: a config asking for an attention, RoPE, router or
// MoE variant a family does not implement, or giving a field a value it
// cannot take (one that would make the model compute NaN), is refused at plan time with one line naming the key
// (or the .arch line that reads it) and the value.
func TestPlanVariantErrors(t *testing.T) {
	rope := func(c map[string]any) map[string]any { return c["rope_parameters"].(map[string]any) }
	for _, c := range []struct {
		name, fixture string
		edit          func(map[string]any)
		want          []string
	}{
		{"MLA: unknown rope type", "deepseek_v2", func(c map[string]any) { rope(c)["rope_type"] = "ntk-by-parts" },
			[]string{`rope_scaling (rope_parameters) type "ntk-by-parts" is not supported`, "deepseek_v2.arch:"}},
		{"MLA: unknown topk_method", "deepseek_v2", func(c map[string]any) { c["topk_method"] = "noaux_tc" },
			[]string{`topk_method "noaux_tc" is not supported`, "deepseek_v2.arch:"}},
		{"MLA: groups not dividing the experts", "deepseek_v2", func(c map[string]any) { c["n_group"] = 3 },
			[]string{"n_group dividing the 8 experts", "n_group 3"}},
		{"deepseek_v3: unknown scoring_func", "deepseek_v3", func(c map[string]any) { c["scoring_func"] = "softmax" },
			[]string{`scoring_func "softmax" is not supported by DeepseekV3TopkRouter (sigmoid)`, "deepseek_v3.arch:"}},
		{"deepseek_v3: unknown topk_method", "deepseek_v3", func(c map[string]any) { c["topk_method"] = "greedy" },
			[]string{`topk_method "greedy" is not supported by DeepseekV3TopkRouter (noaux_tc)`, "deepseek_v3.arch:"}},
		{"MLA: longrope without long_factor", "minicpm3", func(c map[string]any) { delete(rope(c), "long_factor") },
			[]string{`"long_factor"`, "minicpm3.arch:"}},
		{"gpt_oss: layer type", "gpt_oss", func(c map[string]any) { c["layer_types"] = []any{"sliding_attention", "chunked_attention"} },
			[]string{"gpt_oss.arch:", "layer_types[1] is chunked_attention: gpt_oss layers are sliding_attention or full_attention"}},
		{"gpt_oss: rope type", "gpt_oss", func(c map[string]any) { rope(c)["rope_type"] = "mrope" },
			[]string{"llama.arch:", "rope_scaling (rope_parameters)", `"mrope" is not supported`}},
		{"rope factor 0", "gpt_oss", func(c map[string]any) { rope(c)["factor"] = 0.0 },
			[]string{`rope_scaling (rope_parameters) of type "yarn" needs "factor" > 0, got 0`}},
		{"negative rms_norm_eps", "mixtral", func(c map[string]any) { c["rms_norm_eps"] = -1.0 },
			[]string{"rms_norm: eps -1 must be >= 0"}},
		{"MoE: more experts per token than experts", "mixtral", func(c map[string]any) { c["num_experts_per_tok"] = 9 },
			[]string{"mixtral.arch:", "top_k 9 must be in [1, 8]", "top_k is num_experts_per_tok = 9"}},
		{"MoE: no experts per token", "qwen3_moe", func(c map[string]any) { c["num_experts_per_tok"] = 0 },
			[]string{"qwen3_moe.arch:", "top_k 0 must be in [1, 16]"}},
		{"MoE: no expert count (qwen3_moe reads num_experts or num_local_experts)", "qwen3_moe", func(c map[string]any) { delete(c, "num_local_experts") },
			[]string{"qwen3_moe.arch:", "num_experts is none"}},
		{"MoE: zero sparse step", "qwen3_moe", func(c map[string]any) { c["decoder_sparse_step"] = 0 },
			[]string{"qwen3_moe.arch:", "division by zero (decoder_sparse_step is 0)"}},
		{"MoE: missing expert count", "olmoe", func(c map[string]any) { delete(c, "num_experts") },
			[]string{`lacks required field "num_experts"`, "olmoe.arch:"}},
		{"MoE: norm_topk_prob not a bool", "qwen2_moe", func(c map[string]any) { c["norm_topk_prob"] = "yes" },
			[]string{`"norm_topk_prob"`, "want bool"}},
		{"MoE: mlp_only_layers not a list", "qwen2_moe", func(c map[string]any) { c["mlp_only_layers"] = 1 },
			[]string{`"mlp_only_layers"`, "want list"}},
		{"MoE: unknown expert activation", "granitemoe", func(c map[string]any) { c["hidden_act"] = "swish2" },
			[]string{`activation "swish2" is not supported`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewPlan(editedFixture(t, c.fixture, c.edit), PlanOptions{})
			if err == nil {
				t.Fatal("NewPlan succeeded on an unsupported variant")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// editedFixture returns a temp folder holding the oracle fixture's
// config.json changed by edit, and its model.safetensors (a symlink).
func editedFixture(t *testing.T, fixture string, edit func(map[string]any)) string {
	t.Helper()
	src := testmodels.Fixture(fixture)
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(src, "model.safetensors"), filepath.Join(dir, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(src, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	edit(cfg)
	if data, err = json.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
