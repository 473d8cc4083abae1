package tokenizer

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Hugging Face tokenizers runs pre-tokenizer regexes with Oniguruma; this
// package runs them with regexp2 (.NET syntax and semantics). The two agree
// on the patterns of the supported models except where fromOniguruma
// rewrites them:
//
//   - ^ and $ are line anchors in Oniguruma (Ruby syntax): (?m:^), (?m:$);
//   - \w (and so \b, \B, \W) is Oniguruma's word class: Alphabetic, marks,
//     decimal digits, connector punctuation, and outside a class also
//     ¹ ² ³ ¼ ½ ¾, where .NET's lacks Mc, Me, Nl and the rest; \h is a
//     hexadecimal digit;
//   - possessive quantifiers X?+ X*+ X++ become atomic groups (?>X?) ...;
//     X{n,m}+ (not possessive in Oniguruma) becomes (?:X{n,m})+;
//   - a class nested in a class, [a[bc]], is their union, [abc];
//   - \x{HHHH} is \uHHHH;
//   - under (?i), Oniguruma's s also matches ſ (U+017F), as it does with a
//     class holding s or S (alone or in a range); regexp2's does not, so ſ
//     is added. (regexp2's k already matches the Kelvin sign.)
//
//   - a class ending in an intersection with a negated class,
//     [X&&[^Y]], is .NET's subtraction [X-[Y]];
//
// Other class intersections, POSIX brackets ([:alpha:]), negated nested
// classes and \W or \H inside a class are refused. Oniguruma's multi-
// character case folding ((?i)ss matches ß) and case-insensitive non-ASCII
// pattern characters are not reproduced; the models' patterns have
// neither.

// onigClassWord is the content of a class matching what \w matches inside a
// class in Oniguruma: Alphabetic (letters, Nl, the circled and squared
// Latin letters), marks, decimal digits and connector punctuation.
const onigClassWord = `\p{L}\p{M}\p{Nd}\p{Nl}\p{Pc}\u24B6-\u24E9` +
	"\U0001F130-\U0001F149\U0001F150-\U0001F169\U0001F170-\U0001F189"

// onigWord is the same for \w outside a class, where Oniguruma's Latin-1
// table also counts ¹ ² ³ ¼ ½ ¾ as word characters.
const onigWord = onigClassWord + `\u00B2\u00B3\u00B9\u00BC-\u00BE`

const onigHex = `0-9a-fA-F`

