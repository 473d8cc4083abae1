package lower

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestRoPEFrequencies(t *testing.T) {
	rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Abs(b) }
	def, err := ropeFrequencies(10000, 16, nil, ropeLimits{})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range def.invFreq {
		if want := math.Pow(10000, -float64(2*i)/16); rel(f, want) > 1e-6 {
			t.Errorf("default inv_freq[%d] = %g, want %g", i, f, want)
		}
	}
	lin, err := ropeFrequencies(10000, 16, map[string]any{"type": "linear", "factor": int64(4)}, ropeLimits{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range lin.invFreq {
		if rel(lin.invFreq[i], def.invFreq[i]/4) > 1e-6 {
			t.Errorf("linear inv_freq[%d] = %g, want %g", i, lin.invFreq[i], def.invFreq[i]/4)
		}
	}
	// HF _compute_llama3_parameters on theta 5e5, head_dim 16, factor 8,
	// low 1, high 4, original 64 (printed by golden/gen_fixtures.py): one
	// frequency kept, one smoothed, the rest divided by 8.
	l3, err := ropeFrequencies(500000, 16, map[string]any{"rope_type": "llama3", "factor": 8.0,
		"low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": int64(64)}, ropeLimits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1.0, 0.07940302, 0.004700754, 0.00091158313}
	for i, w := range want {
		if rel(l3.invFreq[i], w) > 1e-6 {
			t.Errorf("llama3 inv_freq[%d] = %g, want %g", i, l3.invFreq[i], w)
		}
	}
	d0, _ := ropeFrequencies(500000, 16, nil, ropeLimits{})
	if r := d0.invFreq[2] / l3.invFreq[2]; math.Abs(r-8) > 1e-5 {
		t.Errorf("llama3 low frequency ratio %g, want 8", r)
	}
	for _, bad := range []map[string]any{
		{"rope_type": "longrope", "factor": 4.0},
		{"rope_type": "yarn", "factor": 4.0},
		{"rope_type": "linear"},
		{"rope_type": "llama3", "factor": 8.0},
		{"rope_type": "longrope", "short_factor": []any{1.0, 1.0}, "long_factor": []any{2.0, 2.0}, "original_max_position_embeddings": int64(8)},
		{"rope_type": "dynamic", "factor": 2.0},
		{"rope_type": "su"},
	} {
		if _, err := ropeFrequencies(10000, 16, bad, ropeLimits{}); err == nil || !strings.Contains(err.Error(), "rope_scaling") || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad["rope_type"])) {
			t.Errorf("scaling %v: got %v, want an error naming rope_scaling and its type", bad, err)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{
		{PrefillBuckets: []int64{64, 16}, DecodeBatches: []int64{1}, MaxLen: 128, Slots: 1},
		{PrefillBuckets: []int64{256}, DecodeBatches: []int64{1}, MaxLen: 128, Slots: 1},
		{PrefillBuckets: []int64{16}, DecodeBatches: []int64{2}, MaxLen: 128, Slots: 1},
		{DecodeBatches: []int64{1}, MaxLen: 128, Slots: 1},
		{PrefillBuckets: []int64{16}, DecodeBatches: []int64{1}, MaxLen: 128, Slots: 1, StateSnapshots: -1},
	} {
		if err := o.validate(); err == nil {
			t.Errorf("%+v: want a validation error", o)
		}
	}
	if err := DefaultOptions().validate(); err != nil {
		t.Errorf("default options: %v", err)
	}
}
