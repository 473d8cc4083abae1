package server

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// sseEvents posts body and returns the stream's (event, data) pairs.
func sseEvents(t *testing.T, url, body string, hdr ...string) [][2]string {
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
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d", url, resp.StatusCode)
	}
	var out [][2]string
	name := ""
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "event: "); ok {
			name = v
		} else if v, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, [2]string{name, v})
			name = ""
		}
	}
	return out
}

// TestTranslations: /v1/responses and /v1/messages answer what
// /v1/chat/completions answers for the same conversation, streamed and
// not, in their own shapes; their errors are in their own shapes.
func TestTranslations(t *testing.T) {
	_, e, url, _, _ := servedText(t, Config{APIKey: "k"})
	run(t, e)
	auth := []string{"Authorization", "Bearer k"}
	code, chat := post(t, url+"/v1/chat/completions", `{"messages": [{"role": "system", "content": "a"}, {"role": "user", "content": "!"}], "max_tokens": 6, "temperature": 0}`, auth...)
	if code != 200 {
		t.Fatalf("chat: %d %v", code, chat)
	}
	want := chat["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"].(string)

	// Responses.
	code, r := post(t, url+"/v1/responses", `{"input": "!", "instructions": "a", "max_output_tokens": 6, "temperature": 0}`, auth...)
	if code != 200 || r["object"] != "response" || r["status"] != "incomplete" {
		t.Fatalf("responses: %d %v", code, r)
	}
	item := r["output"].([]any)[0].(map[string]any)
	if got := item["content"].([]any)[0].(map[string]any)["text"]; got != want {
		t.Errorf("responses: %q, chat %q", got, want)
	}
	if u := r["usage"].(map[string]any); u["output_tokens"] != 6.0 || u["input_tokens"] != 2.0 {
		t.Errorf("responses usage %v", u)
	}
	code, got := post(t, url+"/v1/responses", `{"input": "x", "previous_response_id": "resp_nope"}`, auth...)
	if msg, param := errMessage(got); code != 400 || param != "previous_response_id" || !strings.Contains(msg, "resp_nope") {
		t.Errorf("unknown previous_response_id: %d %v", code, got)
	}
	code, got = post(t, url+"/v1/responses", `{"input": [{"type": "item_reference", "id": "x"}]}`, auth...)
	if _, param := errMessage(got); code != 400 || param != "input[0].type" {
		t.Errorf("an item_reference item: %d %v", code, got)
	}
	req, _ := http.NewRequest("GET", url+"/v1/responses/"+r["id"].(string), nil)
	req.Header.Set("Authorization", "Bearer k")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("GET /v1/responses/{id}: %v %v", resp.StatusCode, err)
	}
	// A response made with store false is not kept, and the 404 says so.
	_, unstored := post(t, url+"/v1/responses", `{"input": "!", "max_output_tokens": 1, "store": false}`, auth...)
	req, _ = http.NewRequest("GET", url+"/v1/responses/"+unstored["id"].(string), nil)
	req.Header.Set("Authorization", "Bearer k")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 404 {
		t.Errorf("GET a store:false response: %v %v", resp.StatusCode, err)
	} else if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), "a response made with store false is not kept") {
		t.Errorf("GET a store:false response: %s", b)
	}
	evs := sseEvents(t, url+"/v1/responses", `{"input": "!", "instructions": "a", "max_output_tokens": 6, "temperature": 0, "stream": true}`, auth...)
	var text strings.Builder
	var names []string
	for i, ev := range evs {
		var d map[string]any
		if err := json.Unmarshal([]byte(ev[1]), &d); err != nil || d["type"] != ev[0] || d["sequence_number"] != float64(i) {
			t.Fatalf("responses event %d: %v %v", i, ev, err)
		}
		names = append(names, ev[0])
		if ev[0] == "response.output_text.delta" {
			text.WriteString(d["delta"].(string))
		}
	}
	if text.String() != want || names[0] != "response.created" || names[len(names)-1] != "response.incomplete" {
		t.Errorf("responses stream: %q from %v, want %q", text.String(), names, want)
	}

	// Messages (x-api-key, as Anthropic's clients send it).
	key := []string{"X-Api-Key", "k"}
	code, m := post(t, url+"/v1/messages", `{"max_tokens": 6, "system": "a", "messages": [{"role": "user", "content": [{"type": "text", "text": "!"}]}], "temperature": 0}`, key...)
	if code != 200 || m["type"] != "message" || m["stop_reason"] != "max_tokens" {
		t.Fatalf("messages: %d %v", code, m)
	}
	if got := m["content"].([]any)[0].(map[string]any)["text"]; got != want {
		t.Errorf("messages: %q, chat %q", got, want)
	}
	code, ct := post(t, url+"/v1/messages/count_tokens", `{"system": "a", "messages": [{"role": "user", "content": "!"}]}`, key...)
	if u := m["usage"].(map[string]any); code != 200 || u["input_tokens"] != ct["input_tokens"] || u["output_tokens"] != 6.0 {
		t.Errorf("messages usage %v, count_tokens %d %v", u, code, ct)
	}
	evs = sseEvents(t, url+"/v1/messages", `{"max_tokens": 6, "system": "a", "messages": [{"role": "user", "content": "!"}], "temperature": 0, "stream": true}`, key...)
	text.Reset()
	names = names[:0]
	for _, ev := range evs {
		var d map[string]any
		if err := json.Unmarshal([]byte(ev[1]), &d); err != nil || d["type"] != ev[0] {
			t.Fatalf("messages event: %v %v", ev, err)
		}
		names = append(names, ev[0])
		if ev[0] == "content_block_delta" {
			text.WriteString(d["delta"].(map[string]any)["text"].(string))
		}
	}
	if text.String() != want || strings.Join(names[:3], " ") != "message_start ping content_block_start" ||
		strings.Join(names[len(names)-3:], " ") != "content_block_stop message_delta message_stop" {
		t.Errorf("messages stream: %q from %v, want %q", text.String(), names, want)
	}
	for _, c := range []struct {
		body, hdr []string
		status    int
		typ, want string
	}{
		{[]string{`{"messages": [{"role": "user", "content": "!"}]}`}, key, 400, "invalid_request_error", "max_tokens is required"},
		{[]string{`{"max_tokens": 2, "messages": [{"role": "user", "content": "!"}], "tools": [{"type": "web_search_20250305", "name": "web_search"}]}`}, key, 400, "invalid_request_error", "tools[0].type"},
		{[]string{`{"max_tokens": 2, "messages": [{"role": "system", "content": "!"}]}`}, key, 400, "invalid_request_error", "role \"system\""},
		{[]string{`{"max_tokens": 2, "messages": [{"role": "user", "content": "!"}]}`}, []string{"X-Api-Key", "no"}, 401, "authentication_error", "API key"},
	} {
		code, out := post(t, url+"/v1/messages", c.body[0], c.hdr...)
		e, _ := out["error"].(map[string]any)
		if code != c.status || out["type"] != "error" || e["type"] != c.typ || !strings.Contains(e["message"].(string), c.want) {
			t.Errorf("%s: %d %v, want %d %s with %q", c.body[0], code, out, c.status, c.typ, c.want)
		}
	}
}

