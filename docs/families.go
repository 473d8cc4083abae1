package docs

import (
	"fmt"
	"slices"
	"strings"

	"github.com/archc/archc/archs"
	"github.com/archc/archc/driver"
	"github.com/archc/archc/dsl"
	"github.com/archc/archc/lower"
)

// FamilyTable renders the built-in families (archs/*.arch) as a Markdown
// table: each family's file, the family it extends, the model_type values
// it matches, the GGUF architectures its gguf section reads, and the
// primitives its blocks and body call (after extends: a block a child
// overrides counts as the child's). Errors: a built-in family that does not
// parse.
func FamilyTable() (string, error) {
	fams, err := driver.BuiltinFamilies()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("| family | extends | model_type | GGUF architecture | primitives |\n|---|---|---|---|---|\n")
	for _, f := range fams {
		src, err := archs.FS.ReadFile(f.Path)
		if err != nil {
			return "", err
		}
		own, err := dsl.Parse(f.Path, src) // before extends is resolved
		if err != nil {
			return "", err
		}
		ext := "—"
		if own.Extends != "" {
			ext = "`" + own.Extends + "`"
		}
		fmt.Fprintf(&b, "| [`%s`](../archs/%s) | %s | %s | %s | %s |\n", f.Name, f.Path, ext,
			codeList(f.ModelTypes()), codeList(f.GGUFArchs()), strings.Join(calledPrimitives(f.File), ", "))
	}
	return b.String(), nil
}

// codeList formats names as code, a " (conditional)" suffix outside the
// code span; "—" for none.
func codeList(names []string) string {
	if len(names) == 0 {
		return "—"
	}
	out := make([]string, len(names))
	for i, n := range names {
		name, cond := strings.CutSuffix(n, " (conditional)")
		out[i] = "`" + name + "`"
		if cond {
			out[i] += " (conditional)"
		}
	}
	return strings.Join(out, ", ")
}

// calledPrimitives lists, sorted, the primitives f's calls name.
func calledPrimitives(f *dsl.File) []string {
	seen := map[string]bool{}
	dsl.Inspect(f, func(n dsl.Node) bool {
		if c, ok := n.(*dsl.Call); ok && !c.Super {
			if _, isPrim := (lower.Registry{}).Primitive(c.Name); isPrim {
				seen[c.Name] = true
			}
		}
		return true
	})
	out := make([]string, 0, len(seen))
	for name := range seen {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
