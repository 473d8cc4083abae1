package toolcall

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
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
	// The real templates of the conventions added for the families archc
	// runs (rt/chat/testdata/tool-templates, origins in its README.md):
	// each gets its row, and renders tools.
	families := map[string][2]string{
		"google-gemma-4-31B-it.jinja":               {"gemma4", "<|channel>thought"},
		"Kimi-K2-Instruct.jinja":                    {"kimi-k2", ""},
		"Kimi-K2-Thinking.jinja":                    {"kimi-k2", "<think>"},
		"moonshotai-Kimi-K2.jinja":                  {"kimi-k2", ""},
		"GLM-4.6.jinja":                             {"glm-4.5", "<think>"},
		"GLM-4.7-Flash.jinja":                       {"glm-4.5", "<think>"},
		"NVIDIA-Nemotron-Nano-v2.jinja":             {"nemotron", "<think>"},
		"NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja": {"qwen3-coder", "<think>"},
		"Qwen3.5-4B.jinja":                          {"qwen3-coder", "<think>"},
		"OpenBMB-MiniCPM3-4B-function_call.jinja":   {"minicpm", "<|thought_start|>"},
		"LFM2-8B-A1B.jinja":                         {"lfm2", ""},
		"LFM2.5-8B-A1B.jinja":                       {"lfm2", "<think>"},
		"LFM2.5-Instruct.jinja":                     {"lfm2", ""},
		"MiniMax-M2.jinja":                          {"minimax-m2", "<think>"},
		"Apertus-8B-Instruct.jinja":                 {"apertus", "<|inner_prefix|>"},
		"upstage-Solar-Open-100B.jinja":             {"solar-open", "<|think|>"},
	}
	for name, w := range families {
		src, err := os.ReadFile(filepath.Join("..", "..", "rt", "chat", "testdata", "tool-templates", name))
		if err != nil {
			t.Fatal(err)
		}
		f := Detect(string(src))
		if f.Name != w[0] || f.ThinkOpen != w[1] || !f.RendersTools {
			t.Errorf("%s: Detect = %s (ThinkOpen %q, RendersTools %v), want %s (%q)", name, f.Name, f.ThinkOpen, f.RendersTools, w[0], w[1])
		}
	}
	// LFM2.5 writes <|tool_call_start|>[NAME(…)]<|tool_call_end|>: the
	// marker of MiniCPM's row, not its fenced Python calls.
	if f := Detect(`{{- "<|tool_call_start|>[" + (calls | join(", ")) + "]<|tool_call_end|>" -}}`); f.Name == "minicpm" {
		t.Error("an LFM2.5-style template: want not minicpm")
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
		"<|tool_call>call:", "<think> <|tool_calls_section_begin|>", "<think> <tool_call> <arg_key> <arg_value>", "<think> <TOOLCALL>", "<|tool_call_start|> ```python", "<think> <|tool_call_start|>[", "<think> <minimax:tool_call>", "<|tools_prefix|>", "<|tool_call:begin|><|tool_call:name|>",
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

	// Gemma 4: its template's rendering of a call, reasoning in the thought
	// channel, Gemma's value syntax nested (strings with quotes and
	// newlines, lists, numbers, true, null), text before the call; a bare
	// string value and a cut call are content.
	{"gemma4", "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,unit:<|\"|>celsius<|\"|>}<tool_call|>", false,
		Output{Calls: []Call{{"get_weather", `{"city":"Paris","unit":"celsius"}`}}}},
	{"gemma4", "<|channel>thought\nNeed weather and time.<channel|><|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|><|tool_call>call:get_time{tz:<|\"|>Europe/Paris<|\"|>}<tool_call|><|tool_response>", false,
		Output{Reasoning: "Need weather and time.", Calls: []Call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"tz":"Europe/Paris"}`}}}},
	{"gemma4", "Let me search.<|tool_call>call:search{filters:{tags:[<|\"|>a \"b\"<|\"|>,<|\"|>line1\nline2<|\"|>],max:3,exact:true,since:null,w:-1.5e3},query:<|\"|>say \"hi\"\n\tnow {x}<|\"|>}<tool_call|>", false,
		Output{Content: "Let me search.", Calls: []Call{{"search", `{"filters":{"tags":["a \"b\"","line1\nline2"],"max":3,"exact":true,"since":null,"w":-1.5e3},"query":"say \"hi\"\n\tnow {x}"}`}}}},
	{"gemma4", "<|tool_call>call:get_weather{city:Paris}<tool_call|>", false, Output{Content: "<|tool_call>call:get_weather{city:Paris}<tool_call|>"}},
	{"gemma4", "<|tool_call>call:get_weather{city:<|\"|>Par", false, Output{Content: "<|tool_call>call:get_weather{city:<|\"|>Par"}},
	{"gemma4", "It is sunny.", false, Output{Content: "It is sunny."}},

	// Kimi K2: a section of calls functions.NAME:INDEX, reasoning in
	// <think> (K2 Thinking), nested JSON arguments; a malformed call is
	// content.
	{"kimi-k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|><|tool_calls_section_end|>", false,
		Output{Calls: []Call{{"get_weather", `{"city":"Paris"}`}}}},
	{"kimi-k2", "<think>Two lookups.</think>I'll check both.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|>" +
		"<|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{\"tz\": \"Europe/Paris\"}<|tool_call_end|><|tool_calls_section_end|>", false,
		Output{Reasoning: "Two lookups.", Content: "I'll check both.", Calls: []Call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"tz":"Europe/Paris"}`}}}},
	{"kimi-k2", "<|tool_calls_section_begin|>\n<|tool_call_begin|>\nfunctions.search:0<|tool_call_argument_begin|>\n{\"q\": {\"a\": [1, {\"b\": \"x \\\"y\\\"\\nz\"}]}}\n<|tool_call_end|>\n<|tool_calls_section_end|>", false,
		Output{Calls: []Call{{"search", `{"q":{"a":[1,{"b":"x \"y\"\nz"}]}}`}}}},
	{"kimi-k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": }<|tool_call_end|>", false,
		Output{Content: "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": }<|tool_call_end|>"}},

	// GLM-4.5+: 4.6's layout (newlines between the tags), 4.7's (none),
	// values JSON or raw strings; a value outside <arg_value> is content.
	{"glm-4.5", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>", false,
		Output{Calls: []Call{{"get_weather", `{"city":"Paris","days":3}`}}}},
	{"glm-4.5", "<think>Both.</think>Checking.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call><tool_call>get_time<arg_key>tz</arg_key><arg_value>Europe/Paris</arg_value></tool_call>", false,
		Output{Reasoning: "Both.", Content: "Checking.", Calls: []Call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"tz":"Europe/Paris"}`}}}},
	{"glm-4.5", "Working on it.</think>\n<tool_call>search<arg_key>filters</arg_key><arg_value>{\"tags\": [\"a\", \"b \\\"c\\\"\"], \"n\": 2}</arg_value><arg_key>query</arg_key><arg_value>say \"hi\"\nthen go</arg_value></tool_call>", true,
		Output{Reasoning: "Working on it.", Calls: []Call{{"search", `{"filters":{"tags":["a","b \"c\""],"n":2},"query":"say \"hi\"\nthen go"}`}}}},
	{"glm-4.5", "<tool_call>get_weather<arg_key>city</arg_key>Paris</tool_call>", false, Output{Content: "<tool_call>get_weather<arg_key>city</arg_key>Paris</tool_call>"}},
	{"glm-4.5", "<tool_call>get_time</tool_call>", false, Output{Calls: []Call{{"get_time", `{}`}}}},

	// Nemotron-H (Nano v2): a JSON list in <TOOLCALL>, arguments an object
	// or a string of one; arguments that are not an object are content.
	{"nemotron", "<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]</TOOLCALL>", false, Output{Calls: []Call{{"get_weather", `{"city":"Paris"}`}}}},
	{"nemotron", "<think>\nNeed both.\n</think>\n\nSure.\n<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, {\"name\": \"get_time\", \"arguments\": \"{\\\"tz\\\": \\\"Europe/Paris\\\"}\"}]</TOOLCALL>", false,
		Output{Reasoning: "Need both.", Content: "Sure.", Calls: []Call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"tz":"Europe/Paris"}`}}}},
	{"nemotron", "<TOOLCALL>[{\"name\": \"search\", \"arguments\": {\"q\": \"say \\\"hi\\\"\\nnow\", \"f\": {\"tags\": [\"a\", {\"b\": null}]}}}]</TOOLCALL>", false,
		Output{Calls: []Call{{"search", `{"q":"say \"hi\"\nnow","f":{"tags":["a",{"b":null}]}}`}}}},
	{"nemotron", "<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": 3}]</TOOLCALL>", false, Output{Content: "<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": 3}]</TOOLCALL>"}},

	// MiniCPM3/4: Python calls in a fenced block, reasoning in
	// <|thought_start|>, the answer after the block; Python and JSON
	// literals nested; a positional argument is content.
	{"minicpm", "<|tool_call_start|>\n```python\nget_weather(city=\"Paris\",unit=\"celsius\")\n```\n<|tool_call_end|>\n", false,
		Output{Calls: []Call{{"get_weather", `{"city":"Paris","unit":"celsius"}`}}}},
	{"minicpm", "<|thought_start|>\nNeed both.\n<|thought_end|>\n<|tool_call_start|>\n```python\nget_weather(city=\"Paris\")\nget_time(tz='Europe/Paris')\n```\n<|tool_call_end|>\nChecking now.", false,
		Output{Reasoning: "Need both.", Content: "Checking now.", Calls: []Call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"tz":"Europe/Paris"}`}}}},
	{"minicpm", "Let me look.\n<|tool_call_start|>\n```python\nsearch(filters={\"tags\": [\"a\", 'b \"c\"'], \"exact\": True, \"since\": None}, query=\"say \\\"hi\\\"\\nnow\", limit=-2.5, ids=(1, 2))\n```\n<|tool_call_end|>", false,
		Output{Content: "Let me look.", Calls: []Call{{"search", `{"filters":{"tags":["a","b \"c\""],"exact":true,"since":null},"query":"say \"hi\"\nnow","limit":-2.5,"ids":[1,2]}`}}}},
	{"minicpm", "<|tool_call_start|>\n```python\nget_weather(\"Paris\")\n```\n<|tool_call_end|>", false, Output{Content: "<|tool_call_start|>\n```python\nget_weather(\"Paris\")\n```\n<|tool_call_end|>"}},

	// LFM2/LFM2.5: a Python list of calls (the template's rendering of
	// two), Python and JSON literals nested; a call outside the list is
	// content.
	{"lfm2", "<|tool_call_start|>[get_weather(city='Paris', unit='celsius')]<|tool_call_end|>", false, Output{Calls: []Call{{"get_weather", `{"city":"Paris","unit":"celsius"}`}}}},
	{"lfm2", "<think>Both.</think>Checking.<|tool_call_start|>[get_weather(city='Paris'), get_time(tz='Europe/Paris')]<|tool_call_end|>", false,
		Output{Reasoning: "Both.", Content: "Checking.", Calls: []Call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"tz":"Europe/Paris"}`}}}},
	{"lfm2", "<|tool_call_start|>[search(q=\"say \\\"hi\\\"\\nnow\", f={\"tags\": ['a', {\"b\": None}], \"n\": 2}, exact=true)]<|tool_call_end|>", false,
		Output{Calls: []Call{{"search", `{"q":"say \"hi\"\nnow","f":{"tags":["a",{"b":null}],"n":2},"exact":true}`}}}},
	{"lfm2", "<|tool_call_start|>get_weather(city='Paris')<|tool_call_end|>", false, Output{Content: "<|tool_call_start|>get_weather(city='Paris')<|tool_call_end|>"}},

	// Apertus: a JSON list of {NAME: ARGS} (the template's rendering of
	// two), reasoning in <|inner_prefix|>; arguments not an object are
	// content.
	{"apertus", "<|tools_prefix|>[{\"get_weather\": {\"city\": \"Paris\"}}]<|tools_suffix|>", false, Output{Calls: []Call{{"get_weather", `{"city":"Paris"}`}}}},
	{"apertus", "<|inner_prefix|>Both.<|inner_suffix|>Checking.<|tools_prefix|>[{\"get_weather\": {\"city\": \"Paris\"}}, {\"get_time\": {\"tz\": \"Europe/Paris\"}}]<|tools_suffix|>", false,
		Output{Reasoning: "Both.", Content: "Checking.", Calls: []Call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"tz":"Europe/Paris"}`}}}},
	{"apertus", "<|tools_prefix|>[{\"search\": {\"q\": \"say \\\"hi\\\"\\nnow\", \"f\": {\"tags\": [\"a\", {\"b\": null}]}}}]<|tools_suffix|>", false,
		Output{Calls: []Call{{"search", `{"q":"say \"hi\"\nnow","f":{"tags":["a",{"b":null}]}}`}}}},
	{"apertus", "<|tools_prefix|>[{\"get_weather\": \"Paris\"}]<|tools_suffix|>", false, Output{Content: "<|tools_prefix|>[{\"get_weather\": \"Paris\"}]<|tools_suffix|>"}},

	// Solar Open: calls with ids between its markers (the template's
	// rendering of two), reasoning in its <|think|> turn, the answer in its
	// <|content|> turn; a call without arguments' JSON is content.
	{"solar-open", "<|tool_calls|><|tool_call:begin|>abc123XYZ<|tool_call:name|>get_weather<|tool_call:args|>{\"city\": \"Paris\"}<|tool_call:end|><|calls|>", false,
		Output{Calls: []Call{{"get_weather", `{"city":"Paris"}`}}}},
	{"solar-open", "<|think|>Both.<|end|><|begin|>assistant<|tool_calls|><|tool_call:begin|>a1<|tool_call:name|>get_weather<|tool_call:args|>{\"city\": \"Paris\"}<|tool_call:end|>" +
		"<|tool_call:begin|>a2<|tool_call:name|>get_time<|tool_call:args|>{\"tz\": \"Europe/Paris\"}<|tool_call:end|><|calls|>", false,
		Output{Reasoning: "Both.", Calls: []Call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"tz":"Europe/Paris"}`}}}},
	{"solar-open", "<|think|>Easy.<|end|><|begin|>assistant<|content|>It is sunny.<|end|>", false, Output{Reasoning: "Easy.", Content: "It is sunny."}},
	{"solar-open", "<|content|>Let me look.<|tool_calls|><|tool_call:begin|>x<|tool_call:name|>search<|tool_call:args|>{\"q\": \"say \\\"hi\\\"\\nnow\", \"f\": [1, {\"b\": true}]}<|tool_call:end|><|calls|>", false,
		Output{Content: "Let me look.", Calls: []Call{{"search", `{"q":"say \"hi\"\nnow","f":[1,{"b":true}]}`}}}},
	{"solar-open", "<|tool_calls|><|tool_call:begin|>x<|tool_call:name|>get_weather<|tool_call:args|>Paris<|tool_call:end|><|calls|>", false,
		Output{Content: "<|tool_calls|><|tool_call:begin|>x<|tool_call:name|>get_weather<|tool_call:args|>Paris<|tool_call:end|><|calls|>"}},

	// MiniMax-M2: invokes in a block (the template's rendering of two),
	// values JSON or raw strings; an unclosed invoke is content.
	{"minimax-m2", "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"days\">3</parameter>\n</invoke>\n</minimax:tool_call>", false,
		Output{Calls: []Call{{"get_weather", `{"city":"Paris","days":3}`}}}},
	{"minimax-m2", "<think>Both.</think>\nChecking.\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n<invoke name=\"get_time\">\n<parameter name=\"tz\">Europe/Paris</parameter>\n</invoke>\n</minimax:tool_call>", false,
		Output{Reasoning: "Both.", Content: "Checking.", Calls: []Call{{"get_weather", `{"city":"Paris"}`}, {"get_time", `{"tz":"Europe/Paris"}`}}}},
	{"minimax-m2", "<minimax:tool_call>\n<invoke name=\"search\">\n<parameter name=\"f\">{\"tags\": [\"a\", \"b \\\"c\\\"\"]}</parameter>\n<parameter name=\"q\">say \"hi\"\nnow</parameter>\n</invoke>\n</minimax:tool_call>", false,
		Output{Calls: []Call{{"search", `{"f":{"tags":["a","b \"c\""]},"q":"say \"hi\"\nnow"}`}}}},
	{"minimax-m2", "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</minimax:tool_call>", false,
		Output{Content: "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</minimax:tool_call>"}},
}

func TestSplit(t *testing.T) {
	for _, c := range splitCases {
		f := format(t, c.format)
		if c.format == "hermes" && strings.Contains(c.text, "think") {
			f = Detect("<think> <tool_call> tools")
		}
		if c.format == "kimi-k2" && !strings.Contains(c.text, "<think>") {
			f = Detect("<|tool_calls_section_begin|>") // K2 Instruct: no reasoning markers
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

// TestStreamHoldsMarkers: while a convention's call marker is being
// written, the text before it streams and no part of the marker does;
// once the marker is complete, nothing more streams until the end.
func TestStreamHoldsMarkers(t *testing.T) {
	for _, name := range []string{"gemma4", "kimi-k2", "glm-4.5", "nemotron", "minicpm", "lfm2", "minimax-m2", "apertus", "solar-open"} {
		f := format(t, name)
		m := f.CallMarker()
		for k := 1; k <= len(m); k++ {
			s := f.NewStream(false)
			_, c1 := s.Push("Checking the weather. ")
			_, c2 := s.Push(m[:k])
			if got := c1 + c2; got != "Checking the weather." {
				t.Errorf("%s: streamed %q after %q, want the text before the marker only", name, got, m[:k])
			}
		}
	}
}

// TestFamilyGrammars builds each added convention's grammar for two tools
// (the llguidance check that a forced call compiles, is accepted and
// parses back is server's TestToolGrammarsCompile) and refuses names the
// convention cannot write.
func TestFamilyGrammars(t *testing.T) {
	tools := []Tool{
		{Name: "get_weather", Parameters: []byte(`{"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}`)},
		{Name: "get_time", Parameters: []byte(`{"type": "object", "properties": {"tz": {"type": "string"}, "utc": {"type": "boolean"}}}`)},
	}
	text := strconv.Quote // the markers as text, spelled as the test reads them
	want := map[string][]string{
		"gemma4":     {`"<|tool_call>" "call:" ("get_weather" | "get_time") gobj "<tool_call|>"`},
		"kimi-k2":    {`"functions.get_weather:"`, `"functions.get_time:"`, `"<|tool_calls_section_end|>"`},
		"glm-4.5":    {`f0: "<tool_call>" "get_weather" f0p0 f0p1? "\n" "</tool_call>"`, `f0p1: "\n" "<arg_key>" "unit" "</arg_key>" "\n" "<arg_value>" f0v1`, `f0v1: ("c" | "f") "</arg_value>"`},
		"nemotron":   {`start: "<TOOLCALL>" "[" call "]" "</TOOLCALL>"`},
		"minicpm":    {`f0: "get_weather(" f0p0 ("," f0p1)? ")"`, `f1: "get_time(" (f1p0 ("," f1p1)? | (f1p1)?)? ")"`, `f0p0: "city=" %json`},
		"apertus":    {`start: "<|tools_prefix|>" "[" call "]" "<|tools_suffix|>"`, `"properties": {"get_weather": {"type": "object"`},
		"solar-open": {`c1: "<|tool_call:begin|>" /[A-Za-z0-9_\-]{1,40}/ "<|tool_call:name|>" "get_time" "<|tool_call:args|>" %json`},
		"lfm2":       {`f0: "get_weather(" f0p0 (", " f0p1)? ")"`, `f0p1: "unit=" ("'c'" | "'f'")`, `f1p1: "utc=" %json`},
		"minimax-m2": {`f0: "<invoke name=\"get_weather\">\n" f0p0 f0p1? "</invoke>\n"`, `f0p1: "<parameter name=\"unit\">" f0v1 "\n"`},
	}
	for name, parts := range want {
		g, err := format(t, name).Grammar(text, tools, false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		g = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">").Replace(g) // LarkString's escapes
		for _, p := range parts {
			if !strings.Contains(g, p) {
				t.Errorf("%s grammar lacks %s:\n%s", name, p, g)
			}
		}
		if _, err := format(t, name).Grammar(text, []Tool{{Name: "bad name<"}}, false); err == nil && name != "nemotron" && name != "apertus" { // JSON spells any name
			t.Errorf("%s: a tool name with a space and '<': no error", name)
		}
	}
	// GLM-4.5/4.6 write the tags on lines of their own, 4.7 does not.
	for file, nl := range map[string]bool{"GLM-4.6.jinja": true, "GLM-4.7-Flash.jinja": false} {
		src, err := os.ReadFile(filepath.Join("..", "..", "rt", "chat", "testdata", "tool-templates", file))
		if err != nil {
			t.Fatal(err)
		}
		g, err := Detect(string(src)).Grammar(text, tools[:1], true)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(g, `f0p0: "\n" "<arg_key>"`); got != nl {
			t.Errorf("%s: newlines between tags %v, want %v:\n%s", file, got, nl, g)
		}
	}
}
