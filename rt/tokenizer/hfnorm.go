package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"
)

// The normalizers of tokenizer.json ("normalizer"), as Hugging Face
// tokenizers runs them (tokenizers/src/normalizers). Unicode normalization
// is golang.org/x/text/unicode/norm.
//
//	Sequence        each child in order
//	NFC NFD NFKC NFKD
//	Lowercase       Unicode lowercase, character by character
//	Strip           whitespace off the left and/or right end
//	StripAccents    combining marks (Unicode M) removed
//	Replace         every match of a string or regex pattern → content
//	Prepend         prepend to a non-empty text
//	ByteLevel       bytes → the GPT-2 byte alphabet
//	Nmt             control characters dropped, some spaces made " "
//	BertNormalizer  clean_text, handle_chinese_chars, strip_accents, lowercase
//	Precompiled     SentencePiece's charsmap; only an empty one (identity)
var hfNormalizers = map[string]func(n *hfNode) (func(string) string, error){
	"NFC":  func(*hfNode) (func(string) string, error) { return norm.NFC.String, nil },
	"NFD":  func(*hfNode) (func(string) string, error) { return norm.NFD.String, nil },
	"NFKC": func(*hfNode) (func(string) string, error) { return norm.NFKC.String, nil },
	"NFKD": func(*hfNode) (func(string) string, error) { return norm.NFKD.String, nil },
	"Lowercase": func(*hfNode) (func(string) string, error) {
		return lowercase, nil
	},
	"Strip":        hfStrip,
	"StripAccents": func(*hfNode) (func(string) string, error) { return stripMarks(unicode.M), nil },
	"Replace":      hfReplace,
	"Prepend": func(n *hfNode) (func(string) string, error) {
		p := n.Prepend
		return func(s string) string {
			if s == "" {
				return s
			}
			return p + s
		}, nil
	},
	"ByteLevel":      func(*hfNode) (func(string) string, error) { return bytesToAlphabet, nil },
	"Nmt":            func(*hfNode) (func(string) string, error) { return nmt, nil },
	"BertNormalizer": hfBert,
	"Precompiled": func(n *hfNode) (func(string) string, error) {
		if n.Charsmap != nil && *n.Charsmap != "" {
			return nil, fmt.Errorf("Precompiled with a charsmap is not supported (SentencePiece's normalization table)")
		}
		return func(s string) string { return s }, nil
	},
}

// hfNormalizer returns the normalizer of a normalizer node (nil for none),
// and whether it maps text to the byte alphabet.
func hfNormalizer(raw json.RawMessage) (func(string) string, bool, error) {
	n, err := parseNode(raw)
	if err != nil || n == nil {
		return nil, false, err
	}
	var steps []func(string) string
	byteLevel := false
	var add func(n *hfNode) error
	add = func(n *hfNode) error {
		if n.Type == "Sequence" {
			for _, r := range n.Normalizers {
				c, err := parseNode(r)
				if err != nil {
					return err
				}
				if c != nil {
					if err := add(c); err != nil {
						return err
					}
				}
			}
			return nil
		}
		build, ok := hfNormalizers[n.Type]
		if !ok {
			return fmt.Errorf("%q is not supported (supported: Sequence, %s)", n.Type, strings.Join(sortedKeys(hfNormalizers), ", "))
		}
		f, err := build(n)
		if err != nil {
			return err
		}
		byteLevel = byteLevel || n.Type == "ByteLevel"
		steps = append(steps, f)
		return nil
	}
	if err := add(n); err != nil {
		return nil, false, err
	}
	if len(steps) == 0 {
		return nil, false, nil
	}
	return func(s string) string {
		for _, f := range steps {
			s = f(s)
		}
		return s
	}, byteLevel, nil
}

// lowercase lowercases each character on its own, as Rust's
// char::to_lowercase: the full mapping (İ becomes "i̇") without the
// context-dependent final sigma.
func lowercase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 'İ' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

func hfStrip(n *hfNode) (func(string) string, error) {
	left, right := n.StripLeft, n.StripRight
	return func(s string) string {
		if left {
			s = strings.TrimLeftFunc(s, isWhiteSpace)
		}
		if right {
			s = strings.TrimRightFunc(s, isWhiteSpace)
		}
		return s
	}, nil
}

