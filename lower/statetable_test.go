package lower_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/driver"
	"github.com/archc/archc/formats/abi"
	"github.com/archc/archc/lower"
)

// TestStateTable checks lower.StateTable on fixtures of each kind of
// state against rows computed by hand from their config.json, and
// against the module Lower emits: every row is a mutable global of the
// row's layout, every mutable global a row, and the copy entry points are
// the module's.
func TestStateTable(t *testing.T) {
	o := lower.Options{PrefillBuckets: []int64{16, 64}, DecodeBatches: []int64{1, 2}, MaxLen: 128, Slots: 3}
	kv := func(global string, entries, perToken int64, shape ...int64) abi.StateGroup {
		return abi.StateGroup{Kind: abi.KVCache, Global: global, Entries: entries, Shape: shape, DType: "f32", Positions: 128, Buffers: 1,
			BytesPerToken: perToken, BytesPerSlot: perToken * 128, Reset: abi.ResetUnread, Padding: abi.PadPastHeld, Copy: "copy_cache_64", Snapshot: abi.SnapshotEveryPosition}
	}
	fixed := func(kind abi.StateKind, global string, entries, perSlot int64, shape ...int64) abi.StateGroup {
		return abi.StateGroup{Kind: kind, Global: global, Entries: entries, Shape: shape, DType: "f32", Buffers: 2,
			BytesPerSlot: perSlot, Reset: abi.ResetZero, Padding: abi.PadOtherBuffer, Copy: "copy_state", Snapshot: abi.SnapshotParity}
	}
	cases := []struct {
		fixture string
		want    abi.StateTable
	}{
		// Dense: 2 layers' keys and values, 2 KV heads of head_dim 16:
		// 4 entries × 2 × 16 × 4 B = 512 B per token.
		{"llama-tied", abi.StateTable{kv("kv_cache", 4, 512, 2, 16)}},
		// MLA: 3 layers, 4 heads; keys qk_nope 8 + qk_rope 4 = 12 wide,
		// values v_head_dim 12: one global, 6 entries × 4 × 12 × 4 B.
		{"deepseek_v2", abi.StateTable{kv("kv_cache", 6, 1152, 4, 12)}},
		// MLA with keys (10 + 6 = 16) wider than values (12): two globals
		// of 2 layers each, 2 × 4 × 16 × 4 B and 2 × 4 × 12 × 4 B.
		{"minicpm3", abi.StateTable{kv("kv_cache", 2, 512, 4, 16), kv("kv_cache_1", 2, 384, 4, 12)}},
		// Hybrid: layer 1 is full attention (2 KV heads of 16); layers 0
		// and 2 gated DeltaNet: a conv window of conv_kernel 4 − 1 rows
		// over 2·2·8 + 4·12 = 80 channels (2 × 2 buffers × 240 × 4 B) and
		// a [4 value heads, 8, 12] state (2 × 2 × 384 × 4 B).
		{"qwen3_next", abi.StateTable{
			kv("kv_cache", 2, 256, 2, 16),
			fixed(abi.Window, "state", 2, 3840, 3, 80),
			fixed(abi.Recurrent, "state_1", 2, 6144, 4, 8, 12),
		}},
		// Mamba: 2 layers of d_inner = 2 × 64 = 128: a window of
		// conv_kernel 4 − 1 rows (2 × 2 × 384 × 4 B), an ssm_state
		// [128, state_size 8] (2 × 2 × 1024 × 4 B); no KV cache.
		{"mamba", abi.StateTable{
			fixed(abi.Window, "state", 2, 6144, 3, 128),
			fixed(abi.Recurrent, "state_1", 2, 16384, 128, 8),
		}},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			p, err := driver.NewGraph(filepath.Join("..", "golden", "testdata", c.fixture), driver.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := lower.StateTable(p.Graph, o)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("state table:\n%s\nwant:\n%s", got.Format(), c.want.Format())
			}
			var perToken, perSlot int64
			for _, r := range c.want {
				perToken += r.BytesPerToken
				if r.Kind != abi.KVCache {
					perSlot += r.BytesPerSlot
				}
			}
			if got.BytesPerToken() != perToken || got.FixedBytesPerSlot() != perSlot || got.BytesPerSlot(1000) != 1000*perToken+perSlot || got.FixedState() != (perSlot > 0) {
				t.Errorf("totals: %d B per token, %d B fixed per slot, %d B per slot at 1000 tokens, fixed %v", got.BytesPerToken(), got.FixedBytesPerSlot(), got.BytesPerSlot(1000), got.FixedState())
			}
			m, err := lower.Lower(p.Graph, o)
			if err != nil {
				t.Fatal(err)
			}
			checkModuleState(t, m, got, o)
			// One slot: the same rows, no copy entry points.
			one := o
			one.Slots, one.DecodeBatches = 1, []int64{1}
			single := lower.StateTable(p.Graph, one)
			for i := range single {
				if single[i].Copy != "" {
					t.Errorf("one slot: %s has copy entry point %s", single[i].Global, single[i].Copy)
				}
				single[i].Copy = got[i].Copy
			}
			if !reflect.DeepEqual(single, got) {
				t.Errorf("one slot:\n%s\nthree slots:\n%s", single.Format(), got.Format())
			}
			// Two saved buffers (Options.StateSnapshots): a fixed row has
			// 2 + 2 buffers, twice the bytes, and the module exports
			// snapshot_state; a KV cache is as it was, and a model without
			// fixed state is the same module.
			saved := o
			saved.StateSnapshots = 2
			withSaved := lower.StateTable(p.Graph, saved)
			want := slices.Clone(got)
			for i := range want {
				if want[i].Kind.Fixed() {
					want[i].Buffers, want[i].Saved, want[i].BytesPerSlot = 4, 2, 2*want[i].BytesPerSlot
				}
			}
			if !reflect.DeepEqual(withSaved, want) {
				t.Errorf("two saved buffers:\n%s\nwant:\n%s", withSaved.Format(), want.Format())
			}
			ms, err := lower.Lower(p.Graph, saved)
			if err != nil {
				t.Fatal(err)
			}
			checkModuleState(t, ms, withSaved, saved)
			if hasFn(ms, "snapshot_state") != got.FixedState() {
				t.Errorf("snapshot_state exported %v, fixed state %v", hasFn(ms, "snapshot_state"), got.FixedState())
			}
			if !got.FixedState() && string(ms.Print()) != string(m.Print()) {
				t.Error("StateSnapshots changed the module of a model without fixed state")
			}
		})
	}
}

