package toolcall

import (
	"encoding/json"
	"strings"
)

// Apertus (swiss-ai) writes its calls as a JSON list of one-key objects,
//
//	<|tools_prefix|>[{"NAME": {…}}, …]<|tools_suffix|>
//
// after reasoning in <|inner_prefix|>…<|inner_suffix|>.

// parseApertus reads one or more <|tools_prefix|>[…]<|tools_suffix|>
// sections; text after the last is content.
func parseApertus(s string) ([]Call, string, bool) {
	var calls []Call
	for {
		t := strings.TrimLeft(s, " \n")
		if !strings.HasPrefix(t, "<|tools_prefix|>") {
			return calls, s, len(calls) > 0
		}
		vals, rest := jsonValues(t[len("<|tools_prefix|>"):], "")
		var list []map[string]json.RawMessage
		if len(vals) != 1 || json.Unmarshal(vals[0], &list) != nil || len(list) == 0 {
			return calls, s, len(calls) > 0
		}
		var cs []Call
		for _, o := range list {
			if len(o) != 1 {
				return calls, s, len(calls) > 0
			}
			for name, args := range o {
				var obj map[string]json.RawMessage
				if name == "" || json.Unmarshal(args, &obj) != nil {
					return calls, s, len(calls) > 0
				}
				cs = append(cs, Call{Name: name, Arguments: compact(args)})
			}
		}
		rest = strings.TrimLeft(rest, " \n")
		switch {
		case strings.HasPrefix(rest, "<|tools_suffix|>"):
			rest = rest[len("<|tools_suffix|>"):]
		case strings.HasPrefix("<|tools_suffix|>", strings.TrimSpace(rest)):
			rest = "" // the end marker cut by max_tokens
		default:
			return calls, s, len(calls) > 0
		}
		calls, s = append(calls, cs...), rest
	}
}

// apertusGrammar: <|tools_prefix|>[{"NAME": {…}}, …]<|tools_suffix|>.
func apertusGrammar(m Marker, tools []Tool, parallel bool) (string, error) {
	var alts []string
	for _, t := range tools {
		alts = append(alts, `{"type": "object", "properties": {`+LarkString(t.Name)+": "+t.params()+`}, "required": [`+LarkString(t.Name)+`], "additionalProperties": false}`)
	}
	return "start: " + m("<|tools_prefix|>") + ` "[" ` + list(", ", parallel) + ` "]" ` + m("<|tools_suffix|>") +
		"\ncall: %json {" + guidance + `, "anyOf": [` + strings.Join(alts, ", ") + "]}\n", nil
}
