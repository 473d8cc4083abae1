package tokenizer

// TokenBytes returns the bytes token id stands for when decoded (a
// special token's text for added tokens), or nil if id is out of range.
// Grammar engines and logprob "bytes" need them: Decode of one token
// replaces incomplete UTF-8 with U+FFFD.
func (t *Tokenizer) TokenBytes(id int32) []byte { return t.tokenBytes(id) }

// IsSpecial reports whether id is a special (control) token such as
// <|im_end|> or [TOOL_CALLS]: an added token marked special (GGUF control
// tokens), which a grammar must name as a token, not match as text.
// Added tokens that are not special (Qwen's <tool_call>) are text.
func (t *Tokenizer) IsSpecial(id int32) bool {
	if id < 0 || int(id) >= len(t.isAdd) || !t.isAdd[id] {
		return false
	}
	for _, set := range []*addedSet{&t.added, &t.addedNorm} {
		for _, a := range set.toks {
			if a.id == id {
				return a.special
			}
		}
	}
	return false
}
