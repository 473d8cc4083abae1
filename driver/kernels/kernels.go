// Package kernels builds archc's hand-written CPU matmul kernels (y =
// x·Wᵀ with W in its stored GGUF block format or f16/bf16, f32 activations
// and accumulation) into LLVM bitcode (Object), which the compiler embeds
// in the compiled module as IREE custom dispatches (driver.Kernels makes it
// a lower.Kernels; this package links none of the compiler).
//
// The kernels come in variants, one per x86 instruction set and precision
// (Variants): csrc/matmul_avx512.c (AVX-512 F/BW/VL/DQ; built with
// ARCHC_AMX it is the "amx" variant, whose prefill runs on the AMX tile
// unit with an exact three-way bf16 split of both operands) and
// csrc/matmul_avx2.c (AVX2, FMA, F16C), with the same ABI and numerics
// (precision "f32": exact products, f32 accumulation), and
// csrc/matmul_avx512_vnni.c (precision "int8", AVX-512 VNNI: activations
// quantized per 32-element block as llama.cpp's Q8_0, int8 dot products;
// opt-in, not exact). Select picks the best one
// this CPU runs (golang.org/x/sys/cpu), or the one asked for by name, and
// Build compiles only that one, so the module holds the kernels of one
// instruction set, for this host (the variant's bitcode is in the module's
// MLIR, so the compile cache keys on it).
//
// The C compiler is zig's clang (`zig cc`, PyPI package ziglang, installed
// into the project venv by scripts/setup.sh): it emits bitcode that IREE's
// LLVM reads. Bitcode is cached under the cache folder by a hash of the
// source, the flags and the compiler version.
//
// On a CPU no variant supports, Select returns nil and every weight goes
// through the plain lowering (decode in the graph, IREE's own matmul),
// which is also the numeric reference the kernels are tested against.
package kernels

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/archc/archc/formats/ireetool"

	"golang.org/x/sys/cpu"
)

var (
	//go:embed csrc/matmul_avx2.c
	sourceAVX2 []byte
	//go:embed csrc/matmul_avx512.c
	sourceAVX512 []byte
	//go:embed csrc/matmul_avx512_vnni.c
	sourceAVX512VNNI []byte
	//go:embed csrc/entries.h
	sourceEntries []byte
)

// Rows is the number of output columns one workgroup computes (a
// variant's default; Variant.Rows overrides it); MaxK the longest weight
// row (elements) a kernel takes. Both are compiled into the C source
// (-DARCHC_ROWS, -DARCHC_MAX_K).
const (
	Rows = 32
	MaxK = 32768
)

// The AMX variant's prefill shape (csrc/matmul_avx512.c, ARCHC_AMX): from
// AMXMinM tokens a linear layer splits its activations once (archc_split3)
// and multiplies on the tile unit, AMXRows output columns per workgroup (a
// workgroup decodes its weight rows once for every token, so more rows
// read the split activations fewer times; 64 measured 1.1-1.2x faster than
// 32 on 480 tokens of a 2048-wide Q4_0 layer, one thread of a Sapphire
// Rapids-class host, and 128 no faster). Below AMXMinM tokens the AVX-512
// kernels run: at 32 tokens the tile path was no faster (both about 47
// GMAC/s), at 64 1.1-1.3x, at 480 2x (43-46 against 84-91 GMAC/s).
const (
	AMXMinM = 48
	AMXRows = 64
)

// LongPrefill is the prefill chunk a default CPU plan adds (in tokens,
// within the KV-cache length) for the variants whose prefill is a GEMM that
// decodes a layer's weights once per chunk, so that a longer chunk spreads
// the decoding over more tokens: the AMX tile path (a 2048-wide Q4_0 layer,
// one thread of a Sapphire Rapids-class host: 77 GMAC/s at 64 tokens, 94
// at 128, 97 at 256) and the AVX-512 builds' f32 and int8 GEMMs (a 2-core
// Zen 4, 2 threads, a Llama-3.2-1B-shaped Q4_0 GGUF, 480-token prompt,
// alternated runs: 75.4 -> 80.5 tok/s exact and 158 -> 168 int8, for one
// more entry point: 13 s more of the model's first compile). The AVX2
// build was not measured and keeps the defaults.
const LongPrefill = 256

