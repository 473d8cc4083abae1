package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
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
	Speculative   *bool `json:"speculative"`
	Stream        bool  `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	// LogitBias maps token ids (as strings) to a bias in [-100, 100]
	// added to their logits.
	LogitBias map[string]float64 `json:"logit_bias"`
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
// field.
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
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te) && te.Field == "":
			return badRequest("", "the request body must be a JSON object, got %s", te.Value)
		case errors.As(err, &te):
			want := "another type"
			if te.Type != nil {
				want = jsonKind(te.Type.Kind().String())
			}
			field := strings.TrimPrefix(te.Field, "sampling.")
			if te.Type == reflect.TypeOf(stringList{}) {
				want = "a string or an array of strings"
			}
			if strings.HasPrefix(te.Value, "number") && strings.Contains(want, "a number") {
				return badRequest(field, "%s: %s is out of range", field, strings.TrimPrefix(te.Value, "number "))
			}
			return badRequest(field, "%s: expected %s, got %s", field, want, te.Value)
		case errors.As(err, &se):
			return badRequest("", "the request body is not valid JSON: %v (at byte %d)", err, se.Offset)
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return badRequest("", "the request body is not valid JSON: it ends too early")
		case strings.Contains(err.Error(), "prompt"):
			return badRequest("prompt", "%v", unwrapJSON(err))
		}
		return badRequest("", "invalid request: %v", unwrapJSON(err))
	}
	if end := dec.InputOffset(); !errors.Is(ignoreToken(dec.Token()), io.EOF) {
		return badRequest("", "the request body is not valid JSON: more data after its object (at byte %d)", end)
	}
	return nil
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
	case "int", "int32", "int64":
		return "an integer"
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
