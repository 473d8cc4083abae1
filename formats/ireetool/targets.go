package ireetool

import (
	"fmt"
	"slices"
	"strings"
)

// Target is one IREE compile target archc builds modules for, with the
// runtime devices (IREE HAL drivers) that run its modules.
type Target struct {
	Name    string   // archc's name, as --target takes it: "llvm-cpu", "cuda", "hip", "vulkan"
	Devices []string // HAL drivers that run its modules, as --device takes them; the first is the default
	// GPU is set for a GPU target: archc's CPU matmul kernels are left out
	// (every weight goes through the plain lowering) and the batch buckets
	// default to GPU sizes (driver.PlanOptions.GPU).
	GPU bool
	// Flags are the iree-compile flags of the target (input and output
	// flags are added by Compile).
	Flags []string
	// HostKeyed: the module is built for the compiling host's CPU
	// (--iree-llvmcpu-target-cpu=host), so the compile cache key includes
	// the host CPU's description; a GPU module is keyed by its flags (which
	// name the GPU architecture) and can be compiled on one machine and run
	// on another.
	HostKeyed bool
	// Library names what the runtime needs on the machine for Devices
	// (what a missing-driver error says was looked for).
	Library string
	// ByPrimitive are more flags for a module whose graph uses a primitive
	// (the key, as lower names it): workarounds of IREE's pipeline that
	// the other modules do not take.
	ByPrimitive map[string][]string
}

// ModuleFlags are t.Flags and the ByPrimitive flags of each primitive
// uses reports, in the table's order (sorted by primitive).
func (t Target) ModuleFlags(uses func(prim string) bool) []string {
	out := slices.Clone(t.Flags)
	prims := make([]string, 0, len(t.ByPrimitive))
	for p := range t.ByPrimitive {
		prims = append(prims, p)
	}
	slices.Sort(prims)
	for _, p := range prims {
		if uses(p) {
			out = append(out, t.ByPrimitive[p]...)
		}
	}
	return out
}

