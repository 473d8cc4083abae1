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

// TestPlanGemma4Wrapper: a gemma4 config (Gemma4ForConditionalGeneration,
// as transformers 5.24 saves it) is read for its text model, as
// gemma4_text's match clause `in text_config scope model.language_model as
// model` says: the config block binds text_config, the checkpoint's
// model.language_model.layers.0... are the family's model.layers.0..., and
// the module is the gemma4_text fixture's, byte for byte.
func TestPlanGemma4Wrapper(t *testing.T) {
	src := testmodels.Fixture("gemma4_text")
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
	cfg, err := json.Marshal(map[string]any{
		"model_type":          "gemma4",
		"architectures":       []string{"Gemma4ForConditionalGeneration"},
		"text_config":         tc,
		"vision_config":       nil,
		"audio_config":        nil,
		"tie_word_embeddings": true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	renameSafetensors(t, filepath.Join(src, "model.safetensors"), filepath.Join(dir, "model.safetensors"), "model.", "model.language_model.")
	p, err := NewPlan(dir, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Family.Name != "gemma4_text" || p.WeightScope != "model.language_model." || p.WeightAs != "model." || p.Nested == nil {
		t.Fatalf("family %s, weight scope %q as %q, nested %v; want gemma4_text, model.language_model. as model., text_config", p.Family.Name, p.WeightScope, p.WeightAs, p.Nested != nil)
	}
	if !bytes.Equal(p.MLIR, text.MLIR) {
		t.Error("the gemma4 wrapper's module differs from the gemma4_text fixture's")
	}
	if _, err := p.Weights.Lookup("model.layers.3.mlp.gate_proj.weight", nil); err != nil {
		t.Error(err)
	}
}

// renameSafetensors copies a safetensors file with every tensor name that
// starts with from renamed to start with to (the header rewritten; the
// data, whose offsets are relative to its start, as it is).
func renameSafetensors(t *testing.T, src, dst, from, to string) {
	t.Helper()
	raw, err := os.ReadFile(src)
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
		if rest, ok := strings.CutPrefix(name, from); ok {
			name = to + rest
		}
		renamed[name] = v
	}
	h, err := json.Marshal(renamed)
	if err != nil {
		t.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), raw[8+n:]...)
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
