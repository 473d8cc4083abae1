package tokenizer

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/archc/archc/formats/gguf"
)

// GGUF token types (tokenizer.ggml.token_type).
const (
	ggufNormal      = 1
	ggufUnknown     = 2
	ggufControl     = 3
	ggufUserDefined = 4
	ggufUnused      = 5
	ggufByte        = 6
)

// Metadata is the GGUF metadata a tokenizer is built from, as plain Go
// values: scalars as gguf.File.Value gives them (int64, uint64, float64,
// bool, string) and arrays as gguf.File.Array gives them ([]string,
// []bool, []int64, []uint64, []float64, []gguf.ArrayInfo). Arrays given
// as []any are accepted too.
type Metadata map[string]any

// ReadGGUFMetadata opens the GGUF file at path (gguf.Open: one bounded
// pass over its header, validated) and returns its metadata key-values.
// Errors are gguf.Open's: one line naming the file.
func ReadGGUFMetadata(path string) (Metadata, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	return GGUFMetadata(f), nil
}

// GGUFMetadata returns all the metadata of an opened GGUF file.
func GGUFMetadata(f *gguf.File) Metadata {
	return metadataOf(f, func(string) bool { return true })
}

func metadataOf(f *gguf.File, keep func(key string) bool) Metadata {
	md := Metadata{}
	for _, k := range f.Keys() {
		if !keep(k) {
			continue
		}
		if a, ok := f.Array(k); ok {
			md[k] = a
		} else {
			md[k], _ = f.Value(k)
		}
	}
	return md
}

// FromGGUF builds the tokenizer described by the tokenizer.ggml.* metadata
// of the GGUF file at path. Vocabulary-only files (no tensors) work.
func FromGGUF(path string) (*Tokenizer, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	return FromGGUFFile(f)
}

// FromGGUFFile builds the tokenizer described by the tokenizer.ggml.*
// metadata of an opened GGUF file (and general.architecture and
// general.name, which select Phi-3's token attributes), without reading
// the file again.
func FromGGUFFile(f *gguf.File) (*Tokenizer, error) {
	md := metadataOf(f, func(k string) bool {
		return strings.HasPrefix(k, "tokenizer.ggml.") || k == "general.architecture" || k == "general.name"
	})
	t, err := fromMetadata(md)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", f.Path, err)
	}
	t.source = f.Path
	return t, nil
}

// String returns a string value.
func (md Metadata) String(key string) (string, bool) {
	s, ok := md[key].(string)
	return s, ok
}

// Int returns an integer value of any width.
func (md Metadata) Int(key string) (int64, bool) { return toInt(md[key]) }

// Bool returns a boolean value.
func (md Metadata) Bool(key string) (bool, bool) {
	b, ok := md[key].(bool)
	return b, ok
}

