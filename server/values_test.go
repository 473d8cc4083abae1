package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/archc/archc/rt/vision"
)

// TestExplicitZeros: an explicit 0 is a value, never the default:
// dry_allowed_length 0 penalizes every repeat (the output differs from
// length 2's), dry_base below 1 and repetition_penalty 0 are refused by
// name, top_p 0 keeps the most likely token only (sampled output equals
// greedy), an empty stop string is refused; each error names its field
// alone.
func TestExplicitZeros(t *testing.T) {
	_, e, url := served(t, Config{})
	run(t, e)
	const prompt = `[1, 184, 106, 66, 1, 184, 106, 66, 1, 184, 106, 66, 1, 184]`
	gen := func(extra string) []int32 {
		t.Helper()
		code, out := post(t, url+"/v1/completions", `{"prompt": `+prompt+`, "max_tokens": 40, "temperature": 0`+extra+`}`)
		if code != 200 {
			t.Fatalf("%s: %d %v", extra, code, out)
		}
		return ids(out["choices"].([]any)[0].(map[string]any)["token_ids"])
	}
	two := gen(`, "dry_multiplier": 5, "dry_allowed_length": 2`)
	if unset := gen(`, "dry_multiplier": 5`); !slices.Equal(unset, two) {
		t.Errorf("dry_allowed_length unset %v, 2 (the default) %v", unset, two)
	}
	if zero := gen(`, "dry_multiplier": 5, "dry_allowed_length": 0`); slices.Equal(zero, two) {
		t.Errorf("dry_allowed_length 0 gives length 2's tokens %v: the 0 was replaced by the default", zero)
	}
	if flat := gen(`, "dry_multiplier": 5, "dry_base": 1`); len(flat) == 0 {
		t.Errorf("dry_base 1: no tokens")
	}
	greedy := gen("")
	for seed := range 3 {
		if got := gen(fmt.Sprintf(`, "temperature": 1.5, "top_p": 0, "seed": %d`, seed)); !slices.Equal(got, greedy) {
			t.Errorf("top_p 0, seed %d: %v, want the most likely tokens %v", seed, got, greedy)
		}
	}
	for _, c := range []struct{ extra, param, want string }{
		{`"dry_multiplier": 5, "dry_base": 0`, "dry_base", "dry_base 0 must be >= 1"},
		{`"dry_multiplier": 5, "dry_base": 0.5`, "dry_base", "dry_base 0.5 must be >= 1"},
		{`"dry_multiplier": 5, "dry_allowed_length": -1`, "dry_allowed_length", "allowed length -1"},
		{`"dry_multiplier": -1`, "dry_multiplier", "DRY multiplier -1"},
		{`"repetition_penalty": 0`, "repetition_penalty", "repetition_penalty 0 must be > 0"},
		{`"repetition_penalty": -1`, "repetition_penalty", "repetition_penalty -1 must be > 0"},
		{`"stop": ""`, "stop", "empty stop string"},
		{`"stop": ["x", ""]`, "stop", "empty stop string"},
	} {
		code, out := post(t, url+"/v1/completions", `{"prompt": [1, 2], "max_tokens": 2, `+c.extra+`}`)
		e, _ := out["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != 400 || e["param"] != c.param || !strings.Contains(msg, c.want) || (c.param == "dry_base" && strings.Contains(msg, "allowed length")) {
			t.Errorf("%s: %d %v, want 400 naming %s: %q", c.extra, code, out, c.param, c.want)
		}
	}
}

// TestImagePlaceholdersWithoutImages: a chat prompt whose text holds the
// image processor's placeholder but comes with no image is refused as a
// count that differs from the images' is (it ran, the placeholders
// decoded as plain tokens), naming messages.
func TestImagePlaceholdersWithoutImages(t *testing.T) {
	s, _, _ := coreServer(t)
	proc, err := vision.LoadProcessor("../golden/testdata/vision/idefics3")
	if err != nil {
		t.Fatal(err)
	}
	s.cfg.Images.Processor = proc
	req := chatReq(t, `{"messages": [{"role": "user", "content": "<image> what is this <image>"}], "max_tokens": 2}`)
	_, err = s.prepare(context.Background(), req.input(), req.sampling)
	var ae *apiError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Param != "messages" || !strings.Contains(ae.Message, "found 2 <image> tokens and 0 images") {
		t.Errorf("placeholders without images: %v, want a 400 naming messages", err)
	}
	req = chatReq(t, `{"messages": [{"role": "user", "content": "what is this"}], "max_tokens": 2}`)
	if _, err := s.prepare(context.Background(), req.input(), req.sampling); err != nil {
		t.Errorf("no placeholders: %v", err)
	}
}

