package toolcall

import (
	"fmt"
	"strings"
)

// MiniMax-M2 writes its calls as XML in a block,
//
//	<minimax:tool_call>\n<invoke name="NAME">\n<parameter name="K">V</parameter>\n</invoke>\n</minimax:tool_call>
//
// several invokes in one block; a value is written as it is when it is a
// string and as JSON otherwise (as GLM's).

const (
	minimaxCall    = "<minimax:tool_call>"
	minimaxCallEnd = "</minimax:tool_call>"
)

// parseMiniMax reads MiniMax-M2's call blocks; text after the last is
// content.
func parseMiniMax(s string) ([]Call, string, bool) {
	var calls []Call
	for {
		t := strings.TrimLeft(s, " \n")
		if !strings.HasPrefix(t, minimaxCall) {
			return calls, s, len(calls) > 0
		}
		block, rest, ok := strings.Cut(t[len(minimaxCall):], minimaxCallEnd)
		if !ok {
			return calls, s, len(calls) > 0
		}
		var cs []Call
		for block = strings.TrimLeft(block, " \n"); block != ""; block = strings.TrimLeft(block, " \n") {
			c, after, ok := minimaxInvoke(block)
			if !ok {
				return calls, s, len(calls) > 0
			}
			cs, block = append(cs, c), after
		}
		if len(cs) == 0 {
			return calls, s, len(calls) > 0
		}
		calls, s = append(calls, cs...), rest
	}
}

// minimaxInvoke reads <invoke name="NAME"><parameter name="K">V</parameter>…</invoke>.
func minimaxInvoke(s string) (Call, string, bool) {
	name, rest, ok := between(s, `<invoke name="`, `">`)
	if !ok || name == "" || strings.ContainsAny(name, "\"<>\n") {
		return Call{}, "", false
	}
	args := map[string]any{}
	var order []string
	for {
		rest = strings.TrimLeft(rest, " \n")
		if strings.HasPrefix(rest, "</invoke>") {
			return Call{Name: name, Arguments: orderedJSON(order, args)}, rest[len("</invoke>"):], true
		}
		k, after, ok := between(rest, `<parameter name="`, `">`)
		if !ok || strings.ContainsAny(k, "\"<>\n") {
			return Call{}, "", false
		}
		v, after, ok := strings.Cut(after, "</parameter>")
		if !ok {
			return Call{}, "", false
		}
		if _, dup := args[k]; !dup {
			order = append(order, k)
		}
		args[k] = xmlArg(v)
		rest = after
	}
}

// minimaxGrammar is the grammar of MiniMax-M2's call block: one invoke
// (with parallel one or more), parameters in the schema's order, the
// required ones always and the others optionally, each value as GLM's.
func minimaxGrammar(m Marker, tools []Tool, parallel bool) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, `start: %s "\n" call`, m(minimaxCall))
	if parallel {
		b.WriteString(" call*")
	}
	fmt.Fprintf(&b, " %s\ncall: ", m(minimaxCallEnd))
	for i := range tools {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "f%d", i)
	}
	b.WriteString("\n")
	for i, t := range tools {
		if strings.ContainsAny(t.Name, "\"<>\n") {
			return "", fmt.Errorf("tool name %q cannot be written in MiniMax-M2's call convention", t.Name)
		}
		names, props, required := schemaProps(t.Parameters)
		fmt.Fprintf(&b, "f%d: %s", i, LarkString(`<invoke name="`+t.Name+"\">\n"))
		for j, name := range names {
			if strings.ContainsAny(name, "\"<>\n") {
				return "", fmt.Errorf("tool %s: parameter name %q cannot be written in MiniMax-M2's call convention", t.Name, name)
			}
			fmt.Fprintf(&b, " f%dp%d", i, j)
			if !required[name] {
				b.WriteString("?")
			}
		}
		b.WriteString(` "</invoke>\n"` + "\n")
		for j, name := range names {
			fmt.Fprintf(&b, "f%dp%d: %s f%dv%d \"\\n\"\n", i, j, LarkString(`<parameter name="`+name+`">`), i, j)
			b.WriteString(tagValue(fmt.Sprintf("f%dv%d", i, j), props[name], LarkString("</parameter>")))
		}
	}
	return b.String(), nil
}
