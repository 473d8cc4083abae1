package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// hfFile is the part of tokenizer.json this package reads.
type hfFile struct {
	AddedTokens []struct {
		ID         int32  `json:"id"`
		Content    string `json:"content"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
		Normalized bool   `json:"normalized"`
		Special    bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         struct {
		Type         string           `json:"type"`
		Vocab        map[string]int32 `json:"vocab"`
		Merges       json.RawMessage  `json:"merges"`
		UnkToken     *string          `json:"unk_token"`
		ByteFallback bool             `json:"byte_fallback"`
		IgnoreMerges bool             `json:"ignore_merges"`
		FuseUnk      bool             `json:"fuse_unk"`
		Dropout      *float64         `json:"dropout"`
		Prefix       *string          `json:"continuing_subword_prefix"`
		Suffix       *string          `json:"end_of_word_suffix"`
	} `json:"model"`
}

// hfNode is any normalizer / pre-tokenizer / decoder / post-processor.
type hfNode struct {
	Type           string            `json:"type"`
	Normalizers    []json.RawMessage `json:"normalizers"`
	Pretokenizers  []json.RawMessage `json:"pretokenizers"`
	Decoders       []json.RawMessage `json:"decoders"`
	Processors     []json.RawMessage `json:"processors"`
	Prepend        string            `json:"prepend"`
	Content        string            `json:"content"`
	Pattern        map[string]string `json:"pattern"`
	Behavior       string            `json:"behavior"`
	Invert         bool              `json:"invert"`
	AddPrefixSpace *bool             `json:"add_prefix_space"`
	UseRegex       *bool             `json:"use_regex"`
	Individual     bool              `json:"individual_digits"`
	Replacement    string            `json:"replacement"`
	PrependScheme  string            `json:"prepend_scheme"`
	Split          *bool             `json:"split"`
	Start          int               `json:"start"`
	Stop           int               `json:"stop"`
	StripLeft      bool              `json:"strip_left"`
	StripRight     bool              `json:"strip_right"`
	Delimiter      string            `json:"delimiter"`
	Length         *int              `json:"length"`
	CleanText      *bool             `json:"clean_text"`
	ChineseChars   *bool             `json:"handle_chinese_chars"`
	StripAccents   *bool             `json:"strip_accents"`
	Lowercase      *bool             `json:"lowercase"`
	Charsmap       *string           `json:"precompiled_charsmap"`
	Sep            []json.RawMessage `json:"sep"`
	Cls            []json.RawMessage `json:"cls"`
	Single         []map[string]struct {
		ID string `json:"id"`
	} `json:"single"`
	SpecialTokens map[string]struct {
		IDs []int32 `json:"ids"`
	} `json:"special_tokens"`
}

// hfConfig is the part of tokenizer_config.json this package reads.
type hfConfig struct {
	BOS         json.RawMessage `json:"bos_token"`
	EOS         json.RawMessage `json:"eos_token"`
	AddBOS      *bool           `json:"add_bos_token"`
	AddEOS      *bool           `json:"add_eos_token"`
	AddedTokens map[string]struct {
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens_decoder"`
}

// FromHF builds the tokenizer of a Hugging Face model folder from its
// tokenizer.json, with bos/eos and add_bos_token/add_eos_token from
// tokenizer_config.json when present. A folder with a SentencePiece
// tokenizer.model and no tokenizer.json loads that instead.
func FromHF(dir string) (*Tokenizer, error) {
	path := filepath.Join(dir, "tokenizer.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if st, err2 := os.Stat(dir); err2 != nil || !st.IsDir() {
				return nil, fmt.Errorf("%s: not a model folder (it does not exist or is not a directory)", dir)
			}
			if _, err := os.Stat(filepath.Join(dir, "tokenizer.model")); err == nil {
				return fromSentencePieceDir(dir)
			}
			if target, lerr := os.Readlink(path); lerr == nil {
				return nil, fmt.Errorf("%s: a symbolic link to %s, which does not exist (a fixture folder copied without its links' targets? copy with cp -rL)", path, target)
			}
			if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
				return nil, fmt.Errorf("%s: not a model folder (no config.json, no tokenizer.json or tokenizer.model): give a Hugging Face model folder or a .gguf file", dir)
			}
			return nil, fmt.Errorf("%s: no tokenizer.json or tokenizer.model in the folder: copy the model's tokenizer files there", dir)
		}
		return nil, fmt.Errorf("%s: %v", path, unwrapPathErr(err))
	}
	var cfg hfConfig
	cfgPath := filepath.Join(dir, "tokenizer_config.json")
	if b, err := os.ReadFile(cfgPath); err == nil {
		if err := json.Unmarshal(b, &cfg); err != nil {
			return nil, fmt.Errorf("%s: %v", cfgPath, oneLine(err))
		}
	}
	t, err := fromHFJSON(raw, &cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	t.source = path
	return t, nil
}

