package chat

import "slices"

// gemmaTemplate is the turn format of Google's Gemma chat models (Gemma 1
// to 3): "<start_of_turn>user\n…<end_of_turn>\n", the assistant's role
// written "model", a system turn folded into the first user turn, and
// "<start_of_turn>model\n" as the generation prompt.
const gemmaTemplate = `{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
  {%- set first = messages[0]['content'] + '\n\n' -%}
  {%- set turns = messages[1:] -%}
{%- else -%}
  {%- set first = '' -%}
  {%- set turns = messages -%}
{%- endif -%}
{%- for m in turns -%}
  {%- set role = 'model' if m['role'] == 'assistant' else m['role'] -%}
  {{- '<start_of_turn>' + role + '\n' + (first if loop.first else '') + (m['content'] | trim) + '<end_of_turn>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
  {{- '<start_of_turn>model\n' -}}
{%- endif -%}`

// defaults are the built-in chat templates, by the GGUF architectures
// (general.architecture) whose chat models all use one turn format.
var defaults = []struct {
	archs    []string
	template string
}{
	{[]string{"gemma", "gemma2", "gemma3"}, gemmaTemplate},
}

// Default returns the built-in chat template for a GGUF architecture, for
// files that carry no tokenizer.chat_template; ok is false for families
// without one fixed turn format (give --chat-template FILE then).
func Default(ggufArch string) (template string, ok bool) {
	for _, d := range defaults {
		if slices.Contains(d.archs, ggufArch) {
			return d.template, true
		}
	}
	return "", false
}
