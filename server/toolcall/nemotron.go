package toolcall

import "strings"

// NVIDIA's Nemotron-H chat models (Nemotron Nano 9B/12B v2) write their
// calls as a JSON list in tags,
//
//	<TOOLCALL>[{"name": NAME, "arguments": {…}}, …]</TOOLCALL>
//
// (the template's prompt shows the arguments as a string; either reads).
// Nemotron 3 Nano writes Qwen3-Coder's XML calls instead (Detect picks
// that row from its template).

// parseNemotron reads one or more <TOOLCALL>[…]</TOOLCALL> sections; text
// after the last is content.
func parseNemotron(s string) ([]Call, string, bool) {
	var calls []Call
	for {
		t := strings.TrimLeft(s, " \n")
		if !strings.HasPrefix(t, "<TOOLCALL>") {
			return calls, s, len(calls) > 0
		}
		vals, rest := jsonValues(t[len("<TOOLCALL>"):], "")
		if len(vals) != 1 {
			return calls, s, len(calls) > 0
		}
		cs, ok := callList(vals[0], "name", "arguments", "parameters")
		if !ok {
			return calls, s, len(calls) > 0
		}
		rest = strings.TrimLeft(rest, " \n")
		switch {
		case strings.HasPrefix(rest, "</TOOLCALL>"):
			rest = rest[len("</TOOLCALL>"):]
		case strings.HasPrefix("</TOOLCALL>", strings.TrimSpace(rest)):
			rest = "" // the end marker cut by max_tokens
		default:
			return calls, s, len(calls) > 0
		}
		calls = append(calls, cs...)
		s = rest
	}
}

// nemotronGrammar: <TOOLCALL>[call, call]</TOOLCALL>.
func nemotronGrammar(m Marker, tools []Tool, parallel bool) (string, error) {
	return "start: " + m("<TOOLCALL>") + ` "[" ` + list(", ", parallel) + ` "]" ` + m("</TOOLCALL>") + "\ncall: " + anyCall(tools, "name", "arguments") + "\n", nil
}
