package testmodels

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// VocabDir returns the repository's tokenizer test data folder,
// rt/tokenizer/testdata/vocab: vocabulary-only GGUF files, gzipped
// (<name>.gz), each with llama.cpp's test strings (<name>.inp) and the ids
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
	files, err := filepath.Glob(filepath.Join(VocabDir(t), "*.gguf.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no vocabularies (*.gguf.gz) in %s (%v)", VocabDir(t), err)
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(filepath.Base(f), ".gz")
	}
	sort.Strings(names)
	return names
}

// Vocab returns the path of the GGUF vocabulary name (see Vocabs),
// decompressed from VocabDir into a temporary folder that is removed when
// the test ends.
func Vocab(t testing.TB, name string) string {
	t.Helper()
	in, err := os.Open(filepath.Join(VocabDir(t), name+".gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatalf("%s.gz: %v", name, err)
	}
	path := filepath.Join(t.TempDir(), name)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil { // gzip checks its CRC at the end
		out.Close()
		t.Fatalf("%s.gz: %v", name, err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
