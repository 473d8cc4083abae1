package rt

import (
	"context"
	"fmt"
	"slices"

	"github.com/archc/archc/formats/abi"
	"github.com/archc/archc/formats/tensor"
	"github.com/archc/archc/rt/iree"
)

// Speculative decoding: a drafter proposes the tokens it expects to follow
// a sequence, one verify call (abi.VerifyName) runs the sequence's latest
// token and the draft through the model at once, and the model's own
// choice after each position decides how much of the draft stands. Each
// position's token is chosen from the target model's logits exactly as a
// decode step would choose it (argmax, or a draw by the sequence's
// sampler), and a draft token is kept only while it equals that choice; the
// first choice that differs ends the step and is kept in its place. So
// greedy output equals plain decoding token for token, and a sampled token
// at every position is a draw from the target distribution given the
// tokens before it: for a drafter that proposes one token per position (a
// one-hot draft distribution q), accepting draft token x when the target's
// draw y equals x happens with probability p(x), and a rejected step keeps
// y, distributed as p without x renormalized: the residual max(p−q, 0)
// of standard speculative sampling (Leviathan et al. 2023, Chen et al.
// 2023).
//
// Rollback. A verify call writes the KV rows of all its positions; rows
// past the accepted ones are never read (attention reads positions up to
// each query's own) and are overwritten by the next call. A fixed state
// (conv window, recurrent state; state.go) is written only for the call's
// end: when a step keeps fewer tokens than it ran, the accepted tokens are
// run again from the state before the step, which the other parity buffer
// still holds as long as the verify call ran an odd number of tokens (so
// drafts for such models have an even length). That is the "recompute from
// the last snapshot" policy, the parity buffer being the snapshot.

// Drafter proposes tokens to follow a sequence (prompt lookup, a draft
// model). It is called from one goroutine at a time (the engine's), for
// any of the sequences it serves.
type Drafter interface {
	// Draft returns at most max tokens expected to follow seq (the prompt
	// and the tokens generated so far), the sequence the target holds in
	// KV-cache slot `slot`, or none. A drafter that fails proposes none:
	// a draft changes speed, never output.
	Draft(ctx context.Context, slot int, seq []int32, max int) []int32
	// Name is the drafter's kind for logs and metrics ("ngram", "draft").
	Name() string
}

// SpecStats counts a sequence's speculation (vLLM's spec_decode counters):
// verify steps run with a draft, tokens drafted, drafted tokens accepted.
type SpecStats struct {
	Drafts, Drafted, Accepted int
}

// Add adds o's counts to s.
func (s *SpecStats) Add(o SpecStats) {
	s.Drafts += o.Drafts
	s.Drafted += o.Drafted
	s.Accepted += o.Accepted
}

// MaxDraft is the longest draft a verify step of this Model can score for
// a sequence whose latest token is at position pos: one less than the
// largest compiled verify bucket (abi.VerifyName) that fits before the
// cache's end (a verify call runs its whole bucket's positions, so a draft
// that fits the cache but whose bucket does not would fail) and, for a
// length-dependent RoPE, before its threshold (past it a verify call's one
// table would not equal one table per decode step); even for a model with
// a fixed state (see rollback above). 0: no speculation here.
func (m *Model) MaxDraft(pos int) int {
	room := m.MaxLen() - pos // positions pos.. a verify call may run
	if lp := m.Program.Lengths; lp.Tracked() {
		room = min(room, int(lp.Threshold)-pos)
	}
	n := 0 // tokens a verify call runs: the latest token and the draft
	for _, b := range m.Program.VerifyBuckets {
		if int(b) <= room {
			n = max(n, int(b))
		}
	}
	d := n - 1
	if m.Program.FixedState() && d%2 == 1 {
		d--
	}
	return max(d, 0)
}

// SpecEligible reports whether a sequence sampled by s can speculate:
// its choices must not depend on tokens the worker was told about but the
// step may reject. Penalties (which count the sequence's tokens) and a
// grammar (whose matcher advances with each token) do; argmax, temperature,
// top-k/top-p/min-p, logit bias and logprobs do not.
func SpecEligible(s *Sampler) bool {
	return !s.opts.penalized() && s.opts.Grammar == nil
}

