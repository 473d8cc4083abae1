package chat

import (
	"encoding/json"
	"strings"
	"time"
)

// probeTool is the function definition RendersTools offers a template.
var probeTool = json.RawMessage(`{"type": "function", "function": {"name": "archc_probe_tool", "description": "Probe.", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}}`)

// RendersTools reports whether template renders the `tools` it is given,
// as transformers' apply_chat_template would pass them: it renders one
// user turn with and without a probe tool and compares the prompts. A
// template whose render fails only with the tool reads tools too. When
// both renders fail (a template that wants another conversation shape),
// it falls back to whether the source names `tools`.
func RendersTools(template string) bool {
	msgs := []Message{{Role: "user", Content: "Hi"}}
	opts := Options{AddGenerationPrompt: true, BOS: "<s>", EOS: "</s>", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	plain, perr := Render(template, msgs, opts)
	opts.Tools = []json.RawMessage{probeTool}
	with, werr := Render(template, msgs, opts)
	switch {
	case perr == nil && werr == nil:
		return plain != with
	case perr == nil:
		return true
	}
	return strings.Contains(template, "tools")
}
