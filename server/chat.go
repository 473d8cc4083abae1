package server

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"math"
	"strings"
	"sync"

	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/engine"
)

// The chat core. Every generating endpoint plans its request into a
// chatJob (the engine request, the stop strings, and for a chat request
// the plan that reads its output) and runs it with runChat, which turns
// the engine's tokens into typed events per choice: the answer begins,
// reasoning and text deltas with the tokens behind them, tool-call
// fragments, the finish with the usage, or an error. Chat completions,
// Responses, Messages and completions are renderers of those events into
// their own JSON and server-sent events; n > 1 is the same job run as n
// choices of one engine.Group.

// chatJob is a planned request, ready to run.
type chatJob struct {
	m     *rt.Model
	text  *rt.Text
	e     *engine.Engine
	req   engine.Request // the prompt, sampling, grammar and images
	stops []string
	// seeded: the request gave a seed, and choice i samples with seed+i
	// (so the choices differ yet the answer is reproducible); else each
	// choice gets a random one.
	seeded bool
	// plan reads a chat answer (reasoning, calls); nil for
	// /v1/completions, whose output is text.
	plan *chatPlan
	// generate, when a test sets it, stands for Server.run: it writes a
	// choice's pieces of text to onText and returns its result.
	generate func(ctx context.Context, req engine.Request, onText func(string, []int32, []tokenLogprob) error) (*result, error)
}

// eventKind says what a chatEvent carries.
type eventKind int

const (
	// evBegin: the choice's answer starts. Without a grammar it comes
	// before the request is queued; with one, at the first output, so
	// that a grammar the worker refuses is still an ordinary 400.
	evBegin eventKind = iota
	// evDelta: reasoning and text that are now certain. With Step, the
	// tokens generated since the previous step (IDs, Logprobs) come with
	// it; without, it is the rest the reader held back until the end.
	evDelta
	// evCall: a fragment of tool call Call: the first has its ID and Name
	// (and no arguments), the next the arguments' text.
	evCall
	// evFinish: the choice ended: Finish and Result (token counts, ids).
	evFinish
	// evError: the choice failed (Err, already an API error where it
	// names a field).
	evError
)

// chatEvent is one event of one choice of a running request.
type chatEvent struct {
	Kind      eventKind
	Choice    int
	Reasoning string
	Text      string // evDelta: the answer's text; evCall: argument text
	Step      bool
	IDs       []int32
	Logprobs  []tokenLogprob
	Call      int    // evCall: the call's index within the choice
	ID, Name  string // evCall: the call's id and function, on its first fragment
	Finish    string // "stop", "length", "tool_calls", "cancelled"
	Result    *result
	Err       error
}

// prepare plans a chat request (in, with its sampling fields p) and
// makes its job: the prompt, with the request's images encoded; the
// engine's options; the grammar of an enforced tool choice or output
// format. Errors are 400s naming the caller's field.
func (s *Server) prepare(ctx context.Context, in *chatInput, p sampling) (*chatJob, error) {
	m, text, e, err := s.ready()
	if err != nil {
		return nil, err
	}
	plan, err := plan(text, in)
	if err != nil {
		return nil, err
	}
	if s.replay != nil {
		return &chatJob{text: text, plan: plan}, nil
	}
	if plan.parseTools && plan.format.Name == "unrecognized" {
		ri := info(ctx)
		ri.mu.Lock()
		ri.unparsedCalls = true
		ri.mu.Unlock()
	}
	ids := plan.ids
	var encoded *rt.Encoded
	if len(plan.images) > 0 {
		if ids, encoded, err = plan.promptWithImages(ctx, s, m, text); err != nil {
			return nil, err
		}
	} else if err := s.noImagePlaceholders(m, &plan.prompt, ids, in.names.messages); err != nil {
		return nil, err
	}
	ereq, stops, err := s.optionsNamed(m, text, p, len(ids), m.MaxLen()+1-len(ids), in.names)
	if err != nil {
		return nil, err
	}
	ereq.Encoded = encoded
	if in.prediction != nil {
		pred, err := in.prediction.text()
		if err != nil {
			return nil, err
		}
		if ereq.Prediction, err = text.Tokenizer.Encode(pred, false); err != nil {
			return nil, badRequest("prediction", "%v", err)
		}
	}
	if in.topLogprobs != nil {
		switch {
		case *in.topLogprobs < 0 || *in.topLogprobs > 20:
			return nil, badRequest("top_logprobs", "top_logprobs must be in [0, 20], got %d", *in.topLogprobs)
		case !in.logprobs:
			return nil, badRequest("top_logprobs", "top_logprobs needs logprobs: true")
		}
		ereq.Sampling.TopLogprobs = *in.topLogprobs
	}
	ereq.Sampling.Logprobs = in.logprobs
	if ereq.Sampling.LogitBias, err = logitBias(m, p.LogitBias); err != nil {
		return nil, err
	}
	if plan.lark != "" {
		vocab, err := s.vocab.get(m, text)
		if err != nil {
			return nil, err
		}
		ereq.Sampling.Grammar = &rt.Grammar{Lark: plan.lark, Vocab: vocab}
	}
	ereq.Prompt = ids
	return &chatJob{m: m, text: text, e: e, req: ereq, stops: stops, seeded: p.Seed != nil, plan: plan}, nil
}

