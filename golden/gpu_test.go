package golden

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/formats/gguf"
	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/internal/golden"
	"github.com/archc/archc/internal/testmodels"
)

// gpuTargets is -gpu-targets: the GPU targets every fixture's module must
// compile for (CI has no GPU: numerics on a GPU are scripts/gpu-check.sh's).
// hip and vulkan are not in the default: each would double the CI time of
// this test, and vulkan still fails on routed experts (gpuKnownFailures).
var gpuTargets = flag.String("gpu-targets", "cuda", "TestGPUCompile: the GPU targets to compile every fixture for, comma-separated (cuda, vulkan, hip)")

// gpuAll is -gpu-all: TestGPUCompile compiles every fixture instead of a
// covering subset (gpuCover), and SmolLM2's default GPU plan instead of
// its smallest (gpuRealOptions).
var gpuAll = flag.Bool("gpu-all", false, "TestGPUCompile: compile every fixture, not only a subset covering every primitive variant, and SmolLM2's default GPU plan")

// gpuKnownFailures are the models (fixture names, or "*" for every model
// not named) whose module IREE 3.13 does not compile for a target, with a
// piece of the compiler's error; "" marks a model expected to compile
// where "*" says otherwise. A listed failure that goes away fails the test
// (take the row out), and so does one failing with another error.
//
// vulkan, on the default plan (2026-12-06, only these tried): llama-tied
// and qwen3-tied compile; the embedding-gather failure once seen on every
// float table ("failed to legalize operation 'memref.alloc'": a
// memref<1xindex> in workgroup memory, which a gather with ids of an
// explicit index-vector dimension avoided) did not show. deepseek_v2's
// routed experts (deepseek_v2.arch's route) fail to legalize a
// vector<32xi32> constant in SPIR-V. The other fixtures are untried there.
//
// cuda: gpt_oss's prefill, its attention with sinks (gpt_oss.arch's attn):
// a dynamic-length f32 buffer, tensor<1x32x?xf32>, that the GPU pipeline
// fails to bufferize ("failed to bufferize op" on a
// bufferization.alloc_tensor); mimo_v2_flash's sliding layers, the same
// attention with sinks (mimo_v2_flash.arch's attn).
var gpuKnownFailures = map[string]map[string]string{
	"cuda": {
		"gpt_oss":       "failed to bufferize op",
		"mimo_v2_flash": "failed to bufferize op",
	},
	"vulkan": {
		"deepseek_v2": "failed to legalize operation 'arith.constant'",
	},
}

// gpuCompileOptions is the plan `--device cuda` (and `archc compile
// --target cuda`) builds: driver's GPU defaults, decode batches 1, 4, 16
// and 64 over as many slots, prefill chunks of 16, 128 and 512 tokens
// (those within the cache), and with more than one slot the copy entry
// points. A smaller plan missed what only this one has (the slot copies
// failed for cuda while one slot compiled).
func gpuCompileOptions() driver.PlanOptions {
	return driver.PlanOptions{GPU: true}
}

// gpuSmallOptions is the smallest GPU plan that still has every kind of
// entry point: two slots (so the slot copies, copy_cache_C and
// copy_state, which once failed for cuda alone), decode of one and of two
// sequences, and one 16-token prefill chunk. TestGPUCompile builds it for
// every model of the covering subset but gpuDefaultPlanModels. (SmolLM2's
// default plan took 18 min on a loaded 2-core machine: 30 layers, seven
// entry points, 18 MB of MLIR; it gets gpuRealOptions.) The default plan differs
// from it in sizes only (batches to 64, chunks to 512, more slots), which
// one model per kind of state pins.
func gpuSmallOptions() driver.PlanOptions {
	o := driver.PlanOptions{GPU: true}
	o.Lower.Slots = 2
	o.Lower.DecodeBatches = []int64{1, 2}
	o.Lower.PrefillBuckets = []int64{16}
	return o
}

// gpuRealOptions is the plan of the real checkpoint in TestGPUCompile
// (SmolLM2-135M): one slot, decode of one sequence and one 16-token
// prefill chunk. Its 30 layers make every entry point costly (the
// two-slot gpuSmallOptions took 204 s cold on 2 cores); what it checks is
// the real sizes and formats, which two entry points show.
func gpuRealOptions() driver.PlanOptions {
	o := driver.PlanOptions{GPU: true}
	o.Lower.Slots = 1
	o.Lower.DecodeBatches = []int64{1}
	o.Lower.PrefillBuckets = []int64{16}
	return o
}

