package driver

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/internal/testmodels"
)

// TestPlanNestedConfig: a llama4 config (Llama4ForConditionalGeneration)
// is read for its text model, as llama4_text's match clause `in
// text_config scope language_model` says: the config block binds
// text_config, the checkpoint's language_model.model.layers.0... are the
// family's model.layers.0..., and the module is the llama4_text fixture's,
// byte for byte. Without a text_config object it is refused by name.
func TestPlanNestedConfig(t *testing.T) {
	src := testmodels.Fixture("llama4_text")
	text, err := NewPlan(src, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tc map[string]any
	data, err := os.ReadFile(filepath.Join(src, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &tc); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "config.json"), map[string]any{
		"model_type":    "llama4",
		"architectures": []string{"Llama4ForConditionalGeneration"},
		"text_config":   tc,
		"vision_config": map[string]any{"model_type": "llama4_vision_model", "hidden_size": 16},
	})
	prefixSafetensors(t, filepath.Join(src, "model.safetensors"), filepath.Join(dir, "model.safetensors"), "language_model.")
	p, err := NewPlan(dir, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Family.Name != "llama4_text" || p.WeightScope != "language_model." || p.Nested == nil {
		t.Fatalf("family %s, weight scope %q, nested %v; want llama4_text, language_model., text_config", p.Family.Name, p.WeightScope, p.Nested != nil)
	}
	if !bytes.Equal(p.MLIR, text.MLIR) {
		t.Error("the llama4 wrapper's module differs from the llama4_text fixture's")
	}
	if _, err := p.Weights.Lookup("model.layers.1.feed_forward.experts.gate_up_proj", nil); err != nil {
		t.Error(err)
	}

	bad := t.TempDir()
	writeJSON(t, filepath.Join(bad, "config.json"), map[string]any{"model_type": "llama4", "text_config": "none"})
	_, err = NewPlan(bad, PlanOptions{})
	if err == nil || !strings.Contains(err.Error(), "text_config must be an object (family llama4_text reads model_type \"llama4\"'s text model from it)") {
		t.Errorf("llama4 without a text_config object: %v", err)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// prefixSafetensors copies a safetensors file with prefix before every
// tensor name (the header rewritten; the data, whose offsets are relative
// to its start, as it is).
func prefixSafetensors(t *testing.T, from, to, prefix string) {
	t.Helper()
	raw, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(raw[:8])
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+n], &header); err != nil {
		t.Fatal(err)
	}
	renamed := map[string]json.RawMessage{}
	for name, v := range header {
		if name != "__metadata__" {
			name = prefix + name
		}
		renamed[name] = v
	}
	h, err := json.Marshal(renamed)
	if err != nil {
		t.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), raw[8+n:]...)
	if err := os.WriteFile(to, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
