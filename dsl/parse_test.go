package dsl_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
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
//	-- out/ir --        the IR dump (see dumpGraph), for a valid file, or
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
	return "out/ir", fmt.Sprintf("match %q: %v\n", modelType, matched) + dumpGraph(g)
}

// dumpGraph prints a graph compactly and deterministically: one line per
// node, then the weights with their shapes and the positions of the paths
// that named them, then HeadStart, Sites and Logits.
//
//	%5 = linear(%4) module=M attrs={bias: false, out: 64} : [batch, seq, 64]f32 @in.arch:12:7
//
// Nodes without a module show their hierarchical name instead (name=...);
// nodes owning a KV cache show site=N.
func dumpGraph(g *ir.Graph) string {
	var b strings.Builder
	fmt.Fprintf(&b, "arch %s (%s)\n", g.Arch, g.File)
	for _, n := range g.Nodes {
		fmt.Fprintf(&b, "%%%d = %s", n.ID, n.Prim)
		if n != g.Tokens {
			args := make([]string, len(n.Args))
			for i, a := range n.Args {
				args[i] = fmt.Sprintf("%%%d", a.ID)
			}
			fmt.Fprintf(&b, "(%s)", strings.Join(args, ", "))
		}
		if n.Module != "" {
			fmt.Fprintf(&b, " module=%s", n.Module)
		} else {
			fmt.Fprintf(&b, " name=%s", n.Name)
		}
		if len(n.Attrs) > 0 {
			fmt.Fprintf(&b, " attrs=%s", showValue(n.Attrs))
		}
		if n.Site >= 0 {
			fmt.Fprintf(&b, " site=%d", n.Site)
		}
		fmt.Fprintf(&b, " : %s @%s:%d:%d\n", n.Type, filepath.Base(n.Pos.Filename), n.Pos.Line, n.Pos.Column)
	}
	fmt.Fprintln(&b, "weights:")
	for _, w := range g.Weights {
		fmt.Fprintf(&b, "  %s %v @%s:%d:%d\n", w.Name, w.Shape, filepath.Base(w.Pos.Filename), w.Pos.Line, w.Pos.Column)
	}
	fmt.Fprintf(&b, "head_start: %d\nsites: %d\n", g.HeadStart, g.Sites)
	if g.Logits != nil {
		fmt.Fprintf(&b, "logits: %%%d\n", g.Logits.ID)
	}
	return b.String()
}

// showValue prints a config-time value with its kind visible: floats always
// carry a '.' or an exponent, strings are quoted, dict keys are sorted.
func showValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "none"
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eIN") {
			s += ".0"
		}
		return s
	case string:
		return strconv.Quote(v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b bytes.Buffer
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s: %s", k, showValue(v[k]))
		}
		b.WriteString("}")
		return b.String()
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = showValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}