func hfReplace(n *hfNode) (func(string) string, error) {
	to := n.Content
	if from, ok := n.Pattern["String"]; ok {
		if from == "" {
			return func(s string) string { return s }, nil
		}
		return func(s string) string { return strings.ReplaceAll(s, from, to) }, nil
	}
	pat, ok := n.Pattern["Regex"]
	if !ok {
		return nil, fmt.Errorf("Replace without a pattern")
	}
	p, err := fromOniguruma(pat)
	if err != nil {
		return nil, fmt.Errorf("Replace regex %q: %v", pat, err)
	}
	re, err := regexp2.Compile(p, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("Replace regex %q: %v", pat, err)
	}
	// The replacement is literal text, not a template.
	return func(s string) string {
		var b strings.Builder
		rs := []rune(s)
		last := 0
		m, err := re.FindRunesMatch(rs)
		for err == nil && m != nil {
			b.WriteString(string(rs[last:m.Index]))
			b.WriteString(to)
			last = m.Index + m.Length
			m, err = re.FindNextMatch(m)
		}
		b.WriteString(string(rs[last:]))
		return b.String()
	}, nil
}

// stripMarks removes the runes of table (after NFD, as Hugging Face's
// StripAccents expects its input decomposed by an earlier step).
func stripMarks(table *unicode.RangeTable) func(string) string {
	return func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.Is(table, r) {
				return -1
			}
			return r
		}, s)
	}
}

// nmt is Hugging Face's Nmt normalizer (SentencePiece's NMT rules):
// some control characters are dropped, some spaces become " ".
func nmt(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0x1 && r <= 0x8, r == 0xB, r >= 0xE && r <= 0x1F, r == 0x7F, r == 0x8F, r == 0x9F:
			return -1
		case r == 0x9, r == 0xA, r == 0xC, r == 0xD, r == 0x1680, r >= 0x200B && r <= 0x200F,
			r == 0x2028, r == 0x2029, r == 0x2581, r == 0xFEFF, r == 0xFFFD:
			return ' '
		}
		return r
	}, s)
}

// hfBert is BertNormalizer: clean_text drops NUL, U+FFFD and control
// characters and makes whitespace " "; handle_chinese_chars puts spaces
// around CJK ideographs; strip_accents (default: lowercase) removes
// nonspacing marks after NFD; lowercase.
func hfBert(n *hfNode) (func(string) string, error) {
	flag := func(p *bool, def bool) bool {
		if p == nil {
			return def
		}
		return *p
	}
	clean, chinese, lower := flag(n.CleanText, true), flag(n.ChineseChars, true), flag(n.Lowercase, true)
	accents := flag(n.StripAccents, lower)
	return func(s string) string {
		if clean {
			s = strings.Map(func(r rune) rune {
				switch {
				case r == 0 || r == 0xFFFD:
					return -1
				case r != '\t' && r != '\n' && r != '\r' && (unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) ||
					!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)):
					return -1
				case isWhiteSpace(r):
					return ' '
				}
				return r
			}, s)
		}
		if chinese {
			var b strings.Builder
			for _, r := range s {
				if isCJKIdeograph(r) {
					b.WriteByte(' ')
					b.WriteRune(r)
					b.WriteByte(' ')
				} else {
					b.WriteRune(r)
				}
			}
			s = b.String()
		}
		if accents {
			s = stripMarks(unicode.Mn)(norm.NFD.String(s))
		}
		if lower {
			s = lowercase(s)
		}
		return s
	}, nil
}

// isCJKIdeograph is BERT's CJK character test.
func isCJKIdeograph(r rune) bool {
	return r >= 0x4E00 && r <= 0x9FFF || r >= 0x3400 && r <= 0x4DBF || r >= 0x20000 && r <= 0x2A6DF ||
		r >= 0x2A700 && r <= 0x2B73F || r >= 0x2B740 && r <= 0x2B81F || r >= 0x2B920 && r <= 0x2CEAF ||
		r >= 0xF900 && r <= 0xFAFF || r >= 0x2F800 && r <= 0x2FA1F
}
