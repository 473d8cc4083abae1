package driver

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/archc/archc/internal/testmodels"
)

// TestEncoderScope: llava's encoder is declared `scope
// vision_tower.vision_model as vision_tower`, so a checkpoint in
// llava-hf's layout (vision_tower.vision_model.embeddings...) serves the
// same module as the vision/llava fixture, which transformers 5.24 saved
// as vision_tower.embeddings....
func TestEncoderScope(t *testing.T) {
	src := testmodels.Fixture("vision/llava")
	saved, err := NewPlan(src, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(src, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	renameSafetensors(t, filepath.Join(src, "model.safetensors"), filepath.Join(dir, "model.safetensors"), "vision_tower.", "vision_tower.vision_model.")
	p, err := NewPlan(dir, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.MLIR, saved.MLIR) {
		t.Error("the llava-hf layout's module differs from the saved layout's")
	}
	for _, name := range []string{"vision_tower.embeddings.class_embedding", "vision_tower.encoder.layers.1.mlp.fc2.weight"} {
		if _, err := p.Weights.Lookup(name, nil); err != nil {
			t.Errorf("the llava-hf layout does not serve %s: %v", name, err)
		}
	}
}
