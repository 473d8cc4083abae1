package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/dsl/ir"
)

// writeConfig writes base with edits (a nil value deletes the key) as a
// config.json and returns its path.
func writeConfig(t *testing.T, base, edit map[string]any) string {
	t.Helper()
	cfg := map[string]any{}
	for k, v := range base {
		cfg[k] = v
	}
	for k, v := range edit {
		if v == nil {
			delete(cfg, k)
		} else {
			cfg[k] = v
		}
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

var (
	mamba2Base = map[string]any{"model_type": "mamba2", "vocab_size": 64, "hidden_size": 32, "num_hidden_layers": 2,
		"num_heads": 4, "head_dim": 16, "n_groups": 2, "state_size": 4, "expand": 2, "conv_kernel": 4, "chunk_size": 8}
	bambaBase = map[string]any{"model_type": "bamba", "vocab_size": 64, "hidden_size": 32, "num_hidden_layers": 3,
		"intermediate_size": 48, "num_attention_heads": 4, "num_key_value_heads": 2, "attn_layer_indices": []any{1},
		"mamba_n_heads": 8, "mamba_d_head": "auto", "mamba_n_groups": 2, "mamba_d_state": 4, "mamba_chunk_size": 8}
	gmhBase = map[string]any{"model_type": "granitemoehybrid", "vocab_size": 64, "hidden_size": 32, "num_hidden_layers": 2,
		"intermediate_size": 16, "num_attention_heads": 4, "layer_types": []any{"linear_attention", "full_attention"},
		"num_local_experts": 4, "num_experts_per_tok": 2, "shared_intermediate_size": 24,
		"mamba_n_heads": 8, "mamba_n_groups": 2, "mamba_d_state": 4, "mamba_chunk_size": 8}
)

// TestMamba2States: each mamba2 layer declares a conv window over x, B and
// C and an SSM state [heads, head_dim, state]; bamba's mamba_d_head "auto"
// is mamba_expand · hidden_size / mamba_n_heads (BambaConfig), and its
// attention layer holds a KV cache beside the others' fixed state.
func TestMamba2States(t *testing.T) {
	for _, c := range []struct {
		cfg          map[string]any
		window, ssm  []int64
		fixed, cache int
	}{
		{mamba2Base, []int64{3, 64 + 2*2*4}, []int64{4, 16, 4}, 4, 0},
		{bambaBase, []int64{3, 64 + 2*2*4}, []int64{8, 8, 4}, 4, 2}, // d_head auto: 2 · 32 / 8; keys and values
	} {
		p, err := NewGraph(writeConfig(t, c.cfg, nil), PlanOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var fixed, cache int
		for _, n := range p.Graph.Nodes {
			for _, st := range n.States {
				switch {
				case st.Kind == ir.KVCache:
					cache++
				case st.Kind == ir.Window && fmtShape(st.Shape) == fmtShape(c.window),
					st.Kind == ir.Recurrent && fmtShape(st.Shape) == fmtShape(c.ssm):
					fixed++
				default:
					t.Errorf("%s: state %+v, want windows %v and SSM states %v", c.cfg["model_type"], st, c.window, c.ssm)
				}
			}
		}
		if fixed != c.fixed || cache != c.cache || !p.States.FixedState() {
			t.Errorf("%s: %d fixed states and %d KV caches (fixed state %v), want %d and %d", c.cfg["model_type"], fixed, cache, p.States.FixedState(), c.fixed, c.cache)
		}
	}
}

func fmtShape(s []int64) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestMamba2BadConfig: bad SSD configs are one-line errors naming the keys.
func TestMamba2BadConfig(t *testing.T) {
	for _, c := range []struct {
		base, edit map[string]any
		want       []string
	}{
		{mamba2Base, map[string]any{"n_groups": 3}, []string{"num_heads", "n_groups", "multiple"}},
		{mamba2Base, map[string]any{"conv_kernel": 0}, []string{"conv_kernel is 0", "at least 1"}},
		{mamba2Base, map[string]any{"head_dim": 8}, []string{"hidden_size * expand (64)", "num_heads * head_dim (32)"}},
		{mamba2Base, map[string]any{"chunk_size": 0}, []string{"chunk_size"}},
		{bambaBase, map[string]any{"mamba_n_groups": 3}, []string{"mamba_n_heads", "mamba_n_groups"}},
		{bambaBase, map[string]any{"mamba_d_conv": 0}, []string{"conv_kernel is 0"}},
		{bambaBase, map[string]any{"layers_block_type": []any{"linear_attention", "moe", "full_attention"}},
			[]string{"layers_block_type[1] is moe", "linear_attention or full_attention"}},
		{gmhBase, map[string]any{"layer_types": []any{"linear_attention", "mamba"}},
			[]string{"layer_types[1] is mamba", "linear_attention or full_attention"}},
		{gmhBase, map[string]any{"mamba_d_head": 5}, []string{"mamba_d_head (5) * mamba_n_heads (8)", "mamba_expand * hidden_size (64)"}},
		{gmhBase, map[string]any{"mamba_d_conv": 0}, []string{"mamba_d_conv is 0"}},
	} {
		_, err := NewGraph(writeConfig(t, c.base, c.edit), PlanOptions{})
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

var (
	nemotronHBase = map[string]any{"model_type": "nemotron_h", "vocab_size": 64, "hidden_size": 32,
		"num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "intermediate_size": 48,
		"mamba_num_heads": 4, "mamba_head_dim": 8, "n_groups": 2, "ssm_state_size": 4, "chunk_size": 8,
		"n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 16, "moe_shared_expert_intermediate_size": 16}
	falconH1Base = map[string]any{"model_type": "falcon_h1", "vocab_size": 64, "hidden_size": 32, "num_hidden_layers": 2,
		"intermediate_size": 48, "num_attention_heads": 4, "num_key_value_heads": 2, "mamba_d_ssm": 48,
		"mamba_n_heads": 4, "mamba_d_head": "auto", "mamba_n_groups": 2, "mamba_d_state": 4, "mamba_chunk_size": 8}
)

// TestNemotronHLayerKinds: NVIDIA's hybrid_override_pattern, the
// layers_block_type list transformers writes and the list with the older
// kind names (mamba, attention: remap_legacy_layer_types) build the same
// graph, whose length is the pattern's (num_hidden_layers is not read).
func TestNemotronHLayerKinds(t *testing.T) {
	var want string
	for _, edit := range []map[string]any{
		{"hybrid_override_pattern": "M*-E", "num_hidden_layers": 9},
		{"layers_block_type": []any{"linear_attention", "full_attention", "mlp", "moe"}},
		{"layers_block_type": []any{"mamba", "attention", "mlp", "moe"}, "hybrid_override_pattern": "EEEE"},
	} {
		p, err := NewGraph(writeConfig(t, nemotronHBase, edit), PlanOptions{})
		if err != nil {
			t.Fatalf("%v: %v", edit, err)
		}
		var got []string
		for _, w := range p.Graph.Weights {
			got = append(got, w.Name+fmtShape(w.Shape))
		}
		if want == "" {
			want = strings.Join(got, " ")
			for _, name := range []string{"backbone.layers.0.mixer.A_log", "backbone.layers.1.mixer.q_proj.weight",
				"backbone.layers.2.mixer.up_proj.weight", "backbone.layers.3.mixer.experts.up_proj.weight", "lm_head.weight"} {
				if !strings.Contains(want, name) {
					t.Errorf("%v: no weight %s in %s", edit, name, want)
				}
			}
			if strings.Contains(want, "backbone.layers.4.") {
				t.Errorf("%v: more than the pattern's 4 layers: %s", edit, want)
			}
		} else if g := strings.Join(got, " "); g != want {
			t.Errorf("%v: weights %s, want %s", edit, g, want)
		}
	}
}

// TestFalconH1MambaWidth: the mixer is mamba_d_ssm wide, or mamba_expand ·
// hidden_size when mamba_d_ssm is null; mamba_d_head "auto" is that width
// over mamba_n_heads (FalconH1Config.__post_init__).
func TestFalconH1MambaWidth(t *testing.T) {
	for _, c := range []struct {
		edit map[string]any
		ssm  []int64
	}{
		{nil, []int64{4, 12, 4}},                                // 48 / 4
		{map[string]any{"mamba_d_ssm": nil}, []int64{4, 16, 4}}, // 2 · 32 / 4
		{map[string]any{"mamba_d_head": 12}, []int64{4, 12, 4}}, // given
	} {
		p, err := NewGraph(writeConfig(t, falconH1Base, c.edit), PlanOptions{})
		if err != nil {
			t.Fatalf("%v: %v", c.edit, err)
		}
		var ssm, cache int
		for _, n := range p.Graph.Nodes {
			for _, st := range n.States {
				switch {
				case st.Kind == ir.KVCache:
					cache++
				case st.Kind == ir.Recurrent && fmtShape(st.Shape) == fmtShape(c.ssm):
					ssm++
				case st.Kind == ir.Recurrent:
					t.Errorf("%v: SSM state %v, want %v", c.edit, st.Shape, c.ssm)
				}
			}
		}
		if ssm != 2 || cache != 4 {
			t.Errorf("%v: %d SSM states and %d KV caches, want 2 and 4 (every layer has both)", c.edit, ssm, cache)
		}
	}
}