// Formats are the storage formats (lower's names) with a kernel, in every
// variant.
var Formats = []string{"bf16", "f16", "q4_0", "q4_1", "q4_k", "q5_0", "q5_1", "q5_k", "q6_k", "q8_0"}

// None is the name that asks for no kernels (Select returns nil): every
// weight goes through the plain lowering.
const None = "none"

// The precisions of the kernels' arithmetic (--precision).
const (
	// F32 keeps activations f32: every product exact, f32 accumulation,
	// only the summation order differs from the plain lowering (the
	// default, token-exact against the fp32 oracle).
	F32 = "f32"
	// Int8 quantizes the activations per 32-element block to int8 (as
	// llama.cpp's CPU backend does) for the block-quantized formats and
	// sums integer products (vpdpbusd); f16 and bf16 weights stay F32.
	Int8 = "int8"
)

// Precisions are the names of the precisions, the default first.
var Precisions = []string{F32, Int8}

// Variant is one instruction set's build of the kernels at one precision.
type Variant struct {
	Name      string // "amx", "avx512", "avx2": the --kernels name
	Precision string // F32 or Int8
	// Rows overrides the package's Rows for this variant (0: Rows). The
	// int8 build quantizes a workgroup's activations in each workgroup, so
	// wider workgroups quantize less often: 64 rows took Gemma-3-270M's
	// 64-token prefill from 134 to 115 ms on a 2-core Zen 5, and 128 (with
	// the int8 GEMM, csrc/matmul_avx512_vnni.c) 2048 rows of K=2048 from 88
	// to 104 GMAC/s at 64 tokens on a 2-core Zen 4, one thread, 1.05x at
	// one token.
	Rows int64
	// AMXMinM is the number of tokens (rows of x) from which the variant's
	// AMX entry points multiply (0: it has none); see Object.AMXMinM.
	AMXMinM int64
	// PrefillBucket is the prefill chunk (tokens) a default CPU plan adds
	// for the variant (0: none; LongPrefill or none).
	PrefillBucket int64
	Desc          string   // CPU requirement, e.g. "x86_64 avx2+fma+f16c"
	Flags         []string // clang target flags
	// Needs lists the CPU features the variant needs, each with its name
	// (for errors) and whether this CPU has it.
	Needs  func() []Feature
	source []byte
	file   string
	// includes are the other sources the file #includes, by name.
	includes map[string][]byte
}

// Feature is a CPU feature a variant needs.
type Feature struct {
	Name string
	Has  bool
}

