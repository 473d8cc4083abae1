package lower

import (
	"fmt"
	"strings"

	"github.com/archc/archc/codegen"
)

// The AMX entry points (Kernels.AMXMinM): a linear layer over M ≥ AMXMinM
// tokens splits its activations once, x [M, K] f32 → s [Mp, 3·K] i16 (bf16
// bits in the kernels' tile layout, Mp = M rounded up to 32), then
// multiplies s by each weight of the layer's group, AMXRows output columns
// per workgroup. The exports: splitExport, and per format "mmx_<format>"
// (one weight) and "mm3x_<format>" (up to three weights on one x), the AMX
// twins of "mm_" and "mm3_" with s in place of x and Mp after M.

// splitExport is the export of archc_split3.
const splitExport = "split3"

// amxPadded returns M rounded up to the 32 tokens an AMX block computes.
func amxPadded(m int64) int64 { return (m + 31) / 32 * 32 }

// amxSplit dispatches archc_split3 on x [M, K] f32: s [Mp, 3·K] i16.
func (f *fn) amxSplit(x codegen.Value, m, k int64) codegen.Value {
	mp := f.Index(amxPadded(m))
	return f.Dispatch(kernelExecutable, splitExport, []codegen.Value{mp}, codegen.T("i16", amxPadded(m), 3*k),
		x, f.Index(m), mp, f.Index(k))
}

// amxExports writes the AMX exports used dispatches (none when the kernels
// have no AMX entry points).
func (k *Kernels) amxExports(sb *strings.Builder, used map[string]bool) {
	if k.AMXMinM == 0 {
		return
	}
	if used[splitExport] {
		fmt.Fprintf(sb, "    stream.executable.export public @%s workgroups(%%mp: index) -> (index, index, index) {\n", splitExport)
		sb.WriteString("      %x = affine.apply affine_map<()[s0] -> (s0 ceildiv 16)>()[%mp]\n")
		sb.WriteString("      %c1 = arith.constant 1 : index\n      stream.return %x, %c1, %c1 : index, index, index\n    }\n")
	}
	for _, fm := range k.Formats {
		if used["mmx_"+fm] {
			fmt.Fprintf(sb, "    stream.executable.export public @mmx_%s workgroups(%%n: index) -> (index, index, index) {\n", fm)
			fmt.Fprintf(sb, "      %%x = affine.apply affine_map<()[s0] -> (s0 ceildiv %d)>()[%%n]\n", k.AMXRows)
			sb.WriteString("      %c1 = arith.constant 1 : index\n      stream.return %x, %c1, %c1 : index, index, index\n    }\n")
		}
		if used["mm3x_"+fm] {
			fmt.Fprintf(sb, "    stream.executable.export public @mm3x_%s workgroups(%%n1: index, %%n2: index, %%n3: index) -> (index, index, index) {\n", fm)
			fmt.Fprintf(sb, "      %%x = affine.apply affine_map<()[s0, s1, s2] -> (s0 ceildiv %d + s1 ceildiv %d + s2 ceildiv %d)>()[%%n1, %%n2, %%n3]\n", k.AMXRows, k.AMXRows, k.AMXRows)
			sb.WriteString("      %c1 = arith.constant 1 : index\n      stream.return %x, %c1, %c1 : index, index, index\n    }\n")
		}
	}
}

