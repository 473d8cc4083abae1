package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/rt/engine"
)

// planOf plans a translated chat request with text's template.
func planOf(t *testing.T, chatReq map[string]any, tpl string) (*chatPlan, string) {
	t.Helper()
	text := withTemplate(t, smolText(t), tpl)
	b, _ := json.Marshal(chatReq)
	var req chatRequest
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	p, err := planChat(text, &req)
	if err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return p, text.Tokenizer.Decode(p.ids)
}

func msgJSON(msgs []chatMessage) string {
	b, _ := json.Marshal(msgs)
	return string(b)
}

// TestResponsesToolItems: function tools, tool_choice, text.format and
// reasoning.effort become chat completions' fields; function_call,
// function_call_output and reasoning items become the assistant's calls,
// tool turns and reasoning_content, and reach the chat template.
func TestResponsesToolItems(t *testing.T) {
	body := `{"input": [
		{"role": "user", "content": "Weather in Paris and Rome?"},
		{"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "Two cities."}]},
		{"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "get_weather", "arguments": "{\"city\": \"Paris\"}", "status": "completed"},
		{"type": "function_call", "id": "fc_2", "call_id": "call_b", "name": "get_weather", "arguments": "{\"city\": \"Rome\"}"},
		{"type": "function_call_output", "call_id": "call_a", "output": "18 C"},
		{"type": "function_call_output", "call_id": "call_b", "output": [{"type": "input_text", "text": "21 C"}]}],
		"tools": [{"type": "function", "name": "get_weather", "description": "Weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}, "strict": true}],
		"tool_choice": {"type": "function", "name": "get_weather"}, "parallel_tool_calls": false,
		"text": {"format": {"type": "text"}}, "reasoning": {"effort": "low"}}`
	req, msgs, err := responsesInput([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"user","content":"Weather in Paris and Rome?"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},{"id":"call_b","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Rome\"}"}}],"reasoning_content":"Two cities."},` +
		`{"role":"tool","content":"18 C","tool_call_id":"call_a"},{"role":"tool","content":"21 C","tool_call_id":"call_b"}]`
	if got := msgJSON(msgs); got != want {
		t.Errorf("turns:\n%s\nwant\n%s", got, want)
	}
	chatReq := map[string]any{"messages": msgs}
	if err := responsesChat(req, chatReq); err != nil {
		t.Fatal(err)
	}
	tools, _ := json.Marshal(chatReq["tools"])
	if string(tools) != `[{"type":"function","function":{"name":"get_weather","description":"Weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]` {
		t.Errorf("tools %s", tools)
	}
	if tc, _ := json.Marshal(chatReq["tool_choice"]); string(tc) != `{"function":{"name":"get_weather"},"type":"function"}` || chatReq["parallel_tool_calls"] != false || chatReq["reasoning_effort"] != "low" {
		t.Errorf("chat request %v", chatReq)
	}
	p, prompt := planOf(t, chatReq, "Qwen-Qwen3-0.6B.jinja")
	for _, w := range []string{`"name": "get_weather", "description": "Weather in a city"`, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>",
		"<tool_response>\n18 C\n</tool_response>\n<tool_response>\n21 C\n</tool_response>"} {
		if !strings.Contains(prompt, w) {
			t.Errorf("prompt lacks %q:\n%s", w, prompt)
		}
	}
	if p.lark == "" || !p.parseTools {
		t.Errorf("a named tool_choice is enforced: lark %q parseTools %v", p.lark, p.parseTools)
	}
	// json_schema output format.
	req, msgs, _ = responsesInput([]byte(`{"input": "x", "text": {"format": {"type": "json_schema", "name": "p", "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}, "strict": true}}}`))
	chatReq = map[string]any{"messages": msgs}
	if err := responsesChat(req, chatReq); err != nil {
		t.Fatal(err)
	}
	if p, _ := planOf(t, chatReq, "Qwen-Qwen3-0.6B.jinja"); !strings.HasPrefix(p.lark, "start: %json") || !strings.Contains(p.lark, `"integer"`) {
		t.Errorf("text.format json_schema: lark %q", p.lark)
	}
}

// TestMessagesToolBlocks: Anthropic tools and tool_choice become chat
// completions' fields; tool_use, thinking and tool_result blocks become
// the assistant's calls and reasoning and tool turns.
func TestMessagesToolBlocks(t *testing.T) {
	body := `{"max_tokens": 50, "system": "Be brief.", "messages": [
		{"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
		{"role": "assistant", "content": [{"type": "thinking", "thinking": "Use the tool.", "signature": "x"}, {"type": "text", "text": "Checking."},
			{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris", "unit": "c"}}]},
		{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "18 C"}]}, {"type": "text", "text": "And Rome?"}]}],
		"tools": [{"name": "get_weather", "description": "Weather in a city", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}, "required": ["city"]}}],
		"tool_choice": {"type": "any", "disable_parallel_tool_use": true}}`
	req, msgs, err := messagesInput([]byte(body), true)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"system","content":"Be brief."},{"role":"user","content":"Weather in Paris?"},` +
		`{"role":"assistant","content":"Checking.","tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"unit\":\"c\"}"}}],"reasoning_content":"Use the tool."},` +
		`{"role":"tool","content":"18 C","tool_call_id":"toolu_1"},{"role":"user","content":"And Rome?"}]`
	if got := msgJSON(msgs); got != want {
		t.Errorf("turns:\n%s\nwant\n%s", got, want)
	}
	chatReq, err := messagesChat(req, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if chatReq["tool_choice"] != "required" || chatReq["parallel_tool_calls"] != false || chatReq["max_tokens"] != 50 {
		t.Errorf("chat request %v", chatReq)
	}
	p, prompt := planOf(t, chatReq, "Qwen-Qwen3-0.6B.jinja")
	for _, w := range []string{`"name": "get_weather", "description": "Weather in a city"`, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>",
		"<tool_response>\n18 C\n</tool_response>", "And Rome?"} {
		if !strings.Contains(prompt, w) {
			t.Errorf("prompt lacks %q:\n%s", w, prompt)
		}
	}
	if p.lark == "" {
		t.Error("tool_choice any is not enforced")
	}
	// A named tool, and output_config's schema.
	req, msgs, _ = messagesInput([]byte(`{"max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "tools": [{"name": "f", "input_schema": {"type": "object"}}], "tool_choice": {"type": "tool", "name": "f"}}`), true)
	if chatReq, _ = messagesChat(req, msgs); !reflect.DeepEqual(chatReq["tool_choice"], map[string]any{"type": "function", "function": map[string]any{"name": "f"}}) {
		t.Errorf("tool_choice tool: %v", chatReq["tool_choice"])
	}
	req, msgs, _ = messagesInput([]byte(`{"max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}, "effort": "high"}}`), true)
	if chatReq, _ = messagesChat(req, msgs); chatReq["response_format"] == nil || chatReq["reasoning_effort"] != "high" {
		t.Errorf("output_config: %v", chatReq)
	}
}

