// Package engine serves many generation requests from one loaded model
// with continuous batching: requests wait in a bounded queue, take a
// KV-cache slot when one is free, are prefilled chunk by chunk (one
// compiled prefill bucket per step, interleaved with the others' decode
// steps), and then decode together, one batched call per step at the
// smallest compiled decode batch that holds them. A finished, cancelled or
// failed request frees its slot at once. Every greedy request produces
// exactly the tokens it would produce alone: batching never mixes rows
// (the compiled decode_B reads each row's own slot).
//
// Requests of one Group (a request's n > 1 choices: one prompt, each its
// own sampling) share the prompt's prefill: the group waits for as many
// free slots as it has members, one member prefills the prompt, the
// model copies that slot's state into the others' (rt.Model.CopySlot:
// the KV cache, conv windows and recurrent states), and every member then
// chooses its first token from the same logits with its own sampler and
// decodes in the batch like any other request. Each member's tokens are
// exactly those it would get prefilling alone. A module that cannot copy
// (rt.Model.CanCopy), or a group larger than the slots, runs its members
// as separate requests.
//
// The engine is the only caller of its rt.Model (whose methods are not
// safe for concurrent use); Submit may be called from any goroutine.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/archc/archc/formats/option"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/iree"
)

// Request is one generation request, in token ids.
type Request struct {
	Prompt     []int32 // prompt token ids, at least one
	MaxTokens  int     // new tokens at most (>= 1)
	Sampling   rt.SamplingOptions
	StopTokens []int32 // ids that end generation besides the model's EOS ids (kept in the output, like EOS)
	// Group, if set, makes the request one of a group sharing its prompt's
	// prefill (NewGroup): every member must have the same Prompt.
	Group *Group
	// NoSpeculation decodes this request one token per step even when the
	// engine speculates (Options.Speculative); the output is the same
	// either way (greedy: the same tokens; sampled: the same distribution).
	NoSpeculation bool
	// Prediction is text the output is expected to repeat, in token ids
	// (OpenAI's predicted outputs): when the engine speculates, this
	// request drafts by prompt lookup in it first (rt.PromptLookup's
	// Reference), whatever the engine's drafter. It changes speed only.
	Prediction []int32
	// Encoded holds the image rows of the prompt's placeholder tokens (a
	// vision-language model's: rt.Encoded, from rt.Model.Encode), nil for
	// a prompt without images. Prefix reuse runs through image positions
	// only where the same rows sit there (rt.Model.PositionKeys).
	Encoded *rt.Encoded
}

// Group gathers the requests that share one prompt's prefill: the choices
// of a request for n > 1. Submit each member with Request.Group set; the
// group is queued when its last member is submitted (until then its
// members wait, each ending with FinishCancelled if its context ends
// first), and runs as one admission: the prompt is prefilled once, into
// one member's slot, and copied into the others'.
type Group struct {
	n       int
	mu      sync.Mutex
	members []*seq
	queued  bool // the last member arrived: the members went to the queue
}

// NewGroup returns a group for n requests (n >= 1).
func NewGroup(n int) *Group { return &Group{n: max(n, 1)} }

// Finish reasons, as OpenAI's API names them (plus the engine's own).
const (
	FinishStop      = "stop"      // an EOS or stop token was generated
	FinishLength    = "length"    // MaxTokens reached, or the end of the KV-cache slot
	FinishCancelled = "cancelled" // the request's context ended
	FinishError     = "error"     // the model failed; Event.Err says why
)

// Event is one step of a request's stream: a generated token, or the end.
type Event struct {
	Token int32 // the generated id (when !Done)
	// With Request.Sampling.Logprobs / TopLogprobs: the token's logprob
	// and the most likely alternatives (iree.Choice).
	Logprob     float32
	TopIDs      []int32
	TopLogprobs []float32
	Done        bool // the last event of the stream
	// On the last event: why generation ended, the error for FinishError,
	// and the token counts.
	FinishReason     string
	Err              error
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int // prompt tokens whose KV cache was reused from the slot's previous request (a group member: the group's)
}

