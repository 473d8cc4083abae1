package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// spmGolden is testdata/spm/spm.json, written by gen.py with the
// sentencepiece library: per model, its special ids and the ids and
// decoded text of each case.
type spmGolden map[string]struct {
	BOS, EOS, Unk int32
	Cases         []struct {
		Text    string  `json:"text"`
		IDs     []int32 `json:"ids"`
		Decoded string  `json:"decoded"`
	} `json:"cases"`
}

// spmDir makes a model folder holding only testdata/spm/<name>.model as
// tokenizer.model, and tokenizer_config.json if config is not "".
func spmDir(t *testing.T, name, config string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "spm", name+".model"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.model"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSentencePieceModels: a Hugging Face folder with only tokenizer.model
// encodes and decodes as the sentencepiece library does, and adds BOS by
// default (transformers' Llama and Gemma tokenizers).
func TestSentencePieceModels(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "spm", "spm.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g spmGolden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatal(err)
	}
	if len(g) != 3 {
		t.Fatalf("%d models in spm.json, want 3", len(g))
	}
	for name, m := range g {
		t.Run(name, func(t *testing.T) {
			tok, err := FromHF(spmDir(t, name, ""))
			if err != nil {
				t.Fatal(err)
			}
			if tok.BOS() != m.BOS || tok.EOS() != m.EOS {
				t.Errorf("BOS %d EOS %v, want %d [%d]", tok.BOS(), tok.EOS(), m.BOS, m.EOS)
			}
			for _, c := range m.Cases {
				got, err := tok.Encode(c.Text, false)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, c.IDs) {
					t.Errorf("Encode(%q) = %v, want %v", c.Text, got, c.IDs)
				}
				withBOS, _ := tok.Encode(c.Text, true)
				if want := append([]int32{m.BOS}, c.IDs...); strings.HasPrefix(c.Text, "<s>") == false && !slices.Equal(withBOS, want) {
					t.Errorf("Encode(%q, true) = %v, want %v", c.Text, withBOS, want)
				}
				// Decode writes special and unknown tokens as their text
				// (sentencepiece drops control tokens and writes " ⁇ ").
				if slices.ContainsFunc(c.IDs, func(id int32) bool { return tok.isAdd[id] }) {
					continue
				}
				if d := tok.Decode(c.IDs); d != c.Decoded {
					t.Errorf("Decode(%v) = %q, want %q", c.IDs, d, c.Decoded)
				}
			}
		})
	}
}

// TestSentencePieceConfig: tokenizer_config.json's add_bos_token and
// add_eos_token decide the special tokens.
func TestSentencePieceConfig(t *testing.T) {
	tok, err := FromHF(spmDir(t, "llama", `{"add_bos_token": false, "add_eos_token": true}`))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := tok.Encode("Hello world", false)
	got, _ := tok.Encode("Hello world", true)
	if want := append(slices.Clone(plain), 2); !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestSentencePieceErrors: what is not a SentencePiece BPE model is a
// clear error naming the file.
func TestSentencePieceErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tokenizer.model")
	for _, c := range []struct {
		data []byte
		want string
	}{
		{[]byte("not a protobuf \xff\xff\xff"), "not a SentencePiece model"},
		{nil, "no pieces"},
		{[]byte{0x12, 0x02, 0x18, 0x01, 0x0a, 0x05, 0x0a, 0x03, 'a', 'b', 'c'}, "model type 1 is not supported"}, // trainer_spec{model_type: UNIGRAM}, one piece
	} {
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := FromHF(dir)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%q: error %v, want one naming %s and %q", c.data, err, p, c.want)
		}
	}
}
