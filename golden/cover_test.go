package golden

import (
	"flag"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/archc/archc/driver"
)

// q8All is -q8-all: TestGGUFTwinsExecution runs every fixture's Q8_0 twin
// against its oracle instead of a covering subset (q8Cover).
var q8All = flag.Bool("q8-all", false, "TestGGUFTwinsExecution: run every Q8_0 twin against oracle.q8_0.json, not only a subset covering every (primitive, quantized weight) and (GGUF transform, quantized weight) pair")

// cover picks, greedily, a subset of items whose variant sets together
// hold every item's variants: the item adding the most variants not yet
// covered first, ties by name. It returns the subset sorted, and the
// number of distinct variants.
func cover(items []string, sets []map[string]bool) ([]string, int) {
	all := map[string]bool{}
	for _, set := range sets {
		for k := range set {
			all[k] = true
		}
	}
	covered := map[string]bool{}
	var picked []string
	for len(covered) < len(all) {
		best, gain := -1, 0
		for i, set := range sets {
			g := 0
			for k := range set {
				if !covered[k] {
					g++
				}
			}
			if g > gain || g == gain && g > 0 && items[i] < items[best] {
				best, gain = i, g
			}
		}
		for k := range sets[best] {
			covered[k] = true
		}
		picked = append(picked, items[best])
	}
	slices.Sort(picked)
	return picked, len(all)
}

// q8Variants are what a fixture's Q8_0 twin exercises that its F32 twin
// does not: each primitive (with its string and bool attributes) applied
// to a weight of each stored format, and each load transform of the
// family's gguf section applied to a tensor of each format. The F32 twin
// already pins the family's GGUF mapping (TestGGUFTwinsPlan/Weights/
// Execution); the Q8_0 module differs in how quantized weights are read,
// which these name.
func q8Variants(q8 string) (map[string]bool, error) {
	p, err := driver.NewPlan(q8, driver.PlanOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range p.Graph.Nodes {
		attrs := ""
		for _, k := range slices.Sorted(maps.Keys(n.Attrs)) {
			switch v := n.Attrs[k].(type) {
			case string, bool:
				attrs += fmt.Sprintf(" %s=%v", k, v)
			}
		}
		for _, w := range n.Weights {
			out[fmt.Sprintf("%s%s weight %s", n.Prim, attrs, p.Options.WeightDTypes[w.Name])] = true
		}
	}
	if p.GGUF != nil {
		for _, w := range p.Graph.Weights {
			for _, tr := range p.GGUF.Transforms(w.Name) {
				out[fmt.Sprintf("transform %s of %s", tr, p.Options.WeightDTypes[w.Name])] = true
			}
		}
	}
	return out, nil
}

// q8Cover is the fixtures (of dirs, each with a model.q8_0.gguf) whose Q8_0
// twins TestGGUFTwinsExecution runs against oracle.q8_0.json: every one
// under -q8-all or -fixture, else a subset covering every q8Variants
// variant. Each Q8_0 twin is a module of its own (quantized weights are
// declared packed), so each costs a cold compile; the subset keeps every
// lowering of a quantized weight and every transform of quantized data
// tested once.
func q8Cover(t *testing.T, dirs []string) map[string]bool {
	t.Helper()
	run := map[string]bool{}
	if *q8All || *onlyFixture != "" || len(dirs) < 2 {
		for _, d := range dirs {
			run[d] = true
		}
		return run
	}
	sets := make([]map[string]bool, len(dirs))
	for i, d := range dirs {
		v, err := q8Variants(filepath.Join(d, "model.q8_0.gguf"))
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		sets[i] = v
	}
	picked, n := cover(dirs, sets)
	t.Logf("Q8_0 twins run against their oracle: %d of %d, covering all %d (primitive, quantized weight) and (transform, quantized weight) variants (-q8-all runs every one)", len(picked), len(dirs), n)
	for _, d := range picked {
		run[d] = true
	}
	return run
}

func TestCover(t *testing.T) {
	items := []string{"a", "b", "c", "d"}
	sets := []map[string]bool{
		{"x": true},
		{"x": true, "y": true},
		{"z": true},
		{"y": true, "z": true},
	}
	got, n := cover(items, sets)
	if n != 3 || !slices.Equal(got, []string{"b", "c"}) {
		t.Errorf("cover = %v, %d; want [b c] (b adds two, then c and d one each: the tie goes by name), 3", got, n)
	}
	if got, n := cover(nil, nil); len(got) != 0 || n != 0 {
		t.Errorf("cover of nothing = %v, %d", got, n)
	}
}
