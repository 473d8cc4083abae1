package rt

import (
	"context"
	"fmt"
	"slices"

	"github.com/archc/archc/formats/abi"
	"github.com/archc/archc/formats/tensor"
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
//   - what a copy gives another slot (copy);
//   - which positions the saved buffers of a fixed state hold (a module
//     compiled with lower's Options.StateSnapshots: abi.StateGroup.Saved):
//     the Model saves the state at the end of each prompt there, and a
//     later call at a saved position first restores it into the parity
//     buffer of that position (restore), so a chat's next turn continues
//     after the previous prompt even where the template re-rendered the
//     answer in between.
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
	// saved is the number of saved buffers of the fixed state per slot.
	saved int
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
	// saved: the position whose fixed state each saved buffer holds, -1
	// for none (nil: none held); next is the buffer the next save takes
	// (they are reused in turn).
	saved []int
	next  int
	// ropeDelta: with multimodal RoPE (Program.MRoPE), the offset of the
	// RoPE position of every token after the slot's last prompt from its
	// cache position (Encoded.RoPEDelta; mrope.go); 0 otherwise.
	ropeDelta int64
}

// newSlotTable is the empty table for prog: no slot holds anything.
func newSlotTable(prog *Program) slotTable {
	t := slotTable{lengths: prog.Lengths, fixed: prog.FixedState()}
	for _, g := range prog.States {
		if g.Kind.Fixed() {
			t.saved = int(g.Saved)
		}
	}
	return t
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
		for i, p := range h.saved {
			if p > start {
				h.saved[i] = -1
			}
		}
		h.state[(start+len(tokens))%2] = start + len(tokens)
	}
	t.put(slot, h)
}

// ropeDelta is slot's M-RoPE delta (slotHeld.ropeDelta).
func (t *slotTable) ropeDelta(slot int) int64 { return t.get(slot).ropeDelta }

// setRoPEDelta notes slot's M-RoPE delta after a prompt.
func (t *slotTable) setRoPEDelta(slot int, d int64) {
	h := t.get(slot)
	h.ropeDelta = d
	t.put(slot, h)
}

// savedAt returns the saved buffer of slot holding the fixed state after
// its first p tokens, or -1.
func (t *slotTable) savedAt(slot, p int) int {
	return slices.Index(t.get(slot).saved, p)
}

// save returns the saved buffer (0-based among the saved ones) that the
// state of slot after p tokens, held in a parity buffer, should be saved
// to, and whether to save at all: not without saved buffers, for p = 0 or
// a position not held, or one already saved.
func (t *slotTable) save(slot, p int) (int, bool) {
	if t.saved == 0 || p == 0 || !t.holds(slot, p) || t.savedAt(slot, p) >= 0 {
		return 0, false
	}
	return t.get(slot).next % t.saved, true
}

// savedTo notes that saved buffer k of slot now holds the state after p
// tokens.
func (t *slotTable) savedTo(slot, k, p int) {
	h := t.get(slot)
	for len(h.saved) < t.saved {
		h.saved = append(h.saved, -1)
	}
	h.saved[k], h.next = p, k+1
	t.put(slot, h)
}

// restored notes that the parity buffer of position p of slot now holds
// the state after p tokens (copied from a saved buffer).
func (t *slotTable) restored(slot, p int) {
	h := t.get(slot)
	h.state[p%2] = p
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
// state slot holds, in a parity buffer or a saved one: n itself, another
// buffer's position if it is below n, or 0. Without a fixed state, n.
func (t *slotTable) heldPrefix(slot, n int) int {
	if t.holds(slot, n) || t.savedAt(slot, n) >= 0 {
		return n
	}
	best := 0
	h := t.get(slot)
	for _, p := range append(h.state[:], h.saved...) {
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
// (CopySlot): the tokens and tables up to n, and the fixed-state parity
// buffers whose positions are at most n (copy_state copies no saved
// buffer: dst's hold nothing now).
func (t *slotTable) copy(src, dst, n int) {
	s := t.get(src)
	d := &slotHeld{state: [2]int{-1, -1}, ropeDelta: s.ropeDelta}
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

// held makes slot hold the fixed state after its first start tokens in a
// parity buffer, where only a saved buffer holds it (restoring it with
// abi.SnapshotStateName), and then refuses a call at start the slot
// cannot continue (slotTable.check). Errors: that refusal, or a worker
// failure.
func (m *Model) held(ctx context.Context, slot, start int) error {
	if start > 0 && !m.slots.holds(slot, start) {
		if k := m.slots.savedAt(slot, start); k >= 0 {
			args := []tensor.Tensor{tensor.ScalarI32(int32(slot)), tensor.ScalarI32(int32(2 + k)), tensor.ScalarI32(int32(start % 2))}
			if _, err := m.worker.Call(ctx, abi.SnapshotStateName, args); err != nil {
				return err
			}
			m.slots.restored(slot, start)
		}
	}
	return m.slots.check(slot, start)
}

// saveState saves the fixed state of slot after its first p tokens into
// one of its saved buffers (the next in turn), where the module has them
// and p is not saved yet (slotTable.save). Errors: a worker failure.
func (m *Model) saveState(ctx context.Context, slot, p int) error {
	k, ok := m.slots.save(slot, p)
	if !ok {
		return nil
	}
	args := []tensor.Tensor{tensor.ScalarI32(int32(slot)), tensor.ScalarI32(int32(p % 2)), tensor.ScalarI32(int32(2 + k))}
	if _, err := m.worker.Call(ctx, abi.SnapshotStateName, args); err != nil {
		return err
	}
	m.slots.savedTo(slot, k, p)
	return nil
}