// strs returns the elements of a string array ([]string, or []any of
// strings); ok is false for anything else.
func strs(v any) ([]string, bool) {
	switch x := v.(type) {
	case []string:
		return x, true
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// ints returns the elements of an integer array ([]int64, []uint64, or
// []any of integers of any width); ok is false for anything else.
func ints(v any) ([]int64, bool) {
	switch x := v.(type) {
	case []int64:
		return x, true
	case []uint64:
		return conv(x, func(e uint64) (int64, bool) { return toInt(e) })
	case []any:
		return conv(x, toInt)
	}
	return nil, false
}

// floats returns the elements of a numeric array ([]float64, []int64,
// []uint64, or []any of numbers) as float32; ok is false for anything else.
func floats(v any) ([]float32, bool) {
	switch x := v.(type) {
	case []float64:
		return conv(x, func(e float64) (float32, bool) { return float32(e), true })
	case []int64:
		return conv(x, func(e int64) (float32, bool) { return float32(e), true })
	case []uint64:
		return conv(x, func(e uint64) (float32, bool) { return float32(e), true })
	case []any:
		return conv(x, toFloat)
	}
	return nil, false
}

func conv[S, T any](src []S, f func(S) (T, bool)) ([]T, bool) {
	out := make([]T, len(src))
	for i, e := range src {
		var ok bool
		if out[i], ok = f(e); !ok {
			return nil, false
		}
	}
	return out, true
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		if x > 1<<62 {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}

func toFloat(v any) (float32, bool) {
	switch x := v.(type) {
	case float32:
		return x, true
	case float64:
		return float32(x), true
	}
	if i, ok := toInt(v); ok {
		return float32(i), true
	}
	return 0, false
}

// ggufModels are the tokenizer.ggml.model values this package reads.
var ggufModels = []string{"gpt2", "llama", "gemma4", "whitespace"}

func fromMetadata(md Metadata) (*Tokenizer, error) {
	model, ok := md.String("tokenizer.ggml.model")
	if !ok {
		return nil, fmt.Errorf("no tokenizer.ggml.model in the metadata (the file has no tokenizer)")
	}
	if !slices.Contains(ggufModels, model) {
		return nil, fmt.Errorf("tokenizer.ggml.model %q is not supported (supported: %s)", model, strings.Join(ggufModels, ", "))
	}
	tokens, ok := strs(md["tokenizer.ggml.tokens"])
	if !ok || len(tokens) == 0 {
		return nil, fmt.Errorf("tokenizer.ggml.tokens is missing or not a string array")
	}
	if len(tokens) > 1<<31-1 {
		return nil, fmt.Errorf("tokenizer.ggml.tokens has %d entries (too many)", len(tokens))
	}
	t := &Tokenizer{
		eos:    -1,
		tokens: tokens,
		vocab:  make(map[string]int32, len(tokens)),
		isAdd:  make([]bool, len(tokens)),
		unk:    -1,
		bos:    -1,
	}
	for i := range t.byteTok {
		t.byteTok[i] = -1
	}
	for i, s := range tokens {
		t.vocab[s] = int32(i) // a repeated text maps to its last id, as in llama.cpp
	}
	types := make([]int32, len(t.tokens))
	for i := range types {
		types[i] = ggufNormal
	}
	if v, has := md["tokenizer.ggml.token_type"]; has {
		tt, ok := ints(v)
		if !ok {
			return nil, fmt.Errorf("tokenizer.ggml.token_type is not an integer array")
		}
		if len(tt) != len(t.tokens) {
			return nil, fmt.Errorf("tokenizer.ggml.token_type has %d entries, tokenizer.ggml.tokens %d", len(tt), len(t.tokens))
		}
		for i, n := range tt {
			types[i] = int32(n)
		}
	}

	// The pre-tokenizer: llama.cpp's table for BPE models.
	pre, _ := md.String("tokenizer.ggml.pre")
	var spec preSpec
	switch model {
	case "gpt2", "whitespace":
		if pre == "" {
			pre = "default"
		}
		spec, ok = ggufPre[pre]
		if !ok {
			return nil, fmt.Errorf("tokenizer.ggml.pre %q is not supported (supported: %s)", pre, strings.Join(supportedPre(), ", "))
		}
	case "gemma4":
		pre, spec = "gemma4", ggufPre["gemma4"] // llama.cpp ignores the key for this model
	}

	// Tokens matched in the text, with llama.cpp's per-model attributes.
	arch, _ := md.String("general.architecture")
	name, _ := md.String("general.name")
	name = strings.ToLower(name)
	phi3, lstripMask := false, ""
	switch {
	case strings.Contains(pre, "jina-v2-de") || strings.Contains(pre, "jina-v2-es") || strings.Contains(pre, "jina-v2-code") ||
		strings.Contains(arch, "nomic-bert-moe") || strings.Contains(arch, "jina-bert-v3"):
		lstripMask = "<mask>"
	case strings.Contains(name, "phi-3") || strings.Contains(name, "phi3"):
		phi3 = true
	case strings.Contains(name, "modern-bert"):
		lstripMask = "[MASK]"
	}
	var added []addedToken
	for i, ty := range types {
		switch ty {
		case ggufUnknown, ggufControl, ggufUserDefined:
			s := t.tokens[i]
			if s == "" {
				continue
			}
			a := addedToken{content: s, id: int32(i), special: ty != ggufUserDefined, asciiSpace: true}
			if phi3 {
				// llama.cpp's attributes for Phi-3 (its tokenizer.json has rstrip).
				a.rstrip = s != "<unk>" && s != "<s>" && s != "<|endoftext|>"
			}
			a.lstrip = s == lstripMask
			added = append(added, a)
			t.isAdd[i] = true
		case ggufByte:
			if b, ok := byteToken(t.tokens[i]); ok {
				t.byteTok[b] = int32(i)
			}
		}
	}
	t.added = newAddedSet(added)

	// Defaults by tokenizer model and pre-tokenizer, as llama.cpp's load:
	// special ids (gpt2's default 11 is left out: it is Falcon's and
	// would end generation at a comma elsewhere), add_bos, add_space_prefix.
	addBOS, addEOS := false, false
	switch model {
	case "llama":
		t.kind = spmScores
		scores, ok := floats(md["tokenizer.ggml.scores"])
		if !ok || len(scores) != len(t.tokens) {
			return nil, fmt.Errorf("tokenizer.ggml.scores is missing, not a number array, or its length differs from tokenizer.ggml.tokens")
		}
		t.scores = scores
		t.byteFallbk = true
		t.spacePrefix, t.escapeWS, t.stripDecoded = true, true, true
		addBOS = true
		t.bos, t.unk = defaultID(1, len(tokens)), defaultID(0, len(tokens))
		t.eos = defaultID(2, len(tokens))
	default: // gpt2, gemma4, whitespace: BPE by merge rank
		t.kind = byteBPE
		if spec.raw {
			t.kind = spmMerges
			t.byteFallbk = true
			t.wholeNewlines = pre == "gemma4"
			for i, s := range t.tokens { // llama.cpp looks <0xXX> up by text
				if b, ok := byteToken(s); ok {
					t.byteTok[b] = int32(i)
				}
			}
		}
		steps, err := spec.steps()
		if err != nil {
			return nil, err
		}
		t.pre, t.ignoreMrg, t.escapeWS = steps, spec.ignoreMerges, spec.escapeWS
		if spec.nfc {
			t.normalize = norm.NFC.String
		}
		if model == "whitespace" {
			// llama.cpp's whitespace session: whitespace is dropped, and
			// letters lowercased if the normalizer says so.
			t.pre = append([]splitter{runeSplitter(func(r rune) int {
				if isWhiteSpace(r) {
					return 0
				}
				return 1
			}, nil)}, t.pre...)
			if v, _ := md.Bool("tokenizer.ggml.normalizer.lowercase"); v {
				t.normalize = func(s string) string { return strings.Map(unicode.ToLower, s) }
			}
		}
		merges, ok := strs(md["tokenizer.ggml.merges"])
		if _, has := md["tokenizer.ggml.merges"]; !has && pre == "kimi-k2" {
			merges, ok = nil, true // llama.cpp reads Kimi-K2 without merges
		}
		if !ok {
			return nil, fmt.Errorf("tokenizer.ggml.merges is missing or not a string array (needed by the %s tokenizer model)", model)
		}
		t.merges = make(map[uint64]mergeVal, len(merges))
		for i, s := range merges {
			if err := t.addMerge(s, int32(i)); err != nil {
				return nil, fmt.Errorf("tokenizer.ggml.merges[%d]: %v", i, err)
			}
		}
		addBOS = spec.addBOS
	}
	if v, ok := md.Bool("tokenizer.ggml.add_space_prefix"); ok {
		t.spacePrefix = v
		t.stripDecoded = v && t.kind != byteBPE
	}
	id := func(key string, def int32) int32 {
		v, ok := md.Int(key)
		if !ok {
			return def
		}
		if v < 0 || v >= int64(len(t.tokens)) {
			return def // llama.cpp keeps the default for an id out of range
		}
		return int32(v)
	}
	if spec.noBOS {
		t.bos = -1
	}
	t.bos = id("tokenizer.ggml.bos_token_id", t.bos)
	t.eos = id("tokenizer.ggml.eos_token_id", t.eos)
	t.unk = id("tokenizer.ggml.unknown_token_id", t.unk)
	if v, ok := md.Bool("tokenizer.ggml.add_bos_token"); ok {
		addBOS = v
	}
	if v, ok := md.Bool("tokenizer.ggml.add_eos_token"); ok {
		addEOS = v
	}
	if pre == "gemma4" {
		addBOS = true // llama.cpp overrides the key for Gemma 4
	}
	if addBOS {
		if t.bos < 0 {
			return nil, fmt.Errorf("tokenizer.ggml.add_bos_token is true, but tokenizer.ggml.bos_token_id is not set")
		}
		t.prefix = []int32{t.bos}
	}
	if addEOS {
		if t.eos < 0 {
			return nil, fmt.Errorf("tokenizer.ggml.add_eos_token is true, but tokenizer.ggml.eos_token_id is not set")
		}
		t.suffix = []int32{t.eos}
	}
	return t, nil
}

// defaultID is id if the vocabulary holds it, else -1 (llama.cpp disables
// a default special id out of range).
func defaultID(id int32, n int) int32 {
	if int(id) >= n {
		return -1
	}
	return id
}

// addMerge records merge "a b" with rank.
func (t *Tokenizer) addMerge(s string, rank int32) error {
	a, b, ok := strings.Cut(s, " ")
	if !ok {
		return fmt.Errorf("merge %q is not two tokens separated by a space", s)
	}
	return t.addMergePair(a, b, rank)
}

func (t *Tokenizer) addMergePair(a, b string, rank int32) error {
	ia, oka := t.vocab[a]
	ib, okb := t.vocab[b]
	ic, okc := t.vocab[a+b]
	if !oka || !okb || !okc {
		return nil // Hugging Face skips merges whose parts are not tokens
	}
	k := pairKey(ia, ib)
	if _, dup := t.merges[k]; !dup {
		t.merges[k] = mergeVal{rank: rank, id: ic}
	}
	return nil
}

func supportedPre() []string {
	var out []string
	for k := range ggufPre {
		out = append(out, k)
	}
	sortStrings(out)
	return out
}
