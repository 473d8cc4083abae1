package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// apiError is an error in OpenAI's shape: {"error": {message, type,
// param, code}} with its HTTP status.
type apiError struct {
	Status  int    `json:"-"`
	Message string `json:"message"`
	Type    string `json:"type"`
	Param   any    `json:"param"`
	Code    any    `json:"code"`
}

func (e *apiError) Error() string { return e.Message }

func badRequest(param, format string, a ...any) *apiError {
	var p any
	if param != "" {
		p = param
	}
	return &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf(format, a...), Type: "invalid_request_error", Param: p}
}

// writeError writes err as OpenAI's error JSON; errors other than
// *apiError are 500s.
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = &apiError{Status: http.StatusInternalServerError, Message: err.Error(), Type: "server_error"}
	}
	w.Header().Set("Content-Type", "application/json")
	if ae.Status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1") // seconds: slots free as requests finish
	}
	w.WriteHeader(ae.Status)
	json.NewEncoder(w).Encode(map[string]any{"error": ae})
}

// stringList is OpenAI's "string or array of strings" (stop).
type stringList []string

func (s *stringList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = stringList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return &json.UnmarshalTypeError{Value: jsonValueKind(b), Type: reflect.TypeOf(stringList{})}
	}
	*s = many
	return nil
}

// prompt is a completions prompt: a string, or an array of token ids.
// Arrays of several prompts are refused (one completion per request).
type prompt struct {
	Text *string
	IDs  []int32
}

func (p *prompt) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		p.Text = &s
		return nil
	}
	var ids []int32
	if err := json.Unmarshal(b, &ids); err == nil {
		p.IDs = ids
		return nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(b, &list); err == nil && len(list) == 1 {
		return p.UnmarshalJSON(list[0])
	}
	return errors.New("prompt must be a string or an array of token ids (one prompt per request)")
}

// sampling holds the generation controls both endpoints share. Pointer
// fields tell "absent" from zero.
type sampling struct {
	MaxTokens           *int       `json:"max_tokens"`
	MaxCompletionTokens *int       `json:"max_completion_tokens"`
	Temperature         *float64   `json:"temperature"`
	TopP                *float64   `json:"top_p"`
	TopK                *int       `json:"top_k"`
	MinP                *float64   `json:"min_p"`
	Seed                *int64     `json:"seed"`
	Stop                stringList `json:"stop"`
	StopTokenIDs        []int32    `json:"stop_token_ids"`
	RepetitionPenalty   *float64   `json:"repetition_penalty"`
	FrequencyPenalty    *float64   `json:"frequency_penalty"`
	PresencePenalty     *float64   `json:"presence_penalty"`
	DRYMultiplier       *float64   `json:"dry_multiplier"`
	DRYBase             *float64   `json:"dry_base"`
	DRYAllowedLength    *int       `json:"dry_allowed_length"`
	DRYPenaltyLastN     *int       `json:"dry_penalty_last_n"`
	DRYSequenceBreakers []string   `json:"dry_sequence_breakers"`
	N                   *int       `json:"n"`
	// Speculative false decodes the request one token per step on a
	// server that speculates (infer serve --speculative); true asks for
	// speculation, which a server without it refuses.
	Speculative   *bool          `json:"speculative"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options"`
	// User is OpenAI's end-user id: no effect, but it must be a string.
	User *string `json:"user"`
	// LogitBias maps token ids (as strings) to a bias in [-100, 100]
	// added to their logits.
	LogitBias map[string]float64 `json:"logit_bias"`
}

// streamOptions is a request's stream_options: include_usage, and the
// keys it holds that archc does not take (unknown, for a 400 naming them).
type streamOptions struct {
	IncludeUsage bool
	unknown      []string
}

func (o *streamOptions) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return &json.UnmarshalTypeError{Value: jsonValueKind(b), Type: reflect.TypeOf(map[string]any{})}
	}
	for k, v := range m {
		switch k {
		case "include_usage":
			if err := json.Unmarshal(v, &o.IncludeUsage); err != nil && string(v) != "null" {
				return &json.UnmarshalTypeError{Value: jsonValueKind(v), Type: reflect.TypeOf(true), Field: "stream_options.include_usage"}
			}
		case "include_obfuscation": // OpenAI's; archc writes no obfuscation field
			if string(v) != "false" && string(v) != "null" {
				o.unknown = append(o.unknown, k)
			}
		default:
			o.unknown = append(o.unknown, k)
		}
	}
	slices.Sort(o.unknown)
	return nil
}