// fromOniguruma rewrites an Oniguruma pattern for regexp2.
func fromOniguruma(pat string) (string, error) {
	type group struct {
		start int  // output offset
		ci    bool // (?i) outside the group
		extra int  // groups opened for inline options, closed with this one
	}
	var b strings.Builder
	var groups []group
	topExtra := 0
	atom := -1 // output offset where the last atom starts
	depth := 0 // class nesting
	ci := false
	// In a class: the last literal member, whether a range is open after
	// it, and whether the class holds s or S (under (?i), ſ is added).
	lastLit, inRange, longS := rune(-1), false, false
	for i := 0; i < len(pat); {
		c := pat[i]
		if depth > 0 {
			switch {
			case c == '\\' && i+1 < len(pat):
				n, err := classEscape(&b, pat[i:])
				if err != nil {
					return "", err
				}
				i += n
				lastLit, inRange = -1, false
			case c == '[':
				if strings.HasPrefix(pat[i:], "[:") || strings.HasPrefix(pat[i:], "[^") {
					return "", fmt.Errorf("a POSIX bracket or negated class inside a class is not supported")
				}
				depth++ // a nested class: its members join the outer one
				i++
			case c == ']':
				depth--
				if depth == 0 {
					if ci && longS {
						b.WriteString("\u017F")
					}
					b.WriteByte(']')
				}
				i++
				lastLit, inRange = -1, false
			case c == '&' && strings.HasPrefix(pat[i:], "&&[^") && depth == 1:
				// X&&[^Y] at the end of a class is .NET's subtraction X-[Y].
				end := strings.IndexByte(pat[i+4:], ']')
				if end < 0 || !strings.HasPrefix(pat[i+4+end+1:], "]") || strings.ContainsAny(pat[i+4:i+4+end], "[&") {
					return "", fmt.Errorf("class intersection (&&) is supported only as [...&&[^...]] at the end of a class")
				}
				b.WriteString("-[")
				for j := i + 4; j < i+4+end; {
					if pat[j] == '\\' && j+1 < i+4+end {
						n, err := classEscape(&b, pat[j:i+4+end])
						if err != nil {
							return "", err
						}
						j += n
						continue
					}
					_, w := utf8.DecodeRuneInString(pat[j:])
					b.WriteString(pat[j : j+w])
					j += w
				}
				b.WriteString("]")
				i += 4 + end + 1
			case c == '&' && strings.HasPrefix(pat[i:], "&&"):
				return "", fmt.Errorf("class intersection (&&) is supported only as [...&&[^...]] at the end of a class")
			case c == '-' && lastLit >= 0 && !inRange && !strings.HasPrefix(pat[i+1:], "]"):
				b.WriteByte('-')
				inRange = true
				i++
			default:
				r, w := utf8.DecodeRuneInString(pat[i:])
				b.WriteString(pat[i : i+w])
				i += w
				lo := r
				if inRange {
					lo = lastLit
				}
				if lo <= 's' && r >= 's' || lo <= 'S' && r >= 'S' {
					longS = true
				}
				lastLit, inRange = r, false
				if lo != r {
					lastLit = -1
				}
			}
			continue
		}
		switch c {
		case '\\':
			if i+1 >= len(pat) {
				b.WriteByte(c)
				i++
				continue
			}
			atom = b.Len()
			n := escape(&b, pat[i:])
			i += n
		case '[':
			atom = b.Len()
			b.WriteByte('[')
			i++
			if strings.HasPrefix(pat[i:], "^") {
				b.WriteByte('^')
				i++
			}
			if strings.HasPrefix(pat[i:], "]") { // a leading ] is a member
				b.WriteString(`\]`)
				i++
			}
			depth = 1
			lastLit, inRange, longS = -1, false, false
		case '(':
			old := ci
			if n, flag := optionGroup(pat[i:]); n > 0 {
				if flag >= 0 {
					ci = flag == 1
				}
				if pat[i+n-1] == ')' {
					// (?i) applies to the rest of the enclosing group,
					// alternatives included: it opens a group (?i: that
					// closes with the enclosing one.
					b.WriteString(pat[i:i+n-1] + ":")
					if len(groups) > 0 {
						groups[len(groups)-1].extra++
					} else {
						topExtra++
					}
					atom = -1
				} else {
					groups = append(groups, group{start: b.Len(), ci: old})
					b.WriteString(pat[i : i+n])
				}
				i += n
				continue
			}
			groups = append(groups, group{start: b.Len(), ci: old})
			b.WriteByte('(')
			i++
			if strings.HasPrefix(pat[i:], "?") { // group syntax, not a quantifier
				b.WriteByte('?')
				i++
			}
		case ')':
			if len(groups) > 0 {
				g := groups[len(groups)-1]
				groups = groups[:len(groups)-1]
				b.WriteString(strings.Repeat(")", g.extra))
				atom, ci = g.start, g.ci
			}
			b.WriteByte(')')
			i++
		case '^', '$':
			b.WriteString("(?m:" + string(c) + ")")
			atom = -1
			i++
		case '?', '*', '+':
			b.WriteByte(c)
			i++
			if i < len(pat) && pat[i] == '+' && atom >= 0 { // possessive
				wrapped := "(?>" + b.String()[atom:] + ")"
				s := b.String()[:atom] + wrapped
				b.Reset()
				b.WriteString(s)
				i++
			}
		case '{':
			n := interval(pat[i:])
			if n == 0 {
				atom = b.Len()
				b.WriteByte(c)
				i++
				continue
			}
			b.WriteString(pat[i : i+n])
			i += n
			if i < len(pat) && pat[i] == '+' && atom >= 0 { // X{n,m}+ repeats X{n,m}
				s := b.String()[:atom] + "(?:" + b.String()[atom:] + ")"
				b.Reset()
				b.WriteString(s)
			}
		default:
			atom = b.Len()
			if ci && (c == 's' || c == 'S') {
				b.WriteString("[s\u017F]")
				i++
				continue
			}
			_, w := utf8.DecodeRuneInString(pat[i:])
			b.WriteString(pat[i : i+w])
			i += w
		}
	}
	b.WriteString(strings.Repeat(")", topExtra))
	return b.String(), nil
}

