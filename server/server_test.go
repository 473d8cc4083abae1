package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/engine"
)

const fixture = "../golden/testdata/llama-tied"

// hybridFixture holds a KV cache (its attention layer) and conv windows
// (its short-conv layers) per slot: the serving tests that run on it check
// that a slot's fixed-size state is reused only where it is held.
const hybridFixture = "../golden/testdata/lfm2"

// servingFixtures are the fixtures the batched == single and worker-crash
// tests run on: attention only, and a hybrid.
var servingFixtures = []string{fixture, hybridFixture}

// served loads the fixture (3 slots, decode batches 1 and 2, 128 tokens)
// behind a test server and returns the model and the server's URL.
func served(t *testing.T, cfg Config) (*rt.Model, *engine.Engine, string) {
	t.Helper()
	return servedDir(t, fixture, cfg)
}

// servedDir is served on the fixture in dir.
func servedDir(t *testing.T, fixture string, cfg Config) (*rt.Model, *engine.Engine, string) {
	t.Helper()
	testmodels.NeedIREE(t)
	var o launch.Options
	o.Plan.Lower.Slots = 3
	o.Plan.Lower.DecodeBatches = []int64{1, 2}
	o.Plan.Lower.MaxLen = 128
	m, err := launch.Open(context.Background(), fixture, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	e, err := engine.New(m, engine.Options{QueueSize: 8, CallTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name == "" {
		cfg.Name = "fixture"
	}
	s := New(cfg)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	// Run starts later (run), so a test can compute single-sequence
	// references on m first.
	t.Cleanup(func() {})
	s.Attach(m, nil, e)
	return m, e, ts.URL
}

func run(t *testing.T, e *engine.Engine) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
}

func post(t *testing.T, url, body string, hdr ...string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: response is not JSON: %q", url, b)
	}
	return resp.StatusCode, out
}

func ids(v any) []int32 {
	var out []int32
	for _, x := range v.([]any) {
		out = append(out, int32(x.(float64)))
	}
	return out
}

func idList(p []int32) string {
	b, _ := json.Marshal(p)
	return string(b)
}

// stream posts a streaming request and returns the chunks' token ids, the
// finish reason and whether the stream ended with [DONE].
func stream(t *testing.T, url, body string) ([]int32, string, bool) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream: %d %s", resp.StatusCode, b)
	}
	var got []int32
	finish := ""
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("malformed SSE line %q", line)
		}
		if data == "[DONE]" {
			return got, finish, true
		}
		var chunk map[string]any
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		for _, c := range chunk["choices"].([]any) {
			c := c.(map[string]any)
			if tid, ok := c["token_ids"]; ok && tid != nil {
				got = append(got, ids(tid)...)
			}
			if f, ok := c["finish_reason"].(string); ok {
				finish = f
			}
		}
	}
	return got, finish, false
}

func testPrompt(n int) []int32 {
	p := []int32{1}
	for i := 1; i < n; i++ {
		p = append(p, int32(3+(i*41+n)%250))
	}
	return p
}

// TestConcurrentExact: concurrent greedy requests of different prompt
// lengths, streamed and not, each get exactly the tokens of the same
// request run alone (on each of servingFixtures).
func TestConcurrentExact(t *testing.T) {
	for _, dir := range servingFixtures {
		t.Run(filepath.Base(dir), func(t *testing.T) { concurrentExact(t, dir) })
	}
}

func concurrentExact(t *testing.T, dir string) {
	m, e, url := servedDir(t, dir, Config{})
	lengths := []int{1, 9, 17, 30, 44, 5}
	want := map[int][]int32{}
	for _, n := range lengths {
		g, err := m.Generate(context.Background(), testPrompt(n), rt.GenerateOptions{MaxTokens: 10})
		if err != nil {
			t.Fatal(err)
		}
		want[n] = g.Tokens
	}
	run(t, e)
	var wg sync.WaitGroup
	for i, n := range lengths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf(`{"prompt": %s, "max_tokens": 10, "temperature": 0, "stream": %v}`, idList(testPrompt(n)), i%2 == 0)
			var got []int32
			if i%2 == 0 {
				var done bool
				got, _, done = stream(t, url+"/v1/completions", body)
				if !done {
					t.Errorf("prompt of %d: the stream did not end with [DONE]", n)
				}
			} else {
				code, out := post(t, url+"/v1/completions", body)
				if code != 200 {
					t.Errorf("prompt of %d: %d %v", n, code, out)
					return
				}
				c := out["choices"].([]any)[0].(map[string]any)
				got = ids(c["token_ids"])
				u := out["usage"].(map[string]any)
				if int(u["prompt_tokens"].(float64)) != n || int(u["completion_tokens"].(float64)) != len(got) {
					t.Errorf("prompt of %d: usage %v", n, u)
				}
			}
			if !slices.Equal(got, want[n]) {
				t.Errorf("prompt of %d tokens: served %v, alone %v", n, got, want[n])
			}
		}()
	}
	wg.Wait()
}

