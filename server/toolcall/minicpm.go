package toolcall

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MiniCPM3 and MiniCPM4 (openbmb) write their calls as Python,
//
//	<|tool_call_start|>\n```python\nNAME(key=VALUE,…)\nNAME2(…)\n```\n<|tool_call_end|>
//
// keyword arguments whose values are Python literals (the template writes
// them as JSON: true, null and "…" read too), after reasoning in
// <|thought_start|>…<|thought_end|>.

const (
	minicpmCall    = "<|tool_call_start|>"
	minicpmCallEnd = "<|tool_call_end|>"
)

// parseMiniCPM reads MiniCPM's call block; text after it is content.
func parseMiniCPM(s string) ([]Call, string, bool) {
	t := strings.TrimLeft(s, " \n")
	if !strings.HasPrefix(t, minicpmCall) {
		return nil, s, false
	}
	t = strings.TrimLeft(t[len(minicpmCall):], " \n")
	fenced := strings.HasPrefix(t, "```")
	if fenced {
		t = strings.TrimPrefix(t[3:], "python")
	}
	var calls []Call
	for {
		t = strings.TrimLeft(t, " \n\t\r")
		if t == "" || strings.HasPrefix(t, "```") || strings.HasPrefix(t, minicpmCallEnd) {
			break
		}
		r := &pyReader{s: t}
		c, ok := r.call()
		if !ok {
			return nil, s, false
		}
		calls = append(calls, c)
		t = r.s
	}
	if fenced {
		if !strings.HasPrefix(t, "```") && t != "" {
			return nil, s, false
		}
		t = strings.TrimLeft(strings.TrimPrefix(t, "```"), " \n")
	}
	if len(calls) == 0 {
		return nil, s, false
	}
	switch {
	case strings.HasPrefix(t, minicpmCallEnd):
		t = t[len(minicpmCallEnd):]
	case strings.HasPrefix(minicpmCallEnd, strings.TrimSpace(t)):
		t = "" // the end marker cut by max_tokens
	default:
		return nil, s, false
	}
	return calls, t, true
}

// pyReader reads Python calls and literals from the start of s.
type pyReader struct{ s string }

func (r *pyReader) skip() { r.s = strings.TrimLeft(r.s, " \t") }

func (r *pyReader) eat(p string) bool {
	r.skip()
	if strings.HasPrefix(r.s, p) {
		r.s = r.s[len(p):]
		return true
	}
	return false
}

// ident reads a name (letters, digits, _ and dots, not starting with a
// digit).
func (r *pyReader) ident() string {
	r.skip()
	i := 0
	for i < len(r.s) {
		c := r.s[i]
		if c == '_' || c == '.' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			i++
			continue
		}
		break
	}
	id := r.s[:i]
	r.s = r.s[i:]
	return id
}

// call reads NAME(key=VALUE, …); positional arguments are not read (their
// names are the schema's, which the parser does not see).
func (r *pyReader) call() (Call, bool) {
	name := r.ident()
	if name == "" || !r.eat("(") {
		return Call{}, false
	}
	args := map[string]any{}
	var order []string
	for {
		if r.eat(")") {
			return Call{Name: name, Arguments: orderedJSON(order, args)}, true
		}
		if len(order) > 0 && !r.eat(",") {
			return Call{}, false
		}
		r.skipSpace()
		if r.eat(")") { // a trailing comma
			return Call{Name: name, Arguments: orderedJSON(order, args)}, true
		}
		k := r.ident()
		if k == "" || !r.eat("=") {
			return Call{}, false
		}
		v, ok := r.value()
		if !ok {
			return Call{}, false
		}
		if _, dup := args[k]; !dup {
			order = append(order, k)
		}
		args[k] = v
		r.skipSpace()
	}
}

func (r *pyReader) skipSpace() { r.s = strings.TrimLeft(r.s, " \t\n\r") }

// value reads a literal: a string ('…' or "…"), a number, True, False,
// None (or JSON's true, false, null), a list or tuple, a dict.
func (r *pyReader) value() (any, bool) {
	r.skipSpace()
	if r.s == "" {
		return nil, false
	}
	switch c := r.s[0]; c {
	case '"', '\'':
		return r.str(c)
	case '[', '(':
		close := byte(']')
		if c == '(' {
			close = ')'
		}
		r.s = r.s[1:]
		list := []any{}
		for {
			r.skipSpace()
			if strings.HasPrefix(r.s, string(close)) {
				r.s = r.s[1:]
				return list, true
			}
			if len(list) > 0 {
				if !strings.HasPrefix(r.s, ",") {
					return nil, false
				}
				r.s = r.s[1:]
				r.skipSpace()
				if strings.HasPrefix(r.s, string(close)) {
					r.s = r.s[1:]
					return list, true
				}
			}
			v, ok := r.value()
			if !ok {
				return nil, false
			}
			list = append(list, v)
		}
	case '{':
		r.s = r.s[1:]
		obj := map[string]any{}
		var order []string
		for {
			r.skipSpace()
			if strings.HasPrefix(r.s, "}") {
				r.s = r.s[1:]
				return orderedMap{order, obj}, true
			}
			if len(order) > 0 {
				if !strings.HasPrefix(r.s, ",") {
					return nil, false
				}
				r.s = r.s[1:]
				r.skipSpace()
				if strings.HasPrefix(r.s, "}") {
					r.s = r.s[1:]
					return orderedMap{order, obj}, true
				}
			}
			k, ok := r.value()
			ks, isStr := k.(string)
			if !ok || !isStr {
				return nil, false
			}
			r.skipSpace()
			if !strings.HasPrefix(r.s, ":") {
				return nil, false
			}
			r.s = r.s[1:]
			v, ok := r.value()
			if !ok {
				return nil, false
			}
			if _, dup := obj[ks]; !dup {
				order = append(order, ks)
			}
			obj[ks] = v
		}
	}
	n := strings.IndexAny(r.s, ",)]}: \n\t\r")
	if n < 0 {
		n = len(r.s)
	}
	word := r.s[:n]
	r.s = r.s[n:]
	switch word {
	case "True", "true":
		return true, true
	case "False", "false":
		return false, true
	case "None", "null":
		return nil, true
	}
	var num json.Number
	if json.Unmarshal([]byte(word), &num) == nil {
		return num, true
	}
	if f, err := strconv.ParseFloat(word, 64); err == nil && !strings.ContainsAny(word, "xXnN_") {
		return f, true // Python spellings JSON lacks: 1., .5, +1
	}
	return nil, false
}

