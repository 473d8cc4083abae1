package rt

import (
	"context"
	"fmt"
	"github.com/archc/archc/formats/option"
	"time"

	"github.com/archc/archc/rt/iree"
)

// GenerateOptions configures Generate.
type GenerateOptions struct {
	MaxTokens int // new tokens at most; generation also stops after an EOS or stop token
	// Sampling picks each token; the zero value is greedy decoding.
	Sampling SamplingOptions
	// StopTokens are extra token ids that end generation (kept in the output, like EOS).
	StopTokens []int32
	// OnToken, if set, receives each generated token as soon as it is
	// chosen; returning true ends generation there (e.g. a stop string was
	// found in the text).
	OnToken func(id int32) (stop bool)
	// Speculative, when set, drafts tokens and verifies them in one call
	// (speculate.go): the output is the one plain decoding gives (greedy:
	// the same tokens; sampled: the same distribution), sooner when drafts
	// are accepted. The model needs verify entry points (MaxDraft > 0); a
	// sampler that reads the sequence (penalties, a grammar) decodes
	// plainly.
	Speculative *Speculation
	// Encoded holds the image rows of the prompt's placeholder tokens
	// (Encoded; a vision-language model's encode calls, Encode), nil
	// for a prompt without images.
	Encoded *Encoded
}

// Speculation configures speculative decoding of one sequence.
type Speculation struct {
	Drafter  Drafter
	DraftMax int // tokens per draft at most; 0 or more than MaxDraft: MaxDraft
}

// Generation is the result of one Generate call.
type Generation struct {
	PromptTokens []int32       // the prompt as given
	Tokens       []int32       // generated ids, ending with the EOS id if one was produced (as HF generate)
	Choices      []iree.Choice // per generated token: its id and, when asked (SamplingOptions.Logprobs), logprobs
	FirstLogits  []float32     // logits that chose the first token, [vocab]
	FinishReason string        // "stop" (an end or stop token, or OnToken asked) or "length" (MaxTokens)
	PrefillTime  time.Duration
	DecodeTime   time.Duration // time of the decode calls (len(Tokens)-1 of them)
	Spec         SpecStats     // speculative decoding's counts (zero without it)
}

