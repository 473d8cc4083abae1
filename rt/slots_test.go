package rt

import (
	"strings"
	"testing"

	"github.com/archc/archc/formats/abi"
)

// TestStateHeld follows the parity buffers through a prefill chunk, decode
// steps and a padded row, and checks what may continue and what a prefix
// reuse may take.
func TestStateHeld(t *testing.T) {
	m := newSlotTable(&Program{States: abi.StateTable{{Kind: abi.Recurrent}}})
	if err := m.check(0, 5); err == nil || !strings.Contains(err.Error(), "slot 0") || !strings.Contains(err.Error(), "not 5") {
		t.Errorf("continuing an unused slot at 5: %v, want an error naming the slot and the position", err)
	}
	if err := m.check(0, 0); err != nil {
		t.Errorf("position 0 needs nothing held: %v", err)
	}
	m.wrote(0, 0, make([]int32, 7), 0) // a prefill chunk of 7 tokens: buffer 1 holds 7
	m.wrote(0, 7, make([]int32, 1), 0) // a decode step: buffer 0 holds 8
	m.wrote(0, 8, make([]int32, 1), 0) // padded row at 8: buffer 1 holds 9 (the garbage of the pad), buffer 0 still 8
	for _, c := range []struct {
		start int
		ok    bool
	}{{8, true}, {9, true}, {7, false}, {3, false}, {0, true}} {
		if err := m.check(0, c.start); (err == nil) != c.ok {
			t.Errorf("continue at %d: %v, want ok %v", c.start, err, c.ok)
		}
	}
	for n, want := range map[int]int{8: 8, 7: 0, 0: 0} {
		if got := m.heldPrefix(0, n); got != want {
			t.Errorf("heldPrefix(0, %d) = %d, want %d", n, got, want)
		}
	}
	if got := m.heldPrefix(1, 4); got != 0 {
		t.Errorf("an unused slot serves %d tokens, want 0", got)
	}
	plain := newSlotTable(&Program{})
	if err := plain.check(0, 5); err != nil || plain.heldPrefix(0, 5) != 5 {
		t.Errorf("without fixed state every prefix serves: %v, %d", err, plain.heldPrefix(0, 5))
	}
}

// TestStateHeldForgetsReplaced: a sequence that starts again at position 0
// (or continues a shorter reused prefix) replaces the slot's tokens, so a
// buffer still holding a later position of the old tokens must not serve a
// prefix reuse: the new tokens may agree with the old ones up to there and
// the state would still be the old sequence's.
func TestStateHeldForgetsReplaced(t *testing.T) {
	m := newSlotTable(&Program{States: abi.StateTable{{Kind: abi.Recurrent}}})
	m.wrote(0, 0, make([]int32, 21), 0) // sequence X: buffer 1 holds 21
	m.wrote(0, 21, make([]int32, 1), 0) // buffer 0 holds 22 (X's tokens)
	m.wrote(0, 0, make([]int32, 23), 0) // sequence Y from 0: buffer 1 holds 23; X's 22 is forgotten
	if got := m.heldPrefix(0, 22); got != 0 {
		t.Errorf("after a new sequence of 23 tokens, heldPrefix(0, 22) = %d, want 0 (position 22 was the old sequence's)", got)
	}
	if err := m.check(0, 22); err == nil {
		t.Error("continuing at 22 from the old sequence's state was accepted")
	}
	m.wrote(0, 23, make([]int32, 1), 0) // Y's decode: buffer 0 holds 24
	m.wrote(0, 23, make([]int32, 2), 0) // a reuse of Y's first 23 tokens, 2 new ones: buffer 1 holds 25, Y's 24 forgotten
	if got := m.heldPrefix(0, 24); got != 0 {
		t.Errorf("heldPrefix(0, 24) = %d, want 0 (24 was the replaced continuation's)", got)
	}
	if got := m.heldPrefix(0, 25); got != 25 {
		t.Errorf("heldPrefix(0, 25) = %d, want 25", got)
	}
}

