// Package tokenizer turns text into token ids and back, identically to the
// Hugging Face tokenizers of the supported families (and, for GGUF files,
// to llama.cpp).
//
// Encoding runs the stages Hugging Face tokenizers runs:
//
//  1. added tokens that are matched in the raw text (special tokens; GGUF
//     control and user-defined tokens) split the text first, with their
//     lstrip, rstrip and single_word flags (added.go);
//  2. each remaining piece is normalized (hfnorm.go), then split again at
//     the added tokens matched in normalized text (normalized: true);
//  3. the pre-tokenizer splits each piece into words (pretok.go for GGUF's
//     tokenizer.ggml.pre, hfpre.go for tokenizer.json), with regexes run by
//     github.com/dlclark/regexp2 (onig.go rewrites what Oniguruma reads
//     differently);
//  4. the model turns each word into ids:
//     - byte-level BPE (GPT-2, Llama 3, Qwen2, SmolLM, StarCoder, ...):
//     bytes are mapped to the GPT-2 byte alphabet and merged by rank;
//     - BPE over the text itself (SentencePiece-style tokenizer.json,
//     Gemma 4 GGUF): merged by rank, with byte fallback to <0xXX> tokens;
//     - SentencePiece BPE by score (GGUF "llama": Llama 2, Phi-3, ...);
//     - a SentencePiece tokenizer.model (sentencepiece.go), encoded by
//     github.com/eliben/go-sentencepiece;
//  5. with addSpecial, the special tokens the model adds (BOS, EOS) go
//     around the ids (tokenizer.json's post-processor, GGUF's
//     add_bos_token / add_eos_token or llama.cpp's default for the model).
//
// Tokenizers are built from a Hugging Face folder (FromHF) or from GGUF
// metadata (FromGGUF).
package tokenizer

import (
	"fmt"
	"slices"
	"strings"

	sentencepiece "github.com/eliben/go-sentencepiece"
)

// kind is the tokenization algorithm.
type kind int

const (
	byteBPE   kind = iota // byte-level BPE, merges by rank
	spmScores             // SentencePiece BPE, merges by vocabulary score (GGUF "llama")
	spmMerges             // BPE over the text's characters, merges by rank, byte fallback
	spmModel              // a SentencePiece tokenizer.model (go-sentencepiece)
)

// mergeVal is the rank of a merge and the id of the token it produces.
type mergeVal struct {
	rank int32
	id   int32
}

// Tokenizer encodes text to token ids and decodes ids to text. It is safe
// for concurrent use once built.
type Tokenizer struct {
	source string // file it was read from, for messages
	kind   kind

	tokens []string         // id -> token text (model alphabet)
	vocab  map[string]int32 // token text -> id
	merges map[uint64]mergeVal
	scores []float32
	isAdd  []bool // id is an added/special token: decoded verbatim

	added     addedSet // matched in the raw text
	addedNorm addedSet // matched in normalized text (Hugging Face normalized: true)

	normalize  func(string) string // nil: identity
	normMapped bool                // normalize maps to the byte alphabet (Hugging Face's ByteLevel normalizer)
	pre        []splitter
	ignoreMrg  bool // a whole pre-token found in the vocabulary is emitted as is
	byteFallbk bool
	fuseUnk    bool // consecutive unknown characters give one unk id
	unk        int32
	byteTok    [256]int32 // ids of <0xXX>, -1 if absent

	spacePrefix   bool // prepend " " to each text segment (GGUF add_space_prefix)
	escapeWS      bool // then " " becomes "▁" (GGUF SentencePiece and Gemma 4)
	wholeNewlines bool // a run of newlines found in the vocabulary is one token (llama.cpp's Gemma 4)
	stripDecoded  bool // drop the leading space of the first decoded token

	sp            *sentencepiece.Processor // kind spmModel
	spDummyPrefix bool                     // SentencePiece add_dummy_prefix
	spTrimWS      bool                     // SentencePiece remove_extra_whitespaces

	bos            int32
	eos            int32   // the tokenizer's own eos_token, -1 for none
	prefix, suffix []int32 // the special tokens Encode adds with addSpecial
}

// splitter is one pre-tokenization step. Either split splits every piece
// further, or toAlphabet maps every piece to the GPT-2 byte alphabet (the
// mapping of Hugging Face's ByteLevel pre-tokenizer): steps after it see
// the mapped text, as in a Hugging Face Sequence. Byte-level models whose
// steps have no mapping step are mapped after the last step.
type splitter struct {
	split      func(pieces []piece) []piece
	toAlphabet bool
}