// check refuses stream_options on a request that does not stream (as
// OpenAI does) and keys archc does not take, by name.
func (o *streamOptions) check(stream bool) error {
	switch {
	case o == nil:
		return nil
	case !stream:
		return badRequest("stream_options", "stream_options is only allowed when stream is true")
	case len(o.unknown) > 0:
		return badRequest("stream_options."+o.unknown[0], "stream_options.%s is not supported (stream_options takes include_usage); leave it out", o.unknown[0])
	}
	return nil
}

// completionRequest is POST /v1/completions.
type completionRequest struct {
	Model  string  `json:"model"`
	Prompt *prompt `json:"prompt"`
	// Logprobs: the number of most likely alternatives to return per
	// token (0 to 20), with each token's own logprob.
	Logprobs *int `json:"logprobs"`
	Echo     bool `json:"echo"`
	sampling
}

// message is one chat turn.
type message struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // a string, or an array of {"type": "text", "text": ...} parts
	// An assistant turn's calls, and the call a "tool" turn answers.
	ToolCalls        []toolCallJSON `json:"tool_calls"`
	ToolCallID       string         `json:"tool_call_id"`
	Name             string         `json:"name"`
	ReasoningContent string         `json:"reasoning_content"`
}

// toolCallJSON is OpenAI's {"id", "type": "function", "function": {"name",
// "arguments": JSON text}}.
type toolCallJSON struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chatRequest is POST /v1/chat/completions.
type chatRequest struct {
	Model       string    `json:"model"`
	Messages    []message `json:"messages"`
	Logprobs    bool      `json:"logprobs"`
	TopLogprobs *int      `json:"top_logprobs"`
	// Tools, tool_choice, parallel_tool_calls, response_format,
	// chat_template_kwargs and reasoning_effort: see tools.go.
	Tools              []toolJSON                 `json:"tools"`
	ToolChoice         json.RawMessage            `json:"tool_choice"`
	ParallelToolCalls  *bool                      `json:"parallel_tool_calls"`
	ResponseFormat     *responseFormat            `json:"response_format"`
	ChatTemplateKwargs map[string]json.RawMessage `json:"chat_template_kwargs"`
	ReasoningEffort    string                     `json:"reasoning_effort"`
	// IncludeReasoning is vLLM's extension (vllm-router sends it): false
	// leaves reasoning_content out of the answer; nil or true keeps it.
	IncludeReasoning *bool `json:"include_reasoning"`
	// Prediction is OpenAI's predicted output: {"type": "content",
	// "content": text or text parts}, drafts for speculative decoding.
	Prediction *prediction `json:"prediction"`
	// The deprecated functions / function_call are refused (use tools).
	Functions    json.RawMessage `json:"functions"`
	FunctionCall json.RawMessage `json:"function_call"`
	sampling
}

// prediction is a chat request's "prediction" (OpenAI's predicted
// outputs): content the answer is expected to repeat.
type prediction struct {
	Type    string          `json:"type"`
	Content json.RawMessage `json:"content"`
}