// amxFuncs writes the functions of the AMX exports used dispatches.
func (k *Kernels) amxFuncs(sb *strings.Builder, used map[string]bool) {
	if k.AMXMinM == 0 {
		return
	}
	if used[splitExport] {
		sig := "memref<f32>, index, memref<i16>, index, index, index, index"
		fmt.Fprintf(sb, "      func.func private @archc_split3(%s) attributes {hal.import.static, llvm.bareptr = true}\n", sig)
		fmt.Fprintf(sb, `      func.func @%s(%%bx: !stream.binding, %%bs: !stream.binding, %%m: index, %%mp: index, %%k: index) {
        %%c0 = arith.constant 0 : index
        %%c3 = arith.constant 3 : index
        %%wg = stream.dispatch.workgroup.id[0] : index
        %%nx = arith.muli %%m, %%k : index
        %%nk = arith.muli %%mp, %%k : index
        %%ns = arith.muli %%nk, %%c3 : index
        %%x = stream.binding.subspan %%bx[%%c0] : !stream.binding -> memref<?xf32>{%%nx}
        %%s = stream.binding.subspan %%bs[%%c0] : !stream.binding -> memref<?xi16>{%%ns}
        %%xb, %%xo, %%xs, %%xt = iree_codegen.extract_strided_metadata %%x : memref<?xf32> -> memref<f32>, index, index, index
        %%sb, %%so, %%ss, %%st = iree_codegen.extract_strided_metadata %%s : memref<?xi16> -> memref<i16>, index, index, index
        func.call @archc_split3(%%xb, %%xo, %%sb, %%so, %%m, %%k, %%wg) : (%s) -> ()
        return
      }
`, splitExport, sig)
	}
	// The split activations' binding: s [Mp, 3·K] i16.
	const sBinding = `        %c3 = arith.constant 3 : index
        %nk = arith.muli %mp, %k : index
        %nx = arith.muli %nk, %c3 : index
        %x = stream.binding.subspan %bx[%c0] : !stream.binding -> memref<?xi16>{%nx}
        %xb, %xo, %xs, %xt = iree_codegen.extract_strided_metadata %x : memref<?xi16> -> memref<i16>, index, index, index
`
	sig := "memref<i16>, index, memref<i8>, index, memref<f32>, index, index, index, index, index"
	sig3 := "memref<i16>, index, memref<i8>, index, memref<i8>, index, memref<i8>, index, memref<f32>, index, index, index, index, index, index, index"
	for _, fm := range k.Formats {
		if used["mmx_"+fm] {
			fmt.Fprintf(sb, "      func.func private @archc_mm_%sx(%s) attributes {hal.import.static, llvm.bareptr = true}\n", fm, sig)
			fmt.Fprintf(sb, `      func.func @mmx_%s(%%bx: !stream.binding, %%bw: !stream.binding, %%by: !stream.binding, %%m: index, %%mp: index, %%n: index, %%k: index, %%rb: index) {
        %%c0 = arith.constant 0 : index
        %%wg = stream.dispatch.workgroup.id[0] : index
%s        %%nw = arith.muli %%n, %%rb : index
        %%ny = arith.muli %%m, %%n : index
        %%w = stream.binding.subspan %%bw[%%c0] : !stream.binding -> memref<?xi8>{%%nw}
        %%y = stream.binding.subspan %%by[%%c0] : !stream.binding -> memref<?xf32>{%%ny}
        %%wb, %%wo, %%ws, %%wt = iree_codegen.extract_strided_metadata %%w : memref<?xi8> -> memref<i8>, index, index, index
        %%yb, %%yo, %%ys, %%yt = iree_codegen.extract_strided_metadata %%y : memref<?xf32> -> memref<f32>, index, index, index
        func.call @archc_mm_%sx(%%xb, %%xo, %%wb, %%wo, %%yb, %%yo, %%m, %%n, %%k, %%wg) : (%s) -> ()
        return
      }
`, fm, sBinding, fm, sig)
		}
		if used["mm3x_"+fm] {
			fmt.Fprintf(sb, "      func.func private @archc_mm_%sx3(%s) attributes {hal.import.static, llvm.bareptr = true}\n", fm, sig3)
			fmt.Fprintf(sb, `      func.func @mm3x_%s(%%bx: !stream.binding, %%bw1: !stream.binding, %%bw2: !stream.binding, %%bw3: !stream.binding, %%by: !stream.binding, %%m: index, %%mp: index, %%n1: index, %%n2: index, %%n3: index, %%k: index, %%rb1: index, %%rb2: index, %%rb3: index) {
        %%c0 = arith.constant 0 : index
        %%wg = stream.dispatch.workgroup.id[0] : index
%s        %%nw1 = arith.muli %%n1, %%rb1 : index
        %%nw2 = arith.muli %%n2, %%rb2 : index
        %%nw3 = arith.muli %%n3, %%rb3 : index
        %%n12 = arith.addi %%n1, %%n2 : index
        %%n = arith.addi %%n12, %%n3 : index
        %%ny = arith.muli %%m, %%n : index
        %%w1 = stream.binding.subspan %%bw1[%%c0] : !stream.binding -> memref<?xi8>{%%nw1}
        %%w2 = stream.binding.subspan %%bw2[%%c0] : !stream.binding -> memref<?xi8>{%%nw2}
        %%w3 = stream.binding.subspan %%bw3[%%c0] : !stream.binding -> memref<?xi8>{%%nw3}
        %%y = stream.binding.subspan %%by[%%c0] : !stream.binding -> memref<?xf32>{%%ny}
        %%w1b, %%w1o, %%w1s, %%w1t = iree_codegen.extract_strided_metadata %%w1 : memref<?xi8> -> memref<i8>, index, index, index
        %%w2b, %%w2o, %%w2s, %%w2t = iree_codegen.extract_strided_metadata %%w2 : memref<?xi8> -> memref<i8>, index, index, index
        %%w3b, %%w3o, %%w3s, %%w3t = iree_codegen.extract_strided_metadata %%w3 : memref<?xi8> -> memref<i8>, index, index, index
        %%yb, %%yo, %%ys, %%yt = iree_codegen.extract_strided_metadata %%y : memref<?xf32> -> memref<f32>, index, index, index
        func.call @archc_mm_%sx3(%%xb, %%xo, %%w1b, %%w1o, %%w2b, %%w2o, %%w3b, %%w3o, %%yb, %%yo, %%m, %%n1, %%n2, %%n3, %%k, %%wg) : (%s) -> ()
        return
      }
`, fm, sBinding, fm, sig3)
		}
	}
}
