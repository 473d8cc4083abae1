package dsl_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/tools/txtar"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/internal/golden"
)

// sources returns every .arch text in the repository's tests, by name: the
// built-in families, the check cases and the in.arch sections of the parse
// cases (some do not parse; that is their point).
func sources(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	paths, _ := filepath.Glob("../archs/*.arch")
	more, _ := filepath.Glob("testdata/check/*.arch")
	for _, p := range append(paths, more...) {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = src
	}
	cases, _ := filepath.Glob("testdata/parse/*.txtar")
	more, _ = filepath.Glob("testdata/format/*.txtar")
	for _, p := range append(cases, more...) {
		ar, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if f.Name == "in.arch" {
				out[p] = f.Data
			}
		}
	}
	if len(out) < 20 {
		t.Fatalf("found only %d .arch sources", len(out))
	}
	return out
}

// sameAST compares two parses, positions and resolution state aside.
var sameAST = []cmp.Option{cmpopts.IgnoreTypes(lexer.Position{}), cmpopts.IgnoreUnexported(dsl.File{}, dsl.Block{})}

// commentTexts lists a source's comments, sorted (the printer may move a
// comment from inside an expression to a line of its own).
func commentTexts(src []byte) []string {
	var out []string
	for _, l := range strings.Split(string(src), "\n") {
		if i := strings.Index(l, "#"); i >= 0 && strings.Count(l[:i], `"`)%2 == 0 {
			out = append(out, strings.TrimRight(l[i:], " \t\r"))
		}
	}
	sort.Strings(out)
	return out
}

// checkRoundTrip: the printed text parses to the same AST, keeps every
// comment, and prints to itself.
func checkRoundTrip(t *testing.T, name string, src []byte) {
	t.Helper()
	f, err := dsl.Parse(name, src)
	if err != nil {
		return
	}
	out, err := dsl.Format(name, src)
	if err != nil {
		t.Fatalf("%s: Format: %v", name, err)
	}
	g, err := dsl.Parse(name, out)
	if err != nil {
		t.Fatalf("%s: the printed text does not parse: %v\n%s", name, err, out)
	}
	if diff := cmp.Diff(f, g, sameAST...); diff != "" {
		t.Fatalf("%s: parse → print → parse changed the AST (-source +printed):\n%s\nprinted:\n%s", name, diff, out)
	}
	if diff := cmp.Diff(commentTexts(src), commentTexts(out)); diff != "" {
		t.Fatalf("%s: comments changed (-source +printed):\n%s\nprinted:\n%s", name, diff, out)
	}
	again, err := dsl.Format(name, out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(out), string(again)); diff != "" {
		t.Fatalf("%s: formatting is not idempotent (-once +twice):\n%s", name, diff)
	}
}

// TestFormatRoundTrip: parse → print → parse gives the same AST for every
// .arch file in archs/ and every parser test case.
func TestFormatRoundTrip(t *testing.T) {
	n := 0
	for name, src := range sources(t) {
		if _, err := dsl.Parse(name, src); err == nil {
			n++
		}
		checkRoundTrip(t, name, src)
	}
	if n < 20 {
		t.Errorf("only %d sources parse", n)
	}
}

// TestArchsFormatted: the built-in families are in the canonical layout
// (`archc fmt -w archs/*.arch` fixes a file this test names).
func TestArchsFormatted(t *testing.T) {
	paths, _ := filepath.Glob("../archs/*.arch")
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out, err := dsl.Format(p, src)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(src), string(out)); diff != "" {
			t.Errorf("%s is not formatted; run `archc fmt -w %s` (-file +formatted):\n%s", p, p, diff)
		}
	}
}

// TestFormat runs testdata/format/*.txtar: `-- in.arch --` printed gives
// `-- out.arch --` (go test -update rewrites it), or a parse error in
// `-- out/errors --`.
func TestFormat(t *testing.T) {
	files, _ := filepath.Glob("testdata/format/*.txtar")
	if len(files) == 0 {
		t.Fatal("no cases in testdata/format")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			section, got := "out.arch", ""
			out, err := dsl.Format("in.arch", sectionData(ar, "in.arch"))
			if err != nil {
				section, got = "out/errors", err.Error()+"\n"
			} else {
				got = string(out)
			}
			if golden.Update() {
				var kept []txtar.File
				for _, f := range ar.Files {
					if f.Name == "in.arch" {
						kept = append(kept, f)
					}
				}
				ar.Files = append(kept, txtar.File{Name: section, Data: []byte(got)})
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(string(sectionData(ar, section)), got); diff != "" {
				t.Errorf("%s (-want +got; go test -update rewrites it):\n%s", section, diff)
			}
		})
	}
}

// TestPrintWithoutSource: an AST printed alone (no comments, no source
// layout) parses back to itself.
func TestPrintWithoutSource(t *testing.T) {
	for name, src := range sources(t) {
		f, err := dsl.Parse(name, src)
		if err != nil {
			continue
		}
		var b bytes.Buffer
		if err := dsl.Print(&b, f, nil); err != nil {
			t.Fatal(err)
		}
		g, err := dsl.Parse(name, b.Bytes())
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, b.String())
		}
		if diff := cmp.Diff(f, g, sameAST...); diff != "" {
			t.Fatalf("%s: (-source +printed):\n%s", name, diff)
		}
	}
}

// FuzzFormat: for any source that parses, printing round-trips and is
// idempotent. Seeds: every .arch source of the tests.
func FuzzFormat(f *testing.F) {
	for _, src := range sources(f) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		checkRoundTrip(t, "fuzz.arch", src)
	})
}
