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
	{"/v1/completions", "top_p", implemented, nil, "0: the most likely token only (as llama.cpp)"},
	{"/v1/completions", "seed", implemented, nil, ""},
	{"/v1/completions", "stop", implemented, nil, "at most 4 strings"},
	{"/v1/completions", "stream", implemented, nil, ""},
	{"/v1/completions", "stream_options", implemented, nil, "include_usage; only with stream true (as OpenAI), other keys are a 400"},
	{"/v1/completions", "logprobs", implemented, nil, "0 to 20 alternatives"},
	{"/v1/completions", "echo", implemented, nil, "the prompt as given, without the BOS the tokenizer adds; not with logprobs (a 400: prompt logprobs are not computed)"},
	{"/v1/completions", "frequency_penalty", implemented, nil, ""},
	{"/v1/completions", "presence_penalty", implemented, nil, ""},
	{"/v1/completions", "n", implemented, nil, "1 to the server's limit (--max-n)"},
	{"/v1/completions", "user", noEffect, nil, ""},
	{"/v1/completions", "best_of", refused, []string{"1"}, ""},
	{"/v1/completions", "suffix", refused, []string{`""`}, "no fill-in-the-middle"},
	{"/v1/completions", "logit_bias", implemented, nil, "token id -> bias in [-100, 100]; an id outside the vocabulary is a 400"},

	{"/v1/chat/completions", "model", noEffect, nil, "one model per server: any id is served by it"},
	{"/v1/chat/completions", "messages", implemented, nil, "roles system, developer, user, assistant; text content"},
	{"/v1/chat/completions", "max_tokens", implemented, nil, ""},
	{"/v1/chat/completions", "max_completion_tokens", implemented, nil, ""},
	{"/v1/chat/completions", "temperature", implemented, nil, ""},
	{"/v1/chat/completions", "top_p", implemented, nil, "0: the most likely token only (as llama.cpp)"},
	{"/v1/chat/completions", "seed", implemented, nil, ""},
	{"/v1/chat/completions", "stop", implemented, nil, "at most 4 strings"},
	{"/v1/chat/completions", "stream", implemented, nil, ""},
	{"/v1/chat/completions", "stream_options", implemented, nil, "include_usage; only with stream true (as OpenAI), other keys are a 400"},
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
	{"/v1/chat/completions", "prediction", implemented, nil, "type content: drafts for speculative decoding on a server started with --speculative (faster where the answer repeats it; the output is the same); no effect without"},
	{"/v1/chat/completions", "web_search_options", refused, nil, ""},
	{"/v1/chat/completions", "verbosity", refused, nil, ""},
	{"/v1/chat/completions", "tools", implemented, nil, "type function; rendered by the chat template (docs/agents.md)"},
	{"/v1/chat/completions", "tool_choice", implemented, nil, "auto, none, required, a named function; required and named enforced by constrained decoding"},
	{"/v1/chat/completions", "parallel_tool_calls", implemented, nil, ""},
	{"/v1/chat/completions", "functions", refused, []string{"[]"}, "deprecated for tools"},
	{"/v1/chat/completions", "function_call", refused, []string{`"none"`}, "deprecated for tool_choice"},
	{"/v1/chat/completions", "response_format", implemented, nil, "text, json_object, json_schema (enforced by llguidance)"},
	{"/v1/chat/completions", "reasoning_effort", implemented, nil, "minimal, low, medium or high: the chat template's reasoning_effort"},
	{"/v1/chat/completions", "chat_template_kwargs", implemented, nil, "variables for the chat template (enable_thinking, ...)"},
	{"/v1/chat/completions", "logit_bias", implemented, nil, "token id -> bias in [-100, 100]; an id outside the vocabulary is a 400"},

	{"/v1/completions", "ignore_eos", refused, []string{"false"}, "sglang's and vLLM's extension; sglang-router sends false"},
	{"/v1/completions", "no_stop_trim", refused, []string{"false"}, "sglang's extension"},
	{"/v1/completions", "skip_special_tokens", noEffect, nil, "sglang's and vLLM's extension: end tokens are never text"},
	{"/v1/completions", "return_hidden_states", refused, []string{"false"}, "sglang's extension"},
	{"/v1/completions", "speculative", implemented, nil, "archc's: false decodes without speculation on a server started with --speculative (the output is the same); true on a server without it is a 400"},
	{"/v1/chat/completions", "ignore_eos", refused, []string{"false"}, "sglang's and vLLM's extension; sglang-router sends false"},
	{"/v1/chat/completions", "no_stop_trim", refused, []string{"false"}, "sglang's extension"},
	{"/v1/chat/completions", "skip_special_tokens", noEffect, nil, "sglang's and vLLM's extension: end tokens are never text"},
	{"/v1/chat/completions", "return_hidden_states", refused, []string{"false"}, "sglang's extension"},
	{"/v1/chat/completions", "speculative", implemented, nil, "archc's: false decodes without speculation on a server started with --speculative (the output is the same); true on a server without it is a 400"},
	{"/v1/chat/completions", "continue_final_message", refused, []string{"false"}, "sglang's and vLLM's extension"},
	{"/v1/chat/completions", "include_reasoning", implemented, nil, "vLLM's extension (vllm-router sends it): false leaves reasoning_content out"},
	{"/v1/chat/completions", "separate_reasoning", noEffect, nil, "sglang's extension: reasoning is always apart, in reasoning_content"},
	{"/v1/chat/completions", "stream_reasoning", noEffect, nil, "sglang's extension: reasoning is always streamed, as delta.reasoning_content"},

	{"/v1/responses", "model", noEffect, nil, "one model per server: any id is served by it"},
	{"/v1/responses", "input", implemented, nil, "a string, or items: messages with text content (input_text, output_text parts), function_call, function_call_output, reasoning"},
	{"/v1/responses", "instructions", implemented, nil, "a system turn; not carried over by previous_response_id"},
	{"/v1/responses", "previous_response_id", implemented, nil, "the last 1000 stored responses, in memory"},
	{"/v1/responses", "store", implemented, nil, "in memory, for previous_response_id and GET /v1/responses/{id}"},
	{"/v1/responses", "max_output_tokens", implemented, nil, ""},
	{"/v1/responses", "temperature", implemented, nil, ""},
	{"/v1/responses", "top_p", implemented, nil, "0: the most likely token only (as llama.cpp)"},
	{"/v1/responses", "stream", implemented, nil, "the Responses API's events"},
	{"/v1/responses", "metadata", noEffect, nil, "returned with the response"},
	{"/v1/responses", "user", noEffect, nil, ""},
	{"/v1/responses", "service_tier", noEffect, nil, ""},
	{"/v1/responses", "prompt_cache_key", noEffect, nil, "prefix caching is automatic"},
	{"/v1/responses", "safety_identifier", noEffect, nil, ""},
	{"/v1/responses", "parallel_tool_calls", implemented, nil, ""},
	{"/v1/responses", "stream_options", noEffect, nil, ""},
	{"/v1/responses", "tools", implemented, nil, "type function, as chat completions' tools (docs/agents.md); hosted tools are a 400"},
	{"/v1/responses", "tool_choice", implemented, nil, "auto, none, required, {\"type\": \"function\", \"name\"}; required and named enforced by constrained decoding"},
	{"/v1/responses", "max_tool_calls", refused, nil, "the calls are not counted across a response's turns"},
	{"/v1/responses", "text", implemented, nil, "format text, json_object, json_schema (enforced, as response_format); verbosity is a 400"},
	{"/v1/responses", "reasoning", implemented, nil, "effort, as reasoning_effort; summary is a 400"},
	{"/v1/responses", "truncation", refused, []string{`"disabled"`}, "a prompt beyond the context is a 400"},
	{"/v1/responses", "include", refused, []string{"[]"}, ""},
	{"/v1/responses", "top_logprobs", refused, []string{"0"}, ""},
	{"/v1/responses", "background", refused, []string{"false"}, ""},
	{"/v1/responses", "conversation", refused, nil, "use previous_response_id"},
	{"/v1/responses", "prompt", refused, nil, "no stored prompt templates"},

	{"/v1/messages", "model", noEffect, nil, "one model per server: any id is served by it"},
	{"/v1/messages", "max_tokens", implemented, nil, "required"},
	{"/v1/messages", "messages", implemented, nil, "user and assistant turns: text, tool_use, tool_result and thinking blocks"},
	{"/v1/messages", "system", implemented, nil, "a string or text blocks"},
	{"/v1/messages", "stop_sequences", implemented, nil, "at most 4"},
	{"/v1/messages", "temperature", implemented, nil, "older clients send it; default 1"},
	{"/v1/messages", "top_p", implemented, nil, "older clients send it; 0: the most likely token only"},
	{"/v1/messages", "top_k", implemented, nil, "older clients send it"},
	{"/v1/messages", "stream", implemented, nil, "the Messages API's events"},
	{"/v1/messages", "metadata", noEffect, nil, ""},
	{"/v1/messages", "service_tier", noEffect, nil, ""},
	{"/v1/messages", "cache_control", noEffect, nil, "prefix caching is automatic"},
	{"/v1/messages", "inference_geo", noEffect, nil, ""},
	{"/v1/messages", "speed", noEffect, nil, "one speed"},
	{"/v1/messages", "user_profile_id", noEffect, nil, ""},
	{"/v1/messages", "workspace_id", noEffect, nil, ""},
	{"/v1/messages", "diagnostics", refused, nil, ""},
	{"/v1/messages", "output_config", implemented, nil, "format json_schema (enforced, as response_format); effort, as reasoning_effort"},
	{"/v1/messages", "output_format", implemented, nil, "the older name of output_config.format"},
	{"/v1/messages", "tools", implemented, nil, "client tools (name, description, input_schema); server tools are a 400"},
	{"/v1/messages", "tool_choice", implemented, nil, "auto, any, tool, none, disable_parallel_tool_use; any and tool enforced by constrained decoding"},
	{"/v1/messages", "thinking", refused, []string{`{"type":"disabled"}`}, "a template that reasons is read into thinking blocks without it"},
	{"/v1/messages", "mcp_servers", refused, []string{"[]"}, ""},
	{"/v1/messages", "container", refused, nil, ""},
	{"/v1/messages", "context_management", refused, nil, ""},

	{"/v1/messages/count_tokens", "model", noEffect, nil, ""},
	{"/v1/messages/count_tokens", "messages", implemented, nil, ""},
	{"/v1/messages/count_tokens", "system", implemented, nil, ""},
	{"/v1/messages/count_tokens", "cache_control", noEffect, nil, ""},
	{"/v1/messages/count_tokens", "speed", noEffect, nil, ""},
	{"/v1/messages/count_tokens", "user_profile_id", noEffect, nil, ""},
	{"/v1/messages/count_tokens", "workspace_id", noEffect, nil, ""},
	{"/v1/messages/count_tokens", "output_config", implemented, nil, "as in /v1/messages (the effort can change the prompt)"},
	{"/v1/messages/count_tokens", "output_format", noEffect, nil, "a format does not change the prompt"},
	{"/v1/messages/count_tokens", "tools", implemented, nil, "rendered into the prompt as in /v1/messages"},
	{"/v1/messages/count_tokens", "tool_choice", implemented, nil, "as in /v1/messages"},
	{"/v1/messages/count_tokens", "thinking", refused, []string{`{"type":"disabled"}`}, ""},
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
		if !found && !(slices.Contains(archcFields, name) && (endpoint == "/v1/completions" || endpoint == "/v1/chat/completions")) {
			unknown = append(unknown, name)
		}
	}
	if !known {
		return nil, nil // an endpoint the table does not cover
	}
	if lp, ok := top["logprobs"]; ok && endpoint == "/v1/completions" && string(top["echo"]) == "true" && !isNoop(lp, nil) {
		return nil, badRequest("echo", "echo with logprobs: the prompt's logprobs are not computed; leave out one of them")
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
