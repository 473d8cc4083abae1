package ireetool

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// CompileOptions configures Compile. The zero value is ready to use.
type CompileOptions struct {
	// CacheDir holds compiled modules; "" means $XDG_CACHE_HOME/archc, or
	// ~/.cache/archc.
	CacheDir string
	// Target names the compile target (LookupTarget: "llvm-cpu", "cuda",
	// "hip", "vulkan", or a device of one); "" is llvm-cpu.
	Target string
	// Flags replaces the target's flags when non-nil (input and output
	// flags are added by Compile).
	Flags []string
	// Compiler is the iree-compile executable; "" means the one in the
	// venv FindVenv returns.
	Compiler string
}

// Compile compiles StableHLO MLIR text to an IREE module (.vmfb) and
// returns its path in the cache. cached is true when an identical earlier
// compile was reused; the cache key is the SHA-256 of the MLIR, the
// `iree-compile --version` output, the target (for a target built for the
// host CPU, Target.HostKeyed, the host CPU description) and the flags.
// The file is written atomically, and callers (in this process or
// another) compiling the same key at once run one iree-compile: the others
// wait for it and get its module with cached true.
// Errors: no compiler (ErrNotFound), an unwritable cache dir, ctx ending,
// or a compile failure whose message holds the compiler's first diagnostic
// lines.
func Compile(ctx context.Context, mlir []byte, opts CompileOptions) (vmfbPath string, cached bool, err error) {
	target, err := LookupTarget(opts.Target)
	if err != nil {
		return "", false, fmt.Errorf("iree-compile: %w", err)
	}
	compiler, err := compilerPath(opts.Compiler)
	if err != nil {
		return "", false, err
	}
	version, err := compilerVersion(compiler)
	if err != nil {
		return "", false, err
	}
	flags := opts.Flags
	if flags == nil {
		flags = target.Flags
	}
	dir := opts.CacheDir
	if dir == "" {
		if dir, err = DefaultCacheDir(); err != nil {
			return "", false, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, fmt.Errorf("iree-compile: cannot create cache dir (%v): set CompileOptions.CacheDir or XDG_CACHE_HOME to a writable folder", err)
	}

	// The llvm-cpu key is the one archc has always used (existing caches
	// stay valid); other targets key on their name instead of the host.
	machine := "target=" + target.Name
	if target.HostKeyed {
		machine = hostCPU()
	}
	h := sha256.New()
	for _, part := range []string{"archc-vmfb-1", version, machine, strings.Join(flags, "\x00")} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write(mlir)
	out := filepath.Join(dir, hex.EncodeToString(h.Sum(nil))+".vmfb")
	if _, err := os.Stat(out); err == nil {
		return out, true, nil
	}
	// One compile per key at a time, across processes: a second caller
	// waits and then takes the first's module. The lock file goes away
	// after the rename, before the unlock, so a caller that locks it later
	// finds the module (a stale lock file only costs a duplicate compile).
	lock := out + ".lock"
	unlock, err := lockKey(ctx, lock)
	if err != nil {
		return "", false, fmt.Errorf("iree-compile: cannot lock %s (%v): check %s", lock, err, dir)
	}
	defer func() { os.Remove(lock); unlock() }()
	if _, err := os.Stat(out); err == nil {
		return out, true, nil
	}

	tmp, err := os.CreateTemp(dir, filepath.Base(out)+".*.tmp")
	if err != nil {
		return "", false, fmt.Errorf("iree-compile: cannot write to cache dir (%v): set CompileOptions.CacheDir to a writable folder", err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // no-op after the rename

	args := append([]string{}, flags...)
	if os.Getenv(SerialCompileEnv) != "" {
		args = append(args, "--mlir-disable-threading")
	}
	args = append(args, "-", "-o", tmp.Name())
	cmd := exec.CommandContext(ctx, compiler, args...)
	cmd.Stdin = bytes.NewReader(mlir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	began := time.Now()
	err = cmd.Run()
	logCompile(began, cmd.ProcessState, mlir, target.Name, err)
	if err != nil {
		if ctx.Err() != nil {
			return "", false, fmt.Errorf("iree-compile: stopped because the context ended (%v)", context.Cause(ctx))
		}
		return "", false, fmt.Errorf("iree-compile failed (%v): %s", err, firstLines(stderr.String(), 12))
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", false, fmt.Errorf("iree-compile: cannot move the module into the cache (%v): check %s", err, dir)
	}
	return out, false, nil
}

// SerialCompileEnv names the environment variable that, when set (to any
// value), runs each iree-compile on one thread (--mlir-disable-threading).
// The module is the same byte for byte, so the flag is not in the cache
// key. One compile alone finishes sooner threaded, but where compiles
// already fill the cores, as in scripts/test.sh, threads only add work:
// measured 2026-12-07 (Intel Xeon 2-core VM, IREE 3.13.0), a module took
// 4-9 % less CPU on one thread (a small fixture's 5.2 s against 4.7), and
// three streams of compiles on the 2 cores finished in 41-47 s serial
// against 44-50 s threaded. scripts/test.sh sets it.
const SerialCompileEnv = "ARCHC_COMPILE_SERIAL"

// CompileLogEnv names the environment variable that, when set to a file
// path, makes Compile append one line per iree-compile it runs (cache hits
// are not logged): start time (RFC 3339), wall seconds, target, MLIR bytes,
// the module's name and its entry points, "ok" or "failed", the program
// that ran it (golden.test: the golden package's tests) and iree-compile's
// CPU seconds.
// .ci/run sets it and prints the totals, so a CI run says what its cold
// compiles cost. Errors writing the log are ignored: it is a diagnostic.
const CompileLogEnv = "ARCHC_COMPILE_LOG"

// logCompile appends Compile's log line (CompileLogEnv) for one compile.
// Its fields: start (RFC 3339), wall seconds, target, MLIR bytes, module,
// entry points (comma-separated), status, program, and CPU seconds (user +
// system of iree-compile; wall seconds overstate a compile's cost when
// compiles share the cores, CPU seconds do not).
func logCompile(began time.Time, ps *os.ProcessState, mlir []byte, target string, err error) {
	path := os.Getenv(CompileLogEnv)
	if path == "" {
		return
	}
	name, funcs := "?", []string{}
	for line := range strings.Lines(string(mlir)) {
		t := strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(t, "module @"); ok && name == "?" {
			name, _, _ = strings.Cut(rest, " ")
		} else if rest, ok := strings.CutPrefix(t, "func.func @"); ok {
			fn, _, _ := strings.Cut(rest, "(")
			funcs = append(funcs, fn)
		}
	}
	if len(funcs) == 0 {
		funcs = append(funcs, "-") // keeps the fields apart
	}
	status := "ok"
	if err != nil {
		status = "failed"
	}
	f, ferr := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if ferr != nil {
		return
	}
	defer f.Close()
	var cpu time.Duration
	if ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	fmt.Fprintf(f, "%s %.1f %s %d %s %s %s %s %.1f\n", began.UTC().Format(time.RFC3339), time.Since(began).Seconds(),
		target, len(mlir), name, strings.Join(funcs, ","), status, filepath.Base(os.Args[0]), cpu.Seconds())
}

// DefaultCacheDir returns $XDG_CACHE_HOME/archc, or ~/.cache/archc; it
// errors only when neither XDG_CACHE_HOME nor HOME is set.
func DefaultCacheDir() (string, error) {
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "archc"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("iree-compile: no cache dir (%v): set XDG_CACHE_HOME or CompileOptions.CacheDir", err)
	}
	return filepath.Join(home, ".cache", "archc"), nil
}

// CompilerVersion returns the trimmed `iree-compile --version` output of
// the venv's compiler (e.g. "IREE (https://iree.dev):\n  IREE compiler
// version 3.13.0 @ ..."). Errors: no venv (ErrNotFound) or the compiler
// does not run.
func CompilerVersion() (string, error) {
	c, err := compilerPath("")
	if err != nil {
		return "", err
	}
	return compilerVersion(c)
}

func compilerPath(explicit string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	venv, err := FindVenv()
	if err != nil {
		return "", err
	}
	c := filepath.Join(venv, "bin", "iree-compile")
	if _, err := os.Stat(c); err != nil {
		return "", fmt.Errorf("iree-compile not found in %s: run scripts/setup.sh (it installs iree-base-compiler==3.13.0)", venv)
	}
	if native := nativeCompiler(venv); native != "" {
		return native, nil
	}
	return c, nil
}

// nativeCompiler is the iree-compile executable inside the venv's
// iree-base-compiler package (site-packages/iree/compiler/_mlir_libs),
// which the venv's bin/iree-compile (a Python script) looks up and runs as
// a child: running it directly skips a Python start, about 0.15 s of CPU
// per compile and per --version. "" when it is not there, or when
// IREE_TOOL_PATH is set (the script then searches those folders first).
func nativeCompiler(venv string) string {
	if os.Getenv("IREE_TOOL_PATH") != "" {
		return ""
	}
	found, _ := filepath.Glob(filepath.Join(venv, "lib", "python3*", "site-packages", "iree", "compiler", "_mlir_libs", "iree-compile"))
	for _, f := range found {
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return f
		}
	}
	return ""
}

var versions sync.Map // compiler path -> version string

func compilerVersion(compiler string) (string, error) {
	if v, ok := versions.Load(compiler); ok {
		return v.(string), nil
	}
	out, err := exec.Command(compiler, "--version").CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) || errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("iree-compile --version failed (%v: %s): run scripts/setup.sh", err, LastLines(string(out), 1, "no output"))
		}
		return "", fmt.Errorf("cannot run %s (%v): run scripts/setup.sh", compiler, err)
	}
	v := strings.TrimSpace(string(out))
	versions.Store(compiler, v)
	return v, nil
}

// hostCPU describes the CPU that --iree-llvmcpu-target-cpu=host resolves
// to, so a cache shared between machines never hands out a module built
// for another CPU.
var hostCPU = sync.OnceValue(func() string {
	desc := runtime.GOARCH
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return desc
	}
	for _, l := range strings.Split(string(b), "\n") {
		if l == "" {
			break // end of the first processor's block
		}
		k, v, ok := strings.Cut(l, ":")
		switch k = strings.TrimSpace(k); {
		case !ok:
		case k == "model name", k == "flags", k == "vendor_id", k == "Features", k == "CPU part":
			desc += "|" + strings.TrimSpace(v)
		}
	}
	return desc
})

// firstLines returns the first n non-empty lines of s, newline-separated,
// or "(no diagnostics)".
func firstLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimRight(l, " \r"))
		}
		if len(lines) == n {
			break
		}
	}
	if len(lines) == 0 {
		return "(no diagnostics)"
	}
	return strings.Join(lines, "\n")
}