// gpuDefaultPlanModels are the fixtures TestGPUCompile builds with the
// default GPU plan (gpuCompileOptions): llama-tied, a KV cache. The default
// plan differs from gpuSmallOptions in sizes only (batches to 64, chunks to
// 512, more slots), and the small plan already has every kind of entry
// point (copies of the KV cache and of recurrent state among them) for every
// model of the cover, so one model pins the sizes. Every other model gets
// gpuSmallOptions, unless -gpu-all. The default plan for the whole cover
// took 1554 s of a cold CI run (2026-12-06); for deepseek_v2 and qwen3_next
// it took 190 s of one, against about 35 s for their small plans.
var gpuDefaultPlanModels = []string{"llama-tied"}

// TestGPUCompile: every fixture's module (and a Q8_0 GGUF twin, decoded in
// the graph) compiles with iree-compile for each of gpuTargets through the
// plain lowering, as driver.Compile builds it for --device cuda|hip|vulkan,
// on a machine without a GPU; so does a module decoding every GGUF block
// type in the graph (gpuBlockTypesModel; -gpu-all: the real SmolLM2-135M
// Q4_1 GGUF's). The plan is the default GPU plan (gpuCompileOptions) for
// gpuDefaultPlanModels and the smallest plan with every kind of entry point
// (gpuSmallOptions) for the rest; -gpu-all builds the default plan of
// every model. Modules are cached by hash (ireetool.Compile); failures are
// cached too (gpu-failures/ in the compile cache), so a warm run compiles
// nothing; a module listed in gpuCompiledFile (the same MLIR, flags and
// compiler as one that compiled) is not compiled in a cold run either. Fixtures run in parallel. By default only a subset of the
// fixtures is compiled that uses every primitive variant some fixture uses
// (gpuCover), plus gpuDefaultPlanModels: a GPU compile failure is a
// lowering's, and a cold compile of every fixture for cuda was the largest
// part of a cold CI run.
func TestGPUCompile(t *testing.T) {
	needIREE(t)
	t.Parallel() // compileHeavy
	cache, err := ireetool.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	version, err := ireetool.CompilerVersion()
	if err != nil {
		t.Fatal(err)
	}
	models := fixtures(t)
	if *onlyFixture == "" {
		models = append(models, testmodels.GGUFTwin(t, filepath.Join("testdata", "llama-tied", "model.q8_0.gguf")))
	}
	if !*gpuAll && len(models) > 1 {
		var n int
		if models, n = gpuCover(t, models); true {
			for _, m := range gpuDefaultPlanModels {
				if p := filepath.Join("testdata", m); !slices.Contains(models, p) {
					models = append(models, p)
				}
			}
			t.Logf("compiling %d of %d models, which use all %d primitive variants (-gpu-all for every model)", len(models), len(fixtures(t))+1, n)
		}
	}
	if *onlyFixture == "" {
		if *gpuAll {
			// A real checkpoint's module: SmolLM2-135M's Q4_1 GGUF, its blocks
			// decoded in the graph, at its own sizes (a 49152-token
			// vocabulary, 30 layers); the model scripts/demo.sh runs.
			models = append(models, testmodels.GGUF(t, "smollm2"))
		} else {
			models = append(models, gpuBlockTypesModel(t))
		}
	}
	entryCover := gpuEntryCover(t, models)
	t.Logf("batched decode and slot copies compiled for %v (gpuEntryCover)", slices.Sorted(maps.Keys(entryCover)))
	start := time.Now()
	var mu sync.Mutex
	var summary, compiled []string
	targets := strings.Split(*gpuTargets, ",")
	verified := readGPUCompiled(t)
	t.Cleanup(func() {
		slices.Sort(summary)
		t.Logf("GPU compile of %d modules for %v: %s\n%s", len(summary), targets, time.Since(start).Round(time.Second), strings.Join(summary, "\n"))
		if golden.Update() && !*gpuAll && *onlyFixture == "" && *gpuTargets == "cuda" && !t.Failed() {
			slices.Sort(compiled)
			if err := os.WriteFile(gpuCompiledFile, []byte(strings.Join(compiled, "\n")+"\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
	})
	for _, model := range models {
		name := strings.TrimPrefix(model, "testdata"+string(filepath.Separator))
		if !strings.HasPrefix(model, "testdata") {
			name = filepath.Base(model)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts := gpuCompileOptions()
			switch {
			case *gpuAll || slices.Contains(gpuDefaultPlanModels, name):
			case !strings.HasPrefix(model, "testdata"):
				opts = gpuRealOptions() // the fixtures cover every entry-point kind
			case entryCover[model]:
				opts = gpuSmallOptions()
			default:
				opts = gpuRealOptions() // prefill and decode: entryCover's models hold the other entry points
			}
			p, err := driver.NewPlan(model, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, target := range targets {
				t0 := time.Now()
				digest, ok, err := compileRemembered(cache, version, target, p, verified)
				res := checkKnown(target, name, err)
				took := " (" + time.Since(t0).Round(time.Second).String() + ")"
				if verified[digest] {
					took = " (listed in " + gpuCompiledFile + ")"
				} else if ok {
					took += ", not in " + gpuCompiledFile + " (-update lists it)"
				}
				line := name + " " + target + ": " + res + took
				t.Log(line)
				mu.Lock()
				summary = append(summary, line)
				if ok {
					compiled = append(compiled, digest+" "+target+" "+name)
				}
				mu.Unlock()
				if strings.HasPrefix(res, "FAIL") {
					t.Errorf("%s: %s", target, res)
				}
			}
		})
	}
}

// gpuBlockTypesModel writes llama-tied's Q8_0 twin with its 2-D tensors
// (token embeddings among them) stored round-robin in every GGUF type
// archc reads whose block fits a row (gguf.SupportedTypes; the K-quants'
// 256-element blocks do not fit its 64-wide rows), zero-filled: a compile
// needs the types and shapes, not the values. Its GPU module decodes each
// block type in the graph; it stands in for SmolLM2-135M's real Q4_1 GGUF
// (Q4_1 and Q8_0 only, 91 s of CPU in a cold CI run against about 10),
// which -gpu-all still compiles.
func gpuBlockTypesModel(t *testing.T) string {
	t.Helper()
	src := testmodels.GGUFTwin(t, filepath.Join("testdata", "llama-tied", "model.q8_0.gguf"))
	dst := filepath.Join(t.TempDir(), "llama-tied.blocktypes.gguf")
	var types []gguf.Type
	for _, ty := range gguf.SupportedTypes() {
		if ty != gguf.F32 {
			types = append(types, ty)
		}
	}
	var used []string
	testmodels.RewriteGGUF(t, src, dst, func(e *testmodels.GGUFEdit) {
		next := 0
		for i, ts := range e.Tensors {
			if len(ts.Dims) != 2 {
				continue
			}
			for range types {
				ty := types[next%len(types)]
				next++
				elems, bytes, _ := ty.BlockSize()
				if int64(ts.Dims[0])%elems != 0 {
					continue
				}
				e.Tensors[i].Type = ty
				e.Tensors[i].Data = make([]byte, int64(ts.Dims[0]*ts.Dims[1])/elems*bytes)
				used = append(used, ty.String())
				break
			}
		}
	})
	slices.Sort(used)
	if used = slices.Compact(used); len(used) < 5 {
		t.Fatalf("gpuBlockTypesModel: only %v fit llama-tied's rows", used)
	}
	t.Logf("%s: 2-D tensors stored as %v", filepath.Base(dst), used)
	return dst
}

// gpuEntryCover picks, from the fixtures among models, the first that
// holds each kind of per-slot state (KV cache, conv window, recurrent
// state: lower.StateTable's rows) in each rank and dtype, and returns them
// as a set: their GPU
// plan is gpuSmallOptions, whose batched decode and slot copies (copy_cache_C,
// copy_state, which once failed for cuda alone) are the same lowering for
// every model holding that kind of state; the others compile prefill and
// decode of one sequence (gpuRealOptions), which hold every primitive
// variant. About 40 % of each of those modules' compile (230 s of a cold
// CI run).
func gpuEntryCover(t *testing.T, models []string) map[string]bool {
	t.Helper()
	out, seen := map[string]bool{}, map[string]bool{}
	for _, m := range models {
		if !strings.HasPrefix(m, "testdata") {
			continue
		}
		p, err := driver.NewPlan(m, gpuSmallOptions())
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		for _, row := range p.States {
			if k := fmt.Sprint(row.Kind, len(row.Shape), row.DType); !seen[k] { // an MLA latent cache is rank 1, heads' rank 2
				seen[k], out[m] = true, true
			}
		}
	}
	return out
}

// gpuVariants returns the primitive variants a GPU plan of model uses:
// each node's primitive with each of its string and boolean attributes
// (an activation, a layout, a router stage), and the storage format of
// each weight it reads.
func gpuVariants(model string) (map[string]bool, error) {
	p, err := driver.NewPlan(model, gpuCompileOptions())
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range p.Graph.Nodes {
		out[n.Prim] = true
		for k, v := range n.Attrs {
			switch v.(type) {
			case string, bool:
				out[fmt.Sprintf("%s %s=%v", n.Prim, k, v)] = true
			}
		}
	}
	for _, f := range p.Options.WeightDTypes {
		out["weight "+f] = true
	}
	return out, nil
}

// gpuCover picks, greedily, models whose variants (gpuVariants) together
// are every model's: the one adding the most variants not yet covered
// first, ties by name. It returns them with the number of variants.
func gpuCover(t *testing.T, models []string) ([]string, int) {
	t.Helper()
	sets := make([]map[string]bool, len(models))
	for i, m := range models {
		v, err := gpuVariants(m)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		sets[i] = v
	}
	return cover(models, sets)
}

// checkKnown classes a compile result against gpuKnownFailures: "ok",
// "known failure: ...", or "FAIL: ..." (an unlisted failure, a listed one
// that now compiles or fails otherwise).
func checkKnown(target, model string, err error) string {
	want, listed := gpuKnownFailures[target][model]
	if !listed {
		want, listed = gpuKnownFailures[target]["*"]
	}
	listed = listed && want != ""
	switch {
	case err == nil && !listed:
		return "ok"
	case err == nil:
		return "FAIL: compiles now; take it out of gpuKnownFailures"
	case !listed:
		return "FAIL: " + err.Error()
	case !strings.Contains(err.Error(), want):
		return "FAIL: listed as failing with " + want + ", but: " + err.Error()
	}
	return "known failure: " + firstLine(err.Error())
}

// compileRemembered compiles p's module for the target named name with
// driver.TargetFlags, as driver.Compile does (ireetool.Compile caches the
// module), and remembers a failure's message under the cache dir, keyed by
// compiler version, target, flags and MLIR (gpuDigest), so that it is not
// compiled again. A module whose digest gpuCompiled lists compiled with
// this compiler when the list was last written: it is not compiled again
// either. compiled says the module compiled, now or when listed.
func compileRemembered(cache, version, name string, p *driver.Plan, verified map[string]bool) (digest string, compiled bool, err error) {
	target, err := ireetool.LookupTarget(name)
	if err != nil {
		return "", false, err
	}
	flags := driver.TargetFlags(p, target)
	digest = gpuDigest(version, name, flags, p.MLIR)
	if verified[digest] {
		return digest, true, nil
	}
	failed := filepath.Join(cache, "gpu-failures", digest+".txt")
	if msg, err := os.ReadFile(failed); err == nil {
		return digest, false, errors.New(string(msg))
	}
	_, _, err = ireetool.Compile(context.Background(), p.MLIR, ireetool.CompileOptions{CacheDir: cache, Target: name, Flags: flags})
	if err != nil && os.MkdirAll(filepath.Dir(failed), 0o755) == nil {
		os.WriteFile(failed, []byte(err.Error()), 0o644)
	}
	return digest, err == nil, err
}

// gpuDigest is the SHA-256 (hex) of what decides a GPU compile's outcome:
// the compiler's version, the target, its flags and the module's MLIR.
func gpuDigest(version, target string, flags []string, mlir []byte) string {
	h := sha256.New()
	for _, part := range []string{"archc-gpu-failure-1", version, target, strings.Join(flags, "\x00")} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write(mlir)
	return hex.EncodeToString(h.Sum(nil))
}

// gpuCompiledFile lists the GPU modules TestGPUCompile's default run
// compiled, one per line: "digest target model" (gpuDigest). iree-compile
// is a pure function of what the digest hashes (the version, flags and
// MLIR), so a module with a listed digest is the same input to the same
// compiler: the test takes the listed outcome instead of compiling it
// again, and compiles only the modules a change to the lowerings, the
// fixtures or the pinned compiler made new. The cuda compiles of the cover
// were about 310 s of a cold CI run's 2700 s of compile CPU. -update
// compiles every module and rewrites the list; a module missing from it is
// compiled (and logged) until then. Review its diffs like any golden: a
// line goes only with a module that compiled on the committer's machine.
const gpuCompiledFile = "testdata/gpu_compiled.txt"

// readGPUCompiled reads gpuCompiledFile's digests (none under -update,
// -gpu-all or -fixture, which compile what they select).
func readGPUCompiled(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	if golden.Update() || *gpuAll || *onlyFixture != "" {
		return out
	}
	b, err := os.ReadFile(gpuCompiledFile)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return out
		}
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if d, _, ok := strings.Cut(line, " "); ok {
			out[d] = true
		}
	}
	return out
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
