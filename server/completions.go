package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/archc/archc/rt"
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

func usage(r *result) map[string]any {
	u := map[string]any{"prompt_tokens": r.PromptTokens, "completion_tokens": r.CompletionTokens, "total_tokens": r.PromptTokens + r.CompletionTokens}
	if r.CachedTokens > 0 {
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": r.CachedTokens}
	}
	return u
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
	id, created := newID("cmpl-"), time.Now().Unix()
	echo := ""
	if req.Echo && text != nil {
		echo = echoText(text, req.Prompt, ids)
	}
	choice := func(txt string, lps []tokenLogprob, offset int, finish any) map[string]any {
		c := map[string]any{"index": 0, "text": txt, "logprobs": nil, "finish_reason": finish}
		if ereq.Sampling.Logprobs {
			c["logprobs"] = completionLogprobs(lps, offset)
		}
		return c
	}
	chunk := func(choices []any) map[string]any {
		return map[string]any{"id": id, "object": "text_completion", "created": created, "model": s.cfg.Name, "choices": choices}
	}
	if !req.Stream {
		res, err := s.run(r.Context(), m, text, e, ereq, stops, func(string, []int32, []tokenLogprob) error { return nil })
		if err != nil {
			return err
		}
		c := choice(echo+res.Text, res.Logprobs, len(echo), res.Finish)
		c["token_ids"] = res.TokenIDs // archc's addition: the generated ids
		out := chunk([]any{c})
		out["usage"] = usage(res)
		writeJSON(w, out)
		return nil
	}
	ev := &sse{w: w}
	if echo != "" {
		if err := ev.send(chunk([]any{choice(echo, nil, 0, nil)})); err != nil {
			return err
		}
	}
	offset := len(echo)
	res, err := s.run(r.Context(), m, text, e, ereq, stops, func(piece string, ids []int32, lps []tokenLogprob) error {
		if piece == "" && len(ids) == 0 {
			return nil
		}
		c := choice(piece, lps, offset, nil)
		c["token_ids"] = ids
		err := ev.send(chunk([]any{c}))
		offset += len(piece)
		return err
	})
	if err != nil {
		if !ev.started {
			return err
		}
		ev.send(map[string]any{"error": map[string]any{"message": err.Error(), "type": "server_error"}})
		ev.done()
		return err
	}
	if err := ev.send(chunk([]any{choice("", nil, offset, res.Finish)})); err != nil {
		return err
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		u := chunk([]any{})
		u["usage"] = usage(res)
		ev.send(u)
	}
	ev.done()
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

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) error {
	m, text, e, err := s.ready()
	if err != nil {
		return err
	}
	var req chatRequest
	if err := decodeJSON(r, s.cfg.MaxBodyBytes, &req); err != nil {
		return err
	}
	plan, err := planChat(text, &req)
	if err != nil {
		return err
	}
	if plan.parseTools && plan.format.Name == "unrecognized" {
		ri := info(r.Context())
		ri.mu.Lock()
		ri.unparsedCalls = true
		ri.mu.Unlock()
	}
	ids := plan.ids
	var encoded *rt.Encoded
	if len(plan.images) > 0 {
		if ids, encoded, err = plan.promptWithImages(r.Context(), s, m, text); err != nil {
			return err
		}
	}
	ereq, stops, err := s.options(m, text, req.sampling, len(ids), m.MaxLen()+1-len(ids))
	if err != nil {
		return err
	}
	ereq.Encoded = encoded
	if req.Prediction != nil {
		pred, err := req.Prediction.text()
		if err != nil {
			return err
		}
		if ereq.Prediction, err = text.Tokenizer.Encode(pred, false); err != nil {
			return badRequest("prediction", "%v", err)
		}
	}
	if req.TopLogprobs != nil {
		if *req.TopLogprobs < 0 || *req.TopLogprobs > 20 || !req.Logprobs {
			return badRequest("top_logprobs", "top_logprobs must be in [0, 20] and needs logprobs: true")
		}
		ereq.Sampling.TopLogprobs = *req.TopLogprobs
	}
	ereq.Sampling.Logprobs = req.Logprobs
	if ereq.Sampling.LogitBias, err = logitBias(m, req.LogitBias); err != nil {
		return err
	}
	if plan.lark != "" {
		vocab, err := s.vocab.get(m, text)
		if err != nil {
			return err
		}
		ereq.Sampling.Grammar = &rt.Grammar{Lark: plan.lark, Vocab: vocab}
	}
	ereq.Prompt = ids
	id, created := newID("chatcmpl-"), time.Now().Unix()
	chunk := func(choices []any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": s.cfg.Name, "choices": choices}
	}
	split := plan.splitter()
	if !req.Stream {
		res, err := s.run(r.Context(), m, text, e, ereq, stops, func(string, []int32, []tokenLogprob) error { return nil })
		if err != nil {
			return plan.grammarError(err)
		}
		msg := map[string]any{"role": "assistant", "content": res.Text}
		finish := res.Finish
		if split != nil {
			reasoning, content := split.Push(res.Text)
			r2, c2, calls := split.Finish()
			reasoning, content = reasoning+r2, content+c2
			msg["content"] = content
			if reasoning != "" {
				msg["reasoning_content"] = reasoning
			}
			if len(calls) > 0 {
				if content == "" {
					msg["content"] = nil
				}
				msg["tool_calls"] = plan.toolCalls(calls)
				if finish == "stop" {
					finish = "tool_calls"
				}
			}
		}
		c := map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish, "token_ids": res.TokenIDs}
		if req.Logprobs {
			c["logprobs"] = chatLogprobs(res.Logprobs)
		}
		writeJSON(w, map[string]any{"id": id, "object": "chat.completion", "created": created, "model": s.cfg.Name, "choices": []any{c}, "usage": usage(res)})
		return nil
	}
	ev := &sse{w: w}
	started := false
	start := func() error {
		if started {
			return nil
		}
		started = true
		return ev.send(chunk([]any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": ""}, "logprobs": nil, "finish_reason": nil}}))
	}
	if plan.lark == "" { // with a grammar, a grammar error before the first token is still a 400
		if err := start(); err != nil {
			return err
		}
	}
	res, err := s.run(r.Context(), m, text, e, ereq, stops, func(piece string, ids []int32, lps []tokenLogprob) error {
		if piece == "" && len(ids) == 0 {
			return nil
		}
		delta := map[string]any{"content": piece}
		if split != nil {
			reasoning, content := split.Push(piece)
			delta = map[string]any{}
			if reasoning != "" {
				delta["reasoning_content"] = reasoning
			}
			if content != "" {
				delta["content"] = content
			}
			if len(delta) == 0 && !req.Logprobs {
				return nil // held back: it may be a marker or a call
			}
		}
		if err := start(); err != nil {
			return err
		}
		c := map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": nil, "token_ids": ids}
		if req.Logprobs {
			c["logprobs"] = chatLogprobs(lps)
		}
		return ev.send(chunk([]any{c}))
	})
	if err != nil {
		if !started {
			return plan.grammarError(err)
		}
		ev.send(map[string]any{"error": map[string]any{"message": err.Error(), "type": "server_error"}})
		ev.done()
		return err
	}
	if err := start(); err != nil {
		return err
	}
	finish := res.Finish
	if split != nil {
		reasoning, content, calls := split.Finish()
		delta := map[string]any{}
		if reasoning != "" {
			delta["reasoning_content"] = reasoning
		}
		if content != "" {
			delta["content"] = content
		}
		if len(delta) > 0 {
			ev.send(chunk([]any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": nil}}))
		}
		for i, tc := range plan.toolCalls(calls) {
			head := map[string]any{"index": i, "id": tc["id"], "type": "function", "function": map[string]any{"name": tc["function"].(map[string]any)["name"], "arguments": ""}}
			ev.send(chunk([]any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{head}}, "logprobs": nil, "finish_reason": nil}}))
			args := map[string]any{"index": i, "function": map[string]any{"arguments": tc["function"].(map[string]any)["arguments"]}}
			ev.send(chunk([]any{map[string]any{"index": 0, "delta": map[string]any{"tool_calls": []any{args}}, "logprobs": nil, "finish_reason": nil}}))
		}
		if len(calls) > 0 && finish == "stop" {
			finish = "tool_calls"
		}
	}
	ev.send(chunk([]any{map[string]any{"index": 0, "delta": map[string]any{}, "logprobs": nil, "finish_reason": finish}}))
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		u := chunk([]any{})
		u["usage"] = usage(res)
		ev.send(u)
	}
	ev.done()
	return nil
}
