package tokenizer

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/archc/archc/internal/testmodels"
)

// TestStreamHoldsPartialCharacters: byte tokens of one emoji are emitted
// only once the character is complete, never as U+FFFD.
func TestStreamHoldsPartialCharacters(t *testing.T) {
	tok, err := FromGGUF(testmodels.Vocab(t, "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := tok.Encode("this is 🦙.cpp", false) // 🦙 is four <0xXX> tokens
	s := tok.NewStream()
	var pieces []string
	for _, id := range ids {
		p := s.Add(id)
		if strings.ContainsRune(p, utf8.RuneError) {
			t.Fatalf("piece %q has U+FFFD", p)
		}
		pieces = append(pieces, p)
	}
	if got := strings.Join(pieces, "") + s.Flush(); got != "this is 🦙.cpp" {
		t.Errorf("stream = %q", got)
	}
	if !containsString(pieces, "🦙") {
		t.Errorf("pieces %q: want the emoji in one piece", pieces)
	}
	// An unfinished character is U+FFFD only at Flush.
	s = tok.NewStream()
	if p := s.Add(tok.byteTok[0xF0]); p != "" {
		t.Errorf("partial: %q", p)
	}
	if p := s.Flush(); p != "\uFFFD" {
		t.Errorf("flush: %q", p)
	}
}

func containsString(a []string, s string) bool {
	for _, x := range a {
		if x == s {
			return true
		}
	}
	return false
}

func TestSpecialTokensAndBOS(t *testing.T) {
	tok, err := FromGGUF(testmodels.Vocab(t, "ggml-vocab-llama-bpe.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if tok.BOS() != 128000 || tok.VocabSize() != 128256 {
		t.Fatalf("BOS %d, vocab %d", tok.BOS(), tok.VocabSize())
	}
	ids, _ := tok.Encode("<|begin_of_text|>Hello<|eot_id|>", false)
	if want := []int32{128000, 9906, 128009}; !equalIDs(ids, want) {
		t.Errorf("special tokens in text: %v, want %v", ids, want)
	}
	// The file has no tokenizer.ggml.add_bos_token: llama.cpp's default for
	// llama-bpe adds BOS, and keeps one written in the text (llama.cpp's
	// llama_tokenize with add_special and parse_special gives these ids).
	ids, _ = tok.Encode("<|begin_of_text|>Hello", true)
	if want := []int32{128000, 128000, 9906}; !equalIDs(ids, want) {
		t.Errorf("BOS in the text and added: %v, want %v", ids, want)
	}
	ids, _ = tok.Encode("Hello", true)
	if want := []int32{128000, 9906}; !equalIDs(ids, want) {
		t.Errorf("BOS not added: %v", ids)
	}
	if d := tok.Decode(ids); d != "<|begin_of_text|>Hello" {
		t.Errorf("Decode = %q", d)
	}
}