// Options configures an Engine.
type Options struct {
	// QueueSize bounds the requests waiting for a slot; Submit returns
	// ErrQueueFull beyond it. 0 means 64.
	QueueSize int
	// CallTimeout bounds each model call (a prefill chunk or a decode
	// step); a call that takes longer is killed with its worker. 0 means
	// 2 minutes.
	CallTimeout time.Duration
	// Log receives one record per worker failure and per restart (nil:
	// none).
	Log *slog.Logger
	// Speculative, when set, decodes every request that allows it
	// (Request.NoSpeculation false, a sampler without penalties or a
	// grammar: rt.SpecEligible) by speculation: when the drafter proposes
	// tokens, the request runs a verify step of its own (rt.Model.Speculate)
	// instead of a row of the batched decode, and emits every token it
	// accepts. The model needs verify entry points (rt.Model.MaxDraft).
	Speculative *rt.Speculation
}

// Errors Submit returns.
var (
	ErrQueueFull = errors.New("the server is busy: too many requests are waiting")
	ErrClosed    = errors.New("the engine has stopped")
)

// Engine schedules requests on one model. Create it with New and start
// Run in a goroutine.
type Engine struct {
	m       *rt.Model
	log     *slog.Logger
	timeout time.Duration
	spec    *rt.Speculation
	queue   chan *seq
	pending *seq // taken from the queue, waiting for enough free slots (a group)
	slots   []slot
	batches []int // compiled decode batch sizes, ascending
	canCopy bool  // the model can copy a slot's state (groups share a prefill)

	mu         sync.Mutex
	stats      Stats
	closed     bool  // Run has returned; Submit refuses
	restartErr error // the last worker restart failed: Submit refuses
}

// Stats is a snapshot of the engine's state (for metrics).
type Stats struct {
	Queued  int // requests waiting for a slot
	Running int // requests holding a slot (prefilling or decoding)
	Slots   int // slots in the model
	Batch   int // decode batch size of the last step (0 when idle)
	// KVTokens is the number of token positions whose keys and values
	// running requests hold (their slots' filled length); KVCapacity is
	// Slots × the slot length. Positions kept for prefix reuse by slots
	// without an owner are not counted (they are free to take).
	KVTokens, KVCapacity int
	// Restarting is true while the model's worker is being restarted
	// after a failure; WorkerDown is the error of the last restart when it
	// failed (the engine then refuses every request).
	Restarting bool
	WorkerDown error
	// Restarts counts worker restarts since New.
	Restarts int
	// SharedPrefills counts the slots that got a group's prompt by a copy
	// instead of a prefill of their own.
	SharedPrefills int
	// Spec counts speculative decoding since New: verify steps run with a
	// draft, tokens drafted, drafted tokens accepted (vLLM's
	// spec_decode_num_drafts, _num_draft_tokens, _num_accepted_tokens).
	Spec rt.SpecStats
}

// slot is one KV-cache slot: its owner, and the tokens whose keys and
// values it holds (kept after the owner finishes, for prefix reuse).
type slot struct {
	owner  *seq
	cached []int32
	keys   []uint64 // per cached position: the key of the image row there (rt.Model.PositionKeys), 0 for a token's own embedding
}

// keep truncates the slot's record to its first n positions.
func (sl *slot) keep(n int) { sl.cached, sl.keys = sl.cached[:n], sl.keys[:n] }

// push records tokens written after the slot's positions, with their
// image-row keys (nil: none, a text or generated token's).
func (sl *slot) push(tokens []int32, keys []uint64) {
	sl.cached = append(sl.cached, tokens...)
	if keys == nil {
		keys = make([]uint64, len(tokens))
	}
	sl.keys = append(sl.keys, keys...)
}

