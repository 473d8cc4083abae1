package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/archc/archc/rt/engine"
)

// do sends a request to h and returns the status, the headers and the
// body, which must be JSON.
func do(t *testing.T, h http.Handler, method, path, body string, hdr ...string) (int, http.Header, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: the answer is not JSON (%s): %q", method, path, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	return rec.Code, rec.Header(), out
}

func errMessage(out map[string]any) (msg string, param any) {
	e, _ := out["error"].(map[string]any)
	msg, _ = e["message"].(string)
	return msg, e["param"]
}

// TestRoutes: every path answers JSON in OpenAI's error shape; an endpoint
// without its /v1 prefix gets a 404 naming the right path.
func TestRoutes(t *testing.T) {
	h := New(Config{Name: "m"}).Handler()
	for _, c := range []struct {
		method, path string
		status       int
		want, allow  string
	}{
		{"POST", "/chat/completions", 404, "/v1/chat/completions", ""},
		{"POST", "/completions", 404, "/v1/completions", ""},
		{"GET", "/models", 404, "/v1/models", ""},
		{"POST", "/health", 405, "use GET", "GET"},
		{"POST", "/metrics", 405, "use GET", "GET"},
		{"GET", "/v1/chat/completions", 405, "use POST", "POST"},
		{"DELETE", "/v1/models/m", 405, "use GET", "GET"},
		{"GET", "/tokenize", 405, "use POST", "POST"},
		{"GET", "/nope", 404, "archc serves", ""},
		{"PUT", "/", 404, "archc serves", ""},
		{"GET", "/v1/models/m", 503, "loading", ""},
	} {
		code, hdr, out := do(t, h, c.method, c.path, "")
		msg, _ := errMessage(out)
		if code != c.status || !strings.Contains(msg, c.want) || hdr.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d %v (Allow %q), want %d with %q (Allow %q)", c.method, c.path, code, out, hdr.Get("Allow"), c.status, c.want, c.allow)
		}
	}
	for _, path := range []string{"/", "/chat.js", "/chat.css"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			t.Errorf("GET %s: %d, want the chat page's file", path, rec.Code)
		}
	}
}

// TestAuthSchemes: the bearer scheme in any case (RFC 7235) and
// Anthropic's x-api-key pass; a wrong key or scheme is a 401. A request
// that passes gets 503 here (no model).
func TestAuthSchemes(t *testing.T) {
	h := New(Config{Name: "m", APIKey: "sekret"}).Handler()
	for _, c := range []struct {
		hdr    []string
		status int
	}{
		{[]string{"Authorization", "Bearer sekret"}, 503},
		{[]string{"Authorization", "bearer sekret"}, 503},
		{[]string{"Authorization", "BEARER   sekret"}, 503},
		{[]string{"X-Api-Key", "sekret"}, 503},
		{[]string{"Authorization", "Basic sekret"}, 401},
		{[]string{"Authorization", "Bearer sekret2"}, 401},
		{[]string{"Authorization", "Bearersekret"}, 401},
		{[]string{"X-Api-Key", "nope"}, 401},
		{nil, 401},
	} {
		code, _, out := do(t, h, "GET", "/v1/models", "", c.hdr...)
		if code != c.status {
			t.Errorf("%v: %d %v, want %d", c.hdr, code, out, c.status)
		}
	}
}

