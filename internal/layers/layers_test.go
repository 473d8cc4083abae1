package layers

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/archc/archc/"

var (
	// leafTools are the packages under driver/ that link no other archc
	// package, so a leaf may use them too: driver/kernels builds the CPU
	// kernels with zig, driver/weights reads safetensors and MLX affine
	// checkpoints (the compile side's readers).
	leafTools = []string{"driver/weights", "driver/kernels"}
)

// layer names the layer of an archc package (module-relative path) by
// its folder: "format" (formats/ and below: the storage table, GGUF,
// tensors, the module ABI, the IREE tools), "compiler" (dsl, lower,
// codegen and below them), "driver", "runtime" (rt/ and server/ and below),
// or "" for the rest (cmd/*, internal/*, golden, docs, archs), which may
// join layers. leafTools are driver packages that must also link no other
// archc package.
func layer(p string) string {
	under := func(root string) bool { return p == root || strings.HasPrefix(p, root+"/") }
	switch {
	case under("formats"):
		return "format"
	case under("driver"):
		return "driver"
	case under("dsl") || under("lower") || under("codegen"):
		return "compiler"
	case under("rt") || under("server"):
		return "runtime"
	}
	return ""
}

// allowed says which layers each layer may link.
var allowed = map[string][]string{
	"format":   {"format"},
	"compiler": {"format", "compiler"},
	"driver":   {"format", "compiler", "driver"},
	"runtime":  {"format", "runtime"},
}

// TestLayers checks with `go list -deps` that imports point one way:
// formats ← compiler ← driver, and the runtime beside the driver, linking
// neither it nor the compiler (so that, for example, the tokenizer links
// none of the compiler and `archc emit` none of the IREE worker). A new
// package falls in a layer by its folder.
func TestLayers(t *testing.T) {
	deps := listDeps(t)
	seen := map[string]bool{}
	for p, ds := range deps {
		from := layer(p)
		seen[from] = true
		if from == "" {
			continue
		}
		for _, d := range ds {
			if to := layer(d); to != "" && !slices.Contains(allowed[from], to) {
				t.Errorf("%s (%s) links %s (%s); a %s package may link only %v", p, from, d, to, from, allowed[from])
			}
		}
	}
	for _, p := range leafTools {
		for _, d := range deps[p] {
			if layer(d) != "format" {
				t.Errorf("%s (a leaf tool) links %s (%s); a leaf tool may link only formats/", p, d, layer(d))
			}
		}
	}
	for _, l := range []string{"format", "compiler", "driver", "runtime"} {
		if !seen[l] {
			t.Errorf("no %s package found: update this test's layer rules", l)
		}
	}
	for _, p := range append(append([]string{}, leafTools...), "formats", "formats/gguf", "formats/abi", "rt/tokenizer", "rt", "rt/engine", "server/toolcall", "lower", "driver") {
		if _, ok := deps[p]; !ok {
			t.Errorf("no package %s in the module (update this test's lists)", p)
		}
	}
}

// listDeps returns every archc package's transitive archc imports
// (module-relative paths), from one `go list -deps` run.
func listDeps(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", mod+"...").Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list: %s", msg)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], mod) {
			continue
		}
		var own []string
		for _, d := range f[1:] {
			if strings.HasPrefix(d, mod) {
				own = append(own, strings.TrimPrefix(d, mod))
			}
		}
		deps[strings.TrimPrefix(f[0], mod)] = own
	}
	return deps
}
