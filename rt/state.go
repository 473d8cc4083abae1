package rt

import "fmt"

// A module with position-independent state (Program.FixedState(): a conv
// window, a recurrent SSM state) keeps, per slot, two buffers of it chosen
// by position parity (package lower's state.go): buffer p mod 2 holds the
// state after the slot's first p tokens, a call at start..start+n-1 reads
// buffer start mod 2 and writes buffer (start+n) mod 2. The Model records
// which position each buffer holds, for every call it makes (a padded
// decode row included: it writes the other buffer, exactly as the module
// does), so that
//   - a call that would continue a state the slot does not hold (start > 0
//     not in either buffer) is an error, never a wrong answer;
//   - ReusablePrefix offers only positions whose state is held (a prompt
//     that extends a finished turn's tokens; the turn's second-to-last
//     position too), and the engine recomputes any other prompt.
// A call at position 0 reads zeros and needs nothing held. Nothing is
// tracked for a module without such state (its KV cache serves every
// prefix). The positions are all the Model knows: a padded row at p
// leaves a state "for p+1" computed from its pad token, which only its
// caller knows is not the sequence's; the engine never asks past the
// tokens it fed a slot, so it never takes one.

// stateHeld is one slot's pair of buffers: the position whose state each
// holds, -1 for none.
type stateHeld [2]int

// held returns slot's buffers (none held for a slot never used).
func (m *Model) held(slot int) stateHeld {
	if h, ok := m.states[slot]; ok {
		return h
	}
	return stateHeld{-1, -1}
}

// holdsState reports whether slot holds the state after its first p
// tokens (p = 0: the zero state, always).
func (m *Model) holdsState(slot, p int) bool {
	return p == 0 || !m.Program.FixedState() || m.held(slot)[p%2] == p
}

// checkState refuses a call at start in slot that would continue a state
// the slot does not hold.
func (m *Model) checkState(slot, start int) error {
	if m.holdsState(slot, start) {
		return nil
	}
	h := m.held(slot)
	return fmt.Errorf("slot %d holds the model's recurrent state for position %d and %d, not %d: a sequence with a conv window or recurrent state continues only where its slot's tokens end (start it again at position 0)", slot, h[0], h[1], start)
}

// noteState records a call of n tokens at start in slot (after it ran).
// A buffer holding a position past start is forgotten: it belongs to a
// continuation this call replaces (another sequence's, when start is 0 or
// a reused prefix), and its tokens are not the slot's any more. Kept, it
// would serve a later prompt that shares the slot's tokens only up to that
// position with a state computed from other tokens (found by the hybrid
// soak, server/hybrid_test.go).
func (m *Model) noteState(slot, start, n int) {
	if !m.Program.FixedState() {
		return
	}
	if m.states == nil {
		m.states = map[int]stateHeld{}
	}
	h := m.held(slot)
	for i, p := range h {
		if p > start {
			h[i] = -1
		}
	}
	h[(start+n)%2] = start + n
	m.states[slot] = h
}

// heldPrefix returns the longest prefix of at most n tokens whose state
// slot holds: n itself, the other buffer's position if it is below n, or
// 0. Without fixed state, n.
func (m *Model) heldPrefix(slot, n int) int {
	if m.holdsState(slot, n) {
		return n
	}
	best := 0
	for _, p := range m.held(slot) {
		if p <= n && p > best {
			best = p
		}
	}
	return best
}
