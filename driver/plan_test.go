package driver

import (
	"encoding/json"
	"github.com/archc/archc/internal/testckpt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/internal/testmodels"
)

func TestPlanErrors(t *testing.T) {
	const norm = "model.layers.1.input_layernorm.weight"
	for _, c := range []struct {
		name    string
		edit    func(map[string]testckpt.STTensor)
		editCfg func(map[string]any)
		want    []string // substrings of the error
	}{
		{"unknown model_type", nil, func(c map[string]any) { c["model_type"] = "frobnicator" }, []string{`unsupported model_type "frobnicator"`, "llama"}},
		{"no model_type", nil, func(c map[string]any) { delete(c, "model_type") }, []string{"no model_type"}},
		{"unsupported family", nil, func(c map[string]any) { c["model_type"] = "jamba" }, []string{`unsupported model_type "jamba"`}},
		{"mixture of experts without experts", nil, func(c map[string]any) { c["model_type"] = "qwen2_moe" }, []string{`lacks required field "num_experts"`, "qwen2_moe.arch:"}},
		{"missing config field", nil, func(c map[string]any) { delete(c, "hidden_size") }, []string{`lacks required field "hidden_size"`, "llama.arch:"}},
		{"config field of wrong type", nil, func(c map[string]any) { c["num_hidden_layers"] = "two" }, []string{`"num_hidden_layers"`, "want int"}},
		{"missing tensor", func(ts map[string]testckpt.STTensor) { delete(ts, norm) }, nil, []string{`missing tensor "` + norm + `"`}},
		{"wrong shape", func(ts map[string]testckpt.STTensor) {
			ts[norm] = testckpt.STTensor{DType: "F32", Shape: []int64{32}, Data: make([]byte, 32*4)}
		}, nil, []string{norm, "shape [32]", "[64]"}},
		{"unsupported dtype", func(ts map[string]testckpt.STTensor) {
			ts[norm] = testckpt.STTensor{DType: "I8", Shape: []int64{64}, Data: make([]byte, 64)}
		}, nil, []string{norm, "I8"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := testckpt.FixtureCopy(t, c.edit, c.editCfg)
			_, err := NewPlan(dir, PlanOptions{})
			if err == nil {
				t.Fatal("NewPlan succeeded on bad input")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestPlanBadArch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.arch")
	src := "arch bad {\n  match model_type \"llama\"\n  x = rms_nrom(tokens)\n  logits = x\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewPlan(fixture, PlanOptions{Arch: path})
	if err == nil || !strings.Contains(err.Error(), path+":3:7: unknown primitive \"rms_nrom\" (did you mean rms_norm?)") {
		t.Fatalf("got %v, want a positioned unknown-primitive error", err)
	}
}

// fixture is the tiny llama oracle fixture.
var fixture = testmodels.Fixture("llama-tied")

// TestPlanGptOssVariants: a gpt_oss config with an attention or RoPE
// variant the family does not have is a one-line error naming the key, at
// the .arch line that reads it.
func TestPlanGptOssVariants(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(map[string]any)
		want []string
	}{
		{"layer type", func(c map[string]any) { c["layer_types"] = []any{"sliding_attention", "chunked_attention"} },
			[]string{"gpt_oss.arch:", "layer_types[1] is chunked_attention: gpt_oss layers are sliding_attention or full_attention"}},
		{"rope type", func(c map[string]any) { c["rope_parameters"].(map[string]any)["rope_type"] = "mrope" },
			[]string{"llama.arch:", "rope_scaling (rope_parameters)", `"mrope" is not supported`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(testmodels.Fixture("gpt_oss"), "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			var cfg map[string]any
			if err := json.Unmarshal(data, &cfg); err != nil {
				t.Fatal(err)
			}
			c.edit(cfg)
			dir := t.TempDir()
			if data, err = json.Marshal(cfg); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = NewPlan(dir, PlanOptions{})
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
