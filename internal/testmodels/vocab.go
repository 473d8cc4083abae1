package testmodels

import (
	"compress/bzip2"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// VocabDir returns the repository's tokenizer test data folder,
// rt/tokenizer/testdata/vocab: vocabulary-only GGUF files, compressed
// with bzip2 (<name>.bz2), each with llama.cpp's test strings (<name>.inp) and the ids
// Hugging Face tokenizers give for them (<name>.out). Its README.md says
// where the files come from.
func VocabDir(t testing.TB) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "rt", "tokenizer", "testdata", "vocab")
}

// Vocabs lists the GGUF vocabularies in VocabDir by name (for example
// "ggml-vocab-gpt-2.gguf"), sorted.
func Vocabs(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(VocabDir(t), "*.gguf.bz2"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no vocabularies (*.gguf.bz2) in %s (%v)", VocabDir(t), err)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(filepath.Base(f), ".bz2")
	}
	sort.Strings(names)
	return names
}

// Vocab returns the path of the GGUF vocabulary name (see Vocabs),
// decompressed from VocabDir into a temporary folder that is removed when
// the test ends.
func Vocab(t testing.TB, name string) string {
	t.Helper()
	in, err := os.Open(filepath.Join(VocabDir(t), name+".bz2"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr := bzip2.NewReader(in)
	path := filepath.Join(t.TempDir(), name)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil { // bzip2 checks its block CRCs
		out.Close()
		t.Fatalf("%s.bz2: %v", name, err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
