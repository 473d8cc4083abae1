package iree

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/rt/ireetool"
	"github.com/archc/archc/rt/tensor"
)

// needLLGuidance skips (fails in CI) when the venv lacks llguidance.
func needLLGuidance(t *testing.T) {
	t.Helper()
	needVenv(t)
	py, err := ireetool.FindPython()
	if err != nil {
		t.Skip(err)
	}
	if exec.Command(py, "-c", "import llguidance").Run() != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("llguidance is not installed: scripts/setup.sh installs requirements.txt")
		}
		t.Skip("llguidance is not installed: pip install -r requirements.txt into the venv")
	}
}

// TestGrammarMask decodes over a toy vocabulary (the bytes a-e and an end
// token) with logits that always prefer "e": the grammar "ab" | "ac"
// forces "a", then (bias making "c" likelier) "c", then the end token.
func TestGrammarMask(t *testing.T) {
	needLLGuidance(t)
	w, ctx := startWorker(t)
	tokens := []string{"a", "b", "c", "d", "e", "<end>"}
	var hexes []string
	for _, s := range tokens {
		hexes = append(hexes, hex.EncodeToString([]byte(s)))
	}
	vocab := filepath.Join(t.TempDir(), "vocab.json")
	raw, _ := json.Marshal(map[string]any{"tokens": hexes, "special": []int{5}, "eos": []int{5}})
	if err := os.WriteFile(vocab, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	logits, _ := tensor.FromF32([]int64{1, 6}, []float32{0, 1, 0.5, 2, 3, -1})
	var got []string
	for step := 0; step < 3; step++ {
		row := SampleRow{Grammar: &GrammarRow{Key: "k1", Vocab: vocab}, LogitBias: map[int32]float64{2: 1}}
		if step == 0 {
			row.Grammar.Lark = `start: "ab" | "ac"`
		}
		cs, err := w.Sample(ctx, logits, []SampleRow{row})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tokens[cs[0].ID])
	}
	if s := strings.Join(got, " "); s != "a c <end>" {
		t.Errorf("decoded %q, want \"a c <end>\"", s)
	}
	// A bad grammar is an error naming the grammar; the worker stays usable.
	_, err := w.Sample(ctx, logits, []SampleRow{{Grammar: &GrammarRow{Key: "k2", Vocab: vocab, Lark: `start: nosuchrule`}}})
	if err == nil || !strings.Contains(err.Error(), "grammar") {
		t.Errorf("bad grammar: err = %v", err)
	}
	// A later row whose matcher is unknown says so.
	_, err = w.Sample(ctx, logits, []SampleRow{{Grammar: &GrammarRow{Key: "gone", Vocab: vocab}}})
	if err == nil || !strings.Contains(err.Error(), "restarted") {
		t.Errorf("unknown matcher: err = %v", err)
	}
	if cs, err := w.Sample(ctx, logits, []SampleRow{{LogitBias: map[int32]float64{0: 100}}}); err != nil || cs[0].ID != 0 {
		t.Errorf("logit_bias +100 on token 0: %v, %v", cs, err)
	}
}
