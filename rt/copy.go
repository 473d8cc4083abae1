package rt

import (
	"context"
	"fmt"
	"slices"

	"github.com/archc/archc/formats/abi"
	"github.com/archc/archc/formats/tensor"
)

// Sequences that share a prompt (a request's n > 1 choices) prefill it
// once: the runtime copies the prefilled slot's state into the others
// with the module's copy entry points (abi.CopyCacheName,
// abi.CopyStateName; package lower's copy.go), block by block for the KV
// cache, whole for windows and recurrent states. A copied slot then holds
// exactly what prefilling the prompt there would have written, and is
// tracked as such (the slot table, slots.go).

// CanCopy reports whether the module can copy one slot's state into
// another (CopySlot): it has more than one slot and exports the copy
// entry points its state needs.
func (m *Model) CanCopy() bool {
	if m.worker == nil || m.Program.Slots < 2 {
		return false
	}
	fns := m.worker.Functions()
	kv := slices.Contains(fns, abi.CopyCacheName(abi.CopyChunk(m.Program.PrefillBuckets)))
	st := slices.Contains(fns, abi.CopyStateName)
	return (kv || st) && (st || !m.Program.FixedState())
}

// CopySlot gives each slot of dsts the state slot src holds after its
// first n tokens: their keys and values (positions 0..n-1) and, with a
// fixed state (Program.FixedState()), the window and recurrent state after
// position n-1. Afterwards each dst holds those n tokens as src does (for
// prefix reuse, the length policy and continuing at position n); what a
// dst held before is gone. Errors: a module without the copy entry points
// (CanCopy), slots out of range, repeated or equal to src, n outside
// [1, MaxLen], a src that does not hold the state after n tokens, or a
// worker failure (after which the dsts' contents are unknown).
func (m *Model) CopySlot(ctx context.Context, src int, dsts []int, n int) error {
	if !m.CanCopy() {
		return fmt.Errorf("copy: the module has no entry points to copy a slot's state (compile it with more than one slot)")
	}
	if err := m.checkSlots(append([]int{src}, dsts...)); err != nil {
		return err
	}
	if n < 1 || n > m.MaxLen() {
		return fmt.Errorf("copy: %d tokens, want 1 to %d", n, m.MaxLen())
	}
	if !m.slots.holds(src, n) {
		h := m.slots.get(src).state
		return fmt.Errorf("copy: slot %d holds the model's recurrent state for position %d and %d, not %d", src, h[0], h[1], n)
	}
	fns := m.worker.Functions()
	c := abi.CopyChunk(m.Program.PrefillBuckets)
	kvFn := abi.CopyCacheName(c)
	hasKV := slices.Contains(fns, kvFn)
	for _, dst := range dsts {
		s, d := tensor.ScalarI32(int32(src)), tensor.ScalarI32(int32(dst))
		for start := 0; hasKV && start < n; start += int(c) {
			if _, err := m.worker.Call(ctx, kvFn, []tensor.Tensor{s, d, tensor.ScalarI32(int32(start))}); err != nil {
				return err
			}
		}
		if m.Program.FixedState() {
			if _, err := m.worker.Call(ctx, abi.CopyStateName, []tensor.Tensor{s, d}); err != nil {
				return err
			}
		}
		m.slots.copy(src, dst, n)
		if m.copies == nil {
			m.copies = map[int]int{}
		}
		m.copies[dst]++
	}
	return nil
}
