package lower

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
)

// Kernels are hand-written matmul kernels, y[M, N] = x[M, K] · Wᵀ with W in
// a storage format (driver/kernels builds them), compiled to LLVM bitcode for
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
// And archc_mm_<format>3(x, xo, w1, w1o, w2, w2o, w3, w3o, y, yo, M, N1,
// N2, N3, K, wg): up to three weights that read the same x (a layer's q, k,
// v, or gate and up) in one dispatch, y [M, N1+N2+N3] their outputs side by
// side, ceil(N1/Rows)+ceil(N2/Rows)+ceil(N3/Rows) workgroups: one dispatch
// instead of three, which matters because each dispatch costs tens of
// microseconds of IREE scheduling on a small CPU.
type Kernels struct {
	Bitcode []byte   // LLVM bitcode defining archc_mm_<format> for each format
	Formats []string // storage formats with a kernel (storage.go names)
	Rows    int64    // output columns per workgroup
	MaxK    int64    // longest row (elements) a kernel accepts
	// Variant names the instruction set the kernels were built for
	// (driver/kernels.Variants: "amx", "avx512", "avx2").
	Variant string
	// Precision is the kernels' arithmetic (driver/kernels.Precisions): "f32"
	// (exact products, f32 accumulation) or "int8" (activations quantized
	// per 32-element block, integer dot products; opt-in, not exact).
	Precision string
	// Target names the kernels' CPU requirement, for the module's readers
	// (e.g. "x86_64 avx2+fma+f16c").
	Target string
	// AMXMinM is the number of tokens (M) from which a linear layer runs on
	// the AMX entry points (0: the kernels have none): x [M, K] f32 is split
	// once into three bf16 parts laid out as tiles, s [Mp/16, K/32, 3, 16,
	// 32] bf16 (Mp = M rounded up to 32; archc_split3, ceil(Mp/16)
	// workgroups), and archc_mm_<format>x / x3 multiply s by the weights as
	// archc_mm_<format> / 3 multiply x, AMXRows output columns per
	// workgroup (driver/kernels, csrc/matmul_avx512.c: exact to an f32
	// rounding per product).
	AMXMinM int64
	// AMXRows is the AMX entry points' output columns per workgroup.
	AMXRows int64
	// PrefillBucket is the prefill chunk (tokens) a default CPU plan adds
	// for these kernels (driver.FitOptions), 0 for none: their prefill
	// GEMM decodes a layer's weights once per chunk (driver/kernels,
	// Variant.PrefillBucket). Lower does not read it.
	PrefillBucket int64
}

// amx reports whether a linear layer over m tokens runs on the AMX entry
// points.
func (k *Kernels) amx(m int64) bool { return k.AMXMinM > 0 && m >= k.AMXMinM }

// usedBy returns k with only the formats some weight of g is stored in, or
// nil when k is nil or g has no weight in a kernel's format (an f32
// checkpoint): the executable's exports and the kernels' bitcode are
// compiled into every module that carries them, so a module holds only the
// kernels it can dispatch. Weights whose storage is unknown are skipped
// here; Lower reports them.
func (k *Kernels) usedBy(g *ir.Graph, opts Options) *Kernels {
	if k == nil {
		return nil
	}
	used := map[string]bool{}
	for _, w := range g.Weights {
		if st, err := opts.storageOf(w.Name); err == nil {
			used[st.name] = true
		}
	}
	var formats []string
	for _, fm := range k.Formats {
		if used[fm] {
			formats = append(formats, fm)
		}
	}
	if len(formats) == 0 {
		return nil
	}
	u := *k
	u.Formats = formats
	return &u
}

// kernelExecutable is the symbol of the executable holding the kernels.
const kernelExecutable = "archc_kernels"