// seq is one admitted request.
type seq struct {
	ctx     context.Context
	req     Request
	events  chan Event
	sampler *rt.Sampler
	keys    []uint64 // per prompt position, the image-row key (rt.Model.PositionKeys); nil without images
	slot    int
	fed     int     // tokens of all whose keys and values are in the slot
	all     []int32 // prompt then generated tokens
	gen     int     // generated tokens
	reused  int     // prompt tokens reused from the slot's cache
	next    int32   // the latest generated token, not yet fed (decoding)
	decode  bool    // prefill done

	// A group's members: the one that prefills lists the others, which
	// wait in their slots (leader set) until its prefill is copied to
	// them. A member whose leader ends before that prefills on its own.
	followers []*seq
	leader    *seq
	stopPark  func() bool // ends the wait for the rest of the group (context.AfterFunc)
	ended     bool        // ended (its context) while waiting for the rest of the group
}

// members is s and the followers that come with it in the queue.
func (s *seq) members() int { return 1 + len(s.followers) }

// New returns an engine for m. m must have been compiled with decode batch
// size 1 among its DecodeBatches (rt.Program); its Slots bound the
// requests running at once.
func New(m *rt.Model, opts Options) (*Engine, error) {
	o := m.Program
	batches := make([]int, 0, len(o.DecodeBatches))
	for _, b := range o.DecodeBatches {
		batches = append(batches, int(b))
	}
	slices.Sort(batches)
	if len(batches) == 0 || batches[0] != 1 {
		return nil, fmt.Errorf("engine: the model needs a decode_1 entry point (compiled decode batches: %v)", batches)
	}
	if opts.Speculative != nil && len(o.VerifyBuckets) == 0 {
		return nil, fmt.Errorf("engine: speculative decoding needs verify entry points; compile the model with verify buckets (driver.PlanOptions.Lower.VerifyBuckets)")
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 64
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 2 * time.Minute
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	e := &Engine{m: m, log: opts.Log, timeout: opts.CallTimeout, spec: opts.Speculative, queue: make(chan *seq, opts.QueueSize), slots: make([]slot, o.Slots), batches: batches, canCopy: m.CanCopy()}
	e.stats.Slots = int(o.Slots)
	e.stats.KVCapacity = int(o.Slots) * m.MaxLen()
	return e, nil
}

// Submit queues a request and returns its event stream: one Event per
// generated token, then a last one with Done set. The stream ends early
// when ctx ends (FinishCancelled). Errors, before anything is queued: a
// malformed request (empty prompt, MaxTokens < 1, a token id outside the
// vocabulary, prompt plus MaxTokens beyond the slot, bad sampling
// options, a group member whose prompt is not the group's or that comes
// after the group is complete), ErrQueueFull, ErrClosed. A group's last
// member gets the group's queueing error; the members before it then end
// with FinishError and that error.
func (e *Engine) Submit(ctx context.Context, r Request) (<-chan Event, error) {
	if err := e.check(r); err != nil {
		return nil, err
	}
	sampler, err := rt.NewSampler(r.Sampling)
	if err != nil {
		return nil, err
	}
	s := &seq{ctx: ctx, req: r, events: make(chan Event, r.MaxTokens+1), sampler: sampler, slot: -1,
		all: append(make([]int32, 0, len(r.Prompt)+r.MaxTokens), r.Prompt...), keys: e.m.PositionKeys(r.Prompt, r.Encoded)}
	if g := r.Group; g != nil && g.n > 1 {
		if err := e.join(g, s); err != nil {
			return nil, err
		}
		return s.events, nil
	}
	if err := e.enqueue([]*seq{s}); err != nil {
		return nil, err
	}
	return s.events, nil
}

// join adds s to group g; the last member queues the group.
func (e *Engine) join(g *Group, s *seq) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.queued || len(g.members) == g.n:
		return fmt.Errorf("the group of %d requests is complete", g.n)
	case len(g.members) > 0 && (!slices.Equal(g.members[0].req.Prompt, s.req.Prompt) || !slices.Equal(g.members[0].keys, s.keys)):
		return errors.New("a group's requests must share one prompt (and its images)")
	}
	g.members = append(g.members, s)
	if len(g.members) < g.n {
		s.stopPark = context.AfterFunc(s.ctx, func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if !g.queued {
				s.ended = true
				s.events <- Event{Done: true, FinishReason: FinishCancelled, PromptTokens: len(s.req.Prompt)}
			}
		})
		return nil
	}
	g.queued = true
	var live []*seq
	for _, m := range g.members {
		if m.stopPark != nil {
			m.stopPark()
		}
		if !m.ended {
			live = append(live, m)
		}
	}
	var entries []*seq
	if e.canCopy && len(live) <= len(e.slots) {
		live[0].followers = live[1:]
		entries = live[:1]
	} else {
		entries = live // separate requests: each prefills its own slot
	}
	err := e.enqueue(entries)
	if err != nil {
		for _, m := range live {
			if m != s {
				m.events <- Event{Done: true, FinishReason: FinishError, Err: err, PromptTokens: len(m.req.Prompt)}
			}
		}
		for _, x := range entries {
			x.followers = nil
		}
	}
	return err
}