// Generate decodes from prompt: prefill, then one decode call per new
// token, each token chosen by opts.Sampling (greedy by default: argmax, the
// lowest id winning ties as torch.argmax), until MaxTokens tokens or an EOS
// or stop token. Errors: an empty prompt, prompt
// plus MaxTokens beyond the KV cache, bad token ids, a worker failure, ctx.
func (m *Model) Generate(ctx context.Context, prompt []int32, opts GenerateOptions) (*Generation, error) {
	if len(prompt) == 0 {
		return nil, fmt.Errorf("generate: empty prompt")
	}
	if opts.MaxTokens < 0 {
		return nil, option.Errorf("MaxTokens", opts.MaxTokens, "give the number of new tokens to generate, 0 or more")
	}
	if len(prompt)+opts.MaxTokens > m.MaxLen()+1 {
		return nil, option.Errorf("MaxLen", m.MaxLen(), "the prompt (%s) + %s ({MaxTokens}) exceed the KV-cache length; shorten the prompt, lower {MaxTokens} or raise {MaxLen}", option.Count(len(prompt), "token", "tokens"), option.Count(opts.MaxTokens, "new token", "new tokens"))
	}
	sampler, err := NewSampler(opts.Sampling)
	if err != nil {
		return nil, err
	}
	g := &Generation{PromptTokens: prompt}
	if opts.MaxTokens == 0 {
		g.FinishReason = "length"
		return g, nil
	}
	t0 := time.Now()
	logits, err := m.PrefillEncoded(ctx, 0, prompt, 0, opts.Encoded)
	if err != nil {
		return nil, err
	}
	g.PrefillTime = time.Since(t0)
	g.FirstLogits = logits
	pos := len(prompt)
	t1 := time.Now()
	// Tokens are chosen in the worker: after prefill from its logits, after
	// each decode on the logits buffer, so only ids cross the pipe.
	seq := append(make([]int32, 0, len(prompt)+opts.MaxTokens), prompt...)
	if err := m.StartSequence(ctx, 0, sampler, prompt); err != nil {
		return nil, err
	}
	defer func() { // the worker's state of the sequence; a failure here changes no result
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		m.EndSequence(ctx, sampler)
		cancel()
	}()
	c, err := m.Sample(ctx, logits, sampler.Row(seq))
	if err != nil {
		return nil, err
	}
	for {
		if g.accept(m, opts, &seq, c) {
			break
		}
		tok := c.ID
		if sp := opts.Speculative; sp != nil && SpecEligible(sampler) {
			if draft := m.Draft(ctx, sp, 0, seq, pos, opts.MaxTokens-len(g.Tokens)); len(draft) > 0 {
				cs, err := m.Speculate(ctx, 0, seq, pos, draft, sampler)
				if err != nil {
					return nil, err
				}
				g.Spec.Add(SpecStats{Drafts: 1, Drafted: len(draft), Accepted: len(cs) - 1})
				pos += len(cs)
				// All but the last choice are accepted draft tokens, the
				// last the model's own: each ends generation as a decoded one would.
				for _, c := range cs[:len(cs)-1] {
					if g.accept(m, opts, &seq, c) {
						break
					}
				}
				if g.FinishReason != "" {
					break
				}
				c = cs[len(cs)-1]
				continue
			}
		}
		var rows []iree.SampleRow // nil: argmax
		if !sampler.Plain() {
			rows = []iree.SampleRow{sampler.Row(seq)}
		}
		cs, err := m.DecodeSample(ctx, []int32{tok}, []int{pos}, []int{0}, rows)
		if err != nil {
			return nil, err
		}
		c = cs[0]
		pos++
	}
	g.DecodeTime = time.Since(t1)
	return g, nil
}

// accept appends the chosen token c to the sequence and the generation
// and reports whether generation ends with it (OnToken asked, an end or
// stop token, MaxTokens), setting FinishReason.
func (g *Generation) accept(m *Model, opts GenerateOptions, seq *[]int32, c iree.Choice) bool {
	tok := c.ID
	*seq = append(*seq, tok)
	g.Tokens = append(g.Tokens, tok)
	g.Choices = append(g.Choices, c)
	switch {
	case opts.OnToken != nil && opts.OnToken(tok), contains32(m.EOS, tok), contains32(opts.StopTokens, tok):
		g.FinishReason = "stop"
	case len(g.Tokens) == opts.MaxTokens:
		g.FinishReason = "length"
	}
	return g.FinishReason != ""
}

// Draft asks sp's drafter for the tokens after seq, whose last token is
// at pos: at most sp.DraftMax, what a verify call holds (MaxDraft) and
// left new tokens − 1 (the step adds one of its own), even in length for
// a model with a fixed state. nil: decode this step plainly.
func (m *Model) Draft(ctx context.Context, sp *Speculation, slot int, seq []int32, pos, left int) []int32 {
	limit := m.MaxDraft(pos)
	if sp.DraftMax > 0 {
		limit = min(limit, sp.DraftMax)
	}
	limit = min(limit, left-1)
	if limit <= 0 {
		return nil
	}
	d := sp.Drafter.Draft(ctx, slot, seq, limit)
	if len(d) > limit {
		d = d[:limit]
	}
	for i, t := range d { // a draft is cut at an id the model cannot score (a drafter's bug, a prediction's text)
		if t < 0 || int64(t) >= m.Vocab {
			d = d[:i]
			break
		}
	}
	if m.Program.FixedState() && len(d)%2 == 1 {
		d = d[:len(d)-1]
	}
	return d
}

// Argmax returns the index of the largest logit, the lowest on ties.
func Argmax(logits []float32) int32 {
	best := 0
	for i, v := range logits {
		if v > logits[best] {
			best = i
		}
	}
	return int32(best)
}

func contains32(xs []int32, x int32) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
