package driver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/archc/archc/driver/kernels"
	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/lower"
)

// CompileOptions configures Compile.
type CompileOptions struct {
	Plan     PlanOptions
	CacheDir string // compiled-module, kernel and packed-weight cache; "" is ireetool.DefaultCacheDir()
	// Target is the compile target or the device that runs the module
	// (ireetool.LookupTarget: "" or "local-task" is llvm-cpu, "cuda", ...).
	// A GPU target plans with PlanOptions.GPU and without archc's kernels.
	Target string
	// Flags are extra iree-compile flags, after the target's.
	Flags []string
	// NoKernels turns archc's hand-written matmul kernels off: every weight
	// is decoded in the graph and multiplied by IREE's own code (the numeric
	// reference; also what CPUs without AVX2 and every GPU get).
	NoKernels bool
	// Kernels picks the kernels' variant by name (kernels.Select): "" or
	// "auto" the best this CPU runs, "amx", "avx512", "avx2", or "none" (as
	// NoKernels). A variant the CPU lacks is an error naming the missing
	// features.
	Kernels string
	// Precision is the kernels' arithmetic (kernels.Precisions): "" or
	// "f32" exact (the default), "int8" activations quantized per block
	// (opt-in, needs a variant with an int8 build: kernels.Select).
	Precision string
	// Phase, if set, is called when a slow phase starts ("pack weights",
	// "compile") and returns a function called when it ends.
	Phase func(name string) (done func())
}

// Compiled is a planned model compiled to an IREE module, with everything
// a runtime needs to load and run it: with the Plan's shapes (Options)
// and length policy (Lengths), what internal/launch makes package rt's
// Program of (the two packages do not import each other).
type Compiled struct {
	Plan   *Plan
	Module string           // the compiled .vmfb (in the cache)
	Cached bool             // Module came from the cache
	Params []ireetool.Param // the module's weights as IREE parameters (Plan.Parameters)
	// CompileTime is the iree-compile wall time (near zero on a cache hit).
	CompileTime time.Duration
	// CompilerVersion is `iree-compile --version` of the compiler that
	// built Module: the runtime loads it only with the matching iree.runtime.
	CompilerVersion string
	Vocab           int64   // logits width
	EOS             []int32 // end-of-generation ids (EOS)
	// Kernels is the variant of archc's matmul kernels in the module
	// ("amx", "avx512", "avx2"), or "none" (the plain lowering only); Precision
	// their arithmetic ("f32", "int8"; "f32" with no kernels).
	Kernels, Precision string
	// Target is the compile target the module was built for.
	Target ireetool.Target
}

