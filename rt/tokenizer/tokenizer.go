// Package tokenizer turns text into token ids and back, identically to the
// Hugging Face tokenizers of the supported families.
//
// Two model kinds are implemented here (the core of the package):
//
//   - byte-level BPE (GPT-2, Llama 3, Qwen2, SmolLM, StarCoder, ...): text is
//     split by the family's pre-tokenizer regex (github.com/dlclark/regexp2,
//     which has the look-ahead these patterns need; onig.go rewrites what
//     Hugging Face's Oniguruma reads differently), bytes are mapped to the
//     GPT-2 byte alphabet and merged by merge rank;
//   - SentencePiece-style BPE (Llama 2, Phi-3, ...): spaces become "▁", a
//     "▁" is prepended, characters are merged by score (GGUF) or by merge
//     rank (tokenizer.json), with byte fallback to <0xXX> tokens.
//
// Tokenizers are built from a Hugging Face folder (FromHF) or from GGUF
// metadata (FromGGUF). Special and added tokens are matched in the text
// first (leftmost-longest, as Hugging Face does) and never split.
package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// kind is the tokenization algorithm.
type kind int

const (
	byteBPE   kind = iota // byte-level BPE, merges by rank
	spmScores             // SentencePiece BPE, merges by vocabulary score (GGUF "llama")
	spmMerges             // SentencePiece BPE, merges by rank (tokenizer.json with byte_fallback)
)

// addedToken is a token matched verbatim in the input text.
type addedToken struct {
	content       string
	id            int32
	special       bool
	lstrip        bool
	rstrip        bool
	normalizedOff bool
}

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
	added  []addedToken // matched in text, longest first
	first  [256][]int   // indices into added by first byte
	isAdd  []bool       // id is an added/special token: decoded verbatim

	normalize  func(string) string // nil: identity
	pre        []splitter
	ignoreMrg  bool // a whole pre-token found in the vocabulary is emitted as is
	byteFallbk bool
	unk        int32
	byteTok    [256]int32 // ids of <0xXX>, -1 if absent

	spacePrefix  bool // SentencePiece: prepend "▁" to each text segment
	stripDecoded bool // SentencePiece: drop the leading space when decoding

	bos            int32
	eos            []int32
	addBOS, addEOS bool
}

// splitter is one pre-tokenization step. Either split splits every piece
// further, or toAlphabet maps every piece to the GPT-2 byte alphabet (the
// mapping of Hugging Face's ByteLevel pre-tokenizer): steps after it see
// the mapped text, as in a Hugging Face Sequence. Byte-level models whose
// steps have no mapping step are mapped after the last step.
type splitter struct {
	split      func(pieces []string) []string
	toAlphabet bool
}

// BOS returns the beginning-of-sequence token id, or -1 if the model has none.
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS returns the end-of-sequence token ids (the first is the tokenizer's
// eos_token; more come from the model's configuration), or nil.
func (t *Tokenizer) EOS() []int32 { return append([]int32(nil), t.eos...) }

// AddsBOS reports whether Encode with addSpecial prepends BOS.
func (t *Tokenizer) AddsBOS() bool { return t.addBOS && t.bos >= 0 }

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
// the text (such as "<|im_start|>") become their ids. With addSpecial, BOS
// and EOS are added as the model's configuration says (BOS is not doubled
// when the text already starts with it).
func (t *Tokenizer) Encode(text string, addSpecial bool) ([]int32, error) {
	if t == nil {
		return nil, fmt.Errorf("tokenizer: Encode on a nil tokenizer")
	}
	var ids []int32
	for _, seg := range t.splitAdded(text) {
		if seg.tok >= 0 {
			ids = append(ids, seg.tok)
			continue
		}
		ids = t.encodeText(seg.text, ids)
	}
	if addSpecial {
		if t.addBOS && t.bos >= 0 && (len(ids) == 0 || ids[0] != t.bos) {
			ids = append([]int32{t.bos}, ids...)
		}
		if t.addEOS && len(t.eos) > 0 {
			ids = append(ids, t.eos[0])
		}
	}
	return ids, nil
}

// segment is a piece of input: plain text, or an added token (tok >= 0).
type segment struct {
	text string
	tok  int32
}

// splitAdded splits text at added tokens, leftmost-longest, applying their
// lstrip/rstrip (which swallow the whitespace next to them).
func (t *Tokenizer) splitAdded(text string) []segment {
	if len(t.added) == 0 {
		return []segment{{text: text, tok: -1}}
	}
	var segs []segment
	start := 0 // start of pending plain text
	for i := 0; i < len(text); {
		var m *addedToken
		for _, k := range t.first[text[i]] {
			if a := &t.added[k]; strings.HasPrefix(text[i:], a.content) {
				m = a // longest first
				break
			}
		}
		if m == nil {
			_, w := utf8.DecodeRuneInString(text[i:])
			i += w
			continue
		}
		plain := text[start:i]
		if m.lstrip {
			plain = strings.TrimRight(plain, " \t\n\r\v\f")
		}
		if plain != "" {
			segs = append(segs, segment{text: plain, tok: -1})
		}
		segs = append(segs, segment{tok: m.id})
		i += len(m.content)
		if m.rstrip {
			for i < len(text) && strings.IndexByte(" \t\n\r\v\f", text[i]) >= 0 {
				i++
			}
		}
		start = i
	}
	if start < len(text) {
		segs = append(segs, segment{text: text[start:], tok: -1})
	}
	return segs
}

// encodeText encodes text that holds no added tokens.
func (t *Tokenizer) encodeText(text string, ids []int32) []int32 {
	for _, p := range t.preTokenize(text) {
		ids = t.bpe(p, ids)
	}
	return ids
}

// preTokenize normalizes text that holds no added tokens and splits it
// into the words BPE merges, in the model's alphabet (the GPT-2 byte
// alphabet for byte-level BPE); it returns no empty words.
func (t *Tokenizer) preTokenize(text string) []string {
	if text == "" {
		return nil
	}
	if t.normalize != nil {
		text = t.normalize(text)
	}
	if t.kind != byteBPE && t.spacePrefix {
		text = " " + text
	}
	if t.kind != byteBPE {
		text = strings.ReplaceAll(text, " ", "▁")
	}
	pieces := []string{text}
	mapped := t.kind != byteBPE
	for _, s := range t.pre {
		if s.toAlphabet {
			if !mapped {
				for i, p := range pieces {
					pieces[i] = bytesToAlphabet(p)
				}
				mapped = true
			}
			continue
		}
		pieces = s.split(pieces)
	}
	out := pieces[:0]
	for _, p := range pieces {
		if p == "" {
			continue
		}
		if !mapped {
			p = bytesToAlphabet(p)
		}
		out = append(out, p)
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
