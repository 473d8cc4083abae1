package rt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/archc/archc/rt/iree"
)

// SamplingOptions chooses the next token from logits. The zero value (and
// any Temperature of 0) is greedy decoding. The warpers follow Hugging Face
// generate's LogitsProcessor definitions and order: temperature, then top-k,
// then top-p, then min-p (transformers generation/logits_process.py:
// TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper,
// MinPLogitsWarper), then a draw from the softmax of what remains. They run
// in the IREE worker on the logits buffer (iree.Sampling); the random
// stream stays here, so a seed repeats its tokens.
type SamplingOptions struct {
	Temperature float64 // divides the logits; 0 = greedy (argmax)
	TopK        int     // keep tokens whose logit is >= the k-th largest; 0 = off
	TopP        float64 // keep the smallest high-probability set whose mass exceeds top_p; 0 or 1 = off (front ends give top_p 0 as TopK 1: the most likely token only)
	MinP        float64 // drop tokens with probability < min_p × the top probability; 0 = off
	Seed        uint64  // random seed: the same seed and logits give the same tokens

	// Penalties, applied to the logits before the warpers (also when
	// greedy); see iree.Sampling for their exact definitions.
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
	// tokens it does not allow (constrained decoding, iree.Grammar).
	LogitBias map[int32]float64
	Grammar   *Grammar
}

// Grammar constrains decoding: Lark is a grammar in llguidance's Lark
// dialect, Vocab the path of the model's vocabulary file for the worker
// (see server's vocabulary export). Each sequence gets its own matcher.
type Grammar struct {
	Lark  string
	Vocab string
}

// DRYOptions is the DRY ("don't repeat yourself") penalty, as p-e-w
// defined it (text-generation-webui's DRYLogitsProcessor).
type DRYOptions struct {
	Multiplier float64 // 0 = off
	// Base >= 1: the penalty grows by this factor per repeated token (1:
	// a flat penalty of Multiplier, as llama.cpp runs it); 0 =
	// DefaultDRYBase. Below 1 is refused (llama.cpp turns DRY off there).
	Base float64
	// AllowedLength: repeats of this many tokens or fewer (counting the
	// token to come) are not penalized; 0 penalizes every repeat. nil =
	// DefaultDRYAllowedLength.
	AllowedLength *int
	Range         int     // tokens looked back; 0 = the whole sequence
	Breakers      []int32 // token ids that end a repeated sequence (the caller tokenizes DefaultDRYBreakers)
}

// DRY's defaults, the reference's (text-generation-webui's DRY and
// llama.cpp's dry_base / dry_allowed_length). This is their one place: the
// worker requires every value, and the front ends leave unset fields at
// their zero value (Base 0, AllowedLength nil).
const (
	DefaultDRYBase          = 1.75
	DefaultDRYAllowedLength = 2
)

// DefaultDRYBreakers returns DRY's default sequence breakers, as text
// (the reference's: newline, colon, double quote, asterisk); callers
// tokenize them into DRYOptions.Breakers.
func DefaultDRYBreakers() []string { return []string{"\n", ":", "\"", "*"} }

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
	case !(o.DRY.Multiplier >= 0) || math.IsInf(o.DRY.Multiplier, 1):
		return bad("dry_multiplier", "DRY multiplier %g must be a finite number >= 0 (0: off)", o.DRY.Multiplier)
	case !(o.DRY.Base == 0 || o.DRY.Base >= 1) || math.IsInf(o.DRY.Base, 1):
		return bad("dry_base", "DRY base %g must be a finite number >= 1 (1: a flat penalty; llama.cpp turns DRY off below 1: for that, set dry_multiplier 0)", o.DRY.Base)
	case o.DRY.AllowedLength != nil && *o.DRY.AllowedLength < 0:
		return bad("dry_allowed_length", "DRY allowed length %d must be >= 0", *o.DRY.AllowedLength)
	case o.DRY.Range < 0:
		return bad("dry_penalty_last_n", "DRY range %d must be >= 0 (0: the whole sequence)", o.DRY.Range)
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

