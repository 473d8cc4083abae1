package rt

import (
	"strings"
	"testing"

	"github.com/archc/archc/formats/abi"
)

// TestBlockCut: a prefill chunk that would end inside a run of an
// encoder's placeholders whose tokens attend to each other (Blocks) ends
// before the run; a run from the chunk's first token longer than the chunk
// is refused; without Blocks, or where the chunk ends between runs or at
// the prompt's end, the chunk is kept.
func TestBlockCut(t *testing.T) {
	const ph = 9
	blocks := &Model{Program: &Program{Encoders: []abi.Encoder{{Name: "image", Placeholder: ph, Blocks: true}}}}
	plain := &Model{Program: &Program{Encoders: []abi.Encoder{{Name: "image", Placeholder: ph}}}}
	toks := []int32{1, 2, 3, ph, ph, ph, ph, 4, 5}
	for _, c := range []struct {
		m       *Model
		tokens  []int32
		n, want int
	}{
		{blocks, toks, 5, 3},     // cut inside the run 3..6: the chunk ends at 3
		{blocks, toks, 7, 7},     // the run ends with the chunk
		{blocks, toks, 3, 3},     // the chunk ends before the run
		{blocks, toks, 9, 9},     // the whole prompt
		{blocks, toks[3:], 6, 6}, // the run first, then text
		{plain, toks, 5, 5},      // no blocks: any cut
		{blocks, []int32{ph, ph}, 2, 2},
	} {
		got, err := c.m.blockCut(c.tokens, 0, c.n)
		if err != nil || got != c.want {
			t.Errorf("blockCut(%v, n=%d) = %d, %v; want %d", c.tokens, c.n, got, err, c.want)
		}
	}
	if _, err := blocks.blockCut(toks[3:], 3, 2); err == nil || !strings.Contains(err.Error(), "4 image tokens") {
		t.Errorf("a run of 4 placeholders in a chunk of 2: err %v, want a refusal naming 4 image tokens", err)
	}
}
