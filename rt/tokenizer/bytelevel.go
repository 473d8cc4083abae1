package tokenizer

import "strings"

// The GPT-2 byte alphabet: every byte maps to a printable rune.
var (
	byteRune [256]rune
	runeByte = map[rune]byte{}
)

func init() {
	n := 0
	for b := 0; b < 256; b++ {
		if b >= '!' && b <= '~' || b >= 0xA1 && b <= 0xAC || b >= 0xAE && b <= 0xFF {
			byteRune[b] = rune(b)
		} else {
			byteRune[b] = rune(256 + n)
			n++
		}
		runeByte[byteRune[b]] = byte(b)
	}
}

// bytesToAlphabet maps the bytes of s to the byte alphabet.
func bytesToAlphabet(s string) string {
	var b strings.Builder
	b.Grow(2 * len(s))
	for i := 0; i < len(s); i++ {
		b.WriteRune(byteRune[s[i]])
	}
	return b.String()
}

// alphabetToBytes maps a byte-alphabet string back to bytes; runes outside
// the alphabet are kept as their UTF-8.
func alphabetToBytes(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if b, ok := runeByte[r]; ok {
			out = append(out, b)
		} else {
			out = append(out, string(r)...)
		}
	}
	return out
}
