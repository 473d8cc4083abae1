package iree

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/archc/archc/rt/tensor"
)

// BenchmarkSamplePenalty is one decode step's token choice with
// frequency_penalty (and repetition_penalty) set, for a sequence whose
// context already holds n tokens (half prompt, half generated, ids drawn
// from a SmolLM2-sized vocabulary): one Sample call on [1, 49152] logits
// whose row sends one new token. The worker keeps the sequence's counts,
// so the cost should not depend on n (protocol 1 sent and rescanned the
// whole context every step).
func BenchmarkSamplePenalty(b *testing.B) {
	needVenv(b)
	const vocab = 49152
	ctx := context.Background()
	w, err := Start(ctx, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	logits := make([]float32, vocab)
	for i := range logits {
		logits[i] = float32(rng.NormFloat64())
	}
	lt, _ := tensor.FromF32([]int64{1, vocab}, logits)
	for _, n := range []int{64, 4096} {
		b.Run(fmt.Sprintf("context=%d", n), func(b *testing.B) {
			ids := make([]int32, n)
			for i := range ids {
				ids[i] = int32(rng.IntN(vocab))
			}
			s := neutral()
			s.FrequencyPenalty, s.RepetitionPenalty = 0.5, 1.1
			if err := w.StartSeq(ctx, 0, vocab, s, ids[:n/2]); err != nil {
				b.Fatal(err)
			}
			if _, err := w.Sample(ctx, lt, []SampleRow{SeqRow(0, 0, ids[n/2:])}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				if _, err := w.Sample(ctx, lt, []SampleRow{SeqRow(0, 0, ids[i%n:i%n+1])}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
