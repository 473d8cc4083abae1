package toolcall

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The grammars of the conventions: the Lark grammar (llguidance's) of one
// call, or with parallel one or more, to the given tools, written as the
// convention writes calls. The server enforces it for tool_choice
// "required" or a named function. Each convention's row in Detect holds
// its grammar beside its parser.

// Tool is a function a grammar may call: its name and its parameters'
// JSON Schema (empty: any object).
type Tool struct {
	Name       string
	Parameters json.RawMessage
}

// Marker writes a convention's marker in a grammar: the special token it
// is (<[id]>, which text cannot spell), or its text as a Lark string.
type Marker func(s string) string

// grammar builds a convention's grammar.
type grammar func(m Marker, tools []Tool, parallel bool) (string, error)

// Grammar is the grammar of one call (or, with parallel, one or more) to
// tools in f's convention; an error for a convention whose calls are not
// enforced.
func (f *Format) Grammar(m Marker, tools []Tool, parallel bool) (string, error) {
	if f.grammar == nil {
		return "", fmt.Errorf("tool_choice required or a named function is not enforced for the %s tool-call convention; use auto", f.Name)
	}
	return f.grammar(m, tools, parallel)
}

// guidance is llguidance's JSON layout: no free whitespace (a small model
// would write it forever), and the separators of Python's json.dumps.
const guidance = `"x-guidance": {"whitespace_flexible": false, "item_separator": ", ", "key_separator": ": "}`

// WithGuidance adds the x-guidance options to a JSON Schema object's text
// (keeping the schema's key order, which is the order properties come in).
func WithGuidance(schema []byte) string {
	s := strings.TrimSpace(string(schema))
	if strings.Contains(s, `"x-guidance"`) || !strings.HasPrefix(s, "{") {
		return s
	}
	rest := strings.TrimSpace(s[1:])
	if rest == "}" {
		return "{" + guidance + "}"
	}
	return "{" + guidance + ", " + rest
}

// LarkString quotes s as a Lark string literal.
func LarkString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// params is a tool's schema text, an object schema when it has none.
func (t Tool) params() string {
	p := strings.TrimSpace(string(t.Parameters))
	if p == "" || p == "null" {
		return `{"type": "object"}`
	}
	return p
}

// callSchema is the JSON Schema of one call object {nameKey: NAME, argsKey:
// PARAMETERS} (with extra leading properties, such as Command-R's
// tool_call_id).
func callSchema(t Tool, nameKey, argsKey string, lead ...string) string {
	var props, req []string
	for i := 0; i+1 < len(lead); i += 2 {
		props = append(props, LarkString(lead[i])+": "+lead[i+1])
		req = append(req, LarkString(lead[i]))
	}
	props = append(props, LarkString(nameKey)+`: {"const": `+LarkString(t.Name)+`}`, LarkString(argsKey)+": "+t.params())
	req = append(req, LarkString(nameKey), LarkString(argsKey))
	return `{"type": "object", "properties": {` + strings.Join(props, ", ") + `}, "required": [` + strings.Join(req, ", ") + `], "additionalProperties": false}`
}

// anyCall is a %json rule matching a call to any of tools.
func anyCall(tools []Tool, nameKey, argsKey string, lead ...string) string {
	var alts []string
	for _, t := range tools {
		alts = append(alts, callSchema(t, nameKey, argsKey, lead...))
	}
	return "%json {" + guidance + `, "anyOf": [` + strings.Join(alts, ", ") + "]}"
}

// list is one call, or with parallel one or more separated by sep.
func list(sep string, parallel bool) string {
	if parallel {
		return "call (" + LarkString(sep) + " call)*"
	}
	return "call"
}

// hermesGrammar: <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>, newline-separated.
func hermesGrammar(m Marker, tools []Tool, parallel bool) (string, error) {
	return "start: " + list("\n", parallel) + "\ncall: " + m("<tool_call>") + ` "\n" obj "\n" ` + m("</tool_call>") + "\nobj: " + anyCall(tools, "name", "arguments") + "\n", nil
}

// llamaGrammar: {"name": ..., "parameters": {...}}, "; "-separated.
func llamaGrammar(m Marker, tools []Tool, parallel bool) (string, error) {
	return "start: " + list("; ", parallel) + "\ncall: " + anyCall(tools, "name", "parameters") + "\n", nil
}

// listGrammar: MARKER[call, call] (Mistral's [TOOL_CALLS], Granite's <|tool_call|>).
func listGrammar(open string) grammar {
	return func(m Marker, tools []Tool, parallel bool) (string, error) {
		return "start: " + m(open) + ` "[" ` + list(", ", parallel) + ` "]"` + "\ncall: " + anyCall(tools, "name", "arguments") + "\n", nil
	}
}

// commandRGrammar: <|START_ACTION|>[{"tool_call_id": "0", "tool_name": ..., "parameters": {...}}]<|END_ACTION|>.
func commandRGrammar(m Marker, tools []Tool, parallel bool) (string, error) {
	return "start: " + m("<|START_ACTION|>") + ` "[" ` + list(", ", parallel) + ` "]" ` + m("<|END_ACTION|>") +
		"\ncall: " + anyCall(tools, "tool_name", "parameters", "tool_call_id", `{"type": "string", "pattern": "^[0-9]{1,3}$"}`) + "\n", nil
}

// harmonyGrammar: <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...} (one call).
func harmonyGrammar(m Marker, tools []Tool, parallel bool) (string, error) {
	var alts []string
	for i := range tools {
		alts = append(alts, "c"+strconv.Itoa(i))
	}
	var b strings.Builder
	b.WriteString("start: " + strings.Join(alts, " | ") + "\n")
	for i, t := range tools {
		fmt.Fprintf(&b, "c%d: %s %s %s \"json\" %s %%json %s\n", i, m("<|channel|>"), LarkString("commentary to=functions."+t.Name+" "),
			m("<|constrain|>"), m("<|message|>"), WithGuidance([]byte(t.params())))
	}
	return b.String(), nil
}

// xmlValue is the grammar of one parameter value in Qwen3-Coder's XML
// calls: a string as raw text (one of its enum values, or any text that
// does not close the parameter), anything else as JSON valid against the
// parameter's schema (the parser reads a value that parses as JSON as
// that value).
func xmlValue(rule string, schema json.RawMessage, end string) string {
	var s struct {
		Type any   `json:"type"`
		Enum []any `json:"enum"`
	}
	json.Unmarshal(schema, &s)
	var strs []string
	for _, e := range s.Enum {
		if v, ok := e.(string); ok && v != "" && !strings.Contains(v, "</parameter>") {
			strs = append(strs, LarkString(v))
		}
	}
	switch {
	case len(strs) > 0 && len(strs) == len(s.Enum):
		return rule + ": (" + strings.Join(strs, " | ") + ") " + LarkString(end) + "\n"
	case s.Type == "string" && len(s.Enum) == 0:
		// Any text up to the end of the parameter (a lazy lexeme that
		// stops at it), with a character that is not a space or part of a
		// number, so that it does not read back as one.
		return rule + "[stop=" + LarkString(end) + "]: /(?s:.*[^\\s0-9.+\\-].*)/\n"
	}
	return rule + ": %json " + WithGuidance(schema) + " " + LarkString(end) + "\n"
}

// schemaProps lists an object schema's properties in their order, and its
// required ones.
func schemaProps(schema json.RawMessage) (names []string, props map[string]json.RawMessage, required map[string]bool) {
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	json.Unmarshal(schema, &s)
	required = map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	props = map[string]json.RawMessage{}
	dec := json.NewDecoder(bytes.NewReader(s.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, props, required
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			break
		}
		name := tok.(string)
		names = append(names, name)
		props[name] = v
	}
	return names, props, required
}

// xmlGrammar is the grammar of Qwen3-Coder's (and Seed-OSS's) calls:
// <tool_call>\n<function=NAME>\n<parameter=P>\nVALUE\n</parameter>\n…</function>\n</tool_call>,
// parameters in the schema's order, the required ones always, the others
// optionally (Seed-OSS: <seed:tool_call>, values without the newlines).
func xmlGrammar(open string) grammar {
	return func(m Marker, tools []Tool, parallel bool) (string, error) {
		nl := "\n"
		if open == "<seed:tool_call>" {
			nl = ""
		}
		closing := strings.Replace(open, "<", "</", 1)
		var b strings.Builder
		b.WriteString("start: call")
		if parallel {
			b.WriteString(` ("\n" call)*`)
		}
		fmt.Fprintf(&b, "\ncall: %s \"\\n\" fn \"\\n\" %s\nfn: ", m(open), m(closing))
		for i := range tools {
			if i > 0 {
				b.WriteString(" | ")
			}
			fmt.Fprintf(&b, "f%d", i)
		}
		b.WriteString("\n")
		for i, t := range tools {
			names, props, required := schemaProps(t.Parameters)
			fmt.Fprintf(&b, "f%d: %s", i, LarkString("<function="+t.Name+">\n"))
			for j, name := range names {
				if strings.ContainsAny(name, "<>\n") {
					return "", fmt.Errorf("tool %s: parameter name %q cannot be written in the XML call convention", t.Name, name)
				}
				fmt.Fprintf(&b, " f%dp%d", i, j)
				if !required[name] {
					b.WriteString("?")
				}
			}
			b.WriteString(` "</function>"` + "\n")
			for j, name := range names {
				fmt.Fprintf(&b, "f%dp%d: %s f%dv%d %s\n", i, j, LarkString("<parameter="+name+">"+nl), i, j, LarkString("\n"))
				b.WriteString(xmlValue(fmt.Sprintf("f%dv%d", i, j), props[name], nl+"</parameter>"))
			}
		}
		return b.String(), nil
	}
}

// deepseekGrammar is the grammar of DeepSeek-V3's calls (v3: the template
// writes them so),
// <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\nARGS\n```<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>
// (calls separated by newlines), or V3.1's
// <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>ARGS<｜tool▁call▁end｜>.
func deepseekGrammar(v3 bool) grammar {
	return func(m Marker, tools []Tool, parallel bool) (string, error) {
		sep := ""
		if v3 {
			sep = `"\n" `
		}
		var b strings.Builder
		fmt.Fprintf(&b, "start: %s call", m("<｜tool▁calls▁begin｜>"))
		if parallel {
			fmt.Fprintf(&b, " (%scall)*", sep)
		}
		fmt.Fprintf(&b, " %s\ncall: ", m("<｜tool▁calls▁end｜>"))
		for i := range tools {
			if i > 0 {
				b.WriteString(" | ")
			}
			fmt.Fprintf(&b, "c%d", i)
		}
		b.WriteString("\n")
		begin, tsep, end := m("<｜tool▁call▁begin｜>"), m("<｜tool▁sep｜>"), m("<｜tool▁call▁end｜>")
		for i, t := range tools {
			if v3 {
				fmt.Fprintf(&b, "c%d: %s \"function\" %s %s %%json %s %s %s\n", i, begin, tsep, LarkString(t.Name+"\n```json\n"), WithGuidance([]byte(t.params())), LarkString("\n```"), end)
			} else {
				fmt.Fprintf(&b, "c%d: %s %s %s %%json %s %s\n", i, begin, LarkString(t.Name), tsep, WithGuidance([]byte(t.params())), end)
			}
		}
		return b.String(), nil
	}
}
