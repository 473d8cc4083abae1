package rt

import (
	"context"
	"fmt"
	"slices"
)

// Length-dependent RoPE (LongRoPE, dynamic NTK) rotates a token's key with
// a table chosen by the length of the sequence in the forward call that
// computed it. HF runs a prompt in one call, so every prompt token gets
// the table of the prompt's length; archc runs it in chunks, each told the
// prompt's total length (prefill's `total`), and may reuse a slot's cached
// prefix for another prompt (the engine), which is only right when that
// prefix was computed with the table the new sequence needs. The rule is
// the Program's abi.LengthPolicy, computed by the compiler from the IR;
// this file only asks it. The Model records, per slot, the tokens its
// cache holds and the table each was computed with (LengthPolicy.Table),
// and recomputes a prefix the policy says does not serve (Reusable) before
// it is used:
//   - a prefill continuing at start > 0 recomputes positions 0..start-1
//     when any of them was computed with another table than the new
//     prompt's length gives (for LongRoPE: short vs long);
//   - with LengthPolicy.RecomputeOnDecode (LongRoPE, rope recompute: true),
//     a decode step that takes the sequence past the threshold first
//     recomputes the earlier positions with the long table, as HF's Phi-3
//     generate does.
// The engine asks ReusablePrefix, the same question, when it picks a slot.
// Nothing is tracked for a graph without a length-dependent RoPE.

// slotHistory is what one KV-cache slot holds: the token at each position
// and the table it was computed with (LengthPolicy.Table); -1 for unknown.
type slotHistory struct {
	tokens []int32
	keys   []int64
}

// record notes that tokens were written to slot at positions start.. with
// the table of a sequence of length L.
func (m *Model) record(slot, start int, tokens []int32, L int) {
	lp := m.Program.Lengths
	if !lp.Tracked() {
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
	k := lp.Table(L)
	for _, t := range tokens {
		h.tokens, h.keys = append(h.tokens, t), append(h.keys, k)
	}
}

// ReusablePrefix returns how many of the first n positions of slot's
// cache serve a sequence of length L without being recomputed: n when the
// Program's length policy accepts the tables they were computed with (or
// does not track tables, or they were written by calls this Model did not
// see), else 0. With a fixed state (Program.FixedState()) only a prefix
// whose state the slot holds serves: n, else the longest such below it
// (state.go), else 0. The engine asks it to count the prompt tokens a slot's
// cache really saves.
func (m *Model) ReusablePrefix(slot, n, L int) int {
	n = m.heldPrefix(slot, n) // a fixed state serves only the positions it is held for (state.go)
	if n <= 0 {
		return 0
	}
	h := m.hist[slot]
	if h == nil || len(h.keys) < n || m.Program.Lengths.Reusable(h.keys[:n], L) {
		return n
	}
	return 0
}

// refresh recomputes positions 0..start-1 of slot with the table of a
// sequence of length L when the length policy says they do not serve it
// (ReusablePrefix).
func (m *Model) refresh(ctx context.Context, slot, start, L int) error {
	if start == 0 {
		return nil
	}
	if err := m.checkState(slot, start); err != nil { // a fixed state is not recomputed: refused (state.go)
		return err
	}
	if m.ReusablePrefix(slot, start, L) == start {
		return nil
	}
	prefix := slices.Clone(m.hist[slot].tokens[:start])
	for _, e := range m.Program.Encoders { // the rows are not kept: an image prompt cannot be recomputed
		if slices.Contains(prefix, e.Placeholder) {
			return fmt.Errorf("prefill: the cached keys of slot %d were computed for another sequence length and hold image positions, whose rows archc does not keep to recompute them; start the sequence again from position 0", slot)
		}
	}
	for at := 0; at < start; {
		_, n, err := m.prefillChunk(ctx, slot, prefix[at:], at, L, nil)
		if err != nil {
			return err
		}
		at += n
	}
	return nil
}

// refreshDecode applies the decode rule (LengthPolicy.RecomputeOnDecode)
// to a batch: each sequence whose step takes it to a table its cached keys
// were not computed with has them recomputed first.
func (m *Model) refreshDecode(ctx context.Context, pos, slots []int) error {
	if !m.Program.Lengths.RecomputeOnDecode() {
		return nil
	}
	for b := range pos {
		if err := m.refresh(ctx, slots[b], pos[b], pos[b]+1); err != nil {
			return err
		}
	}
	return nil
}
