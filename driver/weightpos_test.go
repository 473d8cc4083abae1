package driver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/internal/testmodels"
)

// TestPlanWeightPositions: a checkpoint tensor that is missing (a typo in
// a weight path) or mis-shaped (a config that disagrees with the
// checkpoint) is reported at the .arch position that declared the weight,
// a missing one with the closest checkpoint name.
func TestPlanWeightPositions(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.arch")
	src := "arch typo extends llama {\n  match model_type \"llama\"\n" +
		"  block query(h) { return heads(linear(h, self_attn.q_prj, num_attention_heads * head_dim, bias: attention_bias), num_attention_heads) }\n}\n"
	if err := os.WriteFile(typo, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewPlan(fixture, PlanOptions{Arch: typo})
	want := typo + `:3:43: model.safetensors: missing tensor "model.layers.0.self_attn.q_prj.weight" (did you mean model.layers.0.self_attn.q_proj.weight?)`
	if err == nil || err.Error() != want {
		t.Errorf("typo in a weight path:\ngot  %v\nwant %s", err, want)
	}

	// The fixture's checkpoint with a config whose MLP is twice as wide.
	model := filepath.Join(dir, "model")
	if err := os.Mkdir(model, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(fixture, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg = []byte(strings.Replace(string(cfg), `"intermediate_size": 128`, `"intermediate_size": 256`, 1))
	if err := os.WriteFile(filepath.Join(model, "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(filepath.Join(fixture, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(model, "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	_, err = NewPlan(model, PlanOptions{})
	want = `llama.arch:45:29: model.safetensors: tensor "model.layers.0.mlp.gate_proj.weight" has shape [128 64], the config implies [256 64]`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("mis-shaped tensor:\ngot  %v\nwant %s...", err, want)
	}
}

// TestPlanGGUFRowTypo: a gguf section whose tensor row misspells the
// Hugging Face name leaves the weight missing; the error names the file's
// tensor the row maps, the name it maps it to, and the row to check,
// instead of asking whether the file is of the family's architecture.
func TestPlanGGUFRowTypo(t *testing.T) {
	twin := testmodels.GGUFTwin(t, filepath.Join(fixture, "model.q8_0.gguf"))
	typo := filepath.Join(t.TempDir(), "row.arch")
	src := "arch row extends llama {\n  match model_type \"llama\"\n  gguf \"llama\" {\n    tensor blk.{i}.ffn_up -> model.layers.{i}.mlp.upp_proj\n  }\n}\n"
	if err := os.WriteFile(typo, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewPlan(twin, PlanOptions{Arch: typo})
	for _, want := range []string{`missing tensor "model.layers.0.mlp.up_proj.weight"`, "blk.0.ffn_up.weight", `"model.layers.0.mlp.upp_proj.weight"`, "tensor row"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want it to name %s", err, want)
		}
	}
}
