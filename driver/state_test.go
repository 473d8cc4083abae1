package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/dsl/ir"
)

// mambaConfig writes a tiny MambaConfig config.json with edits and returns
// its path.
func mambaConfig(t *testing.T, edit map[string]any) string {
	t.Helper()
	cfg := map[string]any{"model_type": "mamba", "vocab_size": 64, "hidden_size": 40, "num_hidden_layers": 2,
		"state_size": 4, "expand": 2, "conv_kernel": 4, "time_step_rank": "auto"}
	for k, v := range edit {
		cfg[k] = v
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMambaConfig: time_step_rank "auto" is ceil(hidden_size / 16), as
// MambaConfig resolves it, an int is taken as it is; each layer declares a
// conv window [conv_kernel - 1, intermediate_size] and a recurrent state
// [intermediate_size, state_size]; the plan says it holds fixed state.
func TestMambaConfig(t *testing.T) {
	for _, c := range []struct {
		rank any
		want int64
	}{{"auto", 3}, {int64(7), 7}} { // ceil(40 / 16) = 3
		p, err := NewGraph(mambaConfig(t, map[string]any{"time_step_rank": c.rank}), PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !p.States.FixedState() {
			t.Error("a mamba plan does not say it holds fixed state")
		}
		var dt []int64
		for _, w := range p.Graph.Weights {
			if w.Name == "backbone.layers.0.mixer.dt_proj.weight" {
				dt = w.Shape
			}
		}
		if len(dt) != 2 || dt[0] != 80 || dt[1] != c.want {
			t.Errorf("time_step_rank %v: dt_proj.weight %v, want [80 %d]", c.rank, dt, c.want)
		}
		var states []ir.State
		for _, n := range p.Graph.Nodes {
			states = append(states, n.States...)
		}
		if len(states) != 4 || states[0].Kind != ir.Window || states[1].Kind != ir.Recurrent ||
			states[0].Shape[0] != 3 || states[0].Shape[1] != 80 || states[1].Shape[0] != 80 || states[1].Shape[1] != 4 {
			t.Errorf("states %+v: want per layer a window [3 80] and a recurrent state [80 4]", states)
		}
	}
	p, err := NewGraph(fixture, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.States.FixedState() {
		t.Error("llama's plan says it holds fixed state")
	}
}

// TestMambaBadConfig: bad state-space config values are one-line errors
// naming the key.
func TestMambaBadConfig(t *testing.T) {
	for _, c := range []struct {
		edit map[string]any
		want []string
	}{
		{map[string]any{"conv_kernel": 0}, []string{"conv_kernel is 0", "at least 1"}},
	} {
		_, err := NewGraph(mambaConfig(t, c.edit), PlanOptions{})
		if err == nil {
			t.Errorf("%v: no error", c.edit)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not mention %q", c.edit, err, w)
			}
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error is not one line: %q", c.edit, err)
		}
	}
}
