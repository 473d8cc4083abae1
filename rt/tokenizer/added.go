package tokenizer

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Added tokens are matched in the text before the model sees it, as Hugging
// Face's AddedVocabulary does (tokenizers/src/tokenizer/added_vocabulary.rs):
// the leftmost match wins, the longest among those starting there; matching
// resumes after it. A token's flags then adjust the match:
//
//   - single_word: the match is dropped unless no word character (Unicode
//     \w) touches it on either side;
//   - lstrip: whitespace before it, up to the previous match, joins it;
//   - rstrip: whitespace after it joins it (a match starting in that
//     whitespace is dropped).
//
// GGUF vocabularies mark tokens with attributes instead (llama.cpp's
// tokenizer_st_partition); their lstrip/rstrip strip C isspace characters.

// addedToken is a token matched verbatim in the input text.
type addedToken struct {
	content    string
	id         int32
	special    bool
	lstrip     bool
	rstrip     bool
	singleWord bool
	asciiSpace bool // lstrip/rstrip strip " \t\n\v\f\r" only (llama.cpp's isspace)
}

// addedSet is a set of added tokens and their lookup by first byte.
type addedSet struct {
	toks  []addedToken // longest first
	first [256][]int   // indices into toks by first byte
}

// newAddedSet indexes toks; empty contents are dropped.
func newAddedSet(toks []addedToken) addedSet {
	var a addedSet
	for _, x := range toks {
		if x.content != "" {
			a.toks = append(a.toks, x)
		}
	}
	sort.SliceStable(a.toks, func(i, j int) bool { return len(a.toks[i].content) > len(a.toks[j].content) })
	for k, x := range a.toks {
		a.first[x.content[0]] = append(a.first[x.content[0]], k)
	}
	return a
}

// segment is a piece of input: plain text (tok < 0) starting at byte start
// of the split text, or an added token.
type segment struct {
	text  string
	tok   int32
	start int
}

// longestAt returns the longest token that text[i:] starts with.
func (a *addedSet) longestAt(text string, i int) *addedToken {
	for _, k := range a.first[text[i]] {
		if x := &a.toks[k]; strings.HasPrefix(text[i:], x.content) {
			return x
		}
	}
	return nil
}

// split cuts text at the added tokens of the set.
func (a *addedSet) split(text string) []segment {
	if len(a.toks) == 0 || text == "" {
		if text == "" {
			return nil
		}
		return []segment{{text: text, tok: -1}}
	}
	var segs []segment
	done := 0 // end of the last match (with what it stripped)
	for i := 0; i < len(text); {
		m := a.longestAt(text, i)
		if m == nil {
			_, w := utf8.DecodeRuneInString(text[i:])
			i += w
			continue
		}
		start, stop := i, i+len(m.content)
		i = stop // the search goes on after the match, even if it is dropped
		if start < done {
			continue // inside what the previous match stripped
		}
		if m.singleWord && (endsWithWord(text[:start]) || startsWithWord(text[stop:])) {
			continue
		}
		isSpace := isWhiteSpace
		if m.asciiSpace {
			isSpace = isCSpace
		}
		if m.lstrip {
			start = max(len(strings.TrimRightFunc(text[:start], isSpace)), done)
		}
		if m.rstrip {
			stop = len(text) - len(strings.TrimLeftFunc(text[stop:], isSpace))
		}
		if done < start {
			segs = append(segs, segment{text: text[done:start], tok: -1, start: done})
		}
		segs = append(segs, segment{tok: m.id, start: start})
		done = max(done, stop)
	}
	if done < len(text) {
		segs = append(segs, segment{text: text[done:], tok: -1, start: done})
	}
	return segs
}

// isWhiteSpace is Rust's char::is_whitespace (the White_Space property),
// which Hugging Face's \s uses.
func isWhiteSpace(r rune) bool { return unicode.Is(unicode.White_Space, r) }

// isCSpace is C's isspace in the "C" locale.
func isCSpace(r rune) bool { return r == ' ' || r >= '\t' && r <= '\r' }

// isWordRune is Unicode \w as Rust's regex crate reads it: Alphabetic,
// marks, decimal digits, connector punctuation and the join controls.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r) ||
		unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_Alphabetic, r) || r == 0x200C || r == 0x200D
}

func endsWithWord(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	return n > 0 && isWordRune(r)
}

func startsWithWord(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n > 0 && isWordRune(r)
}
