package driver

import (
	"testing"

	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/lower"
)

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
