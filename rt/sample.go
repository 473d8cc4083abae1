package rt

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// SamplingOptions chooses the next token from logits. The zero value (and
// any Temperature of 0) is greedy decoding. The warpers follow Hugging Face
// generate's LogitsProcessor definitions and order: temperature, then top-k,
// then top-p, then min-p (transformers generation/logits_process.py:
// TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper,
// MinPLogitsWarper), then a draw from the softmax of what remains.
type SamplingOptions struct {
	Temperature float64 // divides the logits; 0 = greedy (argmax)
	TopK        int     // keep tokens whose logit is >= the k-th largest; 0 = off
	TopP        float64 // keep the smallest high-probability set whose mass exceeds top_p; 0 or 1 = off
	MinP        float64 // drop tokens with probability < min_p × the top probability; 0 = off
	Seed        uint64  // random seed: the same seed and logits give the same tokens
}

// Validate reports options out of range.
func (o SamplingOptions) Validate() error {
	switch {
	case !(o.Temperature >= 0) || math.IsInf(o.Temperature, 1):
		return fmt.Errorf("temperature %g must be a finite number >= 0", o.Temperature)
	case o.TopK < 0:
		return fmt.Errorf("top-k %d must be >= 0", o.TopK)
	case !(o.TopP >= 0 && o.TopP <= 1):
		return fmt.Errorf("top-p %g must be in [0, 1]", o.TopP)
	case !(o.MinP >= 0 && o.MinP <= 1):
		return fmt.Errorf("min-p %g must be in [0, 1]", o.MinP)
	}
	return nil
}

// Sampler draws tokens; it owns its random stream.
type Sampler struct {
	opts SamplingOptions
	rng  *rand.Rand
	buf  []float64
	idx  []int
}

// NewSampler returns a sampler for opts (see SamplingOptions.Validate).
func NewSampler(opts SamplingOptions) (*Sampler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Sampler{opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, 0x61726368632d7331))}, nil
}

// Next returns the next token id for logits [vocab].
func (s *Sampler) Next(logits []float32) int32 {
	if s.opts.Temperature == 0 {
		return Argmax(logits)
	}
	n := len(logits)
	scores := s.buf[:0]
	for _, l := range logits {
		scores = append(scores, float64(l)/s.opts.Temperature)
	}
	s.buf = scores
	removed := math.Inf(-1)
	if k := s.opts.TopK; k > 0 && k < n {
		kth := kthLargest(scores, k)
		for i, v := range scores {
			if v < kth {
				scores[i] = removed
			}
		}
	}
	if p := s.opts.TopP; p > 0 && p < 1 {
		s.idx = s.idx[:0]
		for i := range scores {
			s.idx = append(s.idx, i)
		}
		sort.SliceStable(s.idx, func(a, b int) bool { return scores[s.idx[a]] < scores[s.idx[b]] })
		probs := softmax(scores)
		cum := 0.0
		for j, i := range s.idx {
			cum += probs[i]
			if cum <= 1-p && j < n-1 { // the most likely token is always kept
				scores[i] = removed
			}
		}
	}
	if m := s.opts.MinP; m > 0 {
		probs := softmax(scores)
		top := 0.0
		for _, q := range probs {
			top = math.Max(top, q)
		}
		for i, q := range probs {
			if q < m*top {
				scores[i] = removed
			}
		}
	}
	probs := softmax(scores)
	u := s.rng.Float64()
	cum := 0.0
	last := 0
	for i, q := range probs {
		if q == 0 {
			continue
		}
		cum += q
		last = i
		if u < cum {
			return int32(i)
		}
	}
	return int32(last)
}

// softmax returns exp(x - max) / sum; -Inf entries get probability 0.
func softmax(x []float64) []float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = math.Max(mx, v)
	}
	out := make([]float64, len(x))
	sum := 0.0
	for i, v := range x {
		out[i] = math.Exp(v - mx)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// kthLargest returns the k-th largest value of x (1-based).
func kthLargest(x []float64, k int) float64 {
	c := append([]float64(nil), x...)
	sort.Sort(sort.Reverse(sort.Float64Slice(c)))
	return c[k-1]
}
