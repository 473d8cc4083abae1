package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/lower"
)

// TestPlanMLAVariantErrors: a DeepSeek-V2 / MiniCPM3 config asking for an
// attention or router variant archc does not implement is refused at plan
// time with one line that names the config key and the value.
func TestPlanMLAVariantErrors(t *testing.T) {
	for _, c := range []struct {
		name, fixture string
		edit          func(map[string]any)
		want          []string
	}{
		{"unknown rope type", "deepseek_v2", func(c map[string]any) {
			c["rope_parameters"].(map[string]any)["rope_type"] = "ntk-by-parts"
		}, []string{`rope_scaling (rope_parameters) type "ntk-by-parts" is not supported`, "deepseek_v2.arch:"}},
		{"unknown topk_method", "deepseek_v2", func(c map[string]any) { c["topk_method"] = "noaux_tc" },
			[]string{`topk_method "noaux_tc" is not supported`, "deepseek_v2.arch:"}},
		{"groups not dividing the experts", "deepseek_v2", func(c map[string]any) { c["n_group"] = 3 },
			[]string{"n_group dividing the 8 experts", "n_group 3"}},
		{"longrope without long_factor", "minicpm3", func(c map[string]any) {
			delete(c["rope_parameters"].(map[string]any), "long_factor")
		}, []string{`"long_factor"`, "minicpm3.arch:"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := testmodels.Fixture(c.fixture)
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
			c.edit(cfg)
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

// TestLongRoPERecompute: the runtime recomputes earlier keys when a decode
// step crosses original_max only for Phi-3 (its generate drops the cache
// there); MiniCPM3, whose generate is Llama's, keeps them.
func TestLongRoPERecompute(t *testing.T) {
	for _, c := range []struct {
		fixture   string
		threshold int64
		recompute bool
	}{
		{"phi3-longrope", 20, true},
		{"minicpm3", 20, false},
	} {
		p, err := NewPlan(testmodels.Fixture(c.fixture), PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r := lower.LengthDependence(p.Graph)
		if r.Threshold != c.threshold || r.Recompute != c.recompute || r.PerLength {
			t.Errorf("%s: length rule %+v, want threshold %d, recompute %v", c.fixture, r, c.threshold, c.recompute)
		}
	}
}
