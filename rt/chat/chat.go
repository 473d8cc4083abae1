// Package chat renders Hugging Face chat templates (Jinja2) the way
// transformers' apply_chat_template does: trim_blocks and lstrip_blocks,
// loop controls, no autoescaping, and the globals transformers adds
// (raise_exception, strftime_now, a tojson filter that does not escape HTML).
//
// The Jinja engine is github.com/ardanlabs/jinja; this package adds the
// transformers conventions on top of it. Tools, tool calls and tool results
// reach the template in the shapes apply_chat_template documents (and vLLM
// passes): tools as the request's JSON Schema function definitions,
// assistant tool_calls as {"id", "type": "function", "function": {"name",
// "arguments": a dict}}, tool results as role "tool" with tool_call_id and
// name. JSON objects keep their key order, so `tojson` writes them as
// Python's json.dumps writes the parsed request.
package chat

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/ardanlabs/jinja"
)

// Message is one turn of a conversation. Fields left at their zero value
// (other than Role and Content) are absent from the message dict the
// template sees, so `"tool_calls" in message` is false for plain turns.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Parts, when set, is the content as a list of parts (text and
	// images, in order), which the template sees as transformers passes a
	// multimodal message: content = [{"type": "text", "text": ...},
	// {"type": "image"}, ...]; Content is then not used. A message of
	// text only keeps Content (templates of text models read a string).
	Parts []Part `json:"parts,omitempty"`
	// ReasoningContent is an assistant turn's reasoning (Qwen3's
	// message.reasoning_content); "" is absent.
	ReasoningContent string `json:"reasoning_content,omitempty"`
	// ToolCalls are an assistant turn's function calls. Content is always
	// a string: OpenAI's null content is "" (None breaks templates such as
	// Qwen3's that test `'<think>' in content`).
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and Name identify the call a "tool" turn answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
}

// Part is one piece of a multimodal message's content (Message.Parts).
type Part struct {
	Type string `json:"type"` // PartText or PartImage
	Text string `json:"text,omitempty"`
}

// The part types.
const (
	PartText  = "text"
	PartImage = "image" // an image, in the order of the request's images; the template writes its placeholder
)

// ToolCall is one function call of an assistant turn.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the call's arguments as JSON text (OpenAI's
	// function.arguments string). A JSON object reaches the template as a
	// dict (as transformers expects); anything else as the string itself.
	Arguments string `json:"arguments"`
}

// Options are the variables a chat template sees besides messages.
type Options struct {
	// AddGenerationPrompt appends the header that starts an assistant turn.
	AddGenerationPrompt bool
	// BOS and EOS are the model's bos_token and eos_token strings.
	BOS, EOS string
	// Now is the time strftime_now formats; zero means time.Now().
	Now time.Time
	// Tools are the function definitions the template sees as `tools`
	// (each a JSON object such as {"type": "function", "function": {...}});
	// nil renders tools=None.
	Tools []json.RawMessage
	// Vars are extra template variables (e.g. "enable_thinking",
	// "reasoning_effort"); they override the ones above. A json.RawMessage
	// value is decoded keeping its object key order.
	Vars map[string]any
}

// Render renders template for messages with opts.
func Render(template string, messages []Message, opts Options) (string, error) {
	tpl, err := jinja.Compile(rewriteTojson(template))
	if err != nil {
		return "", fmt.Errorf("chat template: %v", err)
	}
	msgs := make([]jinja.Value, len(messages))
	for i, m := range messages {
		v, err := messageValue(m)
		if err != nil {
			return "", fmt.Errorf("chat template: message %d: %v", i, err)
		}
		msgs[i] = v
	}
	tools := jinja.None()
	if opts.Tools != nil {
		list := make([]jinja.Value, len(opts.Tools))
		for i, t := range opts.Tools {
			v, err := JSONValue(t)
			if err != nil {
				return "", fmt.Errorf("chat template: tool %d: %v", i, err)
			}
			list[i] = v
		}
		tools = jinja.NewList(list)
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	data := map[string]any{
		"messages":              jinja.NewList(msgs),
		"tools":                 tools,
		"documents":             nil,
		"add_generation_prompt": opts.AddGenerationPrompt,
		"bos_token":             opts.BOS,
		tojsonIndentFn:          tojsonIndent,
		"eos_token":             opts.EOS,
		"strftime_now": jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			if len(args) != 1 || !args[0].IsString() {
				return jinja.Undefined(), fmt.Errorf("strftime_now: want one format string")
			}
			return jinja.NewString(strftime(now, args[0].AsString())), nil
		}),
	}
	for k, v := range opts.Vars {
		if raw, ok := v.(json.RawMessage); ok {
			jv, err := JSONValue(raw)
			if err != nil {
				return "", fmt.Errorf("chat template: variable %s: %v", k, err)
			}
			v = jv
		}
		data[k] = v
	}
	vals := make(map[string]jinja.Value, len(data))
	for k, v := range data {
		if jv, ok := v.(jinja.Value); ok {
			vals[k] = jv
		} else {
			vals[k] = jinja.FromGoValue(v)
		}
	}
	out, err := tpl.RenderValues(vals)
	if err != nil {
		return "", fmt.Errorf("chat template: %v", err)
	}
	return out, nil
}
