package rt

import (
	"fmt"
	"github.com/archc/archc/formats/option"

	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/rt/chat"
	"github.com/archc/archc/rt/tokenizer"
)

// Text is a model's tokenizer and chat template: what turns a prompt into
// token ids and generated ids back into text.
type Text struct {
	Tokenizer    *tokenizer.Tokenizer
	ChatTemplate string // "" when the model has none
	// PartsContent: the model reads images (Model.Text sets it for a
	// Program with encoders), so every message's content reaches the chat
	// template as a list of parts, as transformers' processors pass it
	// (Messages); a text-only message is one text part. Vision models'
	// templates (SmolVLM's, LLaVA's) read only lists: a string content
	// rendered as nothing there, dropping the message's text.
	PartsContent bool
}

// Messages returns msgs as the model's chat template takes them: with
// PartsContent, each message with text content and no parts gets that
// text as its one text part; otherwise msgs unchanged.
func (t *Text) Messages(msgs []chat.Message) []chat.Message {
	if !t.PartsContent {
		return msgs
	}
	out := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		if m.Parts == nil && m.Content != "" {
			m.Parts = []chat.Part{{Type: chat.PartText, Text: m.Content}}
		}
		out[i] = m
	}
	return out
}

// LoadText reads the tokenizer and chat template of a model: from GGUF
// metadata for a .gguf file, else from tokenizer.json / tokenizer_config.json
// in a Hugging Face folder. Errors name the file and what is missing.
func LoadText(path string) (*Text, error) {
	var t Text
	var err error
	if gguf.IsFile(path) {
		gf, err := gguf.Open(path)
		if err != nil {
			return nil, err
		}
		return TextFromGGUF(gf)
	}
	if t.Tokenizer, err = tokenizer.FromHF(path); err != nil {
		return nil, err
	}
	t.ChatTemplate, _ = chat.FromHF(path)
	return &t, nil
}

// TextFromGGUF reads the tokenizer and chat template from an opened GGUF
// file's metadata (plan with the same file so that its header is read
// once; Program.GGUF). Errors as LoadText.
func TextFromGGUF(gf *gguf.File) (*Text, error) {
	var t Text
	var err error
	if t.Tokenizer, err = tokenizer.FromGGUFFile(gf); err != nil {
		return nil, err
	}
	if v, ok := gf.Value("tokenizer.chat_template"); ok {
		t.ChatTemplate, _ = v.(string)
	}
	return &t, nil
}

// EncodePrompt returns the prompt's token ids. As a chat (useChat), the
// prompt is the user turn after an optional system turn, rendered with the
// chat template and add_generation_prompt, then tokenized without adding
// special tokens (as transformers' apply_chat_template); otherwise the
// prompt is tokenized with the model's special tokens (BOS if it adds one).
func (t *Text) EncodePrompt(prompt string, useChat bool, system string) ([]int32, error) {
	if !useChat {
		if system != "" {
			return nil, option.Errorf("System", nil, "a system prompt needs {Chat} (the chat template renders it)")
		}
		return t.Tokenizer.Encode(prompt, true)
	}
	if t.ChatTemplate == "" {
		return nil, option.Errorf("Chat", nil, "the model has no chat template (tokenizer_config.json chat_template or GGUF tokenizer.chat_template); leave {Chat} off")
	}
	var msgs []chat.Message
	if system != "" {
		msgs = append(msgs, chat.Message{Role: "system", Content: system})
	}
	msgs = append(msgs, chat.Message{Role: "user", Content: prompt})
	return t.EncodeChat(msgs)
}

// EncodeChat renders a conversation with the model's chat template and
// add_generation_prompt, and tokenizes it without adding special tokens
// (as transformers' apply_chat_template). Errors: no chat template, a
// template error, a tokenizer error.
func (t *Text) EncodeChat(msgs []chat.Message) ([]int32, error) {
	if t.ChatTemplate == "" {
		return nil, fmt.Errorf("the model has no chat template (tokenizer_config.json chat_template or GGUF tokenizer.chat_template)")
	}
	text, err := chat.Render(t.ChatTemplate, t.Messages(msgs), t.chatOptions())
	if err != nil {
		return nil, err
	}
	return t.Tokenizer.Encode(text, false)
}

// chatOptions are the template variables a generation prompt renders
// with: add_generation_prompt and the tokenizer's bos_token and eos_token.
func (t *Text) chatOptions() chat.Options {
	opts := chat.Options{AddGenerationPrompt: true}
	if b := t.Tokenizer.BOS(); b >= 0 {
		opts.BOS = t.Tokenizer.TokenText(b)
	}
	if eos := t.Tokenizer.EOS(); eos >= 0 {
		opts.EOS = t.Tokenizer.TokenText(eos)
	}
	return opts
}
