package kernels

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/archc/archc/formats/tensor"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/lower"
)

// BenchmarkKernels times one IREE call of x·Wᵀ per iteration for each
// variant this CPU runs and for the plain lowering (IREE's own matmul on
// the in-graph decode), on the real models' hot shapes: SmolLM2-135M's
// tied Q8_0 head (49152×576) and Q4_1 FFN (1536×576, decode and a 64-token
// prefill chunk), Gemma-3-270M's (Q4_K_M) Q5_0 FFN gate/up (2048×640),
// Q6_K FFN down (640×2048), Q4_K attention output (640×1024), each for
// decode and a 64-token chunk, and its tied Q8_0 head (262144×640, 178 MB:
// memory-bound). It reports weight
// GB/s (stored bytes read per second). The call includes the worker's
// per-call overhead (tens of µs), so small shapes understate the kernels.
// Print the CPU with the figures: lscpu | grep -E 'Model name|Flags'.
func BenchmarkKernels(b *testing.B) {
	testmodels.NeedIREE(b)
	shapes := []struct {
		format string
		N, K   int64
		M      []int64
	}{
		{"q8_0", 49152, 576, []int64{1}},
		{"q4_1", 1536, 576, []int64{1, 64}},
		{"q5_0", 2048, 640, []int64{1, 64}},
		{"q6_k", 640, 2048, []int64{1, 64}},
		{"q4_k", 640, 1024, []int64{1, 64}},
		{"q8_0", 262144, 640, []int64{1}},
	}
	for _, v := range Variants {
		b.Run(strings.ReplaceAll(v.String(), " ", "_"), func(b *testing.B) {
			if ok, why := v.Supported(); !ok {
				b.Skip(why)
			}
			k, err := BuildVariant(context.Background(), b.TempDir(), v)
			if err != nil {
				b.Fatal(err)
			}
			for _, s := range shapes {
				data := randomRows(rand.New(rand.NewPCG(1, 2)), s.format, int(s.N), int(s.K))
				m, err := lower.MatmulModule(s.format, s.N, s.K, (*lower.Kernels)(k), s.M...)
				if err != nil {
					b.Fatal(err)
				}
				wk := loaded(b, m, data)
				for _, M := range s.M {
					x := make([]float32, M*s.K)
					for i := range x {
						x[i] = float32(i%7) - 3
					}
					xt, err := tensor.FromF32([]int64{M, s.K}, x)
					if err != nil {
						b.Fatal(err)
					}
					for _, fn := range []string{"matmul", "plain"} {
						if fn == "plain" && v != Variants[0] {
							continue // the plain lowering does not depend on the variant
						}
						b.Run(fmt.Sprintf("%s/%s_%dx%d/M=%d", fn, s.format, s.N, s.K, M), func(b *testing.B) {
							call(b, wk, fmt.Sprintf("%s_%d", fn, M), xt)
							b.ResetTimer()
							for i := 0; i < b.N; i++ {
								call(b, wk, fmt.Sprintf("%s_%d", fn, M), xt)
							}
							b.ReportMetric(float64(len(data))*float64(b.N)/b.Elapsed().Seconds()/1e9, "weight-GB/s")
						})
					}
				}
			}
		})
	}
}
