package iree

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/archc/archc/formats/ireetool"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/archc/archc/formats/tensor"
)

// needVenv skips when the IREE venv is absent, unless CI is set, where a
// missing venv is a failure.
func needVenv(t testing.TB) {
	t.Helper()
	if _, err := ireetool.FindVenv(); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("no IREE venv (%v); run scripts/setup.sh to enable this test", err)
		}
		t.Fatalf("CI is set but the IREE venv is missing: %v", err)
	}
}

// toyModule compiles testdata/toy.mlir and writes its parameter "w" =
// [10 20 30 40] at byte offset 12 of a file with junk around it.
func toyModule(t *testing.T) (vmfb string, params []ireetool.Param) {
	t.Helper()
	needVenv(t)
	mlir, err := os.ReadFile("testdata/toy.mlir")
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	vmfb, cached, err := ireetool.Compile(context.Background(), mlir, ireetool.CompileOptions{CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	if cached {
		t.Fatal("first compile reported cached")
	}
	again, cached, err := ireetool.Compile(context.Background(), mlir, ireetool.CompileOptions{CacheDir: cache})
	if err != nil || !cached || again != vmfb {
		t.Fatalf("second compile: %s cached=%v err=%v, want %s cached", again, cached, err, vmfb)
	}

	data := []byte("JUNKJUNKJUNK")
	for _, v := range []float32{10, 20, 30, 40} {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
	}
	data = append(data, "TRAILING"...)
	file := filepath.Join(t.TempDir(), "weights.bin")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return vmfb, []ireetool.Param{{Name: "w", File: file, Offset: 12, Length: 16}}
}

func startLoaded(t *testing.T, device string) *Worker {
	t.Helper()
	vmfb, params := toyModule(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := w.Load(ctx, vmfb, params, device); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(w.Functions(), "step") {
		t.Fatalf("functions %v lack step", w.Functions())
	}
	return w
}

// step calls @step(idx, [x]) and checks both results exactly.
func step(t *testing.T, w *Worker, idx int32, x float32, want []float32) {
	t.Helper()
	xt, _ := tensor.FromF32([]int64{1}, []float32{x})
	res, err := w.Call(context.Background(), "step", []tensor.Tensor{tensor.ScalarI32(idx), xt})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("got %d results, want 2", len(res))
	}
	r, err := res[0].F32()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r, want) || !slices.Equal(res[0].Shape, []int64{4}) {
		t.Fatalf("step(%d, %v) = %v %v, want %v", idx, x, res[0].Shape, r, want)
	}
	var sum float32
	for _, v := range want {
		sum += v
	}
	s, err := res[1].F32()
	if err != nil {
		t.Fatal(err)
	}
	if len(res[1].Shape) != 0 || res[1].Shape == nil || s[0] != sum {
		t.Fatalf("sum = %v %v, want rank-0 %v", res[1].Shape, s, sum)
	}
}

// TestRunToy runs the toy (an llvm-cpu module) on each CPU device.
func TestRunToy(t *testing.T) {
	for _, dev := range ireetool.Targets[0].Devices {
		t.Run(dev, func(t *testing.T) {
			w := startLoaded(t, dev)
			// w = [10 20 30 40]; state persists across calls.
			step(t, w, 1, 5, []float32{10, 25, 30, 40})
			step(t, w, 3, 7, []float32{10, 25, 30, 47})

			// Errors raised in IREE come back; the worker stays usable.
			_, err := w.Call(context.Background(), "nope", nil)
			if err == nil || !strings.Contains(err.Error(), `no function 'nope'`) || !strings.Contains(err.Error(), "step") {
				t.Fatalf("missing function: %v", err)
			}
			bad, _ := tensor.FromF32([]int64{2}, []float32{1, 2})
			_, err = w.Call(context.Background(), "step", []tensor.Tensor{tensor.ScalarI32(0), bad})
			if err == nil {
				t.Fatal("shape mismatch accepted")
			}
			t.Logf("shape mismatch error: %v", err)
			_, err = w.Call(context.Background(), "step", []tensor.Tensor{tensor.ScalarI32(0)})
			if err == nil {
				t.Fatal("missing argument accepted")
			}
			t.Logf("arity error: %v", err)
			step(t, w, 0, 1, []float32{11, 25, 30, 47})

			if err := w.Load(context.Background(), "x.vmfb", nil, dev); err == nil {
				t.Fatal("loading twice must fail")
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	vmfb, params := toyModule(t)
	w, ctx := startWorker(t)
	var err error
	long := []ireetool.Param{{Name: "w", File: params[0].File, Offset: 24, Length: 16}}
	if err := w.Load(ctx, vmfb, long, ""); err == nil || !strings.Contains(err.Error(), "lie outside") {
		t.Fatalf("region past EOF: %v", err)
	}
	if err := w.Load(ctx, vmfb, params, "tpu"); err == nil || !strings.Contains(err.Error(), "unknown device") {
		t.Fatalf("device: %v", err)
	}
	// A GPU whose driver library is missing is one line naming what was
	// looked for (machines with an NVIDIA driver skip this check).
	if err := w.Load(ctx, vmfb, params, "cuda"); err == nil {
		t.Fatal("a CPU module loaded on cuda")
	} else if !noCUDA(t, err) {
		t.Logf("this machine has a CUDA driver: %v", err)
	}
	// The module needs "w"; without it IREE refuses to initialize.
	err = w.Load(ctx, vmfb, nil, "")
	if err == nil || !strings.Contains(err.Error(), "no parameter found in index with key 'w'") {
		t.Fatalf("missing parameter: %v", err)
	}
	// A region shorter than the global is refused too. (A longer one is
	// not: IREE reads the prefix it needs, so callers must check shapes.)
	short := []ireetool.Param{{Name: "w", File: params[0].File, Offset: 12, Length: 12}}
	if err := w.Load(ctx, vmfb, short, ""); err == nil || !strings.Contains(err.Error(), "out of bounds") {
		t.Fatalf("short parameter: %v", err)
	}
	if err := w.LoadWith(ctx, vmfb, params, RuntimeOptions{Threads: -2}); err == nil || !strings.Contains(err.Error(), "-2 threads") {
		t.Fatalf("negative threads: %v", err)
	}
	err = w.LoadWith(ctx, vmfb, params, RuntimeOptions{Extra: []string{"--no_such_runtime_flag=1"}})
	if err == nil || !strings.Contains(err.Error(), "no_such_runtime_flag") {
		t.Fatalf("unknown runtime flag: %v", err)
	}
	// A failed Load leaves the worker able to load.
	if err := w.Load(ctx, vmfb, params, ""); err != nil {
		t.Fatal(err)
	}
	step(t, w, 2, 1, []float32{10, 20, 31, 40})
	// argmax needs logits [rows, vocab]; step returns a vector.
	xt, _ := tensor.FromF32([]int64{1}, []float32{0})
	if _, err := w.CallArgmax(ctx, "step", []tensor.Tensor{tensor.ScalarI32(0), xt}); err == nil || !strings.Contains(err.Error(), "argmax and sampling need") {
		t.Fatalf("argmax of a vector: %v", err)
	}
}

// noCUDA reports whether err says the machine has no CUDA device, and
// checks that it says so in one line naming what was looked for.
func noCUDA(t *testing.T, err error) bool {
	t.Helper()
	msg := err.Error()
	if !strings.Contains(msg, "not available on this machine") {
		return false
	}
	if !strings.Contains(msg, "looked for libcuda.so (the NVIDIA driver) and an NVIDIA GPU") || strings.Contains(msg, "\n") {
		t.Errorf("no CUDA driver: %q; want one line naming libcuda.so", msg)
	}
	return true
}

// TestCheckDevice: a device request names an unknown device, finds the
// CPU, words a missing GPU as a load does, and leaves the worker unable to
// load (runtime flags must precede its first device).
func TestCheckDevice(t *testing.T) {
	vmfb, params := toyModule(t)
	w, ctx := startWorker(t)
	if err := w.CheckDevice(ctx, "tpu"); err == nil || !strings.Contains(err.Error(), `unknown device "tpu"`) {
		t.Errorf("tpu: %v; want unknown device", err)
	}
	if err := w.CheckDevice(ctx, "local-task"); err != nil {
		t.Errorf("local-task: %v", err)
	}
	if err := w.CheckDevice(ctx, "cuda"); err == nil {
		t.Logf("this machine has a CUDA device")
	} else if !noCUDA(t, err) {
		t.Errorf("cuda: %v; want nil or not available on this machine", err)
	}
	if err := w.Load(ctx, vmfb, params, ""); err == nil || !strings.Contains(err.Error(), "answered a device request") {
		t.Errorf("load after a device request: %v; want it refused", err)
	}
}

func TestWorkerKilled(t *testing.T) {
	w := startLoaded(t, "")
	step(t, w, 0, 1, []float32{11, 20, 30, 40})
	if err := w.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-w.exited
	xt, _ := tensor.FromF32([]int64{1}, []float32{1})
	_, err := w.Call(context.Background(), "step", []tensor.Tensor{tensor.ScalarI32(0), xt})
	if err == nil || !strings.Contains(err.Error(), "exited") || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("after kill: %v", err)
	}
	_, err2 := w.Call(context.Background(), "step", nil)
	if err2 == nil || err2.Error() != err.Error() {
		t.Fatalf("broken worker must repeat its error, got %v", err2)
	}
}

// helloFile writes a worker's hello message speaking protocol version v
// to a file and returns its path.
func helloFile(t *testing.T, v int) string {
	t.Helper()
	h := fmt.Sprintf(`{"ok": true, "hello": "archc-iree-worker", "protocol": %d, "iree": "0", "revision": ""}`, v)
	p := filepath.Join(t.TempDir(), "hello")
	if err := os.WriteFile(p, append(binary.LittleEndian.AppendUint32(nil, uint32(len(h))), h...), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakePython writes an executable shell script standing in for python.
func fakePython(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "python")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStartFailures(t *testing.T) {
	// Dies at once: the error names the exit status and stderr.
	py := fakePython(t, "echo 'ModuleNotFoundError: No module named iree' >&2; exit 3")
	_, err := Start(context.Background(), Options{Python: py})
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "No module named iree") {
		t.Fatalf("dying python: %v", err)
	}
	// Hangs: the context ends, the process is killed, no hang.
	py = fakePython(t, "exec sleep 30")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = Start(ctx, Options{Python: py})
	if err == nil || !strings.Contains(err.Error(), "context ended") {
		t.Fatalf("hanging python: %v", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("took %v to give up", d)
	}
	// Not executable.
	_, err = Start(context.Background(), Options{Python: "/nonexistent/python"})
	if err == nil || !strings.Contains(err.Error(), "cannot run") {
		t.Fatalf("missing python: %v", err)
	}
}

func TestCancelKillsWorker(t *testing.T) {
	// A worker that greets, then never answers: Call must return when ctx
	// ends, and the worker is then broken.
	py := fakePython(t, "cat "+helloFile(t, ProtocolVersion())+"; exec sleep 30")
	w, err := Start(context.Background(), Options{Python: py})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = w.Call(ctx, "f", nil)
	if err == nil || !strings.Contains(err.Error(), "killed") || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("cancel: %v", err)
	}
	if _, err := w.Call(context.Background(), "f", nil); err == nil {
		t.Fatal("worker usable after kill")
	}

	// Close while a call with no deadline is in flight ends that call.
	w2, err := Start(context.Background(), Options{Python: py})
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := w2.Call(context.Background(), "f", nil)
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	w2.Close()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "exited") {
			t.Fatalf("in-flight call after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the in-flight call")
	}
}

func TestEndedContext(t *testing.T) {
	// An already-ended context fails fast and does not break the worker.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	w3 := startLoaded(t, "")
	if _, err := w3.Call(done, "step", nil); err == nil || !strings.Contains(err.Error(), "not started") {
		t.Fatalf("ended ctx: %v", err)
	}
	step(t, w3, 0, 1, []float32{11, 20, 30, 40})
}

func TestCompileError(t *testing.T) {
	needVenv(t)
	bad := []byte("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %r = stablehlo.add %a, %b : tensor<2xf32>\n  return %r : tensor<2xf32>\n}\n")
	_, _, err := ireetool.Compile(context.Background(), bad, ireetool.CompileOptions{CacheDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "iree-compile failed") || !strings.Contains(err.Error(), "undeclared SSA value") {
		t.Fatalf("compile error: %v", err)
	}
	v, err := ireetool.CompilerVersion()
	if err != nil || !strings.Contains(v, "IREE compiler version") {
		t.Fatalf("version %q %v", v, err)
	}
}

func TestFindVenvEnv(t *testing.T) {
	t.Setenv("ARCHC_VENV", filepath.Join(t.TempDir(), "nope"))
	_, err := ireetool.FindPython()
	if err == nil || !strings.Contains(err.Error(), "IREE runtime not found: run scripts/setup.sh") {
		t.Fatalf("bad ARCHC_VENV: %v", err)
	}
}

// TestWriteParameterArchive: ireetool's archive holds the parameter's bytes
// under its name, so IREE's own iree-run-module runs the module with it.
func TestWriteParameterArchive(t *testing.T) {
	vmfb, params := toyModule(t)
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "toy.irpa")
	if err := ireetool.WriteParameterArchive(ctx, params, out); err != nil {
		t.Fatal(err)
	}
	venv, err := ireetool.FindVenv()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(venv, "bin", "iree-run-module"), "--module="+vmfb, "--parameters=model="+out,
		"--device=local-sync", "--function=step", "--input=i32=2", "--input=1xf32=5")
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("iree-run-module: %v\n%s", err, got)
	}
	// state = [0 0 5 0]; + w = [10 20 35 40], sum 105.
	if !strings.Contains(string(got), "10 20 35 40") || !strings.Contains(string(got), "105") {
		t.Errorf("iree-run-module with the archive printed:\n%s\nwant 4xf32=10 20 35 40 and 105", got)
	}
	// A region outside its file is refused before anything is written.
	bad := []ireetool.Param{{Name: "w", File: params[0].File, Offset: 1 << 20, Length: 16}}
	if err := ireetool.WriteParameterArchive(ctx, bad, out+"2"); err == nil || !strings.Contains(err.Error(), "lie outside") {
		t.Errorf("bad region: %v", err)
	}
}
