package iree

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/archc/archc/formats/tensor"
)

// BenchmarkSamplePenalty is one decode step's token choice with a penalty
// set, for a sequence whose context already holds n tokens (half prompt,
// half generated, ids drawn at random from a SmolLM2-sized vocabulary, so
// nearly all distinct: the worst case): one Sample call on [1, 49152]
// logits whose row sends one new token. The worker keeps the sequence's
// state, so frequency_penalty costs the same at any n (a dense per-id
// penalty vector); repetition_penalty costs O(distinct ids seen), at most
// the vocabulary. Protocol 1 sent the whole context every step and
// recounted it.
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
	for range 500 { // warm up the worker (the first few hundred calls are slower)
		if _, err := w.Sample(ctx, lt, nil); err != nil {
			b.Fatal(err)
		}
	}
	for _, pen := range []string{"frequency", "repetition"} {
		for _, n := range []int{64, 4096} {
			b.Run(fmt.Sprintf("%s/context=%d", pen, n), func(b *testing.B) {
				ids := make([]int32, n)
				for i := range ids {
					ids[i] = int32(rng.IntN(vocab))
				}
				s := neutral()
				if pen == "frequency" {
					s.FrequencyPenalty = 0.5
				} else {
					s.RepetitionPenalty = 1.1
				}
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
}
