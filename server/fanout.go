package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/archc/archc/rt/engine"
)

// A request for n > 1 choices is served as n requests for one, run at
// once as one engine.Group (each its own sequence in its own KV-cache
// slot; the prompt is prefilled once and copied into the other slots,
// where the model can and the slots suffice) and merged: choice i gets index i, the usage
// counts the prompt once and every choice's tokens, a stream interleaves
// the choices' chunks under one id and ends with one usage chunk (with
// stream_options.include_usage) and one [DONE]. With a seed, choice i
// samples with seed+i, so the choices differ yet the answer is
// reproducible.

// nChoices reads a request's n: 1 when absent or null; else it must be an
// integer in [1, limit] (a 400 naming n).
func nChoices(top map[string]json.RawMessage, limit int) (int, error) {
	raw, ok := top["n"]
	if !ok || string(raw) == "null" {
		return 1, nil
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, badRequest("n", "n: expected an integer, got %s", raw)
	}
	if n < 1 || n > limit {
		return 0, badRequest("n", "n must be in [1, %d] (the server's --max-n), got %d", limit, n)
	}
	return n, nil
}

type groupKey struct{}

// choiceGroup is the engine group of the choices whose handler runs with
// ctx (nil for a request for one choice).
func choiceGroup(ctx context.Context) *engine.Group {
	g, _ := ctx.Value(groupKey{}).(*engine.Group)
	return g
}

// subEvent is one server-sent event of choice i's stream, or (done) the
// end of its handler with its status and what it wrote that was not an
// event (a JSON answer or error).
type subEvent struct {
	i      int
	data   string
	done   bool
	status int
	header http.Header
	rest   []byte
}

// subWriter is the ResponseWriter of one choice's handler: it passes each
// complete "data: ...\n\n" event on, and keeps the rest.
type subWriter struct {
	i      int
	header http.Header
	status int
	buf    bytes.Buffer
	out    chan<- subEvent
	ctx    context.Context
}

func (w *subWriter) Header() http.Header { return w.header }

func (w *subWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *subWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.buf.Write(p)
	if !strings.HasPrefix(w.header.Get("Content-Type"), "text/event-stream") {
		return len(p), nil
	}
	for {
		ev, rest, ok := bytes.Cut(w.buf.Bytes(), []byte("\n\n"))
		if !ok {
			return len(p), nil
		}
		data, _ := strings.CutPrefix(string(ev), "data: ")
		w.buf.Next(len(w.buf.Bytes()) - len(rest))
		select {
		case w.out <- subEvent{i: w.i, data: data}:
		case <-w.ctx.Done():
			return 0, w.ctx.Err()
		}
	}
}

func (w *subWriter) Flush() {}

// fanOut serves r, whose body's top-level fields are top, as n requests
// for one choice to h, and merges their answers into w.
func (s *Server) fanOut(w http.ResponseWriter, r *http.Request, top map[string]json.RawMessage, n int, h func(http.ResponseWriter, *http.Request) error) error {
	var seed *int64
	if raw, ok := top["seed"]; ok && string(raw) != "null" {
		var v int64
		if err := json.Unmarshal(raw, &v); err != nil {
			return badRequest("seed", "seed: expected an integer, got %s", raw)
		}
		seed = &v
	}
	var includeUsage bool
	if raw, ok := top["stream_options"]; ok {
		var so struct {
			IncludeUsage bool `json:"include_usage"`
		}
		json.Unmarshal(raw, &so)
		includeUsage = so.IncludeUsage
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	ctx = context.WithValue(ctx, groupKey{}, engine.NewGroup(n))
	events := make(chan subEvent)
	var wg sync.WaitGroup
	for i := range n {
		sub := make(map[string]json.RawMessage, len(top))
		for k, v := range top {
			sub[k] = v
		}
		sub["n"] = json.RawMessage("1")
		if seed != nil {
			sub["seed"] = json.RawMessage(fmt.Sprint(*seed + int64(i)))
		}
		body, _ := json.Marshal(sub)
		sr := r.Clone(ctx)
		sr.Body, sr.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		sw := &subWriter{i: i, header: http.Header{}, out: events, ctx: ctx}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := h(sw, sr); err != nil && sw.status == 0 {
				writeError(sw, err)
			}
			select {
			case events <- subEvent{i: i, done: true, status: sw.status, header: sw.header, rest: sw.buf.Bytes()}:
			case <-ctx.Done():
			}
		}()
	}
	defer wg.Wait()
	m := merger{n: n}
	for left := n; left > 0; {
		var ev subEvent
		select {
		case ev = <-events:
		case <-ctx.Done():
			return ctx.Err()
		}
		if ev.done {
			left--
		}
		if err := m.add(w, ev); err != nil {
			cancel()
			if err == errWritten {
				return nil
			}
			return err
		}
	}
	return m.finish(w, includeUsage)
}