// enqueue queues entries (each with its followers) all or none: errors
// ErrQueueFull, ErrClosed, a failed worker restart.
func (e *Engine) enqueue(entries []*seq) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	if e.restartErr != nil {
		return fmt.Errorf("the model's worker could not be restarted: %w", e.restartErr)
	}
	if cap(e.queue)-len(e.queue) < len(entries) {
		return ErrQueueFull
	}
	for _, s := range entries {
		e.queue <- s // room checked above, and only Submit sends (under e.mu)
		e.stats.Queued += s.members()
	}
	return nil
}

// check validates a request against the model.
func (e *Engine) check(r Request) error {
	switch {
	case len(r.Prompt) == 0:
		return errors.New("the prompt is empty")
	case r.MaxTokens < 1:
		return fmt.Errorf("max_tokens %d: must be at least 1", r.MaxTokens)
	case len(r.Prompt)+r.MaxTokens > e.m.MaxLen()+1:
		return fmt.Errorf("the prompt (%s) plus max_tokens (%d) exceed the context length of %d tokens", option.Count(len(r.Prompt), "token", "tokens"), r.MaxTokens, e.m.MaxLen())
	}
	for _, id := range r.Prompt {
		if id < 0 || int64(id) >= e.m.Vocab {
			return fmt.Errorf("token id %d is outside the vocabulary [0, %d)", id, e.m.Vocab)
		}
	}
	if err := e.m.CheckEncoded(r.Prompt, r.Encoded); err != nil {
		return err
	}
	return r.Sampling.Validate()
}

// Stats returns a snapshot of the queue and slots.
func (e *Engine) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stats
}

// Run schedules until ctx ends, then ends every queued and running
// request (FinishCancelled) and returns ctx's error. A model failure ends
// the requests it touched (FinishError) and Run goes on.
func (e *Engine) Run(ctx context.Context) error {
	defer e.drain()
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		e.reap()
		e.admit()
		if e.idle() && e.pending == nil { // (admit places a pending group when every slot is free: join keeps groups within the slots)
			e.setBatch(0)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case s := <-e.queue:
				e.dequeued(s)
				e.pending = s
			}
			continue
		}
		e.prefillStep(ctx)
		e.decodeStep(ctx)
	}
}

func (e *Engine) dequeued(s *seq) {
	e.mu.Lock()
	e.stats.Queued -= s.members()
	e.mu.Unlock()
}

// idle reports whether no slot has an owner.
func (e *Engine) idle() bool {
	for _, sl := range e.slots {
		if sl.owner != nil {
			return false
		}
	}
	return true
}

