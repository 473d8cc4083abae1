package toolcall

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Kimi K2 (moonshotai) writes its calls in a section,
//
//	<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|>…<|tool_calls_section_end|>
//
// each call's id functions.NAME:INDEX, its arguments a JSON object.

const (
	kimiSection    = "<|tool_calls_section_begin|>"
	kimiSectionEnd = "<|tool_calls_section_end|>"
	kimiCall       = "<|tool_call_begin|>"
	kimiArgs       = "<|tool_call_argument_begin|>"
	kimiCallEnd    = "<|tool_call_end|>"
)

// parseKimi reads Kimi K2's calls (the section markers may be missing, as
// llama.cpp also accepts); text after the section is content.
func parseKimi(s string) ([]Call, string, bool) {
	t := strings.TrimLeft(s, " \n")
	t = strings.TrimPrefix(t, kimiSection)
	var calls []Call
	for {
		t = strings.TrimLeft(t, " \n")
		if !strings.HasPrefix(t, kimiCall) {
			break
		}
		id, rest, ok := strings.Cut(t[len(kimiCall):], kimiArgs)
		name := kimiName(id)
		if !ok || name == "" {
			break
		}
		args, after, isObj, ended := objectThenEnd(rest, kimiCallEnd)
		if !isObj {
			break
		}
		if !ended {
			return calls, t, len(calls) > 0
		}
		calls = append(calls, Call{Name: name, Arguments: compact(args)})
		t = after
	}
	if len(calls) == 0 {
		return nil, s, false
	}
	t = strings.TrimLeft(t, " \n")
	return calls, strings.TrimPrefix(t, kimiSectionEnd), true
}

// kimiName is the function name of a call id functions.NAME:INDEX (the
// "functions." prefix and the index may be missing).
func kimiName(id string) string {
	id = strings.TrimPrefix(strings.TrimSpace(id), "functions.")
	if i := strings.LastIndexByte(id, ':'); i >= 0 {
		id = id[:i]
	}
	if strings.ContainsAny(id, " \n<>{}") {
		return ""
	}
	return id
}

// kimiGrammar is the grammar of Kimi K2's calls: one section, one call
// (with parallel one or more), each functions.NAME:INDEX with its JSON
// arguments.
func kimiGrammar(m Marker, tools []Tool, parallel bool) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "start: %s call", m(kimiSection))
	if parallel {
		b.WriteString(" call*")
	}
	fmt.Fprintf(&b, " %s\ncall: ", m(kimiSectionEnd))
	for i := range tools {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "c%d", i)
	}
	b.WriteString("\n")
	for i, t := range tools {
		if kimiName("functions."+t.Name+":0") != t.Name {
			return "", fmt.Errorf("tool name %q cannot be written in Kimi K2's call convention", t.Name)
		}
		fmt.Fprintf(&b, "c%d: %s %s /[0-9]{1,3}/ %s %%json %s %s\n", i, m(kimiCall), LarkString("functions."+t.Name+":"), m(kimiArgs),
			WithGuidance([]byte(t.params())), m(kimiCallEnd))
	}
	return b.String(), nil
}

// objectThenEnd reads a call's JSON object arguments at the start of rest
// and then its end marker (a prefix of the marker ending the text counts:
// the marker cut by max_tokens). It returns the object and the text after
// the marker; isObj is false when rest does not start with one JSON
// object, ended false when something other than the marker follows it.
// Kimi K2's and Solar Open's calls end this way.
func objectThenEnd(rest, end string) (args json.RawMessage, after string, isObj, ended bool) {
	vals, after := jsonValues(rest, "")
	var obj map[string]json.RawMessage
	if len(vals) != 1 || json.Unmarshal(vals[0], &obj) != nil {
		return nil, rest, false, false
	}
	after = strings.TrimLeft(after, " \n")
	switch {
	case strings.HasPrefix(after, end):
		return vals[0], after[len(end):], true, true
	case strings.HasPrefix(end, strings.TrimSpace(after)):
		return vals[0], "", true, true
	}
	return vals[0], after, true, false
}
