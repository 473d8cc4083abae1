// Package golden compares test output with golden files and rewrites them
// when tests run with -update (`go test ./... -update`). Every test binary
// that imports it gets the -update flag; review the resulting diffs like code.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Update reports whether golden files should be rewritten (-update given).
func Update() bool { return *update }

// Check compares got with the contents of the file at path and reports a
// diff (-want +got) as a test error. Under -update it writes got to path
// instead, creating directories as needed.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from the output (-want +got; go test -update rewrites it):\n%s", path, diff)
	}
}
