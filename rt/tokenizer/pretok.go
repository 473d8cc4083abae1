package tokenizer

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/dlclark/regexp2"
)

// Pre-tokenizer patterns, as in the families' tokenizer.json (and llama.cpp).
const (
	patGPT2   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	patLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patQwen2  = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// preSpec is a GGUF pre-tokenizer: its steps, whether whole words found in
// the vocabulary skip merging, and whether text is NFC-normalized first.
type preSpec struct {
	steps        func() ([]splitter, error)
	ignoreMerges bool
	nfc          bool
}

func regexSteps(pats ...string) func() ([]splitter, error) {
	return func() ([]splitter, error) {
		var out []splitter
		for _, p := range pats {
			s, err := regexSplitter(p, false)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
}

func digitsThenGPT2() ([]splitter, error) {
	s, err := regexSplitter(patGPT2, false)
	if err != nil {
		return nil, err
	}
	return []splitter{digitSplitter(true), s}, nil
}

// ggufPre maps tokenizer.ggml.pre to its pre-tokenizer. "default" (a gpt2
// model whose pre-tokenizer llama.cpp's converter did not recognize) uses
// GPT-2's, the Hugging Face ByteLevel default.
var ggufPre = map[string]preSpec{
	"default":     {steps: regexSteps(patGPT2)},
	"gpt-2":       {steps: regexSteps(patGPT2)},
	"gpt2":        {steps: regexSteps(patGPT2)},
	"phi-2":       {steps: regexSteps(patGPT2)},
	"mpt":         {steps: regexSteps(patGPT2)},
	"olmo":        {steps: regexSteps(patGPT2)},
	"llama3":      {steps: regexSteps(patLlama3), ignoreMerges: true},
	"llama-bpe":   {steps: regexSteps(patLlama3), ignoreMerges: true},
	"llama-v3":    {steps: regexSteps(patLlama3), ignoreMerges: true},
	"smaug-bpe":   {steps: regexSteps(patLlama3)},
	"dbrx":        {steps: regexSteps(patLlama3)},
	"qwen2":       {steps: regexSteps(patQwen2), nfc: true},
	"stablelm2":   {steps: regexSteps(patQwen2)},
	"starcoder":   {steps: digitsThenGPT2},
	"smollm":      {steps: digitsThenGPT2},
	"refact":      {steps: digitsThenGPT2},
	"command-r":   {steps: digitsThenGPT2},
	"codeshell":   {steps: digitsThenGPT2},
	"exaone":      {steps: digitsThenGPT2},
	"minerva-7b":  {steps: digitsThenGPT2},
	"granite":     {steps: regexSteps(patLlama3)},
	"deepseek-r1": {steps: regexSteps(patQwen2)},
}

// regexSplitter splits each piece into the matches of pat and the text
// between them (Hugging Face Split with behavior "Isolated"); with
// removeGaps the text between matches is dropped ("Removed").
func regexSplitter(pat string, removeGaps bool) (splitter, error) {
	re, err := regexp2.Compile(pat, regexp2.None)
	if err != nil {
		return nil, fmt.Errorf("pre-tokenizer regex %q: %v", pat, err)
	}
	return func(pieces []string) []string {
		var out []string
		for _, p := range pieces {
			rs := []rune(p)
			last := 0
			m, err := re.FindRunesMatch(rs)
			for err == nil && m != nil {
				if m.Index > last && !removeGaps {
					out = append(out, string(rs[last:m.Index]))
				}
				if m.Length > 0 {
					out = append(out, string(rs[m.Index:m.Index+m.Length]))
				}
				last = m.Index + m.Length
				m, err = re.FindNextMatch(m)
			}
			if err != nil { // regexp2 timeouts are off; keep the text whole
				out = append(out, string(rs[last:]))
				continue
			}
			if last < len(rs) && !removeGaps {
				out = append(out, string(rs[last:]))
			}
		}
		return out
	}, nil
}

// digitSplitter is Hugging Face's Digits pre-tokenizer: runs of digits (or
// each digit, with individual) are separate pieces.
func digitSplitter(individual bool) splitter {
	return func(pieces []string) []string {
		var out []string
		for _, p := range pieces {
			start := 0
			prevDigit := false
			for i, r := range p {
				d := unicode.IsNumber(r)
				if i > start && (d != prevDigit || d && individual) {
					out = append(out, p[start:i])
					start = i
				}
				prevDigit = d
			}
			if start < len(p) {
				out = append(out, p[start:])
			}
		}
		return out
	}
}

// metaspaceSplitter splits before each "▁" (Hugging Face Metaspace with
// split=true: the replacement is merged with the next piece).
func metaspaceSplitter(pieces []string) []string {
	var out []string
	for _, p := range pieces {
		start := 0
		for i := 1; i < len(p); i++ {
			if strings.HasPrefix(p[i:], "▁") && i > start {
				out = append(out, p[start:i])
				start = i
			}
		}
		out = append(out, p[start:])
	}
	return out
}
