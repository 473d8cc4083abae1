package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// messagesRequest is POST /v1/messages (Anthropic's Messages API), the
// fields it translates; fields.go refuses the ones it does not.
type messagesRequest struct {
	Model         string            `json:"model"`
	MaxTokens     *int              `json:"max_tokens"`
	System        json.RawMessage   `json:"system"`
	Messages      []anthropicMsg    `json:"messages"`
	StopSequences []string          `json:"stop_sequences"`
	Temperature   *float64          `json:"temperature"`
	TopP          *float64          `json:"top_p"`
	TopK          *int              `json:"top_k"`
	Stream        bool              `json:"stream"`
	Tools         []json.RawMessage `json:"tools"`
	ToolChoice    json.RawMessage   `json:"tool_choice"`
	OutputConfig  *struct {
		Format json.RawMessage `json:"format"`
		Effort *string         `json:"effort"`
	} `json:"output_config"`
	OutputFormat json.RawMessage `json:"output_format"` // the older name of output_config.format
}

type anthropicMsg struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// contentBlock is one block of a Messages turn's content.
type contentBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	Thinking  *string         `json:"thinking"`
	// An image block's source: {"type": "base64", "media_type", "data"}
	// or {"type": "url", "url"}.
	Source *struct {
		Type      string `json:"type"`
		MediaType string `json:"media_type"`
		Data      string `json:"data"`
		URL       string `json:"url"`
	} `json:"source"`
}

// messagesInput parses a Messages (or count_tokens) request into its
// fields and chat turns: system (a string or text blocks) first, then the
// user and assistant messages, whose content is a string or blocks: text,
// an assistant's tool_use (its calls) and thinking (its
// reasoning_content), a user's tool_result (tool turns, before the user's
// text). needMax: max_tokens is required (Messages, not count_tokens).
// Errors are 400s naming the field.
func messagesInput(body []byte, needMax bool) (*messagesRequest, []chatMessage, error) {
	var req messagesRequest
	if err := decodeValue(body, &req, ""); err != nil {
		return nil, nil, requestError(err)
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
			return nil, nil, badRequest(field+".role", "%s.role %q is not user or assistant (the system prompt is the system field)", field, m.Role)
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			msgs = append(msgs, chatMessage{Role: m.Role, Content: s})
			continue
		}
		var blocks []contentBlock
		if t := bytes.TrimSpace(m.Content); len(t) == 0 || t[0] != '[' {
			return nil, nil, badRequest(field+".content", "%s.content: expected a string or an array of content blocks", field)
		}
		if err := decodeValue(m.Content, &blocks, field+".content"); err != nil {
			return nil, nil, requestError(err)
		}
		turn := chatMessage{Role: m.Role}
		images := false
		var results []chatMessage
		for j, b := range blocks {
			bf := fmt.Sprintf("%s.content[%d]", field, j)
			switch {
			case b.Type == "text" && b.Text != nil:
				turn.Content += *b.Text
				turn.Parts = append(turn.Parts, textPart(*b.Text))
			case b.Type == "image" && m.Role == "user":
				switch {
				case b.Source != nil && b.Source.Type == "base64":
					turn.Parts = append(turn.Parts, imagePart("data:"+b.Source.MediaType+";base64,"+b.Source.Data, bf+".source"))
				case b.Source != nil && b.Source.Type == "url":
					turn.Parts = append(turn.Parts, imagePart(b.Source.URL, bf+".source"))
				default:
					return nil, nil, badRequest(bf+".source", "%s.source must be {\"type\": \"base64\", \"media_type\", \"data\"} or {\"type\": \"url\", \"url\"}", bf)
				}
				images = true
			case b.Type == "tool_use" && m.Role == "assistant":
				if b.ID == "" || b.Name == "" {
					return nil, nil, badRequest(bf, "%s: a tool_use block needs id and name", bf)
				}
				args := "{}"
				if len(b.Input) > 0 && string(b.Input) != "null" {
					var obj map[string]json.RawMessage
					if json.Unmarshal(b.Input, &obj) != nil {
						return nil, nil, badRequest(bf+".input", "%s.input must be an object", bf)
					}
					args = compactJSON(b.Input)
				}
				turn.ToolCalls = append(turn.ToolCalls, call(b.ID, b.Name, args))
			case b.Type == "thinking" && m.Role == "assistant" && b.Thinking != nil:
				turn.ReasoningContent += *b.Thinking
			case b.Type == "tool_result" && m.Role == "user":
				if b.ToolUseID == "" {
					return nil, nil, badRequest(bf+".tool_use_id", "%s: a tool_result block needs tool_use_id", bf)
				}
				out, err := textOf(b.Content, bf+".content", "text")
				if err != nil {
					return nil, nil, err
				}
				results = append(results, chatMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: out})
			default:
				return nil, nil, badRequest(bf, "%s: content block type %q is not supported in the %s's turn (text, tool_use and thinking in the assistant's; text, image and tool_result in the user's)", bf, b.Type, m.Role)
			}
		}
		if !images {
			turn.Parts = nil
		}
		msgs = append(msgs, results...)
		if len(results) == 0 || turn.Content != "" {
			msgs = append(msgs, turn)
		}
	}
	return &req, msgs, nil
}

