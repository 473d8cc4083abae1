package driver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ggufTwin is the llama-tied fixture's F32 GGUF twin.
const ggufTwin = "../golden/testdata/llama-tied/model.f32.gguf"

// TestReadGGUFArch: a family given with --arch reads a GGUF file through
// its own gguf section when it claims the file's architecture, else
// through the built-in family that does (its config block and match
// clauses then decide, as for a config.json); a GGUF section error points
// into the .arch file that declared it.
func TestReadGGUFArch(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := write("plain.arch", "arch plain extends llama {\n  match model_type \"llama\"\n}\n")
	p, err := NewPlan(ggufTwin, PlanOptions{Arch: plain})
	if err != nil || p.Family.Name != "plain" || p.GGUF.Family != "llama" {
		t.Fatalf("plain: %v (family %v)", err, p)
	}
	own := write("own.arch", "arch own extends llama {\n  match model_type \"own\"\n  gguf \"llama\" {\n    hidden_size = need(\"{arch}.hidden\")\n  }\n}\n")
	_, err = NewPlan(ggufTwin, PlanOptions{Arch: own})
	if err == nil || !strings.HasPrefix(err.Error(), own+`:4:19: `) || !strings.Contains(err.Error(), `has no metadata "llama.hidden"`) {
		t.Errorf("own section: got %v, want the error at own.arch:4:19", err)
	}
	other := write("other.arch", "arch other extends llama {\n  match model_type \"other\"\n  gguf \"other\" {}\n}\n")
	p, err = NewPlan(ggufTwin, PlanOptions{Arch: other})
	if err == nil || !strings.Contains(err.Error(), `unsupported model_type "llama"`) {
		t.Errorf("a family that claims another architecture: got %v (family %v)", err, p)
	}
}
