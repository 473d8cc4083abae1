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

func TestStripLocations(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`%1 = "stablehlo.add"(%0, %0) : (tensor<f32>, tensor<f32>) -> tensor<f32> loc("model.norm"("llama.arch":62:12))` + "\n",
			`%1 = "stablehlo.add"(%0, %0) : (tensor<f32>, tensor<f32>) -> tensor<f32> loc("model.norm"("llama.arch"))` + "\n"},
		{`func.return %3 : tensor<f32> loc("a.arch":1:2)`, `func.return %3 : tensor<f32> loc("a.arch")`},
		{"#loc1 = loc(\"gemma.arch\":7:30)\n", "#loc1 = loc(\"gemma.arch\")\n"},
		// A string attribute that looks like a location stays as it is.
		{`%0 = "x.op"() {s = "f.arch":1:2} : () -> () loc("n"("f.arch":3:4))`, `%0 = "x.op"() {s = "f.arch":1:2} : () -> () loc("n"("f.arch"))`},
		{`%0 = "x.op"() : () -> ()` + "\n\n", `%0 = "x.op"() : () -> ()` + "\n\n"},
		{`loc("quo\"te.arch":5:6))`, `loc("quo\"te.arch":5:6))`}, // no " loc(" on the line: untouched
		{` loc("quo\"te.arch":5:6))`, ` loc("quo\"te.arch"))`},
	} {
		got := string(StripLocations([]byte(c.in)))
		if got != c.want {
			t.Errorf("StripLocations(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := string(StripLocations([]byte(got))); again != got {
			t.Errorf("StripLocations is not idempotent on %q: %q", got, again)
		}
	}
}