// executable returns the MLIR text of the stream.executable carrying the
// kernels: per format, the exports of used (codegen.Module.Dispatched:
// mm_, mm3_, mme_), each computing its workgroups, whose body hands the
// bindings' base pointers and offsets to the C function; "" when used has
// none. An export nothing dispatches is left out, and with it its C entry,
// which LLVM then drops from the linked bitcode: a dense model's module
// compiled the expert kernel for nothing (about a tenth of a small kernel
// module's compile).
func (k *Kernels) executable(used map[string]bool) string {
	any := used[splitExport]
	for _, fm := range k.Formats {
		any = any || used["mm_"+fm] || used["mm3_"+fm] || used["mme_"+fm]
	}
	if !any {
		return ""
	}
	var sb strings.Builder
	// The comment names the kernels' old folder (now driver/kernels): the
	// module's bytes are the compile cache's key, so renaming it would
	// recompile every cached module that links the kernels.
	fmt.Fprintf(&sb, "  // Hand-written matmul kernels (rt/kernels, variant %s, precision %s: %s), linked into the dispatches from LLVM bitcode.\n", k.Variant, k.Precision, k.Target)
	fmt.Fprintf(&sb, "  stream.executable private @%s attributes {hal.executable.objects = #hal.executable.objects<{#hal.executable.target<\"llvm-cpu\", \"embedded-elf-x86_64\"> = [#hal.executable.object<{path = \"archc_kernels.bc\", data = dense<\"0x%s\"> : vector<%dxi8>}>]}>} {\n",
		kernelExecutable, strings.ToUpper(hex.EncodeToString(k.Bitcode)), len(k.Bitcode))
	for _, fm := range k.Formats {
		if used["mm_"+fm] {
			fmt.Fprintf(&sb, "    stream.executable.export public @mm_%s workgroups(%%n: index) -> (index, index, index) {\n", fm)
			fmt.Fprintf(&sb, "      %%x = affine.apply affine_map<()[s0] -> (s0 ceildiv %d)>()[%%n]\n", k.Rows)
			sb.WriteString("      %c1 = arith.constant 1 : index\n      stream.return %x, %c1, %c1 : index, index, index\n    }\n")
		}
		if used["mm3_"+fm] {
			fmt.Fprintf(&sb, "    stream.executable.export public @mm3_%s workgroups(%%n1: index, %%n2: index, %%n3: index) -> (index, index, index) {\n", fm)
			fmt.Fprintf(&sb, "      %%x = affine.apply affine_map<()[s0, s1, s2] -> (s0 ceildiv %d + s1 ceildiv %d + s2 ceildiv %d)>()[%%n1, %%n2, %%n3]\n", k.Rows, k.Rows, k.Rows)
			sb.WriteString("      %c1 = arith.constant 1 : index\n      stream.return %x, %c1, %c1 : index, index, index\n    }\n")
		}
		if used["mme_"+fm] {
			fmt.Fprintf(&sb, "    stream.executable.export public @mme_%s workgroups(%%n: index, %%u: index) -> (index, index, index) {\n", fm)
			fmt.Fprintf(&sb, "      %%x = affine.apply affine_map<()[s0] -> (s0 ceildiv %d)>()[%%n]\n", k.Rows)
			sb.WriteString("      %c1 = arith.constant 1 : index\n      stream.return %x, %u, %c1 : index, index, index\n    }\n")
		}
	}
	k.amxExports(&sb, used)
	sb.WriteString("    builtin.module {\n")
	sig := "memref<f32>, index, memref<i8>, index, memref<f32>, index, index, index, index, index"
	sig3 := "memref<f32>, index, memref<i8>, index, memref<i8>, index, memref<i8>, index, memref<f32>, index, index, index, index, index, index, index"
	sigE := "memref<f32>, index, memref<i8>, index, memref<i32>, index, memref<i32>, index, memref<f32>, index, index, index, index, index, index, index"
	for _, fm := range k.Formats {
		if used["mm_"+fm] {
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
		if used["mm3_"+fm] {
			fmt.Fprintf(&sb, "      func.func private @archc_mm_%s3(%s) attributes {hal.import.static, llvm.bareptr = true}\n", fm, sig3)
			fmt.Fprintf(&sb, `      func.func @mm3_%s(%%bx: !stream.binding, %%bw1: !stream.binding, %%bw2: !stream.binding, %%bw3: !stream.binding, %%by: !stream.binding, %%m: index, %%n1: index, %%n2: index, %%n3: index, %%k: index, %%rb1: index, %%rb2: index, %%rb3: index) {
        %%c0 = arith.constant 0 : index
        %%wg = stream.dispatch.workgroup.id[0] : index
        %%nx = arith.muli %%m, %%k : index
        %%nw1 = arith.muli %%n1, %%rb1 : index
        %%nw2 = arith.muli %%n2, %%rb2 : index
        %%nw3 = arith.muli %%n3, %%rb3 : index
        %%n12 = arith.addi %%n1, %%n2 : index
        %%n = arith.addi %%n12, %%n3 : index
        %%ny = arith.muli %%m, %%n : index
        %%x = stream.binding.subspan %%bx[%%c0] : !stream.binding -> memref<?xf32>{%%nx}
        %%w1 = stream.binding.subspan %%bw1[%%c0] : !stream.binding -> memref<?xi8>{%%nw1}
        %%w2 = stream.binding.subspan %%bw2[%%c0] : !stream.binding -> memref<?xi8>{%%nw2}
        %%w3 = stream.binding.subspan %%bw3[%%c0] : !stream.binding -> memref<?xi8>{%%nw3}
        %%y = stream.binding.subspan %%by[%%c0] : !stream.binding -> memref<?xf32>{%%ny}
        %%xb, %%xo, %%xs, %%xt = iree_codegen.extract_strided_metadata %%x : memref<?xf32> -> memref<f32>, index, index, index
        %%w1b, %%w1o, %%w1s, %%w1t = iree_codegen.extract_strided_metadata %%w1 : memref<?xi8> -> memref<i8>, index, index, index
        %%w2b, %%w2o, %%w2s, %%w2t = iree_codegen.extract_strided_metadata %%w2 : memref<?xi8> -> memref<i8>, index, index, index
        %%w3b, %%w3o, %%w3s, %%w3t = iree_codegen.extract_strided_metadata %%w3 : memref<?xi8> -> memref<i8>, index, index, index
        %%yb, %%yo, %%ys, %%yt = iree_codegen.extract_strided_metadata %%y : memref<?xf32> -> memref<f32>, index, index, index
        func.call @archc_mm_%s3(%%xb, %%xo, %%w1b, %%w1o, %%w2b, %%w2o, %%w3b, %%w3o, %%yb, %%yo, %%m, %%n1, %%n2, %%n3, %%k, %%wg) : (%s) -> ()
        return
      }
`, fm, fm, sig3)
		}
		if used["mme_"+fm] {
			fmt.Fprintf(&sb, "      func.func private @archc_mm_%se(%s) attributes {hal.import.static, llvm.bareptr = true}\n", fm, sigE)
			fmt.Fprintf(&sb, `      func.func @mme_%s(%%bx: !stream.binding, %%bw: !stream.binding, %%bo: !stream.binding, %%bu: !stream.binding, %%by: !stream.binding, %%m: index, %%n: index, %%k: index, %%rb: index, %%e: index, %%u: index) {
        %%c0 = arith.constant 0 : index
        %%c1 = arith.constant 1 : index
        %%wg = stream.dispatch.workgroup.id[0] : index
        %%j = stream.dispatch.workgroup.id[1] : index
        %%nx = arith.muli %%m, %%k : index
        %%nr = arith.muli %%e, %%n : index
        %%nw = arith.muli %%nr, %%rb : index
        %%no = arith.addi %%e, %%c1 : index
        %%ny = arith.muli %%m, %%n : index
        %%x = stream.binding.subspan %%bx[%%c0] : !stream.binding -> memref<?xf32>{%%nx}
        %%w = stream.binding.subspan %%bw[%%c0] : !stream.binding -> memref<?xi8>{%%nw}
        %%o = stream.binding.subspan %%bo[%%c0] : !stream.binding -> memref<?xi32>{%%no}
        %%us = stream.binding.subspan %%bu[%%c0] : !stream.binding -> memref<?xi32>{%%u}
        %%y = stream.binding.subspan %%by[%%c0] : !stream.binding -> memref<?xf32>{%%ny}
        %%xb, %%xo, %%xs, %%xt = iree_codegen.extract_strided_metadata %%x : memref<?xf32> -> memref<f32>, index, index, index
        %%wb, %%wo, %%ws, %%wt = iree_codegen.extract_strided_metadata %%w : memref<?xi8> -> memref<i8>, index, index, index
        %%ob, %%oo, %%os, %%ot = iree_codegen.extract_strided_metadata %%o : memref<?xi32> -> memref<i32>, index, index, index
        %%ub, %%uo, %%uss, %%ut = iree_codegen.extract_strided_metadata %%us : memref<?xi32> -> memref<i32>, index, index, index
        %%yb, %%yo, %%ys, %%yt = iree_codegen.extract_strided_metadata %%y : memref<?xf32> -> memref<f32>, index, index, index
        func.call @archc_mm_%se(%%xb, %%xo, %%wb, %%wo, %%ob, %%oo, %%ub, %%uo, %%yb, %%yo, %%n, %%k, %%rb, %%e, %%wg, %%j) : (%s) -> ()
        return
      }
`, fm, fm, sigE)
		}
	}
	k.amxFuncs(&sb, used)
	sb.WriteString("    }\n  }")
	return sb.String()
}

// addKernels adds k's executable to m once m's functions are built,
// exporting what they dispatch (executable); nothing when k is nil or
// nothing is dispatched.
func addKernels(m *codegen.Module, k *Kernels) {
	if k == nil {
		return
	}
	if text := k.executable(m.Dispatched(kernelExecutable)); text != "" {
		m.AddExecutable(text)
	}
}

// groupedLinear returns x·Wᵀ for linear node n when n and up to two later
// linear nodes read the same input with weights of the same kernel format:
// all are computed by one grouped dispatch (mm3) when the first of them is
// lowered, and the others take their slice from f.grouped. ok is false when
// n has no such partners (the caller uses kernelLinear alone).
func (f *fn) groupedLinear(n *ir.Node, x codegen.Value) (codegen.Value, bool) {
	if y, ok := f.grouped[n]; ok {
		return y, true
	}
	st, ok := f.kernelFormat(n.Weights[0].Name, x)
	if !ok {
		return codegen.Value{}, false
	}
	group := []*ir.Node{n}
	for _, m := range f.g.Nodes[n.ID+1:] {
		if len(group) == 3 {
			break
		}
		if m.Prim != "linear" || len(m.Args) == 0 || m.Args[0] != n.Args[0] || (m.ID >= f.g.HeadStart) != (n.ID >= f.g.HeadStart) || transposedLinear(m) {
			continue
		}
		// Formats by name: storageOf returns a new *storage per call.
		if s2, ok := f.kernelFormat(m.Weights[0].Name, x); ok && s2.name == st.name {
			group = append(group, m)
		}
	}
	if len(group) == 1 {
		return codegen.Value{}, false
	}
	K := x.Type.Shape[x.Type.Rank()-1]
	M := x.Type.NumElements() / K
	x2 := f.reshape(x, M, K)
	var raws []codegen.Value
	var ns, rbs []codegen.Value
	var Ns []int64
	for _, m := range group {
		raw, _, _ := f.stored(m.Weights[0].Name)
		raws = append(raws, raw)
		Ns = append(Ns, f.shapes[m.Weights[0].Name][0])
		ns = append(ns, f.Index(Ns[len(Ns)-1]))
		rbs = append(rbs, f.Index(raw.Type.Shape[1]))
	}
	if len(group) == 2 { // the third weight is absent: 0 columns
		raws, ns, rbs = append(raws, raws[1]), append(ns, f.Index(0)), append(rbs, rbs[1])
	}
	total := Ns[0]
	for _, v := range Ns[1:] {
		total += v
	}
	export, xs, ms := "mm3_"+st.name, x2, []codegen.Value{f.Index(M)}
	if f.opts.Kernels.amx(M) {
		export, xs, ms = "mm3x_"+st.name, f.amxSplit(x2, M, K), append(ms, f.Index(amxPadded(M)))
	}
	args := append(append([]codegen.Value{xs}, raws...), ms...)
	args = append(append(append(args, ns...), f.Index(K)), rbs...)
	out := f.Dispatch(kernelExecutable, export, ns, codegen.T("f32", M, total), args...)
	var y codegen.Value
	col := int64(0)
	for i, m := range group {
		part := f.sliceDim(out, 1, col, col+Ns[i])
		col += Ns[i]
		shape := append(append([]int64{}, x.Type.Shape[:x.Type.Rank()-1]...), Ns[i])
		part = f.reshape(part, shape...)
		if i == 0 {
			y = part
		} else {
			f.grouped[m] = part
		}
	}
	return y, true
}

// transposedLinear reports whether linear node m has a Conv1D-style
// [in, out] weight (layout "transposed"), which no kernel multiplies.
func transposedLinear(m *ir.Node) bool {
	a, ok := m.Decoded.(*LinearAttrs)
	return ok && a.Layout == LinearLayoutTransposed
}

// kernelFormat returns the storage format of weight name when a kernel
// multiplies it by x [..., K] (see kernelLinear).
func (f *fn) kernelFormat(name string, x codegen.Value) (*storage, bool) {
	k := f.opts.Kernels
	if k == nil {
		return nil, false
	}
	st, err := f.opts.storageOf(name)
	if err != nil || !slices.Contains(k.Formats, st.name) {
		return nil, false
	}
	shape := f.shapes[name]
	if len(shape) != 2 {
		return nil, false
	}
	K := shape[1]
	if K > k.MaxK || K%32 != 0 || x.Type.Shape[x.Type.Rank()-1] != K {
		return nil, false
	}
	return st, true
}

// kernelLinear computes x [..., K] · Wᵀ for weight name [N, K] with the
// format's kernel, as [..., N] f32; ok is false when no kernel applies
// (no kernels, no kernel for the format, K too long), and the caller lowers
// the plain way.
func (f *fn) kernelLinear(x codegen.Value, name string) (y codegen.Value, ok bool) {
	st, ok := f.kernelFormat(name, x)
	if !ok {
		return codegen.Value{}, false
	}
	N, K := f.shapes[name][0], f.shapes[name][1]
	raw, _, _ := f.stored(name)
	M := x.Type.NumElements() / K
	x2 := f.reshape(x, M, K)
	rb := raw.Type.Shape[1]
	n := f.Index(N)
	var out codegen.Value
	if f.opts.Kernels.amx(M) {
		out = f.Dispatch(kernelExecutable, "mmx_"+st.name, []codegen.Value{n}, codegen.T("f32", M, N),
			f.amxSplit(x2, M, K), raw, f.Index(M), f.Index(amxPadded(M)), n, f.Index(K), f.Index(rb))
	} else {
		out = f.Dispatch(kernelExecutable, "mm_"+st.name, []codegen.Value{n}, codegen.T("f32", M, N),
			x2, raw, f.Index(M), n, f.Index(K), f.Index(rb))
	}
	outShape := append(append([]int64{}, x.Type.Shape[:x.Type.Rank()-1]...), N)
	return f.reshape(out, outShape...), true
}
