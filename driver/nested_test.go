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

// TestPlanWrappers: a multimodal wrapper's config is read for its text
// model, as the text family's nested match clause says: the config block
// binds text_config (the wrapper's own top-level fields first), the
// checkpoint's tensors under the clause's scope are the family's names,
// and the module is the text fixture's, byte for byte.
//   - llama4 (Llama4ForConditionalGeneration), `in text_config scope
//     language_model`: language_model.model.layers.0... are model.layers.0...;
//   - gemma4 (Gemma4ForConditionalGeneration, as transformers 5.24 saves
//     it), `in text_config scope model.language_model as model`:
//     model.language_model.layers.0... are model.layers.0....;
//   - gemma3 (Gemma3ForConditionalGeneration) likewise, on the
//     gemma3-text-sliding fixture.
//
// A wrapper without a text_config object is refused by name.
func TestPlanWrappers(t *testing.T) {
	for _, c := range []struct {
		fixture, family, wrapper, class string
		from, to                        string // the checkpoint renames the fixture's tensors starting with from to start with to
		extra                           map[string]any
		scope, as                       string // the plan's WeightScope and WeightAs
		probe                           string // a family tensor the wrapped checkpoint must serve
	}{
		{"llama4_text", "llama4_text", "llama4", "Llama4ForConditionalGeneration", "", "language_model.",
			map[string]any{"vision_config": map[string]any{"model_type": "llama4_vision_model", "hidden_size": 16}},
			"language_model.", "", "model.layers.1.feed_forward.experts.gate_up_proj"},
		{"gemma4_text", "gemma4_text", "gemma4", "Gemma4ForConditionalGeneration", "model.", "model.language_model.",
			map[string]any{"vision_config": nil, "audio_config": nil, "tie_word_embeddings": true},
			"model.language_model.", "model.", "model.layers.3.mlp.gate_proj.weight"},
		{"gemma3-text-sliding", "gemma3", "gemma3", "Gemma3ForConditionalGeneration", "model.", "model.language_model.",
			map[string]any{"vision_config": map[string]any{"model_type": "siglip_vision_model"}, "image_token_index": 262144},
			"model.language_model.", "model.", "model.layers.1.mlp.gate_proj.weight"},
	} {
		t.Run(c.wrapper, func(t *testing.T) {
			src := testmodels.Fixture(c.fixture)
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
			cfg := map[string]any{"model_type": c.wrapper, "architectures": []string{c.class}, "text_config": tc}
			for k, v := range c.extra {
				cfg[k] = v
			}
			dir := t.TempDir()
			writeJSON(t, filepath.Join(dir, "config.json"), cfg)
			renameSafetensors(t, filepath.Join(src, "model.safetensors"), filepath.Join(dir, "model.safetensors"), c.from, c.to)
			p, err := NewPlan(dir, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if p.Family.Name != c.family || p.WeightScope != c.scope || p.WeightAs != c.as || p.Nested == nil {
				t.Fatalf("family %s, weight scope %q as %q, nested %v; want %s, %q as %q, text_config", p.Family.Name, p.WeightScope, p.WeightAs, p.Nested != nil, c.family, c.scope, c.as)
			}
			if !bytes.Equal(p.MLIR, text.MLIR) {
				t.Errorf("the %s wrapper's module differs from the %s fixture's", c.wrapper, c.fixture)
			}
			if _, err := p.Weights.Lookup(c.probe, nil); err != nil {
				t.Errorf("the wrapped checkpoint does not serve %s: %v", c.probe, err)
			}
			bad := t.TempDir()
			writeJSON(t, filepath.Join(bad, "config.json"), map[string]any{"model_type": c.wrapper, "text_config": "none"})
			_, err = NewPlan(bad, PlanOptions{})
			if want := "text_config must be an object (family " + c.family + " reads model_type \"" + c.wrapper + "\"'s text model from it)"; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s without a text_config object: %v", c.wrapper, err)
			}
		})
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

// renameSafetensors copies a safetensors file with every tensor name that
// starts with from renamed to start with to ("" → "language_model." puts
// every name under language_model.; the header rewritten, the data, whose
// offsets are relative to its start, as it is).
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
		if rest, ok := strings.CutPrefix(name, from); ok && name != "__metadata__" {
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

// TestPlanFlatWrapper: Qwen2-VL and Qwen2.5-VL are published with flat
// configs (the text model's fields at the top level beside vision_config,
// rope_scaling {"type": "mrope"}), which Qwen2VLConfig reads as its text
// config; archc reads a wrapper config without text_config at its top
// level, and the module is the nested fixture's, byte for byte.
func TestPlanFlatWrapper(t *testing.T) {
	for _, fixture := range []string{"qwen2_vl", "qwen2_5_vl"} {
		t.Run(fixture, func(t *testing.T) {
			src := testmodels.Fixture(fixture)
			nested, err := NewPlan(src, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var cfg map[string]any
			data, err := os.ReadFile(filepath.Join(src, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &cfg); err != nil {
				t.Fatal(err)
			}
			tc := cfg["text_config"].(map[string]any)
			delete(cfg, "text_config")
			for k, v := range tc {
				if k != "model_type" {
					cfg[k] = v
				}
			}
			dir := t.TempDir()
			writeJSON(t, filepath.Join(dir, "config.json"), cfg)
			if err := os.Symlink(filepath.Join(src, "model.safetensors"), filepath.Join(dir, "model.safetensors")); err != nil {
				t.Fatal(err)
			}
			flat, err := NewPlan(dir, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if flat.Family.Name != nested.Family.Name || flat.Nested != nil {
				t.Fatalf("family %s, nested %v; want %s read at the top level", flat.Family.Name, flat.Nested != nil, nested.Family.Name)
			}
			if !bytes.Equal(flat.MLIR, nested.MLIR) {
				t.Errorf("the flat %s config's module differs from the nested one's", fixture)
			}
		})
	}
}
