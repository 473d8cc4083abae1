package rt

import (
	"testing"

	"github.com/archc/archc/formats/abi"
)

// TestReusablePrefix: the Model answers the engine's question from what
// each slot holds and the Program's length policy.
func TestReusablePrefix(t *testing.T) {
	prog := &Program{Lengths: abi.LengthPolicy{Threshold: 4}}
	m := &Model{Program: prog, slots: newSlotTable(prog)}
	m.slots.wrote(0, 0, []int32{1, 2, 3, 4, 5, 6}, 6) // long-table keys
	m.slots.wrote(1, 0, []int32{1, 2, 3}, 3)          // short-table keys
	for _, c := range []struct{ slot, n, L, want int }{
		{0, 3, 6, 3}, {0, 3, 3, 0}, {1, 3, 3, 3}, {1, 3, 8, 0}, {2, 3, 8, 3}, {0, 0, 3, 0},
	} {
		if got := m.ReusablePrefix(c.slot, c.n, c.L); got != c.want {
			t.Errorf("ReusablePrefix(slot %d, n %d, L %d) = %d, want %d", c.slot, c.n, c.L, got, c.want)
		}
	}
	plain := &Model{Program: &Program{}, slots: newSlotTable(&Program{})}
	plain.slots.wrote(0, 0, []int32{1, 2}, 2)
	if got := plain.ReusablePrefix(0, 2, 100); got != 2 || plain.slots.slots != nil {
		t.Errorf("no length policy: ReusablePrefix = %d, slots %v; want 2 and nothing tracked", got, plain.slots.slots)
	}
}