// TestJSONTypeErrors: a JSON value of the wrong type is a 400 naming its
// path as the API spells it, indices included, as the message's subject
// and the param, in every API shape (encoding/json's "cannot unmarshal
// number into Go struct field responsesRequest.instructions" and param
// null were returned); an integral number is taken for an integer field
// (2.0: pydantic's clients send them), 2.5 is refused.
func TestJSONTypeErrors(t *testing.T) {
	chat := func(body string) (*chatRequest, error) {
		var req chatRequest
		err := decodeJSON(httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body)), 1<<20, &req)
		return &req, err
	}
	for _, c := range []struct{ body, param, msg string }{
		{`{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": "x"}]}`, "messages[1].tool_calls", "messages[1].tool_calls: want an array, got a string"},
		{`{"messages": [{"role": "user", "content": "hi", "name": 5}]}`, "messages[0].name", "messages[0].name: want a string, got a number"},
		{`{"messages": [{"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": {"x": 1}}}]}]}`, "messages[0].tool_calls[0].function.arguments", "want a string, got an object"},
		{`{"max_tokens": 2.5}`, "max_tokens", "max_tokens: want an integer, got 2.5"},
		{`{"max_tokens": 1e30}`, "max_tokens", "max_tokens: 1e30 is out of range"},
		{`{"temperature": "hot"}`, "temperature", "temperature: want a number, got a string"},
		{`{"user": 5}`, "user", "user: want a string, got a number"},
		{`{"logit_bias": {"5": "x"}}`, "logit_bias.5", "logit_bias.5: want a number, got a string"},
		{`{"stop": 5}`, "stop", "stop: want a string or an array of strings, got a number"},
		{`{"tools": [{"type": "function", "function": {"name": "f"}}, {"type": "function", "function": {"name": "g", "description": 3}}]}`, "tools[1].function.description", "tools[1].function.description: want a string, got a number"},
		{`[1]`, "", "the request body must be a JSON object, got array"},
	} {
		_, err := chat(c.body)
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != 400 || (paramOf(ae) != c.param && (c.param != "" || ae.Param != nil)) || !strings.Contains(ae.Message, c.msg) {
			t.Errorf("chat %s: %v (param %v), want %q naming %q", c.body, err, paramOf(ae), c.msg, c.param)
		}
	}
	if n, err := nChoices(map[string]json.RawMessage{"n": json.RawMessage("2.0")}, 8); n != 2 || err != nil {
		t.Errorf("n 2.0: %d %v", n, err)
	}
	if _, err := nChoices(map[string]json.RawMessage{"n": json.RawMessage("2.5")}, 8); err == nil || !strings.Contains(err.Error(), "n: want an integer, got 2.5") {
		t.Errorf("n 2.5: %v", err)
	}
	req, err := chat(`{"max_tokens": 2.0, "max_completion_tokens": 1e2, "stop_token_ids": [1.0, 2], "top_k": 40.0, "temperature": 2.0}`)
	if err != nil || *req.MaxTokens != 2 || *req.MaxCompletionTokens != 100 || !slices.Equal(req.StopTokenIDs, []int32{1, 2}) || *req.TopK != 40 || *req.Temperature != 2 {
		t.Errorf("integral numbers: %v, %+v", err, req.sampling)
	}
	for _, c := range []struct{ body, param, msg string }{
		{`{"input": "x", "instructions": 5}`, "instructions", "instructions: want a string, got a number"},
		{`{"input": "x", "max_output_tokens": "9"}`, "max_output_tokens", "max_output_tokens: want an integer, got a string"},
		{`{"input": [{"role": "user", "content": "x"}, {"type": "function_call", "call_id": 7, "name": "f"}]}`, "input[1].call_id", "input[1].call_id: want a string, got a number"},
		{`{"input": "x", "tools": [{"type": "function", "name": ["f"]}]}`, "tools[0].name", "tools[0].name: want a string, got an array"},
		{`{"input": "x", "user": 5}`, "user", "user: want a string"},
		{`{"input": [{"role": "developer", "content": "x"}, {"role": "robot", "content": "x"}]}`, "input[1].role", `input[1].role "robot" is not`},
	} {
		_, err := responsesBody([]byte(c.body))
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != 400 || paramOf(ae) != c.param || !strings.Contains(ae.Message, c.msg) {
			t.Errorf("responses %s: %v (param %v), want %q naming %q", c.body, err, paramOf(ae), c.msg, c.param)
		}
	}
	if req, _, err := responsesInput([]byte(`{"input": "x", "max_output_tokens": 2.0}`)); err != nil || *req.MaxOutputTokens != 2 {
		t.Errorf("responses max_output_tokens 2.0: %v", err)
	}
	for _, c := range []struct{ body, param, msg string }{
		{`{"max_tokens": "x", "messages": [{"role": "user", "content": "x"}]}`, "max_tokens", "max_tokens: want an integer, got a string"},
		{`{"max_tokens": 1, "messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]}`, "messages[0].content[0].text", "messages[0].content[0].text: want a string, got a number"},
		{`{"max_tokens": 1, "messages": [{"role": "user", "content": "x"}], "tools": [{"name": "f", "description": 3}]}`, "tools[0].description", "tools[0].description: want a string"},
	} {
		_, err := messagesBody([]byte(c.body))
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != 400 || paramOf(ae) != c.param || !strings.Contains(ae.Message, c.msg) {
			t.Errorf("messages %s: %v (param %v), want %q naming %q", c.body, err, paramOf(ae), c.msg, c.param)
		}
	}
	// Messages' errors keep its terms, and the prefix once.
	_, _, err = messagesInput([]byte(`{"max_tokens": 1, "messages": [{"role": "system", "content": "x"}]}`), true)
	rec := httptest.NewRecorder()
	anthropicError(rec, err)
	if b := rec.Body.String(); !strings.Contains(b, `messages[0].role \"system\" is not user or assistant`) || strings.Count(b, "messages[0]") != 1 {
		t.Errorf("system role on /v1/messages: %s", b)
	}
	in, err := messagesBody([]byte(`{"max_tokens": 1, "messages": [{"role": "user", "content": "x"}], "tool_choice": {"type": "any"}}`))
	if err == nil {
		_, err = plan(smolText(t), in)
	}
	if err == nil || !strings.Contains(err.Error(), `tool_choice {"type": "any"} needs tools`) {
		t.Errorf("tool_choice any without tools: %v", err)
	}
}

