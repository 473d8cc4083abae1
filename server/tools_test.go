package server

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/chat"
	"github.com/archc/archc/server/toolcall"
)

const weatherTool = `{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}}`

func smolText(t *testing.T) *rt.Text {
	t.Helper()
	text, err := rt.LoadText(testmodels.GGUF(t, "smollm2"))
	if err != nil {
		t.Fatal(err)
	}
	return text
}

func withTemplate(t *testing.T, text *rt.Text, name string) *rt.Text {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "rt", "chat", "testdata", "templates", name))
	if err != nil {
		t.Fatal(err)
	}
	c := *text
	c.ChatTemplate = string(src)
	return &c
}

func chatReq(t *testing.T, body string) *chatRequest {
	t.Helper()
	var req chatRequest
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	return &req
}

// TestPlanChatUnrecognizedTools: a template that renders tools in a
// convention archc does not parse (here an invented <|tools_here|>
// section) gets the tools through its own prompt, byte for byte what
// chat.Render (transformers' rendering) makes of them, never archc's
// generic Hermes prompt; its output is not split into calls, and
// tool_choice "required" is refused by name.
func TestPlanChatUnrecognizedTools(t *testing.T) {
	smol := smolText(t)
	kimi := *smol
	kimi.ChatTemplate = `{%- if tools -%}<|im_system|><|tools_here|>{{ tools | tojson }}<|im_end|>{%- endif -%}` +
		`{%- for m in messages -%}<|im_user|>{{ m.content }}<|im_end|>{%- endfor -%}{%- if add_generation_prompt -%}<|im_assistant|>{%- endif -%}`
	p, err := planChat(&kimi, chatReq(t, `{"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [`+weatherTool+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.format.Name != "unrecognized" || !p.format.RendersTools {
		t.Fatalf("format %s (RendersTools %v), want unrecognized rendering the template's tools", p.format.Name, p.format.RendersTools)
	}
	want, err := chat.Render(kimi.ChatTemplate, []chat.Message{{Role: "user", Content: "Weather in Paris?"}},
		chat.Options{AddGenerationPrompt: true, BOS: kimi.Tokenizer.TokenText(kimi.Tokenizer.BOS()), EOS: kimi.Tokenizer.TokenText(kimi.Tokenizer.EOS()), Tools: []json.RawMessage{json.RawMessage(weatherTool)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := kimi.Tokenizer.Decode(p.ids); got != want {
		t.Errorf("prompt:\n%s\nwant the template's own rendering:\n%s", got, want)
	}
	if out := p.format.Split(`<|tool_calls_section_begin|>functions.get_weather:0{"city": "Paris"}`, false); len(out.Calls) != 0 || out.Content == "" {
		t.Errorf("split %+v: want the call text as content", out)
	}
	if _, err := planChat(&kimi, chatReq(t, `{"messages": [{"role": "user", "content": "Hi"}], "tools": [`+weatherTool+`], "tool_choice": "required"}`)); err == nil || !strings.Contains(err.Error(), "unrecognized") {
		t.Errorf("tool_choice required: %v, want a refusal naming the unrecognized convention", err)
	}
	if got := ChatConventions(&kimi); !strings.Contains(got, "unrecognized") {
		t.Errorf("ChatConventions = %q", got)
	}
}

// TestPlanChatTools checks that tools, tool calls and tool results reach
// the prompt, in the template's own convention (Qwen3: Hermes) and in the
// generic one (SmolLM2's template renders no tools).
func TestPlanChatTools(t *testing.T) {
	smol := smolText(t)
	conv := `"messages": [{"role": "user", "content": "Weather in Paris?"},
		{"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
		{"role": "tool", "tool_call_id": "call_1", "content": "18 C"}]`
	for _, c := range []struct {
		text   *rt.Text
		format string
		want   []string
	}{
		{smol, "generic", []string{"<tools>\n" + mustCompact(weatherTool) + "\n</tools>", "<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>",
			"<|im_start|>user\n<tool_response>\n18 C\n</tool_response><|im_end|>\n<|im_start|>assistant\n"}},
		{withTemplate(t, smol, "Qwen-Qwen3-0.6B.jinja"), "hermes", []string{"<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"",
			"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", "<tool_response>\n18 C\n</tool_response>"}},
	} {
		p, err := planChat(c.text, chatReq(t, `{`+conv+`, "tools": [`+weatherTool+`]}`))
		if err != nil {
			t.Fatal(err)
		}
		if p.format.Name != c.format || !p.parseTools || p.lark != "" {
			t.Errorf("%s: format %s parseTools %v lark %q", c.format, p.format.Name, p.parseTools, p.lark)
		}
		prompt := c.text.Tokenizer.Decode(p.ids)
		for _, w := range c.want {
			if !strings.Contains(prompt, w) {
				t.Errorf("%s: prompt lacks %q:\n%s", c.format, w, prompt)
			}
		}
	}
	// Without tools the prompt is the plain conversation.
	p, err := planChat(smol, chatReq(t, `{"messages": [{"role": "user", "content": "Hi"}]}`))
	if err != nil || strings.Contains(smol.Tokenizer.Decode(p.ids), "<tools>") || p.parseTools {
		t.Errorf("no tools: %v %q", err, smol.Tokenizer.Decode(p.ids))
	}
	// enable_thinking and reasoning_effort reach the template.
	qwen := withTemplate(t, smol, "Qwen-Qwen3-0.6B.jinja")
	p, err = planChat(qwen, chatReq(t, `{"messages": [{"role": "user", "content": "Hi"}], "chat_template_kwargs": {"enable_thinking": false}}`))
	if err != nil || !strings.HasSuffix(qwen.Tokenizer.Decode(p.ids), "<think>\n\n</think>\n\n") {
		t.Errorf("enable_thinking false: %v %q", err, qwen.Tokenizer.Decode(p.ids))
	}
	oss := withTemplate(t, smol, "openai-gpt-oss-120b.jinja")
	p, err = planChat(oss, chatReq(t, `{"messages": [{"role": "user", "content": "Hi"}], "reasoning_effort": "high"}`))
	if err != nil || !strings.Contains(oss.Tokenizer.Decode(p.ids), "Reasoning: high") {
		t.Errorf("reasoning_effort high: %v", err)
	}
}

func mustCompact(s string) string {
	var v json.RawMessage
	json.Unmarshal([]byte(s), &v)
	b, _ := json.Marshal(v)
	return string(b)
}

// TestPlanChatErrors: each bad field is a 400 naming it.
func TestPlanChatErrors(t *testing.T) {
	smol := smolText(t)
	user := `"messages": [{"role": "user", "content": "Hi"}]`
	for _, c := range []struct{ body, param string }{
		{`{` + user + `, "tools": [{"type": "retrieval"}]}`, "tools[0].type"},
		{`{` + user + `, "tools": [{"type": "function", "function": {"name": "bad name"}}]}`, "tools[0].function.name"},
		{`{` + user + `, "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "objekt"}}}]}`, "tools[0].function.parameters"},
		{`{` + user + `, "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a": {"minimum": "x"}}}}}]}`, "tools[0].function.parameters"},
		{`{` + user + `, "tools": [` + weatherTool + `], "tool_choice": {"type": "function", "function": {"name": "nope"}}}`, "tool_choice"},
		{`{` + user + `, "tool_choice": "required"}`, "tool_choice"},
		{`{` + user + `, "tool_choice": "sometimes"}`, "tool_choice"},
		{`{` + user + `, "response_format": {"type": "yaml"}}`, "response_format.type"},
		{`{` + user + `, "response_format": {"type": "json_schema"}}`, "response_format.json_schema"},
		{`{` + user + `, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": 3}}}}`, "response_format.json_schema.schema"},
		{`{` + user + `, "tools": [` + weatherTool + `], "tool_choice": "required", "response_format": {"type": "json_object"}}`, "response_format"},
		{`{"messages": [{"role": "tool", "content": "x"}]}`, "messages[0].tool_call_id"},
		{`{"messages": [{"role": "robot", "content": "x"}]}`, "messages[0].role"},
		{`{"messages": [{"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "f", "arguments": "{oops"}}]}]}`, "messages[0].tool_calls[0].function.arguments"},
		{`{` + user + `, "reasoning_effort": "extreme"}`, "reasoning_effort"},
		{`{` + user + `, "chat_template_kwargs": {"messages": []}}`, "chat_template_kwargs"},
		{`{` + user + `, "functions": [{"name": "f"}]}`, "functions"},
		{`{` + user + `, "function_call": "auto"}`, "function_call"},
		{`{"messages": [{"role": "user"}]}`, "messages[0].content"},
		{`{"messages": [{"role": "user", "content": null}]}`, "messages[0].content"},
		{`{"messages": [{"role": "user", "content": 5}]}`, "messages[0].content"},
		{`{"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}`, "messages[0].content[0].image_url"},
		{`{"messages": [{"role": "user", "content": [{"type": "audio"}]}]}`, "messages[0].content[0]"},
	} {
		_, err := planChat(smol, chatReq(t, c.body))
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Param != c.param {
			t.Errorf("%s: err %v (param %v), want a 400 naming %s", c.body, err, paramOf(ae), c.param)
		}
	}
	// The fields table's no-op values of the deprecated fields are accepted.
	for _, noop := range []string{`"functions": null`, `"functions": []`, `"function_call": null`, `"function_call": "none"`} {
		if _, err := planChat(smol, chatReq(t, `{`+user+`, `+noop+`}`)); err != nil {
			t.Errorf("%s: %v, want it accepted (a no-op value)", noop, err)
		}
	}
	m := &rt.Model{Vocab: 100}
	for _, bias := range []map[string]float64{{"100": 1}, {"-1": 1}, {"x": 1}, {"5": 101}} {
		if _, err := logitBias(m, bias); err == nil || err.(*apiError).Param != "logit_bias" {
			t.Errorf("logit_bias %v: err %v", bias, err)
		}
	}
	if b, err := logitBias(m, map[string]float64{"7": -100}); err != nil || b[7] != -100 {
		t.Errorf("logit_bias 7: %v %v", b, err)
	}
}

func paramOf(ae *apiError) any {
	if ae == nil {
		return nil
	}
	return ae.Param
}

// TestToolGrammarsCompile builds the grammar of a required call in every
// enforced convention and of json_schema response formats, and has
// llguidance (in the worker's venv) validate each against SmolLM2's
// vocabulary.
func TestToolGrammarsCompile(t *testing.T) {
	smol := smolText(t)
	py, err := ireetool.FindPython()
	if err != nil || exec.Command(py, "-c", "import llguidance").Run() != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("llguidance is not installed in the venv")
		}
		t.Skip("llguidance is not installed in the venv")
	}
	m := &rt.Model{Vocab: int64(smol.Tokenizer.VocabSize()), EOS: []int32{smol.Tokenizer.EOS()}}
	vocab, err := writeVocab(m, smol)
	if err != nil {
		t.Fatal(err)
	}
	grammars := map[string]string{}
	for _, tpl := range []string{"Qwen-Qwen3-0.6B.jinja", "meta-llama-Llama-3.1-8B-Instruct.jinja", "mistralai-Mistral-Nemo-Instruct-2407.jinja",
		"ibm-granite-granite-3.3-2B-Instruct.jinja", "CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", "openai-gpt-oss-120b.jinja"} {
		p, err := planChat(withTemplate(t, smol, tpl), chatReq(t, `{"messages": [{"role": "user", "content": "Hi"}], "tools": [`+weatherTool+`], "tool_choice": "required"}`))
		if err != nil {
			t.Fatalf("%s: %v", tpl, err)
		}
		grammars[p.format.Name] = p.lark
	}
	p, err := planChat(smol, chatReq(t, `{"messages": [{"role": "user", "content": "Hi"}], "tools": [`+weatherTool+`], "tool_choice": {"type": "function", "function": {"name": "get_weather"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	grammars["generic named"] = p.lark
	p, err = planChat(smol, chatReq(t, `{"messages": [{"role": "user", "content": "Hi"}], "response_format": {"type": "json_object"}}`))
	if err != nil {
		t.Fatal(err)
	}
	grammars["json_object"] = p.lark
	// The conventions whose calls are not JSON in tags, with a sample call
	// each grammar must accept (and the parser read back) and one it must
	// refuse.
	samples := map[string][2]string{
		"hermes": {"<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
			"<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"},
		"qwen3-coder": {"<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=unit>\nc\n</parameter>\n</function>\n</tool_call>",
			"<tool_call>\n<function=get_weather>\n<parameter=unit>\nc\n</parameter>\n</function>\n</tool_call>"},
		"seed-oss": {"<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>",
			"<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n<parameter=unit>k</parameter>\n</function>\n</seed:tool_call>"},
		"deepseek-v3": {"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\", \"unit\": \"f\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Rome\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
			"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
		"deepseek-v3.1": {"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
			"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"unit\": \"c\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
	}
	body := `{"messages": [{"role": "user", "content": "Hi"}], "tools": [` + weatherTool + `], "tool_choice": "required"}`
	for name, tpl := range map[string]string{
		"qwen3-coder":   "{% if tools %}Call <tool_call>\n<function=NAME>\n<parameter=P>\nV\n</parameter>\n</function>\n</tool_call>{% endif %}{% for m in messages %}{{ m.content }}{% endfor %}",
		"deepseek-v3":   "{% if tools %}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜>{% endif %}{% for m in messages %}{{ m.content }}{% endfor %}",
		"deepseek-v3.1": "{% if tools %}<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>{% endif %}{% for m in messages %}{{ m.content }}{% endfor %}",
	} {
		c := *smol
		c.ChatTemplate = tpl
		p, err := planChat(&c, chatReq(t, body))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		grammars[name] = p.lark
	}
	p, err = planChat(withTemplate(t, smol, "ByteDance-Seed-OSS.jinja"), chatReq(t, body))
	if err != nil {
		t.Fatal(err)
	}
	grammars["seed-oss"] = p.lark
	formats := map[string]*toolcall.Format{"hermes": toolcall.Detect("<tool_call>{{ tools }}"), "seed-oss": toolcall.Detect(withTemplate(t, smol, "ByteDance-Seed-OSS.jinja").ChatTemplate),
		"qwen3-coder": toolcall.Detect("<tool_call><function=x><parameter=y>"), "deepseek-v3": toolcall.Detect("tool▁calls▁begin"), "deepseek-v3.1": toolcall.Detect("tool▁calls▁begin")}
	// The families' conventions, from their real templates
	// (rt/chat/testdata/tool-templates).
	for name, c := range map[string]struct{ template, good, wrong string }{
		"gemma4": {"google-gemma-4-31B-it.jinja", "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,unit:<|\"|>c<|\"|>}<tool_call|>",
			"<|tool_call>call:get_time{city:<|\"|>Paris<|\"|>}<tool_call|>"},
		"kimi-k2": {"Kimi-K2-Instruct.jinja", "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|><|tool_calls_section_end|>",
			"<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"unit\": \"c\"}<|tool_call_end|><|tool_calls_section_end|>"},
		"glm-4.6": {"GLM-4.6.jinja", "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>unit</arg_key>\n<arg_value>c</arg_value>\n</tool_call>",
			"<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>unit</arg_key>\n<arg_value>k</arg_value>\n</tool_call>"},
		"glm-4.7": {"GLM-4.7-Flash.jinja", "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
			"<tool_call>get_weather<arg_key>unit</arg_key><arg_value>c</arg_value></tool_call>"},
		"nemotron": {"NVIDIA-Nemotron-Nano-v2.jinja", "<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]</TOOLCALL>",
			"<TOOLCALL>[{\"name\": \"get_time\", \"arguments\": {\"city\": \"Paris\"}}]</TOOLCALL>"},
		"minicpm": {"OpenBMB-MiniCPM3-4B-function_call.jinja", "<|tool_call_start|>\n```python\nget_weather(city=\"Paris\",unit=\"c\")\n```\n<|tool_call_end|>",
			"<|tool_call_start|>\n```python\nget_weather(unit=\"c\")\n```\n<|tool_call_end|>"},
		"lfm2": {"LFM2.5-8B-A1B.jinja", "<|tool_call_start|>[get_weather(city='Paris', unit='c')]<|tool_call_end|>",
			"<|tool_call_start|>[get_weather(city='Paris', unit='k')]<|tool_call_end|>"},
		"minimax-m2": {"MiniMax-M2.jinja", "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n</invoke>\n</minimax:tool_call>",
			"<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"unit\">c</parameter>\n</invoke>\n</minimax:tool_call>"},
		"apertus": {"Apertus-8B-Instruct.jinja", "<|tools_prefix|>[{\"get_weather\": {\"city\": \"Paris\"}}]<|tools_suffix|>",
			"<|tools_prefix|>[{\"get_time\": {\"city\": \"Paris\"}}]<|tools_suffix|>"},
		"solar-open": {"upstage-Solar-Open-100B.jinja", "<|tool_calls|><|tool_call:begin|>abc123XYZ<|tool_call:name|>get_weather<|tool_call:args|>{\"city\": \"Paris\"}<|tool_call:end|><|calls|>",
			"<|tool_calls|><|tool_call:begin|>abc123XYZ<|tool_call:name|>get_weather<|tool_call:args|>{\"town\": \"Paris\"}<|tool_call:end|><|calls|>"},
	} {
		src, err := os.ReadFile(filepath.Join("..", "rt", "chat", "testdata", "tool-templates", c.template))
		if err != nil {
			t.Fatal(err)
		}
		tc := *smol
		tc.ChatTemplate = string(src)
		p, err := planChat(&tc, chatReq(t, body))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		grammars[name], samples[name], formats[name] = p.lark, [2]string{c.good, c.wrong}, p.format
	}
	for name, sm := range samples {
		out := formats[name].Split(sm[0], false)
		if len(out.Calls) == 0 || out.Calls[0].Name != "get_weather" || !strings.Contains(out.Calls[0].Arguments, `"city":"Paris"`) || strings.TrimSpace(out.Content) != "" {
			t.Errorf("%s: the sample call reads back as %+v", name, out)
		}
	}
	raw, _ := json.Marshal(map[string]any{"grammars": grammars, "samples": samples})
	script := `
import json, sys, llguidance as llg
import numpy as np
exec(open(sys.argv[1]).read())
tok = tokenizer(sys.argv[2])[0]
bad = {}
inp = json.load(sys.stdin)
for name, lark in inp["grammars"].items():
    msg = llg.LLMatcher.validate_grammar(lark, tok)
    if msg and not msg.startswith("WARNING"):
        bad[name] = msg
        continue
    if name in inp["samples"]:
        good, wrong = inp["samples"][name]
        for text, want in ((good, True), (wrong, False)):
            m = llg.LLMatcher(tok, lark)
            ok = m.try_consume_tokens(tok.tokenize_str(text)) == len(tok.tokenize_str(text)) and m.is_accepting()
            if ok != want:
                bad[name + (" accepts " if ok else " refuses ") + repr(text)] = m.get_error() or ""
print(json.dumps(bad))
`
	cmd := exec.Command(py, "-c", script, filepath.Join("..", "rt", "iree", "grammar.py"), vocab)
	cmd.Stdin = strings.NewReader(string(raw))
	var stderr strings.Builder
	cmd.Stderr = &stderr // llguidance's warnings (a stop lexeme it cannot backtrack over: the text keeps it, as the parsers want)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s%s", err, out, stderr.String())
	}
	if s := strings.TrimSpace(string(out)); s != "{}" {
		t.Errorf("grammars llguidance refuses: %s\n%s\n%s", s, stderr.String(), raw)
	}
}

// TestChatSplitter: the plan reads reasoning and calls by the template's
// convention, and reads no calls under tool_choice "none".
func TestChatSplitter(t *testing.T) {
	qwen := withTemplate(t, smolText(t), "Qwen-Qwen3-0.6B.jinja")
	out := "<think>\nParis weather.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	for _, c := range []struct {
		choice    string
		calls     int
		reasoning string
	}{{`"auto"`, 1, "Paris weather."}, {`"none"`, 0, "Paris weather."}} {
		p, err := planChat(qwen, chatReq(t, `{"messages": [{"role": "user", "content": "Hi"}], "tools": [`+weatherTool+`], "tool_choice": `+c.choice+`}`))
		if err != nil {
			t.Fatal(err)
		}
		s := p.splitter()
		r, content := s.Push(out)
		r2, c2, calls := s.Finish()
		if len(calls) != c.calls || strings.TrimSpace(r+r2) != c.reasoning {
			t.Errorf("tool_choice %s: reasoning %q, content %q, calls %v", c.choice, r+r2, content+c2, calls)
		}
		if c.calls == 0 && !strings.Contains(content+c2, "<tool_call>") {
			t.Errorf("tool_choice none: the call text should stay content, got %q", content+c2)
		}
		if c.calls == 1 {
			tc := p.toolCalls(calls)[0]
			if !strings.HasPrefix(tc.ID, "call_") || tc.Function.Arguments != `{"city":"Paris"}` {
				t.Errorf("tool call %v", tc)
			}
		}
	}
	// include_reasoning false: the reasoning is split off and dropped, the
	// content and calls stay.
	p, err := planChat(qwen, chatReq(t, `{"messages": [{"role": "user", "content": "Hi"}], "tools": [`+weatherTool+`], "include_reasoning": false}`))
	if err != nil {
		t.Fatal(err)
	}
	s := p.splitter()
	r, content := s.Push(out)
	r2, c2, calls := s.Finish()
	if r+r2 != "" || len(calls) != 1 || strings.Contains(content+c2, "Paris weather") {
		t.Errorf("include_reasoning false: reasoning %q, content %q, calls %v", r+r2, content+c2, calls)
	}
	// Mistral's templates check 9-character call ids.
	mistral := withTemplate(t, smolText(t), "mistralai-Mistral-Nemo-Instruct-2407.jinja")
	p, err = planChat(mistral, chatReq(t, `{"messages": [{"role": "user", "content": "Hi"}], "tools": [`+weatherTool+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	if id := p.toolCalls([]toolcall.Call{{Name: "f", Arguments: "{}"}})[0].ID; len(id) != 9 {
		t.Errorf("mistral call id %q, want 9 characters", id)
	}
}

// TestMaxTokensFields: max_completion_tokens wins over max_tokens, and an
// error names the field that was given.
func TestMaxTokensFields(t *testing.T) {
	s := &Server{}
	m := &rt.Model{Program: &rt.Program{MaxLen: 64}, Vocab: 100}
	ints := func(v int) *int { return &v }
	for _, c := range []struct {
		p     sampling
		max   int
		param string
	}{
		{sampling{MaxTokens: ints(7)}, 7, ""},
		{sampling{MaxCompletionTokens: ints(5), MaxTokens: ints(7)}, 5, ""},
		{sampling{MaxCompletionTokens: ints(-1), MaxTokens: ints(3)}, 0, "max_completion_tokens"},
		{sampling{MaxCompletionTokens: ints(-1)}, 0, "max_completion_tokens"},
		{sampling{MaxTokens: ints(0)}, 0, "max_tokens"},
		{sampling{MaxCompletionTokens: ints(100)}, 0, "max_completion_tokens"},
	} {
		req, _, err := s.options(m, nil, c.p, 4, 16)
		var ae *apiError
		switch {
		case c.param == "" && (err != nil || req.MaxTokens != c.max):
			t.Errorf("%+v: max %d, %v; want %d", c.p, req.MaxTokens, err, c.max)
		case c.param != "" && (!errors.As(err, &ae) || ae.Param != c.param || !strings.Contains(ae.Message, c.param)):
			t.Errorf("%+v: %v, want a 400 naming %s", c.p, err, c.param)
		}
	}
}