// reap ends the requests whose context has ended.
func (e *Engine) reap() {
	for i := range e.slots {
		if s := e.slots[i].owner; s != nil && s.ctx.Err() != nil {
			e.finish(s, FinishCancelled, nil)
		}
	}
}

// admit moves queued requests into free slots, in queue order, while
// there are both; a group waits (pending, and the queue behind it) until
// it has a slot for each member.
func (e *Engine) admit() {
	for {
		if e.pending == nil {
			select {
			case s := <-e.queue:
				e.dequeued(s)
				e.pending = s
			default:
				return
			}
		}
		if e.freeSlots() < e.pending.members() {
			return
		}
		s := e.pending
		e.pending = nil
		e.place(s)
	}
}

func (e *Engine) freeSlots() int {
	n := 0
	for _, sl := range e.slots {
		if sl.owner == nil {
			n++
		}
	}
	return n
}

// place gives s the free slot whose cached tokens share the longest
// reusable prefix with its prompt (at least one prompt token is always
// prefilled, for its logits), or ends s at once if its context has already
// ended. A prefix is reusable when the model's length policy says its keys
// serve a sequence of the prompt's length (rt.Model.ReusablePrefix: with a
// length-dependent RoPE, keys computed for a sequence of another length
// may not; with a conv window or recurrent state, rt.Program.FixedState(),
// only a prefix whose exact state the slot holds serves: the end of its
// tokens, as a second chat turn needs, or the position before; any other
// prompt is recomputed from position 0, never continued from another
// position's state).
//
// A group's members (s and its followers) take a slot each: the first
// whose context has not ended takes the best slot and prefills; the
// others take the free slots holding the fewest tokens and wait for its
// prefill to be copied to them.
func (e *Engine) place(s *seq) {
	var live []*seq
	for _, m := range append([]*seq{s}, s.followers...) {
		if m.ctx.Err() != nil {
			m.events <- Event{Done: true, FinishReason: FinishCancelled, PromptTokens: len(m.req.Prompt)}
			continue
		}
		live = append(live, m)
	}
	s.followers = nil
	if len(live) == 0 {
		return
	}
	lead := live[0]
	lead.followers = live[1:]
	best, bestLen := -1, -1
	for i, sl := range e.slots {
		if sl.owner != nil {
			continue
		}
		if n := e.reusable(i, lead); n > bestLen {
			best, bestLen = i, n
		}
	}
	e.take(lead, best)
	for _, f := range lead.followers {
		best = -1
		for i, sl := range e.slots {
			if sl.owner == nil && (best < 0 || len(sl.cached) < len(e.slots[best].cached)) {
				best = i
			}
		}
		f.leader = lead
		e.take(f, best)
	}
	e.setRunning()
}

// reusable is the prefix of s's prompt whose state slot i holds and
// serves it (at least one prompt token is always prefilled, for its
// logits): the same tokens, and at image placeholders the same image rows.
func (e *Engine) reusable(i int, s *seq) int {
	prompt, sl := s.req.Prompt, &e.slots[i]
	n := commonPrefix(sl.cached, prompt[:len(prompt)-1])
	for j := range n {
		var k uint64
		if s.keys != nil {
			k = s.keys[j]
		}
		if sl.keys[j] != k {
			n = j
			break
		}
	}
	return e.m.ReusablePrefix(i, n, len(prompt))
}

// take gives s slot i, keeping the prefix of the slot's tokens it reuses.
func (e *Engine) take(s *seq, i int) {
	n := e.reusable(i, s)
	sl := &e.slots[i]
	sl.owner = s
	sl.keep(n)
	s.slot, s.fed, s.reused = i, n, n
}

func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func (e *Engine) setRunning() {
	n, kv := 0, 0
	for _, sl := range e.slots {
		if sl.owner != nil {
			n++
			kv += len(sl.cached)
		}
	}
	e.mu.Lock()
	e.stats.Running, e.stats.KVTokens = n, kv
	e.mu.Unlock()
}

