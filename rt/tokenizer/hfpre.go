package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizers of tokenizer.json ("pre_tokenizer"), as Hugging Face
// tokenizers runs them (tokenizers/src/pre_tokenizers). Each entry builds
// the splitter steps of one type:
//
//	Sequence           the steps of each child, in order
//	ByteLevel          [" " before each piece,] GPT-2 regex split, byte alphabet
//	Split              regex or string pattern, with behavior and invert
//	Metaspace          " " → replacement, prepended per prepend_scheme, split before it
//	Digits             runs of digits (or each digit) apart
//	Punctuation        each punctuation character, with behavior
//	Whitespace         \w+ and [^\w\s]+ runs; whitespace dropped
//	WhitespaceSplit    split at whitespace, dropped
//	BertPreTokenizer   split at whitespace (dropped), each punctuation character apart
//	CharDelimiterSplit split at one character, dropped
//	FixedLength        pieces of length characters
//	UnicodeScripts     split where the script changes
var hfPreTokenizers = map[string]func(t *Tokenizer, n *hfNode, byteLevel *bool) ([]splitter, error){
	"ByteLevel": hfPreByteLevel,
	"Split":     hfPreSplit,
	"Metaspace": hfPreMetaspace,
	"Digits": func(_ *Tokenizer, n *hfNode, _ *bool) ([]splitter, error) {
		return one(digitSplitter(n.Individual)), nil
	},
	"Punctuation":     hfPrePunctuation,
	"Whitespace":      func(*Tokenizer, *hfNode, *bool) ([]splitter, error) { return one(runeSplitter(wordClass, nil)), nil },
	"WhitespaceSplit": func(*Tokenizer, *hfNode, *bool) ([]splitter, error) { return one(runeSplitter(spaceClass, nil)), nil },
	"BertPreTokenizer": func(*Tokenizer, *hfNode, *bool) ([]splitter, error) {
		return one(runeSplitter(bertClass, isPunctClass)), nil
	},
	"CharDelimiterSplit": hfPreCharDelimiter,
	"FixedLength":        hfPreFixedLength,
	"UnicodeScripts":     func(*Tokenizer, *hfNode, *bool) ([]splitter, error) { return one(scriptSplitter()), nil },
}

func init() { hfPreTokenizers["Sequence"] = hfPreSequence } // it refers to the table

func one(s splitter) []splitter { return []splitter{s} }

// hfPre returns the steps of a pre_tokenizer node; byteLevel is set when a
// ByteLevel step maps the text to the byte alphabet.
func (t *Tokenizer) hfPre(raw json.RawMessage, byteLevel *bool) ([]splitter, error) {
	n, err := parseNode(raw)
	if err != nil || n == nil {
		return nil, err
	}
	build, ok := hfPreTokenizers[n.Type]
	if !ok {
		return nil, fmt.Errorf("%q is not supported (supported: %s)", n.Type, strings.Join(sortedKeys(hfPreTokenizers), ", "))
	}
	return build(t, n, byteLevel)
}

