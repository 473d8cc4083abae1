package golden

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/archc/archc/internal/launch"
)

// TestTensorOpsActivation: Arcee's relu2 (ReLUSquaredActivation,
// square(relu(x))) written with the element-wise tensor operations instead
// of activation(x, "relu2") runs the arcee fixture token-exact against its
// HF oracle, first-step logits within tolerance: once as torch writes it
// (clamp, then ** 2) and once as a select on a comparison mask (in
// parallel; each compiles the small oracleOptions module).
func TestTensorOpsActivation(t *testing.T) {
	needIREE(t)
	buildKernels(t)
	t.Parallel() // compileHeavy
	dir := "testdata/arcee"
	want := readOracle(t, dir)
	for name, body := range map[string]string{
		"clamp_pow": `clamp(x, min: 0.0) ** 2`,
		"where":     `x > 0.0 ? x ** 2 : 0.0`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			arch := filepath.Join(t.TempDir(), "arcee_ops.arch")
			src := "arch arcee_ops extends arcee {\n  match model_type \"arcee\"\n\n  block act(x) { return " + body + " }\n}\n"
			if err := os.WriteFile(arch, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			o := oracleOptions()
			o.Plan.Arch = arch
			m, err := launch.Open(context.Background(), dir, o)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			checkOracle(t, m, want)
		})
	}
}
