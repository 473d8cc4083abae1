package rt

import (
	"context"
	"slices"
)

// PromptLookup drafts by prompt lookup (n-gram) decoding (Saxena 2023;
// transformers' prompt_lookup_num_tokens, llama.cpp's lookup): it finds
// the most recent earlier occurrence of the sequence's last n tokens in the
// sequence itself (prompt and generated tokens), for n from MaxNgram down
// to MinNgram, and proposes the tokens that followed it. No model runs, so
// a draft costs nothing but the verify call; it pays where the output
// repeats its context (code edits, quoted text, JSON re-emitted).
type PromptLookup struct {
	MaxNgram, MinNgram int // n-gram lengths tried, longest first; 0s mean 3 and 1
	// Reference, when set, is searched before the sequence itself: text
	// the output is expected to repeat (OpenAI's predicted outputs, the
	// request's "prediction"), in token ids. Its earliest occurrence of the
	// n-gram wins (the output walks through it in order).
	Reference []int32
}

// Name is "ngram".
func (PromptLookup) Name() string { return "ngram" }

// Draft returns up to max tokens that followed an earlier occurrence of
// seq's longest matching suffix n-gram, or nil when none occurs: the
// latest occurrence with max tokens after it, else the one with the most
// (inside a run of repeats the latest occurrence overlaps the suffix and
// leaves one token to propose; llama.cpp's lookup, which takes the
// earliest, drafted 8 where this drafted 1). O(len(seq)·n) per call.
func (p PromptLookup) Draft(_ context.Context, _ int, seq []int32, max int) []int32 {
	hi, lo := p.MaxNgram, p.MinNgram
	if hi <= 0 {
		hi = 3
	}
	if lo <= 0 {
		lo = 1
	}
	L := len(seq)
	if ref := p.Reference; len(ref) > 0 {
		for n := min(hi, L); n >= lo; n-- {
			for at := 0; at+n < len(ref); at++ {
				if slices.Equal(ref[at:at+n], seq[L-n:]) {
					return ref[at+n : min(at+n+max, len(ref))]
				}
			}
		}
	}
	for n := min(hi, L-1); n >= lo; n-- {
		suffix := seq[L-n:]
		var best []int32
		for at := L - n - 1; at >= 0; at-- { // the latest occurrence with a whole draft after it
			if !slices.Equal(seq[at:at+n], suffix) {
				continue
			}
			follow := seq[at+n : min(at+n+max, L)]
			if len(follow) > len(best) {
				best = follow
			}
			if len(best) == max {
				break
			}
		}
		if len(best) > 0 {
			return best
		}
	}
	return nil
}
