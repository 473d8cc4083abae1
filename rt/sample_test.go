package rt

import (
	"math"
	"testing"

	"github.com/archc/archc/rt/iree"
)

func TestSamplerRows(t *testing.T) {
	g, err := NewSampler(SamplingOptions{TopK: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r := g.Row(); r != (iree.SampleRow{TopK: 5}) {
		t.Errorf("greedy row = %+v, want temperature 0 and no draw", r)
	}
	o := SamplingOptions{Temperature: 0.7, TopK: 40, TopP: 0.9, MinP: 0.05, Seed: 42}
	a, _ := NewSampler(o)
	b, _ := NewSampler(o)
	o.Seed = 43
	c, _ := NewSampler(o)
	same := true
	for i := 0; i < 8; i++ {
		ra, rb, rc := a.Row(), b.Row(), c.Row()
		if ra != rb {
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
}

func TestSamplingValidate(t *testing.T) {
	for _, o := range []SamplingOptions{{Temperature: -1}, {Temperature: math.NaN()}, {Temperature: math.Inf(1)}, {TopK: -1}, {TopP: 1.5}, {TopP: math.NaN()}, {MinP: -0.1}, {MinP: math.NaN()}} {
		if _, err := NewSampler(o); err == nil {
			t.Errorf("%+v: want an error", o)
		}
	}
}
