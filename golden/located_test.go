package golden

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/internal/golden"
	"github.com/archc/archc/lower"
)

// locatedFixture reads the fixture a located .arch file names on its first
// line ("... fixture NAME.").
var locatedFixture = regexp.MustCompile(`fixture ([A-Za-z0-9_./-]+[A-Za-z0-9_-])\.`)

// TestLocatedGolden keeps the locations of emitted ops honest, where the
// structural goldens (TestEmitGolden) no longer look: for every primitive
// in lower/primitives.json, testdata/located/<prim>.arch overrides one block
// of a built-in family with a call of it, and testdata/located/<prim>.mlir
// holds every op of that module (one prefill bucket, one decode batch)
// whose location is in that file, with its line:column, under the function
// it is in. A lowering that attaches the wrong node's location, or a parser
// that records the wrong position, changes it; an edit to a built-in family
// does not (its locations are not kept). Each location must name a line
// and column of the file.
func TestLocatedGolden(t *testing.T) {
	prims := lower.Registry{}.Names()
	if len(prims) == 0 {
		t.Fatal("lower.Registry has no primitives")
	}
	files, err := filepath.Glob("testdata/located/*.arch")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".arch"); !slices.Contains(prims, name) {
			t.Errorf("%s: no primitive %q in lower/primitives.json", f, name)
		}
	}
	for _, prim := range prims {
		t.Run(prim, func(t *testing.T) {
			arch := filepath.Join("testdata", "located", prim+".arch")
			src, err := os.ReadFile(arch)
			if err != nil {
				t.Fatalf("no located golden for primitive %s: write %s (a block of a built-in family that calls it; see the others) and run go test ./golden -run TestLocatedGolden -update", prim, arch)
			}
			m := locatedFixture.FindSubmatch(src)
			if m == nil {
				t.Fatalf("%s: the first line must name the fixture it runs on (\"fixture llama-tied.\")", arch)
			}
			p, err := driver.NewPlan(filepath.Join("testdata", string(m[1])), driver.PlanOptions{Arch: arch,
				Lower: lower.Options{PrefillBuckets: []int64{16}, DecodeBatches: []int64{1}}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := locatedLines(p.MLIR, arch, src)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, strings.TrimSuffix(arch, ".arch")+".mlir", got)
		})
	}
}

// locatedLines keeps the lines of mlir whose location is in the .arch file
// arch (source src), and the func.func lines they are under, and checks
// that each such location is a line and column of src.
func locatedLines(mlir []byte, arch string, src []byte) ([]byte, error) {
	lines := strings.Split(string(src), "\n")
	at := regexp.MustCompile(regexp.QuoteMeta(strconv.Quote(arch)) + `:([0-9]+):([0-9]+)`)
	var out bytes.Buffer
	fn := ""
	for _, l := range strings.Split(string(mlir), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "func.func ") {
			fn = l
			continue
		}
		locs := at.FindAllStringSubmatch(l, -1)
		if len(locs) == 0 {
			continue
		}
		for _, loc := range locs {
			line, _ := strconv.Atoi(loc[1])
			col, _ := strconv.Atoi(loc[2])
			if line < 1 || line > len(lines) || col < 1 || col > len(lines[line-1]) {
				return nil, fmt.Errorf("%s: location %s:%s is not in the file: %s", arch, loc[1], loc[2], l)
			}
		}
		if fn != "" {
			out.WriteString(fn + "\n")
			fn = ""
		}
		out.WriteString(l + "\n")
	}
	if out.Len() == 0 {
		return nil, fmt.Errorf("%s: no op of the emitted module is located in it", arch)
	}
	return out.Bytes(), nil
}
