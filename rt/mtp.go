package rt

import (
	"context"
	"fmt"

	"github.com/archc/archc/formats/abi"
	"github.com/archc/archc/formats/tensor"
	"github.com/archc/archc/rt/iree"
)

// MTPDrafter drafts with the target model's own multi-token-prediction
// module (DeepSeek-V3's MTP; the module's mtp_K entry points,
// abi.MTPName): the module reads the target's hidden state h_t of each
// position t, which the target's prefill, decode and verify calls keep,
// and the token at t+1, and predicts the token at t+2. For a sequence
// whose last token, at pos, is not yet in the target's cache, the target
// holds h_0..h_{pos-1}: the module at pos-1, given the last token,
// predicts the token after it, the first draft token (depth 1, as
// DeepSeek-V3 trains it). A module that keeps its own output (lower's
// mtp_chain; the .arch binds mtp_hidden) drafts more as vLLM does with one
// MTP layer: run again at pos on the first draft token, its output at
// pos-1 standing for the target's h_pos, and so on.
//
// The module's own layer keeps its KV rows in the target's slot, one per
// position, as a layer of the target does; the drafter records per slot
// the tokens whose rows the slot holds and, at each draft, runs the module
// over the positions past the longest prefix those rows still serve:
// after a verify step, the accepted tokens (rows of rejected drafts are
// past that prefix, never read, and overwritten, as the target's KV rows
// are). A slot's next sequence is recomputed from where the two
// sequences part, and all of it after the engine copied another slot's
// prompt into the slot (CopySlot), whose module rows are then the other
// slot's as they were, or after a Restart.
type MTPDrafter struct {
	m     *Model
	held  map[int][]int32 // per slot: tokens t_0..t_n whose module rows 0..n-1 the slot holds
	stamp map[int][2]int  // per slot: m.copies[slot] and m.restarts when held was recorded
}

// NewMTPDrafter returns the drafter of m's own MTP module. Errors: a
// module compiled without MTP entry points, naming the model.
func NewMTPDrafter(m *Model) (*MTPDrafter, error) {
	if len(m.Program.MTPBuckets) == 0 {
		return nil, fmt.Errorf("model %s (family %s) was compiled without its multi-token-prediction module (lower.Options.MTP)", m.Program.Dir, m.Program.Family)
	}
	return &MTPDrafter{m: m, held: map[int][]int32{}, stamp: map[int][2]int{}}, nil
}

// Name is "mtp".
func (*MTPDrafter) Name() string { return "mtp" }

// Draft returns the module's greedy prediction of the token after seq's
// last, then, for a module that chains, of the tokens after it, at most
// max in all; or none (max 0, a one-token sequence, no bucket that fits
// before the cache's end, a worker failure: a draft changes speed, never
// output).
func (d *MTPDrafter) Draft(ctx context.Context, slot int, seq []int32, max int) []int32 {
	pos := len(seq) - 1
	if max <= 0 || pos < 1 {
		return nil
	}
	held := d.held[slot]
	stamp := [2]int{d.m.copies[slot], d.m.restarts}
	if d.stamp[slot] != stamp {
		held = nil // another slot's rows were copied in, or the worker restarted empty
	}
	common := 0
	for common < len(held) && common < pos && held[common] == seq[common] {
		common++ // at least position pos-1 runs again: its logits are the draft
	}
	from := common - 1 // rows 0..common-2 read tokens the sequence still has
	if from < 0 {
		from = 0
	}
	delete(d.held, slot) // until the rows are written
	next, err := d.m.MTP(ctx, slot, seq[from+1:pos+1], from)
	if err != nil {
		return nil
	}
	d.held[slot], d.stamp[slot] = append(held[:0:0], seq...), stamp
	out := []int32{next}
	for len(out) < max && d.m.Program.MTPChain && pos+len(out) < d.m.MaxLen() {
		// The module's rows at pos.. hold drafts now; held ends at pos,
		// so the next Draft runs the module again from pos on.
		if next, err = d.m.mtpChained(ctx, slot, next, pos+len(out)-1); err != nil {
			break
		}
		out = append(out, next)
	}
	return out
}