// wire returns o as the worker's per-sequence parameters, with every
// default resolved here (and nowhere else): RepetitionPenalty 0 is 1 (off),
// DRY Base 0 and AllowedLength nil are DefaultDRYBase and
// DefaultDRYAllowedLength.
func (o SamplingOptions) wire() iree.Sampling {
	w := iree.Sampling{Temperature: o.Temperature, TopK: o.TopK, TopP: o.TopP, MinP: o.MinP,
		RepetitionPenalty: o.RepetitionPenalty, FrequencyPenalty: o.FrequencyPenalty, PresencePenalty: o.PresencePenalty,
		DRYMultiplier: o.DRY.Multiplier, DRYBase: o.DRY.Base, DRYAllowedLength: DefaultDRYAllowedLength, DRYRange: o.DRY.Range,
		DRYBreakers: append([]int32{}, o.DRY.Breakers...)}
	if w.RepetitionPenalty == 0 {
		w.RepetitionPenalty = 1
	}
	if w.DRYBase == 0 {
		w.DRYBase = DefaultDRYBase
	}
	if o.DRY.AllowedLength != nil {
		w.DRYAllowedLength = *o.DRY.AllowedLength
	}
	if o.Logprobs || o.TopLogprobs > 0 {
		k := o.TopLogprobs
		w.Logprobs = &k
	}
	w.LogitBias = make([]iree.Bias, 0, len(o.LogitBias))
	for id, b := range o.LogitBias {
		w.LogitBias = append(w.LogitBias, iree.Bias{ID: id, Bias: b})
	}
	slices.SortFunc(w.LogitBias, func(a, b iree.Bias) int { return cmp.Compare(a.ID, b.ID) })
	if o.Grammar != nil {
		w.Grammar = &iree.Grammar{Vocab: o.Grammar.Vocab, Lark: o.Grammar.Lark}
	}
	return w
}

// Sampler is one sequence's sampling state on the Go side: its options,
// its random stream (PCG seeded by Seed), from which each step draws one
// uniform, and how much of the sequence the worker holds. The worker keeps
// the rest (the tokens and counts the penalties read) from StartSequence
// to EndSequence, so each step sends only the new tokens.
type Sampler struct {
	opts SamplingOptions
	rng  *rand.Rand
	seq  int // the worker's sequence id while started, else -1
	sent int // tokens of the sequence the worker has
}

// NewSampler returns a sampler for opts (see SamplingOptions.Validate).
func NewSampler(opts SamplingOptions) (*Sampler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Sampler{opts: opts, rng: rand.New(rand.NewPCG(opts.Seed, 0x61726368632d7331)), seq: -1}, nil
}

// Row returns the worker's instructions for the next token of the
// sequence seq (prompt then generated tokens so far): the tokens of seq
// the worker does not have yet (in decoding, the last one chosen) and,
// when sampling, the next uniform draw of the stream. A Plain sampler's
// row is plain argmax. Other samplers need StartSequence first (else the
// worker refuses the row, naming sequence -1).
func (s *Sampler) Row(seq []int32) iree.SampleRow {
	if s.Plain() {
		return iree.SampleRow{}
	}
	var u float64
	if !s.opts.Greedy() {
		u = s.rng.Float64()
	}
	var tokens []int32
	if s.sent <= len(seq) {
		tokens = seq[s.sent:]
	}
	s.sent = len(seq)
	return iree.SeqRow(s.seq, u, tokens)
}

// Plain reports whether rows of s are plain argmax (no sampling, penalty
// or logprobs), which the worker computes without a sequence.
func (s *Sampler) Plain() bool {
	return s.opts.Greedy() && !s.opts.penalized() && !s.opts.Logprobs && s.opts.TopLogprobs == 0 && len(s.opts.LogitBias) == 0 && s.opts.Grammar == nil
}

// StartSequence starts s's sequence in the worker, under id slot (a
// KV-cache slot holds one sequence at a time), with prompt as the context
// its penalties see: the options and the prompt cross the pipe once, and
// any earlier sequence of that id is dropped. A Plain sampler needs no
// sequence: nothing is sent. Errors: a token id outside the vocabulary, a
// *iree.RequestError when the worker refuses the options (a grammar it
// cannot build: the worker is fine, only this sequence fails), a dead
// worker.
func (m *Model) StartSequence(ctx context.Context, slot int, s *Sampler, prompt []int32) error {
	if s.Plain() {
		return nil
	}
	if m.worker == nil {
		return errors.New("sample: the model has no worker (a restart failed)")
	}
	if err := m.worker.StartSeq(ctx, slot, int(m.Vocab), s.opts.wire(), prompt); err != nil {
		return err
	}
	s.seq, s.sent = slot, len(prompt)
	return nil
}

// EndSequence drops s's sequence in the worker (when it finishes or is
// cancelled); after it, s's rows are refused until StartSequence. It does
// nothing for a sampler that was not started. Errors: a dead worker (whose
// state is gone anyway).
func (m *Model) EndSequence(ctx context.Context, s *Sampler) error {
	if s.seq < 0 {
		return nil
	}
	id := s.seq
	s.seq = -1
	if m.worker == nil {
		return nil
	}
	return m.worker.EndSeq(ctx, id)
}
