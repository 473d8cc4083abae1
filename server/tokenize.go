package server

import (
	"net/http"

	"github.com/archc/archc/rt"
)

// tokenizeRequest is POST /tokenize, as vLLM has it: a prompt, or chat
// messages rendered with the chat template.
type tokenizeRequest struct {
	Model               string    `json:"model"`
	Prompt              *string   `json:"prompt"`
	Messages            []message `json:"messages"`
	AddSpecialTokens    *bool     `json:"add_special_tokens"`    // prompt: default true (BOS if the model adds one)
	AddGenerationPrompt *bool     `json:"add_generation_prompt"` // messages: only true (the default)
	ReturnTokenStrs     bool      `json:"return_token_strs"`
}

// tokenize answers {"count", "max_model_len", "tokens", "token_strs"}:
// the ids of the prompt (with the model's special tokens unless
// add_special_tokens is false), or of the messages as chat completions
// would prompt the model; token_strs (with return_token_strs) are the
// tokens as the vocabulary spells them.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) error {
	m, text, _, err := s.ready()
	if err != nil {
		return err
	}
	var req tokenizeRequest
	if err := decodeJSON(r, s.cfg.MaxBodyBytes, &req); err != nil {
		return err
	}
	if text == nil {
		return badRequest("", "the model has no tokenizer")
	}
	var ids []int32
	switch {
	case req.Prompt != nil && req.Messages != nil:
		return badRequest("messages", "give prompt or messages, not both")
	case req.Prompt != nil:
		special := req.AddSpecialTokens == nil || *req.AddSpecialTokens
		if ids, err = text.Tokenizer.Encode(*req.Prompt, special); err != nil {
			return badRequest("prompt", "%v", err)
		}
	case req.Messages != nil:
		if req.AddGenerationPrompt != nil && !*req.AddGenerationPrompt {
			return badRequest("add_generation_prompt", "add_generation_prompt: only true is supported (the prompt chat completions use)")
		}
		if req.AddSpecialTokens != nil && *req.AddSpecialTokens {
			return badRequest("add_special_tokens", "add_special_tokens: the chat template writes the special tokens; only false is supported with messages")
		}
		if ids, err = chatPrompt(text, req.Messages); err != nil {
			return err
		}
	default:
		return badRequest("prompt", "prompt (a string) or messages is required")
	}
	out := map[string]any{"count": len(ids), "max_model_len": m.MaxLen(), "tokens": nonNil(ids), "token_strs": nil}
	if req.ReturnTokenStrs {
		strs := make([]string, len(ids))
		for i, id := range ids {
			strs[i] = text.Tokenizer.TokenText(id)
		}
		out["token_strs"] = strs
	}
	writeJSON(w, out)
	return nil
}

func nonNil(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}

// detokenize answers {"prompt": TEXT} for {"tokens": [ids]}: the text of
// the ids as a completion would stream it (special tokens as their text).
func (s *Server) detokenize(w http.ResponseWriter, r *http.Request) error {
	_, text, _, err := s.ready()
	if err != nil {
		return err
	}
	var req struct {
		Model  string   `json:"model"`
		Tokens *[]int32 `json:"tokens"`
	}
	if err := decodeJSON(r, s.cfg.MaxBodyBytes, &req); err != nil {
		return err
	}
	if text == nil {
		return badRequest("", "the model has no tokenizer")
	}
	if req.Tokens == nil {
		return badRequest("tokens", "tokens (an array of token ids) is required")
	}
	for _, id := range *req.Tokens {
		if n := text.Tokenizer.VocabSize(); id < 0 || int(id) >= n {
			return badRequest("tokens", "token id %d is outside the vocabulary [0, %d)", id, n)
		}
	}
	writeJSON(w, map[string]any{"prompt": text.Tokenizer.Decode(*req.Tokens)})
	return nil
}

// echoText is a completion's echoed prompt: a text prompt as given (not
// the BOS the tokenizer adds), token ids decoded without a leading BOS.
func echoText(text *rt.Text, p *prompt, ids []int32) string {
	if p.Text != nil {
		return *p.Text
	}
	if b := text.Tokenizer.BOS(); len(ids) > 0 && b >= 0 && ids[0] == b {
		ids = ids[1:]
	}
	return text.Tokenizer.Decode(ids)
}
