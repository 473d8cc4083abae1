// Package testmodels finds the real checkpoints tests use and applies one
// policy when they or the IREE venv are missing: skip on a developer
// machine, fail under CI (env CI set), where scripts/test.sh installs them.
package testmodels

import (
	"fmt"
	"github.com/archc/archc/formats/ireetool"
	"os"
	"path/filepath"
	"testing"
)

// Dir is where scripts/fetch-models.sh and fetch-gemma3.sh put checkpoints:
// $ARCHC_MODELS, else .cache/models under the repository root (found by
// walking up from the working directory to go.mod).
func Dir() string {
	if d := os.Getenv("ARCHC_MODELS"); d != "" {
		return d
	}
	root, err := repoRoot()
	if err != nil {
		wd, _ := os.Getwd()
		return filepath.Join(wd, ".cache", "models")
	}
	return filepath.Join(root, ".cache", "models")
}

// repoRoot is the repository root: the nearest folder above the working
// directory (a test's package folder) holding go.mod.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}

// GGUF returns the path of Dir()/name/*.gguf (name: "smollm2", "gemma3"),
// or skips (fails under CI) when it is absent.
func GGUF(t testing.TB, name string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(Dir(), name, "*.gguf"))
	if len(m) == 0 {
		missing(t, "no "+name+" GGUF under "+Dir()+": run scripts/fetch-models.sh and scripts/fetch-gemma3.sh")
	}
	return m[0]
}

// NeedIREE skips (fails under CI) when the IREE venv is missing.
func NeedIREE(t testing.TB) {
	t.Helper()
	if _, err := ireetool.FindVenv(); err != nil {
		missing(t, "needs the IREE venv: "+err.Error())
	}
}

func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