// checkParse is the fuzz targets' property: a parse either succeeds with
// turns whose roles are chat roles, or fails with a 400 *apiError.
func checkParse(t *testing.T, msgs []chatMessage, err error) {
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Message == "" {
			t.Fatalf("an error that is not a 400 with a message: %#v", err)
		}
		return
	}
	if len(msgs) == 0 {
		t.Fatal("no error and no turns")
	}
	for _, m := range msgs {
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool":
		default:
			t.Fatalf("role %q", m.Role)
		}
	}
}

func FuzzResponsesInput(f *testing.F) {
	for _, s := range []string{`{"input": "hi"}`, `{"input": [{"role": "user", "content": [{"type": "input_text", "text": "x"}]}], "instructions": "be"}`,
		`{"input": [{"type": "message", "role": "assistant", "content": "y"}, {"role": "developer", "content": null}]}`, `{"input": []}`, `{"input": 3}`, `[]`,
		`{"input": [{"type": "reasoning", "content": [{"type": "reasoning_text", "text": "r"}]}, {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"}, {"type": "function_call_output", "call_id": "c", "output": "1"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, msgs, err := responsesInput(body)
		if err == nil {
			_, _, err = responsesChat(req, msgs)
		}
		checkParse(t, msgs, err)
	})
}

func FuzzMessagesInput(f *testing.F) {
	for _, s := range []string{`{"max_tokens": 3, "messages": [{"role": "user", "content": "hi"}]}`,
		`{"max_tokens": 3, "system": [{"type": "text", "text": "s"}], "messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}, {"role": "assistant", "content": "y"}]}`,
		`{"messages": []}`, `{"max_tokens": "x"}`, `{"max_tokens": 1, "messages": [{"role": "user", "content": [{"type": "image"}]}]}`,
		`{"max_tokens": 1, "messages": [{"role": "assistant", "content": [{"type": "thinking", "thinking": "t"}, {"type": "tool_use", "id": "a", "name": "f", "input": {}}]}, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, msgs, err := messagesInput(body, true)
		if err == nil {
			_, _, err = messagesChat(req, msgs)
		}
		checkParse(t, msgs, err)
	})
}

func FuzzInvalidUTF8Field(f *testing.F) {
	for _, s := range []string{"{\"a\": \"\xff\"}", "{\"a\": [1, {\"b\": \"x\xc3\"}]}", "[\"\xe2\x82\"]", "{\"\xff\": 1}", "{}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		path, at := invalidUTF8Field(body)
		if at < 0 || at > len(body) || path != "" && at == len(body) {
			t.Fatalf("%q: path %q at %d", body, path, at)
		}
	})
}

// FuzzCheckFields: the fields table and n's check, on any JSON object, for
// every endpoint: nil, or a 400 naming a field.
func FuzzCheckFields(f *testing.F) {
	for _, s := range []string{`{"n": 2, "best_of": 1}`, `{"tools": [], "store": false, "modalities": ["text"]}`, `{"echo": true, "logprobs": 0}`,
		`{"n": "x", "audio": {}}`, `{"n": 1e9}`, `{"thinking": {"type": "disabled"}, "truncation": "auto"}`} {
		f.Add([]byte(s))
	}
	endpoints := []string{"/v1/completions", "/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1/messages/count_tokens", "/tokenize"}
	f.Fuzz(func(t *testing.T, body []byte) {
		var top map[string]json.RawMessage
		if json.Unmarshal(body, &top) != nil {
			return
		}
		for _, ep := range endpoints {
			_, err := checkFields(ep, top)
			if _, nerr := nChoices(top, 8); nerr != nil {
				err = nerr
			}
			var ae *apiError
			if err != nil && (!errors.As(err, &ae) || ae.Status != 400 || ae.Param == nil) {
				t.Fatalf("%s %s: %#v", ep, body, err)
			}
		}
	})
}
