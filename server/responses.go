package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// responsesRequest is POST /v1/responses (OpenAI's Responses API), the
// fields it translates; fields.go refuses the ones it does not.
type responsesRequest struct {
	Model              string            `json:"model"`
	Input              json.RawMessage   `json:"input"`
	Instructions       *string           `json:"instructions"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Temperature        *float64          `json:"temperature"`
	TopP               *float64          `json:"top_p"`
	Stream             bool              `json:"stream"`
	User               *string           `json:"user"` // no effect; a string
	PreviousResponseID *string           `json:"previous_response_id"`
	Store              *bool             `json:"store"`
	Metadata           map[string]any    `json:"metadata"`
	Tools              []json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls"`
	Text               *struct {
		Format    json.RawMessage `json:"format"`
		Verbosity *string         `json:"verbosity"`
	} `json:"text"`
	Reasoning *struct {
		Effort  *string         `json:"effort"`
		Summary json.RawMessage `json:"summary"`
	} `json:"reasoning"`
}

// responsesInput parses a Responses request: its fields, and its input as
// chat turns. A string is one user turn; an array holds items: messages
// (with or without "type": "message"; content a string or input_text /
// output_text parts), function_call items (an assistant turn's calls),
// function_call_output items (tool turns) and reasoning items (the
// reasoning_content of the assistant turn that follows). Errors are 400s
// naming the field.
func responsesInput(body []byte) (*responsesRequest, []chatMessage, error) {
	var req responsesRequest
	if err := decodeValue(body, &req, ""); err != nil {
		return nil, nil, requestError(err)
	}
	if len(req.Input) == 0 || string(req.Input) == "null" {
		return nil, nil, badRequest("input", "input is required")
	}
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		return &req, []chatMessage{{Role: "user", Content: s}}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(req.Input, &raws); err != nil {
		return nil, nil, badRequest("input", "input must be a string or an array of items")
	}
	if len(raws) == 0 {
		return nil, nil, badRequest("input", "input must not be empty")
	}
	var msgs []chatMessage
	reasoning := "" // a reasoning item's text, for the next assistant turn
	for i, raw := range raws {
		field := fmt.Sprintf("input[%d]", i)
		var it struct {
			Type      string          `json:"type"`
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			Summary   json.RawMessage `json:"summary"`
			CallID    string          `json:"call_id"`
			Name      string          `json:"name"`
			Arguments *string         `json:"arguments"`
			Output    json.RawMessage `json:"output"`
		}
		if err := decodeValue(raw, &it, field); err != nil {
			return nil, nil, requestError(err)
		}
		switch it.Type {
		case "", "message":
			switch it.Role {
			case "user", "assistant", "system", "developer":
			default:
				return nil, nil, badRequest(field+".role", "%s.role %q is not user, assistant, system or developer", field, it.Role)
			}
			text, parts, err := responsesContent(it.Content, field+".content")
			if err != nil {
				return nil, nil, err
			}
			if parts != nil && it.Role != "user" {
				return nil, nil, badRequest(field+".content", "%s.content: images are taken in user turns only", field)
			}
			m := chatMessage{Role: it.Role, Content: text, Parts: parts}
			if it.Role == "assistant" {
				m.ReasoningContent, reasoning = reasoning, ""
			}
			msgs = append(msgs, m)
		case "function_call":
			if it.CallID == "" || it.Name == "" {
				return nil, nil, badRequest(field, "%s: a function_call item needs call_id and name", field)
			}
			args := "{}"
			if it.Arguments != nil && *it.Arguments != "" {
				args = *it.Arguments
			}
			if !json.Valid([]byte(args)) {
				return nil, nil, badRequest(field+".arguments", "%s.arguments is not JSON", field)
			}
			n := len(msgs)
			msgs = addCall(msgs, call(it.CallID, it.Name, args))
			if len(msgs) > n {
				msgs[n].ReasoningContent, reasoning = reasoning, ""
			}
		case "function_call_output":
			if it.CallID == "" {
				return nil, nil, badRequest(field+".call_id", "%s: a function_call_output item needs call_id", field)
			}
			out, err := textOf(it.Output, field+".output", "input_text", "output_text", "text")
			if err != nil {
				return nil, nil, err
			}
			msgs = append(msgs, chatMessage{Role: "tool", ToolCallID: it.CallID, Content: out})
		case "reasoning":
			text, err := textOf(it.Content, field+".content", "reasoning_text")
			if err == nil && text == "" {
				text, err = textOf(it.Summary, field+".summary", "summary_text")
			}
			if err != nil {
				return nil, nil, err
			}
			reasoning += text
		default:
			return nil, nil, badRequest(field+".type", "%s: item type %q is not supported (messages, function_call, function_call_output and reasoning are)", field, it.Type)
		}
	}
	if len(msgs) == 0 {
		return nil, nil, badRequest("input", "input has no message, call or call output")
	}
	return &req, msgs, nil
}