// TestCORS: with --cors-origin, preflights from that origin are answered
// and API answers carry Access-Control-Allow-Origin; other origins and a
// server without origins get none.
func TestCORS(t *testing.T) {
	preflight := func(h http.Handler, origin string) http.Header {
		req := httptest.NewRequest("OPTIONS", "/v1/chat/completions", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Header()
	}
	h := New(Config{Name: "m", CORSOrigins: []string{"http://app.example"}}).Handler()
	if got := preflight(h, "http://app.example"); got.Get("Access-Control-Allow-Origin") != "http://app.example" || !strings.Contains(strings.ToLower(got.Get("Access-Control-Allow-Headers")), "authorization") {
		t.Errorf("preflight from the allowed origin: %v", got)
	}
	if got := preflight(h, "http://evil.example"); got.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from another origin: %v", got)
	}
	_, hdr, _ := do(t, h, "GET", "/v1/models", "", "Origin", "http://app.example")
	if hdr.Get("Access-Control-Allow-Origin") != "http://app.example" {
		t.Errorf("GET /v1/models from the allowed origin: %v", hdr)
	}
	if got := preflight(New(Config{Name: "m"}).Handler(), "http://app.example"); got.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("without --cors-origin: %v", got)
	}
	any := New(Config{Name: "m", CORSOrigins: []string{"*"}}).Handler()
	if got := preflight(any, "http://x.example"); got.Get("Access-Control-Allow-Origin") == "" {
		t.Errorf("with *: %v", got)
	}
}

// TestBodyChecks: invalid UTF-8 is a 400 naming the field that holds it;
// a refused field is a 400 naming it unless its value is a no-op; the
// checks run before the handler (which answers 503 here: no model).
func TestBodyChecks(t *testing.T) {
	h := New(Config{Name: "m"}).Handler()
	for _, c := range []struct {
		path, body string
		status     int
		param      any
		want       string
	}{
		{"/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", \"content\": \"a\xffb\"}]}", 400, "messages[0].content", "not valid UTF-8"},
		{"/v1/chat/completions", "{\"messages\": [{\"role\": \"user\", \"content\": \"ok\"}, {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"\xe2\x82\"}]}]}", 400, "messages[1].content[0].text", "not valid UTF-8"},
		{"/v1/completions", "{\"prompt\": \"\xc3\", \"max_tokens\": 2}", 400, "prompt", "not valid UTF-8"},
		{"/v1/completions", "{\"stop\": [\"x\", \"\xff\"]}", 400, "stop[1]", "not valid UTF-8"},
		{"/v1/completions", "{\"\xff\": 1}", 400, "\ufffd", "not valid UTF-8"},
		{"/v1/chat/completions", `{"messages": [], "audio": {"voice": "x"}}`, 400, "audio", "audio is not supported"},
		{"/v1/chat/completions", `{"messages": [], "modalities": ["text", "audio"]}`, 400, "modalities", "not supported"},
		{"/v1/chat/completions", `{"messages": [], "modalities": ["text"], "store": false, "user": "u", "audio": null}`, 503, nil, "loading"},
		{"/v1/chat/completions", `{"messages": [], "store": true}`, 400, "store", "not supported"},
		{"/v1/chat/completions", `{"messages": [], "response_format": {"type": "text"}}`, 503, nil, "loading"},
		{"/v1/completions", `{"prompt": "x", "best_of": 2}`, 400, "best_of", "best_of is not supported"},
		{"/v1/completions", `{"prompt": "x", "best_of": 1, "suffix": ""}`, 503, nil, "loading"},
		{"/v1/completions", `{"prompt": "x", "suffix": "y"}`, 400, "suffix", "fill-in-the-middle"},
		{"/v1/completions", `{"prompt": "x", "some_new_field": 1}`, 503, nil, "loading"},
		{"/v1/completions", `{"prompt": "x", "echo": true, "logprobs": 2}`, 400, "echo", "echo with logprobs"},
		{"/v1/completions", `{"prompt": "x", "echo": true, "logprobs": null}`, 503, nil, "loading"},
		{"/v1/completions", `{"prompt": "x", "echo": true}`, 503, nil, "loading"},
	} {
		code, _, out := do(t, h, "POST", c.path, c.body)
		msg, param := errMessage(out)
		if code != c.status || param != c.param || !strings.Contains(msg, c.want) {
			t.Errorf("%s %q: %d %v, want %d with param %v and %q", c.path, c.body, code, out, c.status, c.param, c.want)
		}
	}
}

