package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/text/unicode/norm"
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
	AddPrefixSpace bool              `json:"add_prefix_space"`
	UseRegex       *bool             `json:"use_regex"`
	Individual     bool              `json:"individual_digits"`
	Replacement    string            `json:"replacement"`
	PrependScheme  string            `json:"prepend_scheme"`
	Split          *bool             `json:"split"`
	Start          int               `json:"start"`
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
// tokenizer_config.json (and extra EOS ids from config.json and
// generation_config.json) when present.
func FromHF(dir string) (*Tokenizer, error) {
	path := filepath.Join(dir, "tokenizer.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if st, err2 := os.Stat(dir); err2 != nil || !st.IsDir() {
				return nil, fmt.Errorf("%s: not a model folder (it does not exist or is not a directory)", dir)
			}
			return nil, fmt.Errorf("%s: no tokenizer.json in the folder: copy the model's tokenizer.json there (slow tokenizers such as tokenizer.model alone are not supported)", dir)
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
	for _, name := range []string{"generation_config.json", "config.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		var c struct {
			EOS json.RawMessage `json:"eos_token_id"`
		}
		if json.Unmarshal(b, &c) != nil {
			continue
		}
		for _, id := range intOrList(c.EOS) {
			if id >= 0 && int(id) < len(t.tokens) && !containsID(t.eos, id) {
				t.eos = append(t.eos, id)
			}
		}
	}
	return t, nil
}