// prefillStep runs one prefill chunk of the first prefilling request (in
// slot order); after its last chunk the request's first token is chosen,
// and a group leader's slot is first copied into its waiting followers'
// slots, each of which then chooses its own first token from the same
// logits.
func (e *Engine) prefillStep(ctx context.Context) {
	for i := range e.slots {
		s := e.slots[i].owner
		if s == nil || s.decode || s.leader != nil { // a group member waiting for its leader's prefill
			continue
		}
		prompt := s.req.Prompt
		cctx, cancel := context.WithTimeout(ctx, e.timeout)
		defer cancel()
		logits, n, err := e.m.PrefillChunkEncoded(cctx, s.slot, prompt[s.fed:], s.fed, e.m.EncodedFrom(s.req.Encoded, prompt, s.fed))
		if err != nil {
			e.fail(ctx, err)
			return
		}
		var keys []uint64
		if s.keys != nil {
			keys = s.keys[s.fed : s.fed+n]
		}
		e.slots[s.slot].push(prompt[s.fed:s.fed+n], keys)
		s.fed += n
		if s.fed < len(prompt) {
			return
		}
		started := []*seq{s}
		if fs := e.share(s); len(fs) > 0 {
			dsts := make([]int, len(fs))
			for j, f := range fs {
				dsts[j] = f.slot
			}
			if err := e.m.CopySlot(cctx, s.slot, dsts, len(prompt)); err != nil {
				e.fail(ctx, err)
				return
			}
			for _, f := range fs {
				e.slots[f.slot].keep(0)
				e.slots[f.slot].push(prompt, s.keys)
				f.fed, f.reused, f.leader = len(prompt), s.reused, nil
			}
			e.mu.Lock()
			e.stats.SharedPrefills += len(fs)
			e.mu.Unlock()
			started = append(started, fs...)
		}
		// Every member starts, then chooses, before any is emitted (an
		// emitted token may end its request).
		toks := make([]iree.Choice, len(started))
		for j, m := range started {
			if err := e.m.StartSequence(cctx, m.slot, m.sampler, m.req.Prompt); err != nil {
				var refused *iree.RequestError
				if errors.As(err, &refused) { // this request's sampling (a grammar llguidance cannot build): it alone ends
					e.finish(m, FinishError, err)
					continue
				}
				e.fail(ctx, err)
				return
			}
			if toks[j], err = e.m.Sample(cctx, logits, m.sampler.Row(m.all)); err != nil {
				e.fail(ctx, err)
				return
			}
			m.decode = true
		}
		for j, m := range started {
			if m.decode {
				e.emit(m, toks[j])
			}
		}
		return
	}
}

// share returns the followers of s still waiting for its prefill (their
// slot held, their context not ended), and lets go of the others.
func (e *Engine) share(s *seq) []*seq {
	var out []*seq
	for _, f := range s.followers {
		if f.slot >= 0 && f.leader == s {
			out = append(out, f)
		}
	}
	s.followers = nil
	return out
}

// decodeStep runs one decode step for every decoding request: a verify
// step of its own for each that speculates and has a draft
// (Options.Speculative), then the rest in batches of compiled sizes.
func (e *Engine) decodeStep(ctx context.Context) {
	var run []*seq
	for i := range e.slots {
		s := e.slots[i].owner
		if s == nil || !s.decode {
			continue
		}
		if draft := e.draft(ctx, s); len(draft) > 0 {
			if !e.speculate(ctx, s, draft) {
				return // the model failed: every request has ended
			}
			continue
		}
		run = append(run, s)
	}
	if len(run) == 0 {
		e.setBatch(0)
		return
	}
	for len(run) > 0 {
		b := e.batchFor(len(run))
		n := min(b, len(run))
		e.decodeBatch(ctx, run[:n], b)
		run = run[n:]
	}
}

