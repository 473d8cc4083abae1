package lower

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/archc/archc/codegen"
)

// Kernels are hand-written matmul kernels, y[M, N] = x[M, K] · Wᵀ with W in
// a storage format (rt/kernels builds them), compiled to LLVM bitcode for
// the host CPU. Lower embeds the bitcode in the module as one executable
// (kernelExecutable) and a linear layer over a weight whose format has a
// kernel becomes one flow.dispatch of it; every other weight, and every
// weight when Kernels is nil, goes through the plain lowering (decode to f32
// in the graph, then stablehlo.dot_general), which stays the numeric
// reference.
//
// Kernel ABI: a function archc_mm_<format>(x, xo, w, wo, y, yo, M, N, K, wg)
// for each format, with x [M, K] f32, w the stored rows [N, row bytes], y
// [M, N] f32 (each memref as base pointer and element offset, each index as
// size_t); workgroup wg computes columns [wg·Rows, (wg+1)·Rows) ∩ [0, N).
type Kernels struct {
	Bitcode []byte   // LLVM bitcode defining archc_mm_<format> for each format
	Formats []string // storage formats with a kernel (storage.go names)
	Rows    int64    // output columns per workgroup
	MaxK    int64    // longest row (elements) a kernel accepts
	// Target names the kernels' CPU requirement, for the module's readers
	// (e.g. "x86_64 avx2+fma+f16c").
	Target string
}

// kernelExecutable is the symbol of the executable holding the kernels.
const kernelExecutable = "archc_kernels"

// executable returns the MLIR text of the stream.executable carrying the
// kernels: one export per format, computing ceil(N / Rows) workgroups, whose
// body hands the bindings' base pointers and offsets to the C function.
func (k *Kernels) executable() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "  // Hand-written matmul kernels (rt/kernels; %s), linked into the dispatches from LLVM bitcode.\n", k.Target)
	fmt.Fprintf(&sb, "  stream.executable private @%s attributes {hal.executable.objects = #hal.executable.objects<{#hal.executable.target<\"llvm-cpu\", \"embedded-elf-x86_64\"> = [#hal.executable.object<{path = \"archc_kernels.bc\", data = dense<\"0x%s\"> : vector<%dxi8>}>]}>} {\n",
		kernelExecutable, strings.ToUpper(hex.EncodeToString(k.Bitcode)), len(k.Bitcode))
	for _, fm := range k.Formats {
		fmt.Fprintf(&sb, "    stream.executable.export public @mm_%s workgroups(%%n: index) -> (index, index, index) {\n", fm)
		fmt.Fprintf(&sb, "      %%x = affine.apply affine_map<()[s0] -> (s0 ceildiv %d)>()[%%n]\n", k.Rows)
		sb.WriteString("      %c1 = arith.constant 1 : index\n      stream.return %x, %c1, %c1 : index, index, index\n    }\n")
	}
	sb.WriteString("    builtin.module {\n")
	sig := "memref<f32>, index, memref<i8>, index, memref<f32>, index, index, index, index, index"
	for _, fm := range k.Formats {
		fmt.Fprintf(&sb, "      func.func private @archc_mm_%s(%s) attributes {hal.import.static, llvm.bareptr = true}\n", fm, sig)
		fmt.Fprintf(&sb, `      func.func @mm_%s(%%bx: !stream.binding, %%bw: !stream.binding, %%by: !stream.binding, %%m: index, %%n: index, %%k: index, %%rb: index) {
        %%c0 = arith.constant 0 : index
        %%wg = stream.dispatch.workgroup.id[0] : index
        %%nx = arith.muli %%m, %%k : index
        %%nw = arith.muli %%n, %%rb : index
        %%ny = arith.muli %%m, %%n : index
        %%x = stream.binding.subspan %%bx[%%c0] : !stream.binding -> memref<?xf32>{%%nx}
        %%w = stream.binding.subspan %%bw[%%c0] : !stream.binding -> memref<?xi8>{%%nw}
        %%y = stream.binding.subspan %%by[%%c0] : !stream.binding -> memref<?xf32>{%%ny}
        %%xb, %%xo, %%xs, %%xt = iree_codegen.extract_strided_metadata %%x : memref<?xf32> -> memref<f32>, index, index, index
        %%wb, %%wo, %%ws, %%wt = iree_codegen.extract_strided_metadata %%w : memref<?xi8> -> memref<i8>, index, index, index
        %%yb, %%yo, %%ys, %%yt = iree_codegen.extract_strided_metadata %%y : memref<?xf32> -> memref<f32>, index, index, index
        func.call @archc_mm_%s(%%xb, %%xo, %%wb, %%wo, %%yb, %%yo, %%m, %%n, %%k, %%wg) : (%s) -> ()
        return
      }
`, fm, fm, sig)
	}
	sb.WriteString("    }\n  }")
	return sb.String()
}

// kernelLinear computes x [..., K] · Wᵀ for weight name [N, K] with the
// format's kernel, as [..., N] f32; ok is false when no kernel applies
// (no kernels, no kernel for the format, K too long), and the caller lowers
// the plain way.
func (f *fn) kernelLinear(x codegen.Value, name string) (y codegen.Value, ok bool) {
	k := f.opts.Kernels
	if k == nil {
		return codegen.Value{}, false
	}
	st, err := f.opts.storageOf(name)
	if err != nil || !slices.Contains(k.Formats, st.name) {
		return codegen.Value{}, false
	}
	shape := f.shapes[name]
	if len(shape) != 2 {
		return codegen.Value{}, false
	}
	N, K := shape[0], shape[1]
	if K > k.MaxK || K%32 != 0 || x.Type.Shape[x.Type.Rank()-1] != K {
		return codegen.Value{}, false
	}
	raw, _, _ := f.stored(name)
	M := x.Type.NumElements() / K
	x2 := f.reshape(x, M, K)
	rb := raw.Type.Shape[1]
	n := f.Index(N)
	out := f.Dispatch(kernelExecutable, "mm_"+st.name, []codegen.Value{n}, codegen.T("f32", M, N),
		x2, raw, f.Index(M), n, f.Index(K), f.Index(rb))
	outShape := append(append([]int64{}, x.Type.Shape[:x.Type.Rank()-1]...), N)
	return f.reshape(out, outShape...), true
}
