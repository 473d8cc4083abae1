package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
)

// The Responses and Messages APIs are translations over the chat
// completions handler: a request becomes a chat completions request (chat
// messages with their tool calls and results, tools, tool_choice, the
// output format and sampling fields), runs through chatCompletions exactly
// as a client's would (so the chat template, the tool-call convention, the
// grammar of an enforced tool choice or schema, stop strings and whatever
// else it implements apply unchanged), and its answer or stream is
// rewritten into the other API's shape. This file holds what both share:
// the chat turns, the call, reading the answer as blocks (reasoning, text,
// calls), the stream of blocks, and the renaming of the chat request's
// fields in errors back to the caller's.

// chatMessage is one turn of a translated request, in the chat
// completions shape (message's JSON).
type chatMessage struct {
	Role             string         `json:"role"`
	Content          string         `json:"content"`
	ToolCalls        []toolCallJSON `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	// Parts, when set (a turn with images), is the content as chat
	// completions' parts ({"type": "text"} and {"type": "image_url"}), in
	// place of Content.
	Parts []map[string]any `json:"-"`
	// Origins names, per part, the caller's field it came from
	// (messages[0].content[1], input[2].content[0]), for errors
	// (partRenames).
	Origins []string `json:"-"`
}

// partRenames are rules for renameFields that name a chat request's
// content parts (messages[k].content[j]...) by the caller's fields they
// came from: the turns' indices differ (a system turn first, tool
// results apart).
func partRenames(chatReq map[string]any, rest [][2]string) [][2]string {
	msgs, _ := chatReq["messages"].([]chatMessage)
	var out [][2]string
	for k, m := range msgs {
		for j, o := range m.Origins {
			out = append(out, [2]string{fmt.Sprintf(`messages\[%d\]\.content\[%d\]`, k, j), o})
		}
	}
	return append(out, rest...)
}

// MarshalJSON writes the turn in chat completions' shape, its content the
// parts when it has images.
func (m chatMessage) MarshalJSON() ([]byte, error) {
	type plain chatMessage
	if m.Parts == nil {
		return json.Marshal(plain(m))
	}
	return json.Marshal(struct {
		plain
		Content []map[string]any `json:"content"`
	}{plain(m), m.Parts})
}

// imagePart is the chat completions part of an image at url.
func imagePart(url string, detail any) map[string]any {
	u := map[string]any{"url": url}
	if detail != nil {
		u["detail"] = detail
	}
	return map[string]any{"type": "image_url", "image_url": u}
}

// call is a function call in chat completions' shape.
func call(id, name, arguments string) toolCallJSON {
	var c toolCallJSON
	c.ID, c.Type, c.Function.Name, c.Function.Arguments = id, "function", name, arguments
	return c
}

// addCall appends a call to the conversation: to the last turn when it
// is the assistant's (parallel calls, or text then calls), else as a new
// assistant turn.
func addCall(msgs []chatMessage, c toolCallJSON) []chatMessage {
	if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" {
		msgs[n-1].ToolCalls = append(msgs[n-1].ToolCalls, c)
		return msgs
	}
	return append(msgs, chatMessage{Role: "assistant", ToolCalls: []toolCallJSON{c}})
}

// chatTool is a chat completions tool entry for a function that another
// API describes by name, description and parameters (raw JSON, absent
// when empty), written in the order chat clients send them, since the
// chat template renders the entry as it comes.
func chatTool(name string, description, parameters json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type": "function", "function": {"name": `)
	b.WriteString(larkString(name))
	if len(description) > 0 && string(description) != "null" {
		b.WriteString(`, "description": `)
		b.Write(description)
	}
	if len(parameters) > 0 && string(parameters) != "null" {
		b.WriteString(`, "parameters": `)
		b.Write(parameters)
	}
	b.WriteString("}}")
	return b.Bytes()
}

// chatCall runs body (a chat completions request) through the chat
// handler with r's context and returns its events: the stream's data
// events as they come (body["stream"] true), then one done event with the
// status and, for a non-streamed answer or an error, the JSON written.
func (s *Server) chatCall(ctx context.Context, r *http.Request, body map[string]any) <-chan subEvent {
	b, _ := json.Marshal(body)
	sr := r.Clone(ctx)
	sr.Body, sr.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	events := make(chan subEvent)
	sw := &subWriter{header: http.Header{}, out: events, ctx: ctx}
	chat := s.chat
	if chat == nil {
		chat = s.chatCompletions
	}
	go func() {
		defer close(events)
		if err := chat(sw, sr); err != nil && sw.status == 0 {
			writeError(sw, err)
		}
		select {
		case events <- subEvent{done: true, status: sw.status, header: sw.header, rest: sw.buf.Bytes()}:
		case <-ctx.Done():
		}
	}()
	return events
}