// merger merges the choices' answers.
type merger struct {
	n        int
	streamed bool // the merged stream has started (w has its header)
	id       any
	base     map[string]any // the first answer or chunk: id, object, created, model
	choices  []any          // non-streamed: by choice
	usage    []map[string]any
}

// add takes one event of choice ev.i.
func (m *merger) add(w http.ResponseWriter, ev subEvent) error {
	if m.choices == nil {
		m.choices = make([]any, m.n)
	}
	if ev.done && ev.status != http.StatusOK {
		if !m.streamed {
			// Every choice is the same request: its error is the answer.
			copyHeader(w, ev.header)
			w.WriteHeader(ev.status)
			w.Write(ev.rest)
			return errWritten
		}
		var e map[string]any
		if json.Unmarshal(ev.rest, &e) != nil {
			e = map[string]any{"error": map[string]any{"message": string(ev.rest), "type": "server_error"}}
		}
		return m.send(w, e)
	}
	if ev.done {
		if len(bytes.TrimSpace(ev.rest)) == 0 {
			return nil // a stream's end
		}
		var out map[string]any
		if err := json.Unmarshal(ev.rest, &out); err != nil {
			return fmt.Errorf("choice %d: %v", ev.i, err)
		}
		if m.base == nil {
			m.base = out
		}
		if cs, _ := out["choices"].([]any); len(cs) == 1 {
			c := cs[0].(map[string]any)
			c["index"] = ev.i
			m.choices[ev.i] = c
		}
		if u, ok := out["usage"].(map[string]any); ok {
			m.usage = append(m.usage, u)
		}
		return nil
	}
	if ev.data == "[DONE]" {
		return nil
	}
	var chunk map[string]any
	dec := json.NewDecoder(strings.NewReader(ev.data))
	dec.UseNumber()
	if err := dec.Decode(&chunk); err != nil {
		return fmt.Errorf("choice %d: a chunk that is not JSON: %v", ev.i, err)
	}
	if u, ok := chunk["usage"].(map[string]any); ok && chunk["usage"] != nil {
		if cs, _ := chunk["choices"].([]any); len(cs) == 0 {
			m.usage = append(m.usage, u)
			if m.base == nil {
				m.base = chunk
			}
			return nil
		}
	}
	if m.base == nil {
		m.base = chunk
	}
	if _, ok := chunk["id"]; ok {
		chunk["id"] = m.base["id"]
	}
	if cs, ok := chunk["choices"].([]any); ok {
		for _, c := range cs {
			if c, ok := c.(map[string]any); ok {
				c["index"] = ev.i
			}
		}
	}
	return m.send(w, chunk)
}

// errWritten stops the merge: the answer (a choice's error) is written.
var errWritten = errors.New("written")

func copyHeader(w http.ResponseWriter, h http.Header) {
	for k, v := range h {
		w.Header()[k] = v
	}
}

func (m *merger) send(w http.ResponseWriter, v any) error {
	if !m.streamed {
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		h.Set("Connection", "keep-alive")
		w.WriteHeader(http.StatusOK)
		m.streamed = true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
		return err
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// sumUsage is the usage of n choices: the prompt once, every choice's
// completion tokens.
func sumUsage(us []map[string]any) map[string]any {
	num := func(v any) int64 {
		switch x := v.(type) {
		case float64:
			return int64(x)
		case json.Number:
			n, _ := x.Int64()
			return n
		}
		return 0
	}
	out := map[string]any{}
	var prompt, completion int64
	for i, u := range us {
		if i == 0 {
			prompt = num(u["prompt_tokens"])
			if d, ok := u["prompt_tokens_details"]; ok {
				out["prompt_tokens_details"] = d
			}
		}
		completion += num(u["completion_tokens"])
	}
	out["prompt_tokens"], out["completion_tokens"], out["total_tokens"] = prompt, completion, prompt+completion
	return out
}

// finish writes the merged non-streamed answer, or ends the merged stream.
func (m *merger) finish(w http.ResponseWriter, includeUsage bool) error {
	if !m.streamed {
		out := m.base
		if out == nil {
			return fmt.Errorf("no choice answered")
		}
		out["choices"] = m.choices
		if len(m.usage) > 0 {
			out["usage"] = sumUsage(m.usage)
		}
		writeJSON(w, out)
		return nil
	}
	if includeUsage && len(m.usage) > 0 {
		u := map[string]any{"choices": []any{}, "usage": sumUsage(m.usage)}
		for _, k := range []string{"id", "object", "created", "model"} {
			if v, ok := m.base[k]; ok {
				u[k] = v
			}
		}
		if err := m.send(w, u); err != nil {
			return err
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}
