package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/dsl"
	"github.com/archc/archc/internal/golden"
	"github.com/archc/archc/lower"
)

// TestLlamaLineShiftKeepsGoldens is the promise of the structural goldens:
// an edit to llama.arch that only moves lines (here a comment line added
// near the top and one in the middle) changes no fixture's emit.summary. It
// copies archs/*.arch, edits the copy of llama.arch, and emits every
// fixture through the copied families as driver.NewPlan does (the
// family's config block, dsl.Build, lower.Lower with the plan's options):
// unedited, the copies give the built-in bytes exactly (so the test runs
// the same pipeline); edited, every module is the same once locations are
// stripped (golden.StripLocations), while the modules of llama's
// descendants do change with locations kept (so the edit did move their
// lines). The located goldens (TestLocatedGolden) keep only locations in
// their own files, so the edit changes none of them either.
func TestLlamaLineShiftKeepsGoldens(t *testing.T) {
	src := map[string][]byte{}
	files, err := filepath.Glob("../archs/*.arch")
	if err != nil || len(files) == 0 {
		t.Fatalf("no ../archs/*.arch (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src[filepath.Base(f)] = b
	}
	llama := string(src["llama.arch"])
	first, rest, _ := strings.Cut(llama, "\n")
	edited := first + "\n# a comment line added near the top\n" + rest
	edited = strings.Replace(edited, "\n  block layer(x) {", "\n  # and one in the middle\n  block layer(x) {", 1)
	if edited == llama || strings.Count(edited, "\n") != strings.Count(llama, "\n")+2 {
		t.Fatal("the edit of llama.arch did not apply: update this test to the file")
	}
	pristine := families(t, src)
	src["llama.arch"] = []byte(edited)
	shifted := families(t, src)

	moved := 0
	for _, dir := range fixtures(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			p, err := driver.NewPlan(dir, driver.PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := emitWith(t, pristine, p); !bytes.Equal(got, p.MLIR) {
				t.Fatal("the copied families emit other bytes than the built-in ones: this test no longer runs NewPlan's pipeline")
			}
			got := emitWith(t, shifted, p)
			if !bytes.Equal(golden.StripLocations(got), golden.StripLocations(p.MLIR)) {
				t.Error("a comment line added to llama.arch changed the module with locations stripped")
			}
			if !bytes.Equal(got, p.MLIR) {
				moved++
			}
		})
	}
	if moved == 0 && *onlyFixture != "" {
		t.Skipf("-fixture %s: its family does not read llama.arch (the whole run checks that some fixture's does)", *onlyFixture)
	}
	if moved == 0 {
		t.Error("the edit moved no location of any fixture's module: the test proves nothing")
	}
	t.Logf("%d fixtures' locations moved, no stripped module changed", moved)
}

// families parses .arch sources (by file name) as BuiltinFamilies parses
// the embedded ones, by arch name.
func families(t *testing.T, src map[string][]byte) map[string]*driver.Family {
	t.Helper()
	parents := map[string]*dsl.File{}
	for name, b := range src {
		f, err := dsl.Parse(name, b)
		if err != nil {
			t.Fatal(err)
		}
		parents[f.Name] = f
	}
	out := map[string]*driver.Family{}
	for name, b := range src {
		f, err := driver.ParseFamily(name, b, parents)
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = f
	}
	return out
}

// emitWith emits the module of plan p with the family of the same name
// from fams: its config block on the object NewPlan bound (p.Bound), the graph, and
// lower.Lower with p's options.
func emitWith(t *testing.T, fams map[string]*driver.Family, p *driver.Plan) []byte {
	t.Helper()
	fam, ok := fams[p.Family.Name]
	if !ok {
		t.Fatalf("no family %s among the copies", p.Family.Name)
	}
	cfg, err := dsl.EvalConfig(fam.File, p.Bound)
	if err != nil {
		t.Fatal(err)
	}
	encoders, err := driver.BuildEncoders(fam, p.Raw, "config.json", p.Options.EncoderSizes)
	if err != nil {
		t.Fatal(err)
	}
	g, err := dsl.Build(fam.File, cfg, lower.Registry{}, encoders...)
	if err != nil {
		t.Fatal(err)
	}
	m, err := lower.Lower(g, p.Options)
	if err != nil {
		t.Fatal(err)
	}
	return m.Print()
}
