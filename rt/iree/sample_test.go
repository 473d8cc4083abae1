package iree

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/archc/archc/formats/tensor"
)

// TestSample checks the worker's token choice against values computed by
// hand. For logits [2, 1, 0, -1, -2] at temperature 1 the probabilities
// are e^l / 11.6106 = [.6364 .2341 .0861 .0317 .0117], cumulative [.6364
// .8705 .9566 .9883 1]; each u below sits well inside one interval of the
// (renormalised) cumulative distribution.
func TestSample(t *testing.T) {
	w, ctx := startWorker(t)
	five := []float32{2, 1, 0, -1, -2}
	type warp struct {
		T, P, MinP float64
		K          int
	}
	for _, c := range []struct {
		name   string
		logits []float32
		warp   warp
		u      float64
		want   int32
	}{
		{"greedy, first of tied maxima", []float32{0.1, 3, 3, -1}, warp{}, 0, 1},
		{"T=1 u=.5", five, warp{T: 1}, 0.5, 0},
		{"T=1 u=.7", five, warp{T: 1}, 0.7, 1},
		{"T=1 u=.9", five, warp{T: 1}, 0.9, 2},
		{"T=1 u=.97", five, warp{T: 1}, 0.97, 3},
		{"T=1 u=.995", five, warp{T: 1}, 0.995, 4},
		// T=2: probabilities [.4287 .2600 .1577 .0956 .0580], cumulative .4287 .6887 ...
		{"T=2 u=.5", five, warp{T: 2}, 0.5, 1},
		// top-k 2: [.7311 .2689] over tokens 0 and 1.
		{"top-k 2 u=.72", five, warp{T: 1, K: 2}, 0.72, 0},
		{"top-k 2 u=.999", five, warp{T: 1, K: 2}, 0.999, 1},
		// top-k keeps every logit equal to the k-th largest (HF: >=).
		{"top-k 1 with ties", []float32{1, 1, 1, 0}, warp{T: 1, K: 1}, 0.9, 2},
		// top-p .8: ascending cumulative .0117 .0434 .1295 .3636 1; tokens
		// with cumulative <= .2 (4, 3, 2) go, {0, 1} remain.
		{"top-p .8 u=.999", five, warp{T: 1, P: 0.8}, 0.999, 1},
		// top-p .5: token 1's .3636 <= .5 too, token 0 alone remains.
		{"top-p .5 u=.999", five, warp{T: 1, P: 0.5}, 0.999, 0},
		// min-p .1: threshold .0636 keeps {0, 1, 2}, renormalised cumulative .6638 .9080 1.
		{"min-p .1 u=.95", five, warp{T: 1, MinP: 0.1}, 0.95, 2},
		// min-p .2: threshold .1273 keeps {0, 1}.
		{"min-p .2 u=.95", five, warp{T: 1, MinP: 0.2}, 0.95, 1},
		// u at the very top of the range never lands on a dropped token.
		{"u≈1 after top-k", five, warp{T: 1, K: 3}, 0.9999999999, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := neutral()
			s.Temperature, s.TopK, s.TopP, s.MinP = c.warp.T, c.warp.K, c.warp.P, c.warp.MinP
			got, err := sample1(ctx, w, c.logits, s, nil, nil, c.u)
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != c.want {
				t.Errorf("Sample = %v, want %d", got, c.want)
			}
		})
	}

	// Rows are independent: a greedy row beside a sampling row.
	lt, _ := tensor.FromF32([]int64{2, 5}, append(append([]float32{}, five...), five...))
	t1 := neutral()
	t1.Temperature = 1
	if err := w.StartSeq(ctx, 7, 5, t1, nil); err != nil {
		t.Fatal(err)
	}
	got, err := w.Sample(ctx, lt, []SampleRow{{}, SeqRow(7, 0.9, nil)})
	if err != nil || len(got) != 2 || got[0].ID != 0 || got[1].ID != 2 {
		t.Errorf("two rows: %v, %v; want [0 2]", got, err)
	}
	// A row count that does not match is an error, and the worker survives it.
	if _, err := w.Sample(ctx, lt, []SampleRow{{}}); err == nil || !strings.Contains(err.Error(), "1 sampling rows for 2 rows of logits") {
		t.Errorf("row mismatch: %v", err)
	}
	if got, err := w.Sample(ctx, lt, nil); err != nil || got[0].ID != 0 || got[1].ID != 0 {
		t.Errorf("after an error, nil rows (argmax) = %v, %v", got, err)
	}
	// NaN or +inf logits (a broken checkpoint or config) are an error naming
	// them, greedy or sampled, never token 0; -inf entries are fine.
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		nl, _ := tensor.FromF32([]int64{2, 3}, []float32{1, 2, 3, 0, bad, 1})
		for _, rows := range [][]SampleRow{nil, {{}, SeqRow(7, 0.5, nil)}} {
			if got, err := w.Sample(ctx, nl, rows); err == nil || !strings.Contains(err.Error(), "non-finite logits") || !strings.Contains(err.Error(), "row 1 of 2") {
				t.Errorf("logits with %v: %v, %v; want a non-finite logits error naming row 1", bad, got, err)
			}
		}
	}
	ninf, _ := tensor.FromF32([]int64{1, 3}, []float32{float32(math.Inf(-1)), 2, 1})
	if got, err := w.Sample(ctx, ninf, nil); err != nil || got[0].ID != 1 {
		t.Errorf("logits with -inf: %v, %v; want token 1", got, err)
	}
}