// mtpChained runs the module at position pos with token (the draft at
// pos+1) and its own output at pos-1 as the hidden state, and returns its
// prediction for pos+2.
func (m *Model) mtpChained(ctx context.Context, slot int, token int32, pos int) (int32, error) {
	var last int32
	err := m.mtpChunks(slot, []int32{token}, pos, true, func(fn string, args []tensor.Tensor, k, n int) error {
		out, err := m.worker.CallArgmax(ctx, fn, args)
		if err != nil {
			return err
		}
		cs, err := iree.Choices(out, int64(k))
		if err != nil {
			return err
		}
		last = cs[0].ID
		return nil
	})
	return last, err
}

// MTP runs the model's multi-token-prediction module in slot over the
// positions start..start+len(next)-1, next[i] being the token at
// start+i+1 (the target must hold those positions' hidden states: it ran
// them), in chunks of its MTP buckets, and returns the module's greedy
// prediction for the position after the last next token. Errors: no MTP
// entry points, nothing to run, positions past the cache, a worker
// failure.
func (m *Model) MTP(ctx context.Context, slot int, next []int32, start int) (int32, error) {
	var last int32
	err := m.mtpChunks(slot, next, start, false, func(fn string, args []tensor.Tensor, k, n int) error {
		out, err := m.worker.CallArgmax(ctx, fn, args)
		if err != nil {
			return err
		}
		cs, err := iree.Choices(out, int64(k))
		if err != nil {
			return err
		}
		last = cs[n-1].ID
		return nil
	})
	return last, err
}

// MTPLogits is MTP returning the module's logits of every position run,
// one row of vocab per next token (reference checks, tests).
func (m *Model) MTPLogits(ctx context.Context, slot int, next []int32, start int) ([][]float32, error) {
	var rows [][]float32
	err := m.mtpChunks(slot, next, start, false, func(fn string, args []tensor.Tensor, k, n int) error {
		out, err := m.worker.Call(ctx, fn, args)
		if err != nil {
			return err
		}
		ls, err := m.logits(out, k)
		if err != nil {
			return err
		}
		rows = append(rows, ls[:n]...)
		return nil
	})
	return rows, err
}

// mtpChunks checks an MTP run and calls call for each chunk: the entry
// point, its arguments, its bucket k and its real positions n; chain sets
// mtp_K's chain argument (one position).
func (m *Model) mtpChunks(slot int, next []int32, start int, chain bool, call func(fn string, args []tensor.Tensor, k, n int) error) error {
	if len(m.Program.MTPBuckets) == 0 {
		return fmt.Errorf("mtp: the module has no multi-token-prediction entry points")
	}
	if len(next) == 0 {
		return fmt.Errorf("mtp: no positions to run")
	}
	if err := m.checkTokens(next, start+1); err != nil {
		return err
	}
	if err := m.checkSlots([]int{slot}); err != nil {
		return err
	}
	for len(next) > 0 {
		k := 0
		for _, b := range m.Program.MTPBuckets { // the smallest that holds the rest, else the largest that fits
			if start+int(b) > m.MaxLen() {
				break
			}
			k = int(b)
			if k >= len(next) {
				break
			}
		}
		if k == 0 {
			return fmt.Errorf("mtp: no bucket of %v fits at position %d (KV-cache length %d)", m.Program.MTPBuckets, start, m.MaxLen())
		}
		n := min(k, len(next))
		chunk := make([]int32, k)
		copy(chunk, next[:n])
		ids, err := tensor.FromI32([]int64{1, int64(k)}, chunk)
		if err != nil {
			return err
		}
		c := int32(0)
		if chain {
			c = 1
		}
		args := []tensor.Tensor{ids, tensor.ScalarI32(int32(slot)), tensor.ScalarI32(int32(start)), tensor.ScalarI32(int32(n)), tensor.ScalarI32(c)}
		rp, err := m.ropeArg(start, k, m.slots.ropeDelta(slot), [3][]int32{})
		if err != nil {
			return err
		}
		if rp != nil {
			args = append(args, *rp)
		}
		if err := call(abi.MTPName(int64(k)), args, k, n); err != nil {
			return err
		}
		next, start = next[n:], start+n
	}
	return nil
}
