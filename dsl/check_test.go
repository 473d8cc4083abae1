package dsl_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/lower"
)

// errorMark is an expected diagnostic: `# ERROR "substring"` at the end of
// the line the diagnostic points at. A line may carry several:
// `# ERROR "a" ERROR "b"`.
var errorMark = regexp.MustCompile(`ERROR ("(?:[^"\\]|\\.)*")`)

// TestCheckFiles parses and checks testdata/check/*.arch and the built-in
// families in ../archs, and matches the diagnostics against the files'
// `# ERROR "..."` marks by line: each mark needs a diagnostic on its line
// whose message contains the substring, and each diagnostic needs a mark.
func TestCheckFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/check/*.arch")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no files in testdata/check")
	}
	builtin, err := filepath.Glob("../archs/*.arch")
	if err != nil || len(builtin) == 0 {
		t.Fatalf("no built-in families in ../archs (%v)", err)
	}
	for _, file := range append(files, builtin...) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			want := expectedErrors(t, src)
			for _, d := range diagnostics(file, src) {
				marks := want[d.Pos.Line]
				i := 0
				for i < len(marks) && !strings.Contains(d.Msg, marks[i]) {
					i++
				}
				if i == len(marks) {
					t.Errorf("unexpected diagnostic %v", d)
					continue
				}
				want[d.Pos.Line] = append(marks[:i], marks[i+1:]...)
			}
			lines := make([]int, 0, len(want))
			for line := range want {
				lines = append(lines, line)
			}
			sort.Ints(lines)
			for _, line := range lines {
				for _, m := range want[line] {
					t.Errorf("%s:%d: missing diagnostic containing %q", file, line, m)
				}
			}
		})
	}
}

// expectedErrors maps line numbers to the substrings marked on them.
func expectedErrors(t *testing.T, src []byte) map[int][]string {
	want := map[int][]string{}
	for i, line := range strings.Split(string(src), "\n") {
		at := strings.Index(line, "# ERROR ")
		if at < 0 {
			continue
		}
		for _, m := range errorMark.FindAllStringSubmatch(line[at:], -1) {
			s, err := strconv.Unquote(m[1])
			if err != nil {
				t.Fatalf("line %d: bad ERROR mark %s: %v", i+1, m[1], err)
			}
			want[i+1] = append(want[i+1], s)
		}
	}
	return want
}

// diagnostics returns what Parse, Resolve (against the built-in families)
// and then Check report for a file.
func diagnostics(name string, src []byte) []*dsl.Error {
	f, err := dsl.Parse(name, src)
	if err == nil {
		f, err = dsl.Resolve(f, builtinFamily)
	}
	if err != nil {
		if e, ok := err.(*dsl.Error); ok {
			return []*dsl.Error{e}
		}
		return []*dsl.Error{{Msg: err.Error()}}
	}
	return dsl.Check(f, lower.Registry{})
}

// builtinFamily parses ../archs/NAME.arch (families are named as their files).
func builtinFamily(name string) (*dsl.File, error) {
	path := filepath.Join("..", "archs", name+".arch")
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return dsl.Parse(path, src)
}
