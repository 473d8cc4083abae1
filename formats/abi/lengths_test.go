package abi

import "testing"

func TestLengthPolicy(t *testing.T) {
	none := LengthPolicy{}
	long := LengthPolicy{Threshold: 80, Recompute: true}
	ntk := LengthPolicy{Threshold: 256, PerLength: true}
	for _, c := range []struct {
		p    LengthPolicy
		L    int
		want int64
	}{
		{none, 1000, 0}, {long, 80, 0}, {long, 81, 1}, {long, 500, 1}, {ntk, 256, 0}, {ntk, 300, 300},
	} {
		if got := c.p.Table(c.L); got != c.want {
			t.Errorf("%+v.Table(%d) = %d, want %d", c.p, c.L, got, c.want)
		}
	}
	if none.Tracked() || !long.Tracked() || !long.RecomputeOnDecode() || ntk.RecomputeOnDecode() {
		t.Error("Tracked/RecomputeOnDecode: want only LongRoPE with recompute to recompute on decode")
	}
	for _, c := range []struct {
		p    LengthPolicy
		keys []int64
		L    int
		want bool
	}{
		{none, []int64{5, 7}, 3, true},
		{long, []int64{0, 0, 0}, 70, true},
		{long, []int64{0, 0, 0}, 90, false}, // short-factor keys for a long sequence
		{long, []int64{1, 1}, 70, false},    // long-factor keys for a short one
		{long, []int64{1, -1}, 70, true},    // unknown keys are taken as they are
		{ntk, []int64{300, 300}, 301, false},
	} {
		if got := c.p.Reusable(c.keys, c.L); got != c.want {
			t.Errorf("%+v.Reusable(%v, %d) = %v, want %v", c.p, c.keys, c.L, got, c.want)
		}
	}
	for _, c := range []struct {
		p      LengthPolicy
		mp     int64
		expect int64
	}{
		{none, 4096, 4096}, {none, 0, 0}, {long, 4096, 4096}, {ntk, 32768, 256}, {ntk, 0, 256}, {ntk, 100, 100},
	} {
		if got := c.p.PositionLimit(c.mp); got != c.expect {
			t.Errorf("%+v.PositionLimit(%d) = %d, want %d", c.p, c.mp, got, c.expect)
		}
	}
}
