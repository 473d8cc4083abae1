package rt

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/archc/archc/rt/iree"
)

// SamplingOptions chooses the next token from logits. The zero value (and
// any Temperature of 0) is greedy decoding. The warpers follow Hugging Face
// generate's LogitsProcessor definitions and order: temperature, then top-k,
// then top-p, then min-p (transformers generation/logits_process.py:
// TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper,
// MinPLogitsWarper), then a draw from the softmax of what remains. They run
// in the IREE worker on the logits buffer (iree.SampleRow); the random
// stream stays here, so a seed repeats its tokens.
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

// Greedy reports whether o picks the argmax.
func (o SamplingOptions) Greedy() bool { return o.Temperature == 0 }

// Sampler is one sequence's sampling state: its options and its random
// stream (PCG seeded by Seed), from which each step draws one uniform.
type Sampler struct {
	opts SamplingOptions
	rng  *rand.Rand
}

// NewSampler returns a sampler for opts (see SamplingOptions.Validate).
func NewSampler(opts SamplingOptions) (*Sampler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Sampler{opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, 0x61726368632d7331))}, nil
}

// Row returns the worker's instructions for the next token: the options
// and, when sampling, the next uniform draw of the stream.
func (s *Sampler) Row() iree.SampleRow {
	r := iree.SampleRow{Temperature: s.opts.Temperature, TopK: s.opts.TopK, TopP: s.opts.TopP, MinP: s.opts.MinP}
	if !s.opts.Greedy() {
		r.U = s.rng.Float64()
	}
	return r
}