// runChat runs job as n choices (one for n <= 1) and hands each choice's
// events, in order, to emit; emit is never called twice at once. An error
// emit returns ends every choice (a client gone, or an error that is the
// request's answer) and is runChat's result.
func (s *Server) runChat(ctx context.Context, job *chatJob, n int, emit func(chatEvent) error) error {
	if n <= 1 {
		return s.runChoice(ctx, job, 0, job.req, emit)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g := engine.NewGroup(n)
	var mu sync.Mutex
	var stopped error
	serial := func(ev chatEvent) error {
		mu.Lock()
		defer mu.Unlock()
		if stopped != nil {
			return stopped
		}
		if err := emit(ev); err != nil {
			stopped = err
			cancel()
			return err
		}
		return nil
	}
	var wg sync.WaitGroup
	for i := range n {
		req := job.req
		req.Group = g
		if job.seeded {
			req.Sampling.Seed = job.req.Sampling.Seed + uint64(i)
		} else if i > 0 {
			req.Sampling.Seed = randomSeed()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.runChoice(ctx, job, i, req, serial)
		}()
	}
	wg.Wait()
	return stopped
}

// runChoice runs choice i (req is job.req with its seed and group) and
// emits its events.
func (s *Server) runChoice(ctx context.Context, job *chatJob, i int, req engine.Request, emit func(chatEvent) error) error {
	if s.replay != nil {
		for _, ev := range s.replay {
			ev.Choice = i
			if err := emit(ev); err != nil {
				return err
			}
		}
		return nil
	}
	split := job.plan.splitter()
	begun := false
	var emitErr error
	send := func(ev chatEvent) error {
		ev.Choice = i
		if ev.Kind != evError && !begun {
			begun = true
			if err := emit(chatEvent{Kind: evBegin, Choice: i}); err != nil {
				emitErr = err
				return err
			}
		}
		if err := emit(ev); err != nil {
			emitErr = err
			return err
		}
		return nil
	}
	if job.plan == nil || job.plan.lark == "" {
		begun = true
		if err := emit(chatEvent{Kind: evBegin, Choice: i}); err != nil {
			return err
		}
	}
	generate := job.generate
	if generate == nil {
		generate = func(ctx context.Context, req engine.Request, onText func(string, []int32, []tokenLogprob) error) (*result, error) {
			return s.run(ctx, job.m, job.text, job.e, req, job.stops, onText)
		}
	}
	res, err := generate(ctx, req, func(piece string, ids []int32, lps []tokenLogprob) error {
		if piece == "" && len(ids) == 0 {
			return nil
		}
		ev := chatEvent{Kind: evDelta, Text: piece, Step: true, IDs: ids, Logprobs: lps}
		if split != nil {
			ev.Reasoning, ev.Text = split.Push(piece)
			if ev.Reasoning == "" && ev.Text == "" && !req.Sampling.Logprobs {
				return nil // held back: it may be a marker or a call
			}
		}
		return send(ev)
	})
	if emitErr != nil {
		return emitErr
	}
	if err != nil {
		if job.plan != nil {
			err = job.plan.grammarError(err)
		}
		return send(chatEvent{Kind: evError, Err: err, Result: res})
	}
	finish := res.Finish
	if split != nil {
		reasoning, content, calls := split.Finish()
		if reasoning != "" || content != "" {
			if err := send(chatEvent{Kind: evDelta, Reasoning: reasoning, Text: content}); err != nil {
				return err
			}
		}
		for k, c := range job.plan.toolCalls(calls) {
			if err := send(chatEvent{Kind: evCall, Call: k, ID: c.ID, Name: c.Function.Name}); err != nil {
				return err
			}
			if err := send(chatEvent{Kind: evCall, Call: k, Text: c.Function.Arguments}); err != nil {
				return err
			}
		}
		if len(calls) > 0 && finish == "stop" {
			finish = "tool_calls"
		}
	}
	return send(chatEvent{Kind: evFinish, Finish: finish, Result: res})
}

// randomSeed is a seed for a request that gives none.
func randomSeed() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// chatAnswer is one choice's answer gathered from its events, for the
// renderers of a whole (non-streamed) answer.
type chatAnswer struct {
	reasoning, content strings.Builder
	calls              []toolCallJSON
	finish             string
	res                *result
	err                error
}

// add takes one event of the choice.
func (a *chatAnswer) add(ev chatEvent) {
	switch ev.Kind {
	case evDelta:
		a.reasoning.WriteString(ev.Reasoning)
		a.content.WriteString(ev.Text)
	case evCall:
		if ev.Name != "" {
			a.calls = append(a.calls, call(ev.ID, ev.Name, ""))
		} else if len(a.calls) > ev.Call {
			a.calls[ev.Call].Function.Arguments += ev.Text
		}
	case evFinish:
		a.finish, a.res = ev.Finish, ev.Result
	case evError:
		a.err = ev.Err
	}
}

// answers runs job as n choices and gathers their answers; the first
// choice's error is the error.
func (s *Server) answers(ctx context.Context, job *chatJob, n int) ([]*chatAnswer, error) {
	out := make([]*chatAnswer, max(n, 1))
	for i := range out {
		out[i] = &chatAnswer{}
	}
	err := s.runChat(ctx, job, n, func(ev chatEvent) error {
		a := out[ev.Choice]
		a.add(ev)
		return a.err
	})
	return out, err
}

// blocks are the answer as blocks (reasoning, text, calls): the
// reasoning when there is some, the text (also when empty, unless there
// are calls), the calls.
func (a *chatAnswer) blocks() []block {
	var out []block
	if r := a.reasoning.String(); r != "" {
		out = append(out, block{kind: "reasoning", text: r})
	}
	if c := a.content.String(); c != "" || len(a.calls) == 0 {
		out = append(out, block{kind: "text", text: c})
	}
	for _, c := range a.calls {
		out = append(out, block{kind: "call", id: c.ID, name: c.Function.Name, text: c.Function.Arguments})
	}
	return out
}

// nChoices reads a request's n: 1 when absent or null; else it must be an
// integer in [1, limit] (a 400 naming n).
func nChoices(top map[string]json.RawMessage, limit int) (int, error) {
	raw, ok := top["n"]
	if !ok || string(raw) == "null" {
		return 1, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		return 0, badRequest("n", "n: want an integer, got %s", raw) // 2.0 is 2, as decodeValue takes it
	}
	n := int(f)
	if n < 1 || n > limit {
		return 0, badRequest("n", "n must be in [1, %d] (the server's --max-n), got %d", limit, n)
	}
	return n, nil
}

// usageOf is the usage of a request's choices: the prompt once (and its
// cached tokens), every choice's generated tokens.
func usageOf(results []*result) map[string]any {
	var prompt, cached, completion int
	for i, r := range results {
		if r == nil {
			continue
		}
		if i == 0 || prompt == 0 {
			prompt, cached = r.PromptTokens, r.CachedTokens
		}
		completion += r.CompletionTokens
	}
	u := map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
	if cached > 0 {
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": cached}
	}
	return u
}
