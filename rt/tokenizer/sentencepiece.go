package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	sentencepiece "github.com/eliben/go-sentencepiece"
	"google.golang.org/protobuf/encoding/protowire"
)

// A SentencePiece model file (tokenizer.model, the ModelProto message of
// sentencepiece_model.proto) is what older Llama, Mistral and Gemma uploads
// ship instead of tokenizer.json. Its BPE is run by
// github.com/eliben/go-sentencepiece, which reproduces the sentencepiece
// library's BPE encoding but leaves two normalizer options to its caller:
// add_dummy_prefix and remove_extra_whitespaces. This file reads the fields
// it needs from the proto's wire form (google.golang.org/protobuf's
// protowire), applies those two options itself and hands the library the
// model with them off.
//
// Field numbers of sentencepiece_model.proto used here.
const (
	spModelPieces     = 1 // ModelProto.pieces (SentencePiece)
	spModelTrainer    = 2 // ModelProto.trainer_spec (TrainerSpec)
	spModelNormalizer = 3 // ModelProto.normalizer_spec (NormalizerSpec)

	spPieceText  = 1 // SentencePiece.piece
	spPieceScore = 2 // SentencePiece.score
	spPieceType  = 3 // SentencePiece.type: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte

	spTrainerModelType = 3  // TrainerSpec.model_type: 1 unigram, 2 BPE, 3 word, 4 char
	spTrainerWSSuffix  = 24 // TrainerSpec.treat_whitespace_as_suffix
	spTrainerUnkID     = 40 // TrainerSpec.unk_id (default 0)
	spTrainerBOSID     = 41 // TrainerSpec.bos_id (default 1)
	spTrainerEOSID     = 42 // TrainerSpec.eos_id (default 2)

	spNormName       = 1 // NormalizerSpec.name ("identity", "nmt_nfkc", ...)
	spNormCharsmap   = 2 // NormalizerSpec.precompiled_charsmap
	spNormDummy      = 3 // NormalizerSpec.add_dummy_prefix (default true)
	spNormExtraWS    = 4 // NormalizerSpec.remove_extra_whitespaces (default true)
	spNormEscapeWS   = 5 // NormalizerSpec.escape_whitespaces (default true)
	spTypeUnknown    = 2
	spTypeControl    = 3
	spTypeUserDefine = 4
	spTypeUnused     = 5
	spTypeByte       = 6
	spModelTypeBPE   = 2
)

// spModel is what this package reads of a ModelProto.
type spModel struct {
	pieces    []string
	types     []int32
	modelType int64
	wsSuffix  bool
	unk       int64
	bos, eos  int64
	normName  string
	charsmap  bool
	dummy     bool
	extraWS   bool
	escapeWS  bool
	rewritten []byte // the model with add_dummy_prefix and remove_extra_whitespaces off
}

