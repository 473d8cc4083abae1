package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/internal/clitest"
)

const fixture = "../../golden/testdata/llama-tied"

func TestCLI(t *testing.T) {
	dir := t.TempDir()
	bin := clitest.Build(t, dir, "github.com/archc/archc/cmd/archc")

	t.Run("list", func(t *testing.T) {
		r := clitest.Run(t, bin, "list")
		if r.Code != 0 || !strings.Contains(r.Stdout, "llama") || !strings.Contains(r.Stdout, "mistral") {
			t.Fatalf("list: code %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
		}
		for _, want := range [][]string{{"olmo3", "olmo3.arch", "olmo3", "olmo2", "(conditional)"}, {"gemma3", "gemma3.arch", "gemma3_text,", "gemma3", "gemma3"}} {
			found := false
			for _, line := range strings.Split(r.Stdout, "\n") {
				found = found || strings.Join(strings.Fields(line), " ") == strings.Join(want, " ")
			}
			if !found {
				t.Errorf("list: no line %q (family, file, model types, GGUF architectures) in\n%s", strings.Join(want, " "), r.Stdout)
			}
		}
	})
	t.Run("emit is deterministic", func(t *testing.T) {
		a := clitest.Run(t, bin, "emit", fixture)
		b := clitest.Run(t, bin, "emit", filepath.Join(fixture, "config.json"))
		if a.Code != 0 || a.Stdout == "" || a.Stdout != b.Stdout {
			t.Fatalf("emit twice: codes %d %d, equal %v, stderr %q", a.Code, b.Code, a.Stdout == b.Stdout, a.Stderr)
		}
		out := filepath.Join(dir, "m.mlir")
		if r := clitest.Run(t, bin, "emit", fixture, "-o", out); r.Code != 0 {
			t.Fatalf("emit -o: %q", r.Stderr)
		}
		if data, err := os.ReadFile(out); err != nil || string(data) != a.Stdout {
			t.Fatalf("emit -o wrote different bytes (%v)", err)
		}
	})
	t.Run("check", func(t *testing.T) {
		if r := clitest.Run(t, bin, "check", "../../archs/llama.arch"); r.Code != 0 {
			t.Fatalf("check llama.arch: %q", r.Stderr)
		}
		bad := filepath.Join(dir, "bad.arch")
		os.WriteFile(bad, []byte("arch bad {\n  match model_type \"x\"\n  logits = rms_norm(tokens, model.norm eps: 1)\n}\n"), 0o644)
		r := clitest.Run(t, bin, "check", bad)
		if r.Code == 0 || !strings.Contains(r.Stderr, "bad.arch:3:") {
			t.Fatalf("check bad.arch: code %d, stderr %q; want a file:line:col error", r.Code, r.Stderr)
		}

		// A folder: every .arch file in it, each reported.
		if r := clitest.Run(t, bin, "check", "../../archs"); r.Code != 0 || !strings.Contains(r.Stdout, "llama.arch: ok") || !strings.Contains(r.Stdout, "mixtral.arch: ok") {
			t.Fatalf("check archs/: code %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
		}
		if r := clitest.Run(t, bin, "check", dir); r.Code == 0 || !strings.Contains(r.Stderr, "bad.arch:3:") {
			t.Fatalf("check on a folder with bad.arch: code %d, stderr %q", r.Code, r.Stderr)
		}
	})
	t.Run("gpu target", func(t *testing.T) {
		// A GPU plan: no CPU kernels, GPU batch buckets (decode up to 64).
		r := clitest.Run(t, bin, "emit", fixture, "--target", "cuda")
		if r.Code != 0 || !strings.Contains(r.Stdout, "func.func @decode_64(") || !strings.Contains(r.Stdout, "func.func @prefill_128(") || strings.Contains(r.Stdout, "hal.executable") {
			t.Fatalf("emit --target cuda: code %d, stderr %q; want decode_64 and prefill_128 and no kernels", r.Code, r.Stderr)
		}
		r = clitest.Run(t, bin, "emit", fixture, "--target", "cuda", "--decode-batches", "8,1", "--prefill-buckets", "16")
		if r.Code != 0 || !strings.Contains(r.Stdout, "func.func @decode_8(") || strings.Contains(r.Stdout, "func.func @decode_64(") || strings.Contains(r.Stdout, "func.func @prefill_128(") {
			t.Fatalf("emit --target cuda --decode-batches 8,1: code %d, stderr %q", r.Code, r.Stderr)
		}
		r = clitest.Run(t, bin, "emit", fixture, "--target", "cuda", "--kernels", "avx2")
		if r.Code != 1 || !strings.Contains(r.Stderr, "--kernels avx2: archc's matmul kernels are CPU code") {
			t.Fatalf("--target cuda --kernels avx2: code %d, stderr %q", r.Code, r.Stderr)
		}
	})
	t.Run("int8 precision refusals", func(t *testing.T) {
		// The int8 mode is a build of archc's CPU kernels: refused on a GPU,
		// without kernels and for a variant without an int8 build.
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--target", "cuda", "--precision", "int8"}, "--precision int8: the int8 mode is archc's CPU kernels; for --target cuda"},
			{[]string{"--no-kernels", "--precision", "int8"}, "--precision int8 needs archc's kernels; --no-kernels"},
			{[]string{"--kernels", "avx2", "--precision", "int8"}, "--kernels avx2: no int8 build"},
			{[]string{"--precision", "int4"}, "--precision must be one of"},
		} {
			r := clitest.Run(t, bin, append([]string{"emit", fixture}, c.args...)...)
			if r.Code == 0 || !strings.Contains(r.Stderr, c.want) {
				t.Errorf("emit %v: code %d, stderr %q; want %q", c.args, r.Code, r.Stderr, c.want)
			}
		}
	})
	t.Run("unknown model_type", func(t *testing.T) {
		cfg := filepath.Join(dir, "config.json")
		os.WriteFile(cfg, []byte(`{"model_type": "frobnicator"}`), 0o644)
		r := clitest.Run(t, bin, "emit", cfg)
		if r.Code != 1 || !strings.Contains(r.Stderr, `unsupported model_type "frobnicator"`) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Fatalf("code %d, stderr %q; want one line naming the model_type", r.Code, r.Stderr)
		}
	})
}

// TestLinksNoRuntime: archc (emit, compile, check, list) is the compiler
// side only: it links neither the IREE worker nor the tokenizer.
func TestLinksNoRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"github.com/archc/archc/rt/iree", "github.com/archc/archc/rt/tokenizer", "github.com/archc/archc/rt"} {
		for _, dep := range strings.Fields(string(out)) {
			if dep == pkg {
				t.Errorf("cmd/archc links %s", pkg)
			}
		}
	}
}
