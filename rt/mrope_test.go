package rt

import (
	"slices"
	"testing"
)

// TestMRoPEArguments follows a prompt with images through the runtime's
// M-RoPE bookkeeping without a module: a prefill chunk takes the prompt's
// explicit positions (the cursor advancing over chunks), a prompt's end
// sets its slot's delta, decode and verify put every later token at its
// cache position + that delta, a slot copy carries it, and a prompt
// without positions runs at its cache positions with delta 0.
func TestMRoPEArguments(t *testing.T) {
	m := &Model{Program: &Program{MRoPE: true}}
	m.slots = newSlotTable(m.Program)
	// HF get_rope_index of [t t s I I I I e t] with a 1x2x2 grid (merged):
	// the image tokens (t, h, w) from 3, the text after it from 3 + 2.
	enc := &Encoded{Positions: [3][]int32{
		{0, 1, 2, 3, 3, 3, 3, 5, 6},
		{0, 1, 2, 3, 3, 4, 4, 5, 6},
		{0, 1, 2, 3, 4, 3, 4, 5, 6},
	}, RoPEDelta: -2}
	rows := &placed{enc: enc}
	if err := m.checkPositions(enc, 9); err != nil {
		t.Fatal(err)
	}
	if err := m.checkPositions(enc, 8); err == nil {
		t.Error("8 tokens with 9 positions per axis were accepted")
	}
	// Two chunks of 5 and 4 tokens, in buckets of 8.
	first, err := m.ropeArg(0, 8, 0, rows.positions(5))
	if err != nil {
		t.Fatal(err)
	}
	want := []int32{0, 1, 2, 3, 3, 5, 6, 7, 0, 1, 2, 3, 3, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7}
	if got, _ := first.I32(); !slices.Equal(got, want) {
		t.Errorf("first chunk's rope_positions %v, want %v (padding at its cache positions)", got, want)
	}
	second, _ := m.ropeArg(5, 8, 0, rows.positions(4))
	want = []int32{3, 3, 5, 6, 9, 10, 11, 12, 4, 4, 5, 6, 9, 10, 11, 12, 3, 4, 5, 6, 9, 10, 11, 12}
	if got, _ := second.I32(); !slices.Equal(got, want) {
		t.Errorf("second chunk's rope_positions %v, want %v", got, want)
	}
	m.endPrompt(3, 5, 9, rows) // not the prompt's end: no delta yet
	if d := m.slots.ropeDelta(3); d != 0 {
		t.Errorf("delta %d before the prompt's end", d)
	}
	m.endPrompt(3, 9, 9, rows)
	if d := m.slots.ropeDelta(3); d != -2 {
		t.Errorf("delta %d after the prompt, want -2", d)
	}
	dec, _ := m.ropeDecodeArg([]int{9, 4}, []int{3, 1})
	if got, _ := dec.I32(); !slices.Equal(got, []int32{7, 4, 7, 4, 7, 4}) {
		t.Errorf("decode rope_positions %v, want position + delta per slot", got)
	}
	m.slots.copy(3, 2, 9)
	ver, _ := m.ropeArg(10, 2, m.slots.ropeDelta(2), [3][]int32{})
	if got, _ := ver.I32(); !slices.Equal(got, []int32{8, 9, 8, 9, 8, 9}) {
		t.Errorf("verify on the copied slot: %v, want positions + the copied delta", got)
	}
	// The rest of the prompt after a reused prefix of 4 tokens.
	from := m.EncodedFrom(enc, []int32{1, 1, 1, 7, 7, 7, 7, 1, 1}, 4)
	if !slices.Equal(from.Positions[2], enc.Positions[2][4:]) || from.RoPEDelta != -2 {
		t.Errorf("EncodedFrom: positions %v delta %d", from.Positions, from.RoPEDelta)
	}
	// A prompt without images resets the slot's delta at its end.
	m.endPrompt(3, 6, 6, &placed{})
	if d := m.slots.ropeDelta(3); d != 0 {
		t.Errorf("delta %d after a text-only prompt, want 0", d)
	}
	// A module without M-RoPE takes no such argument and refuses positions.
	plain := &Model{Program: &Program{}}
	plain.slots = newSlotTable(plain.Program)
	if a, _ := plain.ropeArg(0, 8, 0, [3][]int32{}); a != nil {
		t.Error("a plain-RoPE module got rope_positions")
	}
	if err := plain.checkPositions(enc, 9); err == nil {
		t.Error("M-RoPE positions for a plain-RoPE module were accepted")
	}
}
