package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/archc/archc/internal/launch"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/engine"
)

// coreServer is servedText's server (the same compiled module), returned
// itself, for tests that call the chat core.
func coreServer(t *testing.T) (*Server, *engine.Engine, *rt.Text) {
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
	e, err := engine.New(m, engine.Options{QueueSize: 8, CallTimeout: 20 * time.Second, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	run(t, e)
	s := New(Config{Name: "fixture"})
	s.Attach(m, text, e)
	return s, e, text
}

// events plans a chat completions body on s and runs it as n choices,
// returning every event in the order emitted. inThink makes the plan read
// the output as reasoning from its start, as after a prompt that opens
// it (the fixture's 256-token vocabulary cannot spell <think>).
func events(t *testing.T, s *Server, body string, n int, inThink ...bool) ([]chatEvent, error) {
	t.Helper()
	req := chatReq(t, body)
	job, err := s.prepare(context.Background(), req.input(), req.sampling)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if len(inThink) > 0 {
		job.plan.inThink = inThink[0]
	}
	var out []chatEvent
	err = s.runChat(context.Background(), job, n, func(ev chatEvent) error {
		out = append(out, ev)
		return nil
	})
	return out, err
}

// kinds is the events' kinds, for choice i.
func kinds(evs []chatEvent, i int) []eventKind {
	var out []eventKind
	for _, ev := range evs {
		if ev.Choice == i {
			out = append(out, ev.Kind)
		}
	}
	return out
}

// TestChatCoreEvents: the core's events for a tool call (the text before
// it as text deltas, never a marker; the call's head, then its
// arguments; finish tool_calls), for reasoning (a prompt that
// opens <think>: every delta is reasoning, together the generated text
// trimmed), and for n = 3 seeded choices (each begins, ends with its
// finish, and has the tokens of the request for one choice with seed+i).
func TestChatCoreEvents(t *testing.T) {
	s, _, text := coreServer(t)

	// A call: the model's text (scripted) read in the Hermes convention.
	text.ChatTemplate = "{% for m in messages %}{{ m['content'] }}{% endfor %}{% if false %}<tool_call>{{ tools }}{% endif %}"
	tool := `{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}`
	req := chatReq(t, `{"messages": [{"role": "user", "content": "!"}], "tools": [`+tool+`], "max_tokens": 100}`)
	job, err := s.prepare(context.Background(), req.input(), req.sampling)
	if err != nil {
		t.Fatal(err)
	}
	pieces := []string{"Let me", " check.", "\n<tool", "_call>\n{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"}
	job.generate = func(ctx context.Context, req engine.Request, onText func(string, []int32, []tokenLogprob) error) (*result, error) {
		res := &result{Finish: "stop", PromptTokens: 1}
		for i, p := range pieces {
			res.Text += p
			res.TokenIDs = append(res.TokenIDs, int32(i))
			if err := onText(p, []int32{int32(i)}, nil); err != nil {
				return res, err
			}
		}
		res.CompletionTokens = len(pieces)
		return res, nil
	}
	var evs []chatEvent
	if err := s.runChat(context.Background(), job, 1, func(ev chatEvent) error { evs = append(evs, ev); return nil }); err != nil {
		t.Fatal(err)
	}
	var content strings.Builder
	var calls []chatEvent
	for _, ev := range evs {
		switch ev.Kind {
		case evCall:
			calls = append(calls, ev)
		case evDelta:
			content.WriteString(ev.Text)
			if ev.Reasoning != "" || strings.Contains(ev.Text, "<") {
				t.Errorf("call: a delta %+v", ev)
			}
		}
	}
	fin := evs[len(evs)-1]
	if k := kinds(evs, 0); k[0] != evBegin || fin.Kind != evFinish {
		t.Fatalf("call: kinds %v", k)
	}
	if content.String() != "Let me check." || len(calls) != 2 || calls[0].Name != "get_weather" || !strings.HasPrefix(calls[0].ID, "call_") || calls[0].Text != "" ||
		calls[1].Name != "" || calls[1].Text != `{"city":"Paris"}` || fin.Finish != "tool_calls" {
		t.Errorf("call: content %q, calls %+v, finish %q", content.String(), calls, fin.Finish)
	}

	// Reasoning.
	text.ChatTemplate = "{% for m in messages %}{{ m['content'] }}{% endfor %}{% if false %}<think></think>{% endif %}"
	evs, err = events(t, s, `{"messages": [{"role": "user", "content": "!"}], "max_tokens": 12, "temperature": 0}`, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	var reasoning strings.Builder
	for _, ev := range evs {
		if ev.Kind == evDelta {
			if ev.Text != "" {
				t.Errorf("reasoning: a text delta %q", ev.Text)
			}
			reasoning.WriteString(ev.Reasoning)
		}
	}
	fin = evs[len(evs)-1]
	if fin.Kind != evFinish || fin.Result.CompletionTokens != 12 || reasoning.String() != strings.TrimSpace(fin.Result.Text) || reasoning.Len() == 0 {
		t.Errorf("reasoning %q, generated %q (%+v)", reasoning.String(), fin.Result.Text, fin)
	}

	// n = 3.
	text.ChatTemplate = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
	body := func(seed string) string {
		return `{"messages": [{"role": "user", "content": "!"}], "max_tokens": 8, "temperature": 1, "seed": ` + seed + `}`
	}
	evs, err = events(t, s, body("5"), 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		k := kinds(evs, i)
		if len(k) < 2 || k[0] != evBegin || k[len(k)-1] != evFinish || slices.Contains(k[1:len(k)-1], evBegin) || slices.Contains(k[:len(k)-1], evFinish) {
			t.Fatalf("choice %d: kinds %v", i, k)
		}
		var got []int32
		for _, ev := range evs {
			if ev.Choice == i && ev.Kind == evDelta {
				got = append(got, ev.IDs...)
			}
		}
		one, err := events(t, s, body(string(rune('5'+i))), 1)
		if err != nil {
			t.Fatal(err)
		}
		if want := one[len(one)-1].Result.TokenIDs; !slices.Equal(got, want) {
			t.Errorf("choice %d: %v, the seed %d request's %v", i, got, 5+i, want)
		}
	}
}

// TestChatCoreCancel: an emit that fails mid-stream (a client gone) ends
// the request, for one choice and for two: runChat returns its error, emit
// is not called again, and the engine frees every slot.
func TestChatCoreCancel(t *testing.T) {
	s, e, _ := coreServer(t)
	gone := errors.New("gone")
	for _, n := range []int{1, 2} {
		req := chatReq(t, `{"messages": [{"role": "user", "content": "!"}], "max_tokens": 90, "temperature": 1}`)
		job, err := s.prepare(context.Background(), req.input(), req.sampling)
		if err != nil {
			t.Fatal(err)
		}
		deltas, after := 0, 0
		err = s.runChat(context.Background(), job, n, func(ev chatEvent) error {
			if deltas > 0 {
				after++
			}
			if ev.Kind == evDelta {
				deltas++
				return gone
			}
			return nil
		})
		if !errors.Is(err, gone) || deltas != 1 || after != 0 {
			t.Errorf("n=%d: %v after %d deltas, %d events after the failed emit", n, err, deltas, after)
		}
		for i := 0; i < 500 && (e.Stats().Running > 0 || e.Stats().Queued > 0); i++ {
			time.Sleep(20 * time.Millisecond)
		}
		if st := e.Stats(); st.Running != 0 || st.Queued != 0 || st.KVTokens != 0 {
			t.Errorf("n=%d: after the cancel %+v, want no slot in use", n, st)
		}
	}
}

// recordedChat is how chat completions rendered recordedEvents before the
// chat core (the chunks of its stream, then its whole answer), less the
// fields every chunk repeats (id, object, created, model) and logprobs.
var recordedChat = []string{
	`{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}`,
	`{"index": 0, "delta": {"reasoning_content": "Two "}, "finish_reason": null, "token_ids": [1]}`,
	`{"index": 0, "delta": {"reasoning_content": "cities."}, "finish_reason": null, "token_ids": [2]}`,
	`{"index": 0, "delta": {"content": "Checking."}, "finish_reason": null, "token_ids": [3]}`,
	`{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "ID", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}, "finish_reason": null}`,
	`{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":\"Paris\"}"}}]}, "finish_reason": null}`,
	`{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "ID", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}, "finish_reason": null}`,
	`{"index": 0, "delta": {"tool_calls": [{"index": 1, "function": {"arguments": "{\"city\":\"Rome\"}"}}]}, "finish_reason": null}`,
	`{"index": 0, "delta": {}, "finish_reason": "tool_calls"}`,
}

const recordedChatAnswer = `{"index": 0, "message": {"role": "assistant", "content": "Checking.", "reasoning_content": "Two cities.",
	"tool_calls": [{"id": "ID", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
	{"id": "ID", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Rome\"}"}}]},
	"finish_reason": "tool_calls", "token_ids": [1, 2, 3]}`

// TestChatRendersRecorded: chat completions renders the recorded events
// (reasoning, text, two parallel calls) as it did before the chat core,
// streamed (with the usage chunk) and whole, and n = 2 as two choices
// under one id with the prompt counted once. The Responses and Messages
// renderings of the same events are TestStreamedToolBlocks' and
// TestTranslationSDKShapes'.
func TestChatRendersRecorded(t *testing.T) {
	s := New(Config{Name: "recorded"})
	s.replay = recordedEvents
	s.Attach(nil, withTemplate(t, smolText(t), "Qwen-Qwen3-0.6B.jinja"), &engine.Engine{})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	tools := `"tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]`
	norm := func(v any) any {
		b, _ := json.Marshal(v)
		txt := string(b)
		for _, id := range []string{"call_a", "call_b"} {
			txt = strings.ReplaceAll(txt, `"`+id+`"`, `"ID"`)
		}
		var out any
		json.Unmarshal([]byte(txt), &out)
		if m, ok := out.(map[string]any); ok {
			delete(m, "logprobs")
		}
		return out
	}
	want := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return v
	}

	evs := sseEvents(t, ts.URL+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Weather?"}], `+tools+`, "stream": true, "stream_options": {"include_usage": true}}`)
	if len(evs) != len(recordedChat)+2 || evs[len(evs)-1][1] != "[DONE]" {
		t.Fatalf("stream: %v", evs)
	}
	var id any
	for i, ev := range evs[:len(recordedChat)] {
		var chunk map[string]any
		json.Unmarshal([]byte(ev[1]), &chunk)
		if i == 0 {
			id = chunk["id"]
		}
		cs, _ := chunk["choices"].([]any)
		if chunk["id"] != id || chunk["object"] != "chat.completion.chunk" || len(cs) != 1 || !reflect.DeepEqual(norm(cs[0]), want(recordedChat[i])) {
			t.Errorf("chunk %d: %s\nwant choice %s", i, ev[1], recordedChat[i])
		}
	}
	var u map[string]any
	json.Unmarshal([]byte(evs[len(recordedChat)][1]), &u)
	if !reflect.DeepEqual(u["usage"], want(`{"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13, "prompt_tokens_details": {"cached_tokens": 4}}`)) || len(u["choices"].([]any)) != 0 {
		t.Errorf("usage chunk %v", u)
	}

	code, out := post(t, ts.URL+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Weather?"}], `+tools+`}`)
	if cs, _ := out["choices"].([]any); code != 200 || len(cs) != 1 || !reflect.DeepEqual(norm(cs[0]), want(recordedChatAnswer)) {
		t.Errorf("answer: %d %v", code, out)
	}

	code, out = post(t, ts.URL+"/v1/chat/completions", `{"messages": [{"role": "user", "content": "Weather?"}], `+tools+`, "n": 2}`)
	cs, _ := out["choices"].([]any)
	if code != 200 || len(cs) != 2 || !reflect.DeepEqual(out["usage"], want(`{"prompt_tokens": 10, "completion_tokens": 6, "total_tokens": 16, "prompt_tokens_details": {"cached_tokens": 4}}`)) {
		t.Fatalf("n=2: %d %v", code, out)
	}
	for i, c := range cs {
		c := c.(map[string]any)
		if c["index"] != float64(i) {
			t.Errorf("n=2: choice %d has index %v", i, c["index"])
		}
		c["index"] = 0.0
		if !reflect.DeepEqual(norm(c), want(recordedChatAnswer)) {
			t.Errorf("n=2: choice %d %v", i, c)
		}
	}
}
