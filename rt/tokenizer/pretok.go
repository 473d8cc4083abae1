package tokenizer

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/dlclark/regexp2"
)

// Pre-tokenizer patterns, as in the families' tokenizer.json. llama.cpp
// (src/llama-vocab.cpp) rewrites some for its own regex engine, for example
// (?i:'s|...) as '[sS]|...; these are the originals, which regexp2 runs as
// they are.
const (
	// GPT-2: the pattern of Hugging Face's ByteLevel pre-tokenizer.
	patGPT2 = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
	// Llama 3 (and GLM-4, DBRX).
	patLlama3 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// Qwen2: Llama 3's with single digits.
	patQwen2 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// Qwen3.5: Qwen2's with combining marks (\p{M}) kept with letters.
	patQwen35 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// MiniCPM5: Qwen2's with digit runs (split in threes by a step before).
	patMiniCPM5 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// Seed-Coder: Qwen2's whose punctuation runs stop before newlines.
	patSeedCoder = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+`
	// Ling (bailingmoe). The original has possessive quantifiers (?+, ++),
	// which regexp2 lacks; here they cannot change a match (the possessive
	// part and what follows it match disjoint characters), so greedy ones
	// are used, as in llama.cpp.
	patBailing = `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+`
	// EXAONE MoE: words joined by single spaces are one piece.
	patExaoneMoE = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+`
	// Jais 2: Llama 3's with whitespace runs cut in powers of two.
	patJais2 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}`
	// ufakzeka: Qwen2's without the English contractions.
	patUfakzeka = `[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// Tekken (Mistral Nemo, Pixtral 12B): case-aware words.
	patTekken = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// GPT-4o (o200k; Llama 4, MiniMax-M2): case-aware words with contractions.
	patGPT4o = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// Youtu: GPT-4o's words with single digits.
	patYoutu = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// DeepSeek-V3: ASCII-punctuation-led words, letters with marks, punctuation runs.
	patDeepSeekV3 = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
	// Spark 2.5: DeepSeek-V3's with single newlines and no newlines after punctuation.
	patSpark = "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+|[\\r\\n]|\\s+(?!\\S)|\\s+"
	// Han, Hiragana and Katakana runs (DeepSeek-V3, Spark).
	patCJK = "[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+"
	// Han and Hangul runs (DeepSeek LLM and Coder).
	patCJKHangul = "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+"
	// Youtu's first step: Hangul, CJK punctuation, Bopomofo, Han and kana runs.
	patYoutuCJK = "[\uAC00-\uD7A3\u3131-\u318E]+|[\uFF01\u2026\u201C\u201D\u2018\u2019\u2014\uFF1A\uFF1B\uFF0C\u3001-\u303F\uFE30-\uFE4F]+|[\u3105-\u312F]+|[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+"
	// DeepSeek LLM: cased letters (Unicode Lu, Ll, Lt), then ASCII and
	// full-width punctuation, each with one whitespace before.
	patDeepSeekLetters = "\\s?[A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-\u02AF\u0370-\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1\u03A3-\u03F5\u03F7-\u0481\u048A-\u052F\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5\u13F8-\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A\u1E00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-\u1F7D\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4\u1FF6-\u1FFC\u2102\u2107\u210A-\u2113\u2115\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139\u213C-\u213F\u2145-\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3\uA640-\uA66D\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF\uFB00-\uFB06\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\U00010400-\U0001044F\U000104B0-\U000104D3\U000104D8-\U000104FB\U00010C80-\U00010CB2\U00010CC0-\U00010CF2\U000118A0-\U000118DF\U0001E900-\U0001E943]+"
	patDeepSeekPunct   = "\\s?[!-/:-~\uFF01-\uFF0F\uFF1A-\uFF5E\u2018-\u201F\u3000-\u3002]+"
	// BLOOM (and Poro, GPT-3 Finnish, Viking): anything but whitespace and
	// sentence punctuation, with one space before. (BLOOM's tokenizer.json
	// writes the punctuation as a class nested in the class.)
	patBloom = " ?[^(\\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+"
	// Chameleon: sentinel and image tokens, tab/newline and two or four
	// spaces, ASCII or Unicode punctuation.
	patChameleonSentinel = `<sentinel:[0-9]+>`
	patChameleonImage    = `(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z`
	patChameleonSpace    = `([\t\n]|    |  )`
	patChameleonPunct    = "[\\p{P}!-/:-@\\[-`{-~]"
	// Hugging Face's Punctuation pre-tokenizer: ASCII or Unicode punctuation.
	patPunct = "[\\p{P}$+<=>^`|~]"
	// Granite Embedding multilingual (97M): llama.cpp's rewrite of GPT-4o's
	// pattern, with marks counted as letters.
	patGraniteMulti = `[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// Kimi K2 (tiktoken, from its tokenization_kimi.py).
	patKimiK2 = `[\p{Han}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]+[\p{Ll}\p{Lm}\p{Lo}\p{M}&&[^\p{Han}]]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?` +
		`|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	// AFMoE's CJK and Southeast Asian script runs (llama.cpp's list).
	patAfmoeCJK = "[\u4E00-\u9FFF\u3400-\u4DBF\uF900-\uFAFF\u3040-\u309F\u30A0-\u30FF\uFF65-\uFF9F\u2F00-\u2FDF\u0E40-\u0E7F\u0E80-\u0EFF\u1780-\u17FF\u1000-\u109F\uAA60-\uAA7F\uA9E0-\uA9FF\uAC00-\uD7AF\u1100-\u11FF]+"
)