// responsesChat is the chat input and sampling fields of a Responses
// request: its turns (msgs), tools, tool_choice, text.format and
// reasoning effort.
func responsesChat(req *responsesRequest, msgs []chatMessage) (*chatInput, sampling, error) {
	in := &chatInput{turns: msgs, parallel: req.ParallelToolCalls, names: responsesNames}
	p := sampling{MaxTokens: req.MaxOutputTokens, Temperature: req.Temperature, TopP: req.TopP, Stream: req.Stream}
	for i, raw := range req.Tools {
		var t struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description json.RawMessage `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
			return nil, p, badRequest(fmt.Sprintf("tools[%d]", i), "tools[%d]: expected a function tool object, got %s", i, jsonValueKind(raw))
		}
		if err := decodeValue(raw, &t, fmt.Sprintf("tools[%d]", i)); err != nil {
			return nil, p, requestError(err)
		}
		if t.Type != "function" {
			return nil, p, badRequest(fmt.Sprintf("tools[%d].type", i), "tools[%d].type is %q; only \"function\" tools are supported (OpenAI's hosted tools are not)", i, t.Type)
		}
		tool, err := chatTool(i, t.Name, t.Description, t.Parameters)
		if err != nil {
			return nil, p, err
		}
		in.tools = append(in.tools, tool)
	}
	if len(req.ToolChoice) > 0 && string(req.ToolChoice) != "null" {
		var s string
		var obj struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		switch {
		case json.Unmarshal(req.ToolChoice, &s) == nil:
			c, err := chooseMode(s)
			if err != nil {
				return nil, p, err
			}
			in.choice = c
		case json.Unmarshal(req.ToolChoice, &obj) == nil && obj.Type == "function":
			in.choice = toolChoice{mode: "named", name: obj.Name}
		default:
			return nil, p, badRequest("tool_choice", "tool_choice must be auto, none, required or {\"type\": \"function\", \"name\": ...}")
		}
	}
	if t := req.Text; t != nil {
		if t.Verbosity != nil && *t.Verbosity != "medium" {
			return nil, p, badRequest("text.verbosity", "text.verbosity is not supported by this server; leave it out")
		}
		if len(t.Format) > 0 && string(t.Format) != "null" {
			var f struct {
				Type   string          `json:"type"`
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict *bool           `json:"strict"`
			}
			if err := json.Unmarshal(t.Format, &f); err != nil {
				return nil, p, badRequest("text.format", "text.format: %v", unwrapJSON(err))
			}
			switch f.Type {
			case "text":
			case "json_object":
				in.format = &responseFormat{Type: "json_object"}
			case "json_schema":
				if len(f.Schema) == 0 {
					return nil, p, badRequest("text.format.schema", "text.format json_schema needs schema")
				}
				in.format = jsonSchemaFormat(f.Name, f.Schema, f.Strict)
			default:
				return nil, p, badRequest("text.format.type", "text.format.type %q is not supported: use text, json_object or json_schema", f.Type)
			}
		}
	}
	if r := req.Reasoning; r != nil {
		if !isNoop(r.Summary, []string{`"none"`}) && len(r.Summary) > 0 {
			return nil, p, badRequest("reasoning.summary", "reasoning.summary is not supported: the reasoning comes whole, as reasoning items' content; leave it out")
		}
		if r.Effort != nil && *r.Effort != "none" {
			in.effort = *r.Effort
		}
	}
	return in, p, nil
}

// responsesNames are the Responses API's names for the fields a chat
// plan checks.
var responsesNames = &fieldNames{messages: "input", tool: "tools[%d]", toolParams: "parameters", format: "text.format",
	formatJSON: "text.format", schema: "text.format.schema", effort: "reasoning.effort", maxTokens: "max_output_tokens", stop: "stop"}

// responseStore keeps the conversations of recent responses for
// previous_response_id: the last maxStored, in the server's memory only.
type responseStore struct {
	mu    sync.Mutex
	order []string
	byID  map[string]storedResponse
}

type storedResponse struct {
	turns    []chatMessage // the conversation up to and including the answer, without instructions
	response map[string]any
}

const maxStored = 1000

func (st *responseStore) put(id string, r storedResponse) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.byID == nil {
		st.byID = map[string]storedResponse{}
	}
	st.byID[id] = r
	st.order = append(st.order, id)
	if len(st.order) > maxStored {
		delete(st.byID, st.order[0])
		st.order = st.order[1:]
	}
}

func (st *responseStore) get(id string) (storedResponse, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	r, ok := st.byID[id]
	return r, ok
}

// getResponse is GET /v1/responses/{id}: a stored response.
func (s *Server) getResponse(w http.ResponseWriter, r *http.Request) error {
	st, ok := s.stored.get(r.PathValue("id"))
	if !ok {
		return &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("no response %q in this server's memory (it keeps the last %d stored responses; a response made with store false is not kept)", r.PathValue("id"), maxStored), Type: "invalid_request_error", Param: "response_id"}
	}
	writeJSON(w, st.response)
	return nil
}

// responses is POST /v1/responses: input items in, output items out
// (reasoning, a message, function calls), streamed as the Responses API's
// events with "stream": true; previous_response_id continues a
// conversation this server answered (and stored: store is true unless
// false).
func (s *Server) responses(w http.ResponseWriter, r *http.Request) error {
	if _, _, _, err := s.ready(); err != nil {
		return err
	}
	var body []byte
	if err := decodeJSON(r, s.cfg.MaxBodyBytes, (*json.RawMessage)(&body)); err != nil {
		return err
	}
	req, input, err := responsesInput(body)
	if err != nil {
		return err
	}
	var history []chatMessage
	if req.PreviousResponseID != nil {
		prev, ok := s.stored.get(*req.PreviousResponseID)
		if !ok {
			return badRequest("previous_response_id", "previous_response_id: no response %q in this server's memory (it keeps the last %d stored responses; a response made with store false is not kept)", *req.PreviousResponseID, maxStored)
		}
		history = prev.turns
	}
	turns := append(append([]chatMessage(nil), history...), input...)
	msgs := turns
	if req.Instructions != nil {
		msgs = append([]chatMessage{{Role: "system", Content: *req.Instructions}}, turns...)
	}
	in, p, err := responsesChat(req, msgs)
	if err != nil {
		return err
	}
	job, err := s.prepare(r.Context(), in, p)
	if err != nil {
		return err
	}
	resp := s.responseObject(req)
	id := resp["id"].(string)
	// finish completes resp from the answer and stores it.
	finish := func(o *chatOutput, items []any) {
		status := "completed"
		if o.finish == "length" {
			status = "incomplete"
			resp["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
		}
		resp["status"], resp["output"] = status, items
		if u := o.res; u != nil {
			resp["usage"] = map[string]any{
				"input_tokens": u.PromptTokens, "input_tokens_details": map[string]any{"cached_tokens": u.CachedTokens},
				"output_tokens": u.CompletionTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
				"total_tokens": u.PromptTokens + u.CompletionTokens,
			}
		}
		if req.Store == nil || *req.Store {
			s.stored.put(id, storedResponse{turns: append(turns, o.turn()), response: resp})
		}
	}
	if !req.Stream {
		o, err := s.answer(r, job)
		if err != nil {
			return err
		}
		items := make([]any, len(o.blocks))
		for i := range o.blocks {
			items[i] = outputItem(newItemID(o.blocks[i].kind), &o.blocks[i], "completed")
		}
		finish(o, items)
		writeJSON(w, resp)
		return nil
	}
	sink := &responsesSink{w: w, resp: resp}
	o, err := s.stream(r, job, sink)
	if err != nil {
		return err
	}
	finish(o, sink.items)
	typ := "response.completed"
	if resp["status"] == "incomplete" {
		typ = "response.incomplete"
	}
	return sink.send(typ, map[string]any{"response": resp})
}

// responseObject is a response in progress, with the request's settings.
func (s *Server) responseObject(req *responsesRequest) map[string]any {
	tools := []any{}
	for _, t := range req.Tools {
		tools = append(tools, t)
	}
	var choice any = "auto"
	if len(req.ToolChoice) > 0 && string(req.ToolChoice) != "null" {
		choice = req.ToolChoice
	}
	var format any = map[string]any{"type": "text"}
	if req.Text != nil && len(req.Text.Format) > 0 && string(req.Text.Format) != "null" {
		format = req.Text.Format
	}
	var effort any
	if req.Reasoning != nil && req.Reasoning.Effort != nil {
		effort = *req.Reasoning.Effort
	}
	resp := map[string]any{
		"id": newID("resp_"), "object": "response", "created_at": time.Now().Unix(), "status": "in_progress", "model": s.cfg.Name,
		"output": []any{}, "instructions": req.Instructions, "previous_response_id": req.PreviousResponseID,
		"max_output_tokens": req.MaxOutputTokens, "temperature": req.Temperature, "top_p": req.TopP,
		"parallel_tool_calls": req.ParallelToolCalls == nil || *req.ParallelToolCalls, "tool_choice": choice, "tools": tools,
		"text": map[string]any{"format": format}, "reasoning": map[string]any{"effort": effort, "summary": nil},
		"truncation": "disabled", "error": nil, "incomplete_details": nil, "metadata": req.Metadata, "usage": nil,
		"store": req.Store == nil || *req.Store,
	}
	if resp["metadata"] == nil {
		resp["metadata"] = map[string]any{}
	}
	return resp
}

// responsesSink writes a streamed answer as the Responses API's events:
// per block an output item added, its deltas and done events, the item
// done; items collects the finished items for the final response.
type responsesSink struct {
	w     http.ResponseWriter
	resp  map[string]any
	seq   int
	ids   []string
	items []any
}

func (k *responsesSink) send(typ string, v map[string]any) error {
	v["type"], v["sequence_number"] = typ, k.seq
	k.seq++
	return sseEvent(k.w, typ, v)
}

func (k *responsesSink) begin() error {
	startSSE(k.w)
	if err := k.send("response.created", map[string]any{"response": k.resp}); err != nil {
		return err
	}
	return k.send("response.in_progress", map[string]any{"response": k.resp})
}

func (k *responsesSink) open(i int, b *block) error {
	id := newItemID(b.kind)
	k.ids = append(k.ids, id)
	if err := k.send("response.output_item.added", map[string]any{"output_index": i, "item": outputItem(id, b, "in_progress")}); err != nil {
		return err
	}
	switch b.kind {
	case "text":
		return k.send("response.content_part.added", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "part": outputText("")})
	case "reasoning":
		return k.send("response.content_part.added", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "part": reasoningText("")})
	}
	return nil
}

func (k *responsesSink) delta(i int, b *block, d string) error {
	id := k.ids[i]
	switch b.kind {
	case "text":
		return k.send("response.output_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": d, "logprobs": []any{}})
	case "reasoning":
		return k.send("response.reasoning_text.delta", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "delta": d})
	}
	return k.send("response.function_call_arguments.delta", map[string]any{"item_id": id, "output_index": i, "delta": d})
}

func (k *responsesSink) close(i int, b *block) error {
	id := k.ids[i]
	var err error
	switch b.kind {
	case "text":
		k.send("response.output_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "text": b.text, "logprobs": []any{}})
		err = k.send("response.content_part.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "part": outputText(b.text)})
	case "reasoning":
		k.send("response.reasoning_text.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "text": b.text})
		err = k.send("response.content_part.done", map[string]any{"item_id": id, "output_index": i, "content_index": 0, "part": reasoningText(b.text)})
	case "call":
		err = k.send("response.function_call_arguments.done", map[string]any{"item_id": id, "output_index": i, "name": b.name, "arguments": b.text})
	}
	if err != nil {
		return err
	}
	item := outputItem(id, b, "completed")
	k.items = append(k.items, item)
	return k.send("response.output_item.done", map[string]any{"output_index": i, "item": item})
}

func (k *responsesSink) fail(msg string) {
	k.resp["status"], k.resp["error"] = "failed", map[string]any{"code": "server_error", "message": msg}
	k.send("response.failed", map[string]any{"response": k.resp})
}

// newItemID is a fresh output item id for a block of kind.
func newItemID(kind string) string {
	switch kind {
	case "reasoning":
		return newID("rs_")
	case "call":
		return newID("fc_")
	}
	return newID("msg_")
}

func outputText(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
}

func reasoningText(text string) map[string]any {
	return map[string]any{"type": "reasoning_text", "text": text}
}

// outputItem is a block as a Responses output item: a message with one
// output_text part, a reasoning item with one reasoning_text part, or a
// function_call. In progress, a message or reasoning item has no parts
// yet and a call no arguments.
func outputItem(id string, b *block, status string) map[string]any {
	done := status == "completed"
	switch b.kind {
	case "reasoning":
		content := []any{}
		if done {
			content = []any{reasoningText(b.text)}
		}
		return map[string]any{"type": "reasoning", "id": id, "status": status, "summary": []any{}, "content": content}
	case "call":
		args := ""
		if done {
			args = b.text
		}
		return map[string]any{"type": "function_call", "id": id, "call_id": b.id, "name": b.name, "arguments": args, "status": status}
	}
	content := []any{}
	if done {
		content = []any{outputText(b.text)}
	}
	return map[string]any{"type": "message", "id": id, "status": status, "role": "assistant", "content": content}
}

// responsesPart is one part of a Responses message item's content.
type responsesPart struct {
	Type     string  `json:"type"`
	Text     *string `json:"text"`
	ImageURL *string `json:"image_url"`
	FileID   *string `json:"file_id"`
	Detail   any     `json:"detail"`
}

// responsesContent reads a message item's content: a string, or parts
// (input_text, output_text, text; input_image with an image_url). It
// returns the text and, with an image, the parts. Errors are 400s naming
// the part.
func responsesContent(raw json.RawMessage, field string) (string, []contentPart, error) {
	var parts []responsesPart
	if json.Unmarshal(raw, &parts) != nil { // a string (or not content at all: textOf says so)
		text, err := textOf(raw, field, "input_text", "output_text", "text")
		return text, nil, err
	}
	var b strings.Builder
	var out []contentPart
	for i, p := range parts {
		pf := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case (p.Type == "input_text" || p.Type == "output_text" || p.Type == "text") && p.Text != nil:
			b.WriteString(*p.Text)
			out = append(out, textPart(*p.Text))
		case p.Type == "input_image" && p.ImageURL != nil:
			if p.Detail != nil && p.Detail != "auto" && p.Detail != "high" {
				return "", nil, badRequest(pf+".detail", "%s.detail %v is not supported: the image goes to the model as its processor makes it (auto or high)", pf, p.Detail)
			}
			out = append(out, imagePart(*p.ImageURL, pf+".image_url"))
		case p.Type == "input_image":
			return "", nil, badRequest(pf, "%s: an input_image needs image_url (a data: URL); file_id is not supported", pf)
		default:
			return "", nil, badRequest(pf, "%s: content part type %q is not supported (input_text, output_text, text and input_image are)", pf, p.Type)
		}
	}
	if !slices.ContainsFunc(parts, func(p responsesPart) bool { return p.Type == "input_image" }) {
		return b.String(), nil, nil
	}
	return b.String(), out, nil
}