// TestRequestChecks: stream_options only with stream true, and only the
// keys archc takes; reasoning_effort's accepted values are the ones its
// error lists.
func TestRequestChecks(t *testing.T) {
	s, _, _ := coreServer(t)
	for _, c := range []struct{ body, param, msg string }{
		{`{"stream_options": {"include_usage": true}}`, "stream_options", "stream_options is only allowed when stream is true"},
		{`{"stream": false, "stream_options": {}}`, "stream_options", "only allowed when stream is true"},
		{`{"stream": true, "stream_options": {"include_usage": true, "continuous_usage_stats": true}}`, "stream_options.continuous_usage_stats", "stream_options.continuous_usage_stats is not supported"},
		{`{"reasoning_effort": "extreme"}`, "reasoning_effort", "use minimal, low, medium or high"},
	} {
		req := chatReq(t, `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, `+c.body[1:])
		_, err := s.prepare(context.Background(), req.input(), req.sampling)
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != 400 || paramOf(ae) != c.param || !strings.Contains(ae.Message, c.msg) {
			t.Errorf("%s: %v (param %v), want %q naming %q", c.body, err, paramOf(ae), c.msg, c.param)
		}
	}
	for _, body := range []string{`{"stream": true, "stream_options": {"include_usage": true}}`, `{"reasoning_effort": "minimal"}`, `{"reasoning_effort": "high"}`} {
		req := chatReq(t, `{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2, `+body[1:])
		if _, err := s.prepare(context.Background(), req.input(), req.sampling); err != nil {
			t.Errorf("%s: %v", body, err)
		}
	}
}
