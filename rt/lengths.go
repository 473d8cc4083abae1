package rt

import (
	"context"
	"slices"

	"github.com/archc/archc/lower"
)

// Length-dependent RoPE (LongRoPE, dynamic NTK) rotates a token's key with
// a table chosen by the length of the sequence in the forward call that
// computed it (lower.LengthRule). HF runs a prompt in one call, so every
// prompt token gets the table of the prompt's length; archc runs it in
// chunks, each told the prompt's total length (prefill's `total`), and
// may reuse a slot's cached prefix for another prompt (the engine), which
// is only right when that prefix was computed with the table the new
// sequence needs. So the Model records, per slot, the tokens its cache
// holds and the table each was computed with, and recomputes a prefix
// whose table is stale before it is used:
//   - a prefill continuing at start > 0 recomputes positions 0..start-1
//     when any of them was computed with another table than the new
//     prompt's length gives (for LongRoPE: short vs long);
//   - with LengthRule.Recompute (LongRoPE, rope recompute: true), a decode step that takes the
//     sequence past the threshold first recomputes the earlier positions
//     with the long table, as HF's Phi-3 generate does.
// Nothing is tracked for a graph without a length-dependent RoPE.

// slotHistory is what one KV-cache slot holds: the token at each position
// and the table key it was computed with (tableKey); -1 for unknown.
type slotHistory struct {
	tokens []int32
	keys   []int64
}

// tableKey identifies the RoPE table a call uses for a sequence of length
// L: 0 for the base table, else 1 (LongRoPE's long factors) or L (dynamic
// NTK, one table per length).
func tableKey(r lower.LengthRule, L int) int64 {
	switch {
	case r.Threshold == 0 || int64(L) <= r.Threshold:
		return 0
	case r.PerLength:
		return int64(L)
	}
	return 1
}

// record notes that tokens were written to slot at positions start.. with
// the table of a sequence of length L.
func (m *Model) record(slot, start int, tokens []int32, L int) {
	if m.rule.Threshold == 0 {
		return
	}
	if m.hist == nil {
		m.hist = map[int]*slotHistory{}
	}
	h := m.hist[slot]
	if h == nil {
		h = &slotHistory{}
		m.hist[slot] = h
	}
	for len(h.tokens) < start { // positions never written through this Model
		h.tokens, h.keys = append(h.tokens, -1), append(h.keys, -1)
	}
	h.tokens, h.keys = h.tokens[:start], h.keys[:start]
	k := tableKey(m.rule, L)
	for _, t := range tokens {
		h.tokens, h.keys = append(h.tokens, t), append(h.keys, k)
	}
}

// refresh recomputes positions 0..start-1 of slot with the table of a
// sequence of length L when any of them was computed with another; a
// prefix with unknown tokens is left as it is.
func (m *Model) refresh(ctx context.Context, slot, start, L int) error {
	if m.rule.Threshold == 0 || start == 0 {
		return nil
	}
	h := m.hist[slot]
	if h == nil || len(h.tokens) < start || slices.Contains(h.tokens[:start], -1) {
		return nil
	}
	k := tableKey(m.rule, L)
	stale := false
	for _, x := range h.keys[:start] {
		stale = stale || x != k
	}
	if !stale {
		return nil
	}
	prefix := slices.Clone(h.tokens[:start])
	for at := 0; at < start; {
		_, n, err := m.prefillChunk(ctx, slot, prefix[at:], at, L)
		if err != nil {
			return err
		}
		at += n
	}
	return nil
}

// refreshDecode applies the decode rule (LengthRule.Recompute) to a batch:
// each sequence whose step takes it to a table its cached keys were not
// computed with has them recomputed first.
func (m *Model) refreshDecode(ctx context.Context, pos, slots []int) error {
	if !m.rule.Recompute {
		return nil
	}
	for b := range pos {
		if err := m.refresh(ctx, slots[b], pos[b], pos[b]+1); err != nil {
			return err
		}
	}
	return nil
}