// compactJSON is JSON text without insignificant space (keys in their
// order).
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// messagesChat is the chat input and sampling fields of a Messages
// request: its turns, tools, tool_choice, output format and effort.
func messagesChat(req *messagesRequest, msgs []chatMessage) (*chatInput, sampling, error) {
	in := &chatInput{turns: msgs, names: messagesNames}
	p := sampling{MaxTokens: req.MaxTokens, Stop: req.StopSequences, Temperature: req.Temperature, TopP: req.TopP, TopK: req.TopK, Stream: req.Stream}
	for i, raw := range req.Tools {
		var t struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description json.RawMessage `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
			return nil, p, badRequest(fmt.Sprintf("tools[%d]", i), "tools[%d]: expected a tool object, got %s", i, jsonValueKind(raw))
		}
		if err := decodeValue(raw, &t, fmt.Sprintf("tools[%d]", i)); err != nil {
			return nil, p, requestError(err)
		}
		if t.Type != "" && t.Type != "custom" {
			return nil, p, badRequest(fmt.Sprintf("tools[%d].type", i), "tools[%d].type is %q; only client tools (name, description, input_schema) are supported, not Anthropic's server tools", i, t.Type)
		}
		tool, err := chatTool(i, t.Name, t.Description, t.InputSchema)
		if err != nil {
			return nil, p, err
		}
		in.tools = append(in.tools, tool)
	}
	if len(req.ToolChoice) > 0 && string(req.ToolChoice) != "null" {
		var tc struct {
			Type                   string `json:"type"`
			Name                   string `json:"name"`
			DisableParallelToolUse *bool  `json:"disable_parallel_tool_use"`
		}
		if err := json.Unmarshal(req.ToolChoice, &tc); err != nil {
			return nil, p, badRequest("tool_choice", "tool_choice must be {\"type\": \"auto\" | \"any\" | \"tool\" | \"none\"}")
		}
		switch tc.Type {
		case "auto", "none":
			in.choice = toolChoice{mode: tc.Type}
		case "any":
			in.choice = toolChoice{mode: "required", spelled: `{"type": "any"}`}
		case "tool":
			in.choice = toolChoice{mode: "named", name: tc.Name}
		default:
			return nil, p, badRequest("tool_choice.type", "tool_choice.type %q: use auto, any, tool or none", tc.Type)
		}
		if tc.DisableParallelToolUse != nil {
			parallel := !*tc.DisableParallelToolUse
			in.parallel = &parallel
		}
	}
	format, field := req.OutputFormat, "output_format"
	if c := req.OutputConfig; c != nil {
		if len(c.Format) > 0 && string(c.Format) != "null" {
			format, field = c.Format, "output_config.format"
		}
		if c.Effort != nil {
			in.effort = *c.Effort
		}
	}
	if len(format) > 0 && string(format) != "null" {
		var f struct {
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		}
		if json.Unmarshal(format, &f) != nil || f.Type != "json_schema" || len(f.Schema) == 0 {
			return nil, p, badRequest(field, "%s must be {\"type\": \"json_schema\", \"schema\": {...}}", field)
		}
		in.format = jsonSchemaFormat("output", f.Schema, nil)
	}
	return in, p, nil
}

// messagesNames are the Messages API's names for the fields a chat plan
// checks.
var messagesNames = &fieldNames{messages: "messages", tool: "tools[%d]", toolParams: "input_schema", format: "output_config.format",
	formatJSON: "output_config.format", schema: "output_config.format", effort: "output_config.effort", maxTokens: "max_tokens", stop: "stop_sequences"}

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

// messagesPlan parses a Messages request into its chat input and
// sampling fields.
func (s *Server) messagesPlan(r *http.Request, needMax bool) (*messagesRequest, *chatInput, sampling, error) {
	var body json.RawMessage
	if err := decodeJSON(r, s.cfg.MaxBodyBytes, &body); err != nil {
		return nil, nil, sampling{}, err
	}
	req, msgs, err := messagesInput(body, needMax)
	if err != nil {
		return nil, nil, sampling{}, err
	}
	in, p, err := messagesChat(req, msgs)
	return req, in, p, err
}

// countTokens is POST /v1/messages/count_tokens: {"input_tokens": N}, the
// prompt tokens the same /v1/messages request would have.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) error {
	_, text, _, err := s.ready()
	if err != nil {
		return err
	}
	_, in, _, err := s.messagesPlan(r, false)
	if err != nil {
		return err
	}
	p, err := plan(text, in)
	if err != nil {
		return err
	}
	writeJSON(w, map[string]any{"input_tokens": len(p.ids)})
	return nil
}

// stopReason is Anthropic's stop_reason and stop_sequence for a chat
// answer: max_tokens for "length", tool_use for "tool_calls"; for "stop",
// stop_sequence when the generated ids, decoded, go on with one of the
// stop strings after the answer's text (a stop string ended it), else
// end_turn (an end token).
func (s *Server) stopReason(finish, content string, ids []int32, stops []string) (string, any) {
	switch finish {
	case "length":
		return "max_tokens", nil
	case "tool_calls":
		return "tool_use", nil
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

// messages is POST /v1/messages: Anthropic's Messages API, rendered
// from the chat core's events, streamed as its events with "stream":
// true. Errors are in Anthropic's shape (api writes them so for
// /v1/messages paths).
func (s *Server) messages(w http.ResponseWriter, r *http.Request) error {
	if _, _, _, err := s.ready(); err != nil {
		return err
	}
	req, in, p, err := s.messagesPlan(r, true)
	if err != nil {
		return err
	}
	job, err := s.prepare(r.Context(), in, p)
	if err != nil {
		return err
	}
	id := newID("msg_")
	usage := func(res *result) map[string]any {
		out := map[string]any{"input_tokens": len(job.req.Prompt), "output_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
		if res != nil {
			out["input_tokens"], out["output_tokens"], out["cache_read_input_tokens"] = res.PromptTokens, res.CompletionTokens, res.CachedTokens
		}
		return out
	}
	if !req.Stream {
		o, err := s.answer(r, job)
		if err != nil {
			return err
		}
		content := make([]any, len(o.blocks))
		for i := range o.blocks {
			content[i] = contentOf(&o.blocks[i], true)
		}
		reason, seq := s.stopReason(o.finish, o.text(), o.res.TokenIDs, req.StopSequences)
		writeJSON(w, map[string]any{"id": id, "type": "message", "role": "assistant", "model": s.cfg.Name,
			"content": content, "stop_reason": reason, "stop_sequence": seq, "usage": usage(o.res)})
		return nil
	}
	sink := &messagesSink{w: w, start: map[string]any{"id": id, "type": "message", "role": "assistant", "model": s.cfg.Name, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": usage(nil)}}
	o, err := s.stream(r, job, sink)
	if err != nil {
		return err
	}
	reason, seq := s.stopReason(o.finish, o.text(), o.res.TokenIDs, req.StopSequences)
	sseEvent(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": reason, "stop_sequence": seq},
		"usage": usage(o.res)}) // the final counts, cached tokens included (the SDK takes them over message_start's)
	return sseEvent(w, "message_stop", map[string]any{"type": "message_stop"})
}

// contentOf is a block as a Messages content block: text, thinking, or
// tool_use (whose input is the call's arguments as an object; empty while
// streamed, which sends them as input_json_delta).
func contentOf(b *block, done bool) map[string]any {
	switch b.kind {
	case "reasoning":
		t := ""
		if done {
			t = b.text
		}
		return map[string]any{"type": "thinking", "thinking": t, "signature": ""}
	case "call":
		input := json.RawMessage("{}")
		if done && json.Valid([]byte(b.text)) && strings.HasPrefix(strings.TrimSpace(b.text), "{") {
			input = json.RawMessage(b.text)
		}
		return map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": input}
	}
	t := ""
	if done {
		t = b.text
	}
	return map[string]any{"type": "text", "text": t}
}

// messagesSink writes a streamed answer as the Messages API's events:
// message_start and ping, then per block content_block_start, its deltas
// (text_delta, thinking_delta, input_json_delta) and content_block_stop.
type messagesSink struct {
	w     http.ResponseWriter
	start map[string]any
}

func (k *messagesSink) begin() error {
	startSSE(k.w)
	if err := sseEvent(k.w, "message_start", map[string]any{"type": "message_start", "message": k.start}); err != nil {
		return err
	}
	return sseEvent(k.w, "ping", map[string]any{"type": "ping"})
}

func (k *messagesSink) open(i int, b *block) error {
	return sseEvent(k.w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": contentOf(b, false)})
}

func (k *messagesSink) delta(i int, b *block, d string) error {
	var delta map[string]any
	switch b.kind {
	case "reasoning":
		delta = map[string]any{"type": "thinking_delta", "thinking": d}
	case "call":
		delta = map[string]any{"type": "input_json_delta", "partial_json": d}
	default:
		delta = map[string]any{"type": "text_delta", "text": d}
	}
	return sseEvent(k.w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta})
}

func (k *messagesSink) close(i int, b *block) error {
	return sseEvent(k.w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}

func (k *messagesSink) fail(msg string) {
	sseEvent(k.w, "error", map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}})
}