// optionGroup returns the length of an option group, (?flags:  or
// (?flags), at the start of s (0 if there is none) and what it does to
// case-insensitivity: 1 sets it, 0 clears it, -1 leaves it.
func optionGroup(s string) (n, ci int) {
	if !strings.HasPrefix(s, "(?") {
		return 0, -1
	}
	j := 2
	for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] == '-') {
		j++
	}
	if j == 2 || j == len(s) || s[j] != ':' && s[j] != ')' {
		return 0, -1
	}
	ci = -1
	if k := strings.IndexByte(s[2:j], 'i'); k >= 0 {
		ci = 1
		if strings.Contains(s[2:2+k], "-") {
			ci = 0
		}
	}
	return j + 1, ci
}

// escape writes the rewrite of the escape at the start of s (outside a
// class) and returns its length.
func escape(b *strings.Builder, s string) int {
	switch s[1] {
	case 'w':
		b.WriteString("[" + onigWord + "]")
	case 'W':
		b.WriteString("[^" + onigWord + "]")
	case 'b':
		b.WriteString("(?:(?<=[" + onigWord + "])(?![" + onigWord + "])|(?<![" + onigWord + "])(?=[" + onigWord + "]))")
	case 'B':
		b.WriteString("(?:(?<=[" + onigWord + "])(?=[" + onigWord + "])|(?<![" + onigWord + "])(?![" + onigWord + "]))")
	case 'h':
		b.WriteString("[" + onigHex + "]")
	case 'H':
		b.WriteString("[^" + onigHex + "]")
	default:
		return copyEscape(b, s)
	}
	return 2
}

// classEscape writes the rewrite of the escape at the start of s inside a
// class and returns its length.
func classEscape(b *strings.Builder, s string) (int, error) {
	switch s[1] {
	case 'w':
		b.WriteString(onigClassWord)
	case 'h':
		b.WriteString(onigHex)
	case 'W', 'H':
		return 0, fmt.Errorf(`\%c inside a class is not supported`, s[1])
	default:
		return copyEscape(b, s), nil
	}
	return 2, nil
}

// copyEscape copies the escape at the start of s (\p{..}, \x{..} as \uHHHH,
// or a backslash and one character) and returns its length.
func copyEscape(b *strings.Builder, s string) int {
	switch s[1] {
	case 'p', 'P':
		if strings.HasPrefix(s[2:], "{") {
			if j := strings.IndexByte(s, '}'); j > 0 {
				b.WriteString(s[:j+1]) // regexp2 knows categories and scripts
				return j + 1
			}
		}
	case 'x':
		if strings.HasPrefix(s[2:], "{") {
			if j := strings.IndexByte(s, '}'); j > 0 {
				if v, err := strconv.ParseUint(s[3:j], 16, 32); err == nil && v <= 0xFFFF {
					fmt.Fprintf(b, `\u%04X`, v)
					return j + 1
				} else if err == nil && v <= utf8.MaxRune {
					b.WriteRune(rune(v))
					return j + 1
				}
			}
		}
	}
	_, w := utf8.DecodeRuneInString(s[1:])
	b.WriteString(s[:1+w])
	return 1 + w
}

// interval returns the length of a {n}, {n,}, {,m} or {n,m} quantifier at
// the start of s, or 0 if s does not start with one.
func interval(s string) int {
	digits, commas := 0, 0
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == ',' && commas == 0:
			commas++
		case c == '}':
			if digits == 0 {
				return 0
			}
			return i + 1
		default:
			return 0
		}
	}
	return 0
}
