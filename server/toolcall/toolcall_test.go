package toolcall

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDetect(t *testing.T) {
	want := map[string]string{
		"ByteDance-Seed-OSS.jinja":                            "qwen3-coder",
		"CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja": "command-r",
		"HuggingFaceTB-SmolLM3-3B.jinja":                      "generic",
		"Qwen-Qwen2.5-7B-Instruct.jinja":                      "hermes",
		"Qwen-Qwen3-0.6B.jinja":                               "hermes",
		"google-gemma-2-2b-it.jinja":                          "generic",
		"ibm-granite-granite-3.3-2B-Instruct.jinja":           "granite",
		"meta-llama-Llama-3.1-8B-Instruct.jinja":              "llama3",
		"meta-llama-Llama-3.2-3B-Instruct.jinja":              "llama3",
		"microsoft-Phi-3.5-mini-instruct.jinja":               "generic",
		"mistralai-Mistral-Nemo-Instruct-2407.jinja":          "mistral",
		"openai-gpt-oss-120b.jinja":                           "harmony",
	}
	think := map[string]string{"Qwen-Qwen3-0.6B.jinja": "<think>", "ibm-granite-granite-3.3-2B-Instruct.jinja": "<think>", "HuggingFaceTB-SmolLM3-3B.jinja": "<think>", "ByteDance-Seed-OSS.jinja": "<seed:think>",
		"CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja": "<|START_THINKING|>"}
	dir := filepath.Join("..", "..", "rt", "chat", "testdata", "templates")
	for name, w := range want {
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		f := Detect(string(src))
		if f.Name != w {
			t.Errorf("%s: Detect = %s, want %s", name, f.Name, w)
		}
		if f.ThinkOpen != think[name] {
			t.Errorf("%s: ThinkOpen = %q, want %q", name, f.ThinkOpen, think[name])
		}
		if (w == "generic") == f.RendersTools {
			t.Errorf("%s: RendersTools = %v", name, f.RendersTools)
		}
	}
	if Detect("{{ messages }}").Name != "generic" {
		t.Error("a plain template: want generic")
	}
	u := Unrecognized(Detect("<think> {{ messages }}"))
	if u.Name != "unrecognized" || !u.RendersTools || u.ThinkOpen != "<think>" || u.CallMarker() != "" {
		t.Errorf("Unrecognized = %+v: want RendersTools, the reasoning markers kept, no call marker", u)
	}
	if out := u.Split("<think>r</think><|tool_call_begin|>f{}", false); out.Content != "<|tool_call_begin|>f{}" || len(out.Calls) != 0 || out.Reasoning != "r" {
		t.Errorf("Unrecognized split %+v: want the call text as content", out)
	}
}

func format(t *testing.T, name string) *Format {
	t.Helper()
	for _, src := range []string{
		"<tool_call> tools", "<function=x><parameter=y>", "[TOOL_CALLS]", "<|python_tag|>", "<|tool_call|>",
		"<|START_ACTION|>", "tool▁calls▁begin", "<|channel|> functions", "{{ messages }}", "<think> <tool_call> tools",
	} {
		if f := Detect(src); f.Name == name {
			return f
		}
	}
	t.Fatalf("no format %s", name)
	return nil
}

