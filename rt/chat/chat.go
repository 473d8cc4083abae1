// Package chat renders Hugging Face chat templates (Jinja2) the way
// transformers' apply_chat_template does: trim_blocks and lstrip_blocks,
// loop controls, no autoescaping, and the globals transformers adds
// (raise_exception, strftime_now, a tojson filter that does not escape HTML).
//
// The Jinja engine is github.com/nikolalohinski/gonja/v2; this package adds
// the transformers conventions on top of it.
package chat

import (
	"fmt"
	"time"

	"github.com/ardanlabs/jinja"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Options are the variables a chat template sees besides messages.
type Options struct {
	// AddGenerationPrompt appends the header that starts an assistant turn.
	AddGenerationPrompt bool
	// BOS and EOS are the model's bos_token and eos_token strings.
	BOS, EOS string
	// Now is the time strftime_now formats; zero means time.Now().
	Now time.Time
	// Vars are extra template variables (e.g. "enable_thinking"); they
	// override the ones above.
	Vars map[string]any
}

// Render renders template for messages with opts.
func Render(template string, messages []Message, opts Options) (string, error) {
	tpl, err := jinja.Compile(template)
	if err != nil {
		return "", fmt.Errorf("chat template: %v", err)
	}
	msgs := make([]any, len(messages))
	for i, m := range messages {
		msgs[i] = map[string]any{"role": m.Role, "content": m.Content}
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	data := map[string]any{
		"messages":              msgs,
		"tools":                 nil,
		"documents":             nil,
		"add_generation_prompt": opts.AddGenerationPrompt,
		"bos_token":             opts.BOS,
		"eos_token":             opts.EOS,
		"strftime_now": jinja.NewCallable("strftime_now", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
			if len(args) != 1 || !args[0].IsString() {
				return jinja.Undefined(), fmt.Errorf("strftime_now: want one format string")
			}
			return jinja.NewString(strftime(now, args[0].AsString())), nil
		}),
	}
	for k, v := range opts.Vars {
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