// TestSlotTableCopy: a copy gives dst src's tokens and tables up to n and
// the fixed-state buffers at positions up to n, and replaces what dst held;
// a copy from a slot never written leaves dst holding nothing.
func TestSlotTableCopy(t *testing.T) {
	m := newSlotTable(&Program{States: abi.StateTable{{Kind: abi.Recurrent}}, Lengths: abi.LengthPolicy{Threshold: 4}})
	m.wrote(0, 0, []int32{1, 2, 3, 4, 5, 6}, 6) // buffer 0 holds 6
	m.wrote(0, 6, []int32{7}, 7)                // buffer 1 holds 7
	m.wrote(1, 0, []int32{9, 9, 9}, 3)          // dst's own, replaced by the copy
	m.copy(0, 1, 6)
	if !m.holds(1, 6) || m.holds(1, 7) || m.holds(1, 3) {
		t.Errorf("after copying 6 tokens, dst holds %v, want position 6 only", m.get(1).state)
	}
	if got := m.prefix(1, 6); len(got) != 6 || got[5] != 6 {
		t.Errorf("dst's tokens %v, want src's first 6", got)
	}
	if got := m.reusable(1, 6, 6); got != 6 {
		t.Errorf("dst serves %d of 6 tokens for a 6-token sequence, want 6", got)
	}
	m.copy(5, 1, 4)
	if m.holds(1, 6) || m.heldPrefix(1, 4) != 0 {
		t.Errorf("a copy from an unused slot left dst holding %v", m.get(1).state)
	}
}

// TestStateSaved follows the saved buffers of a fixed state (a module
// with two): the end of a prompt is saved, in turn; a saved position
// serves a prefix reuse after the parity buffers moved on; restoring it
// makes the slot continue there; a write before a saved position forgets
// it, and a copied slot holds no saved state.
func TestStateSaved(t *testing.T) {
	m := newSlotTable(&Program{States: abi.StateTable{{Kind: abi.Recurrent, Saved: 2}}})
	if _, ok := m.save(0, 0); ok {
		t.Error("the zero state at position 0 is saved")
	}
	if _, ok := m.save(0, 5); ok {
		t.Error("position 5 is saved before any buffer holds it")
	}
	m.wrote(0, 0, make([]int32, 10), 10) // turn 1's prompt: 10 tokens
	k, ok := m.save(0, 10)
	if !ok || k != 0 {
		t.Fatalf("save(0, 10) = %d, %v; want buffer 0", k, ok)
	}
	m.savedTo(0, k, 10)
	if _, ok := m.save(0, 10); ok {
		t.Error("position 10 saved twice")
	}
	for p := 10; p < 14; p++ { // turn 1's answer
		m.wrote(0, p, make([]int32, 1), p+1)
	}
	if err := m.check(0, 10); err == nil {
		t.Error("the parity buffers moved past 10, yet a call at 10 may continue without a restore")
	}
	for n, want := range map[int]int{12: 10, 14: 14, 13: 13, 9: 0, 10: 10} {
		if got := m.heldPrefix(0, n); got != want {
			t.Errorf("heldPrefix(0, %d) = %d, want %d", n, got, want)
		}
	}
	if m.savedAt(0, 10) != 0 {
		t.Errorf("savedAt(0, 10) = %d, want 0", m.savedAt(0, 10))
	}
	m.restored(0, 10) // turn 2 shares turn 1's prompt only: restore 10, then prefill from it
	if err := m.check(0, 10); err != nil {
		t.Errorf("after the restore a call at 10 is refused: %v", err)
	}
	m.wrote(0, 10, make([]int32, 6), 16) // turn 2's prompt: 16 tokens
	if k, ok := m.save(0, 16); !ok || k != 1 {
		t.Errorf("save(0, 16) = %d, %v; want the next buffer, 1", k, ok)
	}
	m.savedTo(0, 1, 16)
	if k, _ := m.save(0, 16); k != 0 && m.savedAt(0, 16) != 1 {
		t.Errorf("buffers in turn: %d", k)
	}
	m.wrote(0, 3, make([]int32, 2), 5) // a sequence sharing 3 tokens: 10 and 16 are another sequence's now
	if m.savedAt(0, 10) >= 0 || m.savedAt(0, 16) >= 0 || m.heldPrefix(0, 16) != 5 {
		t.Errorf("after a write at 3 the saved states of 10 and 16 still serve (heldPrefix(0, 16) = %d)", m.heldPrefix(0, 16))
	}
	m.wrote(1, 0, make([]int32, 8), 8)
	m.savedTo(1, 0, 8)
	m.copy(1, 2, 8)
	if m.savedAt(2, 8) >= 0 {
		t.Error("a copied slot holds the source's saved state (copy_state copies the parity buffers only)")
	}
	none := newSlotTable(&Program{States: abi.StateTable{{Kind: abi.Recurrent}}})
	none.wrote(0, 0, make([]int32, 4), 4)
	if _, ok := none.save(0, 4); ok {
		t.Error("a module without saved buffers saves")
	}
}