// TestErrors: OpenAI-shaped errors with the right status for bad input.
func TestErrors(t *testing.T) {
	_, e, url := served(t, Config{APIKey: "sekret"})
	run(t, e)
	auth := []string{"Authorization", "Bearer sekret"}
	for _, c := range []struct {
		body   string
		hdr    []string
		status int
		want   string
	}{
		{`{"prompt": [1, 2], "max_tokens": 2}`, nil, 401, "API key"},
		{`{"prompt": [1, 2], "max_tokens": 2}`, []string{"Authorization", "Bearer wrong"}, 401, "API key"},
		{`{"prompt": [1, 2], "max_tokens": "two"}`, auth, 400, "max_tokens: want an integer, got a string"},
		{`{"prompt": [1, 2], "temperature": "hot"}`, auth, 400, "temperature: want a number"},
		{`{"prompt": [1, 2], "max_tokens": 2, "n": 9}`, auth, 400, "n must be in [1, 8]"},
		{`{"prompt": [1, 2], "max_tokens": 2, "n": 0}`, auth, 400, "n must be in [1, 8]"},
		{`{"prompt": [1, 2], "max_tokens": 200}`, auth, 400, "exceed the context length of 128 tokens"},
		{`{"prompt": [1, 999], "max_tokens": 2}`, auth, 400, "token id 999 is outside the vocabulary"},
		{`{"max_tokens": 2}`, auth, 400, "prompt is required"},
		{`{"prompt": [1, 2], "max_tokens": 2, "top_p": 3}`, auth, 400, "top-p 3"},
		{`{"prompt": [1, 2], "max_tokens": 2, "logprobs": 50}`, auth, 400, "logprobs must be in [0, 20]"},
		{`{"prompt": "text", "max_tokens": 2}`, auth, 400, "no tokenizer"},
		{`{"prompt": [1, 2`, auth, 400, "not valid JSON"},
		{`{"prompt": [1, 2], "max_tokens": 2} trailing`, auth, 400, "more data after its object (at byte 35)"},
		{`{"prompt": [1, 2], "max_tokens": 2}{}`, auth, 400, "more data after its object"},
		{`[{"prompt": [1, 2]}]`, auth, 400, "the request body must be a JSON object, got array"},
		{`{"prompt": [1, 2], "max_tokens": 2}` + "\n", auth, 200, ""},
		{`{"prompt": [1, 2], "max_tokens": 2, "some_new_field": {"x": 1}}`, auth, 200, ""},
	} {
		code, out := post(t, url+"/v1/completions", c.body, c.hdr...)
		msg := ""
		if e, ok := out["error"].(map[string]any); ok {
			msg, _ = e["message"].(string)
		}
		if code != c.status || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %v, want %d with %q", c.body, code, out, c.status, c.want)
		}
	}
	big := `{"prompt": [1], "pad": "` + strings.Repeat("x", 2<<20) + `"}`
	if code, _ := post(t, url+"/v1/completions", big, auth...); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a 2 MiB body: %d, want 413", code)
	}
	resp, err := http.Get(url + "/v1/models")
	if err != nil || resp.StatusCode != 401 {
		t.Errorf("/v1/models without the key: %v %v", resp.StatusCode, err)
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{{"GET", "/v1/chat/completions", 405}, {"POST", "/v1/models", 405}, {"GET", "/v1/nope", 404}} {
		req, _ := http.NewRequest(c.method, url+c.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != c.status || body["error"] == nil {
			t.Errorf("%s %s: %d %v, want %d with an OpenAI error body", c.method, c.path, resp.StatusCode, body, c.status)
		}
	}
	if code, out := post(t, url+"/v1/completions", `{"prompt": [1, 2], "stop": 5}`, auth...); code != 400 || !strings.Contains(fmt.Sprint(out), "stop: want a string or an array of strings, got a number") {
		t.Errorf("stop 5: %d %v", code, out)
	}
	// A sampling option out of range names itself as the error's param.
	for body, param := range map[string]string{
		`{"prompt": [1, 2], "top_p": 2}`:               "top_p",
		`{"prompt": [1, 2], "min_p": -1}`:              "min_p",
		`{"prompt": [1, 2], "presence_penalty": 3}`:    "presence_penalty",
		`{"prompt": [1, 2], "repetition_penalty": -1}`: "repetition_penalty",
	} {
		code, out := post(t, url+"/v1/completions", body, auth...)
		e, _ := out["error"].(map[string]any)
		if code != 400 || e == nil || e["param"] != param {
			t.Errorf("%s: %d %v, want 400 with param %q", body, code, out, param)
		}
	}
}

// TestNotReady: before a model is attached, /health and the API say 503.
func TestNotReady(t *testing.T) {
	s := New(Config{Name: "x"})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/health")
	if err != nil || resp.StatusCode != 503 {
		t.Errorf("/health while loading: %v %v", resp.StatusCode, err)
	}
	if code, out := post(t, ts.URL+"/v1/completions", `{"prompt": [1]}`); code != 503 {
		t.Errorf("completions while loading: %d %v", code, out)
	}
	page, err := http.Get(ts.URL + "/")
	if err != nil || page.StatusCode != 200 {
		t.Fatalf("chat page: %v %v", page.StatusCode, err)
	}
	b, _ := io.ReadAll(page.Body)
	if !bytes.Contains(b, []byte("chat.js")) {
		t.Errorf("the chat page does not load its script")
	}
}

// TestWorkerKilled: killing the IREE worker mid-stream ends that request
// with an error and the next request is served correctly by a restarted
// worker (on each of servingFixtures: a hybrid's state is lost with the
// worker and must be recomputed, never continued).
func TestWorkerKilled(t *testing.T) {
	for _, dir := range servingFixtures {
		t.Run(filepath.Base(dir), func(t *testing.T) { workerKilled(t, dir) })
	}
}

func workerKilled(t *testing.T, dir string) {
	m, e, url := servedDir(t, dir, Config{})
	p := testPrompt(12)
	g, err := m.Generate(context.Background(), p, rt.GenerateOptions{MaxTokens: 8})
	if err != nil {
		t.Fatal(err)
	}
	pid := m.WorkerPid() // before Run: the engine owns m from then on
	run(t, e)
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(fmt.Sprintf(`{"prompt": %s, "max_tokens": 100, "temperature": 0, "stream": true}`, idList(p))))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Scan() // the first chunk: the request is running
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(rest, []byte(`"finish_reason":"error"`)) && !bytes.Contains(rest, []byte(`"error"`)) {
		t.Errorf("the stream of the killed request ended without an error: %s", rest)
	}
	code, out := post(t, url+"/v1/completions", fmt.Sprintf(`{"prompt": %s, "max_tokens": 8, "temperature": 0}`, idList(p)))
	if code != 200 {
		t.Fatalf("after the restart: %d %v", code, out)
	}
	if got := ids(out["choices"].([]any)[0].(map[string]any)["token_ids"]); !slices.Equal(got, g.Tokens) {
		t.Errorf("after the restart: %v, want %v", got, g.Tokens)
	}
}

// TestQueueFull: beyond the queue the server answers 429 with Retry-After.
func TestQueueFull(t *testing.T) {
	testmodels.NeedIREE(t)
	var o launch.Options
	o.Plan.Lower.Slots = 3
	o.Plan.Lower.DecodeBatches = []int64{1, 2}
	o.Plan.Lower.MaxLen = 128
	m, err := launch.Open(context.Background(), fixture, o)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	e, _ := engine.New(m, engine.Options{QueueSize: 1}) // never run: the queue stays full
	s := New(Config{Name: "x"})
	s.Attach(m, nil, e)
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	go func() { // takes the one queue place and waits
		req, _ := http.NewRequestWithContext(ctx, "POST", ts.URL+"/v1/completions", strings.NewReader(`{"prompt": [1], "max_tokens": 1}`))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	for i := 0; i < 100 && e.Stats().Queued == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(`{"prompt": [1], "max_tokens": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a full queue: %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
