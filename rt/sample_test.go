package rt

import (
	"math"
	"testing"
)

func TestSamplerGreedy(t *testing.T) {
	s, err := NewSampler(SamplingOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Next([]float32{0.1, 3, 3, -1}); got != 1 {
		t.Errorf("greedy = %d, want 1 (the first of tied maxima, as torch.argmax)", got)
	}
}

// draw counts tokens over many draws.
func draw(t *testing.T, o SamplingOptions, logits []float32, n int) map[int32]int {
	t.Helper()
	s, err := NewSampler(o)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int32]int{}
	for i := 0; i < n; i++ {
		counts[s.Next(logits)]++
	}
	return counts
}

func TestSamplerFilters(t *testing.T) {
	logits := []float32{2, 1, 0, -1, -2} // probs ≈ .636 .234 .086 .032 .012
	for _, c := range []struct {
		name    string
		opts    SamplingOptions
		allowed []int32
	}{
		{"top-k 2", SamplingOptions{Temperature: 1, TopK: 2, Seed: 1}, []int32{0, 1}},
		{"top-p 0.8", SamplingOptions{Temperature: 1, TopP: 0.8, Seed: 2}, []int32{0, 1}},    // .636 < .8 <= .870
		{"top-p 0.5", SamplingOptions{Temperature: 1, TopP: 0.5, Seed: 3}, []int32{0}},       // the top token alone exceeds .5
		{"min-p 0.1", SamplingOptions{Temperature: 1, MinP: 0.1, Seed: 4}, []int32{0, 1, 2}}, // .086 >= .0636
		{"min-p 0.2", SamplingOptions{Temperature: 1, MinP: 0.2, Seed: 5}, []int32{0, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			counts := draw(t, c.opts, logits, 3000)
			allowed := map[int32]bool{}
			for _, a := range c.allowed {
				allowed[a] = true
				if counts[a] == 0 {
					t.Errorf("token %d never drawn", a)
				}
			}
			for tok := range counts {
				if !allowed[tok] {
					t.Errorf("token %d drawn but filtered out", tok)
				}
			}
		})
	}
}

func TestSamplerDistributionAndSeed(t *testing.T) {
	logits := []float32{1, 0}
	o := SamplingOptions{Temperature: 1, Seed: 42}
	counts := draw(t, o, logits, 20000)
	want := 1 / (1 + math.Exp(-1)) // ≈ 0.731
	if got := float64(counts[0]) / 20000; math.Abs(got-want) > 0.02 {
		t.Errorf("P(token 0) = %.3f, want %.3f", got, want)
	}
	hot := draw(t, SamplingOptions{Temperature: 100, Seed: 42}, logits, 20000)
	if got := float64(hot[0]) / 20000; math.Abs(got-0.5) > 0.02 {
		t.Errorf("temperature 100: P(token 0) = %.3f, want ≈ 0.5", got)
	}
	a, b := draw(t, o, []float32{0, 0, 0, 0}, 50), draw(t, o, []float32{0, 0, 0, 0}, 50)
	for k := range a {
		if a[k] != b[k] {
			t.Fatalf("same seed gave different draws: %v vs %v", a, b)
		}
	}
}

func TestSamplingValidate(t *testing.T) {
	for _, o := range []SamplingOptions{{Temperature: -1}, {Temperature: math.NaN()}, {Temperature: math.Inf(1)}, {TopK: -1}, {TopP: 1.5}, {TopP: math.NaN()}, {MinP: -0.1}, {MinP: math.NaN()}} {
		if _, err := NewSampler(o); err == nil {
			t.Errorf("%+v: want an error", o)
		}
	}
}
