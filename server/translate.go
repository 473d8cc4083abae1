package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The Responses and Messages APIs are translations over the chat
// completions handler: a request becomes a chat completions request (chat
// messages and sampling fields), runs through chatCompletions exactly as a
// client's would (so the chat template, stop strings, logprobs and
// whatever else it implements apply unchanged), and its answer or stream
// is rewritten into the other API's shape.

// chatMessage is one turn of a translated request.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
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
	go func() {
		defer close(events)
		if err := s.chatCompletions(sw, sr); err != nil && sw.status == 0 {
			writeError(sw, err)
		}
		select {
		case events <- subEvent{done: true, status: sw.status, header: sw.header, rest: sw.buf.Bytes()}:
		case <-ctx.Done():
		}
	}()
	return events
}

// chatAnswer is the part of a chat completion the translations read.
type chatAnswer struct {
	ID      string `json:"id"`
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
		TokenIDs     []int32 `json:"token_ids"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *apiError `json:"error"`
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