// Compile plans the model at path (NewPlan; with archc's kernels for
// this CPU unless opts.NoKernels or opts.Plan.Lower.Kernels is set or the
// target is a GPU), prepares its weights as IREE parameters (Parameters)
// and compiles its module for opts.Target with iree-compile (cached). The model needs a checkpoint. Errors
// name the cause: planning errors, a missing IREE install
// (ireetool.ErrNotFound), a missing kernel compiler, compile failures.
func Compile(ctx context.Context, path string, opts CompileOptions) (*Compiled, error) {
	phase := opts.Phase
	if phase == nil {
		phase = func(string) func() { return func() {} }
	}
	cacheDir := opts.CacheDir
	if cacheDir == "" {
		var err error
		if cacheDir, err = ireetool.DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	target, err := ireetool.LookupTarget(opts.Target)
	if err != nil {
		return nil, err
	}
	if target.GPU {
		if k := opts.Kernels; k != "" && k != "auto" && k != "none" {
			return nil, fmt.Errorf("--kernels %s: archc's matmul kernels are CPU code; on %s every weight goes through the plain lowering (leave --kernels out)", k, target.Name)
		}
		if pr := opts.Precision; pr != "" && pr != kernels.F32 {
			return nil, fmt.Errorf("--precision %s: the int8 mode is archc's CPU kernels; on %s every weight goes through the plain lowering in f32 (leave --precision out)", pr, target.Name)
		}
		opts.NoKernels, opts.Plan.GPU = true, true
	}
	if opts.Plan.Lower.Kernels == nil && !opts.NoKernels {
		v, err := kernels.Select(opts.Kernels, opts.Precision)
		if err != nil {
			return nil, err
		}
		if v != nil {
			if opts.Plan.Lower.Kernels, err = KernelsVariant(ctx, cacheDir, v); err != nil {
				return nil, err
			}
		}
	}
	variant, precision := kernels.None, kernels.F32
	if k := opts.Plan.Lower.Kernels; k != nil {
		variant, precision = k.Variant, k.Precision
	} else if opts.NoKernels && opts.Precision != "" && opts.Precision != kernels.F32 {
		return nil, fmt.Errorf("--precision %s needs archc's kernels, which are off here (the plain lowering is f32)", opts.Precision)
	}
	p, err := NewPlan(path, opts.Plan)
	if err != nil {
		return nil, err
	}
	if k := opts.Plan.Lower.Kernels; k != nil && k.Precision != kernels.F32 && !anyKernelWeight(p, k) {
		return nil, fmt.Errorf("--precision %s: no weight of %s is stored in a format archc's kernels read (%s), so every weight goes through the plain lowering in f32 and the mode would change nothing: it applies to GGUF-quantized, MLX, f16 and bf16 weights (leave --precision out)", k.Precision, path, strings.Join(k.Formats, ", "))
	}
	params, err := p.Parameters(ctx, cacheDir, opts.Phase)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	eos, err := EOS(p)
	if err != nil {
		return nil, err
	}
	cv, err := ireetool.CompilerVersion()
	if err != nil {
		return nil, err
	}
	done := phase("compile")
	t0 := time.Now()
	flags := append(TargetFlags(p, target), opts.Flags...)
	vmfb, cached, err := ireetool.Compile(ctx, p.MLIR, ireetool.CompileOptions{CacheDir: cacheDir, Target: target.Name, Flags: flags})
	done()
	if err != nil {
		return nil, err
	}
	return &Compiled{
		Plan: p, Module: vmfb, Cached: cached, Params: params, CompileTime: time.Since(t0), CompilerVersion: cv,
		Vocab: int64(p.Graph.Logits.Type.Shape[2]), EOS: eos, Kernels: variant, Precision: precision, Target: target,
	}, nil
}

// anyKernelWeight reports whether some weight of p is stored in a format
// k has a kernel for (what lower's kernels dispatch on).
func anyKernelWeight(p *Plan, k *lower.Kernels) bool {
	for _, f := range p.Options.WeightDTypes {
		if slices.Contains(k.Formats, f) {
			return true
		}
	}
	return false
}

// TargetFlags are the iree-compile flags of p's module for target: the
// target's flags and its ByPrimitive workarounds for the primitives p's
// graph uses (ireetool.Target.ModuleFlags).
func TargetFlags(p *Plan, target ireetool.Target) []string {
	used := map[string]bool{}
	for _, n := range p.Graph.Nodes {
		used[n.Prim] = true
	}
	return target.ModuleFlags(func(prim string) bool { return used[prim] })
}

// EOS returns the model's end-of-generation token ids: eos_token_id of
// generation_config.json in the model folder, else of config.json; for a
// GGUF file also its eos, eot and eom ids and llama.cpp's end-of-turn
// tokens. Errors: an eos_token_id that is not an int or a list of ints, an
// unreadable generation_config.json.
func EOS(p *Plan) ([]int32, error) {
	src := p.Raw
	if p.Nested != nil && p.Nested["eos_token_id"] != nil { // a wrapper's text model: its own eos
		src = p.Nested
	}
	eos, err := eosTokens(p.Dir, src)
	if err != nil {
		return nil, err
	}
	if p.GGUF != nil {
		eos = ggufEndTokens(p.GGUF.File, eos)
	}
	return eos, nil
}

// Kernels builds archc's hand-written matmul kernels of the best variant
// this CPU runs (driver/kernels, cached under cacheDir) as the lowering takes
// them; nil, nil on a CPU no variant supports. Errors as kernels.Build.
func Kernels(ctx context.Context, cacheDir string) (*lower.Kernels, error) {
	obj, err := kernels.Build(ctx, cacheDir)
	if err != nil || obj == nil {
		return nil, err
	}
	return (*lower.Kernels)(obj), nil
}

// KernelsVariant is Kernels for variant v (kernels.Select checks that the
// CPU runs it). Errors as kernels.BuildVariant.
func KernelsVariant(ctx context.Context, cacheDir string, v *kernels.Variant) (*lower.Kernels, error) {
	obj, err := kernels.BuildVariant(ctx, cacheDir, v)
	if err != nil {
		return nil, err
	}
	return (*lower.Kernels)(obj), nil
}
