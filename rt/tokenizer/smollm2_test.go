package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// smollm2GGUF returns the SmolLM2 GGUF that scripts/fetch-models.sh puts in
// $ARCHC_MODELS/smollm2 (default .cache/models under the repository root).
// It skips the test when the file is absent, or fails it when CI is set.
func smollm2GGUF(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("ARCHC_MODELS")
	if dir == "" {
		dir = "../../.cache/models"
	}
	m, _ := filepath.Glob(filepath.Join(dir, "smollm2", "*.gguf"))
	if len(m) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("no SmolLM2 GGUF in %s/smollm2: run scripts/fetch-models.sh", dir)
		}
		t.Skipf("no SmolLM2 GGUF in %s/smollm2 (run scripts/fetch-models.sh)", dir)
	}
	return m[0]
}

type smollm2Golden struct {
	BOS   string `json:"bos_token"`
	EOS   string `json:"eos_token"`
	Cases []struct {
		Text       string  `json:"text"`
		IDs        []int32 `json:"ids"`
		IDsSpecial []int32 `json:"ids_special"`
		Decoded    string  `json:"decoded"`
	} `json:"cases"`
}

func readSmolLM2Golden(t testing.TB) smollm2Golden {
	raw, err := os.ReadFile("../../golden/tokenizer/smollm2.json")
	if err != nil {
		t.Fatal(err)
	}
	var g smollm2Golden
	if err := json.Unmarshal(raw, &g); err != nil {
		t.Fatalf("golden/tokenizer/smollm2.json: %v", err)
	}
	if len(g.Cases) < 50 {
		t.Fatalf("golden/tokenizer/smollm2.json: %d cases, want at least 50", len(g.Cases))
	}
	return g
}

// checkGolden compares tok with the Hugging Face ids recorded by
// golden/tokenizer/gen_smollm2.py.
func checkGolden(t *testing.T, tok *Tokenizer, g smollm2Golden) {
	for _, c := range g.Cases {
		got, err := tok.Encode(c.Text, false)
		if err != nil {
			t.Fatal(err)
		}
		if !equalIDs(got, c.IDs) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, got, c.IDs)
		}
		got, _ = tok.Encode(c.Text, true)
		if !equalIDs(got, c.IDsSpecial) {
			t.Errorf("Encode(%q, addSpecial)\n got %v\nwant %v", c.Text, got, c.IDsSpecial)
		}
		if d := tok.Decode(c.IDs); d != c.Decoded {
			t.Errorf("Decode(%v) = %q, want %q", c.IDs, d, c.Decoded)
		}
	}
}

func TestSmolLM2GGUF(t *testing.T) {
	tok, err := FromGGUF(smollm2GGUF(t))
	if err != nil {
		t.Fatal(err)
	}
	g := readSmolLM2Golden(t)
	checkGolden(t, tok, g)
	if got := tok.TokenText(tok.BOS()); got != g.BOS {
		t.Errorf("BOS %q, want %q", got, g.BOS)
	}
	if eos := tok.EOS(); len(eos) == 0 || tok.TokenText(eos[0]) != g.EOS {
		t.Errorf("EOS %v, want %q", eos, g.EOS)
	}
}