func hasFn(m *codegen.Module, name string) bool {
	return slices.ContainsFunc(m.Funcs, func(f *codegen.Func) bool { return f.Name == name })
}

// checkModuleState: the mutable globals of m are exactly the entries of
// the rows of t (<Global>.<i> for i below Entries), in their layouts, no
// two of one type starting as the same splat (kvcache.go: IREE shares the
// buffer of equal ones), and m's copy entry points exactly t's.
func checkModuleState(t *testing.T, m *codegen.Module, table abi.StateTable, o lower.Options) {
	t.Helper()
	entries := map[string]abi.StateGroup{}
	var copies []string
	for _, r := range table {
		for i := range r.Entries {
			entries[fmt.Sprintf("%s.%d", r.Global, i)] = r
		}
		if r.Copy != "" && !slices.Contains(copies, r.Copy) {
			copies = append(copies, r.Copy)
		}
	}
	inits := map[string]string{}
	for _, g := range m.Globals {
		if !g.Mutable {
			continue
		}
		key := fmt.Sprint(g.Type, g.Init)
		if other, ok := inits[key]; ok {
			t.Errorf("globals %s and %s both start as splat %g of %s", other, g.Name, g.Init, g.Type)
		}
		inits[key] = g.Name
		r, ok := entries[g.Name]
		if !ok {
			if g.Name != "mtp_chain" { // a draft's last output, no per-sequence state (mtp.go)
				t.Errorf("global %s is in no row", g.Name)
			}
			continue
		}
		delete(entries, g.Name)
		want := []int64{1, o.Slots, r.Positions}
		if r.Kind.Fixed() {
			want = []int64{1, r.Buffers, o.Slots}
		}
		want = append(want, r.Shape...)
		if !slices.Equal(g.Type.Shape, want) || g.Type.Elem != r.DType {
			t.Errorf("global %s: %v %s, the row says %v %s", g.Name, g.Type.Shape, g.Type.Elem, want, r.DType)
		}
	}
	for name := range entries {
		t.Errorf("row entry %s is no global of the module", name)
	}
	var fns []string
	for _, f := range m.Funcs {
		if strings.HasPrefix(f.Name, "copy_") {
			fns = append(fns, f.Name)
		}
	}
	if fmt.Sprint(fns) != fmt.Sprint(copies) {
		t.Errorf("copy entry points %v, the table says %v", fns, copies)
	}
}
