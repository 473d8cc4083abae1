package ireetool_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/archc/archc/formats/ireetool"
	"github.com/archc/archc/internal/testmodels"
)

// script writes an executable shell script at dir/name and returns its
// path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFindVenvFromEnv: ARCHC_VENV wins, is made absolute, and a folder
// without a python, or whose python cannot import the IREE runtime, is an error
// that wraps ErrNotFound and names the folder (and the import failure).
// Fake venvs whose python is a shell script stand in for real ones.
func TestFindVenvFromEnv(t *testing.T) {
	empty := t.TempDir()
	t.Setenv("ARCHC_VENV", empty)
	_, err := ireetool.FindVenv()
	if !errors.Is(err, ireetool.ErrNotFound) || !strings.Contains(err.Error(), "ARCHC_VENV="+empty) || !strings.Contains(err.Error(), filepath.Join(empty, "bin", "python")) {
		t.Errorf("ARCHC_VENV without a python: %v; want ErrNotFound naming %s and its bin/python", err, empty)
	}
	if _, err := ireetool.FindPython(); !errors.Is(err, ireetool.ErrNotFound) {
		t.Errorf("FindPython with a bad ARCHC_VENV: %v, want ErrNotFound", err)
	}

	broken := t.TempDir()
	script(t, filepath.Join(broken, "bin"), "python", `echo "ModuleNotFoundError: No module named 'iree'" >&2; exit 1`)
	t.Setenv("ARCHC_VENV", broken)
	_, err = ireetool.FindVenv()
	if !errors.Is(err, ireetool.ErrNotFound) || !strings.Contains(err.Error(), broken) || !strings.Contains(err.Error(), "No module named 'iree'") {
		t.Errorf("ARCHC_VENV whose python lacks iree: %v; want ErrNotFound naming %s and the import error", err, broken)
	}

	// A relative ARCHC_VENV resolves against the working directory.
	good := t.TempDir()
	script(t, filepath.Join(good, "bin"), "python", "exit 0")
	t.Chdir(filepath.Dir(good))
	t.Setenv("ARCHC_VENV", filepath.Base(good))
	got, err := ireetool.FindVenv()
	if err != nil || got != good {
		t.Errorf("relative ARCHC_VENV %s: got %q, %v; want %s", filepath.Base(good), got, err, good)
	}
	py, err := ireetool.FindPython()
	if want := filepath.Join(good, "bin", "python"); err != nil || py != want {
		t.Errorf("FindPython: %q, %v; want %s", py, err, want)
	}
}

// TestFindVenvWalksUp: without ARCHC_VENV, the first .venv above the
// working directory is used, and a broken one is reported, not skipped.
func TestFindVenvWalksUp(t *testing.T) {
	t.Setenv("ARCHC_VENV", "")
	root := t.TempDir()
	venv := filepath.Join(root, ".venv")
	script(t, filepath.Join(venv, "bin"), "python", "exit 0")
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(deep)
	if got, err := ireetool.FindVenv(); err != nil || got != venv {
		t.Errorf("FindVenv from %s: %q, %v; want %s", deep, got, err, venv)
	}

	other := t.TempDir()
	badVenv := filepath.Join(other, ".venv")
	script(t, filepath.Join(badVenv, "bin"), "python", "echo 'ImportError: libfoo.so' >&2; exit 1")
	t.Chdir(other)
	_, err := ireetool.FindVenv()
	if !errors.Is(err, ireetool.ErrNotFound) || !strings.Contains(err.Error(), badVenv) || !strings.Contains(err.Error(), "libfoo.so") {
		t.Errorf("broken .venv: %v; want ErrNotFound naming %s and the import error", err, badVenv)
	}
}

func TestDefaultCacheDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	if got, err := ireetool.DefaultCacheDir(); err != nil || got != "/x/cache/archc" {
		t.Errorf("with XDG_CACHE_HOME: %q, %v; want /x/cache/archc", got, err)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got, err := ireetool.DefaultCacheDir(); err != nil || got != "/home/u/.cache/archc" {
		t.Errorf("with HOME only: %q, %v; want /home/u/.cache/archc", got, err)
	}
	t.Setenv("HOME", "")
	if got, err := ireetool.DefaultCacheDir(); err == nil || !strings.Contains(err.Error(), "XDG_CACHE_HOME") {
		t.Errorf("with neither: %q, %v; want an error naming XDG_CACHE_HOME", got, err)
	}
}

