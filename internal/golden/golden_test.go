package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder captures Errorf/Fatalf of Check so a mismatch can be asserted.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msg = format
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }
func (r *recorder) Fatal(args ...any)                 { r.failed = true }

func TestCheck(t *testing.T) {
	if Update() {
		t.Skip("exercises the compare path; meaningless under -update")
	}
	path := filepath.Join(t.TempDir(), "x.golden")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := &recorder{TB: t}
	Check(r, path, []byte("a\nb\n"))
	if r.failed {
		t.Errorf("Check reported a mismatch for equal contents")
	}

	r = &recorder{TB: t}
	Check(r, path, []byte("a\nc\n"))
	if !r.failed || !strings.Contains(r.msg, "-want +got") {
		t.Errorf("Check did not report differing contents (failed=%v, msg=%q)", r.failed, r.msg)
	}

	r = &recorder{TB: t}
	Check(r, filepath.Join(t.TempDir(), "missing"), nil)
	if !r.failed {
		t.Errorf("Check did not report a missing golden file")
	}
}

func TestCheckUpdate(t *testing.T) {
	old := *update
	*update = true
	defer func() { *update = old }()
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	Check(t, path, []byte("new\n"))
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new\n" {
		t.Fatalf("under -update Check wrote %q, %v; want %q", got, err, "new\n")
	}
}