// preSpec is a GGUF pre-tokenizer: its steps, whether whole words found in
// the vocabulary skip merging, whether text is NFC-normalized first, and
// for the SentencePiece-style names (llama.cpp's byte_encode = false) the
// BPE that merges the text's own characters.
type preSpec struct {
	steps        func() ([]splitter, error)
	ignoreMerges bool
	nfc          bool
	raw          bool // BPE over the text's characters with <0xXX> byte fallback, not byte-level BPE
	escapeWS     bool // spaces become "▁" first
	addBOS       bool // llama.cpp adds BOS when tokenizer.ggml.add_bos_token is absent
	noBOS        bool // llama.cpp has no default BOS id (ChatGLM)
}

// alphabetStep is the mapping to the byte alphabet of Hugging Face's
// ByteLevel pre-tokenizer; steps after it see the mapped text.
var alphabetStep = splitter{toAlphabet: true}

// seq returns the steps of a pre-tokenizer: each part is a regex (a Hugging
// Face Split with behavior Isolated) or a splitter, applied in order.
func seq(parts ...any) func() ([]splitter, error) {
	return func() ([]splitter, error) {
		var out []splitter
		for _, p := range parts {
			var s splitter
			var err error
			switch p := p.(type) {
			case string:
				s, err = regexSplitter(p, splitIsolated, false)
			case splitter:
				s = p
			default:
				err = fmt.Errorf("bad pre-tokenizer step %T", p)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
}

// Pre-tokenizers shared by several names.
var (
	preGPT2      = preSpec{steps: seq(patGPT2)}
	preLlama3    = preSpec{steps: seq(patLlama3), ignoreMerges: true, addBOS: true}
	preLlama3Mrg = preSpec{steps: seq(patLlama3)}
	preQwen2     = preSpec{steps: seq(patQwen2)}
	// StarCoder: Digits (individual) before ByteLevel.
	preStarCoder = preSpec{steps: seq(digitSplitter(true), patGPT2)}
	preGPT4o     = preSpec{steps: seq(patGPT4o)}
	preDeepSeek3 = preSpec{steps: seq(`\p{N}{1,3}`, patCJK, patDeepSeekV3)}
	preTinyAya   = preSpec{steps: seq(`\d{1,3}(?=(?:\d{3})*\b)`, patGPT4o)}
	preBailing   = preSpec{steps: seq(patBailing)}
	preBloom     = preSpec{steps: seq(patBloom)}
	// SentencePiece-style BPE over the text with spaces as "▁", cut only
	// at runs of newlines (llama.cpp's Gemma 4 and Sarvam).
	preSPMNewlines = preSpec{steps: seq(`[^\n]+|[\n]+`), raw: true, escapeWS: true}
)

// ggufPre maps tokenizer.ggml.pre to its pre-tokenizer: every name
// llama.cpp accepts (src/llama-vocab.cpp, llama_vocab::impl::load), with the
// regex sets of their Hugging Face tokenizers where known, else llama.cpp's.
// A missing value or "default" (a gpt2 model whose pre-tokenizer the
// converter did not recognize) uses llama.cpp's default set. ignoreMerges,
// addBOS and noBOS follow llama.cpp (ignore_merges, add_bos, special_bos_id
// = null); nfc follows the Hugging Face normalizer (NFC for Qwen2;
// llama.cpp does not normalize).
//
// llama.cpp's custom splitters are regexes here: kimi-k2's is the
// tiktoken pattern of Kimi's tokenization_kimi.py; afmoe's digit step cuts
// a run of digits into threes from the right (its first group holds the
// rest). jina-v1-en, jina-v2-code and roberta-bpe (llama.cpp's add_sep)
// are GPT-2's: llama.cpp adds no SEP when it tokenizes with BPE.
var ggufPre = map[string]preSpec{
	// llama.cpp's default set (Falcon-like).
	"default": {steps: seq(`[\p{P}\$\+<=>\^~\|]+`, patGPT2, `\p{N}+`, `[0-9][0-9][0-9]`)},

	// GPT-2's ByteLevel pattern.
	"gpt-2":           preGPT2,
	"gpt2":            preGPT2,
	"phi-2":           preGPT2,
	"mpt":             preGPT2,
	"olmo":            preGPT2,
	"jais":            preGPT2,
	"jina-es":         preGPT2,
	"jina-de":         preGPT2,
	"jina-v2-es":      preGPT2,
	"jina-v2-de":      preGPT2,
	"jina-v1-en":      preGPT2,
	"jina-v2-code":    preGPT2,
	"roberta-bpe":     preGPT2,
	"gigachat":        preGPT2,
	"a.x-4.0":         preGPT2,
	"mellum":          preGPT2,
	"modern-bert":     preGPT2,
	"exaone4":         preGPT2,
	"trillion":        preGPT2,
	"granite-docling": preGPT2,

	// Digits, each its own piece, then GPT-2's pattern.
	"starcoder":  preStarCoder,
	"refact":     preStarCoder,
	"command-r":  preStarCoder,
	"smollm":     preStarCoder,
	"codeshell":  preStarCoder,
	"exaone":     preStarCoder,
	"minerva-7b": preStarCoder,
	"mellum2":    preStarCoder,

	// Llama 3's pattern; llama.cpp ignores merges for whole words in the
	// vocabulary and adds BOS for the Llama 3 names, not for DBRX, Smaug
	// or GLM.
	"llama3":       preLlama3,
	"llama-v3":     preLlama3,
	"llama-bpe":    preLlama3,
	"falcon3":      preLlama3,
	"falcon-h1":    preLlama3,
	"pixtral":      preLlama3,
	"midm-2.0":     preLlama3,
	"lfm2":         preLlama3,
	"jina-v5-nano": preLlama3,
	"dbrx":         preLlama3Mrg,
	"smaug-bpe":    preLlama3Mrg,
	"chatglm-bpe":  {steps: seq(patLlama3), noBOS: true},
	"glm4":         {steps: seq(patLlama3), noBOS: true},
	"granite":      preLlama3Mrg, // not a llama.cpp name; kept for files that have it
	"jais-2":       {steps: seq(patJais2)},

	// Qwen2's pattern.
	"qwen2":            {steps: seq(patQwen2), nfc: true},
	"stablelm2":        preQwen2,
	"deepseek-r1-qwen": preQwen2,
	"deepseek-r1":      preQwen2, // not a llama.cpp name; kept for files that have it
	"kormo":            preQwen2,
	"f2llmv2":          preQwen2,
	"megrez":           preQwen2,
	"hunyuan":          preQwen2,
	"solar-open":       preQwen2,
	"grok-2":           preQwen2,
	"qwen35":           {steps: seq(patQwen35)},
	"seed-coder":       {steps: seq(patSeedCoder)},
	"ufakzeka":         {steps: seq(patUfakzeka)},
	"exaone-moe":       {steps: seq(patExaoneMoE)},
	"bailingmoe":       preBailing,
	"bailingmoe2":      preBailing,
	"llada-moe":        preBailing,
	"minicpm5":         {steps: seq(`\p{N}{1,3}`, patMiniCPM5), ignoreMerges: true},
	"laguna":           {steps: seq(`[^\n]+|[\n]+`, patQwen2)},

	// Case-aware patterns.
	"tekken":                  {steps: seq(patTekken), ignoreMerges: true, addBOS: true},
	"gpt-4o":                  preGPT4o,
	"llama4":                  preGPT4o,
	"kanana2":                 preGPT4o,
	"talkie":                  preGPT4o,
	"minimax-m2":              preGPT4o,
	"tiny_aya":                preTinyAya,
	"cohere2moe":              preTinyAya,
	"youtu":                   {steps: seq(patYoutuCJK, patYoutu), ignoreMerges: true},
	"granite-embed-multi-97m": {steps: seq(patGraniteMulti), ignoreMerges: true},
	"kimi-k2":                 {steps: seq(patKimiK2)},

	// DeepSeek.
	"deepseek-llm":   {steps: seq(`[\r\n]`, patDeepSeekLetters, patDeepSeekPunct, `\s+$`, patCJKHangul, `\p{N}+`)},
	"deepseek-coder": {steps: seq(`[\r\n]`, `\s?\p{L}+`, `\s?\p{P}+`, patCJKHangul, `\p{N}`)},
	"deepseek-v3":    preDeepSeek3,
	"hunyuan-dense":  preDeepSeek3,
	"joyai-llm":      preDeepSeek3,
	"hy_v4":          preDeepSeek3,
	"spark2_5":       {steps: seq(`\p{N}{1,3}`, patCJK, patSpark, `\p{N}`)},
	"afmoe":          {steps: seq(`\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))`, patAfmoeCJK, patDeepSeekV3)},

	// Falcon: Punctuation (contiguous), ByteLevel, then Digits and threes of
	// ASCII digits on the byte alphabet.
	"falcon": {steps: seq(patPunct+"+", patGPT2, alphabetStep, digitSplitter(false), `[0-9][0-9][0-9]`)},

	// SentencePiece-style BPE over the text (llama.cpp's byte_encode = false).
	"gemma4":                   {steps: preSPMNewlines.steps, raw: true, escapeWS: true, addBOS: true},
	"granite-embed-multi-311m": {steps: preSPMNewlines.steps, raw: true, escapeWS: true},
	"sarvam-moe":               preSPMNewlines,
	"whitespace":               {steps: seq(`\S+`), raw: true},

	// Others.
	"bloom":        preBloom,
	"gpt3-finnish": preBloom,
	"poro-chat":    preBloom,
	"viking":       {steps: seq(patBloom, `\p{N}`)},
	"superbpe":     {steps: seq(`\p{N}+`, `(?=(\d{3})+(?!\d))`)},
	"chameleon": {steps: seq(patChameleonSentinel, patChameleonImage, patChameleonSpace, `\p{N}`,
		patChameleonPunct, patGPT2), addBOS: true},
}

// splitBehavior is what a Hugging Face Split does with the matches of its
// pattern (SplitDelimiterBehavior).
type splitBehavior int

const (
	splitIsolated   splitBehavior = iota // matches are pieces of their own
	splitRemoved                         // matches are dropped
	splitMergedPrev                      // a match joins the piece before it
	splitMergedNext                      // a match joins the piece after it
	splitContiguous                      // adjacent matches form one piece
)

var splitBehaviors = map[string]splitBehavior{
	"Isolated":           splitIsolated,
	"Removed":            splitRemoved,
	"MergedWithPrevious": splitMergedPrev,
	"MergedWithNext":     splitMergedNext,
	"Contiguous":         splitContiguous,
}

// span is a run of a piece, in runes; match says whether it is a match of
// the pattern (after invert).
type span struct {
	start, end int
	match      bool
}

// regexSplitter splits each piece at the matches of pat, an Oniguruma
// pattern (see fromOniguruma), as Hugging Face's Split pre-tokenizer does
// with behavior and invert (which swaps matches and the text between them).
// An empty match only marks a split point; empty pieces are dropped.
func regexSplitter(pat string, behavior splitBehavior, invert bool) (splitter, error) {
	p, err := fromOniguruma(pat)
	if err != nil {
		return splitter{}, fmt.Errorf("pre-tokenizer regex %q: %v", pat, err)
	}
	return regexp2Splitter(p, behavior, invert)
}

// regexp2Splitter is regexSplitter for a pattern in regexp2's own syntax.
func regexp2Splitter(pat string, behavior splitBehavior, invert bool) (splitter, error) {
	re, err := regexp2.Compile(pat, regexp2.None)
	if err != nil {
		return splitter{}, fmt.Errorf("pre-tokenizer regex %q: %v", pat, err)
	}
	return spanSplitter(behavior, func(rs []rune, spans []span) []span {
		last := 0
		m, err := re.FindRunesMatch(rs)
		for err == nil && m != nil {
			if m.Index > last {
				spans = append(spans, span{last, m.Index, invert})
			}
			spans = append(spans, span{m.Index, m.Index + m.Length, !invert})
			last = m.Index + m.Length
			m, err = re.FindNextMatch(m)
		}
		// regexp2 timeouts are off, so err is nil; on one the rest is
		// kept whole.
		if last < len(rs) {
			spans = append(spans, span{last, len(rs), invert})
		}
		return spans
	}), nil
}

// spanSplitter splits each piece into the spans find gives (in order,
// covering the piece), merged or dropped as behavior says.
func spanSplitter(behavior splitBehavior, find func(rs []rune, spans []span) []span) splitter {
	return splitter{split: func(pieces []piece) []piece {
		var out []piece
		var spans []span
		for _, p := range pieces {
			rs := []rune(p.s)
			spans = find(rs, spans[:0])
			for _, s := range applyBehavior(spans, behavior) {
				if s.end > s.start && !(behavior == splitRemoved && s.match) {
					out = append(out, piece{s: string(rs[s.start:s.end]), atStart: p.atStart && s.start == 0})
				}
			}
		}
		return out
	}}
}

// runeSplitter splits at runes: class gives each rune's class, 0 for a
// rune that is dropped (with behavior Removed, as whitespace), and runs of
// one class form a span; with isolate, a class's runes are each a span.
func runeSplitter(class func(r rune) int, isolate func(c int) bool) splitter {
	return spanSplitter(splitRemoved, func(rs []rune, spans []span) []span {
		for i := 0; i < len(rs); {
			c := class(rs[i])
			j := i + 1
			if isolate == nil || !isolate(c) {
				for j < len(rs) && class(rs[j]) == c {
					j++
				}
			}
			spans = append(spans, span{i, j, c == 0})
			i = j
		}
		return spans
	})
}

// applyBehavior merges spans as tokenizers' NormalizedString::split does;
// for splitRemoved the matches are left for the caller to drop.
func applyBehavior(spans []span, behavior splitBehavior) []span {
	switch behavior {
	case splitMergedPrev, splitContiguous:
		var out []span
		prev := false
		for _, s := range spans {
			merge := s.match && !prev
			if behavior == splitContiguous {
				merge = s.match == prev
			}
			if merge && len(out) > 0 {
				out[len(out)-1].end = s.end
			} else {
				out = append(out, s)
			}
			prev = s.match
		}
		return out
	case splitMergedNext:
		var rev []span
		prev := false
		for i := len(spans) - 1; i >= 0; i-- {
			s := spans[i]
			if s.match && !prev && len(rev) > 0 {
				rev[len(rev)-1].start = s.start
			} else {
				rev = append(rev, s)
			}
			prev = s.match
		}
		for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
			rev[i], rev[j] = rev[j], rev[i]
		}
		return rev
	}
	return spans
}

// prefixSpace prepends a space to each piece that does not start with one
// (Hugging Face ByteLevel with add_prefix_space).
func prefixSpace(pieces []piece) []piece {
	for i, p := range pieces {
		if p.s != "" && !strings.HasPrefix(p.s, " ") {
			pieces[i].s = " " + p.s
		}
	}
	return pieces
}

// digitSplitter is Hugging Face's Digits pre-tokenizer: runs of digits (or
// each digit, with individual) are separate pieces. Digits are Unicode
// numbers (Rust's char::is_numeric); after the byte-alphabet mapping these
// are 0-9 and the alphabet's ¹ ² ³ ¼ ½ ¾.
func digitSplitter(individual bool) splitter {
	return spanSplitter(splitIsolated, func(rs []rune, spans []span) []span {
		for i := 0; i < len(rs); {
			d := unicode.IsNumber(rs[i])
			j := i + 1
			for j < len(rs) && unicode.IsNumber(rs[j]) == d && !(d && individual) {
				j++
			}
			spans = append(spans, span{i, j, d})
			i = j
		}
		return spans
	})
}

// metaspaceSplitter is Hugging Face's Metaspace pre-tokenizer: spaces
// become repl, which is prepended to a piece that does not start with it
// (scheme "always"; "first": only to the piece at the start of the input;
// "never"), and with split each repl starts a new piece.
func metaspaceSplitter(repl, scheme string, split bool) splitter {
	return splitter{split: func(pieces []piece) []piece {
		var out []piece
		for _, p := range pieces {
			s := strings.ReplaceAll(p.s, " ", repl)
			if (scheme == "always" || scheme == "first" && p.atStart) && !strings.HasPrefix(s, repl) {
				s = repl + s
			}
			if !split {
				out = append(out, piece{s: s, atStart: p.atStart})
				continue
			}
			start := 0
			for i := 1; i < len(s); i++ {
				if strings.HasPrefix(s[i:], repl) && i > start {
					out = append(out, piece{s: s[start:i], atStart: p.atStart && start == 0})
					start = i
				}
			}
			out = append(out, piece{s: s[start:], atStart: p.atStart && start == 0})
		}
		return out
	}}
}
