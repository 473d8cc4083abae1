package driver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadFamiliesTogether: files given together resolve against each
// other (a family extending, or mixing in, another file's) and the
// built-in families; a typo in a parent's name gets a suggestion.
func TestLoadFamiliesTogether(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("base_u.arch", "arch base_u extends llama {\n  match model_type \"base_u\"\n}\n")
	child := write("child_e.arch", "arch child_e extends base_u {\n  match model_type \"child_e\"\n}\n")
	typo := write("typo.arch", "arch typo extends lama {\n  match model_type \"typo\"\n}\n")
	fams, errs := LoadFamilies([]string{base, child, typo})
	if errs[0] != nil || errs[1] != nil || fams[1] == nil || fams[1].Name != "child_e" {
		t.Fatalf("base and child together: %v, %v", errs[0], errs[1])
	}
	if errs[2] == nil || !strings.Contains(errs[2].Error(), `no family named "lama" (did you mean llama?)`) {
		t.Errorf("a typo in extends: %v", errs[2])
	}
}
