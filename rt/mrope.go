package rt

import (
	"fmt"

	"github.com/archc/archc/formats/tensor"
)

// Multimodal RoPE (Program.MRoPE: Qwen2-VL's M-RoPE). The module turns
// each token's rotary frequencies by three position axes (temporal,
// height, width) that the runtime passes in every call that runs tokens
// (rope_positions [3, batch, seq] i32, package lower's interface). A
// prompt's positions come with its images (Encoded.Positions: HF's
// get_rope_index over the prompt's ids and image grids): an image's tokens
// take their grid coordinates from the position after the text before
// them, and the text after an image continues from the image's largest
// coordinate + 1, not from the image's token count. Every later token, in
// decode, verify and mtp calls, sits at its cache position plus the
// sequence's delta on all three axes (HF's rope_deltas: the largest
// position + 1 − the prompt's length), which the slot table keeps per slot
// (slotHeld.ropeDelta): set at the end of each prompt, copied with the
// slot. A text-only prompt's positions are its cache positions (delta 0),
// so a text-only conversation runs as with plain RoPE.

// ropeArg is the rope_positions argument [3, 1, bucket] of a call that runs
// tokens at cache positions start..start+bucket−1: explicit[k][i] for the
// first len(explicit[k]) tokens where given (a prompt's positions with
// images), else position + d on every axis (a prompt without images: 0;
// generated tokens in verify and mtp calls: the slot's delta; padding:
// either). Nil for a module without M-RoPE.
func (m *Model) ropeArg(start, bucket int, d int64, explicit [3][]int32) (*tensor.Tensor, error) {
	if !m.Program.MRoPE {
		return nil, nil
	}
	buf := make([]int32, 3*bucket)
	for k := range 3 {
		for i := range bucket {
			v := int64(start+i) + d
			if i < len(explicit[k]) {
				v = int64(explicit[k][i])
			}
			buf[k*bucket+i] = int32(v)
		}
	}
	t, err := tensor.FromI32([]int64{3, 1, int64(bucket)}, buf)
	return &t, err
}

// ropeDecodeArg is decode's rope_positions [3, B, 1]: each sequence's
// position + its slot's delta on every axis. Nil without M-RoPE.
func (m *Model) ropeDecodeArg(pos, slots []int) (*tensor.Tensor, error) {
	if !m.Program.MRoPE {
		return nil, nil
	}
	B := len(pos)
	buf := make([]int32, 3*B)
	for k := range 3 {
		for b := range B {
			buf[k*B+b] = int32(int64(pos[b]) + m.slots.ropeDelta(slots[b]))
		}
	}
	t, err := tensor.FromI32([]int64{3, int64(B), 1}, buf)
	return &t, err
}

// checkPositions verifies that a prompt's M-RoPE positions (Encoded)
// cover its n tokens on all three axes, and that the module reads them.
func (m *Model) checkPositions(enc *Encoded, n int) error {
	if enc == nil || enc.Positions[0] == nil {
		return nil
	}
	if !m.Program.MRoPE {
		return fmt.Errorf("prefill: M-RoPE positions for a model whose RoPE is not multimodal (family %s)", m.Program.Family)
	}
	for k, p := range enc.Positions {
		if len(p) != n {
			return fmt.Errorf("prefill: %d M-RoPE positions on axis %d for %d tokens", len(p), k, n)
		}
	}
	return nil
}

// endPrompt notes, once a prompt's tokens up to end are in slot (end ==
// total: its last chunk), the slot's M-RoPE delta for the tokens after it:
// the prompt's (Encoded.RoPEDelta), 0 for a prompt without positions.
func (m *Model) endPrompt(slot, end, total int, rows *placed) {
	if !m.Program.MRoPE || end != total {
		return
	}
	var d int64
	if rows != nil && rows.enc != nil && rows.enc.Positions[0] != nil {
		d = rows.enc.RoPEDelta
	}
	m.slots.setRoPEDelta(slot, d)
}