// Outputs as each model family writes them (its template's rendering of an
// assistant tool-call turn, and the model cards' examples).
var splitCases = []struct {
	format, text string
	inThink      bool
	want         Output
}{
	{"hermes", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
		false, Output{Calls: []Call{{"get_weather", `{"city":"Paris"}`}}}},
	{"hermes", "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"Europe/Paris\"}}\n</tool_call>",
		false, Output{Content: "Let me check.", Calls: []Call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"tz":"Europe/Paris"}`}}}},
	{"hermes", "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": [1, 2]}}", false, Output{Calls: []Call{{"f", `{"a":[1,2]}`}}}}, // cut by max_tokens after the JSON
	{"hermes", "<tool_call>\n{\"name\": \"f\", \"argu", false, Output{Content: "<tool_call>\n{\"name\": \"f\", \"argu"}},             // unparsable: content
	{"hermes", "Paris is sunny.", false, Output{Content: "Paris is sunny."}},
	{"hermes", "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"g\", \"arguments\": {}}\n</tool_c", false, // the second end marker cut
		Output{Calls: []Call{{"f", `{}`}, {"g", `{}`}}}},
	{"hermes", "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"na", false, // cut inside the second call
		Output{Content: "<tool_call>\n{\"na", Calls: []Call{{"f", `{}`}}}},
	{"hermes", "<think>\nThe user wants weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
		false, Output{Reasoning: "The user wants weather.", Calls: []Call{{"get_weather", `{"city":"Paris"}`}}}},
	{"hermes", "I think.\n</think>\n\nFour.", true, Output{Reasoning: "I think.", Content: "Four."}},
	{"qwen3-coder", "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
		false, Output{Calls: []Call{{"get_weather", `{"city":"Paris","days":3}`}}}},
	{"llama3", "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}", false, Output{Calls: []Call{{"get_weather", `{"city":"Paris"}`}}}},
	{"llama3", "<|python_tag|>{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": {\"x\": 1}}", false, Output{Calls: []Call{{"a", `{}`}, {"b", `{"x":1}`}}}},
	{"llama3", "The answer is {x}.", false, Output{Content: "The answer is {x}."}},
	{"mistral", "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"abc123XYZ\"}]", false, Output{Calls: []Call{{"get_weather", `{"city":"Paris"}`}}}},
	{"mistral", "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"}[TOOL_CALLS]get_time[ARGS]{\"tz\": \"UTC\"}", false, Output{Calls: []Call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"tz":"UTC"}`}}}},
	{"granite", "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, {\"name\": \"get_time\", \"arguments\": {\"tz\": \"UTC\"}}]", false,
		Output{Calls: []Call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"tz":"UTC"}`}}}},
	{"command-r", "<|START_THINKING|>I will look up the weather.<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n]<|END_ACTION|>",
		false, Output{Reasoning: "I will look up the weather.", Calls: []Call{{"get_weather", `{"city":"Paris"}`}}}},
	{"command-r", "<|START_RESPONSE|>It is sunny.<|END_RESPONSE|>", false, Output{Content: "It is sunny."}},
	{"deepseek-v3", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		false, Output{Calls: []Call{{"get_weather", `{"city":"Paris"}`}}}},
	{"deepseek-v3", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
		false, Output{Calls: []Call{{"get_weather", `{"city":"Paris"}`}}}},
	{"harmony", "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}",
		false, Output{Reasoning: "Need weather.", Calls: []Call{{"get_weather", `{"city":"Paris"}`}}}},
	{"harmony", "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final<|message|>Four.", false, Output{Reasoning: "Simple.", Content: "Four."}},
	{"generic", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", false, Output{Calls: []Call{{"get_weather", `{"city":"Paris"}`}}}},
}

func TestSplit(t *testing.T) {
	for _, c := range splitCases {
		f := format(t, c.format)
		if c.format == "hermes" && strings.Contains(c.text, "think") {
			f = Detect("<think> <tool_call> tools")
		}
		got := f.Split(c.text, c.inThink)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %q:\n got %+v\nwant %+v", c.format, c.text, got, c.want)
		}
		// Streamed one byte at a time, the same split comes out, and
		// nothing sent is ever taken back.
		s := f.NewStream(c.inThink)
		var r, ct strings.Builder
		for i := 0; i < len(c.text); i++ {
			a, b := s.Push(c.text[i : i+1])
			r.WriteString(a)
			ct.WriteString(b)
		}
		a, b, calls := s.Finish()
		r.WriteString(a)
		ct.WriteString(b)
		if !reflect.DeepEqual(calls, c.want.Calls) {
			t.Errorf("%s %q streamed: calls %+v, want %+v", c.format, c.text, calls, c.want.Calls)
		}
		if strings.TrimSpace(r.String()) != c.want.Reasoning || strings.TrimSpace(ct.String()) != strings.TrimSpace(c.want.Content) {
			t.Errorf("%s %q streamed: reasoning %q content %q, want %q %q", c.format, c.text, r.String(), ct.String(), c.want.Reasoning, c.want.Content)
		}
	}
}