// text returns the prediction's content: a string, or the text of an
// array of {"type": "text", "text"} parts. Errors name the field.
func (p *prediction) text() (string, error) {
	if p.Type != "content" {
		return "", badRequest("prediction", "prediction.type must be \"content\", got %q", p.Type)
	}
	var s string
	if err := json.Unmarshal(p.Content, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(p.Content, &parts); err != nil {
		return "", badRequest("prediction", "prediction.content must be a string or an array of text parts")
	}
	var b strings.Builder
	for _, part := range parts {
		if part.Type != "text" {
			return "", badRequest("prediction", "prediction.content parts must be of type \"text\", got %q", part.Type)
		}
		b.WriteString(part.Text)
	}
	return b.String(), nil
}

// decodeJSON reads a request body of at most limit bytes into v. Unknown
// fields are ignored; a value of the wrong type is an error naming the
// field (decodeValue).
func decodeJSON(r *http.Request, limit int64, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limit))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return &apiError{Status: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("the request body exceeds %d bytes", limit), Type: "invalid_request_error"}
		}
		return badRequest("", "reading the request body: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return badRequest("", "the request body is not valid JSON: %v (at byte %d)", err, se.Offset)
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return badRequest("", "the request body is not valid JSON: it ends too early")
		}
		return badRequest("", "invalid request: %v", unwrapJSON(err))
	}
	if end := dec.InputOffset(); !errors.Is(ignoreToken(dec.Token()), io.EOF) {
		return badRequest("", "the request body is not valid JSON: more data after its object (at byte %d)", end)
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] != '{' && reflect.TypeOf(v).Elem().Kind() == reflect.Struct {
		return badRequest("", "the request body must be a JSON object, got %s", jsonValueKind(raw))
	}
	if err := decodeValue(raw, v, ""); err != nil {
		if _, ok := err.(*apiError); !ok && strings.Contains(err.Error(), "prompt") {
			return badRequest("prompt", "%v", unwrapJSON(err))
		}
		return err
	}
	return nil
}

// decodeValue unmarshals the JSON value b (at path prefix of the request:
// "" for the body, "input[2]" for one of its items) into v. A value of
// the wrong type is a 400 naming its path as the API spells it
// (messages[1].tool_calls) as the message's subject and the param: "want
// a string, got a number". A number with an integral value (2.0, 1e3)
// is taken for an integer field, as pydantic's clients send them; 2.5 is
// refused. Errors other than type errors (a field's own check) are
// returned as they are.
func decodeValue(b []byte, v any, prefix string) error {
	for range 64 { // each pass rewrites one integral number
		err := json.Unmarshal(b, v)
		var te *json.UnmarshalTypeError
		if err == nil || !errors.As(err, &te) {
			return err
		}
		path := joinPath(prefix, typeErrorPath(b, te))
		want := "another type"
		if te.Type != nil {
			want = jsonKind(te.Type.Kind().String())
		}
		if te.Type == reflect.TypeOf(stringList{}) {
			want = "a string or an array of strings"
		}
		lit, ok := strings.CutPrefix(te.Value, "number ")
		if ok && want == "an integer" {
			if nb, ok := integralNumber(b, int(te.Offset), lit); ok {
				b = nb
				continue
			}
		}
		got := te.Value
		switch {
		case ok && want == "a number":
			return badRequest(path, "%s: %s is out of range", path, lit)
		case ok && want == "an integer":
			if f, err := strconv.ParseFloat(lit, 64); err != nil || f == math.Trunc(f) {
				return badRequest(path, "%s: %s is out of range", path, lit)
			}
			got = lit
		case ok:
			got = "a number"
		default:
			got = jsonArticle(te.Value)
		}
		if path == "" {
			return badRequest("", "the request body must be a JSON object, got %s", got)
		}
		return badRequest(path, "%s: want %s, got %s", path, want, got)
	}
	return badRequest(prefix, "%s: too many numbers to read as integers", prefix)
}

// requestError is decodeValue's error as a 400: its own, or for an
// error of a field's own check, "invalid request: ...".
func requestError(err error) error {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae
	}
	return badRequest("", "invalid request: %v", unwrapJSON(err))
}

// typeErrorPath is the path within b of the value a type error is
// about: where its offset points, when that agrees with the error's
// field names (an error from a field's own UnmarshalJSON, such as a
// tool's, has an offset within that field), else the first value along
// the field names, through any array, of the error's JSON kind.
func typeErrorPath(b []byte, te *json.UnmarshalTypeError) string {
	field := strings.TrimPrefix(strings.TrimPrefix(te.Field, "sampling."), ".")
	if te.Offset > 0 && int(te.Offset) <= len(b) {
		p := jsonPathAt(b, int(te.Offset)-1)
		if f := indexFree(p); field == "" || f == field || strings.HasPrefix(f, field+".") { // below: a map's key
			return p
		}
	}
	if field == "" {
		return ""
	}
	var v any
	if json.Unmarshal(b, &v) == nil {
		kind, _, _ := strings.Cut(te.Value, " ")
		if p, ok := findKind(v, strings.Split(field, "."), kind); ok {
			return strings.TrimPrefix(p, ".")
		}
	}
	return field
}

