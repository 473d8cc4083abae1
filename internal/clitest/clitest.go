// Package clitest builds archc's commands once per test binary and runs
// them as a user would, for tests of exit codes and messages.
package clitest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Build compiles the command package pkg (e.g. "github.com/archc/archc/cmd/infer")
// into dir and returns the binary's path.
func Build(t testing.TB, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// Result is one command run.
type Result struct {
	Code   int
	Stdout string
	Stderr string
}

// Run runs bin with args and returns its exit code and output.
func Run(t testing.TB, bin string, args ...string) Result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = os.Environ()
	err := cmd.Run()
	r := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.Code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run %s: %v", bin, err)
	}
	return r
}