// TestTranslatedToolErrors: bad tools, tool choices, items and blocks are
// 400s naming the caller's field, also when the chat handler finds them.
func TestTranslatedToolErrors(t *testing.T) {
	for _, c := range []struct{ body, param string }{
		{`{"input": [{"type": "item_reference", "id": "x"}]}`, "input[0].type"},
		{`{"input": [{"type": "function_call", "name": "f"}]}`, "input[0]"},
		{`{"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{oops"}]}`, "input[0].arguments"},
		{`{"input": [{"type": "function_call_output", "output": "1"}]}`, "input[0].call_id"},
		{`{"input": [{"type": "function_call_output", "call_id": "c", "output": [{"type": "input_image"}]}]}`, "input[0].output[0]"},
		{`{"input": "x", "tools": [{"type": "web_search"}]}`, "tools[0].type"},
		{`{"input": "x", "tool_choice": {"type": "allowed_tools"}}`, "tool_choice"},
		{`{"input": "x", "text": {"format": {"type": "yaml"}}}`, "text.format.type"},
		{`{"input": "x", "text": {"verbosity": "low"}}`, "text.verbosity"},
		{`{"input": "x", "reasoning": {"summary": "auto"}}`, "reasoning.summary"},
	} {
		req, msgs, err := responsesInput([]byte(c.body))
		if err == nil {
			err = responsesChat(req, map[string]any{"messages": msgs})
		}
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Param != c.param {
			t.Errorf("%s: %v (param %v), want a 400 naming %s", c.body, err, paramOf(ae), c.param)
		}
	}
	for _, c := range []struct{ body, param string }{
		{`{"max_tokens": 1, "messages": [{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "f"}]}]}`, "messages[0].content[0]"},
		{`{"max_tokens": 1, "messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": "f"}]}]}`, "messages[0].content[0]"},
		{`{"max_tokens": 1, "messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": [1]}]}]}`, "messages[0].content[0].input"},
		{`{"max_tokens": 1, "messages": [{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]}`, "messages[0].content[0].tool_use_id"},
		{`{"max_tokens": 1, "messages": [{"role": "user", "content": "x"}], "tools": [{"type": "web_search_20250305", "name": "web_search"}]}`, "tools[0].type"},
		{`{"max_tokens": 1, "messages": [{"role": "user", "content": "x"}], "tool_choice": {"type": "sometimes"}}`, "tool_choice.type"},
		{`{"max_tokens": 1, "messages": [{"role": "user", "content": "x"}], "output_config": {"format": {"type": "yaml"}}}`, "output_config.format"},
	} {
		req, msgs, err := messagesInput([]byte(c.body), true)
		if err == nil {
			_, err = messagesChat(req, msgs)
		}
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Param != c.param {
			t.Errorf("%s: %v (param %v), want a 400 naming %s", c.body, err, paramOf(ae), c.param)
		}
	}
	// The chat handler's field names come back as the caller's.
	smol := smolText(t)
	for _, c := range []struct {
		tools  string
		rename [][2]string
		param  string
	}{
		{`[{"type": "function", "function": {"name": "f", "parameters": {"type": "objekt"}}}]`, responsesRenames, "tools[0].parameters"},
		{`[{"type": "function", "function": {"name": "f", "parameters": {"type": "objekt"}}}]`, messagesRenames, "tools[0].input_schema"},
		{`[{"type": "function", "function": {"name": "bad name"}}]`, messagesRenames, "tools[0].name"},
	} {
		_, err := planChat(smol, chatReq(t, `{"messages": [{"role": "user", "content": "x"}], "tools": `+c.tools+`}`))
		err = renameFields(err, c.rename)
		var ae *apiError
		if !errors.As(err, &ae) || ae.Param != c.param || !strings.Contains(ae.Message, c.param) {
			t.Errorf("%s: %v (param %v), want %s", c.tools, err, paramOf(ae), c.param)
		}
	}
}

