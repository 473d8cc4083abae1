package dsl_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/internal/golden"
	"github.com/archc/archc/lower"
)

// TestParse runs the cases in testdata/parse/*.txtar. A case holds
//
//	-- in.arch --       the source (or a comment line `in: PATH` in the
//	                    archive header names a file, relative to this package)
//	-- config.json --   a Hugging Face config (optional)
//	-- out/ir --        the IR dump (ir.Graph.Format), for a valid file, or
//	-- out/errors --    the diagnostics, one `file:line:col: message` a line
//
// Diagnostics come from Parse, then Check, then (with a config) DecodeConfig,
// EvalConfig, Matches and Build, stopping at the first stage that fails.
// go test -update rewrites the out/ sections.
func TestParse(t *testing.T) {
	files, err := filepath.Glob("testdata/parse/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases in testdata/parse")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			name, src := caseSource(t, ar)
			section, got := runCase(name, src, sectionData(ar, "config.json"))

			if golden.Update() {
				var kept []txtar.File
				for _, f := range ar.Files {
					if !strings.HasPrefix(f.Name, "out/") {
						kept = append(kept, f)
					}
				}
				ar.Files = append(kept, txtar.File{Name: section, Data: []byte(got)})
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := sectionData(ar, section)
			if want == nil {
				t.Fatalf("case has no %s section; got:\n%s", section, got)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s (-want +got; go test -update rewrites it):\n%s", section, diff)
			}
		})
	}
}

// caseSource returns the case's file name and source: the in.arch section,
// or the file named by an `in: PATH` header line.
func caseSource(t *testing.T, ar *txtar.Archive) (string, []byte) {
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		if path, ok := strings.CutPrefix(line, "in: "); ok {
			src, err := os.ReadFile(strings.TrimSpace(path))
			if err != nil {
				t.Fatal(err)
			}
			return filepath.Base(path), src
		}
	}
	src := sectionData(ar, "in.arch")
	if src == nil {
		t.Fatal("case has neither an in.arch section nor an `in:` header line")
	}
	return "in.arch", src
}

func sectionData(ar *txtar.Archive, name string) []byte {
	for _, f := range ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

// runCase returns the out section a case produces and its contents.
func runCase(name string, src, config []byte) (section, out string) {
	errs := func(es ...error) (string, string) {
		var b strings.Builder
		for _, e := range es {
			fmt.Fprintln(&b, e)
		}
		return "out/errors", b.String()
	}
	reg := lower.Registry{}
	f, err := dsl.Parse(name, src)
	if err != nil {
		return errs(err)
	}
	if diags := dsl.Check(f, reg); len(diags) > 0 {
		es := make([]error, len(diags))
		for i, d := range diags {
			es[i] = d
		}
		return errs(es...)
	}
	if config == nil {
		return errs(errors.New("case has no config.json: nothing to build"))
	}
	raw, err := dsl.DecodeConfig(config)
	if err != nil {
		return errs(err)
	}
	cfg, err := dsl.EvalConfig(f, raw)
	if err != nil {
		return errs(err)
	}
	modelType, _ := raw["model_type"].(string)
	matched, err := dsl.Matches(f, modelType, cfg)
	if err != nil {
		return errs(err)
	}
	g, err := dsl.Build(f, cfg, reg)
	if err != nil {
		return errs(err)
	}
	dump, err := g.Format(ir.FormatOptions{})
	if err != nil {
		return errs(err)
	}
	return "out/ir", fmt.Sprintf("match %q: %v\n", modelType, matched) + dump
}

// TestUnknownType checks the diagnostic of a config field whose type is not
// one of int float bool string dict list: at the type, listing the types,
// with the closest as a hint (by edit distance or prefix), or none.
func TestUnknownType(t *testing.T) {
	for _, tc := range []struct{ typ, want string }{
		{"integer", `t.arch:1:43: unknown type "integer" (types: int, float, bool, string, dict, list, any; did you mean int?)`},
		{"flaot", `t.arch:1:43: unknown type "flaot" (types: int, float, bool, string, dict, list, any; did you mean float?)`},
		{"str", `t.arch:1:43: unknown type "str" (types: int, float, bool, string, dict, list, any; did you mean string?)`},
		{"boolean", `t.arch:1:43: unknown type "boolean" (types: int, float, bool, string, dict, list, any; did you mean bool?)`},
		{"tensor", `t.arch:1:43: unknown type "tensor" (types: int, float, bool, string, dict, list, any)`},
	} {
		src := "arch t { match model_type \"t\" config { x: " + tc.typ + " = 1 } }"
		_, err := dsl.Parse("t.arch", []byte(src))
		if err == nil || err.Error() != tc.want {
			t.Errorf("type %s: got error %v, want %s", tc.typ, err, tc.want)
		}
	}
	if _, err := dsl.Parse("t.arch", []byte(`arch t { config { x: list = [1] y: dict = none } }`)); err != nil {
		t.Errorf("valid types: %v", err)
	}
}

// TestStringLiterals: strings take Go's escapes; an invalid escape is an
// error at the string's position.
func TestStringLiterals(t *testing.T) {
	f, err := dsl.Parse("s.arch", []byte("arch s {\n  match model_type \"a\\\"b\\\\c\\u00e9\"\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := dsl.ModelTypes(f); len(got) != 1 || got[0] != `a"b\cé` {
		t.Errorf("model types %q, want [a\"b\\cé]", got)
	}
	_, err = dsl.Parse("s.arch", []byte("arch s {\n  match model_type \"a\\qb\"\n}\n"))
	want := `s.arch:2:20: invalid string "a\qb": a bad escape (strings take Go's escapes: \" \\ \n \t \u00e9 ...)`
	if err == nil || err.Error() != want {
		t.Errorf("an invalid escape: %v, want %s", err, want)
	}
	// An unterminated string is reported at its quote with the rest of its
	// line (trailing blanks cut, a long one clipped), not with the text up to
	// the next quote of the file nor strconv's "invalid syntax".
	long := strings.Repeat("x", 100)
	for src, want := range map[string]string{
		"arch s {\n  match model_type \"a  \r\n  x = \"b\"\n}\n": `s.arch:2:20: unterminated string "a (close it`,
		"arch s {\n  match model_type \"a\\\n}\n":                `s.arch:2:20: unterminated string "a\ (close it`,
		"arch s {\n  match model_type \"" + long + "\n}\n":       `s.arch:2:20: unterminated string "` + long[:59] + `... (close it`,
	} {
		_, err := dsl.Parse("s.arch", []byte(src))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Parse(%q): %v, want %s...", src, err, want)
		}
	}
}

// BenchmarkParseLongString parses a file with one 1 MB string (linear:
// participle's own Unquote was quadratic, 47 s for 320 KB).
func BenchmarkParseLongString(b *testing.B) {
	src := []byte("arch s {\n  match model_type \"" + strings.Repeat("a", 1<<20) + "\"\n}\n")
	for i := 0; i < b.N; i++ {
		if _, err := dsl.Parse("s.arch", src); err != nil {
			b.Fatal(err)
		}
	}
}
