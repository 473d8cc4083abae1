package server

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/rt/engine"
)

// planOf plans a translated chat input with text's template.
func planOf(t *testing.T, in *chatInput, tpl string) (*chatPlan, string) {
	t.Helper()
	text := withTemplate(t, smolText(t), tpl)
	p, err := plan(text, in)
	if err != nil {
		t.Fatalf("%v", err)
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
	in, _, err := responsesChat(req, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.tools) != 1 || string(in.tools[0].Raw) != `{"type":"function","function":{"name":"get_weather","description":"Weather in a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}` {
		t.Errorf("tools %+v", in.tools)
	}
	if in.choice != (toolChoice{mode: "named", name: "get_weather"}) || in.parallel == nil || *in.parallel || in.effort != "low" {
		t.Errorf("chat input %+v", in)
	}
	p, prompt := planOf(t, in, "Qwen-Qwen3-0.6B.jinja")
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
	if in, _, err = responsesChat(req, msgs); err != nil {
		t.Fatal(err)
	}
	if p, _ := planOf(t, in, "Qwen-Qwen3-0.6B.jinja"); !strings.HasPrefix(p.lark, "start: %json") || !strings.Contains(p.lark, `"integer"`) {
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
	in, sp, err := messagesChat(req, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if in.choice.mode != "required" || in.parallel == nil || *in.parallel || sp.MaxTokens == nil || *sp.MaxTokens != 50 {
		t.Errorf("chat input %+v %+v", in, sp)
	}
	p, prompt := planOf(t, in, "Qwen-Qwen3-0.6B.jinja")
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
	if in, _, _ = messagesChat(req, msgs); in.choice != (toolChoice{mode: "named", name: "f"}) {
		t.Errorf("tool_choice tool: %+v", in.choice)
	}
	req, msgs, _ = messagesInput([]byte(`{"max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "output_config": {"format": {"type": "json_schema", "schema": {"type": "object"}}, "effort": "high"}}`), true)
	if in, _, _ = messagesChat(req, msgs); in.format == nil || in.format.Type != "json_schema" || in.effort != "high" {
		t.Errorf("output_config: %+v", in)
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
			_, _, err = responsesChat(req, msgs)
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
			_, _, err = messagesChat(req, msgs)
		}
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Param != c.param {
			t.Errorf("%s: %v (param %v), want a 400 naming %s", c.body, err, paramOf(ae), c.param)
		}
	}
	// The planner names the caller's fields.
	smol := smolText(t)
	for _, c := range []struct {
		body  string
		parse func([]byte) (*chatInput, error)
		param string
	}{
		{`{"input": "x", "tools": [{"type": "function", "name": "f", "parameters": {"type": "objekt"}}]}`, responsesBody, "tools[0].parameters"},
		{`{"input": "x", "max_output_tokens": 5, "reasoning": {"effort": "extreme"}}`, responsesBody, "reasoning.effort"},
		{`{"input": "x", "text": {"format": {"type": "json_schema", "schema": {"type": "objekt"}}}}`, responsesBody, "text.format.schema"},
		{`{"max_tokens": 1, "messages": [{"role": "user", "content": "x"}], "tools": [{"name": "f", "input_schema": {"type": "objekt"}}]}`, messagesBody, "tools[0].input_schema"},
		{`{"max_tokens": 1, "messages": [{"role": "user", "content": "x"}], "tools": [{"name": "bad name"}]}`, messagesBody, "tools[0].name"},
		{`{"max_tokens": 1, "messages": [{"role": "user", "content": "x"}], "output_config": {"effort": "extreme"}}`, messagesBody, "output_config.effort"},
	} {
		in, err := c.parse([]byte(c.body))
		if err == nil {
			_, err = plan(smol, in)
		}
		var ae *apiError
		if !errors.As(err, &ae) || ae.Param != c.param || !strings.Contains(ae.Message, c.param) {
			t.Errorf("%s: %v (param %v), want %s", c.body, err, paramOf(ae), c.param)
		}
	}
}

func responsesBody(b []byte) (*chatInput, error) {
	req, msgs, err := responsesInput(b)
	if err != nil {
		return nil, err
	}
	in, _, err := responsesChat(req, msgs)
	return in, err
}

func messagesBody(b []byte) (*chatInput, error) {
	req, msgs, err := messagesInput(b, true)
	if err != nil {
		return nil, err
	}
	in, _, err := messagesChat(req, msgs)
	return in, err
}

// recordedEvents are the chat core's events of a reasoning model
// answering with text and two parallel calls.
var recordedEvents = []chatEvent{
	{Kind: evBegin},
	{Kind: evDelta, Reasoning: "Two ", Step: true, IDs: []int32{1}},
	{Kind: evDelta, Reasoning: "cities.", Step: true, IDs: []int32{2}},
	{Kind: evDelta, Text: "Checking.", Step: true, IDs: []int32{3}},
	{Kind: evCall, Call: 0, ID: "call_a", Name: "get_weather"},
	{Kind: evCall, Call: 0, Text: `{"city":"Paris"}`},
	{Kind: evCall, Call: 1, ID: "call_b", Name: "get_weather"},
	{Kind: evCall, Call: 1, Text: `{"city":"Rome"}`},
	{Kind: evFinish, Finish: "tool_calls", Result: &result{Text: "Two cities.Checking.", TokenIDs: []int32{1, 2, 3}, Finish: "stop", PromptTokens: 10, CompletionTokens: 3, CachedTokens: 4}},
}

// replayed feeds events to a blockStream writing to sink.
func replayed(events []chatEvent, sink blockSink) (*chatOutput, error) {
	bs := &blockStream{sink: sink, cur: -1}
	for _, ev := range events {
		if err := bs.add(ev); err != nil {
			return nil, err
		}
	}
	return &bs.out, nil
}

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
	a := &chatAnswer{}
	for _, ev := range recordedEvents {
		a.add(ev)
	}
	whole := outputOf(a)
	want := []block{{kind: "reasoning", text: "Two cities."}, {kind: "text", text: "Checking."},
		{kind: "call", id: "call_a", name: "get_weather", text: `{"city":"Paris"}`}, {kind: "call", id: "call_b", name: "get_weather", text: `{"city":"Rome"}`}}
	if !reflect.DeepEqual(whole.blocks, want) || whole.finish != "tool_calls" || whole.res.CachedTokens != 4 {
		t.Errorf("answer: %+v", whole)
	}
	if tm := whole.turn(); tm.Content != "Checking." || tm.ReasoningContent != "Two cities." || len(tm.ToolCalls) != 2 || tm.ToolCalls[1].ID != "call_b" {
		t.Errorf("turn %+v", tm)
	}

	// Responses.
	w := httptest.NewRecorder()
	rs := &responsesSink{w: w, resp: map[string]any{"id": "resp_1"}}
	o, err := replayed(recordedEvents, rs)
	if err != nil || !reflect.DeepEqual(o.blocks, want) || o.finish != "tool_calls" || !reflect.DeepEqual(o.res.TokenIDs, []int32{1, 2, 3}) {
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
	if _, err := replayed(recordedEvents, &messagesSink{w: w, start: map[string]any{"id": "msg_1"}}); err != nil {
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
	o, err = replayed([]chatEvent{{Kind: evBegin}, {Kind: evFinish, Finish: "stop", Result: &result{}}}, &messagesSink{w: w, start: map[string]any{}})
	if names, _ := sseOf(t, w.Body.String()); err != nil || !reflect.DeepEqual(o.blocks, []block{{kind: "text"}}) || strings.Join(names, " ") != "message_start ping content_block_start content_block_stop" {
		t.Errorf("empty stream: %v %+v %v", err, o, names)
	}
}

// TestTranslationSDKShapes: the official openai and anthropic clients read
// the translations of a recorded chat answer (reasoning, text, two
// parallel calls), whole and streamed: the Responses API's reasoning,
// message and function_call items (the SDK's stream helper rebuilds the
// same response), the Messages API's thinking, text and tool_use blocks
// (its stream helper rebuilds the same message). No model: the chat core
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
	s.replay = recordedEvents
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
