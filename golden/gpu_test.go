package golden

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/rt/ireetool"
)

// gpuTargets are the GPU targets every fixture's module must compile for
// (CI has no GPU: numerics on a GPU are scripts/gpu-check.sh's).
var gpuTargets = []string{"cuda", "vulkan"}

// gpuKnownFailures are the fixtures whose module IREE 3.13 does not
// compile for a target, with a piece of the compiler's error. A listed
// failure that goes away fails the test (take the row out); a listed one
// failing with another error fails too.
//
// cuda: the routed-MoE fixtures fail in decode_1 with "failed to
// distribute" (IREE's GPU tiling of the expert-dispatch gather/scatter);
// prefill compiles. vulkan: every fixture fails on the embedding gather
// fused into the first norm (a memref<1xindex> in workgroup memory that
// SPIR-V cannot legalize).
var gpuKnownFailures = map[string]map[string]string{
	"cuda": {},
	"vulkan": {
		"*": "failed to legalize",
	},
}

// gpuCompileOptions is the smallest GPU plan that still compiles both
// graph kinds: decode of one sequence and one prefill chunk.
func gpuCompileOptions() driver.PlanOptions {
	o := driver.PlanOptions{GPU: true}
	o.Lower.Slots = 1
	o.Lower.DecodeBatches = []int64{1}
	o.Lower.PrefillBuckets = []int64{16}
	return o
}

// TestGPUCompile: every fixture's module (and a Q8_0 GGUF twin, decoded in
// the graph) compiles with iree-compile for each of gpuTargets through the
// plain lowering, as driver.Compile builds it for --device cuda|vulkan, on
// a machine without a GPU. Modules are cached by hash (ireetool.Compile);
// failures are cached too (gpu-failures/ in the compile cache), so a warm
// run compiles nothing. Fixtures run in parallel.
func TestGPUCompile(t *testing.T) {
	needIREE(t)
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
		models = append(models, filepath.Join("testdata", "llama-tied", "model.q8_0.gguf"))
	}
	start := time.Now()
	var mu sync.Mutex
	var summary []string
	t.Cleanup(func() {
		t.Logf("GPU compile of %d models for %v: %s\n%s", len(models), gpuTargets, time.Since(start).Round(time.Second), strings.Join(summary, "\n"))
	})
	for _, model := range models {
		name := strings.TrimPrefix(model, "testdata"+string(filepath.Separator))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := driver.NewPlan(model, gpuCompileOptions())
			if err != nil {
				t.Fatal(err)
			}
			for _, target := range gpuTargets {
				t0 := time.Now()
				err := compileRemembered(cache, version, target, p.MLIR)
				res := checkKnown(target, filepath.Dir(name), err)
				mu.Lock()
				summary = append(summary, name+" "+target+": "+res+" ("+time.Since(t0).Round(time.Second).String()+")")
				mu.Unlock()
				if strings.HasPrefix(res, "FAIL") {
					t.Errorf("%s: %s", target, res)
				}
			}
		})
	}
}

// checkKnown classes a compile result against gpuKnownFailures: "ok",
// "known failure: ...", or "FAIL: ..." (an unlisted failure, a listed one
// that now compiles or fails otherwise).
func checkKnown(target, fixture string, err error) string {
	want, listed := gpuKnownFailures[target][fixture]
	if !listed {
		want, listed = gpuKnownFailures[target]["*"]
	}
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

// compileRemembered compiles mlir for target (ireetool.Compile caches the
// module) and remembers a failure's message under the cache dir, keyed by
// compiler version, target and MLIR, so that it is not compiled again.
func compileRemembered(cache, version, target string, mlir []byte) error {
	h := sha256.New()
	for _, part := range []string{"archc-gpu-failure-1", version, target} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write(mlir)
	failed := filepath.Join(cache, "gpu-failures", hex.EncodeToString(h.Sum(nil))+".txt")
	if msg, err := os.ReadFile(failed); err == nil {
		return errors.New(string(msg))
	}
	_, _, err := ireetool.Compile(context.Background(), mlir, ireetool.CompileOptions{CacheDir: cache, Target: target})
	if err != nil && os.MkdirAll(filepath.Dir(failed), 0o755) == nil {
		os.WriteFile(failed, []byte(err.Error()), 0o644)
	}
	return err
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