// tokenString reads "tok" or {"content": "tok"}.
func tokenString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Content string `json:"content"`
	}
	_ = json.Unmarshal(raw, &o)
	return o.Content
}

func fromHFJSON(raw []byte, cfg *hfConfig) (*Tokenizer, error) {
	var f hfFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("not valid tokenizer JSON: %v", oneLine(err))
	}
	if f.Model.Type != "BPE" && !(f.Model.Type == "" && f.Model.Vocab != nil && f.Model.Merges != nil) {
		return nil, fmt.Errorf("tokenizer model %q is not supported (supported: BPE)", f.Model.Type)
	}
	if d := f.Model.Dropout; d != nil && *d != 0 {
		return nil, fmt.Errorf("model.dropout %v is not supported (it makes tokenization random)", *d)
	}
	if p := f.Model.Prefix; p != nil && *p != "" {
		return nil, fmt.Errorf("model.continuing_subword_prefix %q is not supported", *p)
	}
	if p := f.Model.Suffix; p != nil && *p != "" {
		return nil, fmt.Errorf("model.end_of_word_suffix %q is not supported", *p)
	}
	n := 0
	for _, id := range f.Model.Vocab {
		if id < 0 {
			return nil, fmt.Errorf("vocabulary has a negative id %d", id)
		}
		n = max(n, int(id)+1)
	}
	for _, a := range f.AddedTokens {
		if a.ID < 0 {
			return nil, fmt.Errorf("added token %q has a negative id", a.Content)
		}
		n = max(n, int(a.ID)+1)
	}
	if n == 0 {
		return nil, fmt.Errorf("the vocabulary is empty")
	}
	if n > 1<<24 {
		return nil, fmt.Errorf("token id %d is too large", n-1)
	}
	t := &Tokenizer{
		eos:    -1,
		tokens: make([]string, n),
		vocab:  make(map[string]int32, n),
		isAdd:  make([]bool, n),
		merges: map[uint64]mergeVal{},
		unk:    -1,
		bos:    -1,
	}
	for i := range t.byteTok {
		t.byteTok[i] = -1
	}
	for s, id := range f.Model.Vocab {
		t.tokens[id] = s
		t.vocab[s] = id
		if b, ok := byteToken(s); ok {
			t.byteTok[b] = id
		}
	}
	t.byteFallbk = f.Model.ByteFallback
	t.ignoreMrg = f.Model.IgnoreMerges
	t.fuseUnk = f.Model.FuseUnk
	if f.Model.UnkToken != nil {
		if id, ok := t.vocab[*f.Model.UnkToken]; ok {
			t.unk = id
		}
	}

	// Merges: ["a b", ...] or [["a", "b"], ...].
	if len(f.Model.Merges) > 0 && string(f.Model.Merges) != "null" {
		var strs []string
		var pairs [][2]string
		if json.Unmarshal(f.Model.Merges, &strs) == nil {
			for i, s := range strs {
				if err := t.addMerge(s, int32(i)); err != nil {
					return nil, fmt.Errorf("model.merges[%d]: %v", i, err)
				}
			}
		} else if err := json.Unmarshal(f.Model.Merges, &pairs); err == nil {
			for i, p := range pairs {
				_ = t.addMergePair(p[0], p[1], int32(i))
			}
		} else {
			return nil, fmt.Errorf("model.merges: %v", oneLine(err))
		}
	}

	// The pre-tokenizer decides the kind: ByteLevel anywhere means
	// byte-level BPE; else BPE merges the text's own characters.
	var byteLevel bool
	pre, err := t.hfPre(f.PreTokenizer, &byteLevel)
	if err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %v", err)
	}
	t.pre = pre
	normalize, normByteLevel, err := hfNormalizer(f.Normalizer)
	if err != nil {
		return nil, fmt.Errorf("normalizer: %v", err)
	}
	t.normalize = normalize
	t.kind = spmMerges
	if byteLevel || normByteLevel {
		t.kind = byteBPE
	}
	t.normMapped = normByteLevel // the text is in the byte alphabet already
	if err := t.hfDecoder(f.Decoder); err != nil {
		return nil, fmt.Errorf("decoder: %v", err)
	}

	// Added tokens: normalized ones are matched in normalized text, as
	// their normalized content.
	var plain, normed []addedToken
	for _, a := range f.AddedTokens {
		t.tokens[a.ID] = a.Content
		if _, ok := t.vocab[a.Content]; !ok {
			t.vocab[a.Content] = a.ID
		}
		t.isAdd[a.ID] = true
		x := addedToken{content: a.Content, id: a.ID, special: a.Special, lstrip: a.LStrip, rstrip: a.RStrip, singleWord: a.SingleWord}
		if a.Normalized {
			if t.normalize != nil {
				x.content = t.normalize(x.content)
			}
			normed = append(normed, x)
		} else {
			plain = append(plain, x)
		}
	}
	t.added, t.addedNorm = newAddedSet(plain), newAddedSet(normed)

	// BOS/EOS.
	if cfg != nil {
		if s := tokenString(cfg.BOS); s != "" {
			if id, ok := t.vocab[s]; ok {
				t.bos = id
			}
		}
		if s := tokenString(cfg.EOS); s != "" {
			if id, ok := t.vocab[s]; ok {
				t.eos = id
			}
		}
	}
	if err := t.hfPost(f.PostProcessor); err != nil {
		return nil, fmt.Errorf("post_processor: %v", err)
	}
	// An explicit add_bos_token / add_eos_token rebuilds the template, as
	// transformers' Llama and Gemma tokenizers do.
	if cfg != nil && cfg.AddBOS != nil {
		t.prefix = nil
		if *cfg.AddBOS && t.bos >= 0 {
			t.prefix = []int32{t.bos}
		}
	}
	if cfg != nil && cfg.AddEOS != nil {
		t.suffix = nil
		if *cfg.AddEOS && t.eos >= 0 {
			t.suffix = []int32{t.eos}
		}
	}
	return t, nil
}