// Targets are the compile targets, one per line, with what was measured
// of their flags (IREE 3.13.0; the CPU numbers are a 2-core AMD EPYC VM).
//
//   - llvm-cpu: O3 for this host's CPU. Data tiling is off: the
//     DispatchCreation path (--iree-opt-data-tiling) made SmolLM2-135M's
//     decode entry point (M=1 matmuls) return wrong logits while prefill
//     stayed exact (the real-checkpoint oracle test catches it). The legacy
//     --iree-global-opt-data-tiling path is correct and made f32/f16 weight
//     matmuls ~1.4x faster in ../shared/notes/iree-cpu-perf.md, but GGUF and
//     f16/bf16 weights go through archc's own kernels (driver/kernels), so it
//     would touch only attention (dynamic length) and f32 checkpoints; it is
//     off until measured on that path. Runtime, not codegen, bounds decode
//     here: a chain of dependent dispatches costs ~60 µs each on local-task
//     and ~2 µs on local-sync, and decode issues ~600 of them per token.
//     Const-eval is off (--iree-opt-const-eval=false): what it evaluated at
//     compile time in archc's modules is a few tiny hoisted index tensors
//     (tensor<5xi32> of scatter offsets), yet its JIT compiles a second
//     module through the whole pipeline, 4-11 % of each compile's CPU
//     (2026-12-07, Intel Xeon 2-core VM: a small fixture 5.6 -> 5.2 s, with
//     batched decode 8.3 -> 7.3, deepseek_v3's 13.1 -> 12.5). The hoisted
//     globals are still hoisted and computed once, by the module's
//     initializer when it loads.
//   - cuda: sm_80 PTX, which Hopper (H100/H200) runs through the driver's
//     JIT: the 3.13 compiler refuses sm_90 ("missing GPU target"). Golden
//     TestGPUCompile compiles the default GPU plan (64 slots, decode
//     1/4/16/64, prefill 16/128/512, the slot copies) of a covering subset
//     of the fixtures on a CPU-only machine, and SmolLM2-135M's Q4_1 GGUF
//     (2026-12-06: all compiled but gpt_oss; SmolLM2's default plan
//     compiled in 18 min on a loaded 2-core machine). The slot copies
//     compile only through lower.Options.GPU's barrier (lower/copy.go).
//     Routed experts need a
//     workaround: their decode_1 fuses the gather of the chosen experts'
//     weights into the matvec (a reduction reading W[idx[k], j, d] through
//     tensor.extract), which the reduction vector-distribution pipeline
//     fails on ("'func.func' op failed to distribute"; deepseek_v2's
//     decode_1_dispatch_60_reduction_72x64_f32 alone fails in 21 s and
//     compiles with the pipeline off, or with
//     --iree-codegen-llvmgpu-test-tile-and-fuse-vectorize). The flag is
//     added only to modules with experts, since that pipeline is the one
//     IREE picks for dense matvecs, decode's hot path: its cost there is
//     unmeasured. gpt_oss's prefill (attention with sinks) fails to
//     bufferize a dynamic-length buffer; TestGPUCompile lists it. IREE's
//     LLM test suites add data tiling, tensor ukernels,
//     specialised dispatches, indirect command buffers and memoization for
//     GPUs; none is on until measured on a GPU (scripts/gpu-check.sh
//     prints the numbers to compare).
//   - hip: gfx942 (MI300/MI325), the chip of IREE's own LLM CI (3.13 names
//     the flag --iree-rocm-target; --iree-hip-target is unknown to it);
//     llama-tied's default GPU plan compiles (2026-12-06), no other
//     fixture was tried and none run.
//   - vulkan: SPIR-V for NVIDIA Ampere and newer ("ampere"). On the
//     default GPU plan (2026-12-06) llama-tied and qwen3-tied compile (the
//     float-embedding failure noted before, a memref<1xindex> in
//     workgroup memory, did not show) and deepseek_v2's routed experts
//     fail ("failed to legalize operation 'arith.constant'", a
//     vector<32xi32>); TestGPUCompile -gpu-targets vulkan lists them.
var Targets = []Target{
	{Name: "llvm-cpu", Devices: []string{"local-task", "local-sync"}, HostKeyed: true, Library: "(none: IREE's own CPU runtime)",
		Flags: []string{"--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host", "--iree-opt-level=O3", "--iree-opt-const-eval=false"}},
	{Name: "cuda", Devices: []string{"cuda"}, GPU: true, Library: "libcuda.so (the NVIDIA driver) and an NVIDIA GPU",
		Flags:       []string{"--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80", "--iree-opt-level=O3"},
		ByPrimitive: map[string][]string{"experts": {"--iree-codegen-llvmgpu-use-reduction-vector-distribution=false"}}},
	{Name: "hip", Devices: []string{"hip"}, GPU: true, Library: "libamdhip64.so (ROCm's HIP runtime) and an AMD GPU",
		Flags: []string{"--iree-hal-target-device=hip", "--iree-rocm-target=gfx942", "--iree-opt-level=O3"}},
	{Name: "vulkan", Devices: []string{"vulkan"}, GPU: true, Library: "libvulkan.so.1 (the Vulkan loader) and a GPU's Vulkan driver",
		Flags: []string{"--iree-hal-target-device=vulkan", "--iree-vulkan-target=ampere", "--iree-opt-level=O3"}},
}

// DefaultFlags are the iree-compile flags Compile uses unless
// CompileOptions.Target or Flags say otherwise: the llvm-cpu target's.
var DefaultFlags = Targets[0].Flags

// Devices lists every runtime device of Targets, in table order
// ("local-task", "local-sync", "cuda", "hip", "vulkan").
func Devices() []string {
	var out []string
	for _, t := range Targets {
		out = append(out, t.Devices...)
	}
	return out
}

// LookupTarget returns the target named name, or the target whose modules
// device runs ("" is llvm-cpu). Errors name the known targets and devices.
func LookupTarget(name string) (Target, error) {
	if name == "" {
		return Targets[0], nil
	}
	for _, t := range Targets {
		if t.Name == name || slices.Contains(t.Devices, name) {
			return t, nil
		}
	}
	var names []string
	for _, t := range Targets {
		names = append(names, t.Name)
	}
	return Target{}, fmt.Errorf("unknown target %q: use one of %s (or a device: %s)", name, strings.Join(names, ", "), strings.Join(Devices(), ", "))
}
