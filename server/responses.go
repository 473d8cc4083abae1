package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// responsesRequest is POST /v1/responses (OpenAI's Responses API), the
// fields it translates; fields.go refuses the ones it does not.
type responsesRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       *string         `json:"instructions"`
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	Temperature        *float64        `json:"temperature"`
	TopP               *float64        `json:"top_p"`
	Stream             bool            `json:"stream"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Store              *bool           `json:"store"`
	Metadata           map[string]any  `json:"metadata"`
}

// responsesInput parses a Responses request: its fields, and its input as
// chat turns (a string is one user turn; an array holds messages, with
// or without "type": "message", whose content is a string or input_text /
// output_text parts). Errors are 400s naming the field.
func responsesInput(body []byte) (*responsesRequest, []chatMessage, error) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, nil, badRequest("", "invalid request: %v", unwrapJSON(err))
	}
	if len(req.Input) == 0 || string(req.Input) == "null" {
		return nil, nil, badRequest("input", "input is required")
	}
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		return &req, []chatMessage{{Role: "user", Content: s}}, nil
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(req.Input, &items); err != nil {
		return nil, nil, badRequest("input", "input must be a string or an array of messages")
	}
	if len(items) == 0 {
		return nil, nil, badRequest("input", "input must not be empty")
	}
	msgs := make([]chatMessage, 0, len(items))
	for i, it := range items {
		field := fmt.Sprintf("input[%d]", i)
		if it.Type != "" && it.Type != "message" {
			return nil, nil, badRequest(field+".type", "%s: item type %q is not supported (only messages; function calls need tools, which /v1/responses does not take)", field, it.Type)
		}
		switch it.Role {
		case "user", "assistant", "system", "developer":
		default:
			return nil, nil, badRequest(field+".role", "%s: role %q is not user, assistant, system or developer", field, it.Role)
		}
		text, err := textOf(it.Content, field+".content", "input_text", "output_text", "text")
		if err != nil {
			return nil, nil, err
		}
		msgs = append(msgs, chatMessage{Role: it.Role, Content: text})
	}
	return &req, msgs, nil
}

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
		return &apiError{Status: http.StatusNotFound, Message: fmt.Sprintf("no response %q in this server's memory (it keeps the last %d)", r.PathValue("id"), maxStored), Type: "invalid_request_error", Param: "response_id"}
	}
	writeJSON(w, st.response)
	return nil
}

// responses is POST /v1/responses: text in, a message out, streamed as
// the Responses API's events with "stream": true; previous_response_id
// continues a conversation this server answered (and stored: store is
// true unless false).
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
			return badRequest("previous_response_id", "previous_response_id: no response %q in this server's memory (it keeps the last %d stored responses)", *req.PreviousResponseID, maxStored)
		}
		history = prev.turns
	}
	turns := append(append([]chatMessage(nil), history...), input...)
	msgs := turns
	if req.Instructions != nil {
		msgs = append([]chatMessage{{Role: "system", Content: *req.Instructions}}, turns...)
	}
	chatReq := map[string]any{"messages": msgs, "stream": req.Stream}
	if req.Stream {
		chatReq["stream_options"] = map[string]any{"include_usage": true}
	}
	if req.MaxOutputTokens != nil {
		chatReq["max_tokens"] = *req.MaxOutputTokens
	}
	if req.Temperature != nil {
		chatReq["temperature"] = *req.Temperature
	}
	if req.TopP != nil {
		chatReq["top_p"] = *req.TopP
	}
	id, msgID := newID("resp_"), newID("msg_")
	created := time.Now().Unix()
	resp := map[string]any{
		"id": id, "object": "response", "created_at": created, "status": "in_progress", "model": s.cfg.Name,
		"output": []any{}, "instructions": req.Instructions, "previous_response_id": req.PreviousResponseID,
		"max_output_tokens": req.MaxOutputTokens, "temperature": req.Temperature, "top_p": req.TopP,
		"parallel_tool_calls": false, "tool_choice": "none", "tools": []any{}, "text": map[string]any{"format": map[string]any{"type": "text"}},
		"truncation": "disabled", "error": nil, "incomplete_details": nil, "metadata": req.Metadata, "usage": nil,
		"store": req.Store == nil || *req.Store,
	}
	if resp["metadata"] == nil {
		resp["metadata"] = map[string]any{}
	}
	// finish completes resp from the chat answer's text, finish reason and
	// usage, and stores it.
	finish := func(text, reason string, a *chatAnswer) {
		status := "completed"
		if reason == "length" {
			status = "incomplete"
			resp["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
		}
		resp["status"] = status
		resp["output"] = []any{outputMessage(msgID, text, "completed")}
		if a != nil && a.Usage != nil {
			cached := 0
			if a.Usage.PromptTokensDetails != nil {
				cached = a.Usage.PromptTokensDetails.CachedTokens
			}
			resp["usage"] = map[string]any{
				"input_tokens": a.Usage.PromptTokens, "input_tokens_details": map[string]any{"cached_tokens": cached},
				"output_tokens": a.Usage.CompletionTokens, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
				"total_tokens": a.Usage.PromptTokens + a.Usage.CompletionTokens,
			}
		}
		if req.Store == nil || *req.Store {
			s.stored.put(id, storedResponse{turns: append(turns, chatMessage{Role: "assistant", Content: text}), response: resp})
		}
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
		reason := ""
		if a.Choices[0].FinishReason != nil {
			reason = *a.Choices[0].FinishReason
		}
		finish(a.Choices[0].Message.Content, reason, &a)
		writeJSON(w, resp)
		return nil
	}
	seq := 0
	send := func(typ string, v map[string]any) error {
		v["type"], v["sequence_number"] = typ, seq
		seq++
		return sseEvent(w, typ, v)
	}
	started := false
	var text, reason string
	var usage *chatAnswer
	for ev := range events {
		if ev.done {
			if err := chatError(ev); err != nil {
				if !started {
					return err
				}
				resp["status"], resp["error"] = "failed", map[string]any{"code": "server_error", "message": err.Message}
				send("response.failed", map[string]any{"response": resp})
				return err
			}
			continue
		}
		if ev.data == "[DONE]" {
			continue
		}
		var a chatAnswer
		if err := json.Unmarshal([]byte(ev.data), &a); err != nil {
			continue
		}
		if a.Error != nil {
			resp["status"], resp["error"] = "failed", map[string]any{"code": "server_error", "message": a.Error.Message}
			send("response.failed", map[string]any{"response": resp})
			return a.Error
		}
		if !started {
			startSSE(w)
			started = true
			send("response.created", map[string]any{"response": resp})
			send("response.in_progress", map[string]any{"response": resp})
			send("response.output_item.added", map[string]any{"output_index": 0, "item": outputMessage(msgID, "", "in_progress")})
			send("response.content_part.added", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "part": outputText("")})
		}
		if a.Usage != nil {
			usage = &a
		}
		for _, c := range a.Choices {
			if c.Delta.Content != "" {
				text += c.Delta.Content
				if err := send("response.output_text.delta", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "delta": c.Delta.Content, "logprobs": []any{}}); err != nil {
					return err
				}
			}
			if c.FinishReason != nil {
				reason = *c.FinishReason
			}
		}
	}
	if !started {
		return fmt.Errorf("the chat stream ended without a chunk")
	}
	finish(text, reason, usage)
	send("response.output_text.done", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "text": text, "logprobs": []any{}})
	send("response.content_part.done", map[string]any{"item_id": msgID, "output_index": 0, "content_index": 0, "part": outputText(text)})
	send("response.output_item.done", map[string]any{"output_index": 0, "item": outputMessage(msgID, text, "completed")})
	typ := "response.completed"
	if resp["status"] == "incomplete" {
		typ = "response.incomplete"
	}
	return send(typ, map[string]any{"response": resp})
}

func outputText(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
}

func outputMessage(id, text, status string) map[string]any {
	content := []any{}
	if status == "completed" {
		content = []any{outputText(text)}
	}
	return map[string]any{"type": "message", "id": id, "status": status, "role": "assistant", "content": content}
}
