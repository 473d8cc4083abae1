package tokenizer

import (
	"fmt"
	"os"
	"strings"

	gguf "github.com/gpustack/gguf-parser-go"
	"golang.org/x/text/unicode/norm"
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
// values (strings, bools, numbers, and []any for arrays).
type Metadata map[string]any

// ReadGGUFMetadata reads the metadata key-values of the GGUF file at path.
// It never panics on a corrupt file.
func ReadGGUFMetadata(path string) (md Metadata, err error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("%s: %v", path, unwrapPathErr(err))
	}
	defer func() {
		if r := recover(); r != nil {
			md, err = nil, fmt.Errorf("%s: not a readable GGUF file: %v", path, r)
		}
	}()
	if err := checkGGUFHeader(path); err != nil {
		return nil, fmt.Errorf("%s: not a readable GGUF file: %v", path, err)
	}
	f, err := gguf.ParseGGUFFile(path, gguf.SkipCache())
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable GGUF file: %v", path, oneLine(err))
	}
	md = Metadata{}
	for _, kv := range f.Header.MetadataKV {
		if a, ok := kv.Value.(gguf.GGUFMetadataKVArrayValue); ok {
			md[kv.Key] = a.Array
		} else {
			md[kv.Key] = kv.Value
		}
	}
	return md, nil
}

