package rt

import (
	"strings"
	"testing"
)

// TestStateHeld follows the parity buffers through a prefill chunk, decode
// steps and a padded row, and checks what may continue and what a prefix
// reuse may take.
func TestStateHeld(t *testing.T) {
	m := &Model{Program: &Program{FixedState: true}}
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