// chatEvents is a recorded chat completions stream (a reasoning model
// answering with text and two parallel calls) as chatCall's events.
func chatEvents(chunks ...string) <-chan subEvent {
	ch := make(chan subEvent, len(chunks)+2)
	for _, c := range chunks {
		ch <- subEvent{data: c}
	}
	ch <- subEvent{data: "[DONE]"}
	ch <- subEvent{done: true, status: 200}
	close(ch)
	return ch
}

var recordedStream = []string{
	`{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}`,
	`{"choices": [{"index": 0, "delta": {"reasoning_content": "Two "}, "finish_reason": null, "token_ids": [1]}]}`,
	`{"choices": [{"index": 0, "delta": {"reasoning_content": "cities."}, "finish_reason": null, "token_ids": [2]}]}`,
	`{"choices": [{"index": 0, "delta": {"content": "Checking."}, "finish_reason": null, "token_ids": [3]}]}`,
	`{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}, "finish_reason": null}]}`,
	`{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":\"Paris\"}"}}]}, "finish_reason": null}]}`,
	`{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}, "finish_reason": null}]}`,
	`{"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "function": {"arguments": "{\"city\":\"Rome\"}"}}]}, "finish_reason": null}]}`,
	`{"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}`,
	`{"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}}}`,
}

const recordedAnswer = `{"choices": [{"index": 0, "message": {"role": "assistant", "content": "Checking.", "reasoning_content": "Two cities.",
	"tool_calls": [{"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
	{"id": "call_b", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Rome\"}"}}]},
	"finish_reason": "tool_calls", "token_ids": [1, 2, 3]}], "usage": {"prompt_tokens": 10, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}}}`

// sseOf splits a recorded event stream into (event, data) pairs.
func sseOf(t *testing.T, body string) ([]string, []map[string]any) {
	t.Helper()
	var names []string
	var data []map[string]any
	for _, ev := range strings.Split(strings.TrimSpace(body), "\n\n") {
		name, d, ok := strings.Cut(ev, "\ndata: ")
		var v map[string]any
		if !ok || json.Unmarshal([]byte(d), &v) != nil || v["type"] != strings.TrimPrefix(name, "event: ") {
			t.Fatalf("event %q", ev)
		}
		names, data = append(names, strings.TrimPrefix(name, "event: ")), append(data, v)
	}
	return names, data
}

