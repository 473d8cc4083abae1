package toolcall

import (
	"encoding/json"
	"fmt"
	"strings"
)

// GLM-4.5, 4.6 and 4.7 (zai-org) write a call as
//
//	<tool_call>NAME\n<arg_key>K</arg_key>\n<arg_value>V</arg_value>\n…</tool_call>
//
// (4.7 without the newlines), calls one after another. A value is written
// as it is when it is a string and as JSON otherwise, so a value that
// parses as JSON reads back as that value, any other as a string (as
// Qwen3-Coder's XML values).

// parseGLM reads GLM's calls; text after the last one is content. A call
// that does not parse (unfinished, or not in the form) ends the calls: it
// and what follows stay content.
func parseGLM(s string) ([]Call, string, bool) {
	var calls []Call
	for {
		t := strings.TrimLeft(s, " \n")
		if !strings.HasPrefix(t, "<tool_call>") {
			return calls, s, len(calls) > 0
		}
		end := strings.Index(t, "</tool_call>")
		if end < 0 {
			return calls, s, len(calls) > 0
		}
		c, ok := glmCall(t[len("<tool_call>"):end])
		if !ok {
			return calls, s, len(calls) > 0
		}
		calls = append(calls, c)
		s = t[end+len("</tool_call>"):]
	}
}

// glmCall reads NAME<arg_key>K</arg_key><arg_value>V</arg_value>… (with
// whitespace between the tags).
func glmCall(body string) (Call, bool) {
	name, rest, _ := strings.Cut(body, "<arg_key>")
	name = strings.TrimSpace(name)
	if name == "" || strings.ContainsAny(name, " \n<>{}") {
		return Call{}, false
	}
	args := map[string]any{}
	var order []string
	if strings.Contains(body, "<arg_key>") {
		rest = "<arg_key>" + rest
	}
	for {
		rest = strings.TrimLeft(rest, " \n")
		if rest == "" {
			break
		}
		k, after, ok := between(rest, "<arg_key>", "</arg_key>")
		if !ok {
			return Call{}, false
		}
		v, after, ok := between(strings.TrimLeft(after, " \n"), "<arg_value>", "</arg_value>")
		if !ok {
			return Call{}, false
		}
		k = strings.TrimSpace(k)
		if _, dup := args[k]; !dup {
			order = append(order, k)
		}
		args[k] = xmlArg(v)
		rest = after
	}
	return Call{Name: name, Arguments: orderedJSON(order, args)}, true
}

// between reads OPEN text CLOSE at the start of s: the text and what
// follows CLOSE.
func between(s, open, close string) (string, string, bool) {
	if !strings.HasPrefix(s, open) {
		return "", "", false
	}
	v, after, ok := strings.Cut(s[len(open):], close)
	return v, after, ok
}

// xmlArg is a value written in a tag: the JSON value it spells (its
// objects' keys in their order), else the text as a string.
func xmlArg(v string) any {
	if strings.TrimSpace(v) != "" && json.Valid([]byte(v)) {
		return json.RawMessage(compact([]byte(v)))
	}
	return v
}

// glmGrammar is the grammar of GLM's calls, parameters in the schema's
// order, the required ones always and the others optionally; nl says the
// tags are separated by newlines (GLM-4.5 and 4.6).
func glmGrammar(nl bool) grammar {
	return func(m Marker, tools []Tool, parallel bool) (string, error) {
		sep := ""
		if nl {
			sep = `"\n" `
		}
		var b strings.Builder
		b.WriteString("start: call")
		if parallel {
			fmt.Fprintf(&b, " (%scall)*", sep)
		}
		b.WriteString("\ncall: ")
		for i := range tools {
			if i > 0 {
				b.WriteString(" | ")
			}
			fmt.Fprintf(&b, "f%d", i)
		}
		b.WriteString("\n")
		key, keyEnd, val := m("<arg_key>"), m("</arg_key>"), m("<arg_value>")
		for i, t := range tools {
			if strings.ContainsAny(t.Name, " \n<>{}") {
				return "", fmt.Errorf("tool name %q cannot be written in GLM's call convention", t.Name)
			}
			names, props, required := schemaProps(t.Parameters)
			fmt.Fprintf(&b, "f%d: %s %s", i, m("<tool_call>"), LarkString(t.Name))
			for j, name := range names {
				if strings.Contains(name, "<") {
					return "", fmt.Errorf("tool %s: parameter name %q cannot be written in GLM's call convention", t.Name, name)
				}
				fmt.Fprintf(&b, " f%dp%d", i, j)
				if !required[name] {
					b.WriteString("?")
				}
			}
			fmt.Fprintf(&b, " %s%s\n", sep, m("</tool_call>"))
			for j, name := range names {
				fmt.Fprintf(&b, "f%dp%d: %s%s %s %s %s%s f%dv%d\n", i, j, sep, key, LarkString(name), keyEnd, sep, val, i, j)
				b.WriteString(tagValue(fmt.Sprintf("f%dv%d", i, j), props[name], m("</arg_value>")))
			}
		}
		return b.String(), nil
	}
}

// tagValue is the grammar of one value written between tags, closed by
// end (a grammar item): a string as raw text (one of its enum values, or
// text with a character that is not a space or part of a number, so that
// it does not read back as one), anything else as JSON valid against the
// schema.
func tagValue(rule string, schema json.RawMessage, end string) string {
	var s struct {
		Type any   `json:"type"`
		Enum []any `json:"enum"`
	}
	json.Unmarshal(schema, &s)
	var strs []string
	for _, e := range s.Enum {
		if v, ok := e.(string); ok && v != "" && !strings.Contains(v, "<") {
			var x any
			if json.Unmarshal([]byte(v), &x) != nil {
				strs = append(strs, LarkString(v))
			}
		}
	}
	switch {
	case len(strs) > 0 && len(strs) == len(s.Enum):
		return rule + ": (" + strings.Join(strs, " | ") + ") " + end + "\n"
	case s.Type == "string" && len(s.Enum) == 0:
		return rule + ": " + rule + "t " + end + "\n" + rule + "t: /[^<]*[^\\s0-9.+\\-<\\[{\"][^<]*/\n"
	}
	return rule + ": %json " + WithGuidance(schema) + " " + end + "\n"
}
