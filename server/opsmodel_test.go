package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/archc/archc/internal/launch"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/engine"
)

// logBuffer collects JSON log records.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// records returns the records whose msg is msg.
func (l *logBuffer) records(msg string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(l.b.String(), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) == nil && r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// servedText is served with a tokenizer: SmolLM2's (whose ids below 256,
// the fixture's vocabulary, are special tokens and single bytes, 113 of
// them parts of multi-byte characters), a chat template that writes the
// messages' contents, and a JSON log. It speculates by prompt lookup
// (infer serve --speculative ngram), so every test on it also checks that
// speculation changes no greedy output.
func servedText(t *testing.T, cfg Config) (*rt.Model, *engine.Engine, string, *rt.Text, *logBuffer) {
	t.Helper()
	testmodels.NeedIREE(t)
	smol, err := rt.LoadText(testmodels.GGUF(t, "smollm2"))
	if err != nil {
		t.Fatal(err)
	}
	text := &rt.Text{Tokenizer: smol.Tokenizer, ChatTemplate: "{% for m in messages %}{{ m['content'] }}{% endfor %}"}
	var o launch.Options
	o.Plan.Lower.Slots = 3
	o.Plan.Lower.DecodeBatches = []int64{1, 2}
	o.Plan.Lower.MaxLen = 128
	o.Plan.Lower.VerifyBuckets = []int64{5}
	m, err := launch.Open(context.Background(), fixture, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	logs := &logBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	e, err := engine.New(m, engine.Options{QueueSize: 8, CallTimeout: 20 * time.Second, Log: log, Speculative: &rt.Speculation{Drafter: rt.PromptLookup{}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Name, cfg.Log = "fixture", log
	s := New(cfg)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	s.Attach(m, text, e)
	return m, e, ts.URL, text, logs
}

func metricValue(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("/metrics has no %s:\n%s", name, b)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

// TestSpeculativeServe: on a server that speculates, a completion's
// greedy tokens are the same with speculation and with "speculative":
// false; a repetitive prompt gets drafts accepted, which /metrics counts
// under vLLM's names; a chat request's prediction is taken, a malformed
// one is a 400 naming it.
func TestSpeculativeServe(t *testing.T) {
	_, e, url, _, _ := servedText(t, Config{})
	run(t, e)
	var prompt []int32
	for range 6 {
		prompt = append(prompt, 40, 41, 42, 43, 44, 45, 46)
	}
	body := func(extra string) string {
		return fmt.Sprintf(`{"prompt": %s, "max_tokens": 24, "temperature": 0%s}`, idList(prompt), extra)
	}
	drafts := metricValue(t, url, "vllm:spec_decode_num_drafts_total{model_name=\"fixture\"}")
	code, on := post(t, url+"/v1/completions", body(""))
	if code != 200 {
		t.Fatalf("speculating: %d %v", code, on)
	}
	code, off := post(t, url+"/v1/completions", body(`, "speculative": false`))
	if code != 200 {
		t.Fatalf("speculative false: %d %v", code, off)
	}
	got, want := ids(on["choices"].([]any)[0].(map[string]any)["token_ids"]), ids(off["choices"].([]any)[0].(map[string]any)["token_ids"])
	if !slices.Equal(got, want) {
		t.Errorf("tokens with speculation %v, without %v", got, want)
	}
	if d := metricValue(t, url, "vllm:spec_decode_num_drafts_total{model_name=\"fixture\"}"); d <= drafts {
		t.Errorf("vllm:spec_decode_num_drafts_total %v after a repetitive prompt, was %v", d, drafts)
	}
	if a := metricValue(t, url, "vllm:spec_decode_num_accepted_tokens_total{model_name=\"fixture\"}"); a < 0 {
		t.Errorf("vllm:spec_decode_num_accepted_tokens_total %v", a)
	}
	code, chat := post(t, url+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "a!"}], "max_tokens": 8, "temperature": 0, "prediction": {"type": "content", "content": "a!a!"}}`)
	if code != 200 {
		t.Errorf("chat with a prediction: %d %v", code, chat)
	}
	code, bad := post(t, url+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "x"}], "max_tokens": 4, "prediction": {"type": "audio"}}`)
	if code != 400 || !strings.Contains(fmt.Sprint(bad), "prediction") {
		t.Errorf("a malformed prediction: %d %v, want a 400 naming it", code, bad)
	}
}

// TestOps: the log line per request, the vLLM-named metrics, the worker's
// failure and restart (logged, /health 503 meanwhile, counted), and the
// API additions that need a tokenizer: logprob bytes, echo, tokenize,
// detokenize, GET /v1/models/{id}.
func TestOps(t *testing.T) {
	m, e, url, text, logs := servedText(t, Config{})
	pid := m.WorkerPid() // before Run: the engine owns m from then on
	run(t, e)

	// A request's log line and the token counters.
	req, _ := http.NewRequest("POST", url+"/v1/completions", strings.NewReader(fmt.Sprintf(`{"prompt": %s, "max_tokens": 9, "temperature": 0, "stream": true, "some_new_field": 1}`, idList(testPrompt(12)))))
	req.Header.Set("X-Request-Id", "my-request-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got := resp.Header.Get("X-Request-Id"); got != "my-request-1" {
		t.Errorf("X-Request-Id %q, want the client's", got)
	}
	var line map[string]any
	for _, r := range logs.records("request") {
		if r["id"] == "my-request-1" {
			line = r
		}
	}
	if line == nil || line["endpoint"] != "/v1/completions" || line["status"] != 200.0 || line["prompt_tokens"] != 12.0 ||
		line["generated_tokens"] != 9.0 || line["finish"] != "length" || line["ttft_ms"] == nil || line["duration_ms"] == nil || line["ignored_fields"] != "some_new_field" {
		t.Errorf("the request's log line: %v", line)
	}
	name := `{model_name="fixture"}`
	if v := metricValue(t, url, "vllm:prompt_tokens_total"+name); v != 12 {
		t.Errorf("vllm:prompt_tokens_total %v, want 12", v)
	}
	if v := metricValue(t, url, "vllm:generation_tokens_total"+name); v != 9 {
		t.Errorf("vllm:generation_tokens_total %v, want 9", v)
	}
	if v := metricValue(t, url, `vllm:request_success_total{finished_reason="length",model_name="fixture"}`); v != 1 {
		t.Errorf("vllm:request_success_total %v, want 1", v)
	}

	// top_logprobs out of range, or without logprobs, is refused with
	// what is wrong of the two.
	for _, c := range []struct{ body, want string }{
		{`"logprobs": true, "top_logprobs": 50`, "top_logprobs must be in [0, 20], got 50"},
		{`"logprobs": false, "top_logprobs": 2`, "top_logprobs needs logprobs: true"},
	} {
		code, out := post(t, url+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "a!"}], "max_tokens": 2, `+c.body+`}`)
		e, _ := out["error"].(map[string]any)
		if msg, _ := e["message"].(string); code != 400 || msg != c.want || e["param"] != "top_logprobs" {
			t.Errorf("%s: %d %v; want 400 %q naming top_logprobs", c.body, code, out, c.want)
		}
	}

	// Logprob bytes are each token's own bytes, also inside a multi-byte
	// character.
	code, out := post(t, url+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "a!"}], "max_tokens": 40, "temperature": 1.5, "seed": 3, "logprobs": true, "top_logprobs": 2}`)
	if code != 200 {
		t.Fatalf("chat: %d %v", code, out)
	}
	c := out["choices"].([]any)[0].(map[string]any)
	toks := ids(c["token_ids"])
	content := c["logprobs"].(map[string]any)["content"].([]any)
	partial := 0
	for i, lp := range content {
		lp := lp.(map[string]any)
		var got []byte
		for _, b := range lp["bytes"].([]any) {
			got = append(got, byte(b.(float64)))
		}
		want := text.Tokenizer.TokenBytes(toks[i])
		if !bytes.Equal(got, want) {
			t.Errorf("token %d (%d): bytes %v, want %v", i, toks[i], got, want)
		}
		if !utf8.Valid(want) {
			partial++
		}
		for _, a := range lp["top_logprobs"].([]any) {
			if a.(map[string]any)["bytes"] == nil {
				t.Errorf("token %d: an alternative without bytes", i)
			}
		}
	}
	t.Logf("%d tokens, %d of them parts of a character", len(content), partial)
	if partial == 0 {
		t.Errorf("no generated token was part of a multi-byte character: the check above proved nothing (tokens %v)", toks)
	}

	// echo: the prompt without the BOS.
	code, out = post(t, url+"/v1/completions", `{"prompt": [1, 81, 17], "max_tokens": 1, "echo": true}`)
	if code != 200 {
		t.Fatalf("echo: %d %v", code, out)
	}
	if got, _ := out["choices"].([]any)[0].(map[string]any)["text"].(string); !strings.HasPrefix(got, "a!") {
		t.Errorf("echo of [BOS, a, !]: %q, want the text to start with \"a!\"", got)
	}

	// tokenize and detokenize.
	code, out = post(t, url+"/tokenize", `{"prompt": "a b hi!", "return_token_strs": true}`)
	if code != 200 || fmt.Sprint(out["tokens"]) != "[81 278 15876 17]" || out["count"] != 4.0 || out["max_model_len"] != 128.0 || fmt.Sprint(out["token_strs"]) != "[a Ġb Ġhi !]" {
		t.Errorf("tokenize: %d %v", code, out)
	}
	code, out = post(t, url+"/tokenize", `{"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "!"}]}`)
	if code != 200 || fmt.Sprint(out["tokens"]) != "[81 17]" {
		t.Errorf("tokenize messages: %d %v", code, out)
	}
	code, out = post(t, url+"/detokenize", `{"tokens": [81, 278, 15876, 17]}`)
	if code != 200 || out["prompt"] != "a b hi!" {
		t.Errorf("detokenize: %d %v", code, out)
	}
	if code, out = post(t, url+"/detokenize", `{"tokens": [60000]}`); code != 400 {
		t.Errorf("detokenize of an id outside the vocabulary: %d %v", code, out)
	}

	// n > 1: choice i is the request with seed+i; the usage counts the
	// prompt once, which is prefilled once (copied into two more slots).
	shared := e.Stats().SharedPrefills
	code, out = post(t, url+"/v1/completions", fmt.Sprintf(`{"prompt": %s, "max_tokens": 6, "temperature": 1, "seed": 5, "n": 3}`, idList(testPrompt(7))))
	if code != 200 {
		t.Fatalf("n=3: %d %v", code, out)
	}
	if got := e.Stats().SharedPrefills - shared; got != 2 {
		t.Errorf("n=3: %d slots got the prompt by a copy, want 2", got)
	}
	choices := out["choices"].([]any)
	total := 0
	for i, c := range choices {
		c := c.(map[string]any)
		got := ids(c["token_ids"])
		total += len(got)
		if c["index"] != float64(i) {
			t.Errorf("n=3: choice %d has index %v", i, c["index"])
		}
		_, one := post(t, url+"/v1/completions", fmt.Sprintf(`{"prompt": %s, "max_tokens": 6, "temperature": 1, "seed": %d}`, idList(testPrompt(7)), 5+i))
		if want := ids(one["choices"].([]any)[0].(map[string]any)["token_ids"]); !slices.Equal(got, want) {
			t.Errorf("n=3: choice %d %v, want the seed %d request's %v", i, got, 5+i, want)
		}
	}
	if u := out["usage"].(map[string]any); len(choices) != 3 || u["prompt_tokens"] != 7.0 || u["completion_tokens"] != float64(total) {
		t.Errorf("n=3: %d choices, usage %v (completion tokens %d)", len(choices), u, total)
	}
	resp, err = http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(`{"messages": [{"role": "user", "content": "a!"}], "max_tokens": 5, "n": 2, "stream": true, "stream_options": {"include_usage": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	finishes, usages, dones, chunkIDs := map[float64]string{}, 0, 0, map[any]bool{}
	var streamUsage map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			dones++
			continue
		}
		var chunk map[string]any
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("n=2 stream: %q: %v", data, err)
		}
		chunkIDs[chunk["id"]] = true
		if u, ok := chunk["usage"].(map[string]any); ok {
			usages++
			streamUsage = u
		}
		for _, c := range chunk["choices"].([]any) {
			c := c.(map[string]any)
			if f, ok := c["finish_reason"].(string); ok {
				finishes[c["index"].(float64)] = f
			}
		}
	}
	resp.Body.Close()
	// Each choice samples up to 5 tokens: 10 when both run to the length
	// limit, fewer when one samples EOS first (the request has no seed).
	if got, _ := streamUsage["completion_tokens"].(float64); finishes[0] == "length" && finishes[1] == "length" && got != 10 || got < 2 || got > 10 {
		t.Errorf("n=2 stream usage %v with finish reasons %v: want 10 completion tokens when both reach the length limit, 2 to 10 otherwise", streamUsage, finishes)
	}
	if len(finishes) != 2 || usages != 1 || dones != 1 || len(chunkIDs) != 1 {
		t.Errorf("n=2 stream: finish reasons %v, %d usage chunks, %d [DONE], ids %v; want 2 finishes, 1, 1, one id", finishes, usages, dones, chunkIDs)
	}

	// GET /v1/models/{id}.
	for id, want := range map[string]int{"fixture": 200, "gpt-4": 404} {
		resp, err := http.Get(url + "/v1/models/" + id)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != want || want == 200 && (body["id"] != "fixture" || body["max_model_len"] != 128.0) {
			t.Errorf("GET /v1/models/%s: %d %v, want %d", id, resp.StatusCode, body, want)
		}
	}

	// Running requests hold KV cache: the gauges, polled while three
	// streams run, show it.
	var wg sync.WaitGroup
	done := make(chan struct{})
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stream(t, url+"/v1/completions", fmt.Sprintf(`{"prompt": %s, "max_tokens": 100, "temperature": 0, "stream": true}`, idList(testPrompt(20+i))))
		}()
	}
	go func() { wg.Wait(); close(done) }()
	maxKV, maxRunning := 0.0, 0.0
	for polling := true; polling; {
		select {
		case <-done:
			polling = false
		default:
		}
		maxKV = max(maxKV, metricValue(t, url, "vllm:kv_cache_usage_perc"+name))
		maxRunning = max(maxRunning, metricValue(t, url, "vllm:num_requests_running"+name))
	}
	if maxKV <= 0 || maxKV > 1 || maxRunning < 1 || maxRunning > 3 {
		t.Errorf("during three requests: vllm:kv_cache_usage_perc at most %v (want in (0, 1]), vllm:num_requests_running at most %v (want 1 to 3)", maxKV, maxRunning)
	}

	// A killed worker: the next request's call fails, which is logged, and
	// /health says 503 while the worker restarts, then 200.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the worker is gone
	go func() {
		if resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(fmt.Sprintf(`{"prompt": %s, "max_tokens": 4}`, idList(testPrompt(5))))); err == nil {
			resp.Body.Close()
		}
	}()
	saw503 := false
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		resp, err := http.Get(url + "/health")
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode == 503 && body["status"] == "restarting" {
			saw503 = true
		}
		if resp.StatusCode == 200 && len(logs.records("worker restarted")) > 0 {
			break
		}
	}
	if !saw503 {
		t.Error("/health never answered 503 restarting while the worker restarted")
	}
	if f := logs.records("worker failed"); len(f) != 1 || f[0]["requests_ended"] != 1.0 || f[0]["level"] != "ERROR" {
		t.Errorf("worker failed log records: %v", f)
	}
	if r := logs.records("worker restarted"); len(r) != 1 || r[0]["duration_ms"] == nil {
		t.Errorf("worker restarted log records: %v", r)
	}
	if v := metricValue(t, url, "archc_worker_restarts"); v != 1 {
		t.Errorf("archc_worker_restarts %v, want 1", v)
	}
	if v := metricValue(t, url, "vllm:kv_cache_usage_perc"+name); v != 0 {
		t.Errorf("vllm:kv_cache_usage_perc %v after the request, want 0", v)
	}
}