// str reads a quoted string with Python's escapes.
func (r *pyReader) str(q byte) (any, bool) {
	var b strings.Builder
	s := r.s[1:]
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == q:
			r.s = s[i+1:]
			return b.String(), true
		case c == '\\' && i+1 < len(s):
			e := s[i+1]
			i += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'u', 'x':
				w := 4
				if e == 'x' {
					w = 2
				}
				if i+w > len(s) {
					return nil, false
				}
				v, err := strconv.ParseUint(s[i:i+w], 16, 32)
				if err != nil {
					return nil, false
				}
				b.WriteRune(rune(v))
				i += w
			case '\n':
			default: // \\ \' \" and an unknown escape kept as its character
				b.WriteByte(e)
			}
		case c == '\n':
			return nil, false
		default:
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+n])
			i += n
		}
	}
	return nil, false
}

// orderedMap is a dict literal, written as JSON in its keys' order.
type orderedMap struct {
	keys []string
	m    map[string]any
}

// MarshalJSON writes the dict with its keys in order.
func (o orderedMap) MarshalJSON() ([]byte, error) { return []byte(orderedJSON(o.keys, o.m)), nil }

// minicpmGrammar is the grammar of MiniCPM's call block: one call (with
// parallel one or more, a line each), keyword arguments in the schema's
// order, the required ones always and the others optionally, each value
// JSON valid against its schema (as the template writes them).
func minicpmGrammar(m Marker, tools []Tool, parallel bool) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "start: %s %s call", m(minicpmCall), LarkString("\n```python\n"))
	if parallel {
		b.WriteString(` ("\n" call)*`)
	}
	fmt.Fprintf(&b, " %s %s\ncall: ", LarkString("\n```\n"), m(minicpmCallEnd))
	if err := pyCallRules(&b, tools, "MiniCPM", `","`, func(v json.RawMessage) string { return "%json " + WithGuidance(v) }); err != nil {
		return "", err
	}
	return b.String(), nil
}

// optionalSeq is the grammar of items[j:] in order, separated by sep (a
// Lark string), the required ones always and the others optionally, when
// nothing comes before them; empty reports that it may match nothing.
func optionalSeq(items, names []string, required map[string]bool, j int, sep string) (expr string, empty bool) {
	if j == len(items) {
		return "", true
	}
	with := strings.TrimSpace(items[j] + " " + sepTail(items, names, required, j+1, sep))
	if required[names[j]] {
		return with, false
	}
	rest, restEmpty := optionalSeq(items, names, required, j+1, sep)
	switch {
	case rest == "":
		return "(" + with + ")?", true
	case restEmpty:
		return "(" + with + " | " + rest + ")?", true
	}
	return "(" + with + " | " + rest + ")", false
}

// sepTail is items[j:] each after sep, the optional ones optional.
func sepTail(items, names []string, required map[string]bool, j int, sep string) string {
	var parts []string
	for ; j < len(items); j++ {
		if required[names[j]] {
			parts = append(parts, sep+" "+items[j])
		} else {
			parts = append(parts, "("+sep+" "+items[j]+")?")
		}
	}
	return strings.Join(parts, " ")
}

// pyCallRules writes the rules of a Python-call convention (LFM2's list,
// MiniCPM's block) after a "call: " prefix: the alternatives f0 | f1 | ...,
// then per tool `fI: "NAME(" ARGS ")"`, keyword arguments in the schema's
// order joined by sep (the required ones always, the others optionally),
// each `fIpJ: "KEY=" VALUE` with value(schema) its rule. Errors: a tool or
// parameter name that is not a Python identifier (convention names the
// convention).
func pyCallRules(b *strings.Builder, tools []Tool, convention, sep string, value func(schema json.RawMessage) string) error {
	for i := range tools {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(b, "f%d", i)
	}
	b.WriteString("\n")
	for i, t := range tools {
		if r := (&pyReader{s: t.Name}); r.ident() != t.Name {
			return fmt.Errorf("tool name %q cannot be written in %s's call convention", t.Name, convention)
		}
		names, props, required := schemaProps(t.Parameters)
		var items []string
		for j, name := range names {
			if r := (&pyReader{s: name}); r.ident() != name || strings.ContainsAny(name, ".-") {
				return fmt.Errorf("tool %s: parameter name %q cannot be written in %s's call convention", t.Name, name, convention)
			}
			items = append(items, fmt.Sprintf("f%dp%d", i, j))
		}
		args, _ := optionalSeq(items, names, required, 0, sep)
		fmt.Fprintf(b, "f%d: %s %s \")\"\n", i, LarkString(t.Name+"("), args)
		for j, name := range names {
			fmt.Fprintf(b, "f%dp%d: %s %s\n", i, j, LarkString(name+"="), value(props[name]))
		}
	}
	return nil
}
