package toolcall

import (
	"fmt"
	"strings"
)

// Solar Open (upstage) writes its calls as
//
//	<|tool_calls|><|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{…}<|tool_call:end|>…<|calls|>
//
// and its turns as <|begin|>assistant<|think|>…<|end|> (the reasoning)
// then <|begin|>assistant<|content|>…<|end|> (the answer).

const (
	solarCalls    = "<|tool_calls|>"
	solarCallsEnd = "<|calls|>"
	solarCall     = "<|tool_call:begin|>"
	solarName     = "<|tool_call:name|>"
	solarArgs     = "<|tool_call:args|>"
	solarCallEnd  = "<|tool_call:end|>"
)

// parseSolar reads Solar Open's calls (the <|tool_calls|> and <|calls|>
// markers may be missing); text after them is content.
func parseSolar(s string) ([]Call, string, bool) {
	t := strings.TrimPrefix(strings.TrimLeft(s, " \n"), solarCalls)
	var calls []Call
	for {
		t = strings.TrimLeft(t, " \n")
		if !strings.HasPrefix(t, solarCall) {
			break
		}
		_, rest, ok := strings.Cut(t[len(solarCall):], solarName)
		if !ok {
			break
		}
		name, rest, ok := strings.Cut(rest, solarArgs)
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, "<>\n") {
			break
		}
		args, after, isObj, ended := objectThenEnd(rest, solarCallEnd)
		if !isObj {
			break
		}
		if !ended {
			return calls, t, len(calls) > 0
		}
		calls, t = append(calls, Call{Name: name, Arguments: compact(args)}), after
	}
	if len(calls) == 0 {
		return nil, s, false
	}
	return calls, strings.TrimPrefix(strings.TrimLeft(t, " \n"), solarCallsEnd), true
}

// solarGrammar is the grammar of Solar Open's calls: one (with parallel
// one or more), each with an id (letters, digits, _ and -), its name and its
// JSON arguments.
func solarGrammar(m Marker, tools []Tool, parallel bool) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "start: %s call", m(solarCalls))
	if parallel {
		b.WriteString(" call*")
	}
	fmt.Fprintf(&b, " %s\ncall: ", m(solarCallsEnd))
	for i := range tools {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "c%d", i)
	}
	b.WriteString("\n")
	for i, t := range tools {
		if strings.ContainsAny(t.Name, "<>\n") || strings.TrimSpace(t.Name) != t.Name || t.Name == "" {
			return "", fmt.Errorf("tool name %q cannot be written in Solar Open's call convention", t.Name)
		}
		fmt.Fprintf(&b, "c%d: %s /[A-Za-z0-9_\\-]{1,40}/ %s %s %s %%json %s %s\n", i, m(solarCall), m(solarName), LarkString(t.Name), m(solarArgs),
			WithGuidance([]byte(t.params())), m(solarCallEnd))
	}
	return b.String(), nil
}