// Variants are the kernel builds, best first: Select's default is the first
// this CPU runs at the precision asked for.
var Variants = []*Variant{
	{Name: "amx", Precision: F32, AMXMinM: AMXMinM, PrefillBucket: LongPrefill, Desc: "x86_64 avx512f+bw+vl+dq+bf16+fma+f16c, amx-tile+amx-bf16",
		Flags: []string{"-target", "x86_64-freestanding", "-mavx2", "-mfma", "-mf16c", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq",
			"-mavx512bf16", "-mamx-tile", "-mamx-bf16", "-DARCHC_AMX=1", fmt.Sprintf("-DAMX_ROWS_WG=%d", AMXRows)},
		Needs: func() []Feature {
			return []Feature{{"AVX-512 F", cpu.X86.HasAVX512F}, {"AVX-512 BW", cpu.X86.HasAVX512BW}, {"AVX-512 VL", cpu.X86.HasAVX512VL},
				{"AVX-512 DQ", cpu.X86.HasAVX512DQ}, {"AVX-512 BF16", cpu.X86.HasAVX512BF16}, {"FMA", cpu.X86.HasFMA}, {"F16C", cpu.X86.HasF16C},
				{"AMX-TILE", cpu.X86.HasAMXTile}, {"AMX-BF16", cpu.X86.HasAMXBF16},
				// Asked only where the CPU has AMX (else AMX-TILE says why).
				{"Linux's permission to use AMX tile data (arch_prctl ARCH_REQ_XCOMP_PERM: Linux 5.16 or later)", !cpu.X86.HasAMXTile || amxPermitted()}}
		},
		source: sourceAVX512, file: "matmul_avx512.c", includes: map[string][]byte{"entries.h": sourceEntries}},
	{Name: "avx512", Precision: F32, PrefillBucket: LongPrefill, Desc: "x86_64 avx512f+bw+vl+dq+fma+f16c",
		Flags: []string{"-target", "x86_64-freestanding", "-mavx2", "-mfma", "-mf16c", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq"},
		Needs: func() []Feature {
			return []Feature{{"AVX-512 F", cpu.X86.HasAVX512F}, {"AVX-512 BW", cpu.X86.HasAVX512BW}, {"AVX-512 VL", cpu.X86.HasAVX512VL},
				{"AVX-512 DQ", cpu.X86.HasAVX512DQ}, {"FMA", cpu.X86.HasFMA}, {"F16C", cpu.X86.HasF16C}}
		},
		source: sourceAVX512, file: "matmul_avx512.c", includes: map[string][]byte{"entries.h": sourceEntries}},
	{Name: "avx2", Precision: F32, Desc: "x86_64 avx2+fma+f16c",
		Flags: []string{"-target", "x86_64-freestanding", "-mavx2", "-mfma", "-mf16c"},
		Needs: func() []Feature {
			return []Feature{{"AVX2", cpu.X86.HasAVX2}, {"FMA", cpu.X86.HasFMA}, {"F16C", cpu.X86.HasF16C}}
		},
		source: sourceAVX2, file: "matmul_avx2.c", includes: map[string][]byte{"entries.h": sourceEntries}},
	{Name: "avx512", Precision: Int8, Rows: 128, PrefillBucket: LongPrefill, Desc: "x86_64 avx512f+bw+vl+dq+vnni+fma+f16c",
		Flags: []string{"-target", "x86_64-freestanding", "-mavx2", "-mfma", "-mf16c", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx512vnni"},
		Needs: func() []Feature {
			return []Feature{{"AVX-512 F", cpu.X86.HasAVX512F}, {"AVX-512 BW", cpu.X86.HasAVX512BW}, {"AVX-512 VL", cpu.X86.HasAVX512VL},
				{"AVX-512 DQ", cpu.X86.HasAVX512DQ}, {"AVX-512 VNNI", cpu.X86.HasAVX512VNNI}, {"FMA", cpu.X86.HasFMA}, {"F16C", cpu.X86.HasF16C}}
		},
		source: sourceAVX512VNNI, file: "matmul_avx512_vnni.c", includes: map[string][]byte{"matmul_avx512.c": sourceAVX512, "entries.h": sourceEntries}},
}

// rows is the variant's output columns per workgroup.
func (v *Variant) rows() int64 {
	if v.Rows > 0 {
		return v.Rows
	}
	return Rows
}

// Names are the names Select takes: "auto", every variant's, and "none".
func Names() []string {
	out := []string{"auto"}
	for _, v := range Variants {
		if !slices.Contains(out, v.Name) {
			out = append(out, v.Name)
		}
	}
	return append(out, None)
}

// Supported reports whether this CPU runs the variant, and if not, why
// (naming the missing features).
func (v *Variant) Supported() (bool, string) {
	if runtime.GOARCH != "amd64" {
		return false, fmt.Sprintf("the %s kernels are x86-64 only (this is %s)", v.Name, runtime.GOARCH)
	}
	var missing []string
	for _, f := range v.Needs() {
		if !f.Has {
			missing = append(missing, f.Name)
		}
	}
	if len(missing) > 0 {
		return false, fmt.Sprintf("this CPU lacks %s, which the %s kernels need", strings.Join(missing, ", "), v)
	}
	return true, ""
}

// String names the variant: "avx512", or "avx512 int8" off the default
// precision.
func (v *Variant) String() string {
	if v.Precision == F32 || v.Precision == "" {
		return v.Name
	}
	return v.Name + " " + v.Precision
}

// Lookup returns the variant called name at precision ("" is F32), or nil.
func Lookup(name, precision string) *Variant {
	if precision == "" {
		precision = F32
	}
	for _, v := range Variants {
		if v.Name == name && v.Precision == precision {
			return v
		}
	}
	return nil
}

// Select returns the variant to build for name at precision ("" is F32):
// "" or "auto" the best this CPU runs at that precision (nil at F32 if it
// runs none: the plain lowering), "none" nil at F32, a variant's name that
// variant. Errors: an unknown name or precision (listing Names or
// Precisions); a variant this CPU cannot run (naming the missing
// features); Int8 with "none", with a variant that has no int8 build, or
// on a CPU that runs no int8 variant (the plain lowering is f32).
func Select(name, precision string) (*Variant, error) {
	if precision == "" {
		precision = F32
	}
	if !slices.Contains(Precisions, precision) {
		return nil, fmt.Errorf("precision %q: unknown; give one of %s", precision, strings.Join(Precisions, ", "))
	}
	switch name {
	case "", "auto":
		var whys []string
		for _, v := range Variants {
			if v.Precision != precision {
				continue
			}
			ok, why := v.Supported()
			if ok {
				return v, nil
			}
			whys = append(whys, why)
		}
		if precision == F32 {
			return nil, nil
		}
		return nil, fmt.Errorf("precision %s: no kernels of that precision run here: %s (leave --precision at %s)", precision, strings.Join(whys, "; "), F32)
	case None:
		if precision != F32 {
			return nil, fmt.Errorf("precision %s needs archc's kernels; kernels none is the plain lowering, which is %s only", precision, F32)
		}
		return nil, nil
	}
	if !slices.Contains(Names(), name) {
		return nil, fmt.Errorf("kernels %q: unknown; give one of %s", name, strings.Join(Names(), ", "))
	}
	v := Lookup(name, precision)
	if v == nil {
		var have []string
		for _, c := range Variants {
			if c.Precision == precision {
				have = append(have, c.Name)
			}
		}
		return nil, fmt.Errorf("kernels %s: no %s build; at precision %s give one of %s", name, precision, precision, strings.Join(append([]string{"auto"}, have...), ", "))
	}
	if ok, why := v.Supported(); !ok {
		return nil, fmt.Errorf("kernels %s: %s (give auto, or none for the plain lowering)", v, why)
	}
	return v, nil
}

// Supported reports whether this CPU runs some variant, and if not, why.
func Supported() (bool, string) {
	var whys []string
	for _, v := range Variants {
		ok, why := v.Supported()
		if ok {
			return true, ""
		}
		whys = append(whys, why)
	}
	return false, strings.Join(whys, "; ")
}

// ErrNoCompiler means zig (the kernels' C compiler) is not installed.
var ErrNoCompiler = errors.New("kernels: zig not found in the IREE venv: run scripts/setup.sh (it installs the PyPI package ziglang), or leave archc's matmul kernels out with --kernels none")

// Object is the built kernels and what a lowering needs to call them; its
// fields are lower.Kernels' (a conversion between the two is exact).
type Object struct {
	Bitcode []byte   // LLVM bitcode defining archc_mm_<format> for each format
	Formats []string // storage formats with a kernel (formats names)
	Rows    int64    // output columns per workgroup
	MaxK    int64    // longest row (elements) a kernel accepts
	// Variant names the instruction set the kernels were built for
	// (Variants: "amx", "avx512", "avx2").
	Variant string
	// Precision is the variant's arithmetic (F32, Int8).
	Precision string
	// Target names the kernels' CPU requirement, for the module's readers
	// (e.g. "x86_64 avx2+fma+f16c").
	Target string
	// AMXMinM is the number of tokens from which a linear layer runs on the
	// AMX entry points (archc_split3, then archc_mm_<format>x or x3, AMXRows
	// columns per workgroup); 0 when the variant has none.
	AMXMinM int64
	// AMXRows is the AMX entry points' output columns per workgroup.
	AMXRows int64
	// PrefillBucket is the variant's Variant.PrefillBucket.
	PrefillBucket int64
}

// Build returns the kernels of the best variant this CPU runs (Select("")),
// compiling them on first use (cached under cacheDir/kernels); nil, nil on a
// CPU no variant supports. See BuildVariant.
func Build(ctx context.Context, cacheDir string) (*Object, error) {
	v, err := Select("", F32)
	if err != nil || v == nil {
		return nil, err
	}
	return BuildVariant(ctx, cacheDir, v)
}

// BuildVariant returns variant v's kernels, compiling them on first use
// (cached under cacheDir/kernels). The caller checks that the CPU runs v
// (Select does). Errors: no compiler (ErrNoCompiler), a compile failure
// (with the compiler's first lines), an unwritable cache, or ctx ending.
func BuildVariant(ctx context.Context, cacheDir string, v *Variant) (*Object, error) {
	zig, err := findZig()
	if err != nil {
		return nil, err
	}
	ver, err := exec.CommandContext(ctx, zig, "version").Output()
	if err != nil {
		return nil, fmt.Errorf("kernels: %s version: %v: reinstall with scripts/setup.sh", zig, err)
	}
	flags := append(append([]string{}, v.Flags...), "-O3", "-g0", "-ffreestanding", "-fno-stack-protector", "-fPIC",
		fmt.Sprintf("-DARCHC_ROWS=%d", v.rows()), fmt.Sprintf("-DARCHC_MAX_K=%d", MaxK))
	h := sha256.New()
	parts := [][]byte{[]byte("archc-kernels-3"), []byte(v.Name), []byte(v.Precision), ver, []byte(strings.Join(flags, "\x00")), v.source}
	for _, name := range slices.Sorted(maps.Keys(v.includes)) {
		parts = append(parts, []byte(name), v.includes[name])
	}
	for _, part := range parts {
		h.Write(part)
		h.Write([]byte{0})
	}
	dir := filepath.Join(cacheDir, "kernels")
	out := filepath.Join(dir, hex.EncodeToString(h.Sum(nil))[:32]+".bc")
	bc, err := os.ReadFile(out)
	if err != nil {
		if bc, err = compile(ctx, zig, flags, v, dir, out); err != nil {
			return nil, err
		}
	}
	obj := &Object{Bitcode: bc, Formats: Formats, Rows: v.rows(), MaxK: MaxK, Variant: v.Name, Precision: v.Precision, Target: v.Desc, PrefillBucket: v.PrefillBucket}
	if v.AMXMinM > 0 {
		obj.AMXMinM, obj.AMXRows = v.AMXMinM, AMXRows
	}
	return obj, nil
}

// compile runs zig cc on the embedded source and installs the bitcode at
// out atomically.
func compile(ctx context.Context, zig string, flags []string, v *Variant, dir, out string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("kernels: cannot create %s: %v", dir, err)
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return nil, fmt.Errorf("kernels: cannot write to %s: %v", dir, err)
	}
	defer os.RemoveAll(tmp)
	for name, src := range v.includes {
		if err := os.WriteFile(filepath.Join(tmp, name), src, 0o644); err != nil {
			return nil, fmt.Errorf("kernels: %v", err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, v.file), v.source, 0o644); err != nil {
		return nil, fmt.Errorf("kernels: %v", err)
	}
	bcPath := filepath.Join(tmp, "kernels.bc")
	// Relative paths from inside the build folder: the bitcode records its
	// source's name (source_filename), and a temp folder's name would make
	// two builds of one variant differ, and with them the modules' cache keys.
	args := append(append([]string{"cc"}, flags...), "-c", "-emit-llvm", v.file, "-o", "kernels.bc")
	cmd := exec.CommandContext(ctx, zig, args...)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "ZIG_GLOBAL_CACHE_DIR="+filepath.Join(dir, "zig-cache"), "ZIG_LOCAL_CACHE_DIR="+filepath.Join(dir, "zig-cache"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("kernels: compile stopped: %v", context.Cause(ctx))
		}
		return nil, fmt.Errorf("kernels: zig cc failed (%v): %s", err, strings.TrimSpace(stderr.String()))
	}
	bc, err := os.ReadFile(bcPath)
	if err != nil {
		return nil, fmt.Errorf("kernels: %v", err)
	}
	if err := os.Rename(bcPath, out); err != nil {
		return nil, fmt.Errorf("kernels: cannot install %s: %v", out, err)
	}
	return bc, nil
}

// findZig returns the zig executable of the ziglang package in the IREE
// venv (ARCHC_ZIG overrides it).
func findZig() (string, error) {
	if z := os.Getenv("ARCHC_ZIG"); z != "" {
		return z, nil
	}
	venv, err := ireetool.FindVenv()
	if err != nil {
		// The kernels need the venv's zig, not IREE: say so, and how to
		// go without them (archc emit works without a venv then).
		return "", fmt.Errorf("kernels: archc's matmul kernels are compiled with zig from the IREE venv (PyPI ziglang), which is missing; leave them out with --kernels none, or set it up [%w]", err)
	}
	matches, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages", "ziglang", "zig"))
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.Mode()&0o111 != 0 {
			return m, nil
		}
	}
	return "", ErrNoCompiler
}
