// Package kernels builds archc's hand-written CPU matmul kernels
// (csrc/matmul_avx2.c: y = x·Wᵀ with W in its stored GGUF block format or
// f16/bf16, f32 activations and accumulation) into LLVM bitcode (Object),
// which the compiler embeds in the compiled module as IREE custom
// dispatches (driver.Kernels makes it a lower.Kernels; this package links
// none of the compiler).
//
// The C compiler is zig's clang (`zig cc`, PyPI package ziglang, installed
// into the project venv by scripts/setup.sh): it emits bitcode that IREE's
// LLVM reads. Bitcode is cached under the cache folder by a hash of the
// source, the flags and the compiler version.
//
// The kernels need an x86-64 CPU with AVX2, FMA and F16C. On any other CPU
// Build returns no kernels and every weight goes through the plain lowering
// (decode in the graph, IREE's own matmul), which is also the numeric
// reference the kernels are tested against.
package kernels

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/archc/archc/rt/ireetool"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"
)

//go:embed csrc/matmul_avx2.c
var source []byte

// Rows is the number of output columns one workgroup computes; MaxK the
// longest weight row (elements) a kernel takes. Both are compiled into the
// C source (-DARCHC_ROWS, -DARCHC_MAX_K).
const (
	Rows = 32
	MaxK = 32768
)

// Formats are the storage formats (lower's names) with a kernel.
var Formats = []string{"bf16", "f16", "q4_0", "q4_1", "q4_k", "q5_0", "q5_1", "q5_k", "q6_k", "q8_0"}

// target is the CPU requirement, as clang flags and as a description.
var (
	targetFlags = []string{"-target", "x86_64-freestanding", "-mavx2", "-mfma", "-mf16c"}
	targetDesc  = "x86_64 avx2+fma+f16c"
)

// Supported reports whether this CPU runs the kernels, and if not, why.
func Supported() (bool, string) {
	if runtime.GOARCH != "amd64" {
		return false, fmt.Sprintf("the kernels are x86-64 only (this is %s)", runtime.GOARCH)
	}
	if !cpu.X86.HasAVX2 || !cpu.X86.HasFMA || !cpu.X86.HasF16C {
		return false, "this CPU lacks AVX2, FMA or F16C"
	}
	return true, ""
}

// ErrNoCompiler means zig (the kernels' C compiler) is not installed.
var ErrNoCompiler = errors.New("kernels: zig not found in the IREE venv: run scripts/setup.sh (it installs the PyPI package ziglang)")

// Object is the built kernels and what a lowering needs to call them; its
// fields are lower.Kernels' (a conversion between the two is exact).
type Object struct {
	Bitcode []byte   // LLVM bitcode defining archc_mm_<format> for each format
	Formats []string // storage formats with a kernel (rt/formats names)
	Rows    int64    // output columns per workgroup
	MaxK    int64    // longest row (elements) a kernel accepts
	// Target names the kernels' CPU requirement, for the module's readers
	// (e.g. "x86_64 avx2+fma+f16c").
	Target string
}

// Build returns the kernels for this CPU, compiling them on first use
// (cached under cacheDir/kernels). It returns nil, nil on a CPU the kernels
// do not support (see Supported). Errors: no compiler (ErrNoCompiler), a
// compile failure (with the compiler's first lines), an unwritable cache,
// or ctx ending.
func Build(ctx context.Context, cacheDir string) (*Object, error) {
	if ok, _ := Supported(); !ok {
		return nil, nil
	}
	zig, err := findZig()
	if err != nil {
		return nil, err
	}
	ver, err := exec.CommandContext(ctx, zig, "version").Output()
	if err != nil {
		return nil, fmt.Errorf("kernels: %s version: %v: reinstall with scripts/setup.sh", zig, err)
	}
	flags := append(append([]string{}, targetFlags...), "-O3", "-g0", "-ffreestanding", "-fno-stack-protector", "-fPIC",
		fmt.Sprintf("-DARCHC_ROWS=%d", Rows), fmt.Sprintf("-DARCHC_MAX_K=%d", MaxK))
	h := sha256.New()
	for _, part := range [][]byte{[]byte("archc-kernels-1"), ver, []byte(strings.Join(flags, "\x00")), source} {
		h.Write(part)
		h.Write([]byte{0})
	}
	dir := filepath.Join(cacheDir, "kernels")
	out := filepath.Join(dir, hex.EncodeToString(h.Sum(nil))[:32]+".bc")
	bc, err := os.ReadFile(out)
	if err != nil {
		if bc, err = compile(ctx, zig, flags, dir, out); err != nil {
			return nil, err
		}
	}
	return &Object{Bitcode: bc, Formats: Formats, Rows: Rows, MaxK: MaxK, Target: targetDesc}, nil
}

// compile runs zig cc on the embedded source and installs the bitcode at
// out atomically.
func compile(ctx context.Context, zig string, flags []string, dir, out string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("kernels: cannot create %s: %v", dir, err)
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return nil, fmt.Errorf("kernels: cannot write to %s: %v", dir, err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "matmul_avx2.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return nil, fmt.Errorf("kernels: %v", err)
	}
	bcPath := filepath.Join(tmp, "kernels.bc")
	args := append(append([]string{"cc"}, flags...), "-c", "-emit-llvm", src, "-o", bcPath)
	cmd := exec.CommandContext(ctx, zig, args...)
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
		return "", err
	}
	matches, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages", "ziglang", "zig"))
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.Mode()&0o111 != 0 {
			return m, nil
		}
	}
	return "", ErrNoCompiler
}
