package toolcall

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Gemma 4 writes a call as
//
//	<|tool_call>call:NAME{key:VALUE,…}<tool_call|>
//
// calls one after another, in its own value syntax: a string between
// <|"|> quotes (its text as it is, no escapes), an object {key:VALUE,…}
// with bare keys, a list [VALUE,…], and JSON's numbers, true, false and
// null. Its reasoning is a channel, <|channel>thought\n…<channel|>; the
// template ends a call turn with <|tool_response>, which the model may
// write after its calls.

const (
	gemmaCall    = "<|tool_call>"
	gemmaCallEnd = "<tool_call|>"
	gemmaQuote   = `<|"|>`
)

// parseGemma4 reads Gemma 4's calls; text after the last is content.
func parseGemma4(s string) ([]Call, string, bool) {
	var calls []Call
	for {
		t := strings.TrimLeft(s, " \n")
		if !strings.HasPrefix(t, gemmaCall+"call:") {
			break
		}
		t = t[len(gemmaCall+"call:"):]
		i := strings.IndexByte(t, '{')
		name := ""
		if i > 0 {
			name = strings.TrimSpace(t[:i])
		}
		if name == "" || strings.ContainsAny(name, " \n<>{}") {
			break
		}
		r := &gemmaReader{s: t[i:]}
		var args strings.Builder
		if !r.object(&args) {
			break
		}
		rest := strings.TrimLeft(r.s, " \n")
		switch {
		case strings.HasPrefix(rest, gemmaCallEnd):
			rest = rest[len(gemmaCallEnd):]
		case strings.HasPrefix(gemmaCallEnd, strings.TrimSpace(rest)):
			rest = "" // the end marker cut by max_tokens
		default:
			return calls, s, len(calls) > 0
		}
		calls = append(calls, Call{Name: name, Arguments: args.String()})
		s = rest
	}
	if len(calls) > 0 {
		s = strings.TrimPrefix(strings.TrimLeft(s, " \n"), "<|tool_response>")
	}
	return calls, s, len(calls) > 0
}

// gemmaReader reads Gemma 4's values from the start of s, writing them as
// JSON; each method reports whether a whole value was read.
type gemmaReader struct{ s string }

func (r *gemmaReader) skip() { r.s = strings.TrimLeft(r.s, " \n\t\r") }

func (r *gemmaReader) eat(p string) bool {
	r.skip()
	if strings.HasPrefix(r.s, p) {
		r.s = r.s[len(p):]
		return true
	}
	return false
}

func (r *gemmaReader) value(b *strings.Builder) bool {
	r.skip()
	switch {
	case strings.HasPrefix(r.s, gemmaQuote):
		v, rest, ok := strings.Cut(r.s[len(gemmaQuote):], gemmaQuote)
		if !ok {
			return false
		}
		q, _ := json.Marshal(v)
		b.Write(q)
		r.s = rest
		return true
	case strings.HasPrefix(r.s, "{"):
		return r.object(b)
	case strings.HasPrefix(r.s, "["):
		r.s = r.s[1:]
		b.WriteByte('[')
		if r.eat("]") {
			b.WriteByte(']')
			return true
		}
		for {
			if !r.value(b) {
				return false
			}
			if r.eat("]") {
				b.WriteByte(']')
				return true
			}
			if !r.eat(",") {
				return false
			}
			b.WriteByte(',')
		}
	}
	// A number, true, false or null: JSON's own spelling.
	n := strings.IndexAny(r.s, ",}] \n\t\r<")
	if n <= 0 {
		return false
	}
	var x any
	if json.Unmarshal([]byte(r.s[:n]), &x) != nil {
		return false
	}
	if _, isStr := x.(string); isStr {
		return false
	}
	b.WriteString(r.s[:n])
	r.s = r.s[n:]
	return true
}

// object reads {key:VALUE,…} (keys bare or between <|"|> quotes).
func (r *gemmaReader) object(b *strings.Builder) bool {
	if !r.eat("{") {
		return false
	}
	b.WriteByte('{')
	if r.eat("}") {
		b.WriteByte('}')
		return true
	}
	for {
		r.skip()
		var key string
		if strings.HasPrefix(r.s, gemmaQuote) {
			k, rest, ok := strings.Cut(r.s[len(gemmaQuote):], gemmaQuote)
			if !ok || !strings.HasPrefix(strings.TrimLeft(rest, " "), ":") {
				return false
			}
			key, r.s = k, strings.TrimLeft(rest, " ")[1:]
		} else {
			i := strings.IndexAny(r.s, ":{}[],<\n")
			if i <= 0 || r.s[i] != ':' {
				return false
			}
			key, r.s = strings.TrimSpace(r.s[:i]), r.s[i+1:]
		}
		q, _ := json.Marshal(key)
		b.Write(q)
		b.WriteByte(':')
		if !r.value(b) {
			return false
		}
		if r.eat("}") {
			b.WriteByte('}')
			return true
		}
		if !r.eat(",") {
			return false
		}
		b.WriteByte(',')
	}
}

// gemma4Grammar is the grammar of Gemma 4's calls: the function's name,
// then its arguments as one object in Gemma's value syntax. As llama.cpp
// does, it enforces the syntax and the name, not the arguments' schema.
func gemma4Grammar(m Marker, tools []Tool, parallel bool) (string, error) {
	var b strings.Builder
	b.WriteString("start: call")
	if parallel {
		b.WriteString(" call*")
	}
	b.WriteString("\ncall: " + m(gemmaCall) + " \"call:\" (")
	for i, t := range tools {
		if strings.ContainsAny(t.Name, " \n<>{}") {
			return "", fmt.Errorf("tool name %q cannot be written in Gemma 4's call convention", t.Name)
		}
		if i > 0 {
			b.WriteString(" | ")
		}
		b.WriteString(LarkString(t.Name))
	}
	q := m(gemmaQuote)
	b.WriteString(") gobj " + m(gemmaCallEnd) + "\n")
	b.WriteString(`gobj: "{" (gkv ("," gkv)*)? "}"` + "\n")
	b.WriteString(`gkv: /[A-Za-z_$][A-Za-z0-9_.$\-]*/ ":" gval` + "\n")
	b.WriteString(`gval: gstr | gobj | "[" (gval ("," gval)*)? "]" | /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+\-]?[0-9]+)?/ | "true" | "false" | "null"` + "\n")
	b.WriteString("gstr: " + q + ` /[^<]*/ ` + q + "\n")
	return b.String(), nil
}
