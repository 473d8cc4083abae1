package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// messagesRequest is POST /v1/messages (Anthropic's Messages API), the
// fields it translates; fields.go refuses the ones it does not.
type messagesRequest struct {
	Model         string          `json:"model"`
	MaxTokens     *int            `json:"max_tokens"`
	System        json.RawMessage `json:"system"`
	Messages      []anthropicMsg  `json:"messages"`
	StopSequences []string        `json:"stop_sequences"`
	Temperature   *float64        `json:"temperature"`
	TopP          *float64        `json:"top_p"`
	TopK          *int            `json:"top_k"`
	Stream        bool            `json:"stream"`
}

type anthropicMsg struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// messagesInput parses a Messages (or count_tokens) request into its
// fields and chat turns: system (a string or text blocks) first, then the
// user and assistant messages, whose content is a string or text blocks.
// needMax: max_tokens is required (Messages, not count_tokens). Errors
// are 400s naming the field.
func messagesInput(body []byte, needMax bool) (*messagesRequest, []chatMessage, error) {
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, nil, badRequest(te.Field, "%s: expected %s, got %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return nil, nil, badRequest("", "invalid request: %v", unwrapJSON(err))
	}
	if needMax && req.MaxTokens == nil {
		return nil, nil, badRequest("max_tokens", "max_tokens is required")
	}
	if len(req.Messages) == 0 {
		return nil, nil, badRequest("messages", "messages must not be empty")
	}
	var msgs []chatMessage
	system, err := textOf(req.System, "system", "text")
	if err != nil {
		return nil, nil, err
	}
	if system != "" {
		msgs = append(msgs, chatMessage{Role: "system", Content: system})
	}
	for i, m := range req.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		if m.Role != "user" && m.Role != "assistant" {
			return nil, nil, badRequest(field+".role", "%s: role %q is not user or assistant (the system prompt is the system field)", field, m.Role)
		}
		text, err := textOf(m.Content, field+".content", "text")
		if err != nil {
			return nil, nil, err
		}
		msgs = append(msgs, chatMessage{Role: m.Role, Content: text})
	}
	return &req, msgs, nil
}

// anthropicError writes err in Anthropic's error shape,
// {"type": "error", "error": {"type", "message"}}, with its status.
func anthropicError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = &apiError{Status: http.StatusInternalServerError, Message: err.Error()}
	}
	typ := map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error", 404: "not_found_error",
		405: "invalid_request_error", 413: "request_too_large", 429: "rate_limit_error", 503: "overloaded_error"}[ae.Status]
	if typ == "" {
		typ = "api_error"
	}
	msg := ae.Message
	if p, ok := ae.Param.(string); ok && p != "" && !strings.Contains(msg, p) {
		msg = p + ": " + msg
	}
	w.Header().Set("Content-Type", "application/json")
	if ae.Status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.WriteHeader(ae.Status)
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

// countTokens is POST /v1/messages/count_tokens: {"input_tokens": N}, the
// prompt tokens the same /v1/messages request would have.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) error {
	_, text, _, err := s.ready()
	if err != nil {
		return err
	}
	var body json.RawMessage
	if err := decodeJSON(r, s.cfg.MaxBodyBytes, &body); err != nil {
		return err
	}
	_, msgs, err := messagesInput(body, false)
	if err != nil {
		return err
	}
	ids, err := chatPrompt(text, toChat(msgs))
	if err != nil {
		return err
	}
	writeJSON(w, map[string]any{"input_tokens": len(ids)})
	return nil
}

func toChat(msgs []chatMessage) []message {
	out := make([]message, len(msgs))
	for i, m := range msgs {
		out[i] = message{Role: m.Role, Content: m.Content}
	}
	return out
}

// stopReason is Anthropic's stop_reason and stop_sequence for a chat
// answer: max_tokens for "length"; for "stop", stop_sequence when the
// generated ids, decoded, go on with one of the stop strings after the
// answer's text (a stop string ended it), else end_turn (an end token).
func (s *Server) stopReason(finish, content string, ids []int32, stops []string) (string, any) {
	switch finish {
	case "length":
		return "max_tokens", nil
	case "stop":
		_, text, _, err := s.ready()
		if err == nil && text != nil && len(stops) > 0 {
			full := text.Tokenizer.Decode(ids)
			if rest, ok := strings.CutPrefix(full, content); ok {
				best, at := "", len(rest)+1
				for _, st := range stops {
					if i := strings.Index(rest, st); i >= 0 && i < at {
						best, at = st, i
					}
				}
				if best != "" {
					return "stop_sequence", best
				}
			}
		}
		return "end_turn", nil
	}
	return "end_turn", nil
}