// fakeCompiler is an iree-compile stand-in: --version prints a version,
// a compile writes its arguments and input to the -o file, and an input
// containing FAIL makes it fail with diagnostics on stderr.
const fakeCompiler = `
if [ "$1" = --version ]; then echo "fake iree-compile 1.0"; exit 0; fi
in=$(cat)
case "$in" in *FAIL*) printf '\n  error: first\nnote: second\n' >&2; exit 1;; esac
out=""; prev=""
for a in "$@"; do [ "$prev" = -o ] && out=$a; prev=$a; done
printf '%s\n%s' "$*" "$in" > "$out"
`

// TestCompileCache: the cache key covers the MLIR and the flags (changing
// either compiles anew, to another file; repeating both reuses the file),
// the default flags apply when Flags is nil, and a failure reports the
// compiler's first diagnostics. iree-compile is a shell-script stand-in.
func TestCompileCache(t *testing.T) {
	t.Setenv(ireetool.SerialCompileEnv, "") // the argv checks below are of a threaded compile
	ctx := context.Background()
	cache := filepath.Join(t.TempDir(), "new") // created by Compile
	opts := ireetool.CompileOptions{CacheDir: cache, Compiler: script(t, t.TempDir(), "iree-compile", fakeCompiler)}
	compile := func(mlir string, flags []string) (string, bool) {
		t.Helper()
		o := opts
		o.Flags = flags
		path, cached, err := ireetool.Compile(ctx, []byte(mlir), o)
		if err != nil {
			t.Fatalf("Compile(%q, %q): %v", mlir, flags, err)
		}
		if filepath.Dir(path) != cache || filepath.Ext(path) != ".vmfb" {
			t.Errorf("module %s is not a .vmfb in %s", path, cache)
		}
		return path, cached
	}
	a, cached := compile("module A", []string{"--x"})
	if cached {
		t.Error("first compile reported cached")
	}
	if got, _ := os.ReadFile(a); !bytes.Equal(got, []byte("--x - -o "+tmpName(t, got)+"\nmodule A")) {
		t.Errorf("compiler saw %q; want the flags, stdin and a temporary output", got)
	}
	if again, cached := compile("module A", []string{"--x"}); again != a || !cached {
		t.Errorf("same MLIR and flags: %s (cached %v); want %s, cached", again, cached, a)
	}
	// SerialCompileEnv adds --mlir-disable-threading, outside the cache key
	// (the module is the same): module A stays cached, module S compiles
	// on one thread.
	t.Setenv(ireetool.SerialCompileEnv, "1")
	if again, cached := compile("module A", []string{"--x"}); again != a || !cached {
		t.Errorf("%s set: same MLIR and flags gave %s (cached %v); want %s, cached", ireetool.SerialCompileEnv, again, cached, a)
	}
	serial, _ := compile("module S", []string{"--x"})
	if got, _ := os.ReadFile(serial); !bytes.Equal(got, []byte("--x --mlir-disable-threading - -o "+tmpName(t, got)+"\nmodule S")) {
		t.Errorf("%s set: compiler saw %q; want the flags, --mlir-disable-threading, stdin and a temporary output", ireetool.SerialCompileEnv, got)
	}
	t.Setenv(ireetool.SerialCompileEnv, "")
	if b, cached := compile("module A", []string{"--y"}); b == a || cached {
		t.Errorf("other flags: %s (cached %v); want a new module", b, cached)
	}
	if b, cached := compile("module B", []string{"--x"}); b == a || cached {
		t.Errorf("other MLIR: %s (cached %v); want a new module", b, cached)
	}
	def, _ := compile("module A", nil)
	if got, _ := os.ReadFile(def); !bytes.HasPrefix(got, []byte(strings.Join(ireetool.DefaultFlags, " ")+" - -o ")) {
		t.Errorf("nil Flags: compiler saw %q; want DefaultFlags first", got)
	}
	if empty, _ := compile("module A", []string{}); empty == def {
		t.Error("empty Flags (no flags) shares the cache entry of nil Flags (DefaultFlags)")
	}
	// A target's flags apply when Flags is nil; the target is in the key
	// even when the flags are the same.
	o := opts
	o.Target = "cuda"
	cuda, _, err := ireetool.Compile(ctx, []byte("module A"), o)
	if err != nil {
		t.Fatal(err)
	}
	cudaTarget, _ := ireetool.LookupTarget("cuda")
	if got, _ := os.ReadFile(cuda); cuda == def || !bytes.HasPrefix(got, []byte(strings.Join(cudaTarget.Flags, " ")+" - -o ")) {
		t.Errorf("Target cuda: compiler saw %q in %s; want the cuda flags in a new cache entry", got, cuda)
	}
	o.Flags = []string{"--x"}
	if same, _, err := ireetool.Compile(ctx, []byte("module A"), o); err != nil || same == a {
		t.Errorf("Target cuda, Flags --x: %s, %v; want another cache entry than llvm-cpu's with --x (%s)", same, err, a)
	}
	o.Target = "tpu"
	if _, _, err := ireetool.Compile(ctx, []byte("module A"), o); err == nil || !strings.Contains(err.Error(), `unknown target "tpu": use one of llvm-cpu, cuda, hip, vulkan`) {
		t.Errorf("Target tpu: %v; want the known targets named", err)
	}

	_, _, err = ireetool.Compile(ctx, []byte("FAIL"), opts)
	if err == nil || !strings.Contains(err.Error(), "iree-compile failed") || !strings.Contains(err.Error(), "  error: first\nnote: second") {
		t.Errorf("failing compile: %v; want the compiler's diagnostics", err)
	}
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("failed compile left %s in the cache", e.Name())
		}
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := ireetool.Compile(canceled, []byte("module C"), opts); err == nil || !strings.Contains(err.Error(), "context ended") {
		t.Errorf("canceled context: %v; want an error saying the context ended", err)
	}
}

