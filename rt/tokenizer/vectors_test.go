package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/archc/archc/internal/testmodels"
)

// The tokenizer test data is testdata/vocab (see its README.md):
// vocabulary-only GGUF files of several tokenizer families, gzipped, with
// llama.cpp's test strings (.inp) and the ids the Hugging Face tokenizers
// give for them (.out). testmodels.Vocab decompresses one for a test.

// readVectors reads the .inp/.out pair of vocabulary gguf: strings
// separated by lines "__ggml_vocab_test__", and one line of
// space-separated ids per string.
func readVectors(t *testing.T, gguf string) ([]string, [][]int32) {
	t.Helper()
	base := filepath.Join("testdata", "vocab", gguf)
	inp, err := os.ReadFile(base + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(base + ".out")
	if err != nil {
		t.Fatal(err)
	}
	texts := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
	if texts[len(texts)-1] == "" {
		texts = texts[:len(texts)-1]
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(texts) {
		t.Fatalf("%s: %d strings but %d id lines", gguf, len(texts), len(lines))
	}
	ids := make([][]int32, len(lines))
	for i, l := range lines {
		for _, f := range strings.Fields(l) {
			v, err := strconv.ParseInt(f, 10, 32)
			if err != nil {
				t.Fatalf("%s.out line %d: %v", gguf, i+1, err)
			}
			ids[i] = append(ids[i], int32(v))
		}
	}
	return texts, ids
}

// TestGGUFVectors: each GGUF vocabulary of testdata/vocab encodes
// llama.cpp's test strings to the ids of its Hugging Face tokenizer.
func TestGGUFVectors(t *testing.T) {
	for _, name := range testmodels.Vocabs(t) {
		t.Run(name, func(t *testing.T) {
			tok, err := FromGGUF(testmodels.Vocab(t, name))
			if err != nil {
				t.Fatal(err)
			}
			texts, want := readVectors(t, name)
			for i, s := range texts {
				got, err := tok.Encode(s, false)
				if err != nil {
					t.Fatal(err)
				}
				if !equalIDs(got, want[i]) {
					t.Errorf("Encode(%q)\n got %v\nwant %v", s, got, want[i])
				}
			}
		})
	}
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGGUFAddSpecial: with addSpecial, each GGUF vocabulary of testdata/vocab
// adds the special tokens llama.cpp adds (testdata/vocab/special.json,
// written by gen_special.py with llama.cpp's llama_tokenize): BOS from
// tokenizer.ggml.add_bos_token, or llama.cpp's default for the tokenizer
// model and pre-tokenizer where the key is absent.
func TestGGUFAddSpecial(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "vocab", "special.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases map[string][]struct {
		Text string  `json:"text"`
		IDs  []int32 `json:"ids"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, name := range testmodels.Vocabs(t) {
		t.Run(name, func(t *testing.T) {
			if len(cases[name]) == 0 {
				t.Fatalf("no cases for %s in special.json: rerun gen_special.py", name)
			}
			tok, err := FromGGUF(testmodels.Vocab(t, name))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cases[name] {
				got, err := tok.Encode(c.Text, true)
				if err != nil {
					t.Fatal(err)
				}
				if !equalIDs(got, c.IDs) {
					t.Errorf("Encode(%q, true) = %v, want %v", c.Text, got, c.IDs)
				}
			}
		})
	}
}
