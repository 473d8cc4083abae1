package rt

import (
	crand "crypto/rand"
	"encoding/binary"
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

	// Penalties, applied to the logits before the warpers (also when
	// greedy); see iree.SampleRow for their exact definitions.
	RepetitionPenalty float64 // HF semantics over prompt and generated tokens; 0 or 1 = off
	FrequencyPenalty  float64 // OpenAI semantics over generated tokens, in [-2, 2]
	PresencePenalty   float64 // OpenAI semantics over generated tokens, in [-2, 2]
	DRY               DRYOptions

	// Logprobs asks for each chosen token's logprob, and TopLogprobs for
	// that many most likely alternatives' (0 to 20).
	Logprobs    bool
	TopLogprobs int

	// LogitBias is added to the logits of its token ids before everything
	// else (OpenAI's logit_bias, in [-100, 100]); Grammar then masks the
	// tokens it does not allow (constrained decoding, iree.GrammarRow).
	LogitBias map[int32]float64
	Grammar   *Grammar
}

// Grammar constrains decoding: Lark is a grammar in llguidance's Lark
// dialect, Vocab the path of the model's vocabulary file for the worker
// (see server's vocabulary export). Each Sampler gets its own matcher.
type Grammar struct {
	Lark  string
	Vocab string
}

// DRYOptions is the DRY ("don't repeat yourself") penalty, as p-e-w
// defined it (text-generation-webui's DRYLogitsProcessor).
type DRYOptions struct {
	Multiplier    float64 // 0 = off
	Base          float64 // default 1.75
	AllowedLength int     // default 2
	Range         int     // tokens looked back; 0 = the whole sequence
	Breakers      []int32 // token ids that end a repeated sequence
}

// penalized reports whether o has any penalty, which needs the sequence.
func (o SamplingOptions) penalized() bool {
	return (o.RepetitionPenalty != 0 && o.RepetitionPenalty != 1) || o.FrequencyPenalty != 0 || o.PresencePenalty != 0 || o.DRY.Multiplier != 0
}

// Validate reports options out of range.
func (o SamplingOptions) Validate() error {
	bad := func(option, format string, a ...any) error {
		return &InvalidOption{Option: option, Msg: fmt.Sprintf(format, a...)}
	}
	switch {
	case !(o.Temperature >= 0) || math.IsInf(o.Temperature, 1):
		return bad("temperature", "temperature %g must be a finite number >= 0", o.Temperature)
	case o.TopK < 0:
		return bad("top_k", "top-k %d must be >= 0", o.TopK)
	case !(o.TopP >= 0 && o.TopP <= 1):
		return bad("top_p", "top-p %g must be in [0, 1]", o.TopP)
	case !(o.MinP >= 0 && o.MinP <= 1):
		return bad("min_p", "min-p %g must be in [0, 1]", o.MinP)
	case !(o.RepetitionPenalty >= 0) || math.IsInf(o.RepetitionPenalty, 1):
		return bad("repetition_penalty", "repetition penalty %g must be a finite number >= 0 (0 and 1: off)", o.RepetitionPenalty)
	case !(o.FrequencyPenalty >= -2 && o.FrequencyPenalty <= 2):
		return bad("frequency_penalty", "frequency penalty %g must be in [-2, 2]", o.FrequencyPenalty)
	case !(o.PresencePenalty >= -2 && o.PresencePenalty <= 2):
		return bad("presence_penalty", "presence penalty %g must be in [-2, 2]", o.PresencePenalty)
	case !(o.DRY.Multiplier >= 0) || math.IsInf(o.DRY.Multiplier, 1) || !(o.DRY.Base == 0 || o.DRY.Base > 1) || math.IsInf(o.DRY.Base, 1) || o.DRY.AllowedLength < 0 || o.DRY.Range < 0:
		return bad("dry_multiplier", "DRY multiplier %g, base %g, allowed length %d, range %d: want multiplier >= 0, base > 1, length and range >= 0", o.DRY.Multiplier, o.DRY.Base, o.DRY.AllowedLength, o.DRY.Range)
	case o.TopLogprobs < 0 || o.TopLogprobs > 20:
		return bad("top_logprobs", "top logprobs %d: must be in [0, 20]", o.TopLogprobs)
	}
	for id, b := range o.LogitBias {
		if !(b >= -100 && b <= 100) {
			return bad("logit_bias", "logit_bias of token %d is %g: must be in [-100, 100]", id, b)
		}
	}
	return nil
}

// InvalidOption is Validate's error: the sampling option at fault, by its
// OpenAI / transformers request name (top_p, repetition_penalty, ...), and
// what is wrong with its value.
type InvalidOption struct {
	Option string
	Msg    string
}

func (e *InvalidOption) Error() string { return e.Msg }

// Greedy reports whether o picks the argmax.
func (o SamplingOptions) Greedy() bool { return o.Temperature == 0 }

// Sampler is one sequence's sampling state: its options and its random
// stream (PCG seeded by Seed), from which each step draws one uniform.
type Sampler struct {
	opts SamplingOptions
	rng  *rand.Rand
	// key names this sequence's grammar matcher in the worker; sent says
	// the grammar itself went with an earlier row.
	key  string
	sent bool
}

// NewSampler returns a sampler for opts (see SamplingOptions.Validate).
func NewSampler(opts SamplingOptions) (*Sampler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Sampler{opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, 0x61726368632d7331))}
	if opts.Grammar != nil {
		s.key = fmt.Sprintf("g%016x%016x", cryptoRand(), cryptoRand())
	}
	return s, nil
}

// Row returns the worker's instructions for the next token of a sequence
// (seq: prompt then generated tokens, of which the last generated were
// generated): the options and, when sampling, the next uniform draw of the
// stream. The sequence is sent only when a penalty needs it.
func (s *Sampler) Row(seq []int32, generated int) iree.SampleRow {
	o := s.opts
	r := iree.SampleRow{Temperature: o.Temperature, TopK: o.TopK, TopP: o.TopP, MinP: o.MinP,
		RepetitionPenalty: o.RepetitionPenalty, FrequencyPenalty: o.FrequencyPenalty, PresencePenalty: o.PresencePenalty,
		DRYMultiplier: o.DRY.Multiplier, DRYBase: o.DRY.Base, DRYAllowedLength: o.DRY.AllowedLength, DRYRange: o.DRY.Range, DRYBreakers: o.DRY.Breakers}
	if !o.Greedy() {
		r.U = s.rng.Float64()
	}
	if o.penalized() {
		r.Context, r.Generated = seq, generated
	}
	if o.Logprobs || o.TopLogprobs > 0 {
		k := o.TopLogprobs
		r.Logprobs = &k
	}
	r.LogitBias = o.LogitBias
	if o.Grammar != nil {
		r.Grammar = &iree.GrammarRow{Key: s.key, Vocab: o.Grammar.Vocab}
		if !s.sent {
			r.Grammar.Lark, s.sent = o.Grammar.Lark, true
		}
	}
	return r
}

// Plain reports whether rows of s are plain argmax (no sampling, penalty
// or logprobs), which the worker computes without sampling instructions.
func (s *Sampler) Plain() bool {
	return s.opts.Greedy() && !s.opts.penalized() && !s.opts.Logprobs && s.opts.TopLogprobs == 0 && len(s.opts.LogitBias) == 0 && s.opts.Grammar == nil
}

func cryptoRand() uint64 {
	var b [8]byte
	crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}
