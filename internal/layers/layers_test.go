package layers

import (
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/archc/archc/"

var (
	// formats are the leaf packages: they link no other archc package
	// (rt/ireetool, which runs iree-compile and finds the venv, is a leaf
	// tool both sides use).
	formats = []string{"rt/formats", "rt/gguf", "rt/weights", "rt/tensor", "rt/abi", "rt/ireetool"}
	// compiler is the compiler side below the driver.
	compiler = []string{"dsl", "dsl/ir", "lower", "codegen"}
	// driver plans and compiles models (with the GGUF mapping and the
	// kernel build, which need the compiler).
	driver = []string{"driver", "driver/ggufmap", "rt/kernels"}
	// runtime runs compiled modules.
	runtime = []string{"rt", "rt/engine", "rt/iree", "rt/tokenizer", "rt/chat", "server"}
)

// TestLayers checks with `go list -deps` that imports point one way:
// formats ← compiler ← driver, and the runtime beside the driver, linking
// neither it nor the compiler (so that, for example, the tokenizer links
// none of the compiler and `archc emit` none of the IREE worker).
func TestLayers(t *testing.T) {
	deps := listDeps(t)
	leaf := map[string]bool{}
	for _, p := range formats {
		leaf[p] = true
	}
	for _, p := range formats {
		for _, d := range deps[p] {
			if !leaf[d] {
				t.Errorf("format package %s links %s; the leaf formats link only each other", p, d)
			}
		}
	}
	forbid := func(from []string, not []string, why string) {
		for _, p := range from {
			if _, ok := deps[p]; !ok {
				t.Errorf("no package %s in the module (update this test's layer lists)", p)
			}
			for _, d := range deps[p] {
				for _, n := range not {
					if d == n {
						t.Errorf("%s links %s: %s", p, d, why)
					}
				}
			}
		}
	}
	forbid(compiler, append(append([]string{}, driver...), runtime...), "the compiler links neither the driver nor the runtime")
	forbid(driver, runtime, "the driver links no runtime (cmd/* and internal/launch join them)")
	forbid(runtime, append(append([]string{}, compiler...), driver...), "the runtime runs an rt.Program and links none of the compiler or the driver")
}

// listDeps returns every archc package's transitive archc imports
// (module-relative paths), from one `go list -deps` run.
func listDeps(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", mod+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
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
