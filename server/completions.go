package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// sse writes server-sent events: "data: JSON\n\n" per chunk, then
// "data: [DONE]\n\n".
type sse struct {
	w       http.ResponseWriter
	started bool
}

func (s *sse) send(v any) error {
	if !s.started {
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
		s.w.WriteHeader(http.StatusOK)
		s.started = true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", b); err != nil {
		return err
	}
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

func (s *sse) done() {
	fmt.Fprint(s.w, "data: [DONE]\n\n")
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// completionLogprobs is the legacy completions logprobs object.
func completionLogprobs(lps []tokenLogprob, offset int) map[string]any {
	tokens := make([]string, len(lps))
	probs := make([]float32, len(lps))
	tops := make([]map[string]float32, len(lps))
	offsets := make([]int, len(lps))
	for i, lp := range lps {
		tokens[i], probs[i], offsets[i] = lp.Token, lp.Prob, offset
		offset += len(lp.Token)
		tops[i] = map[string]float32{}
		for _, a := range lp.Top {
			tops[i][a.Token] = a.Prob
		}
	}
	return map[string]any{"tokens": tokens, "token_logprobs": probs, "top_logprobs": tops, "text_offset": offsets}
}

func (s *Server) completions(w http.ResponseWriter, r *http.Request) error {
	m, text, e, err := s.ready()
	if err != nil {
		return err
	}
	var req completionRequest
	if err := decodeJSON(r, s.cfg.MaxBodyBytes, &req); err != nil {
		return err
	}
	if req.Prompt == nil {
		return badRequest("prompt", "prompt is required")
	}
	var ids []int32
	if req.Prompt.Text != nil {
		if text == nil {
			return badRequest("prompt", "the model has no tokenizer: give the prompt as token ids")
		}
		if ids, err = text.Tokenizer.Encode(*req.Prompt.Text, true); err != nil {
			return badRequest("prompt", "%v", err)
		}
	} else {
		ids = req.Prompt.IDs
	}
	if len(ids) == 0 {
		return badRequest("prompt", "the prompt is empty")
	}
	for _, id := range ids {
		if id < 0 || int64(id) >= m.Vocab {
			return badRequest("prompt", "token id %d is outside the vocabulary [0, %d)", id, m.Vocab)
		}
	}
	if err := s.noImagePlaceholders(m, req.Prompt.Text, ids, "prompt"); err != nil {
		return err
	}
	ereq, stops, err := s.options(m, text, req.sampling, len(ids), s.cfg.DefaultMaxTokens)
	if err != nil {
		return err
	}
	if req.Logprobs != nil {
		if *req.Logprobs < 0 || *req.Logprobs > 20 {
			return badRequest("logprobs", "logprobs must be in [0, 20], got %d", *req.Logprobs)
		}
		ereq.Sampling.Logprobs, ereq.Sampling.TopLogprobs = true, *req.Logprobs
	}
	if ereq.Sampling.LogitBias, err = logitBias(m, req.LogitBias); err != nil {
		return err
	}
	ereq.Prompt = ids
	job := &chatJob{m: m, text: text, e: e, req: ereq, stops: stops, seeded: req.Seed != nil}
	n := info(r.Context()).choices()
	id, created := newID("cmpl-"), time.Now().Unix()
	echo := ""
	if req.Echo && text != nil {
		echo = echoText(text, req.Prompt, ids)
	}
	choice := func(i int, txt string, lps []tokenLogprob, offset int, finish any) map[string]any {
		c := map[string]any{"index": i, "text": txt, "logprobs": nil, "finish_reason": finish}
		if ereq.Sampling.Logprobs {
			c["logprobs"] = completionLogprobs(lps, offset)
		}
		return c
	}
	chunk := func(choices []any) map[string]any {
		return map[string]any{"id": id, "object": "text_completion", "created": created, "model": s.cfg.Name, "choices": choices}
	}
	if !req.Stream {
		as, err := s.answers(r.Context(), job, n)
		if err != nil {
			return err
		}
		choices, results := make([]any, len(as)), make([]*result, len(as))
		for i, a := range as {
			c := choice(i, echo+a.res.Text, a.res.Logprobs, len(echo), a.res.Finish)
			c["token_ids"] = a.res.TokenIDs // archc's addition: the generated ids
			choices[i], results[i] = c, a.res
		}
		out := chunk(choices)
		out["usage"] = usageOf(results)
		writeJSON(w, out)
		return nil
	}
	ev := &sse{w: w}
	offsets := make([]int, n)
	results := make([]*result, n)
	err = s.runChat(r.Context(), job, n, func(e chatEvent) error {
		i := e.Choice
		switch e.Kind {
		case evBegin:
			offsets[i] = len(echo)
			if echo != "" {
				return ev.send(chunk([]any{choice(i, echo, nil, 0, nil)}))
			}
		case evDelta:
			c := choice(i, e.Text, e.Logprobs, offsets[i], nil)
			c["token_ids"] = e.IDs
			offsets[i] += len(e.Text)
			return ev.send(chunk([]any{c}))
		case evFinish:
			results[i] = e.Result
			return ev.send(chunk([]any{choice(i, "", nil, offsets[i], e.Result.Finish)}))
		case evError:
			return ev.fail(e.Err, n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		u := chunk([]any{})
		u["usage"] = usageOf(results)
		ev.send(u)
	}
	ev.done()
	return nil
}

// fail ends a choice that failed: before anything is written, its error
// is the answer (runChat's error); after, an error event in the stream,
// which for a request of one choice is its end (the error is still
// runChat's, for the log) and for n > 1 lets the other choices go on.
func (s *sse) fail(err error, n int) error {
	if !s.started {
		return err
	}
	s.send(map[string]any{"error": map[string]any{"message": err.Error(), "type": "server_error"}})
	if n == 1 {
		s.done()
		return err
	}
	return nil
}

// chatLogprobs is the chat logprobs object: {"content": [...]}.
func chatLogprobs(lps []tokenLogprob) map[string]any {
	content := make([]any, len(lps))
	for i, lp := range lps {
		top := make([]any, len(lp.Top))
		for j, a := range lp.Top {
			top[j] = map[string]any{"token": a.Token, "logprob": a.Prob, "bytes": bytesJSON(a.Bytes)}
		}
		content[i] = map[string]any{"token": lp.Token, "logprob": lp.Prob, "bytes": bytesJSON(lp.Bytes), "top_logprobs": top}
	}
	return map[string]any{"content": content}
}

// bytesJSON is a byte list as JSON numbers (OpenAI's "bytes").
func bytesJSON(b []byte) []int {
	out := make([]int, len(b))
	for i, c := range b {
		out[i] = int(c)
	}
	return out
}

// chatCompletions is POST /v1/chat/completions: the request's n choices
// rendered as a chat completion, or as its chunks with "stream": true.
func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) error {
	if _, _, _, err := s.ready(); err != nil {
		return err
	}
	var req chatRequest
	if err := decodeJSON(r, s.cfg.MaxBodyBytes, &req); err != nil {
		return err
	}
	job, err := s.prepare(r.Context(), req.input(), req.sampling)
	if err != nil {
		return err
	}
	n := info(r.Context()).choices()
	id, created := newID("chatcmpl-"), time.Now().Unix()
	split := job.plan.splitter() != nil
	if !req.Stream {
		as, err := s.answers(r.Context(), job, n)
		if err != nil {
			return err
		}
		choices, results := make([]any, len(as)), make([]*result, len(as))
		for i, a := range as {
			res := a.res
			msg := map[string]any{"role": "assistant", "content": res.Text}
			if split {
				content := a.content.String()
				msg["content"] = content
				if r := a.reasoning.String(); r != "" {
					msg["reasoning_content"] = r
				}
				if len(a.calls) > 0 {
					if content == "" {
						msg["content"] = nil
					}
					msg["tool_calls"] = a.calls
				}
			}
			c := map[string]any{"index": i, "message": msg, "logprobs": nil, "finish_reason": a.finish, "token_ids": res.TokenIDs}
			if req.Logprobs {
				c["logprobs"] = chatLogprobs(res.Logprobs)
			}
			choices[i], results[i] = c, res
		}
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": s.cfg.Name, "choices": choices, "usage": usageOf(results)})
		return nil
	}
	ev := &sse{w: w}
	chunk := func(choices ...any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": s.cfg.Name, "choices": choices}
	}
	delta := func(i int, d map[string]any) map[string]any {
		return chunk(map[string]any{"index": i, "delta": d, "logprobs": nil, "finish_reason": nil})
	}
	results := make([]*result, n)
	err = s.runChat(r.Context(), job, n, func(e chatEvent) error {
		i := e.Choice
		switch e.Kind {
		case evBegin:
			return ev.send(delta(i, map[string]any{"role": "assistant", "content": ""}))
		case evDelta:
			d := map[string]any{"content": e.Text}
			if split {
				d = map[string]any{}
				if e.Reasoning != "" {
					d["reasoning_content"] = e.Reasoning
				}
				if e.Text != "" {
					d["content"] = e.Text
				}
			}
			if !e.Step {
				return ev.send(delta(i, d))
			}
			c := map[string]any{"index": i, "delta": d, "logprobs": nil, "finish_reason": nil, "token_ids": e.IDs}
			if req.Logprobs {
				c["logprobs"] = chatLogprobs(e.Logprobs)
			}
			return ev.send(chunk(c))
		case evCall:
			tc := map[string]any{"index": e.Call, "function": map[string]any{"arguments": e.Text}}
			if e.Name != "" {
				tc = map[string]any{"index": e.Call, "id": e.ID, "type": "function", "function": map[string]any{"name": e.Name, "arguments": ""}}
			}
			return ev.send(delta(i, map[string]any{"tool_calls": []any{tc}}))
		case evFinish:
			results[i] = e.Result
			return ev.send(chunk(map[string]any{"index": i, "delta": map[string]any{}, "logprobs": nil, "finish_reason": e.Finish}))
		case evError:
			return ev.fail(e.Err, n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		u := chunk()
		u["choices"] = []any{}
		u["usage"] = usageOf(results)
		ev.send(u)
	}
	ev.done()
	return nil
}
