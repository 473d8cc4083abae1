package driver

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/formats/abi"
	"github.com/archc/archc/lower"
)

// budgetBefore is the memory the plan budgeted before the state table, as
// it summed the graph's declared states: KV bytes per token (kv_heads ×
// width × 4 per key or value state) and the windows' and recurrent
// states' bytes per slot (elements × 4 × 2 parity buffers).
func budgetBefore(g *ir.Graph) (kvPerToken, statePerSlot int64) {
	for _, n := range g.Nodes {
		for _, st := range n.States {
			e := int64(1)
			for _, d := range st.Shape {
				e *= d
			}
			if st.Kind == ir.KVCache {
				kvPerToken += e * 4
			} else {
				statePerSlot += e * 4 * 2
			}
		}
	}
	return kvPerToken, statePerSlot
}

// TestBudgetFromStateTable: the memory budget read from the state table
// (Plan.FitOptions) gives every fixture, and models of real size where
// the budget binds, the shapes the sums of the graph's states gave
// before: no plan's MaxLen, Slots or batches change, on a CPU or a GPU.
func TestBudgetFromStateTable(t *testing.T) {
	paths, err := filepath.Glob("../golden/testdata/*/config.json")
	if err != nil || len(paths) < 50 {
		t.Fatalf("fixtures: %d, %v", len(paths), err)
	}
	mamba2 := writeConfig(t, mamba2Base, map[string]any{ // Mamba2-2.7B's shape: 340 MB of state per slot
		"hidden_size": 2560, "num_hidden_layers": 64, "num_heads": 80, "head_dim": 64, "n_groups": 1, "state_size": 128, "chunk_size": 256})
	llama := writeConfig(t, map[string]any{"model_type": "llama", "vocab_size": 128, "hidden_size": 4096, "intermediate_size": 14336, // Llama-3-8B's: 256 KiB per token
		"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 8192}, nil)
	bamba := writeConfig(t, bambaBase, map[string]any{"hidden_size": 4096, "num_hidden_layers": 32, "attn_layer_indices": []any{9, 18, 27},
		"num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "mamba_n_heads": 128, "mamba_d_state": 128, "mamba_n_groups": 1, "max_position_embeddings": 1 << 20})
	pinned := map[string][2][2]int64{ // {CPU, GPU} × {max_len, slots}
		mamba2: {{4096, 1}, {4096, 16}},
		llama:  {{4096, 1}, {1024, 64}},
	}
	for _, path := range append(paths, mamba2, llama, bamba) {
		p, err := NewGraph(path, PlanOptions{})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		kv, st := budgetBefore(p.Graph)
		if p.States.BytesPerToken() != kv || p.States.FixedBytesPerSlot() != st {
			t.Errorf("%s: the state table holds %d B per token and %d B of fixed state per slot, the graph's states %d and %d", path, p.States.BytesPerToken(), p.States.FixedBytesPerSlot(), kv, st)
		}
		raw := p.Raw
		if p.Nested != nil {
			raw = p.Nested
		}
		for i, gpu := range []bool{false, true} {
			want, err := fitOptions(lower.Options{}, positionLimit(raw, p.Config, p.Lengths), kv, st, gpu)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.FitOptions(PlanOptions{GPU: gpu})
			if err != nil {
				t.Fatal(err)
			}
			if got.MaxLen != want.MaxLen || got.Slots != want.Slots || !slices.Equal(got.DecodeBatches, want.DecodeBatches) || !slices.Equal(got.PrefillBuckets, want.PrefillBuckets) {
				t.Errorf("%s (GPU %v): %+v, before %+v", path, gpu, got, want)
			}
			if pin, ok := pinned[path]; ok && (got.MaxLen != pin[i][0] || got.Slots != pin[i][1]) {
				t.Errorf("%s (GPU %v): max_len %d, %d slots; want %d, %d", path, gpu, got.MaxLen, got.Slots, pin[i][0], pin[i][1])
			}
		}
	}
	// NewPlan takes FitOptions' shapes and keeps the table of its module.
	p, err := NewPlan("../golden/testdata/qwen3_next", PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fit, _ := p.FitOptions(PlanOptions{}); p.Options.MaxLen != fit.MaxLen || p.Options.Slots != fit.Slots {
		t.Errorf("NewPlan: %+v, FitOptions %+v", p.Options, fit)
	}
	if want := lower.StateTable(p.Graph, p.Options); !slices.EqualFunc(p.States, want, func(a, b abi.StateGroup) bool { return a.Global == b.Global && a.BytesPerSlot == b.BytesPerSlot }) || p.States[0].Positions != p.Options.MaxLen {
		t.Errorf("NewPlan's state table:\n%s\nwant:\n%s", p.States.Format(), want.Format())
	}
}