// piece is a part of the text being pre-tokenized. atStart says that it
// begins at the start of the input (Hugging Face's Metaspace with
// prepend_scheme "first" prepends only there).
type piece struct {
	s       string
	atStart bool
}

// BOS returns the beginning-of-sequence token id, or -1 if the model has none.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS returns the tokenizer's end-of-sequence token (transformers'
// tokenizer.eos_token: tokenizer_config.json's eos_token, or the one
// special token a tokenizer.json post-processor appends; a GGUF file's
// tokenizer.ggml.eos_token_id), or -1 if it has none: what a chat template
// reads as eos_token and add_eos_token appends. The tokens that end
// generation are the model's, from one source (driver.EOS:
// generation_config.json or config.json, and a GGUF file's end-of-turn
// tokens; rt.Program.EOS), not the tokenizer's.
func (t *Tokenizer) EOS() int32 { return t.eos }

// AddsBOS reports whether Encode with addSpecial prepends BOS.
func (t *Tokenizer) AddsBOS() bool { return t.bos >= 0 && slices.Contains(t.prefix, t.bos) }

// SpecialTokens returns the ids Encode with addSpecial puts before and
// after the text's ids (for example [BOS] and none).
func (t *Tokenizer) SpecialTokens() (before, after []int32) {
	return slices.Clone(t.prefix), slices.Clone(t.suffix)
}

// VocabSize returns the number of token ids (the largest id plus one).
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// TokenText returns the text of token id as stored in the vocabulary (for
// byte-level BPE in the GPT-2 byte alphabet, for SentencePiece with "▁"),
// or "" if id is out of range.
func (t *Tokenizer) TokenText(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// TokenID returns the id of the token whose vocabulary text is s.
func (t *Tokenizer) TokenID(s string) (int32, bool) {
	id, ok := t.vocab[s]
	return id, ok
}

// Encode returns the token ids of text. Special and added tokens written in
// the text (such as "<|im_start|>") become their ids. With addSpecial, the
// special tokens the model adds by default (BOS, EOS) are added, as the
// reference implementations do (a BOS written in the text is kept, so it
// then appears twice, as in llama.cpp and Hugging Face).
func (t *Tokenizer) Encode(text string, addSpecial bool) (ids []int32, err error) {
	if t == nil {
		return nil, fmt.Errorf("tokenizer: Encode on a nil tokenizer")
	}
	if t.kind == spmModel {
		defer recoverSP(&err)
	}
	if addSpecial {
		ids = append(ids, t.prefix...)
	}
	for _, seg := range t.added.split(text) {
		if seg.tok >= 0 {
			ids = append(ids, seg.tok)
			continue
		}
		ids = t.encodeText(seg.text, seg.start == 0, ids)
	}
	if addSpecial {
		ids = append(ids, t.suffix...)
	}
	return ids, nil
}

// encodeText encodes text that holds no raw-matched added tokens; atStart
// says it begins the input.
func (t *Tokenizer) encodeText(text string, atStart bool, ids []int32) []int32 {
	if t.kind == spmModel {
		return t.encodeSentencePiece(text, ids)
	}
	if t.normalize != nil {
		text = t.normalize(text)
	}
	for _, seg := range t.addedNorm.split(text) {
		if seg.tok >= 0 {
			ids = append(ids, seg.tok)
			continue
		}
		for _, w := range t.preTokenize(seg.text, atStart && seg.start == 0) {
			ids = t.bpe(w, ids)
		}
	}
	return ids
}

// preTokenize splits normalized text that holds no added tokens into the
// words BPE merges, in the model's alphabet (the GPT-2 byte alphabet for
// byte-level BPE); it returns no empty words.
func (t *Tokenizer) preTokenize(text string, atStart bool) []string {
	if text == "" {
		return nil
	}
	if t.spacePrefix {
		text = " " + text
	}
	if t.escapeWS {
		text = strings.ReplaceAll(text, " ", "▁")
	}
	pieces := []piece{{s: text, atStart: atStart}}
	mapped := t.kind != byteBPE || t.normMapped
	for _, s := range t.pre {
		if s.toAlphabet {
			if !mapped {
				for i, p := range pieces {
					pieces[i].s = bytesToAlphabet(p.s)
				}
				mapped = true
			}
			continue
		}
		pieces = s.split(pieces)
	}
	out := make([]string, 0, len(pieces))
	for _, p := range pieces {
		if p.s == "" {
			continue
		}
		if !mapped {
			p.s = bytesToAlphabet(p.s)
		}
		out = append(out, p.s)
	}
	return out
}

// Decode returns the text of ids. Special tokens are written as their text.
// Bytes that do not form valid UTF-8 become U+FFFD.
func (t *Tokenizer) Decode(ids []int32) string {
	s := t.NewStream()
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(s.Add(id))
	}
	b.WriteString(s.Flush())
	return b.String()
}