// FromGGUF builds the tokenizer described by the tokenizer.ggml.* metadata
// of the GGUF file at path. Vocabulary-only files (no tensors) work.
func FromGGUF(path string) (*Tokenizer, error) {
	md, err := ReadGGUFMetadata(path)
	if err != nil {
		return nil, err
	}
	t, err := fromMetadata(md)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	t.source = path
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

func fromMetadata(md Metadata) (*Tokenizer, error) {
	model, ok := md.String("tokenizer.ggml.model")
	if !ok {
		return nil, fmt.Errorf("no tokenizer.ggml.model in the metadata (the file has no tokenizer)")
	}
	rawTokens, ok := md["tokenizer.ggml.tokens"].([]any)
	if !ok || len(rawTokens) == 0 {
		return nil, fmt.Errorf("tokenizer.ggml.tokens is missing or not a string array")
	}
	if len(rawTokens) > 1<<31-1 {
		return nil, fmt.Errorf("tokenizer.ggml.tokens has %d entries (too many)", len(rawTokens))
	}
	t := &Tokenizer{
		tokens: make([]string, len(rawTokens)),
		vocab:  make(map[string]int32, len(rawTokens)),
		isAdd:  make([]bool, len(rawTokens)),
		unk:    -1,
		bos:    -1,
	}
	for i := range t.byteTok {
		t.byteTok[i] = -1
	}
	for i, v := range rawTokens {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("tokenizer.ggml.tokens[%d] is %T, not a string", i, v)
		}
		t.tokens[i] = s
		t.vocab[s] = int32(i) // a repeated text maps to its last id, as in llama.cpp

	}
	types := make([]int32, len(t.tokens))
	for i := range types {
		types[i] = ggufNormal
	}
	if tt, ok := md["tokenizer.ggml.token_type"].([]any); ok {
		if len(tt) != len(t.tokens) {
			return nil, fmt.Errorf("tokenizer.ggml.token_type has %d entries, tokenizer.ggml.tokens %d", len(tt), len(t.tokens))
		}
		for i, v := range tt {
			n, ok := toInt(v)
			if !ok {
				return nil, fmt.Errorf("tokenizer.ggml.token_type[%d] is %T, not an integer", i, v)
			}
			types[i] = int32(n)
		}
	}
	arch, _ := md.String("general.architecture")
	name, _ := md.String("general.name")
	phi3 := arch == "phi3" || strings.Contains(strings.ToLower(name), "phi-3") || strings.Contains(strings.ToLower(name), "phi3")
	for i, ty := range types {
		switch ty {
		case ggufUnknown, ggufControl, ggufUserDefined:
			s := t.tokens[i]
			if s == "" {
				continue
			}
			a := addedToken{content: s, id: int32(i), special: ty != ggufUserDefined}
			if phi3 && ty == ggufControl || phi3 && s == "</s>" {
				// llama.cpp's attributes for Phi-3 (its tokenizer.json has rstrip).
				a.rstrip = s != "<unk>" && s != "<s>" && s != "<|endoftext|>"
			}
			t.added = append(t.added, a)
			t.isAdd[i] = true
		case ggufByte:
			if b, ok := byteToken(t.tokens[i]); ok {
				t.byteTok[b] = int32(i)
			}
		}
	}
	t.sortAdded()

	switch model {
	case "gpt2":
		t.kind = byteBPE
		pre, _ := md.String("tokenizer.ggml.pre")
		if pre == "" {
			pre = "default"
		}
		spec, ok := ggufPre[pre]
		if !ok {
			return nil, fmt.Errorf("tokenizer.ggml.pre %q is not supported (supported: %s)", pre, strings.Join(supportedPre(), ", "))
		}
		steps, err := spec.steps()
		if err != nil {
			return nil, err
		}
		t.pre, t.ignoreMrg = steps, spec.ignoreMerges
		if spec.nfc {
			t.normalize = norm.NFC.String
		}
		rawMerges, ok := md["tokenizer.ggml.merges"].([]any)
		if !ok {
			return nil, fmt.Errorf("tokenizer.ggml.merges is missing (needed by the gpt2 tokenizer model)")
		}
		t.merges = make(map[uint64]mergeVal, len(rawMerges))
		for i, v := range rawMerges {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("tokenizer.ggml.merges[%d] is %T, not a string", i, v)
			}
			if err := t.addMerge(s, int32(i)); err != nil {
				return nil, fmt.Errorf("tokenizer.ggml.merges[%d]: %v", i, err)
			}
		}
		t.addBOS = false
	case "llama":
		t.kind = spmScores
		raw, ok := md["tokenizer.ggml.scores"].([]any)
		if !ok || len(raw) != len(t.tokens) {
			return nil, fmt.Errorf("tokenizer.ggml.scores is missing or its length differs from tokenizer.ggml.tokens")
		}
		t.scores = make([]float32, len(raw))
		for i, v := range raw {
			f, ok := toFloat(v)
			if !ok {
				return nil, fmt.Errorf("tokenizer.ggml.scores[%d] is %T, not a number", i, v)
			}
			t.scores[i] = f
		}
		t.byteFallbk = true
		t.spacePrefix = true
		t.stripDecoded = true
		t.addBOS = true
	default:
		return nil, fmt.Errorf("tokenizer.ggml.model %q is not supported (want gpt2 or llama)", model)
	}
	if v, ok := md.Bool("tokenizer.ggml.add_space_prefix"); ok && t.kind != byteBPE {
		t.spacePrefix, t.stripDecoded = v, v
	}
	id := func(key string) int32 {
		v, ok := md.Int(key)
		if !ok || v < 0 || v >= int64(len(t.tokens)) {
			return -1
		}
		return int32(v)
	}
	t.bos = id("tokenizer.ggml.bos_token_id")
	if e := id("tokenizer.ggml.eos_token_id"); e >= 0 {
		t.eos = append(t.eos, e)
	}
	if e := id("tokenizer.ggml.eot_token_id"); e >= 0 && (len(t.eos) == 0 || t.eos[0] != e) {
		t.eos = append(t.eos, e)
	}
	t.unk = id("tokenizer.ggml.unknown_token_id")
	if v, ok := md.Bool("tokenizer.ggml.add_bos_token"); ok {
		t.addBOS = v
	}
	if v, ok := md.Bool("tokenizer.ggml.add_eos_token"); ok {
		t.addEOS = v
	}
	return t, nil
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