// TestStreamedToolBlocks: a chat stream with reasoning, text and parallel
// calls becomes the Responses API's output items and events (reasoning,
// message, function_call with its arguments' delta and done events) and
// the Messages API's content blocks (thinking, text, tool_use with an
// input_json_delta), the same blocks a non-streamed answer gives.
func TestStreamedToolBlocks(t *testing.T) {
	whole, err := readAnswer(func() <-chan subEvent {
		ch := make(chan subEvent, 1)
		ch <- subEvent{done: true, status: 200, rest: []byte(recordedAnswer)}
		close(ch)
		return ch
	}())
	if err != nil {
		t.Fatal(err)
	}
	want := []block{{kind: "reasoning", text: "Two cities."}, {kind: "text", text: "Checking."},
		{kind: "call", id: "call_a", name: "get_weather", text: `{"city":"Paris"}`}, {kind: "call", id: "call_b", name: "get_weather", text: `{"city":"Rome"}`}}
	if !reflect.DeepEqual(whole.blocks, want) || whole.finish != "tool_calls" || whole.usage.cached() != 4 {
		t.Errorf("answer: %+v", whole)
	}
	if tm := whole.turn(); tm.Content != "Checking." || tm.ReasoningContent != "Two cities." || len(tm.ToolCalls) != 2 || tm.ToolCalls[1].ID != "call_b" {
		t.Errorf("turn %+v", tm)
	}

	// Responses.
	w := httptest.NewRecorder()
	rs := &responsesSink{w: w, resp: map[string]any{"id": "resp_1"}}
	o, err := streamBlocks(chatEvents(recordedStream...), rs)
	if err != nil || !reflect.DeepEqual(o.blocks, want) || o.finish != "tool_calls" || !reflect.DeepEqual(o.tokenIDs, []int32{1, 2, 3}) {
		t.Fatalf("stream: %v %+v", err, o)
	}
	names, data := sseOf(t, w.Body.String())
	wantNames := "response.created response.in_progress " +
		"response.output_item.added response.content_part.added response.reasoning_text.delta response.reasoning_text.delta response.reasoning_text.done response.content_part.done response.output_item.done " +
		"response.output_item.added response.content_part.added response.output_text.delta response.output_text.done response.content_part.done response.output_item.done " +
		"response.output_item.added response.function_call_arguments.delta response.function_call_arguments.done response.output_item.done " +
		"response.output_item.added response.function_call_arguments.delta response.function_call_arguments.done response.output_item.done"
	if strings.Join(names, " ") != wantNames {
		t.Errorf("responses events:\n%s\nwant\n%s", strings.Join(names, " "), wantNames)
	}
	for i, d := range data {
		if d["sequence_number"] != float64(i) {
			t.Errorf("event %d: sequence_number %v", i, d["sequence_number"])
		}
	}
	if len(rs.items) != 4 {
		t.Fatalf("items %v", rs.items)
	}
	fc := rs.items[3].(map[string]any)
	if fc["type"] != "function_call" || fc["call_id"] != "call_b" || fc["name"] != "get_weather" || fc["arguments"] != `{"city":"Rome"}` || fc["status"] != "completed" || !strings.HasPrefix(fc["id"].(string), "fc_") {
		t.Errorf("function_call item %v", fc)
	}
	if added := data[15]["item"].(map[string]any); added["type"] != "function_call" || added["arguments"] != "" || added["status"] != "in_progress" {
		t.Errorf("function_call added %v", added)
	}
	if d := data[16]; d["delta"] != `{"city":"Paris"}` || d["item_id"] != data[15]["item"].(map[string]any)["id"] || d["output_index"] != 2.0 {
		t.Errorf("arguments delta %v", d)
	}

	// Messages.
	w = httptest.NewRecorder()
	if _, err := streamBlocks(chatEvents(recordedStream...), &messagesSink{w: w, start: map[string]any{"id": "msg_1"}}); err != nil {
		t.Fatal(err)
	}
	names, data = sseOf(t, w.Body.String())
	wantNames = "message_start ping content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_stop content_block_start content_block_delta content_block_stop"
	if strings.Join(names, " ") != wantNames {
		t.Errorf("messages events:\n%s\nwant\n%s", strings.Join(names, " "), wantNames)
	}
	tu := data[9]["content_block"].(map[string]any)
	if data[9]["index"] != 2.0 || tu["type"] != "tool_use" || tu["id"] != "call_a" || tu["name"] != "get_weather" || !reflect.DeepEqual(tu["input"], map[string]any{}) {
		t.Errorf("tool_use start %v", data[9])
	}
	if d := data[10]["delta"].(map[string]any); d["type"] != "input_json_delta" || d["partial_json"] != `{"city":"Paris"}` {
		t.Errorf("input_json_delta %v", d)
	}
	if d := data[3]["delta"].(map[string]any); d["type"] != "thinking_delta" || d["thinking"] != "Two " {
		t.Errorf("thinking_delta %v", d)
	}
	if c := contentOf(&want[2], true); !reflect.DeepEqual(c["input"], json.RawMessage(`{"city":"Paris"}`)) {
		t.Errorf("tool_use block %v", c)
	}

	// A stream of nothing is one empty text block.
	w = httptest.NewRecorder()
	o, err = streamBlocks(chatEvents(recordedStream[0], `{"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}`), &messagesSink{w: w, start: map[string]any{}})
	if names, _ := sseOf(t, w.Body.String()); err != nil || !reflect.DeepEqual(o.blocks, []block{{kind: "text"}}) || strings.Join(names, " ") != "message_start ping content_block_start content_block_stop" {
		t.Errorf("empty stream: %v %+v %v", err, o, names)
	}
}

