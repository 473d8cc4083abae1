package toolcall

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// Detect returns the convention of a chat template, from markers its
// source writes. Templates that never look at `tools` get Generic.
//
// The switch is the table of conventions: one row each, naming the
// markers that identify it, its parser (how calls are read back) and its
// grammar (how a forced call is written), side by side.
func Detect(template string) *Format {
	has := func(s ...string) bool {
		for _, x := range s {
			if !strings.Contains(template, x) {
				return false
			}
		}
		return true
	}
	think := func(f *Format) *Format {
		switch {
		case has("<seed:think>"):
			f.ThinkOpen, f.ThinkClose = "<seed:think>", "</seed:think>"
		case has("<think>"):
			f.ThinkOpen, f.ThinkClose = "<think>", "</think>"
		}
		return f
	}
	rendersTools := has("tools")
	xmlOpen := "<tool_call>"
	if has("<seed:tool_call>") {
		xmlOpen = "<seed:tool_call>"
	}
	switch {
	case has("<|channel|>", "functions"):
		return &Format{Name: "harmony", RendersTools: true, split: splitHarmony, grammar: harmonyGrammar}
	case has("<|tool_call>call:"):
		return &Format{Name: "gemma4", RendersTools: true, ThinkOpen: "<|channel>thought", ThinkClose: "<channel|>",
			starts: []string{gemmaCall}, parse: parseGemma4, grammar: gemma4Grammar}
	case has(kimiSection) || has("tool_declare<|im_middle|>"):
		return think(&Format{Name: "kimi-k2", RendersTools: true, starts: []string{kimiSection, kimiCall}, parse: parseKimi, grammar: kimiGrammar})
	case has("<arg_key>", "<arg_value>"):
		// GLM-4.5 and 4.6 put newlines between the tags; 4.7 does not.
		return think(&Format{Name: "glm-4.5", RendersTools: true, starts: []string{"<tool_call>"}, parse: parseGLM,
			grammar: glmGrammar(!has("</arg_key><arg_value>"))})
	case has("<TOOLCALL>"):
		return think(&Format{Name: "nemotron", RendersTools: true, starts: []string{"<TOOLCALL>"}, parse: parseNemotron, grammar: nemotronGrammar})
	case has(minicpmCall, "```python"): // LFM2.5 has the same marker, not the fenced Python
		return &Format{Name: "minicpm", RendersTools: true, ThinkOpen: "<|thought_start|>", ThinkClose: "<|thought_end|>",
			starts: []string{minicpmCall}, parse: parseMiniCPM, grammar: minicpmGrammar}
	case has("<|tool_list_start|>") || has(minicpmCall+"[") || has("List of tools: ["): // LFM2, LFM2.5 8B-A1B, LFM2.5 Instruct
		return think(&Format{Name: "lfm2", RendersTools: true, starts: []string{minicpmCall}, parse: parseLFM2, grammar: lfm2Grammar})
	case has(minimaxCall):
		return think(&Format{Name: "minimax-m2", RendersTools: true, starts: []string{minimaxCall}, parse: parseMiniMax, grammar: minimaxGrammar})
	case has("<|tools_prefix|>"):
		return &Format{Name: "apertus", RendersTools: true, ThinkOpen: "<|inner_prefix|>", ThinkClose: "<|inner_suffix|>",
			starts: []string{"<|tools_prefix|>"}, parse: parseApertus, grammar: apertusGrammar}
	case has(solarCall, solarName):
		return &Format{Name: "solar-open", RendersTools: true, ThinkOpen: "<|think|>", ThinkClose: "<|end|>",
			starts: []string{solarCalls, solarCall}, strip: []string{"<|begin|>assistant", "<|content|>", "<|end|>"}, parse: parseSolar, grammar: solarGrammar}
	case has("<function=", "<parameter="): // Qwen3-Coder, Qwen3.5, Seed-OSS, Nemotron 3 Nano
		return think(&Format{Name: "qwen3-coder", RendersTools: true, starts: []string{xmlOpen}, parse: parseXMLCalls, grammar: xmlGrammar(xmlOpen)})
	case has("<tool_call>") && rendersTools:
		return think(&Format{Name: "hermes", RendersTools: true, starts: []string{"<tool_call>"}, parse: parseHermes, grammar: hermesGrammar})
	case has("[TOOL_CALLS]"):
		return think(&Format{Name: "mistral", RendersTools: true, starts: []string{"[TOOL_CALLS]"}, parse: parseMistral, grammar: listGrammar("[TOOL_CALLS]")})
	case has("<|python_tag|>") || has("<|start_header_id|>", "tools"):
		return &Format{Name: "llama3", RendersTools: true, starts: []string{"<|python_tag|>"}, leadingJSON: true, parse: parseLlama, grammar: llamaGrammar}
	case has("<|tool_call|>"):
		// Granite 3.3 with thinking writes <think>…</think><response>…</response>.
		return think(&Format{Name: "granite", RendersTools: true, starts: []string{"<|tool_call|>"}, strip: []string{"<response>", "</response>"}, parse: parseGranite,
			grammar: listGrammar("<|tool_call|>")})
	case has("<|START_ACTION|>"):
		return &Format{Name: "command-r", RendersTools: true, ThinkOpen: "<|START_THINKING|>", ThinkClose: "<|END_THINKING|>",
			starts: []string{"<|START_ACTION|>"}, strip: []string{"<|START_RESPONSE|>", "<|END_RESPONSE|>"}, parse: parseCommandR, grammar: commandRGrammar}
	case has("tool▁calls▁begin"):
		return think(&Format{Name: "deepseek-v3", RendersTools: true, starts: []string{"<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>"}, parse: parseDeepSeek,
			grammar: deepseekGrammar(has("```json"))})
	}
	return think(&Format{Name: "generic", starts: []string{"<tool_call>"}, parse: parseHermes, grammar: hermesGrammar})
}