// tmpName returns the -o argument the fake compiler recorded.
func tmpName(t *testing.T, out []byte) string {
	t.Helper()
	first, _, _ := strings.Cut(string(out), "\n")
	_, name, ok := strings.Cut(first, " -o ")
	if !ok || !strings.HasSuffix(name, ".tmp") {
		t.Fatalf("no temporary -o file in %q", first)
	}
	return name
}

func TestCompileNoCompiler(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-iree-compile")
	_, _, err := ireetool.Compile(context.Background(), []byte("m"), ireetool.CompileOptions{CacheDir: t.TempDir(), Compiler: missing})
	if err == nil || !strings.Contains(err.Error(), "scripts/setup.sh") {
		t.Errorf("missing compiler: %v; want an error pointing at scripts/setup.sh", err)
	}
	t.Setenv("ARCHC_VENV", t.TempDir())
	if _, _, err := ireetool.Compile(context.Background(), []byte("m"), ireetool.CompileOptions{CacheDir: t.TempDir()}); !errors.Is(err, ireetool.ErrNotFound) {
		t.Errorf("no venv: %v; want ErrNotFound", err)
	}
}

func TestCheckParams(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "w.bin")
	if err := os.WriteFile(file, make([]byte, 16), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	got, err := ireetool.CheckParams([]ireetool.Param{
		{Name: "a", File: "w.bin", Offset: 0, Length: 16},
		{Name: "b", File: file, Offset: 16, Length: 0}, // empty, at the end
		{Name: "c", File: "./w.bin", Offset: 4, Length: 8},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []ireetool.Param{{"a", file, 0, 16}, {"b", file, 16, 0}, {"c", file, 4, 8}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("param %d: %+v, want %+v (absolute file)", i, got[i], want[i])
		}
	}
	for _, tc := range []struct {
		name   string
		params []ireetool.Param
		want   string
	}{
		{"empty name", []ireetool.Param{{File: file, Length: 1}}, "empty name"},
		{"repeated", []ireetool.Param{{"a", file, 0, 1}, {"a", file, 1, 1}}, `parameter "a" is given twice`},
		{"missing file", []ireetool.Param{{"a", filepath.Join(dir, "none.bin"), 0, 1}}, "none.bin"},
		{"past the end", []ireetool.Param{{"a", file, 8, 9}}, `parameter "a": bytes [8,17) lie outside ` + file + " (16 bytes)"},
		{"negative offset", []ireetool.Param{{"a", file, -1, 2}}, "lie outside"},
		{"negative length", []ireetool.Param{{"a", file, 4, -2}}, "lie outside"},
		{"huge length", []ireetool.Param{{"a", file, 1, 1<<63 - 1}}, "lie outside"},
	} {
		if _, err := ireetool.CheckParams(tc.params); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error containing %q", tc.name, err, tc.want)
		}
	}
}

// TestWriteParameterArchive writes a region of a small file as an IREE
// parameter archive (IRPA) with the venv's iree.runtime: the archive holds
// the region's bytes and none around it. Invalid params fail before Python
// runs.
func TestWriteParameterArchive(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "data.bin")
	if err := os.WriteFile(file, []byte("abcdefghijklmnopqrstuvwxyz012345"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "model.irpa")
	if err := ireetool.WriteParameterArchive(context.Background(), []ireetool.Param{{"w", file, 0, 99}}, out); err == nil || !strings.Contains(err.Error(), "lie outside") {
		t.Errorf("invalid region: %v; want CheckParams' error", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("an invalid call wrote the archive")
	}

	testmodels.NeedIREE(t)
	if err := ireetool.WriteParameterArchive(context.Background(), []ireetool.Param{{"w", file, 4, 8}, {"v", file, 20, 4}}, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("IRPA")) {
		t.Errorf("archive starts with %q, want the IRPA magic", b[:min(4, len(b))])
	}
	for _, s := range []string{"efghijkl", "uvwx"} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("archive lacks the bytes %q of a parameter", s)
		}
	}
	for _, s := range []string{"abcd", "mnop"} {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("archive holds %q, outside every parameter's region", s)
		}
	}
	bad := filepath.Join(dir, "no", "such", "dir", "x.irpa")
	if err := ireetool.WriteParameterArchive(context.Background(), []ireetool.Param{{"w", file, 4, 8}}, bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("unwritable archive path: %v; want an error naming %s", err, bad)
	}
}

func TestLastLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a\n\n b \nc\n", 2, "b | c"},
		{"a\nb", 5, "a | b"},
		{" \n\n", 1, "fallback"},
	} {
		if got := ireetool.LastLines(tc.in, tc.n, "fallback"); got != tc.want {
			t.Errorf("LastLines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestLookupTarget: devices map to their target, GPU targets are marked
// and only the CPU target is keyed on the host.
func TestLookupTarget(t *testing.T) {
	for _, c := range []struct {
		name, want string
		gpu        bool
	}{{"", "llvm-cpu", false}, {"local-task", "llvm-cpu", false}, {"local-sync", "llvm-cpu", false}, {"llvm-cpu", "llvm-cpu", false},
		{"cuda", "cuda", true}, {"hip", "hip", true}, {"vulkan", "vulkan", true}} {
		got, err := ireetool.LookupTarget(c.name)
		if err != nil || got.Name != c.want || got.GPU != c.gpu || got.HostKeyed == c.gpu {
			t.Errorf("LookupTarget(%q) = %s (GPU %v, host-keyed %v), %v; want %s, GPU %v", c.name, got.Name, got.GPU, got.HostKeyed, err, c.want, c.gpu)
		}
	}
	if got := strings.Join(ireetool.Devices(), ","); got != "local-task,local-sync,cuda,hip,vulkan" {
		t.Errorf("Devices() = %s", got)
	}
}

// TestModuleFlags: a target's workaround flags join only the modules that
// use their primitive.
func TestModuleFlags(t *testing.T) {
	cuda, _ := ireetool.LookupTarget("cuda")
	plain := cuda.ModuleFlags(func(string) bool { return false })
	moe := cuda.ModuleFlags(func(p string) bool { return p == "experts" })
	if strings.Join(plain, " ") != strings.Join(cuda.Flags, " ") {
		t.Errorf("no experts: %v, want the target's flags %v", plain, cuda.Flags)
	}
	if len(moe) != len(cuda.Flags)+1 || moe[len(moe)-1] != "--iree-codegen-llvmgpu-use-reduction-vector-distribution=false" {
		t.Errorf("experts: %v", moe)
	}
	cpu, _ := ireetool.LookupTarget("llvm-cpu")
	if got := cpu.ModuleFlags(func(string) bool { return true }); strings.Join(got, " ") != strings.Join(ireetool.DefaultFlags, " ") {
		t.Errorf("llvm-cpu takes no workarounds: %v", got)
	}
}

// TestCompileOnce: callers compiling the same module at once (goroutines
// here; test processes in CI, through the same file lock) run
// iree-compile once; the others wait and get its module, cached. No lock
// file stays in the cache.
func TestCompileOnce(t *testing.T) {
	dir := t.TempDir()
	count := filepath.Join(dir, "count")
	slow := `[ "$1" = --version ] || { echo x >> ` + count + `; sleep 0.5; }` + fakeCompiler
	cache := filepath.Join(dir, "cache")
	opts := ireetool.CompileOptions{CacheDir: cache, Compiler: script(t, dir, "iree-compile", slow)}
	var wg sync.WaitGroup
	paths := make([]string, 4)
	fresh := make([]bool, 4)
	for i := range paths {
		wg.Go(func() {
			p, cached, err := ireetool.Compile(context.Background(), []byte("module A"), opts)
			if err != nil {
				t.Error(err)
			}
			paths[i], fresh[i] = p, !cached
		})
	}
	wg.Wait()
	if got, _ := os.ReadFile(count); len(got) != len("x\n") {
		t.Errorf("iree-compile ran %d times for one module; want once", len(got)/2)
	}
	compiled := 0
	for _, f := range fresh {
		if f {
			compiled++
		}
	}
	if compiled != 1 || len(slices.Compact(slices.Clone(paths))) != 1 {
		t.Errorf("modules %v, compiled (not cached) %v; want one path, one compile", paths, fresh)
	}
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("%s left in the cache", e.Name())
		}
	}
}