// Verify runs tokens, the sequence in slot at positions start.., through
// the smallest verify bucket that holds them and chooses a token after
// each position: rows nil chooses by argmax (lowest id on ties), else row
// i chooses position i's (see Sampler.VerifyRows). It returns
// len(tokens) choices. Errors: no verify entry point that holds the
// tokens (compile with verify buckets), bad ids or positions, a state
// the slot does not hold, a worker failure.
func (m *Model) Verify(ctx context.Context, slot int, tokens []int32, start int, rows []iree.SampleRow) ([]iree.Choice, error) {
	n := len(tokens)
	k := 0
	for _, b := range m.Program.VerifyBuckets {
		if int(b) >= n {
			k = int(b)
			break
		}
	}
	switch {
	case n == 0:
		return nil, fmt.Errorf("verify: no tokens")
	case k == 0:
		return nil, fmt.Errorf("verify: no verify entry point holds %d tokens (compiled: %v); compile with speculative decoding on", n, m.Program.VerifyBuckets)
	case rows != nil && len(rows) != n:
		return nil, fmt.Errorf("verify: %d sampling rows for %d tokens", len(rows), n)
	}
	if err := m.checkTokens(tokens, start); err != nil {
		return nil, err
	}
	if start+k > m.MaxLen() {
		return nil, fmt.Errorf("verify: positions %d..%d (bucket %d) pass the KV-cache length %d", start, start+k-1, k, m.MaxLen())
	}
	if err := m.checkSlots([]int{slot}); err != nil {
		return nil, err
	}
	if err := m.held(ctx, slot, start); err != nil {
		return nil, err
	}
	if lp := m.Program.Lengths; lp.Tracked() && int64(start+n) > lp.Threshold {
		return nil, fmt.Errorf("verify: positions past %d use a length-dependent RoPE table; decode them one at a time", lp.Threshold)
	}
	if err := m.refresh(ctx, slot, start, start+n); err != nil {
		return nil, err
	}
	chunk := make([]int32, k)
	copy(chunk, tokens)
	ids, err := tensor.FromI32([]int64{1, int64(k)}, chunk)
	if err != nil {
		return nil, err
	}
	args := []tensor.Tensor{ids, tensor.ScalarI32(int32(slot)), tensor.ScalarI32(int32(start)), tensor.ScalarI32(int32(n))}
	rp, err := m.ropeArg(start, k, m.slots.ropeDelta(slot), [3][]int32{})
	if err != nil {
		return nil, err
	}
	if rp != nil {
		args = append(args, *rp)
	}
	var out []tensor.Tensor
	if rows == nil {
		out, err = m.worker.CallArgmax(ctx, abi.VerifyName(int64(k)), args)
	} else {
		padded := append(slices.Clone(rows), make([]iree.SampleRow, k-n)...) // padding rows: argmax, no sequence
		out, err = m.worker.CallSample(ctx, abi.VerifyName(int64(k)), args, padded)
	}
	if err != nil {
		return nil, err
	}
	m.slots.wrote(slot, start, tokens, start+n)
	cs, err := iree.Choices(out, int64(k))
	if err != nil {
		return nil, err
	}
	return cs[:n], nil
}

// Speculate runs one speculative step of the sequence seq (prompt and
// generated tokens) in slot, whose last token is at position pos and not
// yet in the cache: it verifies that token followed by draft (at most
// MaxDraft(pos) tokens), keeps the longest prefix of the draft the model
// itself chooses, and returns the chosen tokens, 1 to len(draft)+1 of
// them: the accepted draft tokens then the model's own next choice. After
// it the slot holds the sequence through its new last token's position
// minus one, exactly as after as many decode steps (see rollback above).
// s chooses as in decoding (SpecEligible must hold). Errors: as Verify, a
// draft too long, a worker failure; after an error the slot's contents are
// unknown.
func (m *Model) Speculate(ctx context.Context, slot int, seq []int32, pos int, draft []int32, s *Sampler) ([]iree.Choice, error) {
	if len(draft) > m.MaxDraft(pos) {
		return nil, fmt.Errorf("speculate: a draft of %d tokens at position %d; at most %d fit", len(draft), pos, m.MaxDraft(pos))
	}
	if !SpecEligible(s) {
		return nil, fmt.Errorf("speculate: the sequence's sampling reads its own tokens (penalties or a grammar); decode it one token at a time")
	}
	in := append([]int32{seq[len(seq)-1]}, draft...)
	cs, err := m.Verify(ctx, slot, in, pos, s.VerifyRows(len(in)))
	if err != nil {
		return nil, err
	}
	j := 0 // accepted draft tokens
	for j < len(draft) && cs[j].ID == draft[j] {
		j++
	}
	if m.Program.FixedState() && j < len(draft) {
		// The state the verify call wrote is for pos+len(in); the one for
		// pos+j+1 is recomputed from pos, whose buffer len(in) odd kept.
		if _, err := m.PrefillSlot(ctx, slot, in[:j+1], pos); err != nil {
			return nil, err
		}
	}
	return cs[:j+1], nil
}

// VerifyRows returns the worker's rows for a verify call of n positions
// (Model.Verify): nil (argmax) for a Plain sampler, else a row per
// position with its own uniform draw from the stream. The rows carry no
// tokens, so the worker's copy of the sequence stays at what decoding sent
// it (a later Row sends the rest); SpecEligible samplers do not read it.
func (s *Sampler) VerifyRows(n int) []iree.SampleRow {
	if s.Plain() {
		return nil
	}
	rows := make([]iree.SampleRow, n)
	for i := range rows {
		var u float64
		if !s.opts.Greedy() {
			u = s.rng.Float64()
		}
		rows[i] = iree.SeqRow(s.seq, u, nil)
	}
	return rows
}