// indexFree is a path without its array indices: messages.tool_calls.
func indexFree(p string) string {
	var b strings.Builder
	in := false
	for _, c := range p {
		switch {
		case c == '[':
			in = true
		case c == ']':
			in = false
		case !in:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// findKind follows fields through v (into every element of an array on
// the way) to the first value of JSON kind ("number", "string", ...) and
// returns its path.
func findKind(v any, fields []string, kind string) (string, bool) {
	if list, ok := v.([]any); ok {
		for i, el := range list {
			if p, ok := findKind(el, fields, kind); ok {
				return fmt.Sprintf("[%d]%s", i, p), true
			}
		}
		if len(fields) > 0 {
			return "", false
		}
	}
	if len(fields) == 0 {
		b, _ := json.Marshal(v)
		return "", jsonValueKind(b) == kind
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	child, ok := obj[fields[0]]
	if !ok {
		return "", false
	}
	p, ok := findKind(child, fields[1:], kind)
	return "." + fields[0] + p, ok
}

// integralNumber rewrites the number literal lit ending at byte end of b
// (where encoding/json reports a type error) as an integer when its value
// is one (2.0, 1e3) and fits in 53 bits; ok false otherwise.
func integralNumber(b []byte, end int, lit string) ([]byte, bool) {
	if end > len(b) || end < len(lit) || string(b[end-len(lit):end]) != lit {
		return nil, false
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return nil, false
	}
	out := append(append(slices.Clone(b[:end-len(lit)]), strconv.FormatInt(int64(f), 10)...), b[end:]...)
	return out, true
}

// joinPath joins a field path and a path within it.
func joinPath(prefix, sub string) string {
	switch {
	case prefix == "":
		return sub
	case sub == "" || strings.HasPrefix(sub, "["):
		return prefix + sub
	}
	return prefix + "." + sub
}

// jsonArticle names a JSON kind as encoding/json's type errors give it
// ("string", "object", "bool") with its article: "a string".
func jsonArticle(kind string) string {
	switch kind {
	case "object", "array":
		return "an " + kind
	case "bool":
		return "a boolean"
	case "":
		return "a value"
	}
	return "a " + kind
}

// ignoreToken returns the error of a json.Decoder.Token call.
func ignoreToken(_ json.Token, err error) error { return err }

// jsonValueKind names the JSON kind of a raw value, as encoding/json's
// type errors do ("number", "string", "object", ...).
func jsonValueKind(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return "value"
	}
	switch v.(type) {
	case float64:
		return "number"
	case string:
		return "string"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

func jsonKind(k string) string {
	switch k {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32":
		return "a number"
	case "float64":
		return "a number"
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	case "slice":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return k
}

func unwrapJSON(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && strings.HasPrefix(s, "json:") {
		return s[i+2:]
	}
	return s
}

// text of message i's content: a string or the text parts of an array;
// null only for an assistant turn (its tool calls). Errors name
// messages[i].content.
func (m message) text(i int) (string, error) {
	field := fmt.Sprintf("messages[%d].content", i)
	switch c := m.Content.(type) {
	case string:
		return c, nil
	case nil:
		if m.Role != "assistant" { // an assistant turn of only tool calls has none
			return "", badRequest(field, "%s is required for a %s message", field, m.Role)
		}
		return "", nil
	case []any:
		var b strings.Builder
		for j, p := range c {
			part, ok := p.(map[string]any)
			if !ok || part["type"] != "text" {
				return "", badRequest(fmt.Sprintf("%s[%d]", field, j), "%s[%d]: content parts must be {\"type\": \"text\", \"text\": ...}; other part types are not supported", field, j)
			}
			s, _ := part["text"].(string)
			b.WriteString(s)
		}
		return b.String(), nil
	}
	return "", badRequest(field, "%s must be a string or an array of text parts", field)
}
