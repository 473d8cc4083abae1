package docs_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/docs"
	"github.com/archc/archc/lower"
)

// TestGenerated fails when a generated section of a document (docs.Files)
// is not what `go generate ./docs` writes from the code today.
func TestGenerated(t *testing.T) {
	sections, err := docs.Sections()
	if err != nil {
		t.Fatal(err)
	}
	for file, names := range docs.Files {
		doc, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := docs.Update(doc, sections)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(doc, got) {
			t.Errorf("%s is stale: run `go generate ./docs` (-file +generated):\n%s", file, cmp.Diff(string(doc), string(got)))
		}
		for _, name := range names {
			if !bytes.Contains(doc, []byte("<!-- BEGIN GENERATED "+name+" ")) {
				t.Errorf("%s has no generated %s section", file, name)
			}
		}
	}
	doc, err := os.ReadFile("arch-language.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range lower.Primitives() {
		if !bytes.Contains(doc, []byte("\n### "+p.Name+"\n")) {
			t.Errorf("arch-language.md does not document primitive %s", p.Name)
		}
	}
}

// TestUpdate: a section is replaced between its markers and nothing else
// changes; an unknown section or a mismatched end marker is an error.
func TestUpdate(t *testing.T) {
	in := "a\n<!-- BEGIN GENERATED grammar (do not edit) -->\nold\n<!-- END GENERATED grammar -->\nb\n"
	got, err := docs.Update([]byte(in), map[string]string{"grammar": "new\n"})
	if want := "a\n<!-- BEGIN GENERATED grammar (do not edit) -->\nnew\n<!-- END GENERATED grammar -->\nb\n"; err != nil || string(got) != want {
		t.Errorf("Update = %q, %v; want %q", got, err, want)
	}
	if _, err := docs.Update([]byte(strings.ReplaceAll(in, "grammar", "nope")), nil); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown section: %v", err)
	}
	bad := strings.Replace(in, "END GENERATED grammar", "END GENERATED primitives", 1)
	if _, err := docs.Update([]byte(bad), map[string]string{"grammar": "x\n"}); err == nil {
		t.Error("mismatched end marker: no error")
	}
}

// TestQuotedFamilies: a code block of the docs that quotes a family file
// (it starts with `# NAME.arch —`) is that file, whole and current. (The
// template `archc new` writes, which says "say what differs", is checked
// by cmd/archc's tests.)
func TestQuotedFamilies(t *testing.T) {
	for _, doc := range []string{"arch-language.md", "adding-a-family.md"} {
		text, err := os.ReadFile(doc)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		blocks := strings.Split(string(text), "```")
		for i := 1; i < len(blocks); i += 2 {
			b := strings.TrimPrefix(blocks[i], "\n")
			name, _, ok := strings.Cut(strings.TrimPrefix(b, "# "), ".arch —")
			if !strings.HasPrefix(b, "# ") || !ok || strings.ContainsAny(name, " \n") || strings.Contains(b, "(say what differs") {
				continue
			}
			want, err := os.ReadFile("../archs/" + name + ".arch")
			if err != nil {
				t.Errorf("%s quotes %s.arch: %v", doc, name, err)
				continue
			}
			if diff := cmp.Diff(string(want), b); diff != "" {
				t.Errorf("%s quotes archs/%s.arch, which has changed (-file +quote):\n%s", doc, name, diff)
			}
		}
	}
}
