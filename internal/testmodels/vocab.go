package testmodels

import (
	"bytes"
	"compress/bzip2"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// VocabDir returns the repository's tokenizer test data folder,
// rt/tokenizer/testdata/vocab: vocabulary-only GGUF files, compressed
// with bzip2 (<name>.bz2) or derived from another by one metadata string
// (<name>.from, see Vocab), each with llama.cpp's test strings (<name>.inp)
// and the ids Hugging Face tokenizers give for them (<name>.out). Its
// README.md says where the files come from.
func VocabDir(t testing.TB) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, "rt", "tokenizer", "testdata", "vocab")
}

// Vocabs lists the GGUF vocabularies in VocabDir by name (for example
// "ggml-vocab-gpt-2.gguf"), stored (.bz2) or derived (.from), sorted.
func Vocabs(t testing.TB) []string {
	t.Helper()
	var names []string
	for _, ext := range []string{".bz2", ".from"} {
		files, err := filepath.Glob(filepath.Join(VocabDir(t), "*.gguf"+ext))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			names = append(names, strings.TrimSuffix(filepath.Base(f), ext))
		}
	}
	if len(names) == 0 {
		t.Fatalf("no vocabularies (*.gguf.bz2, *.gguf.from) in %s", VocabDir(t))
	}
	sort.Strings(names)
	return names
}

// derivedVocab is a <name>.from file: the GGUF vocabulary name is Base's
// with the string metadata value of Key set to Value, and its bytes hash
// to SHA256 (llama.cpp's qwen35 vocabulary is its qwen2 one with
// tokenizer.ggml.pre "qwen35": kept once, 1.2 MB less in the tree).
type derivedVocab struct {
	Base, Key, Value, SHA256 string
}

// Vocab returns the path of the GGUF vocabulary name (see Vocabs),
// decompressed from VocabDir (or derived from another, derivedVocab, and
// checked against its hash) into a temporary folder that is removed when
// the test ends.
func Vocab(t testing.TB, name string) string {
	t.Helper()
	data := vocabBytes(t, name)
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// vocabBytes returns the GGUF vocabulary name's bytes.
func vocabBytes(t testing.TB, name string) []byte {
	t.Helper()
	dir := VocabDir(t)
	if spec, err := os.ReadFile(filepath.Join(dir, name+".from")); err == nil {
		var d derivedVocab
		if err := json.Unmarshal(spec, &d); err != nil {
			t.Fatalf("%s.from: %v", name, err)
		}
		data := setGGUFString(t, vocabBytes(t, d.Base), d.Key, d.Value)
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != d.SHA256 {
			t.Fatalf("%s derived from %s (%s = %q) has sha256 %x, want %s", name, d.Base, d.Key, d.Value, sum, d.SHA256)
		}
		return data
	}
	in, err := os.Open(filepath.Join(dir, name+".bz2"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	data, err := io.ReadAll(bzip2.NewReader(in)) // bzip2 checks its block CRCs
	if err != nil {
		t.Fatalf("%s.bz2: %v", name, err)
	}
	return data
}

// setGGUFString returns the GGUF file data with the string value of
// metadata key replaced by value: the key's entry (length-prefixed key,
// type 8 = string, length-prefixed value) is found and rewritten, which
// in a vocabulary-only file (no tensor data to keep aligned) is the whole
// change.
func setGGUFString(t testing.TB, data []byte, key, value string) []byte {
	t.Helper()
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(key)))
	b.WriteString(key)
	binary.Write(&b, binary.LittleEndian, uint32(8)) // GGUF_TYPE_STRING
	head := b.Bytes()
	i := bytes.Index(data, head)
	if i < 0 {
		t.Fatalf("GGUF metadata has no string key %q", key)
	}
	at := i + len(head)
	if at+8 > len(data) {
		t.Fatalf("GGUF metadata %q is cut short", key)
	}
	n := int(binary.LittleEndian.Uint64(data[at:]))
	end := at + 8 + n
	if n < 0 || end > len(data) {
		t.Fatalf("GGUF metadata %q has a bad length %d", key, n)
	}
	var out bytes.Buffer
	out.Write(data[:at])
	binary.Write(&out, binary.LittleEndian, uint64(len(value)))
	out.WriteString(value)
	out.Write(data[end:])
	return out.Bytes()
}
