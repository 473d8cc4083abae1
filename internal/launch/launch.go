// Package launch opens a model to run: package driver plans and compiles
// it, package rt loads the result. It is the one place that joins the
// compiler side and the runtime (which do not import each other), for
// cmd/infer and the tests that run models.
package launch

import (
	"context"
	"time"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/lower"
	"github.com/archc/archc/rt"
)

// Options configures Open: the plan and compile options (driver) and the
// runtime's (rt).
type Options struct {
	Plan     driver.PlanOptions
	CacheDir string // compiled-module cache; "" is ireetool.DefaultCacheDir()
	// Device is the IREE HAL device: "local-task" (default), "local-sync",
	// "cuda", "hip" or "vulkan". The module is compiled for its target
	// (ireetool.LookupTarget): a GPU's plans with GPU defaults and without
	// archc's CPU kernels (driver.CompileOptions.Target).
	Device  string
	Threads int // local-task worker threads; 0: one per core
	// RuntimeFlags are extra iree.runtime flags (iree.RuntimeOptions.Extra).
	RuntimeFlags []string
	// CompileFlags are extra iree-compile flags, after the target's.
	CompileFlags []string
	// NoKernels turns archc's hand-written matmul kernels off
	// (driver.CompileOptions.NoKernels).
	NoKernels bool
	// Kernels picks the kernels' variant (driver.CompileOptions.Kernels),
	// Precision their arithmetic (driver.CompileOptions.Precision).
	Kernels, Precision string
	// Phase, if set, is called when a slow phase starts ("pack weights",
	// "compile", "load") and returns a function called when it ends.
	Phase func(name string) (done func())
}

// Open plans and compiles the model at path for opts.Device's target
// (driver.Compile, cached) and loads it with its weights into a new IREE worker (rt.Load). The model
// needs a checkpoint. Its LoadTime is everything but the compile. A GPU
// device the machine lacks is refused before the compile (rt.CheckDevice).
// Errors: those of rt.CheckDevice, driver.Compile and rt.Load.
func Open(ctx context.Context, path string, opts Options) (*rt.Model, error) {
	start := time.Now()
	if err := rt.CheckDevice(ctx, opts.Device); err != nil {
		return nil, err
	}
	c, err := driver.Compile(ctx, path, driver.CompileOptions{
		Plan: opts.Plan, CacheDir: opts.CacheDir, Target: opts.Device, Flags: opts.CompileFlags, NoKernels: opts.NoKernels, Kernels: opts.Kernels, Precision: opts.Precision, Phase: opts.Phase,
	})
	if err != nil {
		return nil, err
	}
	m, err := rt.Load(ctx, Program(c), rt.Options{Device: opts.Device, Threads: opts.Threads, RuntimeFlags: opts.RuntimeFlags, Phase: opts.Phase})
	if err != nil {
		return nil, err
	}
	m.LoadTime = time.Since(start) - c.CompileTime
	return m, nil
}

// Program is what rt needs of a compiled model (rt.Program).
func Program(c *driver.Compiled) *rt.Program {
	p := c.Plan
	prog := &rt.Program{
		Module: c.Module, Params: c.Params, CompilerVersion: c.CompilerVersion,
		Vocab: c.Vocab, EOS: c.EOS,
		Slots: p.Options.Slots, MaxLen: p.Options.MaxLen,
		PrefillBuckets: p.Options.PrefillBuckets, DecodeBatches: p.Options.DecodeBatches, VerifyBuckets: p.Options.VerifyBuckets,
		Lengths: p.Lengths, MRoPE: p.MRoPE, States: p.States, Dir: p.Dir,
		Family: p.Family.Name, CompileTime: c.CompileTime, Cached: c.Cached, Kernels: c.Kernels, Precision: c.Precision, Target: c.Target.Name,
		Unread: p.Unread, Encoders: p.Encoders,
	}
	if p.GGUF != nil {
		prog.GGUF = p.GGUF.File
	}
	if p.Graph.MTP != nil && p.Options.MTP {
		prog.MTPBuckets = lower.MTPBuckets(p.Options)
		prog.MTPChain = p.Graph.MTP.Next != nil
	}
	return prog
}
