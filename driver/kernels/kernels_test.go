package kernels

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/formats/tensor"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/lower"
	"github.com/archc/archc/rt/iree"
)

// loaded compiles m (through the compile cache, as every module archc runs:
// a warm run compiles nothing) and loads it with the parameter "w" = data.
func loaded(t testing.TB, m *codegen.Module, data []byte) *iree.Worker {
	t.Helper()
	return loadedParams(t, m, map[string][]byte{"w": data})
}

// loadedParams compiles m and loads it with each named parameter's stored
// bytes (one file, the parameters back to back).
func loadedParams(t testing.TB, m *codegen.Module, params map[string][]byte) *iree.Worker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	vmfb, _, err := ireetool.Compile(ctx, m.Print(), ireetool.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "w.bin")
	var data []byte
	var ps []ireetool.Param
	for _, name := range slices.Sorted(maps.Keys(params)) {
		ps = append(ps, ireetool.Param{Name: name, File: file, Offset: int64(len(data)), Length: int64(len(params[name]))})
		data = append(data, params[name]...)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := iree.Start(ctx, iree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := w.Load(ctx, vmfb, ps, ""); err != nil {
		t.Fatal(err)
	}
	return w
}

// call calls fn and returns its f32 result.
func call(t testing.TB, w *iree.Worker, fn string, args ...tensor.Tensor) []float32 {
	t.Helper()
	out, err := w.Call(context.Background(), fn, args)
	if err != nil {
		t.Fatal(err)
	}
	y, err := out[0].F32()
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// TestDecodeMatchesGGUFPy: the plain lowering's decoder of every storage
// format equals gguf-py's dequantization bit for bit, on random stored rows
// (testdata, written by gen_quant.py).
func TestDecodeMatchesGGUFPy(t *testing.T) {
	testmodels.NeedIREE(t)
	const rows, cols = 4, 512
	// GGUF formats against gguf-py (gen_quant.py); MLX affine ones against
	// mlx.core.dequantize (gen_affine.py).
	affine, err := filepath.Glob(filepath.Join("testdata", "mlx_affine*.raw"))
	if err != nil || len(affine) == 0 {
		t.Fatalf("no MLX affine vectors in testdata (%v): run testdata/gen_affine.py", err)
	}
	formats := slices.Clone(Formats)
	for _, p := range affine {
		formats = append(formats, strings.TrimSuffix(filepath.Base(p), ".raw"))
	}
	// One module for every format (one compile; each decoder reads its
	// own parameter).
	var ws []lower.Weight2D
	raws := map[string][]byte{}
	for _, format := range formats {
		raw, err := os.ReadFile(filepath.Join("testdata", format+".raw"))
		if err != nil {
			t.Fatal(err)
		}
		ws, raws[format] = append(ws, lower.Weight2D{Name: format, Format: format, Rows: rows, Cols: cols}), raw
	}
	m, err := lower.DecodeModules(ws)
	if err != nil {
		t.Fatal(err)
	}
	w := loadedParams(t, m, raws)
	for _, format := range formats {
		t.Run(format, func(t *testing.T) {
			want := readF32(t, filepath.Join("testdata", format+".f32"))
			got := call(t, w, "decode_"+format)
			if len(got) != len(want) {
				t.Fatalf("decoded %d values, want %d", len(got), len(want))
			}
			bad := 0
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					if bad < 5 {
						t.Errorf("element %d (row %d, col %d): got %g (%#08x), gguf-py %g (%#08x)", i, i/cols, i%cols, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
					}
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d values differ from gguf-py", bad, len(want))
			}
		})
	}
}

// blockLayout gives, per format, the block size and the byte offsets of its
// f16 scale fields (the rest of a block is free bits).
var blockLayout = map[string]struct {
	elems, bytes int
	f16s         []int
}{
	"q8_0": {32, 34, []int{0}}, "q4_0": {32, 18, []int{0}}, "q4_1": {32, 20, []int{0, 2}},
	"q5_0": {32, 22, []int{0}}, "q5_1": {32, 24, []int{0, 2}}, "q4_k": {256, 144, []int{0, 2}},
	"q5_k": {256, 176, []int{0, 2}}, "q6_k": {256, 210, []int{208}}, "f16": {1, 2, nil}, "bf16": {1, 2, nil},
}

// randomRows returns n stored rows of k weights in format: random bytes
// with finite f16 scales (or random finite f16/bf16 weights).
func randomRows(r *rand.Rand, format string, n, k int) []byte {
	l := blockLayout[format]
	nb := n * k / l.elems
	out := make([]byte, nb*l.bytes)
	for i := range out {
		out[i] = byte(r.IntN(256))
	}
	// put writes a random normal f16 with a biased exponent in [lo, hi].
	put := func(off int, lo, hi int) {
		h := uint16(r.IntN(2))<<15 | uint16(lo+r.IntN(hi-lo+1))<<10 | uint16(r.IntN(1024))
		binary.LittleEndian.PutUint16(out[off:], h)
	}
	for b := 0; b < nb; b++ {
		for _, off := range l.f16s {
			put(b*l.bytes+off, 5, 15) // 2^-10 .. 2^0
		}
	}
	switch format {
	case "f16":
		for i := 0; i < nb; i++ {
			put(2*i, 10, 17)
		}
	case "bf16":
		for i := 0; i < nb; i++ {
			binary.LittleEndian.PutUint16(out[2*i:], uint16(math.Float32bits(float32(r.NormFloat64()))>>16))
		}
	}
	return out
}

// TestKernelsMatchPlainLowering: each variant's kernels compute x·Wᵀ as the
// plain lowering does (decode, then dot_general) to f32 accuracy, for token
// counts that exercise the token tiles (1, 6, 11) and the AVX-512 prefill
// GEMM with a partial micro-tile (19), and a column count with a partial
// last workgroup; the 32-element-block formats take K = 544 (an odd
// number of blocks: the single-token loops' tail), the K-quants K = 512,
// and for the int8 build 8352 (32-element blocks) or 8448 (K-quants): more
// than one chunk of its single-token GEMV (8192), with an odd block count
// in the last, and 130 tokens: more than one chunk (128) of its GEMM's
// quantized activations, the last of 2 tokens; x's second 32-element
// block is zero (a block whose int8 scale is 0). The bound is relative to
// Σ|w·x| per output: the two differ only in summation order and in
// factoring the block scale out.
//
// An int8 variant quantizes x per 32-element block (int8Activations, as
// llama.cpp's quantize_row_q8_0): its result must equal the plain lowering
// of the dequantized activations x̂ to the same f32 accuracy (so the integer
// arithmetic is right), and be within the rounding bound Σ|w_j|·max_b|x|/254
// of the plain lowering of x itself (so the quantization is what it
// claims); f16 and bf16 stay exact. A variant this CPU cannot run is
// skipped, naming the missing features.
func TestKernelsMatchPlainLowering(t *testing.T) {
	testmodels.NeedIREE(t)
	for _, v := range Variants {
		t.Run(strings.ReplaceAll(v.String(), " ", "_"), func(t *testing.T) {
			if ok, why := v.Supported(); !ok {
				t.Skip(why)
			}
			k, err := BuildVariant(context.Background(), t.TempDir(), v)
			if err != nil {
				t.Fatal(err)
			}
			if k.Variant != v.Name || k.Precision != v.Precision {
				t.Fatalf("built variant %q precision %q, want %q %q", k.Variant, k.Precision, v.Name, v.Precision)
			}
			const N = 70
			Ms := []int64{1, 6, 11, 19}
			if v.Precision == Int8 {
				Ms = append(Ms, 130)
			}
			if v.AMXMinM > 0 {
				// The AMX entry points: a last 32-token block of 18 (past
				// M padded with zero tokens), N's last 64 columns 6.
				Ms = append(Ms, v.AMXMinM+2)
			}
			r := rand.New(rand.NewPCG(1, 2))
			// Every (format, K) of the variant in one module: one compile,
			// one build of the kernels' bitcode (they were 38 modules, about
			// 130 s of a cold CI run's compiles).
			var ws []lower.Weight2D
			params := map[string][]byte{}
			for _, format := range Formats {
				Ks := []int64{544}
				if blockLayout[format].elems == 256 {
					Ks = []int64{512}
				}
				if v.Precision == Int8 && blockLayout[format].elems > 1 {
					Ks = append(Ks, 8192+160)
					if blockLayout[format].elems == 256 {
						Ks[1] = 8192 + 256
					}
				}
				for _, K := range Ks {
					name := fmt.Sprintf("%s_K%d", format, K)
					ws = append(ws, lower.Weight2D{Name: name, Format: format, Rows: N, Cols: K})
					params[name] = randomRows(r, format, N, int(K))
				}
			}
			m, err := lower.MatmulModules(ws, (*lower.Kernels)(k), Ms...)
			if err != nil {
				t.Fatal(err)
			}
			if d := m.Dispatched("archc_kernels"); v.AMXMinM > 0 && (!d["split3"] || !d["mmx_q4_0"]) {
				t.Fatalf("the %s module dispatches %v: want split3 and mmx_q4_0 at M=%d", v, d, Ms[len(Ms)-1])
			}
			wk := loadedParams(t, m, params)
			for _, c := range ws {
				format, K := c.Format, c.Cols
				quantized := v.Precision == Int8 && blockLayout[format].elems > 1
				t.Run(fmt.Sprintf("%s/K=%d", format, K), func(t *testing.T) {
					w := call(t, wk, "decode_"+c.Name)
					for _, M := range Ms {
						x := normals(r, M*K)
						clear(x[32:64]) // an all-zero block: the int8 quantizer's zero scale
						xt, err := tensor.FromF32([]int64{M, K}, x)
						if err != nil {
							t.Fatal(err)
						}
						got := call(t, wk, fmt.Sprintf("matmul_%s_%d", c.Name, M), xt)
						want := call(t, wk, fmt.Sprintf("plain_%s_%d", c.Name, M), xt)
						xq, wantq := x, want
						if quantized {
							xq = int8Activations(x)
							xqt, err := tensor.FromF32([]int64{M, K}, xq)
							if err != nil {
								t.Fatal(err)
							}
							wantq = call(t, wk, fmt.Sprintf("plain_%s_%d", c.Name, M), xqt)
						}
						bad := 0
						for i := int64(0); i < M; i++ {
							for n := int64(0); n < N; n++ {
								mag, round := 0.0, 0.0
								for j := int64(0); j < K; j++ {
									mag += math.Abs(float64(w[n*K+j]) * float64(xq[i*K+j]))
									if quantized && j%32 == 0 {
										amax := 0.0
										for _, e := range x[i*K+j : i*K+j+32] {
											amax = math.Max(amax, math.Abs(float64(e)))
										}
										for _, e := range w[n*K+j : n*K+j+32] {
											round += math.Abs(float64(e)) * amax / 254
										}
									}
								}
								g := float64(got[i*N+n])
								if d := math.Abs(g - float64(wantq[i*N+n])); !(d <= 4e-6*mag) && bad < 5 {
									t.Errorf("M=%d: y[%d,%d] = %g, plain lowering %g (|diff| %g > 4e-6 · Σ|w·x| = %g)", M, i, n, g, wantq[i*N+n], d, 4e-6*mag)
									bad++
								}
								if d := math.Abs(g - float64(want[i*N+n])); quantized && !(d <= round+4e-6*mag) && bad < 5 {
									t.Errorf("M=%d: y[%d,%d] = %g, plain lowering of unquantized x %g (|diff| %g > rounding bound %g)", M, i, n, g, want[i*N+n], d, round+4e-6*mag)
									bad++
								}
							}
						}
					}
				})
			}
		})
	}
}

// TestExpertKernelsMatchPlainLowering: routed experts through the expert
// entry point (lower's experts primitive with kernels: the (token, expert)
// pairs grouped by expert, each expert's rows through the format's kernel
// on its stacked stored rows) equal the plain lowering (every expert
// decoded to f32, weighted by the routing weights, zero off each token's
// top experts) within f32 rounding, for every variant; a block format and a
// 2-byte float (whose stored rows are counted in bytes, not elements), at
// one token (a decode step: most experts empty), 7 (a few rows per expert)
// and 61 (experts with 16 rows or more: the kernels' GEMM tile), with N
// not a multiple of the workgroup's rows.
func TestExpertKernelsMatchPlainLowering(t *testing.T) {
	testmodels.NeedIREE(t)
	const E, N, K, top = 8, 70, 544, 3
	Ms := []int64{1, 7, 61}
	for _, v := range Variants {
		t.Run(strings.ReplaceAll(v.String(), " ", "_"), func(t *testing.T) {
			if ok, why := v.Supported(); !ok {
				t.Skip(why)
			}
			k, err := BuildVariant(context.Background(), t.TempDir(), v)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(3, 4))
			for _, format := range []string{"q4_0", "bf16"} {
				t.Run(format, func(t *testing.T) {
					data := randomRows(r, format, E*N, K)
					m, err := lower.ExpertsModule(format, E, N, K, top, (*lower.Kernels)(k), Ms...)
					if err != nil {
						t.Fatal(err)
					}
					wk := loaded(t, m, data)
					w := call(t, wk, "decode")
					for _, M := range Ms {
						x := normals(r, M*K)
						route := make([]float32, M*E)
						for i := range M {
							for _, e := range r.Perm(E)[:top] {
								route[i*E+int64(e)] = float32(0.1 + r.Float64())
							}
						}
						xt, err := tensor.FromF32([]int64{M, K}, x)
						if err != nil {
							t.Fatal(err)
						}
						rt, err := tensor.FromF32([]int64{M, E}, route)
						if err != nil {
							t.Fatal(err)
						}
						got := call(t, wk, fmt.Sprintf("experts_%d", M), xt, rt)
						xq := x
						if v.Precision == Int8 && format != "bf16" {
							xq = int8Activations(x)
							if xt, err = tensor.FromF32([]int64{M, K}, xq); err != nil {
								t.Fatal(err)
							}
						}
						want := call(t, wk, fmt.Sprintf("plain_%d", M), xt, rt)
						bad := 0
						for i := int64(0); i < M; i++ {
							for n := int64(0); n < N; n++ {
								mag := 0.0
								for e := int64(0); e < E; e++ {
									for j := int64(0); j < K; j++ {
										mag += float64(route[i*E+e]) * math.Abs(float64(w[(e*N+n)*K+j])*float64(xq[i*K+j]))
									}
								}
								g, p := float64(got[i*N+n]), float64(want[i*N+n])
								if d := math.Abs(g - p); !(d <= 4e-6*mag) && bad < 5 {
									t.Errorf("M=%d: y[%d,%d] = %g, plain lowering %g (|diff| %g > 4e-6 · Σ r·|w·x| = %g)", M, i, n, g, p, d, 4e-6*mag)
									bad++
								}
							}
						}
					}
				})
			}
		})
	}
}

// normals returns n standard normal draws from r.
func normals(r *rand.Rand, n int64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// int8Activations returns x (rows of K, K a multiple of 32) as the int8
// kernels see it: each 32-element block quantized as quantize_chunk does
// (d = max|x|/127, q = round-half-even(x · 127/max|x|), all in f32) and
// dequantized, d·q.
func int8Activations(x []float32) []float32 {
	out := make([]float32, len(x))
	for b := 0; b < len(x); b += 32 {
		var amax float32
		for _, e := range x[b : b+32] {
			amax = max(amax, float32(math.Abs(float64(e))))
		}
		d := amax / 127
		var id float32
		if amax != 0 {
			id = 127 / amax
		}
		for j, e := range x[b : b+32] {
			q := float32(math.RoundToEven(float64(e * id)))
			q = min(127, max(-128, q))
			out[b+j] = d * q
		}
	}
	return out
}

// TestSelect: auto picks the first variant this CPU runs, none and an
// unknown name are handled by name, and a variant whose features the CPU
// lacks is refused naming them.
func TestSelect(t *testing.T) {
	for _, prec := range Precisions {
		v, err := Select("auto", prec)
		var best *Variant
		for _, c := range Variants {
			if ok, _ := c.Supported(); ok && c.Precision == prec {
				best = c
				break
			}
		}
		if v != best || (err == nil) != (best != nil || prec == F32) {
			t.Errorf("Select(auto, %s) = %v, %v; want the first supported variant %v", prec, v, err, best)
		}
	}
	if v, err := Select(None, F32); v != nil || err != nil {
		t.Errorf("Select(none) = %v, %v; want nil, nil", v, err)
	}
	if _, err := Select(None, Int8); err == nil || !strings.Contains(err.Error(), "needs archc's kernels") {
		t.Errorf("Select(none, int8): error %v, want one saying int8 needs the kernels", err)
	}
	if _, err := Select("avx9", F32); err == nil || !strings.Contains(err.Error(), "avx512, avx2, none") {
		t.Errorf("Select(avx9): error %v, want one listing the names", err)
	}
	if _, err := Select("auto", "int4"); err == nil || !strings.Contains(err.Error(), "f32, int8") {
		t.Errorf("Select(auto, int4): error %v, want one listing the precisions", err)
	}
	if _, err := Select("avx2", Int8); err == nil || !strings.Contains(err.Error(), "no int8 build") {
		t.Errorf("Select(avx2, int8): error %v, want one saying avx2 has no int8 build", err)
	}
	fake := &Variant{Name: "fake", Needs: func() []Feature { return []Feature{{"AVX2", true}, {"AVX-1024", false}} }}
	if ok, why := fake.Supported(); ok || !strings.Contains(why, "lacks AVX-1024, which the fake kernels need") {
		t.Errorf("a variant needing a missing feature: supported %v (%q)", ok, why)
	}
	for _, c := range Variants {
		if ok, why := c.Supported(); !ok {
			if _, err := Select(c.Name, c.Precision); err == nil || !strings.Contains(err.Error(), why) {
				t.Errorf("Select(%s) on a CPU without it: error %v, want %q", c, err, why)
			}
		} else if got, err := Select(c.Name, c.Precision); got != c || err != nil {
			t.Errorf("Select(%s) = %v, %v", c, got, err)
		}
	}
}

func readF32(t *testing.T, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// TestBuildReproducible builds each variant into two fresh caches: the
// bitcode must be byte-identical, since it is embedded in every module
// and so in the compile cache's keys (an earlier build recorded its temp
// folder's name in the bitcode, so concurrent first builds differed).
func TestBuildReproducible(t *testing.T) {
	testmodels.NeedIREE(t)
	for _, v := range Variants {
		t.Run(strings.ReplaceAll(v.String(), " ", "_"), func(t *testing.T) {
			a, err := BuildVariant(context.Background(), t.TempDir(), v)
			if err != nil {
				t.Fatal(err)
			}
			b, err := BuildVariant(context.Background(), t.TempDir(), v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bitcode, b.Bitcode) {
				t.Fatalf("%s: two builds of one variant differ (%d and %d bytes)", v.Name, len(a.Bitcode), len(b.Bitcode))
			}
			if bytes.Contains(a.Bitcode, []byte("build-")) {
				t.Errorf("%s: the bitcode names its temp build folder", v.Name)
			}
		})
	}
}
