package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/lower"
)

// TestDynamicNTKUnreachable: dynamic NTK RoPE (internlm3) switches tables
// only for sequences longer than max_position_embeddings, and the KV cache
// never holds one: the default cache length stops there, a longer
// --max-len is refused, and a config.json without the field is held to the
// family's default for it (internlm3.arch: 32768), which is also the RoPE
// threshold.
func TestDynamicNTKUnreachable(t *testing.T) {
	fixture := filepath.Join("..", "golden", "testdata", "internlm3")
	p, err := NewPlan(fixture, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := lower.LengthDependence(p.Graph)
	if !r.PerLength || r.Threshold != 256 {
		t.Fatalf("internlm3 fixture: length rule %+v, want dynamic (PerLength) at max_position_embeddings 256", r)
	}
	if p.Options.MaxLen > r.Threshold {
		t.Errorf("default KV cache length %d passes the dynamic NTK threshold %d", p.Options.MaxLen, r.Threshold)
	}
	_, err = NewPlan(fixture, PlanOptions{Lower: lower.Options{MaxLen: 257}})
	if err == nil || !strings.Contains(err.Error(), "--max-len 257 exceeds the model's max_position_embeddings 256") {
		t.Errorf("--max-len 257 on max_position_embeddings 256: got %v", err)
	}

	data, err := os.ReadFile(filepath.Join(fixture, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw, "max_position_embeddings")
	cfg := filepath.Join(t.TempDir(), "config.json")
	data, _ = json.Marshal(raw)
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = NewPlan(cfg, PlanOptions{Lower: lower.Options{MaxLen: 32769}})
	if err == nil || !strings.Contains(err.Error(), "exceeds the model's max_position_embeddings 32768") {
		t.Errorf("--max-len 32769 with the family default 32768: got %v", err)
	}
	if p, err = NewPlan(cfg, PlanOptions{}); err != nil {
		t.Fatal(err)
	}
	if p.Options.MaxLen > 32768 {
		t.Errorf("no max_position_embeddings in config.json: default KV cache length %d", p.Options.MaxLen)
	}
}
