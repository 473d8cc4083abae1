package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// What the Responses and Messages APIs share. Each decodes its request
// into a chatInput (typed turns with their calls, results and content
// parts; tools; tool_choice; the output format; the caller's field names
// for errors) and its sampling fields, which the chat core plans and runs
// exactly as a chat completions request (so the chat template, the
// tool-call convention, the grammar of an enforced tool choice or schema,
// stop strings and whatever else it implements apply unchanged), and
// renders the core's events as blocks: reasoning, text and function
// calls (the Responses API's output items; the Messages API's content
// blocks).

// chatMessage is one turn of a conversation as the planner reads it,
// whichever API it came by (messageTurns reads chat completions'
// messages; responsesInput and messagesInput the other APIs').
type chatMessage struct {
	Role             string         `json:"role"`
	Content          string         `json:"content"`
	ToolCalls        []toolCallJSON `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
	Name             string         `json:"name,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	// Parts, when set (a turn with images), is the content as text and
	// image parts in order, in place of Content.
	Parts []contentPart `json:"-"`
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

// chatTool is tool i of another API's request, a function described by
// name, description and parameters (raw JSON, absent when empty), as a
// chat tool whose entry (what the chat template renders) is written in
// the order chat clients send it. Errors name the caller's field
// (field: "tools[%d]").
func chatTool(i int, name string, description, parameters json.RawMessage) (toolJSON, error) {
	var b bytes.Buffer
	b.WriteString(`{"type": "function", "function": {"name": `)
	b.WriteString(larkString(name))
	if len(description) > 0 && string(description) != "null" {
		if k := jsonValueKind(description); k != "string" {
			return toolJSON{}, badRequest(fmt.Sprintf("tools[%d].description", i), "tools[%d].description: want a string, got %s", i, jsonArticle(k))
		}
		b.WriteString(`, "description": `)
		b.Write(description)
	}
	if len(parameters) > 0 && string(parameters) != "null" {
		b.WriteString(`, "parameters": `)
		b.Write(parameters)
	}
	b.WriteString("}}")
	var c bytes.Buffer
	json.Compact(&c, b.Bytes())
	var t toolJSON
	if err := json.Unmarshal(c.Bytes(), &t); err != nil {
		return t, badRequest(fmt.Sprintf("tools[%d]", i), "tools[%d]: %v", i, unwrapJSON(err))
	}
	return t, nil
}

// block is one piece of an answer, in the order the model wrote them:
// reasoning, text, or a function call (the Responses API's output items;
// the Messages API's content blocks).
type block struct {
	kind string // "reasoning", "text" or "call"
	text string // the reasoning or the text; a call's arguments (JSON text)
	// A call's id (which the client sends back with the result) and
	// function name.
	id, name string
}

// chatOutput is an answer as blocks, with its finish reason ("stop",
// "length", "tool_calls") and its result (generated ids, token counts).
type chatOutput struct {
	blocks []block
	finish string
	res    *result
}

// outputOf is a whole answer's output.
func outputOf(a *chatAnswer) *chatOutput {
	return &chatOutput{blocks: a.blocks(), finish: a.finish, res: a.res}
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

// answer runs a translated request's job (one choice) and returns its
// whole answer as blocks.
func (s *Server) answer(r *http.Request, job *chatJob) (*chatOutput, error) {
	as, err := s.answers(r.Context(), job, 1)
	if err != nil {
		return nil, err
	}
	return outputOf(as[0]), nil
}

// blockSink writes a streamed answer in another API's events: begin once,
// when the answer begins (so an error before it is still an ordinary
// error response); then each block opened, its deltas (text, reasoning or
// a call's arguments), closed; fail ends a started stream with an error
// event.
type blockSink interface {
	begin() error
	open(i int, b *block) error
	delta(i int, b *block, d string) error
	close(i int, b *block) error
	fail(msg string)
}

// stream runs a translated request's job (one choice) and writes its
// events to sink as blocks (blockStream). It returns the answer as answer
// would.
func (s *Server) stream(r *http.Request, job *chatJob, sink blockSink) (*chatOutput, error) {
	bs := &blockStream{sink: sink, cur: -1}
	if err := s.runChat(r.Context(), job, 1, bs.add); err != nil {
		return nil, err
	}
	return &bs.out, nil
}

// blockStream writes a choice's events to a blockSink as blocks, in the
// order the events have them: a new block opens when the kind of delta
// changes (reasoning, text) and for each call. An answer that writes no
// text and no calls gets one empty text block, as answer does.
type blockStream struct {
	sink    blockSink
	out     chatOutput
	cur     int // the open block, or -1
	started bool
	werr    error // the first write error (the client is gone)
}

func (b *blockStream) closeCur() {
	if b.cur >= 0 && b.werr == nil {
		b.werr = b.sink.close(b.cur, &b.out.blocks[b.cur])
	}
	b.cur = -1
}

// openBlock closes the open block and opens nb.
func (b *blockStream) openBlock(nb block) {
	b.closeCur()
	b.out.blocks = append(b.out.blocks, nb)
	b.cur = len(b.out.blocks) - 1
	if b.werr == nil {
		b.werr = b.sink.open(b.cur, &b.out.blocks[b.cur])
	}
}

// put adds delta d to the open block of kind, opening one if needed.
func (b *blockStream) put(kind, d string) {
	if b.cur < 0 || b.out.blocks[b.cur].kind != kind {
		b.openBlock(block{kind: kind})
	}
	b.out.blocks[b.cur].text += d
	if b.werr == nil && d != "" {
		b.werr = b.sink.delta(b.cur, &b.out.blocks[b.cur], d)
	}
}

// add takes one event (runChat's emit).
func (b *blockStream) add(ev chatEvent) error {
	switch ev.Kind {
	case evBegin:
		b.started = true
		return b.sink.begin()
	case evDelta:
		if ev.Reasoning != "" {
			b.put("reasoning", ev.Reasoning)
		}
		if ev.Text != "" {
			b.put("text", ev.Text)
		}
	case evCall:
		if ev.Name != "" {
			b.openBlock(block{kind: "call", id: ev.ID, name: ev.Name})
		} else if ev.Text != "" && b.cur >= 0 {
			b.out.blocks[b.cur].text += ev.Text
			if b.werr == nil {
				b.werr = b.sink.delta(b.cur, &b.out.blocks[b.cur], ev.Text)
			}
		}
	case evFinish:
		b.out.finish, b.out.res = ev.Finish, ev.Result
		b.closeCur()
		if !b.out.has("text") && !b.out.has("call") {
			b.put("text", "")
			b.closeCur()
		}
	case evError:
		if b.started {
			b.sink.fail(ev.Err.Error())
		}
		return ev.Err
	}
	return b.werr
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

// jsonSchemaFormat is the output format of a JSON Schema.
func jsonSchemaFormat(name string, schema json.RawMessage, strict *bool) *responseFormat {
	f := &responseFormat{Type: "json_schema"}
	f.JSONSchema = &struct {
		Name   string          `json:"name"`
		Schema json.RawMessage `json:"schema"`
		Strict *bool           `json:"strict"`
	}{name, schema, strict}
	return f
}
