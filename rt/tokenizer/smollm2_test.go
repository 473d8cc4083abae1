package tokenizer

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/archc/archc/internal/testmodels"
)

// smollm2GGUF returns the SmolLM2 GGUF (see internal/testmodels).
func smollm2GGUF(t testing.TB) string { return testmodels.GGUF(t, "smollm2") }

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
	if eos := tok.EOS(); eos < 0 || tok.TokenText(eos) != g.EOS {
		t.Errorf("EOS %v, want %q", eos, g.EOS)
	}
}