// messages is POST /v1/messages: Anthropic's Messages API over chat
// completions, streamed as its events with "stream": true. Errors are in
// Anthropic's shape (api writes them so for /v1/messages paths).
func (s *Server) messages(w http.ResponseWriter, r *http.Request) error {
	_, text, _, err := s.ready()
	if err != nil {
		return err
	}
	var body json.RawMessage
	if err := decodeJSON(r, s.cfg.MaxBodyBytes, &body); err != nil {
		return err
	}
	req, msgs, err := messagesInput(body, true)
	if err != nil {
		return err
	}
	prompt, err := chatPrompt(text, toChat(msgs))
	if err != nil {
		return err
	}
	chatReq := map[string]any{"messages": msgs, "max_tokens": *req.MaxTokens, "stream": req.Stream}
	if req.Stream {
		chatReq["stream_options"] = map[string]any{"include_usage": true}
	}
	if len(req.StopSequences) > 0 {
		chatReq["stop"] = req.StopSequences
	}
	for k, v := range map[string]any{"temperature": req.Temperature, "top_p": req.TopP, "top_k": req.TopK} {
		if !isNilPtr(v) {
			chatReq[k] = v
		}
	}
	id := newID("msg_")
	usage := func(a *chatAnswer) map[string]any {
		u := map[string]any{"input_tokens": len(prompt), "output_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
		if a != nil && a.Usage != nil {
			u["input_tokens"], u["output_tokens"] = a.Usage.PromptTokens, a.Usage.CompletionTokens
			if a.Usage.PromptTokensDetails != nil {
				u["cache_read_input_tokens"] = a.Usage.PromptTokensDetails.CachedTokens
			}
		}
		return u
	}
	events := s.chatCall(r.Context(), r, chatReq)
	if !req.Stream {
		var last subEvent
		for ev := range events {
			last = ev
		}
		if err := chatError(last); err != nil {
			return err
		}
		var a chatAnswer
		if err := json.Unmarshal(last.rest, &a); err != nil || len(a.Choices) == 0 {
			return fmt.Errorf("the chat answer could not be read: %v", err)
		}
		c := a.Choices[0]
		finish := ""
		if c.FinishReason != nil {
			finish = *c.FinishReason
		}
		reason, seq := s.stopReason(finish, c.Message.Content, c.TokenIDs, req.StopSequences)
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": s.cfg.Name,
			"content":     []any{map[string]any{"type": "text", "text": c.Message.Content}},
			"stop_reason": reason, "stop_sequence": seq, "usage": usage(&a)})
		return nil
	}
	started := false
	var content, finish string
	var ids []int32
	var last *chatAnswer
	for ev := range events {
		if ev.done {
			if err := chatError(ev); err != nil {
				if !started {
					return err
				}
				sseEvent(w, "error", map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": err.Message}})
				return err
			}
			continue
		}
		if ev.data == "[DONE]" {
			continue
		}
		var a chatAnswer
		if json.Unmarshal([]byte(ev.data), &a) != nil {
			continue
		}
		if a.Error != nil {
			sseEvent(w, "error", map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": a.Error.Message}})
			return a.Error
		}
		if !started {
			startSSE(w)
			started = true
			sseEvent(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
				"id": id, "type": "message", "role": "assistant", "model": s.cfg.Name, "content": []any{},
				"stop_reason": nil, "stop_sequence": nil, "usage": usage(nil)}})
			sseEvent(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
			sseEvent(w, "ping", map[string]any{"type": "ping"})
		}
		if a.Usage != nil {
			last = &a
		}
		for _, c := range a.Choices {
			ids = append(ids, c.TokenIDs...)
			if c.Delta.Content != "" {
				content += c.Delta.Content
				if err := sseEvent(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": c.Delta.Content}}); err != nil {
					return err
				}
			}
			if c.FinishReason != nil {
				finish = *c.FinishReason
			}
		}
	}
	if !started {
		return fmt.Errorf("the chat stream ended without a chunk")
	}
	reason, seq := s.stopReason(finish, content, ids, req.StopSequences)
	sseEvent(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	u := usage(last)
	sseEvent(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": reason, "stop_sequence": seq}, "usage": map[string]any{"output_tokens": u["output_tokens"]}})
	return sseEvent(w, "message_stop", map[string]any{"type": "message_stop"})
}

// isNilPtr reports whether v is a nil *float64 or *int.
func isNilPtr(v any) bool {
	switch p := v.(type) {
	case *float64:
		return p == nil
	case *int:
		return p == nil
	}
	return v == nil
}