// TestTranslationSDKShapes: the official openai and anthropic clients read
// the translations of a recorded chat answer (reasoning, text, two
// parallel calls), whole and streamed: the Responses API's reasoning,
// message and function_call items (the SDK's stream helper rebuilds the
// same response), the Messages API's thinking, text and tool_use blocks
// (its stream helper rebuilds the same message). No model: the chat layer
// answers with the recording.
func TestTranslationSDKShapes(t *testing.T) {
	py, err := ireetool.FindPython()
	if err != nil || exec.Command(py, "-c", "import openai, anthropic").Run() != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("the openai and anthropic clients are not installed in the venv: scripts/test.sh installs scripts/requirements-test.txt")
		}
		t.Skip("the openai and anthropic clients are not installed in the venv")
	}
	s := New(Config{Name: "recorded"})
	s.chat = func(w http.ResponseWriter, r *http.Request) error {
		var req struct {
			Stream bool `json:"stream"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		if !req.Stream {
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, recordedAnswer)
			return nil
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, c := range recordedStream {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		io.WriteString(w, "data: [DONE]\n\n")
		return nil
	}
	s.Attach(nil, withTemplate(t, smolText(t), "Qwen-Qwen3-0.6B.jinja"), &engine.Engine{})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	script := `
import json, sys
import anthropic, openai

def check(cond, what):
    if not cond:
        raise SystemExit("FAILED: " + what)

url = sys.argv[1]
oc = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0)
tools = [{"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
r = oc.responses.create(model="m", input="Weather?", tools=tools)
types = [o.type for o in r.output]
check(types == ["reasoning", "message", "function_call", "function_call"], f"output {r.output}")
check(r.output[0].content[0].text == "Two cities." and r.output_text == "Checking.", f"reasoning and text {r.output}")
calls = [(o.name, json.loads(o.arguments), o.call_id) for o in r.output[2:]]
check(calls == [("get_weather", {"city": "Paris"}, "call_a"), ("get_weather", {"city": "Rome"}, "call_b")], f"calls {calls}")
with oc.responses.stream(model="m", input="Weather?", tools=tools) as s:
    events = [e.type for e in s]
    f = s.get_final_response()
check([o.type for o in f.output] == types and f.output_text == "Checking." and f.output[0].content[0].text == "Two cities.", f"streamed output {f.output}")
check([(o.name, json.loads(o.arguments), o.call_id) for o in f.output[2:]] == calls, f"streamed calls {f.output}")
check(f.usage.input_tokens == 10 and f.usage.input_tokens_details.cached_tokens == 4, f"usage {f.usage}")

ac = anthropic.Anthropic(base_url=url, api_key="x", max_retries=0)
kw = dict(model="m", max_tokens=10, messages=[{"role": "user", "content": "Weather?"}], tools=[{"name": "get_weather", "input_schema": {"type": "object"}}])
m = ac.messages.create(**kw)
check([b.type for b in m.content] == ["thinking", "text", "tool_use", "tool_use"] and m.stop_reason == "tool_use", f"message {m}")
check(m.content[0].thinking == "Two cities." and m.content[2].input == {"city": "Paris"} and m.content[3].id == "call_b", f"blocks {m.content}")
with ac.messages.stream(**kw) as st:
    fm = st.get_final_message()
check([b.model_dump() for b in fm.content] == [b.model_dump() for b in m.content], f"streamed {fm.content} vs {m.content}")
check(fm.stop_reason == "tool_use" and fm.usage.output_tokens == 3 and fm.usage.cache_read_input_tokens == 4, f"streamed end {fm}")
print("ok", len(events), "events")
`
	out, err := exec.Command(py, "-c", script, ts.URL).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}