// draft returns s's draft for this step, nil when s decodes plainly.
func (e *Engine) draft(ctx context.Context, s *seq) []int32 {
	if e.spec == nil || s.req.NoSpeculation || !rt.SpecEligible(s.sampler) {
		return nil
	}
	sp := e.spec
	if len(s.req.Prediction) > 0 {
		sp = &rt.Speculation{Drafter: rt.PromptLookup{Reference: s.req.Prediction}, DraftMax: sp.DraftMax}
	}
	return e.m.Draft(ctx, sp, s.slot, s.all, s.fed, s.req.MaxTokens-s.gen)
}

// speculate runs one verify step of s with draft and emits the tokens it
// accepts (each may end the request, which drops the rest). It reports
// false when the model failed (e.fail has ended every request).
func (e *Engine) speculate(ctx context.Context, s *seq, draft []int32) bool {
	cctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	cs, err := e.m.Speculate(cctx, s.slot, s.all, s.fed, draft, s.sampler)
	if err != nil {
		e.fail(ctx, err)
		return false
	}
	sl := &e.slots[s.slot]
	sl.push(append([]int32{s.next}, draft[:len(cs)-1]...), nil)
	e.mu.Lock()
	e.stats.Spec.Add(rt.SpecStats{Drafts: 1, Drafted: len(draft), Accepted: len(cs) - 1})
	e.mu.Unlock()
	fed := s.fed
	for i, c := range cs {
		if s.slot < 0 { // an earlier token ended it
			break
		}
		s.fed = fed + i + 1 // as after i+1 decode steps, which emit's length rule reads
		e.emit(s, c)
	}
	return true
}

// batchFor returns the compiled batch size for n rows: the smallest that
// holds them if enough slots are free to pad it, else the largest that
// needs no padding.
func (e *Engine) batchFor(n int) int {
	spare := 0
	for _, sl := range e.slots {
		if sl.owner == nil || !sl.owner.decode {
			spare++
		}
	}
	best := 1
	for _, b := range e.batches {
		if b < n {
			best = b
			continue
		}
		if b-n <= spare {
			return b // the smallest that holds all n (b == n needs no padding)
		}
		break
	}
	return best
}

// decodeBatch feeds each request its latest token in one call of batch
// size b, padded with rows that write into slots outside the batch at the
// first position those slots do not hold yet (never read before it is
// written again), and emits each request's next token.
func (e *Engine) decodeBatch(ctx context.Context, run []*seq, b int) {
	e.setBatch(b)
	tokens := make([]int32, 0, b)
	pos := make([]int, 0, b)
	slotsUsed := make([]int, 0, b)
	var rows []iree.SampleRow
	sampling := false
	for _, s := range run {
		tokens = append(tokens, s.next)
		pos = append(pos, s.fed)
		slotsUsed = append(slotsUsed, s.slot)
		rows = append(rows, s.sampler.Row(s.all))
		sampling = sampling || !s.sampler.Plain()
	}
	for i := range e.slots {
		if len(tokens) == b {
			break
		}
		if slices.Contains(slotsUsed, i) {
			continue
		}
		p := len(e.slots[i].cached)
		if p >= e.m.MaxLen() {
			continue
		}
		tokens = append(tokens, 0)
		pos = append(pos, p)
		slotsUsed = append(slotsUsed, i)
		rows = append(rows, iree.SampleRow{}) // argmax, no sequence
	}
	if !sampling {
		rows = nil
	}
	cctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	choices, err := e.m.DecodeSample(cctx, tokens, pos, slotsUsed, rows)
	if err != nil {
		e.fail(ctx, err)
		return
	}
	for i, s := range run {
		e.slots[s.slot].push([]int32{s.next}, nil)
		s.fed++
		e.emit(s, choices[i])
	}
}

// setBatch records the last step's batch size and the KV positions the
// running requests hold after it.
func (e *Engine) setBatch(b int) {
	kv := 0
	for _, sl := range e.slots {
		if sl.owner != nil {
			kv += len(sl.cached)
		}
	}
	e.mu.Lock()
	e.stats.Batch, e.stats.KVTokens = b, kv
	e.mu.Unlock()
}

