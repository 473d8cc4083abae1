package rt

import (
	"math"
	"testing"
)

func TestSamplerRows(t *testing.T) {
	g, err := NewSampler(SamplingOptions{TopK: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r := g.Row(nil, 0); r.Temperature != 0 || r.U != 0 || r.TopK != 5 || r.Context != nil {
		t.Errorf("greedy row = %+v, want temperature 0 and no draw", r)
	}
	o := SamplingOptions{Temperature: 0.7, TopK: 40, TopP: 0.9, MinP: 0.05, Seed: 42}
	a, _ := NewSampler(o)
	b, _ := NewSampler(o)
	o.Seed = 43
	c, _ := NewSampler(o)
	same := true
	for i := 0; i < 8; i++ {
		ra, rb, rc := a.Row(nil, 0), b.Row(nil, 0), c.Row(nil, 0)
		if ra.U != rb.U {
			t.Fatalf("step %d: the same seed gave %+v and %+v", i, ra, rb)
		}
		if ra.Temperature != 0.7 || ra.TopK != 40 || ra.TopP != 0.9 || ra.MinP != 0.05 || !(ra.U >= 0 && ra.U < 1) {
			t.Fatalf("step %d: row %+v does not carry the options and a uniform draw", i, ra)
		}
		same = same && ra.U == rc.U
	}
	if same {
		t.Error("seeds 42 and 43 gave the same draws")
	}
	// The sequence travels only when a penalty needs it; logprobs ask for k.
	seq := []int32{1, 2, 3}
	p, _ := NewSampler(SamplingOptions{PresencePenalty: 0.5, TopLogprobs: 3})
	if r := p.Row(seq, 1); len(r.Context) != 3 || r.Generated != 1 || r.Logprobs == nil || *r.Logprobs != 3 || p.Plain() {
		t.Errorf("penalized row %+v", r)
	}
	if r := a.Row(seq, 1); r.Context != nil || r.Logprobs != nil || a.Plain() {
		t.Errorf("unpenalized sampling row carries %+v", r)
	}
	if !g.Plain() {
		t.Error("greedy without penalties or logprobs is not Plain")
	}
}

func TestSamplingValidate(t *testing.T) {
	for _, o := range []SamplingOptions{{Temperature: -1}, {Temperature: math.NaN()}, {Temperature: math.Inf(1)}, {TopK: -1}, {TopP: 1.5}, {TopP: math.NaN()}, {MinP: -0.1}, {MinP: math.NaN()},
		{RepetitionPenalty: -1}, {FrequencyPenalty: 2.5}, {PresencePenalty: math.NaN()}, {DRY: DRYOptions{Multiplier: 1, Base: 0.5}}, {TopLogprobs: 21}} {
		if _, err := NewSampler(o); err == nil {
			t.Errorf("%+v: want an error", o)
		}
	}
}
