package rt

import (
	"fmt"
	"slices"

	"github.com/archc/archc/formats/abi"
)

// The slot table is the runtime's one record of what each slot of the
// module holds, kept beside the module's state table (Program.States: a KV
// cache, windows, recurrent states). The module itself keeps no account of
// positions; every call the Model makes writes some positions of one or
// more slots, and the table notes them (wrote), so that the Model answers,
// per slot and for every kind of state at once:
//   - may a call continue at position start (check): a KV cache serves
//     any start (its rows are addressed by position), a fixed state
//     (conv windows, recurrent states) only a position one of its two
//     parity buffers holds (package lower's state.go: buffer p mod 2 holds
//     the state after the slot's first p tokens; a call at start..start+n-1
//     reads buffer start mod 2 and writes buffer (start+n) mod 2; a padded
//     decode row writes the other buffer, exactly as the module does);
//   - how much of a slot serves another sequence (reusable): positions
//     whose fixed state is held, and whose keys a length-dependent RoPE
//     computed with the table the new sequence needs (the Program's
//     abi.LengthPolicy: lengths.go);
//   - what a copy gives another slot (copy).
//
// A call at position 0 reads zeros and needs nothing held. The positions
// are all the table knows: a padded row at p leaves a state "for p+1"
// computed from its pad token, which only its caller knows is not the
// sequence's; the engine never asks past the tokens it fed a slot.
type slotTable struct {
	// lengths is the Program's length policy: when it tracks tables, the
	// table keeps each slot's tokens and the table each was computed with.
	lengths abi.LengthPolicy
	// fixed: the module keeps a fixed state in parity buffers.
	fixed bool
	slots map[int]*slotHeld
}

// slotHeld is what one slot holds.
type slotHeld struct {
	// tokens and keys: the token at each position and the length policy's
	// table it was computed with (LengthPolicy.Table); -1 for unknown.
	// Kept only for a Program whose length policy tracks tables.
	tokens []int32
	keys   []int64
	// state: the position whose fixed state each parity buffer holds, -1
	// for none. Used only with a fixed state.
	state [2]int
}

// newSlotTable is the empty table for prog: no slot holds anything.
func newSlotTable(prog *Program) slotTable {
	return slotTable{lengths: prog.Lengths, fixed: prog.FixedState()}
}

// get returns slot's record (a fresh one, holding nothing, for a slot
// never written; not stored).
func (t *slotTable) get(slot int) *slotHeld {
	if h := t.slots[slot]; h != nil {
		return h
	}
	return &slotHeld{state: [2]int{-1, -1}}
}

// put stores slot's record.
func (t *slotTable) put(slot int, h *slotHeld) {
	if t.slots == nil {
		t.slots = map[int]*slotHeld{}
	}
	t.slots[slot] = h
}

// wrote notes a call that wrote tokens at positions start.. of slot (after
// it ran), computed for a sequence of length L. A fixed-state buffer
// holding a position past start is forgotten: it belongs to a continuation
// this call replaces (another sequence's, when start is 0 or a reused
// prefix), whose tokens are not the slot's any more; kept, it would serve
// a later prompt that shares the slot's tokens only up to that position
// with a state computed from other tokens (found by the hybrid soak,
// server/hybrid_test.go).
func (t *slotTable) wrote(slot, start int, tokens []int32, L int) {
	if !t.lengths.Tracked() && !t.fixed {
		return
	}
	h := t.get(slot)
	if t.lengths.Tracked() {
		for len(h.tokens) < start { // positions never written through this Model
			h.tokens, h.keys = append(h.tokens, -1), append(h.keys, -1)
		}
		h.tokens, h.keys = h.tokens[:start], h.keys[:start]
		k := t.lengths.Table(L)
		for _, tok := range tokens {
			h.tokens, h.keys = append(h.tokens, tok), append(h.keys, k)
		}
	}
	if t.fixed {
		for i, p := range h.state {
			if p > start {
				h.state[i] = -1
			}
		}
		h.state[(start+len(tokens))%2] = start + len(tokens)
	}
	t.put(slot, h)
}

// holds reports whether slot holds the fixed state after its first p
// tokens (p = 0: the zero state, always; without a fixed state, always).
func (t *slotTable) holds(slot, p int) bool {
	return p == 0 || !t.fixed || t.get(slot).state[p%2] == p
}

// check refuses a call at start in slot that would continue a fixed state
// the slot does not hold.
func (t *slotTable) check(slot, start int) error {
	if t.holds(slot, start) {
		return nil
	}
	h := t.get(slot).state
	return fmt.Errorf("slot %d holds the model's recurrent state for position %d and %d, not %d: a sequence with a conv window or recurrent state continues only where its slot's tokens end (start it again at position 0)", slot, h[0], h[1], start)
}

// heldPrefix returns the longest prefix of at most n tokens whose fixed
// state slot holds: n itself, the other buffer's position if it is below
// n, or 0. Without a fixed state, n.
func (t *slotTable) heldPrefix(slot, n int) int {
	if t.holds(slot, n) {
		return n
	}
	best := 0
	for _, p := range t.get(slot).state {
		if p <= n && p > best {
			best = p
		}
	}
	return best
}

// reusable returns how many of the first n positions of slot serve a
// sequence of length L without being recomputed: the longest prefix of at
// most n whose fixed state is held (heldPrefix), if the length policy
// accepts the tables its keys were computed with (or does not track
// tables, or they were written by calls this Model did not see), else 0.
func (t *slotTable) reusable(slot, n, L int) int {
	n = t.heldPrefix(slot, n)
	if n <= 0 {
		return 0
	}
	h := t.slots[slot]
	if h == nil || len(h.keys) < n || t.lengths.Reusable(h.keys[:n], L) {
		return n
	}
	return 0
}

// prefix returns the first n tokens slot holds, as far as the table knows
// them (-1 for a position written by calls it did not see).
func (t *slotTable) prefix(slot, n int) []int32 {
	return slices.Clone(t.get(slot).tokens[:n])
}

// copy notes that dst now holds what src holds for its first n tokens
// (CopySlot): the tokens and tables up to n, and the fixed-state buffers
// whose positions are at most n.
func (t *slotTable) copy(src, dst, n int) {
	s := t.get(src)
	d := &slotHeld{state: [2]int{-1, -1}}
	k := min(n, len(s.tokens))
	d.tokens, d.keys = slices.Clone(s.tokens[:k]), slices.Clone(s.keys[:k])
	if t.fixed {
		for i, p := range s.state {
			if p <= n {
				d.state[i] = p
			}
		}
	}
	t.put(dst, d)
}
