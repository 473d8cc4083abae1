package tokenizer

import (
	"compress/bzip2"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSmolLM2HF loads the Hugging Face layout of the SmolLM2 tokenizer that
// golden/tokenizer/gen_smollm2.py saved (tokenizer.json, bzip2) and checks
// the same ids as the GGUF.
func TestSmolLM2HF(t *testing.T) {
	src := "../../golden/tokenizer/smollm2-hf"
	dir := t.TempDir()
	f, err := os.Open(filepath.Join(src, "tokenizer.json.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(bzip2.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(src, "tokenizer_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := FromHF(dir)
	if err != nil {
		t.Fatal(err)
	}
	g := readSmolLM2Golden(t)
	checkGolden(t, tok, g)
	if got := tok.TokenText(tok.BOS()); got != g.BOS {
		t.Errorf("BOS %q, want %q", got, g.BOS)
	}
}

func TestFromHFErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := FromHF(dir)
	if err == nil || !strings.Contains(err.Error(), "not a model folder (no config.json, no tokenizer.json or tokenizer.model)") {
		t.Errorf("empty folder: %v; want it called no model folder", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = FromHF(dir)
	if err == nil || !strings.Contains(err.Error(), "no tokenizer.json or tokenizer.model in the folder: copy the model's tokenizer files there") {
		t.Errorf("model folder without a tokenizer: %v", err)
	}
	_, err = FromHF(filepath.Join(dir, "missing"))
	if err == nil || !strings.Contains(err.Error(), "not a model folder") {
		t.Errorf("missing folder: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(`{"model": {"type": "Unigram"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = FromHF(dir)
	if err == nil || !strings.Contains(err.Error(), "Unigram") || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Errorf("unigram: %v", err)
	}
}

func TestFromGGUFErrors(t *testing.T) {
	_, err := FromGGUF(filepath.Join(t.TempDir(), "nope.gguf"))
	if err == nil || !strings.Contains(err.Error(), "nope.gguf") {
		t.Errorf("missing file: %v", err)
	}
	p := filepath.Join(t.TempDir(), "bad.gguf")
	if err := os.WriteFile(p, []byte("GGUF\x03\x00\x00\x00garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = FromGGUF(p)
	if err == nil || !strings.Contains(err.Error(), "bad.gguf") || strings.Contains(err.Error(), "\n") {
		t.Errorf("corrupt file: %v", err)
	}
}
