package toolcall

import (
	"encoding/json"
	"fmt"
	"strings"
)

// LFM2 and LFM2.5 (Liquid AI) write their calls as a Python list,
//
//	<|tool_call_start|>[NAME(key='text', n=1), NAME2(…)]<|tool_call_end|>
//
// keyword arguments whose values are Python literals (JSON's true, null
// and "…" read too).

// parseLFM2 reads LFM2's call list; text after it is content.
func parseLFM2(s string) ([]Call, string, bool) {
	t := strings.TrimLeft(s, " \n")
	if !strings.HasPrefix(t, minicpmCall) {
		return nil, s, false
	}
	r := &pyReader{s: t[len(minicpmCall):]}
	r.skipSpace()
	if !r.eat("[") {
		return nil, s, false
	}
	var calls []Call
	for {
		r.skipSpace()
		if len(calls) > 0 {
			if r.eat("]") {
				break
			}
			if !r.eat(",") {
				return nil, s, false
			}
			r.skipSpace()
		}
		c, ok := r.call()
		if !ok {
			return nil, s, false
		}
		calls = append(calls, c)
	}
	rest := strings.TrimLeft(r.s, " \n")
	switch {
	case strings.HasPrefix(rest, minicpmCallEnd):
		rest = rest[len(minicpmCallEnd):]
	case strings.HasPrefix(minicpmCallEnd, strings.TrimSpace(rest)):
		rest = "" // the end marker cut by max_tokens
	default:
		return nil, s, false
	}
	return calls, rest, true
}

// lfm2Grammar is the grammar of LFM2's call list: one call (with parallel
// one or more), keyword arguments in the schema's order, the required
// ones always and the others optionally, a string as the template writes
// it ('text', no quote or backslash inside: those take JSON's "…"), any
// other value as JSON valid against its schema.
func lfm2Grammar(m Marker, tools []Tool, parallel bool) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, `start: %s "[" call`, m(minicpmCall))
	if parallel {
		b.WriteString(` (", " call)*`)
	}
	fmt.Fprintf(&b, ` "]" %s`+"\ncall: ", m(minicpmCallEnd))
	if err := pyCallRules(&b, tools, "LFM2", `", "`, pyValue); err != nil {
		return "", err
	}
	return b.String(), nil
}

// pyValue is the grammar of one Python keyword argument's value: a string
// enum as its quoted values, a string as '…' (or JSON's "…" when it holds
// a quote, a backslash or a newline), anything else as JSON.
func pyValue(schema json.RawMessage) string {
	var s struct {
		Type any   `json:"type"`
		Enum []any `json:"enum"`
	}
	json.Unmarshal(schema, &s)
	var strs []string
	for _, e := range s.Enum {
		if v, ok := e.(string); ok && !strings.ContainsAny(v, "'\\\n") {
			strs = append(strs, LarkString("'"+v+"'"))
		}
	}
	switch {
	case len(strs) > 0 && len(strs) == len(s.Enum):
		return "(" + strings.Join(strs, " | ") + ")"
	case s.Type == "string" && len(s.Enum) == 0:
		return `(/'[^'\\\n]*'/ | %json ` + WithGuidance(schema) + ")"
	}
	return "%json " + WithGuidance(schema)
}