// tokenBytes returns the bytes token id stands for.
func (t *Tokenizer) tokenBytes(id int32) []byte {
	if id < 0 || int(id) >= len(t.tokens) {
		return nil
	}
	s := t.tokens[id]
	if t.isAdd[id] {
		return []byte(s)
	}
	if t.kind == byteBPE {
		return alphabetToBytes(s)
	}
	if b, ok := byteToken(s); ok {
		return []byte{b}
	}
	return []byte(strings.ReplaceAll(s, "▁", " "))
}

// byteToken parses "<0xXX>".
func byteToken(s string) (byte, bool) {
	if len(s) != 6 || s[:3] != "<0x" || s[5] != '>' {
		return 0, false
	}
	var v byte
	for _, c := range []byte(s[3:5]) {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | (c - '0')
		case c >= 'A' && c <= 'F':
			v = v<<4 | (c - 'A' + 10)
		case c >= 'a' && c <= 'f':
			v = v<<4 | (c - 'a' + 10)
		default:
			return 0, false
		}
	}
	return v, true
}

// Stream decodes ids one at a time. Add never returns part of a multi-byte
// character: incomplete UTF-8 is held until its last byte arrives.
type Stream struct {
	t       *Tokenizer
	pending []byte
	first   bool
}

// NewStream returns a streaming decoder.
func (t *Tokenizer) NewStream() *Stream { return &Stream{t: t, first: true} }

// Add decodes one more token and returns the text that is now complete.
func (s *Stream) Add(id int32) string {
	b := s.t.tokenBytes(id)
	if s.first {
		s.first = false
		if s.t.stripDecoded && int(id) < len(s.t.isAdd) && id >= 0 && !s.t.isAdd[id] && len(b) > 0 && b[0] == ' ' {
			b = b[1:]
		}
	}
	s.pending = append(s.pending, b...)
	out, rest := lossy(s.pending, false)
	s.pending = append(s.pending[:0], rest...)
	return out
}

// Flush returns the held bytes of an unfinished character as U+FFFD.
func (s *Stream) Flush() string {
	out, _ := lossy(s.pending, true)
	s.pending = s.pending[:0]
	return out
}

// lossy converts p to a string the way Rust's String::from_utf8_lossy does
// (each maximal invalid prefix of a sequence becomes one U+FFFD). Unless
// final, an incomplete but so far valid sequence at the end is returned as
// rest instead.
func lossy(p []byte, final bool) (string, []byte) {
	var b strings.Builder
	i := 0
	for i < len(p) {
		c := p[i]
		if c < 0x80 {
			b.WriteByte(c)
			i++
			continue
		}
		n, lo, hi := 0, byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			n = 2
		case c == 0xE0:
			n, lo = 3, 0xA0
		case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
			n = 3
		case c == 0xED:
			n, hi = 3, 0x9F
		case c == 0xF0:
			n, lo = 4, 0x90
		case c >= 0xF1 && c <= 0xF3:
			n = 4
		case c == 0xF4:
			n, hi = 4, 0x8F
		}
		if n == 0 {
			b.WriteString("\uFFFD")
			i++
			continue
		}
		k := 1 // bytes of the sequence that are valid so far
		for k < n && i+k < len(p) {
			cc := p[i+k]
			if k == 1 && (cc < lo || cc > hi) || k > 1 && (cc < 0x80 || cc > 0xBF) {
				break
			}
			k++
		}
		switch {
		case k == n:
			b.Write(p[i : i+n])
		case i+k == len(p) && !final:
			return b.String(), p[i:]
		default:
			b.WriteString("\uFFFD")
		}
		i += k
	}
	return b.String(), nil
}
