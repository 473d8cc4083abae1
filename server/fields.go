package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Field statuses: what the server does with a request field.
const (
	implemented = "implemented" // the field changes the output as the API says
	noEffect    = "accepted"    // accepted and ignored: it does not change the output
	refused     = "refused"     // a 400 naming the field, unless its value is one of the no-op values
)

// fields is the table of OpenAI request fields per endpoint: one row per
// field, its status, and for refused fields the JSON values that mean
// "off" and are accepted (null always is). The README's table of fields
// is this table (TestFieldsREADME checks it); checkFields applies it to
// every request before its handler runs. Fields in no row are not
// OpenAI's: they are accepted and named in the request's log line.
var fields = []struct {
	endpoint, name, status string
	noop                   []string // refused fields: the accepted values, as compact JSON
	note                   string
}{
	{"/v1/completions", "model", noEffect, nil, "one model per server: any id is served by it"},
	{"/v1/completions", "prompt", implemented, nil, "a string or token ids; one prompt per request"},
	{"/v1/completions", "max_tokens", implemented, nil, ""},
	{"/v1/completions", "temperature", implemented, nil, ""},
	{"/v1/completions", "top_p", implemented, nil, ""},
	{"/v1/completions", "seed", implemented, nil, ""},
	{"/v1/completions", "stop", implemented, nil, "at most 4 strings"},
	{"/v1/completions", "stream", implemented, nil, ""},
	{"/v1/completions", "stream_options", implemented, nil, "include_usage"},
	{"/v1/completions", "logprobs", implemented, nil, "0 to 20 alternatives"},
	{"/v1/completions", "echo", implemented, nil, "the prompt as given, without the BOS the tokenizer adds"},
	{"/v1/completions", "frequency_penalty", implemented, nil, ""},
	{"/v1/completions", "presence_penalty", implemented, nil, ""},
	{"/v1/completions", "n", implemented, nil, "1 to the server's limit (--max-n)"},
	{"/v1/completions", "user", noEffect, nil, ""},
	{"/v1/completions", "best_of", refused, []string{"1"}, ""},
	{"/v1/completions", "suffix", refused, []string{`""`}, "no fill-in-the-middle"},
	{"/v1/completions", "logit_bias", refused, []string{"{}"}, "issue 20 part 3 (h-tools)"},

	{"/v1/chat/completions", "model", noEffect, nil, "one model per server: any id is served by it"},
	{"/v1/chat/completions", "messages", implemented, nil, "roles system, developer, user, assistant; text content"},
	{"/v1/chat/completions", "max_tokens", implemented, nil, ""},
	{"/v1/chat/completions", "max_completion_tokens", implemented, nil, ""},
	{"/v1/chat/completions", "temperature", implemented, nil, ""},
	{"/v1/chat/completions", "top_p", implemented, nil, ""},
	{"/v1/chat/completions", "seed", implemented, nil, ""},
	{"/v1/chat/completions", "stop", implemented, nil, "at most 4 strings"},
	{"/v1/chat/completions", "stream", implemented, nil, ""},
	{"/v1/chat/completions", "stream_options", implemented, nil, "include_usage"},
	{"/v1/chat/completions", "logprobs", implemented, nil, ""},
	{"/v1/chat/completions", "top_logprobs", implemented, nil, "0 to 20"},
	{"/v1/chat/completions", "frequency_penalty", implemented, nil, ""},
	{"/v1/chat/completions", "presence_penalty", implemented, nil, ""},
	{"/v1/chat/completions", "n", implemented, nil, "1 to the server's limit (--max-n)"},
	{"/v1/chat/completions", "user", noEffect, nil, ""},
	{"/v1/chat/completions", "metadata", noEffect, nil, "nothing is stored"},
	{"/v1/chat/completions", "service_tier", noEffect, nil, ""},
	{"/v1/chat/completions", "prompt_cache_key", noEffect, nil, "prefix caching is automatic"},
	{"/v1/chat/completions", "safety_identifier", noEffect, nil, ""},
	{"/v1/chat/completions", "store", refused, []string{"false"}, "nothing is stored"},
	{"/v1/chat/completions", "modalities", refused, []string{`["text"]`}, "text only"},
	{"/v1/chat/completions", "audio", refused, nil, "text only"},
	{"/v1/chat/completions", "prediction", refused, nil, ""},
	{"/v1/chat/completions", "web_search_options", refused, nil, ""},
	{"/v1/chat/completions", "verbosity", refused, nil, ""},
	{"/v1/chat/completions", "tools", refused, []string{"[]"}, "issue 20 part 1 (h-tools)"},
	{"/v1/chat/completions", "tool_choice", refused, []string{`"none"`}, "issue 20 part 1 (h-tools)"},
	{"/v1/chat/completions", "parallel_tool_calls", refused, nil, "issue 20 part 1 (h-tools)"},
	{"/v1/chat/completions", "functions", refused, []string{"[]"}, "deprecated for tools"},
	{"/v1/chat/completions", "function_call", refused, []string{`"none"`}, "deprecated for tool_choice"},
	{"/v1/chat/completions", "response_format", refused, []string{`{"type":"text"}`}, "issue 20 part 2 (h-tools)"},
	{"/v1/chat/completions", "reasoning_effort", refused, nil, "issue 20 part 3 (h-tools)"},
	{"/v1/chat/completions", "logit_bias", refused, []string{"{}"}, "issue 20 part 3 (h-tools)"},
}

// archcFields are the request fields archc adds to both completion
// endpoints (vLLM's and llama.cpp's names); they are implemented.
var archcFields = []string{"top_k", "min_p", "repetition_penalty", "dry_multiplier", "dry_base",
	"dry_allowed_length", "dry_penalty_last_n", "dry_sequence_breakers", "stop_token_ids"}

// checkFields applies the fields table to a request's top-level fields:
// a refused field with a value other than null or its no-op values is a
// 400 naming it. It returns the fields in no row, sorted, for the log.
func checkFields(endpoint string, top map[string]json.RawMessage) ([]string, error) {
	known := false
	names := make([]string, 0, len(top))
	for k := range top {
		names = append(names, k)
	}
	sort.Strings(names)
	var unknown []string
	for _, name := range names {
		found := false
		for _, f := range fields {
			if f.endpoint != endpoint {
				continue
			}
			known = true
			if f.name != name {
				continue
			}
			found = true
			if f.status == refused && !isNoop(top[name], f.noop) {
				why := ""
				if f.note != "" {
					why = " (" + f.note + ")"
				}
				return nil, badRequest(name, "%s is not supported by this server%s; leave it out", name, why)
			}
		}
		if !found && !slices.Contains(archcFields, name) {
			unknown = append(unknown, name)
		}
	}
	if !known {
		return nil, nil // an endpoint the table does not cover
	}
	return unknown, nil
}

// isNoop reports whether v is null or one of the no-op values.
func isNoop(v json.RawMessage, noop []string) bool {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return false
	}
	return b.String() == "null" || slices.Contains(noop, b.String())
}

// fieldsMarkdown is the README's table of fields: one row per field of
// each endpoint, as `| endpoint | field | status | note |`.
func fieldsMarkdown() string {
	var b bytes.Buffer
	b.WriteString("| endpoint | field | status | note |\n|---|---|---|---|\n")
	for _, f := range fields {
		note := f.note
		if len(f.noop) > 0 {
			if note != "" {
				note += "; "
			}
			note += "accepted as `" + strings.Join(f.noop, "` or `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", f.endpoint, f.name, f.status, note)
	}
	return b.String()
}
