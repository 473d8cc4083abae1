package iree

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/formats/tensor"
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
	greedy := Sampling{RepetitionPenalty: 1, DRYBase: 1.75, DRYAllowedLength: 2, DRYBreakers: []int32{}}
	g := greedy
	g.Grammar = &Grammar{Vocab: vocab, Lark: `start: "ab" | "ac"`}
	g.LogitBias = []Bias{{ID: 2, Bias: 1}}
	if err := w.StartSeq(ctx, 1, 6, g, []int32{4, 4}); err != nil {
		t.Fatal(err)
	}
	var got []string
	var last []int32
	for step := 0; step < 3; step++ {
		cs, err := w.Sample(ctx, logits, []SampleRow{SeqRow(1, 0, last)})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tokens[cs[0].ID])
		last = []int32{int32(cs[0].ID)}
	}
	if s := strings.Join(got, " "); s != "a c <end>" {
		t.Errorf("decoded %q, want \"a c <end>\"", s)
	}
	// A bad grammar is an error naming the grammar; the worker stays usable.
	bad := greedy
	bad.Grammar = &Grammar{Vocab: vocab, Lark: `start: nosuchrule`}
	if err := w.StartSeq(ctx, 2, 6, bad, nil); err == nil || !strings.Contains(err.Error(), "grammar") {
		t.Errorf("bad grammar: err = %v", err)
	}
	// A token the grammar does not allow, sent as generated, is refused by name.
	if err := w.StartSeq(ctx, 3, 6, g, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Sample(ctx, logits, []SampleRow{SeqRow(3, 0, []int32{4})}); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("disallowed token: err = %v", err)
	}
	biased := greedy
	biased.LogitBias = []Bias{{ID: 0, Bias: 100}}
	if err := w.StartSeq(ctx, 4, 6, biased, nil); err != nil {
		t.Fatal(err)
	}
	if cs, err := w.Sample(ctx, logits, []SampleRow{SeqRow(4, 0, nil)}); err != nil || cs[0].ID != 0 {
		t.Errorf("logit_bias +100 on token 0: %v, %v", cs, err)
	}
	if err := w.StartSeq(ctx, 5, 6, Sampling{RepetitionPenalty: 1, DRYBase: 1.75, DRYAllowedLength: 2, LogitBias: []Bias{{ID: 6, Bias: 1}}}, nil); err == nil || !strings.Contains(err.Error(), "logit_bias") {
		t.Errorf("out-of-vocabulary logit_bias: err = %v", err)
	}
}