// TestSampleDistribution draws with u on a uniform grid: the share of each
// token equals its softmax probability to within the grid's resolution.
func TestSampleDistribution(t *testing.T) {
	w, ctx := startWorker(t)
	const n = 2000
	logits := make([]float32, 0, 2*n)
	rows := make([]SampleRow, n)
	s := neutral()
	s.Temperature = 1
	for i := range rows {
		logits = append(logits, 1, 0)
		if err := w.StartSeq(ctx, i, 2, s, nil); err != nil {
			t.Fatal(err)
		}
		rows[i] = SeqRow(i, (float64(i)+0.5)/n, nil)
	}
	lt, _ := tensor.FromF32([]int64{n, 2}, logits)
	ids, err := w.Sample(ctx, lt, rows)
	if err != nil {
		t.Fatal(err)
	}
	zeros := 0
	for _, c := range ids {
		if c.ID == 0 {
			zeros++
		}
	}
	want := 1 / (1 + math.Exp(-1)) // 0.7311
	if got := float64(zeros) / n; math.Abs(got-want) > 1.0/n {
		t.Errorf("P(token 0) = %.4f, want %.4f", got, want)
	}
}

// TestPenaltiesAndLogprobs checks each penalty and the logprobs against
// values computed by hand, on argmax rows (penalties apply there too).
func TestPenaltiesAndLogprobs(t *testing.T) {
	w, ctx := startWorker(t)
	ten := make([]float32, 10)
	ten[7] = 1
	four3 := []float32{0, 0, 0, 1}
	pen := func(f func(*Sampling)) Sampling {
		s := neutral()
		f(&s)
		return s
	}
	for _, c := range []struct {
		name      string
		logits    []float32
		s         Sampling
		prompt    []int32
		generated []int32
		want      int32
	}{
		// 2/2 = 1 < 1.9; token 2's -1 becomes -2.
		{"repetition", []float32{2, 1.9, -1, -1.2}, pen(func(s *Sampling) { s.RepetitionPenalty = 2 }), []int32{0, 2}, nil, 1},
		// The repetition penalty counts generated tokens too.
		{"repetition, generated", []float32{2, 1.9, -1, -1.2}, pen(func(s *Sampling) { s.RepetitionPenalty = 2 }), nil, []int32{0, 2}, 1},
		// Generated [0 0 1]: 1 - 2·0.3 = 0.4, 0.8 - 0.3 = 0.5, 0.45.
		{"frequency", []float32{1, 0.8, 0.45}, pen(func(s *Sampling) { s.FrequencyPenalty = 0.3 }), nil, []int32{0, 0, 1}, 1},
		// Token 0 was generated: 1 - 0.5 < 0.8.
		{"presence", []float32{1, 0.8, 0.5}, pen(func(s *Sampling) { s.PresencePenalty = 0.5 }), nil, []int32{0}, 1},
		// The same token in the prompt only: no presence penalty.
		{"presence, prompt only", []float32{1, 0.8, 0.5}, pen(func(s *Sampling) { s.PresencePenalty = 0.5 }), []int32{0}, nil, 0},
		// Context 5 6 7 5 6: "5 6" repeats and was followed by 7, a match of
		// length 2 = allowed length, so 7 loses 1.5·1.75⁰: 1 - 1.5 < 0.
		{"DRY", ten, pen(func(s *Sampling) { s.DRYMultiplier = 1.5 }), []int32{5, 6, 7, 5, 6}, nil, 0},
		// The same with the context split between prompt and generated tokens.
		{"DRY, generated", ten, pen(func(s *Sampling) { s.DRYMultiplier = 1.5 }), []int32{5, 6}, []int32{7, 5, 6}, 0},
		// 5 breaks sequences: the match is 1 long, under the allowed 2.
		{"DRY breaker", ten, pen(func(s *Sampling) { s.DRYMultiplier, s.DRYBreakers = 1.5, []int32{5} }), []int32{5, 6, 7, 5, 6}, nil, 7},
		// Looking back 3 tokens (7 5 6), 6 has no earlier occurrence.
		{"DRY range", ten, pen(func(s *Sampling) { s.DRYMultiplier, s.DRYRange = 1.5, 3 }), []int32{5, 6, 7, 5, 6}, nil, 7},
		// 1 2 3 1 2 3 1 2: the 2 at position 4 was followed by 3, after a
		// repeat of length 5 (1 2 3 1 2 before both 2s): 3 loses 1.5·1.75³.
		{"DRY long repeat", four3, pen(func(s *Sampling) { s.DRYMultiplier = 1.5 }), []int32{1, 2, 3, 1, 2, 3, 1, 2}, nil, 0},
		// Looking back 4 tokens (2 3 1 2), the repeat is 1 long: no penalty.
		{"DRY range cuts a repeat", four3, pen(func(s *Sampling) { s.DRYMultiplier, s.DRYRange = 1.5, 4 }), []int32{1, 2, 3, 1}, []int32{2, 3, 1, 2}, 3},
	} {
		got, err := sample1(ctx, w, c.logits, c.s, c.prompt, c.generated, 0)
		if err != nil || got.ID != c.want {
			t.Errorf("%s: %v, %v; want token %d", c.name, got, err, c.want)
		}
	}
	// log_softmax([2 1 0]) = [2 1 0] - log(e² + e + 1) = [-0.4076 -1.4076 -2.4076].
	k := 2
	c, err := sample1(ctx, w, []float32{2, 1, 0}, pen(func(s *Sampling) { s.Logprobs = &k }), nil, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != 0 || math.Abs(float64(c.Logprob)+0.40761) > 1e-4 || !slices.Equal(c.TopIDs, []int32{0, 1}) ||
		math.Abs(float64(c.TopProbs[1])+1.40761) > 1e-4 {
		t.Errorf("logprobs: %+v, want id 0 at -0.4076 and top [0 1] at [-0.4076 -1.4076]", c)
	}
}

// neutral is Sampling with nothing on: argmax, every penalty off.
func neutral() Sampling {
	return Sampling{RepetitionPenalty: 1, DRYBase: 1.75, DRYAllowedLength: 2, DRYBreakers: []int32{}, LogitBias: []Bias{}}
}

// sample1 starts sequence 0 with s and prompt, then chooses one token from
// logits with draw u after appending the generated tokens.
func sample1(ctx context.Context, w *Worker, logits []float32, s Sampling, prompt, generated []int32, u float64) (Choice, error) {
	if err := w.StartSeq(ctx, 0, len(logits), s, prompt); err != nil {
		return Choice{}, err
	}
	lt, err := tensor.FromF32([]int64{1, int64(len(logits))}, logits)
	if err != nil {
		return Choice{}, err
	}
	got, err := w.Sample(ctx, lt, []SampleRow{SeqRow(0, u, generated)})
	if err != nil {
		return Choice{}, err
	}
	return got[0], nil
}

// startWorker starts a worker with no module (sampling needs none), closed
// when the test ends.
func startWorker(t *testing.T) (*Worker, context.Context) {
	t.Helper()
	needVenv(t)
	ctx := context.Background()
	w, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w, ctx
}
