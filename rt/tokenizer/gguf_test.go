package tokenizer

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/internal/testmodels"
)

// TestFromGGUFFile: the tokenizer built from an opened gguf.File is the
// one FromGGUF builds from the path.
func TestFromGGUFFile(t *testing.T) {
	for _, name := range []string{"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"} {
		t.Run(name, func(t *testing.T) {
			p := testmodels.Vocab(t, name)
			f, err := gguf.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			a, err := FromGGUFFile(f)
			if err != nil {
				t.Fatal(err)
			}
			b, err := FromGGUF(p)
			if err != nil {
				t.Fatal(err)
			}
			if a.VocabSize() != b.VocabSize() || a.BOS() != b.BOS() || a.EOS() != b.EOS() {
				t.Errorf("vocab %d/%d, bos %d/%d, eos %v/%v", a.VocabSize(), b.VocabSize(), a.BOS(), b.BOS(), a.EOS(), b.EOS())
			}
			for _, s := range []string{"Hello world", " 🦙 <s> x\n\ty", "我想在apple工作"} {
				ia, _ := a.Encode(s, true)
				ib, _ := b.Encode(s, true)
				if !slices.Equal(ia, ib) {
					t.Errorf("%q: %v vs %v", s, ia, ib)
				}
			}
		})
	}
}

// TestGGUFMetadata: metadata values come typed as gguf.File gives them.
func TestGGUFMetadata(t *testing.T) {
	md, err := ReadGGUFMetadata(testmodels.Vocab(t, "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if tok, ok := md["tokenizer.ggml.tokens"].([]string); !ok || len(tok) != 32000 || tok[1] != "<s>" {
		t.Errorf("tokens: %T", md["tokenizer.ggml.tokens"])
	}
	if sc, ok := md["tokenizer.ggml.scores"].([]float64); !ok || len(sc) != 32000 {
		t.Errorf("scores: %T", md["tokenizer.ggml.scores"])
	}
	if tt, ok := md["tokenizer.ggml.token_type"].([]int64); !ok || len(tt) != 32000 || tt[1] != ggufControl {
		t.Errorf("token_type: %T", md["tokenizer.ggml.token_type"])
	}
	got := map[string]any{}
	for _, k := range []string{"general.architecture", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.add_bos_token"} {
		got[k] = md[k]
	}
	want := map[string]any{"general.architecture": "llama", "tokenizer.ggml.bos_token_id": uint64(1), "tokenizer.ggml.add_bos_token": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scalars %v, want %v", got, want)
	}
}

// TestFromGGUFTruncated: a cut vocabulary file is reported as a truncated
// header, in one line naming the file.
func TestFromGGUFTruncated(t *testing.T) {
	raw, err := os.ReadFile(testmodels.Vocab(t, "ggml-vocab-llama-spm.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cut.gguf")
	if err := os.WriteFile(p, raw[:len(raw)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = FromGGUF(p)
	if err == nil || !strings.Contains(err.Error(), p+": truncated header: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v", err)
	}
}
