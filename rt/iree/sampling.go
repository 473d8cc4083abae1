package iree

import (
	"context"
	"fmt"
)

// Sampling is how the worker chooses one sequence's tokens, sent once when
// the sequence starts (StartSeq). Every field is sent and required: the
// worker applies no default (rt.SamplingOptions owns the defaults).
//
// The warpers follow Hugging Face generate's LogitsProcessor definitions
// and order (transformers generation/logits_process.py): temperature,
// top-k (keep logits >= the k-th largest), top-p (drop the least likely
// tokens whose cumulative probability is <= 1 - top_p, always keeping the
// top one), min-p (drop probability < min_p × the top probability); then
// the token whose interval of the cumulative distribution (in id order)
// holds the row's U. Temperature 0 is argmax (the lowest id on ties).
//
// Penalties come first, on the raw logits, in this order (worker.py
// Sequence): RepetitionPenalty (transformers'
// RepetitionPenaltyLogitsProcessor, over every token of the sequence,
// prompt included), FrequencyPenalty and PresencePenalty (OpenAI's
// definitions, over the generated tokens only), DRY (p-e-w's definition as
// text-generation-webui's DRYLogitsProcessor). They apply to argmax too.
// The worker keeps each sequence's tokens and counts, so a step sends only
// its new tokens (SampleRow.Tokens), never the history.
type Sampling struct {
	Temperature float64 `json:"temperature"` // > 0 divides the logits; 0 = argmax
	TopK        int     `json:"top_k"`       // 0 = off
	TopP        float64 `json:"top_p"`       // 0 or 1 = off
	MinP        float64 `json:"min_p"`       // 0 = off

	RepetitionPenalty float64 `json:"repetition_penalty"` // > 0; 1 = off
	FrequencyPenalty  float64 `json:"frequency_penalty"`  // subtracted once per generated occurrence; 0 = off
	PresencePenalty   float64 `json:"presence_penalty"`   // subtracted once if generated; 0 = off
	DRYMultiplier     float64 `json:"dry_multiplier"`     // 0 = DRY off
	DRYBase           float64 `json:"dry_base"`           // >= 1: the penalty grows by this factor per repeated token (1: flat)
	DRYAllowedLength  int     `json:"dry_allowed_length"` // repeats of this length or shorter are not penalized (0: every repeat)
	DRYRange          int     `json:"dry_range"`          // tokens looked back; 0 = all
	DRYBreakers       []int32 `json:"dry_breakers"`       // token ids that end a repeated sequence
	// Logprobs, when set, asks for the chosen token's logprob (log_softmax
	// of the raw logits) and the *Logprobs most likely tokens'.
	Logprobs *int `json:"logprobs"`
	// LogitBias is added to the logits of its ids before everything else
	// (OpenAI's logit_bias); Grammar then masks the tokens it does not
	// allow next (grammar.py). Both run before the penalties.
	LogitBias []Bias   `json:"logit_bias"`
	Grammar   *Grammar `json:"grammar"`
}

// Bias is one logit_bias entry: Bias is added to token ID's logit.
type Bias struct {
	ID   int32   `json:"id"`
	Bias float64 `json:"bias"`
}

// SampleRow chooses one token from one row of logits. The zero value is
// plain argmax (the lowest id on ties, as torch.argmax), with no sequence.
type SampleRow struct {
	// Seq is the sequence (StartSeq) this row belongs to; nil = argmax.
	Seq *int `json:"seq"`
	// U is a uniform draw in [0, 1), from the caller's seeded stream (so a
	// seed repeats); used when the sequence's Temperature is > 0.
	U float64 `json:"u"`
	// Tokens are the sequence's tokens since the last row (or since
	// StartSeq's prompt): in decoding, the token the previous row chose.
	// The worker appends them to the sequence before choosing.
	Tokens []int32 `json:"tokens"`
}

// SeqRow returns the row for sequence seq with draw u and new tokens.
func SeqRow(seq int, u float64, tokens []int32) SampleRow {
	return SampleRow{Seq: &seq, U: u, Tokens: tokens}
}

// StartSeq starts (or restarts: any state under the same id is dropped)
// sequence seq in the worker: its sampling parameters and its prompt, the
// context the penalties see, sent once. vocab is the logits' width, which
// bounds the token ids. seq is the caller's id (rt uses the KV-cache
// slot). Errors: token ids outside [0, vocab), a dead worker.
func (w *Worker) StartSeq(ctx context.Context, seq, vocab int, s Sampling, prompt []int32) error {
	for _, t := range prompt {
		if t < 0 || t >= int32(vocab) {
			return fmt.Errorf("iree: StartSeq(%d): prompt token id %d is outside the vocabulary [0, %d)", seq, t, vocab)
		}
	}
	s.DRYBreakers = nonNil(s.DRYBreakers)
	s.LogitBias = nonNil(s.LogitBias)
	for _, b := range s.LogitBias {
		if b.ID < 0 || b.ID >= int32(vocab) {
			return fmt.Errorf("iree: StartSeq(%d): logit_bias token id %d is outside the vocabulary [0, %d)", seq, b.ID, vocab)
		}
	}
	req := seqStartReq{Op: "seq_start", Seq: seq, Vocab: vocab, Sampling: s, Prompt: nonNil(prompt)}
	_, err := w.request(ctx, fmt.Sprintf("StartSeq(%d)", seq), req, nil, &okResp{})
	return err
}

// EndSeq drops sequence seq's state in the worker (at finish or cancel).
// Ending a sequence that is not there is not an error. Errors: a dead
// worker.
func (w *Worker) EndSeq(ctx context.Context, seq int) error {
	_, err := w.request(ctx, fmt.Sprintf("EndSeq(%d)", seq), seqEndReq{Op: "seq_end", Seq: seq}, nil, &okResp{})
	return err
}

// nonNil returns xs, or an empty slice for nil: the protocol sends an
// empty list, never null, where a list is required.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

// wireRows returns rows with every Tokens non-nil (see nonNil).
func wireRows(rows []SampleRow) []SampleRow {
	if rows == nil {
		return nil
	}
	out := make([]SampleRow, len(rows))
	for i, r := range rows {
		r.Tokens = nonNil(r.Tokens)
		out[i] = r
	}
	return out
}
