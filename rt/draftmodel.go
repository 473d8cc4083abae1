package rt

import (
	"context"
	"fmt"
)

// ModelDrafter drafts with a second, smaller model of the same vocabulary
// (speculative decoding's draft model): it runs the sequence through the
// draft model and proposes that model's greedy continuation. The draft
// model keeps each sequence in the slot the target holds it in (it needs
// as many slots) between drafts and runs only what changed: the tokens
// accepted since, after the longest prefix its cache still serves
// (Model.ReusablePrefix: all of it for a KV cache; a recurrent draft
// model's state serves only the exact position it holds). A slot's next
// sequence is recomputed from where the two sequences part.
type ModelDrafter struct {
	m    *Model
	held map[int][]int32 // per slot, the tokens in m's slot, in order
}

// NewModelDrafter returns a drafter running draft for target. Errors: the
// two models' vocabularies (logits widths) differ, naming both.
func NewModelDrafter(draft, target *Model) (*ModelDrafter, error) {
	if draft.Vocab != target.Vocab {
		return nil, fmt.Errorf("draft model %s has a vocabulary of %d tokens, the target %s has %d: a draft model needs the target's vocabulary (the same tokenizer)", draft.Program.Family, draft.Vocab, target.Program.Family, target.Vocab)
	}
	if draft.Program.Slots < target.Program.Slots {
		return nil, fmt.Errorf("draft model %s has %d KV-cache slots, the target %d: a draft model needs one per target slot", draft.Program.Family, draft.Program.Slots, target.Program.Slots)
	}
	return &ModelDrafter{m: draft, held: map[int][]int32{}}, nil
}

// Name is "draft".
func (*ModelDrafter) Name() string { return "draft" }

// Draft runs seq through the draft model and returns its greedy
// continuation, at most max tokens (fewer where its cache ends). A
// failure of the draft model (its worker died, ctx ended) drafts nothing:
// the target then decodes plainly, with the same output.
func (d *ModelDrafter) Draft(ctx context.Context, slot int, seq []int32, max int) []int32 {
	max = min(max, d.m.MaxLen()-len(seq))
	if max <= 0 || len(seq) == 0 {
		return nil
	}
	out, err := d.draft(ctx, slot, seq, max)
	if err != nil {
		delete(d.held, slot) // the slot's contents are unknown
		return nil
	}
	return out
}

func (d *ModelDrafter) draft(ctx context.Context, slot int, seq []int32, max int) ([]int32, error) {
	held := d.held[slot]
	common := 0
	for common < len(held) && common < len(seq)-1 && held[common] == seq[common] {
		common++ // at least the last token runs again: its logits choose the first draft token
	}
	from := d.m.ReusablePrefix(slot, common, len(seq))
	first, err := d.catchUp(ctx, slot, seq, from)
	if err != nil {
		return nil, err
	}
	held = append(held[:0], seq...)
	out := []int32{first}
	for len(out) < max {
		next, err := d.m.DecodeGreedy(ctx, out[len(out)-1:], []int{len(held)}, []int{slot})
		if err != nil {
			return nil, err
		}
		held = append(held, out[len(out)-1])
		out = append(out, next[0])
	}
	d.held[slot] = held
	return out, nil
}

// decodeCatchUp is the most tokens a draft model runs one decode step at a
// time to catch up with its sequence: a prefill call computes its whole
// bucket (16 tokens and up), padding included, and the usual catch-up is
// the one to few tokens the target accepted since the last draft.
const decodeCatchUp = 4

// catchUp runs seq[from:] through the draft model in slot and returns its
// greedy choice after the last of them: decode steps for a few tokens,
// else a prefill.
func (d *ModelDrafter) catchUp(ctx context.Context, slot int, seq []int32, from int) (int32, error) {
	if len(seq)-from > decodeCatchUp {
		logits, err := d.m.PrefillSlot(ctx, slot, seq[from:], from)
		if err != nil {
			return 0, err
		}
		return Argmax(logits), nil
	}
	var next []int32
	for pos := from; pos < len(seq); pos++ {
		var err error
		if next, err = d.m.DecodeGreedy(ctx, seq[pos:pos+1], []int{pos}, []int{slot}); err != nil {
			return 0, err
		}
	}
	return next[0], nil
}
