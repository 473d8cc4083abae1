package iree

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"testing"

	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/formats/tensor"
)

// TestPenaltiesMatchFullContext: sequences decoded with their penalty
// state kept in the worker (each step sends one token) choose exactly the
// tokens of protocol 1's implementation, which recomputed every penalty
// from the whole context sent each step (testdata/penalties_v1.py, that
// code verbatim). 24 sequences with every mix of repetition, frequency,
// presence and DRY penalties (ranges, breakers), greedy and sampled,
// decode 48 steps side by side in one batch, so their states must also
// stay apart.
func TestPenaltiesMatchFullContext(t *testing.T) {
	w, ctx := startWorker(t)
	py, err := ireetool.FindPython()
	if err != nil {
		t.Fatal(err)
	}
	const vocab, steps, cases = 24, 48, 24
	type step struct {
		Logits []float64 `json:"logits"` // float32 values
		U      float64   `json:"u"`
	}
	type tcase struct {
		Row    Sampling `json:"row"`
		Prompt []int32  `json:"prompt"`
		Steps  []step   `json:"steps"`
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var cs []tcase
	for c := range cases {
		s := neutral()
		if c%4 == 1 || c%4 == 2 {
			s.RepetitionPenalty = 1.1 + rng.Float64()
		}
		if c%3 == 1 {
			s.FrequencyPenalty = 0.2 + 1.5*rng.Float64()
		}
		if c%5 == 2 || c%5 == 3 {
			s.PresencePenalty = 0.6
		}
		if c%2 == 0 {
			s.DRYMultiplier, s.DRYBase, s.DRYAllowedLength, s.DRYRange = 0.5+rng.Float64(), 1.5+rng.Float64(), 1+c%3, (c%4)*4
			if c%3 == 0 {
				s.DRYBreakers = []int32{3}
			}
		}
		if c%3 == 2 {
			s.Temperature = 0.7 + 0.6*rng.Float64()
			s.TopK = []int{0, 6}[c%2]
			s.MinP = []float64{0, 0.05}[(c/3)%2]
		}
		tc := tcase{Row: s}
		for range c {
			tc.Prompt = append(tc.Prompt, int32(rng.IntN(6))) // few ids: repeats for DRY
		}
		for k := range steps {
			l := make([]float64, vocab)
			for i := range l {
				v := rng.NormFloat64()
				if i < 5 {
					v += 1.5 // the same few tokens stay likely: repeats
				}
				if c%4 == 2 && i == k%5 {
					v += 3 // a cycle: long repeats, cut by DRY's range
				}
				l[i] = float64(float32(v))
			}
			tc.Steps = append(tc.Steps, step{l, rng.Float64()})
		}
		cs = append(cs, tc)
	}
	in, err := json.Marshal(map[string]any{"cases": cs})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-I", "testdata/penalties_v1.py")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference: %v: %s", err, stderr.String())
	}
	var want [][]int32
	if err := json.Unmarshal(out, &want); err != nil || len(want) != cases {
		t.Fatalf("reference output %q: %v", out, err)
	}

	for c, tc := range cs {
		if err := w.StartSeq(ctx, 100+c, vocab, tc.Row, tc.Prompt); err != nil {
			t.Fatal(err)
		}
	}
	got := make([][]int32, cases)
	changed := 0 // greedy steps where the penalties changed the argmax
	for k := range steps {
		logits := make([]float32, 0, cases*vocab)
		rows := make([]SampleRow, cases)
		for c, tc := range cs {
			for _, v := range tc.Steps[k].Logits {
				logits = append(logits, float32(v))
			}
			var prev []int32
			if k > 0 {
				prev = got[c][k-1:]
			}
			rows[c] = SeqRow(100+c, tc.Steps[k].U, prev)
		}
		lt, _ := tensor.FromF32([]int64{cases, vocab}, logits)
		ch, err := w.Sample(ctx, lt, rows)
		if err != nil {
			t.Fatal(err)
		}
		for c, x := range ch {
			got[c] = append(got[c], x.ID)
			if cs[c].Row.Temperature == 0 && x.ID != argmax64(cs[c].Steps[k].Logits) {
				changed++
			}
		}
	}
	for c := range cases {
		for k := range steps {
			if got[c][k] != want[c][k] {
				t.Errorf("sequence %d (%+v): step %d chose %d, the full-context reference %d\n got  %v\n want %v", c, cs[c].Row, k, got[c][k], want[c][k], got[c], want[c])
				break
			}
		}
	}
	if changed < steps {
		t.Errorf("the penalties changed only %d greedy choices: the test does not exercise them", changed)
	}
	for c := range cases {
		if err := w.EndSeq(ctx, 100+c); err != nil {
			t.Fatal(err)
		}
	}
}

func argmax64(x []float64) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

// TestDRYLongRepeat: a repeat thousands of tokens long, with the default
// dry_base 1.75 and with a huge base, costs the repeating token its place
// (its penalty capped where the power passes float32's range, as
// llama.cpp's dry sampler caps it) instead of failing the worker with an
// overflow (Python's float power raised from 1.75 ** ~1270), and the
// worker serves the next call.
func TestDRYLongRepeat(t *testing.T) {
	w, ctx := startWorker(t)
	const vocab = 8
	prompt := make([]int32, 3000)
	for i := range prompt {
		prompt[i] = int32(1 + i%2) // 1 2 1 2 ...: the continuation is 1
	}
	for i, base := range []float64{1.75, 1e300} {
		s := neutral()
		s.DRYMultiplier, s.DRYBase, s.DRYAllowedLength = 0.8, base, 2
		if err := w.StartSeq(ctx, 500+i, vocab, s, prompt); err != nil {
			t.Fatal(err)
		}
		logits := []float32{0, 5, 0, 0, 0, 0, 0, 0} // the repeat's token is by far the likeliest
		lt, _ := tensor.FromF32([]int64{1, vocab}, logits)
		ch, err := w.Sample(ctx, lt, []SampleRow{SeqRow(500+i, 0, nil)})
		if err != nil {
			t.Fatalf("dry_base %g over a 3000-token repeat: %v", base, err)
		}
		if ch[0].ID == 1 {
			t.Errorf("dry_base %g: chose 1, which continues the 3000-token repeat", base)
		}
		if err := w.EndSeq(ctx, 500+i); err != nil {
			t.Fatal(err)
		}
	}
}
