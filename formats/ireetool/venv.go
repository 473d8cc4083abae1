// Package ireetool drives IREE's tools from the project's Python virtual
// environment (pinned to iree-base-compiler/iree-base-runtime 3.13.0,
// created by scripts/setup.sh): it finds the venv, compiles StableHLO MLIR
// with iree-compile (cached), and writes IREE parameter archives. It
// starts no long-lived process; running modules is package iree's worker.
package ireetool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// notFound is the error text when no usable venv is found.
const notFound = "IREE runtime not found: run scripts/setup.sh (or set ARCHC_VENV to a venv with iree-base-runtime==3.13.0)"

// ErrNotFound is returned (possibly wrapped) by FindVenv and FindPython when
// no venv with a working iree.runtime exists.
var ErrNotFound = errors.New(notFound)

// verified caches venv dirs whose python imported iree.runtime.
var verified sync.Map // venv dir -> struct{}

// FindVenv returns the absolute path of the Python venv that holds IREE:
// $ARCHC_VENV if set, else the first .venv/ found walking up from the
// current directory, else from the running executable's directory (so
// bin/infer finds the repository's .venv wherever it is run from). It checks
// that IREE's runtime imports with the venv's python (RuntimeImport, once per
// process). It returns an error wrapping ErrNotFound that says where it
// looked, with the import failure if there was one.
func FindVenv() (string, error) {
	if v := os.Getenv("ARCHC_VENV"); v != "" {
		abs, err := filepath.Abs(v)
		if err != nil {
			return "", fmt.Errorf("%w (bad ARCHC_VENV=%q: %v)", ErrNotFound, v, err)
		}
		if err := checkVenv(abs); err != nil {
			return "", fmt.Errorf("%w (ARCHC_VENV=%s: %v)", ErrNotFound, abs, err)
		}
		return abs, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			starts = append(starts, filepath.Dir(exe))
		}
	}
	for _, dir := range starts {
		for {
			venv := filepath.Join(dir, ".venv")
			if _, err := os.Stat(filepath.Join(venv, "bin", "python")); err == nil {
				if err := checkVenv(venv); err != nil {
					return "", fmt.Errorf("%w (%s: %v)", ErrNotFound, venv, err)
				}
				return venv, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("%w (no .venv above %s)", ErrNotFound, strings.Join(starts, " or "))
}

// FindPython returns the venv's python executable; see FindVenv.
func FindPython() (string, error) {
	venv, err := FindVenv()
	if err != nil {
		return "", err
	}
	return filepath.Join(venv, "bin", "python"), nil
}

// RuntimeImport is the Python import of IREE's native runtime module the
// worker (rt/iree/worker.py) runs modules with: what a venv must import.
// It loads the module as iree.runtime does, without iree.runtime's Python
// layer, whose import of ml_dtypes costs half a second (IREE 3.13.0).
const RuntimeImport = "from iree._runtime.libs import _runtime"

// checkVenv runs `python -c RuntimeImport` in venv, at most once per
// process per venv.
func checkVenv(venv string) error {
	if _, ok := verified.Load(venv); ok {
		return nil
	}
	py := filepath.Join(venv, "bin", "python")
	if _, err := os.Stat(py); err != nil {
		return fmt.Errorf("no %s", py)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "-I", "-c", RuntimeImport).CombinedOutput()
	if err != nil {
		return fmt.Errorf("the IREE runtime does not import (python -c %q): %s", RuntimeImport, LastLines(string(out), 1, err.Error()))
	}
	verified.Store(venv, struct{}{})
	return nil
}

// LastLines returns the last n non-empty lines of s joined by " | ", or
// fallback if s has none.
func LastLines(s string, n int, fallback string) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return fallback
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
