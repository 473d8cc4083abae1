package tokenizer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// sharedTokenizers holds the project's tokenizer test data (see
// ../shared/README.md): vocabulary-only GGUF files of several tokenizer
// families with llama.cpp's test strings (.inp) and the ids the Hugging
// Face tokenizers give for them (.out). The GGUF files total about 26 MB,
// too much to copy into testdata, so the tests read them there.
const sharedTokenizers = "../../../shared/data/tokenizers"

// needShared skips the test when sharedTokenizers is absent (a plain
// clone), and fails it under CI, where ../shared is always present.
func needShared(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(sharedTokenizers); err == nil {
		return
	}
	msg := sharedTokenizers + " is missing: these tests need the project's shared tokenizer data (../shared/data/tokenizers next to the repository)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// readVectors reads a .inp/.out pair: strings separated by lines
// "__ggml_vocab_test__", and one line of space-separated ids per string.
func readVectors(t *testing.T, gguf string) ([]string, [][]int32) {
	t.Helper()
	inp, err := os.ReadFile(gguf + ".inp")
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(gguf + ".out")
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

// TestGGUFVectors: each shared GGUF vocabulary encodes llama.cpp's test
// strings to the ids of its Hugging Face tokenizer.
func TestGGUFVectors(t *testing.T) {
	needShared(t)
	files, err := filepath.Glob(filepath.Join(sharedTokenizers, "*.gguf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no GGUF vocabularies in %s", sharedTokenizers)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			tok, err := FromGGUF(f)
			if err != nil {
				t.Fatal(err)
			}
			texts, want := readVectors(t, f)
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
