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
	m := &Model{Program: &Program{States: abi.StateTable{{Kind: abi.Recurrent}}}}
	if err := m.checkState(0, 5); err == nil || !strings.Contains(err.Error(), "slot 0") || !strings.Contains(err.Error(), "not 5") {
		t.Errorf("continuing an unused slot at 5: %v, want an error naming the slot and the position", err)
	}
	if err := m.checkState(0, 0); err != nil {
		t.Errorf("position 0 needs nothing held: %v", err)
	}
	m.noteState(0, 0, 7) // a prefill chunk of 7 tokens: buffer 1 holds 7
	m.noteState(0, 7, 1) // a decode step: buffer 0 holds 8
	m.noteState(0, 8, 1) // padded row at 8: buffer 1 holds 9 (the garbage of the pad), buffer 0 still 8
	for _, c := range []struct {
		start int
		ok    bool
	}{{8, true}, {9, true}, {7, false}, {3, false}, {0, true}} {
		if err := m.checkState(0, c.start); (err == nil) != c.ok {
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
	plain := &Model{Program: &Program{}}
	if err := plain.checkState(0, 5); err != nil || plain.heldPrefix(0, 5) != 5 {
		t.Errorf("without fixed state every prefix serves: %v, %d", err, plain.heldPrefix(0, 5))
	}
}

// TestStateHeldForgetsReplaced: a sequence that starts again at position 0
// (or continues a shorter reused prefix) replaces the slot's tokens, so a
// buffer still holding a later position of the old tokens must not serve a
// prefix reuse: the new tokens may agree with the old ones up to there and
// the state would still be the old sequence's.
func TestStateHeldForgetsReplaced(t *testing.T) {
	m := &Model{Program: &Program{States: abi.StateTable{{Kind: abi.Recurrent}}}}
	m.noteState(0, 0, 21) // sequence X: buffer 1 holds 21
	m.noteState(0, 21, 1) // buffer 0 holds 22 (X's tokens)
	m.noteState(0, 0, 23) // sequence Y from 0: buffer 1 holds 23; X's 22 is forgotten
	if got := m.heldPrefix(0, 22); got != 0 {
		t.Errorf("after a new sequence of 23 tokens, heldPrefix(0, 22) = %d, want 0 (position 22 was the old sequence's)", got)
	}
	if err := m.checkState(0, 22); err == nil {
		t.Error("continuing at 22 from the old sequence's state was accepted")
	}
	m.noteState(0, 23, 1) // Y's decode: buffer 0 holds 24
	m.noteState(0, 23, 2) // a reuse of Y's first 23 tokens, 2 new ones: buffer 1 holds 25, Y's 24 forgotten
	if got := m.heldPrefix(0, 24); got != 0 {
		t.Errorf("heldPrefix(0, 24) = %d, want 0 (24 was the replaced continuation's)", got)
	}
	if got := m.heldPrefix(0, 25); got != 25 {
		t.Errorf("heldPrefix(0, 25) = %d, want 25", got)
	}
}