// TestInvalidUTF8Field: the JSON path of the first invalid byte.
func TestInvalidUTF8Field(t *testing.T) {
	for body, want := range map[string]string{
		"{\"a\": \"\xff\"}":                          "a",
		"{\"a\": 1, \"b\": {\"c\": [1, \"x\xff\"]}}": "b.c[1]",
		"[\"ok\", {\"k\": \"\xff\"}]":                "[1].k",
		"{\"a\": [{}, [], {\"b\": \"\xc3\"}]}":       "a[2].b",
		"{\"a\": \"x\"}\xff":                         "",
	} {
		if got, _ := invalidUTF8Field([]byte(body)); got != want {
			t.Errorf("%q: %q, want %q", body, got, want)
		}
	}
}

// TestFieldsREADME: the README's table of request fields is the table the
// server applies.
func TestFieldsREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := fieldsMarkdown(); !bytes.Contains(readme, []byte(want)) {
		t.Errorf("README.md does not hold the table of request fields; put this in its serve section:\n%s", want)
	}
}

// TestHealthStatus: /health's answer for each engine state.
func TestHealthStatus(t *testing.T) {
	for _, c := range []struct {
		st     engine.Stats
		ok     bool
		code   int
		status string
	}{
		{engine.Stats{}, false, 503, "loading"},
		{engine.Stats{Restarting: true}, true, 503, "restarting"},
		{engine.Stats{WorkerDown: errors.New("no module")}, true, 503, "down"},
		{engine.Stats{Slots: 2}, true, 200, "ok"},
	} {
		code, body := healthStatus(c.st, c.ok)
		if code != c.code || body["status"] != c.status {
			t.Errorf("%+v: %d %v, want %d %q", c.st, code, body, c.code, c.status)
		}
	}
}

// TestClientGone: a non-streamed request whose client hung up (its
// context cancelled) while the handler ran is logged as the client's
// cancel (499, info), not as a server error, and counted as 499, not
// 500.
func TestClientGone(t *testing.T) {
	var logged bytes.Buffer
	s := New(Config{Name: "m", Log: slog.New(slog.NewTextHandler(&logged, nil))})
	h := s.api(func(w http.ResponseWriter, r *http.Request) error {
		<-r.Context().Done()
		return r.Context().Err() // as a generation or a worker call ended by the closed connection
	})
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest("POST", "/v1/completions", strings.NewReader(`{"prompt": [1]}`)).WithContext(ctx)
	cancel()
	h(httptest.NewRecorder(), req)
	line := logged.String()
	if !strings.Contains(line, "level=INFO") || !strings.Contains(line, "status=499") || strings.Contains(line, "status=500") {
		t.Errorf("log line %q: want level=INFO status=499", line)
	}
	metrics := httptest.NewRecorder()
	s.metrics.handler().ServeHTTP(metrics, httptest.NewRequest("GET", "/metrics", nil))
	if m := metrics.Body.String(); !strings.Contains(m, `status="499"`) || strings.Contains(m, `status="500"`) {
		t.Errorf("metrics count it as %q, want status 499", grepLines(m, "archc_requests_total"))
	}
}

// TestClientGoneMidStream: a streamed answer whose client hung up after
// its first event (the handler's next write failed: a broken pipe, as
// /v1/responses returned it) is logged at info as the client's cancel,
// not as a server error.
func TestClientGoneMidStream(t *testing.T) {
	var logged bytes.Buffer
	s := New(Config{Name: "m", Log: slog.New(slog.NewTextHandler(&logged, nil))})
	ctx, cancel := context.WithCancel(context.Background())
	h := s.api(func(w http.ResponseWriter, r *http.Request) error {
		w.Write([]byte("data: {}\n\n"))
		cancel() // the connection closes
		return errors.New("write tcp 127.0.0.1:8080->127.0.0.1:5555: write: broken pipe")
	})
	req := httptest.NewRequest("POST", "/v1/responses", strings.NewReader(`{"input": "hi", "stream": true}`)).WithContext(ctx)
	h(httptest.NewRecorder(), req)
	line := logged.String()
	if !strings.Contains(line, "level=INFO") || strings.Contains(line, "level=ERROR") || !strings.Contains(line, "client closed") {
		t.Errorf("log line %q: want level=INFO, the client's cancel", line)
	}
}

// grepLines is the lines of s holding sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