// parseSPModel reads a ModelProto.
func parseSPModel(b []byte) (*spModel, error) {
	m := &spModel{modelType: 1, unk: 0, bos: 1, eos: 2, dummy: true, extraWS: true, escapeWS: true}
	var out []byte
	seenNorm := false
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v uint64, msg []byte, raw []byte) error {
		switch num {
		case spModelPieces:
			if typ != protowire.BytesType {
				return fmt.Errorf("pieces: wrong wire type")
			}
			text, ty := "", int32(1)
			if err := eachField(msg, func(num protowire.Number, typ protowire.Type, v uint64, s []byte, _ []byte) error {
				switch {
				case num == spPieceText && typ == protowire.BytesType:
					text = string(s)
				case num == spPieceType && typ == protowire.VarintType:
					ty = int32(v)
				}
				return nil
			}); err != nil {
				return fmt.Errorf("piece %d: %v", len(m.pieces), err)
			}
			m.pieces = append(m.pieces, text)
			m.types = append(m.types, ty)
		case spModelTrainer:
			if err := eachField(msg, func(num protowire.Number, typ protowire.Type, v uint64, _ []byte, _ []byte) error {
				if typ != protowire.VarintType {
					return nil
				}
				switch num {
				case spTrainerModelType:
					m.modelType = int64(v)
				case spTrainerWSSuffix:
					m.wsSuffix = v != 0
				case spTrainerUnkID:
					m.unk = int64(int32(v))
				case spTrainerBOSID:
					m.bos = int64(int32(v))
				case spTrainerEOSID:
					m.eos = int64(int32(v))
				}
				return nil
			}); err != nil {
				return fmt.Errorf("trainer_spec: %v", err)
			}
		case spModelNormalizer:
			seenNorm = true
			var spec []byte
			if err := eachField(msg, func(num protowire.Number, typ protowire.Type, v uint64, s []byte, raw []byte) error {
				switch {
				case num == spNormName && typ == protowire.BytesType:
					m.normName = string(s)
				case num == spNormCharsmap && typ == protowire.BytesType:
					m.charsmap = len(s) > 0
				case num == spNormDummy && typ == protowire.VarintType:
					m.dummy = v != 0
					return nil // dropped below
				case num == spNormExtraWS && typ == protowire.VarintType:
					m.extraWS = v != 0
					return nil
				case num == spNormEscapeWS && typ == protowire.VarintType:
					m.escapeWS = v != 0
				}
				spec = append(spec, raw...)
				return nil
			}); err != nil {
				return fmt.Errorf("normalizer_spec: %v", err)
			}
			spec = protowire.AppendTag(spec, spNormDummy, protowire.VarintType)
			spec = protowire.AppendVarint(spec, 0)
			spec = protowire.AppendTag(spec, spNormExtraWS, protowire.VarintType)
			spec = protowire.AppendVarint(spec, 0)
			out = protowire.AppendTag(out, spModelNormalizer, protowire.BytesType)
			out = protowire.AppendBytes(out, spec)
			return nil
		}
		out = append(out, raw...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// go-sentencepiece v0.6.0 checks whether two adjacent symbols form a
	// piece in a buffer as long as the longest piece, and panics when they
	// are longer together. An unused piece twice that long, of spaces
	// (which the library's escaping leaves none of in the text, so it never
	// matches), makes the buffer long enough.
	longest := 0
	for _, p := range m.pieces {
		longest = max(longest, len(p))
	}
	pad := protowire.AppendString(protowire.AppendTag(nil, spPieceText, protowire.BytesType), strings.Repeat(" ", 2*longest+8))
	pad = protowire.AppendVarint(protowire.AppendTag(pad, spPieceType, protowire.VarintType), spTypeUnused)
	out = protowire.AppendBytes(protowire.AppendTag(out, spModelPieces, protowire.BytesType), pad)
	if !seenNorm { // all defaults: add the spec with the two options off
		spec := protowire.AppendVarint(protowire.AppendTag(nil, spNormDummy, protowire.VarintType), 0)
		spec = protowire.AppendVarint(protowire.AppendTag(spec, spNormExtraWS, protowire.VarintType), 0)
		out = protowire.AppendBytes(protowire.AppendTag(out, spModelNormalizer, protowire.BytesType), spec)
	}
	m.rewritten = out
	return m, nil
}

// eachField calls f for each field of a protobuf message: its number,
// wire type, value (varints and fixed-size values), contents (length-
// delimited values) and raw bytes (tag included).
func eachField(b []byte, f func(num protowire.Number, typ protowire.Type, v uint64, msg []byte, raw []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		raw, val := b[:n+m], b[n:n+m]
		var v uint64
		var msg []byte
		switch typ {
		case protowire.VarintType:
			v, _ = protowire.ConsumeVarint(val)
		case protowire.Fixed32Type:
			x, _ := protowire.ConsumeFixed32(val)
			v = uint64(x)
		case protowire.Fixed64Type:
			v, _ = protowire.ConsumeFixed64(val)
		case protowire.BytesType:
			msg, _ = protowire.ConsumeBytes(val)
		}
		if err := f(num, typ, v, msg, raw); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}

// fromSentencePieceDir builds the tokenizer of a Hugging Face folder that
// has tokenizer.model and no tokenizer.json, with bos/eos and
// add_bos_token/add_eos_token from tokenizer_config.json when present
// (defaults: add BOS, not EOS, as transformers' Llama and Gemma
// tokenizers do).
func fromSentencePieceDir(dir string) (*Tokenizer, error) {
	path := filepath.Join(dir, "tokenizer.model")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, unwrapPathErr(err))
	}
	var cfg hfConfig
	cfgPath := filepath.Join(dir, "tokenizer_config.json")
	if c, err := os.ReadFile(cfgPath); err == nil {
		if err := json.Unmarshal(c, &cfg); err != nil {
			return nil, fmt.Errorf("%s: %v", cfgPath, oneLine(err))
		}
	}
	t, err := fromSentencePiece(b, &cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	t.source = path
	return t, nil
}

// fromSentencePiece builds a tokenizer from the bytes of a SentencePiece
// model and an optional tokenizer_config.json.
func fromSentencePiece(b []byte, cfg *hfConfig) (*Tokenizer, error) {
	m, err := parseSPModel(b)
	if err != nil {
		return nil, fmt.Errorf("not a SentencePiece model: %v", err)
	}
	switch {
	case len(m.pieces) == 0:
		return nil, fmt.Errorf("not a SentencePiece model: it has no pieces")
	case len(m.pieces) > math.MaxInt32:
		return nil, fmt.Errorf("%d pieces (too many)", len(m.pieces))
	case m.modelType != spModelTypeBPE:
		return nil, fmt.Errorf("SentencePiece model type %d is not supported (supported: 2, BPE)", m.modelType)
	case m.wsSuffix:
		return nil, fmt.Errorf("SentencePiece treat_whitespace_as_suffix is not supported")
	case !m.escapeWS:
		return nil, fmt.Errorf("SentencePiece escape_whitespaces=false is not supported")
	case m.charsmap && m.normName != "identity":
		return nil, fmt.Errorf("SentencePiece normalization %q is not supported (supported: identity)", m.normName)
	}
	proc, err := newSPProcessor(m.rewritten)
	if err != nil {
		return nil, err
	}
	n := len(m.pieces)
	t := &Tokenizer{
		eos:           -1,
		kind:          spmModel,
		tokens:        m.pieces,
		vocab:         make(map[string]int32, n),
		isAdd:         make([]bool, n),
		unk:           -1,
		bos:           -1,
		sp:            proc,
		spDummyPrefix: m.dummy,
		spTrimWS:      m.extraWS,
		stripDecoded:  m.dummy,
	}
	for i := range t.byteTok {
		t.byteTok[i] = -1
	}
	var added []addedToken
	for i, s := range m.pieces {
		if _, dup := t.vocab[s]; !dup {
			t.vocab[s] = int32(i)
		}
		switch m.types[i] {
		case spTypeControl, spTypeUnknown:
			// transformers matches its special tokens in the text first.
			added = append(added, addedToken{content: s, id: int32(i), special: true})
			t.isAdd[i] = true
		case spTypeByte:
			if c, ok := byteToken(s); ok {
				t.byteTok[c] = int32(i)
			}
		}
	}
	t.added = newAddedSet(added)
	inRange := func(id int64) int32 {
		if id < 0 || id >= int64(n) {
			return -1
		}
		return int32(id)
	}
	t.unk, t.bos = inRange(m.unk), inRange(m.bos)
	if e := inRange(m.eos); e >= 0 {
		t.eos = e
	}
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
	addBOS, addEOS := true, false
	if cfg != nil && cfg.AddBOS != nil {
		addBOS = *cfg.AddBOS
	}
	if cfg != nil && cfg.AddEOS != nil {
		addEOS = *cfg.AddEOS
	}
	if addBOS && t.bos >= 0 {
		t.prefix = []int32{t.bos}
	}
	if addEOS && t.eos >= 0 {
		t.suffix = []int32{t.eos}
	}
	return t, nil
}

// newSPProcessor loads a model into go-sentencepiece, turning a panic of
// the library into an error.
func newSPProcessor(b []byte) (p *sentencepiece.Processor, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("SentencePiece model: %v", r)
		}
	}()
	p, err = sentencepiece.NewProcessor(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("SentencePiece model: %v", err)
	}
	return p, nil
}

// errSPEncode is returned when go-sentencepiece fails on an input.
var errSPEncode = errors.New("SentencePiece encoding failed")

// recoverSP turns a panic of go-sentencepiece's Encode into *err.
func recoverSP(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %v", errSPEncode, r)
	}
}

// encodeSentencePiece encodes text as the sentencepiece library does:
// extra spaces removed (remove_extra_whitespaces), a space prepended
// (add_dummy_prefix), then BPE, with a run of unknown characters as one
// <unk>.
func (t *Tokenizer) encodeSentencePiece(text string, ids []int32) []int32 {
	if t.spTrimWS {
		text = strings.Join(strings.FieldsFunc(text, func(r rune) bool { return r == ' ' }), " ")
	}
	if text == "" {
		return ids
	}
	if t.spDummyPrefix {
		text = " " + text
	}
	n := len(ids)
	for _, tok := range t.sp.Encode(text) {
		id := int32(tok.ID)
		if id == t.unk && len(ids) > n && ids[len(ids)-1] == t.unk {
			continue // sentencepiece fuses a run of unknown characters into one <unk>
		}
		ids = append(ids, id)
	}
	return ids
}
