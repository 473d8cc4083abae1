package server

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"

	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/formats/tensor"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt"
	"github.com/archc/archc/rt/iree"
)

// BenchmarkGrammarMask measures what constrained decoding adds per token:
// the worker choosing (greedily) one token from random logits [1, vocab] with and
// without a JSON Schema grammar (a JSON list of objects that never closes,
// so the matcher never finishes; the end tokens get logit_bias -100 in
// both runs). The mask cost per token is the difference of the two ns/op (the
// pipe transfer of the logits is in both). Vocabularies: SmolLM2 (49152
// tokens) and Gemma-3 (262144).
//
//	go test ./server -run XXX -bench GrammarMask -benchtime 200x
func BenchmarkGrammarMask(b *testing.B) {
	py, err := ireetool.FindPython()
	if err != nil || exec.Command(py, "-c", "import llguidance").Run() != nil {
		b.Skip("llguidance is not installed in the venv")
	}
	lark := `start: "[" obj (", " obj)*` + "\nobj: %json " + withGuidance([]byte(`{"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}}}, "required": ["id", "name", "tags"]}`))
	for _, name := range []string{"smollm2", "gemma3"} {
		text, err := rt.LoadText(testmodels.GGUF(b, name))
		if err != nil {
			b.Fatal(err)
		}
		m := &rt.Model{Vocab: int64(text.Tokenizer.VocabSize()), EOS: []int32{text.Tokenizer.EOS()}}
		vocab, err := writeVocab(m, text)
		if err != nil {
			b.Fatal(err)
		}
		w, err := iree.Start(context.Background(), iree.Options{Stderr: os.Stderr})
		if err != nil {
			b.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		logits := make([]float32, m.Vocab)
		for i := range logits {
			logits[i] = float32(rng.NormFloat64())
		}
		lt, _ := tensor.FromF32([]int64{1, m.Vocab}, logits)
		var bias []iree.Bias
		for _, id := range m.EOS {
			bias = append(bias, iree.Bias{ID: id, Bias: -100})
		}
		for k, grammar := range []bool{false, true} {
			label := name + "/none"
			if grammar {
				label = name + "/json"
			}
			b.Run(label, func(b *testing.B) {
				ctx := context.Background()
				// Greedy: the choice itself costs little.
				s := iree.Sampling{RepetitionPenalty: 1, DRYBase: rt.DefaultDRYBase, DRYAllowedLength: rt.DefaultDRYAllowedLength, DRYBreakers: []int32{}, LogitBias: bias}
				if grammar {
					s.Grammar = &iree.Grammar{Vocab: vocab, Lark: lark}
				}
				if err := w.StartSeq(ctx, k, int(m.Vocab), s, nil); err != nil { // builds the matcher outside the timing
					b.Fatal(err)
				}
				var last []int32
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					cs, err := w.Sample(ctx, lt, []iree.SampleRow{iree.SeqRow(k, 0, last)})
					if err != nil {
						b.Fatal(err)
					}
					last = []int32{int32(cs[0].ID)} // advances the matcher on the next step
				}
				b.StopTimer()
				if err := w.EndSeq(ctx, k); err != nil {
					b.Fatal(err)
				}
			})
		}
		w.Close()
	}
}
