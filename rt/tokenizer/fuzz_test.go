package tokenizer

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/archc/archc/internal/testmodels"
)

var (
	gpt2Once sync.Once
	gpt2Tok  *Tokenizer
	gpt2Err  error
)

func gpt2(t testing.TB) *Tokenizer {
	gpt2Once.Do(func() { gpt2Tok, gpt2Err = FromGGUF(testmodels.Vocab(t, "ggml-vocab-gpt-2.gguf")) })
	if gpt2Err != nil {
		t.Fatal(gpt2Err)
	}
	return gpt2Tok
}

// FuzzRoundTrip: byte-level BPE decodes what it encodes, for valid UTF-8.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "Hello world", "  \n\t x", "🦙.cpp 😶‍🌫️", "我想在apple工作", "<|endoftext|>hi", "'s 're 123456"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		tok := gpt2(t)
		ids, err := tok.Encode(s, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := tok.Decode(ids); got != s {
			t.Fatalf("Decode(Encode(%q)) = %q", s, got)
		}
		st := tok.NewStream()
		var out string
		for _, id := range ids {
			piece := st.Add(id)
			if !utf8.ValidString(piece) || containsFFFD(piece) && !containsFFFD(s) {
				t.Fatalf("stream piece %q of %q", piece, s)
			}
			out += piece
		}
		if out+st.Flush() != s {
			t.Fatalf("stream decode of %q = %q", s, out)
		}
	})
}

func containsFFFD(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError {
			return true
		}
	}
	return false
}

// FuzzFromGGUF: a corrupt GGUF file is an error, never a panic.
func FuzzFromGGUF(f *testing.F) {
	head, err := readHead(testmodels.Vocab(f, "ggml-vocab-llama-spm.gguf"), 2048)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(head)
	f.Add([]byte("GGUF"))
	f.Add([]byte("GGUF\x03\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "x.gguf")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tok, err := FromGGUF(p)
		if err == nil {
			_, _ = tok.Encode("Hello <s> world", true)
		}
	})
}

// FuzzFromHF: a corrupt tokenizer.json is an error, never a panic.
func FuzzFromHF(f *testing.F) {
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2},"merges":["a b"]},"pre_tokenizer":{"type":"ByteLevel"}}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"<0x41>":0,"▁":1},"merges":[["▁","<0x41>"]],"byte_fallback":true},"normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]},"added_tokens":[{"id":3,"content":"<s>","special":true}]}`))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		tok, err := FromHF(dir)
		if err == nil {
			ids, _ := tok.Encode("Hello <s> world AB", true)
			_ = tok.Decode(ids)
		}
	})
}

func readHead(path string, n int) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return b[:min(n, len(b))], nil
}