// jsonValues reads consecutive JSON values from s (separated by
// whitespace, and by ";" or "," when sep allows), returning them and the
// text after the last one.
func jsonValues(s string, sep string) ([]json.RawMessage, string) {
	var vals []json.RawMessage
	for {
		t := strings.TrimLeft(s, " \n\t\r"+sep)
		if t == "" || (t[0] != '{' && t[0] != '[') {
			return vals, s
		}
		dec := json.NewDecoder(strings.NewReader(t))
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return vals, s
		}
		vals = append(vals, v)
		s = t[dec.InputOffset():]
	}
}

// callFrom reads {"name": ..., key: {...}} for the first of keys present.
func callFrom(raw json.RawMessage, nameKey string, keys ...string) (Call, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return Call{}, false
	}
	var name string
	if json.Unmarshal(m[nameKey], &name) != nil || name == "" {
		return Call{}, false
	}
	for _, k := range keys {
		a, ok := m[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(a, &s) == nil { // arguments written as a JSON string
			a = json.RawMessage(s)
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(a, &obj) != nil {
			return Call{}, false
		}
		return Call{Name: name, Arguments: compact(a)}, true
	}
	return Call{Name: name, Arguments: "{}"}, true
}

func compact(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// parseHermes: <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>, repeated.
func parseHermes(s string) ([]Call, string, bool) {
	var calls []Call
	for {
		t := strings.TrimLeft(s, " \n")
		if !strings.HasPrefix(t, "<tool_call>") {
			return calls, s, len(calls) > 0
		}
		t = t[len("<tool_call>"):]
		vals, rest := jsonValues(t, "")
		var c Call
		ok := len(vals) == 1
		if ok {
			c, ok = callFrom(vals[0], "name", "arguments", "parameters")
		}
		if !ok {
			// An unfinished or malformed call after complete ones (an
			// output cut by max_tokens) stays content.
			return calls, s, len(calls) > 0
		}
		rest = strings.TrimLeft(rest, " \n")
		switch {
		case strings.HasPrefix(rest, "</tool_call>"):
			rest = rest[len("</tool_call>"):]
		case strings.HasPrefix("</tool_call>", strings.TrimSpace(rest)):
			rest = "" // the end marker cut by max_tokens, or missing
		default:
			return calls, s, len(calls) > 0
		}
		calls = append(calls, c)
		s = rest
	}
}

var (
	xmlFunction  = regexp.MustCompile(`(?s)<function=([^>\n]+)>(.*?)(?:</function>|$)`)
	xmlParameter = regexp.MustCompile(`(?s)<parameter=([^>\n]+)>\n?(.*?)\n?(?:</parameter>|$)`)
)

// parseXMLCalls: Qwen3-Coder's and Seed-OSS's
// <tool_call>\n<function=NAME>\n<parameter=P>\nVALUE\n</parameter>\n</function>\n</tool_call>.
// A value that parses as JSON (a number, object, true...) is that value,
// else a string.
func parseXMLCalls(s string) ([]Call, string, bool) {
	end := "</tool_call>"
	if strings.HasPrefix(strings.TrimSpace(s), "<seed:tool_call>") {
		end = "</seed:tool_call>"
	}
	var calls []Call
	last := 0
	for _, m := range xmlFunction.FindAllStringSubmatchIndex(s, -1) {
		name := strings.TrimSpace(s[m[2]:m[3]])
		if name == "" {
			return nil, "", false
		}
		body := s[m[4]:m[5]]
		args := map[string]any{}
		var order []string
		for _, p := range xmlParameter.FindAllStringSubmatch(body, -1) {
			k, v := strings.TrimSpace(p[1]), p[2]
			var x any
			if json.Unmarshal([]byte(v), &x) == nil && strings.TrimSpace(v) != "" {
				args[k] = x
			} else {
				args[k] = v
			}
			order = append(order, k)
		}
		calls = append(calls, Call{Name: name, Arguments: orderedJSON(order, args)})
		last = m[1]
	}
	if len(calls) == 0 {
		return nil, "", false
	}
	rest := s[last:]
	for _, tag := range []string{end, end} {
		rest = strings.TrimLeft(rest, " \n")
		rest = strings.TrimPrefix(rest, tag)
	}
	// Text between calls is markers only; what follows the last is content.
	return calls, strings.ReplaceAll(rest, strings.Replace(end, "/", "", 1), ""), true
}

func orderedJSON(order []string, m map[string]any) string {
	var b strings.Builder
	b.WriteString("{")
	for i, k := range order {
		if i > 0 {
			b.WriteString(",")
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(m[k])
		b.Write(kb)
		b.WriteString(":")
		b.Write(vb)
	}
	b.WriteString("}")
	return b.String()
}

// parseLlama: Llama 3.x's {"name": ..., "parameters": {...}} (optionally
// after <|python_tag|>, several separated by ";").
func parseLlama(s string) ([]Call, string, bool) {
	s = strings.TrimPrefix(strings.TrimLeft(s, " \n"), "<|python_tag|>")
	vals, rest := jsonValues(s, ";")
	if len(vals) == 0 {
		return nil, "", false
	}
	var calls []Call
	for _, v := range vals {
		c, ok := callFrom(v, "name", "parameters", "arguments")
		if !ok {
			return nil, "", false
		}
		calls = append(calls, c)
	}
	return calls, rest, true
}

// parseMistral: [TOOL_CALLS][{"name": ..., "arguments": {...}, "id": ...}]
// (Mistral-Nemo, v3 tokenizers) or [TOOL_CALLS]NAME[ARGS]{...} (v11).
func parseMistral(s string) ([]Call, string, bool) {
	var calls []Call
	for {
		t := strings.TrimLeft(s, " \n")
		if !strings.HasPrefix(t, "[TOOL_CALLS]") {
			return calls, s, len(calls) > 0
		}
		t = strings.TrimLeft(t[len("[TOOL_CALLS]"):], " \n")
		if strings.HasPrefix(t, "[") {
			vals, rest := jsonValues(t, "")
			if len(vals) != 1 {
				return nil, "", false
			}
			cs, ok := callList(vals[0], "name", "arguments", "parameters")
			if !ok {
				return nil, "", false
			}
			calls, s = append(calls, cs...), rest
			continue
		}
		i := strings.Index(t, "[ARGS]")
		if i <= 0 {
			return nil, "", false
		}
		vals, rest := jsonValues(t[i+len("[ARGS]"):], "")
		if len(vals) != 1 {
			return nil, "", false
		}
		name := strings.TrimSpace(t[:i])
		var obj map[string]json.RawMessage
		if name == "" || json.Unmarshal(vals[0], &obj) != nil {
			return nil, "", false
		}
		calls = append(calls, Call{Name: name, Arguments: compact(vals[0])})
		s = rest
	}
}

func callList(raw json.RawMessage, nameKey string, keys ...string) ([]Call, bool) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		c, ok := callFrom(raw, nameKey, keys...)
		return []Call{c}, ok
	}
	var calls []Call
	for _, v := range list {
		c, ok := callFrom(v, nameKey, keys...)
		if !ok {
			return nil, false
		}
		calls = append(calls, c)
	}
	return calls, len(calls) > 0
}

// parseGranite: <|tool_call|>[{"name": ..., "arguments": {...}}].
func parseGranite(s string) ([]Call, string, bool) {
	t := strings.TrimPrefix(strings.TrimLeft(s, " \n"), "<|tool_call|>")
	vals, rest := jsonValues(t, "")
	if len(vals) != 1 {
		return nil, "", false
	}
	calls, ok := callList(vals[0], "name", "arguments", "parameters")
	return calls, rest, ok
}

// parseCommandR: <|START_ACTION|>[{"tool_call_id": "0", "tool_name": ...,
// "parameters": {...}}]<|END_ACTION|>.
func parseCommandR(s string) ([]Call, string, bool) {
	t := strings.TrimPrefix(strings.TrimLeft(s, " \n"), "<|START_ACTION|>")
	vals, rest := jsonValues(t, "")
	if len(vals) != 1 {
		return nil, "", false
	}
	calls, ok := callList(vals[0], "tool_name", "parameters", "arguments")
	rest = strings.TrimPrefix(strings.TrimLeft(rest, " \n"), "<|END_ACTION|>")
	return calls, rest, ok
}

var deepseekCall = regexp.MustCompile("(?s)<｜tool▁call▁begin｜>(?:(?:function)?<｜tool▁sep｜>([^\n]+)\n```(?:json)?\n(.*?)\n```|([^<]+?)<｜tool▁sep｜>(.*?))<｜tool▁call▁end｜>")

// parseDeepSeek: DeepSeek-V3's <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
// ```json ARGS ```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>, and V3.1's
// <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>.
func parseDeepSeek(s string) ([]Call, string, bool) {
	var calls []Call
	last := 0
	for _, m := range deepseekCall.FindAllStringSubmatch(s, -1) {
		name, args := m[1], m[2]
		if name == "" {
			name, args = m[3], m[4]
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(args), &obj) != nil || strings.TrimSpace(name) == "" {
			return nil, "", false
		}
		calls = append(calls, Call{Name: strings.TrimSpace(name), Arguments: compact([]byte(args))})
	}
	if locs := deepseekCall.FindAllStringIndex(s, -1); len(locs) > 0 {
		last = locs[len(locs)-1][1]
	}
	rest := strings.TrimPrefix(strings.TrimLeft(s[last:], " \n"), "<｜tool▁calls▁end｜>")
	return calls, rest, len(calls) > 0
}