func parseNode(raw json.RawMessage) (*hfNode, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var n hfNode
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("%v", oneLine(err))
	}
	return &n, nil
}

// hfDecoders are the decoder types this package reproduces: ByteLevel for
// byte-level models; Replace/ByteFallback/Fuse/Strip/Metaspace for
// SentencePiece-style ones.
var hfDecoders = []string{"ByteFallback", "ByteLevel", "Fuse", "Metaspace", "Replace", "Sequence", "Strip"}

// hfDecoder checks the decoder is one this package reproduces.
func (t *Tokenizer) hfDecoder(raw json.RawMessage) error {
	n, err := parseNode(raw)
	if err != nil || n == nil {
		return err
	}
	switch n.Type {
	case "Sequence":
		for _, r := range n.Decoders {
			if err := t.hfDecoder(r); err != nil {
				return err
			}
		}
	case "Strip":
		t.stripDecoded = n.Start > 0
	case "Metaspace":
		t.stripDecoded = metaspaceScheme(n) != "never"
	case "ByteLevel", "Replace", "ByteFallback", "Fuse":
	default:
		return fmt.Errorf("%q is not supported (supported: %s)", n.Type, strings.Join(hfDecoders, ", "))
	}
	return nil
}

// hfPostProcessors are the post-processor types this package reads.
var hfPostProcessors = []string{"BertProcessing", "ByteLevel", "RobertaProcessing", "Sequence", "TemplateProcessing"}

// hfPost reads which special tokens the post-processor puts around a
// single sequence.
func (t *Tokenizer) hfPost(raw json.RawMessage) error {
	n, err := parseNode(raw)
	if err != nil || n == nil {
		return err
	}
	switch n.Type {
	case "Sequence":
		for _, r := range n.Processors {
			if err := t.hfPost(r); err != nil {
				return err
			}
		}
	case "ByteLevel":
	case "TemplateProcessing":
		seenSeq := false
		for _, item := range n.Single {
			if _, ok := item["Sequence"]; ok {
				seenSeq = true
				continue
			}
			sp, ok := item["SpecialToken"]
			if !ok {
				continue
			}
			st, ok := n.SpecialTokens[sp.ID]
			if !ok {
				return fmt.Errorf("TemplateProcessing: special token %q has no ids", sp.ID)
			}
			if !seenSeq {
				t.prefix = append(t.prefix, st.IDs...)
			} else {
				t.suffix = append(t.suffix, st.IDs...)
			}
		}
		if len(t.prefix) == 1 {
			t.bos = t.prefix[0]
		}
		if len(t.suffix) == 1 {
			t.eos = t.suffix[0]
		}
	case "RobertaProcessing", "BertProcessing":
		cls, err1 := processorToken(n.Cls)
		sep, err2 := processorToken(n.Sep)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("%s: %v", n.Type, err)
		}
		t.prefix, t.suffix = []int32{cls}, []int32{sep}
	default:
		return fmt.Errorf("%q is not supported (supported: %s)", n.Type, strings.Join(hfPostProcessors, ", "))
	}
	for _, id := range append(slices.Clone(t.prefix), t.suffix...) {
		if id < 0 || int(id) >= len(t.tokens) {
			return fmt.Errorf("special token id %d is outside the vocabulary", id)
		}
	}
	return nil
}

// processorToken reads a ["text", id] pair of RobertaProcessing and
// BertProcessing.
func processorToken(raw []json.RawMessage) (int32, error) {
	var id int32
	if len(raw) != 2 || json.Unmarshal(raw[1], &id) != nil {
		return 0, fmt.Errorf("want a [token, id] pair")
	}
	return id, nil
}
