package docs_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/archc/archc/driver"
)

// coverageRow is one row of coverage.md's model-type table.
type coverageRow struct {
	line      int
	modelType string
	archs     []string // the .arch files of a "yes" row; nil for "no"
}

var backticked = regexp.MustCompile("`([^`]+)`")

// readCoverage parses coverage.md: the rows of the table under "## Model
// types" and the model types listed under "## Missing from archc".
func readCoverage(t *testing.T) ([]coverageRow, map[string]int) {
	t.Helper()
	text, err := os.ReadFile("coverage.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []coverageRow
	missing := map[string]int{}
	section := ""
	for i, line := range strings.Split(string(text), "\n") {
		if s, ok := strings.CutPrefix(line, "## "); ok {
			section = s
			continue
		}
		switch {
		case section == "Model types" && strings.HasPrefix(line, "| `"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			mt := backticked.FindStringSubmatch(cells[0])
			if len(cells) != 4 || mt == nil {
				t.Errorf("coverage.md:%d: want | `model_type` · class | archc | llama.cpp | mlx-lm |, got %q", i+1, line)
				continue
			}
			r := coverageRow{line: i + 1, modelType: mt[1]}
			archc := strings.TrimSpace(cells[1])
			switch {
			case archc == "no":
			case strings.HasPrefix(archc, "yes: "):
				for _, m := range backticked.FindAllStringSubmatch(archc, -1) {
					r.archs = append(r.archs, m[1])
				}
			}
			if archc != "no" && len(r.archs) == 0 {
				t.Errorf("coverage.md:%d: archc cell %q: want no, or yes: `FAMILY.arch`, ...", i+1, archc)
			}
			rows = append(rows, r)
		case section == "Missing from archc" && strings.HasPrefix(line, "- `"):
			missing[backticked.FindStringSubmatch(line)[1]] = i + 1
		}
	}
	if len(rows) == 0 {
		t.Fatal("coverage.md: no rows under ## Model types")
	}
	return rows, missing
}

// TestCoverage keeps coverage.md's table current with archs/: every model
// type a built-in family matches has a row that says yes and names the
// family's file; a yes row names only files that match its model type;
// the no rows are exactly the model types under "Missing from archc".
func TestCoverage(t *testing.T) {
	rows, missing := readCoverage(t)
	fams, err := driver.BuiltinFamilies()
	if err != nil {
		t.Fatal(err)
	}
	byType := map[string]coverageRow{}
	for _, r := range rows {
		if prev, ok := byType[r.modelType]; ok {
			t.Errorf("coverage.md:%d: model type %s has a row already (line %d)", r.line, r.modelType, prev.line)
		}
		byType[r.modelType] = r
	}
	matches := map[string][]string{} // model type -> family files matching it
	for _, f := range fams {
		for _, mt := range f.ModelTypes() {
			mt = strings.TrimSuffix(mt, " (conditional)")
			matches[mt] = append(matches[mt], f.Path)
		}
	}
	for _, f := range fams {
		for _, mt := range f.ModelTypes() {
			mt = strings.TrimSuffix(mt, " (conditional)")
			r, ok := byType[mt]
			switch {
			case !ok:
				t.Errorf("docs/coverage.md has no row for model_type %s (archs/%s): add\n"+
					"  | `%s` · `HFClassForCausalLM` | yes: %s | `llama.cpp arch` or — | `mlx-lm file.py` or — |\n"+
					"to the table under \"## Model types\", in alphabetical order (columns: docs/coverage.md's header)",
					mt, f.Path, mt, quoteAll(matches[mt]))
			case !slices.Contains(r.archs, f.Path):
				also := ""
				if _, listed := missing[mt]; listed {
					also = fmt.Sprintf("\nand remove `%s` from \"## Missing from archc\"", mt)
				}
				t.Errorf("docs/coverage.md:%d: model_type %s is matched by archs/%s: change its archc cell %q to\n  yes: %s%s",
					r.line, mt, f.Path, cellText(r), quoteAll(matches[mt]), also)
			}
		}
	}
	for _, r := range rows {
		for _, a := range r.archs {
			if !slices.Contains(matches[r.modelType], a) {
				t.Errorf("docs/coverage.md:%d: says archs/%s matches model_type %s, and it does not (matching it: %v)", r.line, a, r.modelType, matches[r.modelType])
			}
		}
		_, listed := missing[r.modelType]
		switch {
		case r.archs == nil && !listed:
			t.Errorf("docs/coverage.md:%d: model_type %s is a no row: list it under \"## Missing from archc\" with what it needs", r.line, r.modelType)
		case r.archs != nil && listed:
			t.Errorf("docs/coverage.md:%d: model_type %s is a yes row: remove it from \"## Missing from archc\" (line %d)", r.line, r.modelType, missing[r.modelType])
		}
	}
	for mt, line := range missing {
		if _, ok := byType[mt]; !ok {
			t.Errorf("docs/coverage.md:%d: %s is listed as missing but has no row in the table", line, mt)
		}
	}
}

func quoteAll(files []string) string {
	q := make([]string, len(files))
	for i, f := range files {
		q[i] = "`" + f + "`"
	}
	return strings.Join(q, ", ")
}

func cellText(r coverageRow) string {
	if r.archs == nil {
		return "no"
	}
	return "yes: " + quoteAll(r.archs)
}
