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
// this file only asks it. The slot table (slots.go) records, per slot,
// the tokens its cache holds and the table each was computed with
// (LengthPolicy.Table), and the Model recomputes a prefix the policy says
// does not serve (Reusable) before it is used:
//   - a prefill continuing at start > 0 recomputes positions 0..start-1
//     when any of them was computed with another table than the new
//     prompt's length gives (for LongRoPE: short vs long);
//   - with LengthPolicy.RecomputeOnDecode (LongRoPE, rope recompute: true),
//     a decode step that takes the sequence past the threshold first
//     recomputes the earlier positions with the long table, as HF's Phi-3
//     generate does.
// The engine asks ReusablePrefix, the same question, when it picks a slot.
// Nothing is tracked for a graph without a length-dependent RoPE.

// ReusablePrefix returns how many of the first n positions of slot's
// cache serve a sequence of length L without being recomputed (the slot
// table's answer, slots.go): with a fixed state (Program.FixedState()) only
// a prefix whose state the slot holds serves, n or the longest such below
// it; and the Program's length policy must accept the tables its keys were
// computed with (or not track tables, or they were written by calls this
// Model did not see); else 0. The engine asks it to count the prompt
// tokens a slot's cache really saves.
func (m *Model) ReusablePrefix(slot, n, L int) int {
	return m.slots.reusable(slot, n, L)
}

// refresh recomputes positions 0..start-1 of slot with the table of a
// sequence of length L when the length policy says they do not serve it
// (ReusablePrefix).
func (m *Model) refresh(ctx context.Context, slot, start, L int) error {
	if start == 0 {
		return nil
	}
	if err := m.held(ctx, slot, start); err != nil { // a fixed state is not recomputed: refused
		return err
	}
	if m.ReusablePrefix(slot, start, L) == start {
		return nil
	}
	prefix := m.slots.prefix(slot, start)
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