func hfPreSequence(t *Tokenizer, n *hfNode, byteLevel *bool) ([]splitter, error) {
	var out []splitter
	for _, r := range n.Pretokenizers {
		s, err := t.hfPre(r, byteLevel)
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
}

// hfPreByteLevel: per piece, a space is prepended (add_prefix_space), the
// piece is split by the GPT-2 pattern (use_regex), then mapped to the byte
// alphabet; later steps see the mapped text.
func hfPreByteLevel(_ *Tokenizer, n *hfNode, byteLevel *bool) ([]splitter, error) {
	*byteLevel = true
	var out []splitter
	if n.AddPrefixSpace != nil && *n.AddPrefixSpace {
		out = append(out, splitter{split: prefixSpace})
	}
	if n.UseRegex == nil || *n.UseRegex {
		s, err := regexSplitter(patGPT2, splitIsolated, false)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return append(out, alphabetStep), nil
}

func hfPreSplit(_ *Tokenizer, n *hfNode, _ *bool) ([]splitter, error) {
	pat, ok := n.Pattern["Regex"]
	if !ok {
		s, ok2 := n.Pattern["String"]
		if !ok2 {
			return nil, fmt.Errorf("Split without a pattern")
		}
		pat = regexpQuote(s)
	}
	b, err := behaviorOf(n)
	if err != nil {
		return nil, err
	}
	s, err := regexSplitter(pat, b, n.Invert)
	return one(s), err
}

func hfPrePunctuation(_ *Tokenizer, n *hfNode, _ *bool) ([]splitter, error) {
	b, err := behaviorOf(n)
	if err != nil {
		return nil, err
	}
	s, err := regexSplitter(patPunct, b, false)
	return one(s), err
}

// behaviorOf reads a Split or Punctuation behavior (default Isolated).
func behaviorOf(n *hfNode) (splitBehavior, error) {
	if n.Behavior == "" {
		return splitIsolated, nil
	}
	b, ok := splitBehaviors[n.Behavior]
	if !ok {
		return 0, fmt.Errorf("%s behavior %q is not supported (supported: %s)", n.Type, n.Behavior, strings.Join(sortedKeys(splitBehaviors), ", "))
	}
	return b, nil
}

// metaspaceScheme is a Metaspace node's prepend_scheme; files written before
// it existed say add_prefix_space (default true) instead.
func metaspaceScheme(n *hfNode) string {
	if n.PrependScheme != "" {
		return n.PrependScheme
	}
	if n.AddPrefixSpace != nil && !*n.AddPrefixSpace {
		return "never"
	}
	return "always"
}

func hfPreMetaspace(_ *Tokenizer, n *hfNode, _ *bool) ([]splitter, error) {
	repl := n.Replacement
	if repl == "" {
		repl = "▁"
	}
	if utf8.RuneCountInString(repl) != 1 {
		return nil, fmt.Errorf("Metaspace replacement %q is not one character", repl)
	}
	scheme := metaspaceScheme(n)
	if scheme != "always" && scheme != "first" && scheme != "never" {
		return nil, fmt.Errorf("Metaspace prepend_scheme %q is not supported (supported: always, first, never)", scheme)
	}
	return one(metaspaceSplitter(repl, scheme, n.Split == nil || *n.Split)), nil
}

func hfPreCharDelimiter(_ *Tokenizer, n *hfNode, _ *bool) ([]splitter, error) {
	d, w := utf8.DecodeRuneInString(n.Delimiter)
	if w == 0 || w != len(n.Delimiter) {
		return nil, fmt.Errorf("CharDelimiterSplit delimiter %q is not one character", n.Delimiter)
	}
	return one(runeSplitter(func(r rune) int {
		if r == d {
			return 0
		}
		return 1
	}, nil)), nil
}

func hfPreFixedLength(_ *Tokenizer, n *hfNode, _ *bool) ([]splitter, error) {
	size := 5 // tokenizers' default
	if n.Length != nil {
		size = *n.Length
	}
	if size <= 0 {
		return nil, fmt.Errorf("FixedLength length %d is not positive", size)
	}
	return one(spanSplitter(splitIsolated, func(rs []rune, spans []span) []span {
		for i := 0; i < len(rs); i += size {
			spans = append(spans, span{i, min(i+size, len(rs)), false})
		}
		return spans
	})), nil
}

// Rune classes of the whitespace splitters; 0 is dropped whitespace.
func spaceClass(r rune) int {
	if isWhiteSpace(r) {
		return 0
	}
	return 1
}

// wordClass: Whitespace's \w+|[^\w\s]+ (Rust's Unicode \w and \s).
func wordClass(r rune) int {
	switch {
	case isWordRune(r):
		return 1
	case isWhiteSpace(r):
		return 0
	}
	return 2
}

// bertClass: whitespace (Rust's char::is_whitespace), punctuation (ASCII
// punctuation or Unicode P) and the rest.
func bertClass(r rune) int {
	switch {
	case isWhiteSpace(r):
		return 0
	case r < 0x80 && unicode.IsPunct(r) || r < 0x80 && unicode.IsSymbol(r) || unicode.Is(unicode.P, r):
		return 2
	}
	return 1
}

func isPunctClass(c int) bool { return c == 2 }

// scriptSplitter is UnicodeScripts: a piece is cut before each character
// whose script differs from the last script seen. A space has no script
// (it joins the run before it, and leading spaces are dropped, as in
// tokenizers); Hiragana, Katakana and the prolonged sound mark (U+30FC)
// count as Han.
func scriptSplitter() splitter {
	scriptOf := func(r rune) string {
		switch {
		case r == 0x30FC:
			return "Han"
		case r == ' ':
			return "Any"
		case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
			return "Han"
		case unicode.Is(unicode.Latin, r):
			return "Latin"
		case unicode.Is(unicode.Common, r):
			return "Common"
		}
		for name, tab := range unicode.Scripts {
			if unicode.Is(tab, r) {
				return name
			}
		}
		return "Unknown"
	}
	return splitter{split: func(pieces []piece) []piece {
		var out []piece
		for _, p := range pieces {
			var cuts []int
			last := ""
			for i, r := range p.s {
				sc := scriptOf(r)
				if sc != "Any" && sc != last {
					cuts = append(cuts, i)
				}
				if sc != "Any" {
					last = sc
				}
			}
			cuts = append(cuts, len(p.s))
			for k := 0; k+1 < len(cuts); k++ {
				out = append(out, piece{s: p.s[cuts[k]:cuts[k+1]], atStart: p.atStart && cuts[k] == 0})
			}
		}
		return out
	}}
}

// regexpQuote writes s as an Oniguruma pattern matching s literally.
func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$#`, r) || r == ' ' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