// chatPlanOf plans a translated chat request as chatCompletions would
// (the prompt, for count_tokens and the input tokens of a stream's first
// event).
func chatPlanOf(s *Server, body map[string]any) (*chatPlan, error) {
	_, text, _, err := s.ready()
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(body)
	var req chatRequest
	if err := json.Unmarshal(b, &req); err != nil {
		return nil, badRequest("", "invalid request: %v", unwrapJSON(err))
	}
	return planChat(text, &req)
}

// chatUsage is a chat answer's usage.
type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// cached is the prompt tokens read from the prefix cache.
func (u *chatUsage) cached() int {
	if u == nil || u.PromptTokensDetails == nil {
		return 0
	}
	return u.PromptTokensDetails.CachedTokens
}

// chatAnswer is the part of a chat completion (or of one chunk of its
// stream) the translations read.
type chatAnswer struct {
	ID      string `json:"id"`
	Choices []struct {
		Message struct {
			Content          *string        `json:"content"`
			ReasoningContent string         `json:"reasoning_content"`
			ToolCalls        []toolCallJSON `json:"tool_calls"`
		} `json:"message"`
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index int `json:"index"`
				toolCallJSON
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
		TokenIDs     []int32 `json:"token_ids"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"`
	Error *apiError  `json:"error"`
}

// chatError is the error a chat call ended with (its status and message),
// or nil when it answered 200.
func chatError(ev subEvent) *apiError {
	if ev.status == http.StatusOK || ev.status == 0 {
		return nil
	}
	var a chatAnswer
	if json.Unmarshal(ev.rest, &a) == nil && a.Error != nil {
		a.Error.Status = ev.status
		return a.Error
	}
	return &apiError{Status: ev.status, Message: strings.TrimSpace(string(ev.rest)), Type: "server_error"}
}

// block is one piece of a translated answer, in the order the model wrote
// them: reasoning, text, or a function call (the Responses API's output
// items; the Messages API's content blocks).
type block struct {
	kind string // "reasoning", "text" or "call"
	text string // the reasoning or the text; a call's arguments (JSON text)
	// A call's id (the chat call's, which the client sends back with the
	// result) and function name.
	id, name string
}

// chatOutput is a translated chat answer: its blocks, finish reason
// ("stop", "length", "tool_calls"), generated ids and usage.
type chatOutput struct {
	blocks   []block
	finish   string
	tokenIDs []int32
	usage    *chatUsage
}

// text is the answer's text (its text blocks).
func (o *chatOutput) text() string {
	var b strings.Builder
	for _, bl := range o.blocks {
		if bl.kind == "text" {
			b.WriteString(bl.text)
		}
	}
	return b.String()
}

// turn is the answer as a chat turn, for a conversation that goes on.
func (o *chatOutput) turn() chatMessage {
	m := chatMessage{Role: "assistant"}
	for _, bl := range o.blocks {
		switch bl.kind {
		case "reasoning":
			m.ReasoningContent += bl.text
		case "text":
			m.Content += bl.text
		case "call":
			m.ToolCalls = append(m.ToolCalls, call(bl.id, bl.name, bl.text))
		}
	}
	return m
}

// has reports whether the answer has a block of kind.
func (o *chatOutput) has(kind string) bool {
	for _, bl := range o.blocks {
		if bl.kind == kind {
			return true
		}
	}
	return false
}

// answer runs a non-streamed chat request and reads its answer as blocks:
// the reasoning, the text (also when empty, unless there are calls), the
// calls.
func (s *Server) answer(r *http.Request, chatReq map[string]any) (*chatOutput, error) {
	return readAnswer(s.chatCall(r.Context(), r, chatReq))
}

// readAnswer reads a non-streamed chat call's events as answer does.
func readAnswer(events <-chan subEvent) (*chatOutput, error) {
	var last subEvent
	for ev := range events {
		last = ev
	}
	if err := chatError(last); err != nil {
		return nil, err
	}
	var a chatAnswer
	if err := json.Unmarshal(last.rest, &a); err != nil || len(a.Choices) == 0 {
		return nil, fmt.Errorf("the chat answer could not be read: %v", err)
	}
	c := a.Choices[0]
	o := &chatOutput{tokenIDs: c.TokenIDs, usage: a.Usage}
	if c.FinishReason != nil {
		o.finish = *c.FinishReason
	}
	if c.Message.ReasoningContent != "" {
		o.blocks = append(o.blocks, block{kind: "reasoning", text: c.Message.ReasoningContent})
	}
	content := ""
	if c.Message.Content != nil {
		content = *c.Message.Content
	}
	if content != "" || len(c.Message.ToolCalls) == 0 {
		o.blocks = append(o.blocks, block{kind: "text", text: content})
	}
	for _, tc := range c.Message.ToolCalls {
		o.blocks = append(o.blocks, block{kind: "call", id: tc.ID, name: tc.Function.Name, text: tc.Function.Arguments})
	}
	return o, nil
}

// blockSink writes a streamed answer in another API's events: begin once,
// when the chat stream's first chunk arrives (so an error before it is
// still an ordinary error response); then each block opened, its deltas
// (text, reasoning or a call's arguments), closed; fail ends a started
// stream with an error event.
type blockSink interface {
	begin() error
	open(i int, b *block) error
	delta(i int, b *block, d string) error
	close(i int, b *block) error
	fail(msg string)
}

// stream runs a streamed chat request and writes it to sink as blocks, in
// the order the chat stream has them: a new block opens when the kind of
// delta changes (reasoning, text) and for each call. A stream that writes
// no text and no calls gets one empty text block, as answer does. It
// returns the answer as answer would.
func (s *Server) stream(r *http.Request, chatReq map[string]any, sink blockSink) (*chatOutput, error) {
	return streamBlocks(s.chatCall(r.Context(), r, chatReq), sink)
}

// streamBlocks writes a streamed chat call's events to sink as stream
// does.
func streamBlocks(events <-chan subEvent, sink blockSink) (*chatOutput, error) {
	o := &chatOutput{}
	started := false
	cur := -1 // the open block
	var werr error
	closeCur := func() {
		if cur >= 0 && werr == nil {
			werr = sink.close(cur, &o.blocks[cur])
		}
		cur = -1
	}
	put := func(kind, d string) {
		if cur < 0 || o.blocks[cur].kind != kind {
			closeCur()
			o.blocks = append(o.blocks, block{kind: kind})
			cur = len(o.blocks) - 1
			if werr == nil {
				werr = sink.open(cur, &o.blocks[cur])
			}
		}
		o.blocks[cur].text += d
		if werr == nil && d != "" {
			werr = sink.delta(cur, &o.blocks[cur], d)
		}
	}
	calls := map[int]int{} // the chat stream's call index -> block
	for ev := range events {
		if ev.done {
			if err := chatError(ev); err != nil {
				if !started {
					return nil, err
				}
				sink.fail(err.Message)
				return nil, err
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
			if started {
				sink.fail(a.Error.Message)
			}
			return nil, a.Error
		}
		if !started {
			started = true
			if err := sink.begin(); err != nil {
				return nil, err
			}
		}
		if a.Usage != nil {
			o.usage = a.Usage
		}
		for _, c := range a.Choices {
			o.tokenIDs = append(o.tokenIDs, c.TokenIDs...)
			if c.Delta.ReasoningContent != "" {
				put("reasoning", c.Delta.ReasoningContent)
			}
			if c.Delta.Content != "" {
				put("text", c.Delta.Content)
			}
			for _, tc := range c.Delta.ToolCalls {
				bi, ok := calls[tc.Index]
				if !ok {
					closeCur()
					o.blocks = append(o.blocks, block{kind: "call", id: tc.ID, name: tc.Function.Name})
					bi = len(o.blocks) - 1
					calls[tc.Index], cur = bi, bi
					if werr == nil {
						werr = sink.open(bi, &o.blocks[bi])
					}
				}
				if d := tc.Function.Arguments; d != "" {
					o.blocks[bi].text += d
					if werr == nil {
						werr = sink.delta(bi, &o.blocks[bi], d)
					}
				}
			}
			if c.FinishReason != nil {
				o.finish = *c.FinishReason
			}
		}
		if werr != nil {
			return nil, werr // the client is gone
		}
	}
	if !started {
		return nil, fmt.Errorf("the chat stream ended without a chunk")
	}
	closeCur()
	if !o.has("text") && !o.has("call") {
		put("text", "")
		closeCur()
	}
	return o, werr
}

// renameFields rewrites a chat request's field names in an error (its
// param and message) to the caller's: rename maps a chat field path
// pattern to the caller's ($1 and so on for its groups).
func renameFields(err error, rename [][2]string) error {
	ae, ok := err.(*apiError)
	if !ok {
		return err
	}
	p, _ := ae.Param.(string)
	for _, rn := range rename {
		re := regexp.MustCompile(`^` + rn[0])
		if !re.MatchString(p) {
			continue
		}
		np := re.ReplaceAllString(p, rn[1])
		out := *ae
		out.Param = np
		out.Message = strings.ReplaceAll(ae.Message, p, np)
		return &out
	}
	return err
}

// textOf reads a content field that is a string or an array of parts
// {"type": T, "text": ...} whose type is one of types; other parts are a
// 400 naming the field.
func textOf(raw json.RawMessage, field string, types ...string) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", badRequest(field, "%s: expected a string or an array of content parts", field)
	}
	var b strings.Builder
	for i, p := range parts {
		ok := false
		for _, t := range types {
			ok = ok || p.Type == t
		}
		if !ok || p.Text == nil {
			return "", badRequest(fmt.Sprintf("%s[%d]", field, i), "%s[%d]: content part type %q is not supported (only %s with text)", field, i, p.Type, strings.Join(types, ", "))
		}
		b.WriteString(*p.Text)
	}
	return b.String(), nil
}

// sseEvent writes one named server-sent event (the Responses and Messages
// streams name each event after its type).
func sseEvent(w http.ResponseWriter, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b); err != nil {
		return err
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

func startSSE(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
}