// emit records and sends a generated token and ends the request when it
// is an end token, the last allowed, or the slot is full.
func (e *Engine) emit(s *seq, c iree.Choice) {
	tok := c.ID
	s.all = append(s.all, tok)
	s.gen++
	s.next = tok
	s.events <- Event{Token: tok, Logprob: c.Logprob, TopIDs: c.TopIDs, TopLogprobs: c.TopProbs}
	switch {
	case slices.Contains(e.m.EOS, tok) || slices.Contains(s.req.StopTokens, tok):
		e.finish(s, FinishStop, nil)
	case s.gen >= s.req.MaxTokens || s.fed >= e.m.MaxLen():
		e.finish(s, FinishLength, nil)
	}
}

// finish sends the last event and frees the request's slot (its cache
// stays, for prefix reuse by the next request).
func (e *Engine) finish(s *seq, reason string, err error) {
	// The worker's sampling state of the sequence goes with it. An error
	// here means the worker is broken, and its state with it; the next
	// model call reports that.
	ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
	e.m.EndSequence(ctx, s.sampler)
	cancel()
	if !s.decode { // a leader ending before its prefill: its followers prefill on their own
		for _, f := range s.followers {
			if f.leader == s {
				f.leader = nil
			}
		}
		s.followers = nil
	}
	s.leader = nil
	if s.slot >= 0 {
		sl := &e.slots[s.slot]
		sl.owner = nil
		if err != nil { // the slot's contents are unknown after a failure
			sl.keep(0)
		}
		s.slot = -1
	}
	s.events <- Event{Done: true, FinishReason: reason, Err: err, PromptTokens: len(s.req.Prompt), CompletionTokens: s.gen, CachedTokens: s.reused}
	e.setRunning()
}

// fail handles a model failure (the worker died, or a call ran past the
// timeout and was killed with its worker): every running request ends
// with FinishError, since the KV caches are gone, and the worker is
// restarted with the module loaded again. If ctx has ended, the requests
// are cancelled instead.
func (e *Engine) fail(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return // Run returns and drains
	}
	err = fmt.Errorf("the model failed: %w", err)
	ended := 0
	e.mu.Lock()
	e.stats.Restarting = true
	e.mu.Unlock()
	for i := range e.slots {
		if s := e.slots[i].owner; s != nil {
			e.finish(s, FinishError, err)
			ended++
		}
		e.slots[i].keep(0)
	}
	e.log.Error("worker failed", "err", err, "requests_ended", ended)
	start := time.Now()
	rerr := e.m.Restart(ctx)
	e.mu.Lock()
	e.stats.Restarting = false
	e.stats.Restarts++
	if rerr != nil {
		e.restartErr = rerr
		e.stats.WorkerDown = rerr
	}
	e.mu.Unlock()
	if rerr != nil {
		e.log.Error("worker restart failed", "err", rerr, "duration_ms", time.Since(start).Milliseconds())
		return
	}
	e.log.Warn("worker restarted", "duration_ms", time.Since(start).Milliseconds(), "pid", e.m.WorkerPid())
}

// drain stops Submit and ends every request still queued or running.
func (e *Engine) drain() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	for i := range e.slots {
		if s := e.slots[i].owner; s != nil {
			e.finish(s, FinishCancelled, nil)
		}
	}
	cancelAll := func(s *seq) {
		for _, m := range append([]*seq{s}, s.followers...) {
			m.events <- Event{Done: true, FinishReason: FinishCancelled, PromptTokens: len(m.req.Prompt)}
		}
	}
	if s := e.pending; s != nil {
		e.pending = nil
		cancelAll(s)
	}
	for {
		select {
		case s := <-e.queue:
			e.dequeued(s)
			cancelAll(s)
		default:
			return
		}
	}
}
