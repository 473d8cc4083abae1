package tokenizer

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// hfKinds is testdata/hf/hf.json.gz, written by gen.py with Hugging Face
// tokenizers: tokenizer.json configurations for the normalizer,
// pre-tokenizer, added-token and post-processor types, with the ids
// tokenizers gives for each text without and with special tokens.
type hfKinds struct {
	Texts []string `json:"texts"`
	Cases []struct {
		Name       string          `json:"name"`
		Tokenizer  json.RawMessage `json:"tokenizer"`
		IDs        [][]int32       `json:"ids"`
		IDsSpecial [][]int32       `json:"ids_special"`
	} `json:"cases"`
}

// TestHFKinds: each tokenizer.json of testdata/hf encodes every text to
// the ids of Hugging Face tokenizers, with and without special tokens.
func TestHFKinds(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "hf", "hf.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var g hfKinds
	if err := json.NewDecoder(zr).Decode(&g); err != nil {
		t.Fatal(err)
	}
	if len(g.Cases) < 30 {
		t.Fatalf("%d cases, want at least 30", len(g.Cases))
	}
	for _, c := range g.Cases {
		t.Run(c.Name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), c.Tokenizer, 0o644); err != nil {
				t.Fatal(err)
			}
			tok, err := FromHF(dir)
			if err != nil {
				t.Fatal(err)
			}
			for i, text := range g.Texts {
				for _, special := range []bool{false, true} {
					want := c.IDs[i]
					if special {
						want = c.IDsSpecial[i]
					}
					got, err := tok.Encode(text, special)
					if err != nil {
						t.Fatal(err)
					}
					if !equalIDs(got, want) {
						t.Errorf("Encode(%q, %v)\n got %v\nwant %v", text, special, got, want)
					}
				}
			}
		})
	}
}
