package rt

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestSamplerRows(t *testing.T) {
	g, err := NewSampler(SamplingOptions{TopK: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r := g.Row([]int32{1, 2}); r.Seq != nil || r.U != 0 || r.Tokens != nil || !g.Plain() {
		t.Errorf("greedy row = %+v, want plain argmax with no sequence", r)
	}
	o := SamplingOptions{Temperature: 0.7, TopK: 40, TopP: 0.9, MinP: 0.05, Seed: 42}
	a, _ := NewSampler(o)
	b, _ := NewSampler(o)
	o.Seed = 43
	c, _ := NewSampler(o)
	same := true
	for i := 0; i < 8; i++ {
		ra, rb, rc := a.Row(nil), b.Row(nil), c.Row(nil)
		if ra.U != rb.U {
			t.Fatalf("step %d: the same seed gave %+v and %+v", i, ra, rb)
		}
		if !(ra.U >= 0 && ra.U < 1) {
			t.Fatalf("step %d: row %+v does not carry a uniform draw", i, ra)
		}
		same = same && ra.U == rc.U
	}
	if same {
		t.Error("seeds 42 and 43 gave the same draws")
	}
	if w := a.opts.wire(); w.Temperature != 0.7 || w.TopK != 40 || w.TopP != 0.9 || w.MinP != 0.05 {
		t.Errorf("wire %+v does not carry the options", w)
	}
	// Before StartSequence a non-plain row names no real sequence (the
	// worker refuses -1); after it, each row sends only the new tokens.
	p, _ := NewSampler(SamplingOptions{PresencePenalty: 0.5, TopLogprobs: 3})
	if r := p.Row([]int32{1}); r.Seq == nil || *r.Seq != -1 || p.Plain() {
		t.Errorf("unstarted row %+v", r)
	}
	p.seq, p.sent = 3, 2 // as StartSequence(slot 3, prompt of 2) leaves it
	seq := []int32{1, 2, 9}
	if r := p.Row(seq); *r.Seq != 3 || !slices.Equal(r.Tokens, []int32{9}) {
		t.Errorf("first decode row %+v, want sequence 3 and tokens [9]", r)
	}
	if r := p.Row(append(seq, 8)); !slices.Equal(r.Tokens, []int32{8}) {
		t.Errorf("second decode row %+v, want tokens [8]", r)
	}
}

// TestWireDefaults: the defaults are resolved in Go, once, and every
// other value passes through.
func TestWireDefaults(t *testing.T) {
	w := SamplingOptions{DRY: DRYOptions{Multiplier: 0.8}}.wire()
	if w.RepetitionPenalty != 1 || w.DRYBase != DefaultDRYBase || w.DRYAllowedLength != DefaultDRYAllowedLength || w.DRYBreakers == nil || w.Logprobs != nil {
		t.Errorf("defaults: %+v", w)
	}
	three, zero := 3, 0
	k := SamplingOptions{RepetitionPenalty: 1.3, DRY: DRYOptions{Base: 2, AllowedLength: &three, Range: 64, Breakers: []int32{5}}, Logprobs: true}.wire()
	if k.RepetitionPenalty != 1.3 || k.DRYBase != 2 || k.DRYAllowedLength != 3 || k.DRYRange != 64 || !slices.Equal(k.DRYBreakers, []int32{5}) || k.Logprobs == nil || *k.Logprobs != 0 {
		t.Errorf("given values: %+v", k)
	}
	// An explicit allowed length of 0 (penalize every repeat) is not the
	// default; a base of 1 (a flat penalty) is valid.
	z := SamplingOptions{DRY: DRYOptions{Multiplier: 1, Base: 1, AllowedLength: &zero}}
	if err := z.Validate(); err != nil {
		t.Errorf("base 1, allowed length 0: %v", err)
	}
	if w := z.wire(); w.DRYAllowedLength != 0 || w.DRYBase != 1 {
		t.Errorf("allowed length 0, base 1: %+v", w)
	}
}

func TestSamplingValidate(t *testing.T) {
	for _, o := range []SamplingOptions{{Temperature: -1}, {Temperature: math.NaN()}, {Temperature: math.Inf(1)}, {TopK: -1}, {TopP: 1.5}, {TopP: math.NaN()}, {MinP: -0.1}, {MinP: math.NaN()},
		{RepetitionPenalty: -1}, {FrequencyPenalty: 2.5}, {PresencePenalty: math.NaN()}, {DRY: DRYOptions{Multiplier: 1, Base: 0.5}}, {TopLogprobs: 21}} {
		if _, err := NewSampler(o); err == nil {
			t.Errorf("%+v: want an error", o)
		}
	}
	// Each DRY option out of range is named alone.
	neg := -1
	for want, o := range map[string]SamplingOptions{
		"dry_multiplier":     {DRY: DRYOptions{Multiplier: -1}},
		"dry_base":           {DRY: DRYOptions{Multiplier: 1, Base: 0.5}},
		"dry_allowed_length": {DRY: DRYOptions{Multiplier: 1, AllowedLength: &neg}},
		"dry_penalty_last_n": {DRY: DRYOptions{Multiplier: 1, Range: -1}},
	} {
		var bad *InvalidOption
		err := o.Validate()
		if !errors.As(err, &bad) || bad.Option != want || (want != "dry_allowed_length" && strings.Contains(err.Error(), "allowed length")) {
			t.Errorf("%s: %v, want an error naming only it", want, err)
		}
	}
}