func containsID(ids []int32, id int32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func intOrList(raw json.RawMessage) []int32 {
	var one int32
	if json.Unmarshal(raw, &one) == nil && len(raw) > 0 && string(raw) != "null" {
		return []int32{one}
	}
	var many []int32
	_ = json.Unmarshal(raw, &many)
	return many
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
		return nil, fmt.Errorf("tokenizer model %q is not supported (only BPE)", f.Model.Type)
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
	for _, a := range f.AddedTokens {
		t.tokens[a.ID] = a.Content
		if _, ok := t.vocab[a.Content]; !ok {
			t.vocab[a.Content] = a.ID
		}
		t.isAdd[a.ID] = true
		if a.Content != "" {
			t.added = append(t.added, addedToken{content: a.Content, id: a.ID, special: a.Special, lstrip: a.LStrip, rstrip: a.RStrip})
		}
	}
	t.sortAdded()
	t.byteFallbk = f.Model.ByteFallback
	t.ignoreMrg = f.Model.IgnoreMerges
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

	// Pre-tokenizer decides the kind: ByteLevel anywhere means byte-level BPE.
	var byteLevel bool
	pre, err := t.hfPre(f.PreTokenizer, &byteLevel)
	if err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %v", err)
	}
	t.pre = pre
	if byteLevel {
		t.kind = byteBPE
	} else {
		t.kind = spmMerges
	}
	if err := t.hfNormalizer(f.Normalizer); err != nil {
		return nil, fmt.Errorf("normalizer: %v", err)
	}
	if err := t.hfDecoder(f.Decoder); err != nil {
		return nil, fmt.Errorf("decoder: %v", err)
	}

	// BOS/EOS.
	if cfg != nil {
		if s := tokenString(cfg.BOS); s != "" {
			if id, ok := t.vocab[s]; ok {
				t.bos = id
			}
		}
		if s := tokenString(cfg.EOS); s != "" {
			if id, ok := t.vocab[s]; ok {
				t.eos = []int32{id}
			}
		}
	}
	if err := t.hfPost(f.PostProcessor); err != nil {
		return nil, fmt.Errorf("post_processor: %v", err)
	}
	if cfg != nil && cfg.AddBOS != nil {
		t.addBOS = *cfg.AddBOS
	}
	if cfg != nil && cfg.AddEOS != nil {
		t.addEOS = *cfg.AddEOS
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

func (t *Tokenizer) hfPre(raw json.RawMessage, byteLevel *bool) ([]splitter, error) {
	n, err := parseNode(raw)
	if err != nil || n == nil {
		return nil, err
	}
	switch n.Type {
	case "Sequence":
		var out []splitter
		for _, r := range n.Pretokenizers {
			s, err := t.hfPre(r, byteLevel)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	case "ByteLevel":
		// Per piece: a space is prepended (add_prefix_space), the piece is
		// split by the GPT-2 pattern (use_regex), then mapped to the byte
		// alphabet; later steps see the mapped text.
		*byteLevel = true
		var out []splitter
		if n.AddPrefixSpace {
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
	case "Split":
		pat, ok := n.Pattern["Regex"]
		if !ok {
			s, ok2 := n.Pattern["String"]
			if !ok2 {
				return nil, fmt.Errorf("Split without a pattern")
			}
			pat = regexpQuote(s)
		}
		b, ok := splitBehaviors[n.Behavior]
		if !ok && n.Behavior != "" {
			return nil, fmt.Errorf("Split behavior %q is not supported", n.Behavior)
		}
		s, err := regexSplitter(pat, b, n.Invert)
		return []splitter{s}, err
	case "Punctuation":
		// Each ASCII or Unicode punctuation character is a match.
		b, ok := splitBehaviors[n.Behavior]
		if !ok && n.Behavior != "" {
			return nil, fmt.Errorf("Punctuation behavior %q is not supported", n.Behavior)
		}
		s, err := regexSplitter(patPunct, b, false)
		return []splitter{s}, err
	case "Digits":
		return []splitter{digitSplitter(n.Individual)}, nil
	case "Metaspace":
		t.spacePrefix = n.PrependScheme != "never"
		t.stripDecoded = t.spacePrefix
		if n.Split == nil || *n.Split {
			return []splitter{{split: metaspaceSplitter}}, nil
		}
		return nil, nil
	}
	return nil, fmt.Errorf("%q is not supported", n.Type)
}

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

func (t *Tokenizer) hfNormalizer(raw json.RawMessage) error {
	n, err := parseNode(raw)
	if err != nil || n == nil {
		return err
	}
	var steps []func(string) string
	var add func(n *hfNode) error
	add = func(n *hfNode) error {
		switch n.Type {
		case "Sequence":
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
		case "NFC":
			steps = append(steps, norm.NFC.String)
		case "NFD":
			steps = append(steps, norm.NFD.String)
		case "NFKC":
			steps = append(steps, norm.NFKC.String)
		case "NFKD":
			steps = append(steps, norm.NFKD.String)
		case "Lowercase":
			steps = append(steps, strings.ToLower)
		case "Prepend":
			// SentencePiece's "▁" prefix: done by spacePrefix before " "→"▁".
			if n.Prepend == "▁" {
				t.spacePrefix = true
				t.stripDecoded = true
				return nil
			}
			p := n.Prepend
			steps = append(steps, func(s string) string { return p + s })
		case "Replace":
			from, ok := n.Pattern["String"]
			if !ok {
				return fmt.Errorf("Replace with a regex pattern is not supported")
			}
			if from == " " && n.Content == "▁" {
				return nil // done for every SentencePiece model
			}
			to := n.Content
			steps = append(steps, func(s string) string { return strings.ReplaceAll(s, from, to) })
		default:
			return fmt.Errorf("%q is not supported", n.Type)
		}
		return nil
	}
	if err := add(n); err != nil {
		return err
	}
	if len(steps) > 0 {
		t.normalize = func(s string) string {
			for _, f := range steps {
				s = f(s)
			}
			return s
		}
	}
	return nil
}

// hfDecoder checks the decoder is one this package reproduces: ByteLevel
// for byte-level models; Replace/ByteFallback/Fuse/Strip/Metaspace for
// SentencePiece ones.
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
	case "ByteLevel", "Replace", "ByteFallback", "Fuse", "Metaspace":
	default:
		return fmt.Errorf("%q is not supported", n.Type)
	}
	return nil
}

// hfPost reads which special tokens TemplateProcessing puts around a
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
			ids := n.SpecialTokens[sp.ID].IDs
			if len(ids) != 1 {
				continue
			}
			if !seenSeq {
				t.bos, t.addBOS = ids[0], true
			} else {
				if !containsID(t.eos, ids[0]) {
					t.eos = append([]int32{ids[0]}, t.eos...)
				} else if t.eos[0] != ids[0] {
					t.eos = append([]int32{ids[0]}, t.eos...)
				}
				t.addEOS = true
			}
		}
	}
	return nil
}
