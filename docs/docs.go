// Package docs holds archc's documentation (arch-language.md,
// adding-a-family.md, families.md, coverage.md, ...). Its Go code writes
// the parts that come from the code, so that they cannot drift: the
// primitive reference, from the primitive table (lower.Primitives, which
// reads lower/primitives.json), the grammar, from the parser
// (dsl.Grammar), and the family table, from archs/*.arch (FamilyTable). `go generate ./docs` rewrites them; TestGenerated fails
// when the checked-in file is stale.
package docs

//go:generate go run ./gen

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/lower"
)

// Files are the documents with generated sections, each with the names of
// the sections it holds.
var Files = map[string][]string{
	"arch-language.md": {"primitives", "grammar"},
	"families.md":      {"families"},
}

// Sections returns the generated sections by name: "primitives",
// "grammar" and "families" (FamilyTable). Errors: a built-in family that
// does not parse.
func Sections() (map[string]string, error) {
	fams, err := FamilyTable()
	if err != nil {
		return nil, err
	}
	return map[string]string{
		"primitives": PrimitiveReference(lower.Primitives(), lower.Registry{}),
		"grammar":    "```ebnf\n" + dsl.Grammar() + "\n```\n",
		"families":   fams,
	}, nil
}

// markers matches a generated section: the begin marker naming it, the
// text, the end marker.
var markers = regexp.MustCompile(`(?s)(<!-- BEGIN GENERATED ([a-z]+)[^\n]*-->\n)(.*?)(<!-- END GENERATED [a-z]+ -->)`)

// Update returns doc with every generated section replaced by its current
// text from sections. Errors: a section name with no generator, an end
// marker that does not match its begin marker.
func Update(doc []byte, sections map[string]string) ([]byte, error) {
	var err error
	out := markers.ReplaceAllFunc(doc, func(m []byte) []byte {
		sm := markers.FindSubmatch(m)
		name := string(sm[2])
		text, ok := sections[name]
		if !ok && err == nil {
			err = fmt.Errorf("generated section %q has no generator (known: primitives, grammar, families)", name)
		}
		if !bytes.Equal(sm[4], []byte("<!-- END GENERATED "+name+" -->")) && err == nil {
			err = fmt.Errorf("generated section %q ends with %s", name, sm[4])
		}
		return []byte(string(sm[1]) + text + string(sm[4]))
	})
	return out, err
}

// PrimitiveReference renders the primitive table as Markdown: an index,
// then one entry per primitive with its signature, math, shapes,
// parameters, attributes with their defaults and the Hugging Face code it
// follows. reg gives the parameter kinds.
func PrimitiveReference(docs []lower.PrimitiveDoc, reg ir.Registry) string {
	var b strings.Builder
	b.WriteString("| primitive | computes |\n|---|---|\n")
	for _, d := range docs {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s |\n", d.Name, anchor(d.Name), code(d.Math))
	}
	for _, d := range docs {
		fmt.Fprintf(&b, "\n### %s\n\n", d.Name)
		attrs := map[string]lower.AttrDoc{}
		for _, a := range d.Attrs {
			attrs[a.Name] = a
		}
		var sig, params []string
		var opts []string
		share := ""
		if p, ok := reg.Primitive(d.Name); ok {
			share = p.ShareState
			for _, q := range p.Params {
				if q.Optional {
					def := "none"
					if a, ok := attrs[q.Name]; ok {
						def = a.Default
						typ := typeName(d.Types[q.Name])
						if q.Kind == ir.Tensor {
							typ = " (tensor)"
						}
						opts = append(opts, fmt.Sprintf("`%s`%s = `%s`: %s", q.Name, typ, a.Default, prose(a.Doc)))
					}
					sig = append(sig, q.Name+": "+def)
					continue
				}
				sig = append(sig, q.Name)
				kind := q.Kind.String()
				if t := d.Types[q.Name]; t != "" {
					kind = strings.TrimPrefix(typeName(t), " ")
				}
				params = append(params, fmt.Sprintf("`%s` %s", q.Name, kind))
			}
		}
		fmt.Fprintf(&b, "```\n%s(%s)\n```\n\n", d.Name, strings.Join(sig, ", "))
		fmt.Fprintf(&b, "- computes: %s\n", code(d.Math))
		fmt.Fprintf(&b, "- shapes: %s\n", code(d.Shapes))
		if len(params) > 0 {
			fmt.Fprintf(&b, "- parameters: %s\n", strings.Join(params, ", "))
		}
		for _, o := range opts {
			fmt.Fprintf(&b, "- keyword `%s\n", strings.TrimPrefix(o, "`"))
		}
		if d.Cache {
			b.WriteString("- owns a KV cache: one attention site per call, per layer")
			if share != "" {
				fmt.Fprintf(&b, ", unless `%s` names an earlier layer whose cache the call reads instead", share)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "- follows: %s\n", prose(d.HF))
	}
	return b.String()
}

// typeName spells an attribute type (primitives.json's) for the
// reference, after a space: enum(a|b) as its quoted choices; "" for none
// (a weight-path keyword).
func typeName(t string) string {
	if inner, ok := strings.CutPrefix(t, "enum("); ok {
		choices := strings.Split(strings.TrimSuffix(inner, ")"), "|")
		for i, c := range choices {
			choices[i] = "`\"" + c + "\"`"
		}
		return " (" + strings.Join(choices, " | ") + ")"
	}
	switch t {
	case "flag_or_name":
		return " (bool or name)"
	case "length":
		return " (length: a non-negative number, floored)"
	case "":
		return ""
	}
	return " (" + t + ")"
}

// anchor is the GitHub heading anchor of a primitive's section.
func anchor(name string) string { return strings.ReplaceAll(strings.ToLower(name), " ", "-") }

// code renders s as a Markdown code span.
func code(s string) string {
	if strings.Contains(s, "`") {
		return "``" + s + "``"
	}
	return "`" + s + "`"
}

// prose escapes the Markdown and HTML characters of free text.
func prose(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "*", `\*`, "|", `\|`, "_", `\_`).Replace(s)
}
