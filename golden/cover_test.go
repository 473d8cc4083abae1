package golden

import (
	"flag"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/archc/archc/driver"
	"github.com/archc/archc/dsl/ir"
)

// q8All is -q8-all: TestGGUFTwinsExecution runs every fixture's Q8_0 twin
// against its oracle instead of a covering subset (q8Cover).
var q8All = flag.Bool("q8-all", false, "TestGGUFTwinsExecution: run every Q8_0 twin against oracle.q8_0.json, not only a subset covering every (primitive, quantized or f16 weight) and (GGUF transform, quantized or f16 tensor) pair")

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

// primVariant names node n's primitive with its string and bool attributes
// in key order ("experts act=silu layout=flat"): a lowering variant.
func primVariant(n *ir.Node) string {
	v := n.Prim
	for _, k := range slices.Sorted(maps.Keys(n.Attrs)) {
		switch a := n.Attrs[k].(type) {
		case string, bool:
			v += fmt.Sprintf(" %s=%v", k, a)
		}
	}
	return v
}

// q8Variants are what a fixture's Q8_0 twin exercises that its F32 twin
// does not: each primitive (with its string and bool attributes) applied
// to a weight of each stored format but f32, and each load transform of
// the family's gguf section applied to a tensor of each format but f32.
// The F32 twin already pins the family's GGUF mapping and every f32
// tensor's reading (TestGGUFTwinsPlan/Weights/Execution: the tensors a
// Q8_0 file keeps f32, norms, biases, routers, convolutions, are read as
// there); the Q8_0 module differs in how quantized and f16 weights are
// read, which these name. (With the f32 variants the cover took 22
// twins, without them 13: about 130 s of a cold CI run's compiles.)
func q8Variants(q8 string) (map[string]bool, error) {
	p, err := driver.NewPlan(q8, driver.PlanOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range p.Graph.Nodes {
		for _, w := range n.Weights {
			if f := p.Options.WeightDTypes[w.Name]; f != "f32" {
				out[fmt.Sprintf("%s weight %s", primVariant(n), f)] = true
			}
		}
	}
	if p.GGUF != nil {
		for _, w := range p.Graph.Weights {
			if f := p.Options.WeightDTypes[w.Name]; f != "f32" {
				for _, tr := range p.GGUF.Transforms(w.Name) {
					out[fmt.Sprintf("transform %s of %s", tr, f)] = true
				}
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
	t.Logf("Q8_0 twins run against their oracle: %d of %d, covering all %d (primitive, quantized or f16 weight) and (transform, quantized or f16 tensor) variants (-q8-all runs every one)", len(picked), len(dirs), n)
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

// batchedAll is -batched-all: every fixture's execution module carries
// batched decode and the slot copies, and TestExecution checks batched ==
// single on each, instead of on batchedCover's subset.
var batchedAll = flag.Bool("batched-all", false, "TestExecution: compile batched decode and the slot copies for every fixture and check batched == single on each, not only on a subset covering every primitive variant, weight format and kind of per-slot state")

// twoSlotFixtures run in two slots whatever batchedCover picks, because
// other tests need a second slot in TestExecution's module: the
// speculative fixtures (a draft model beside its target, speculation in the
// engine's batches) and phi3-longrope-cross (TestLongRoPEEngineReuse asks
// for two choices, the second copied from the first's slot).
var twoSlotFixtures = append(slices.Clone(specFixtures), "phi3-longrope-cross")

// batchedVariants are what a fixture's batched decode exercises beyond its
// one-sequence decode: each primitive with its string and boolean
// attributes (their lowerings carry the batch dimension, ragged positions
// and per-slot state), each weight format (archc's kernels take two rows),
// and each row kind of its state table by rank and dtype (what decode_2
// gathers and scatters per slot, and what the slot copies move).
func batchedVariants(dir string) (map[string]bool, error) {
	p, err := driver.NewPlan(dir, driver.PlanOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range p.Graph.Nodes {
		out[primVariant(n)] = true
	}
	for _, f := range p.Options.WeightDTypes {
		out["weight "+f] = true
	}
	for _, row := range p.States {
		out[fmt.Sprint("state ", row.Kind, len(row.Shape), row.DType)] = true
	}
	return out, nil
}

// batchedCoverSet is the fixtures (by folder name) whose execution module
// is two-slot: a greedy cover of every fixture's batchedVariants, plus a
// greedy cover of the fixtures with fixed (window or recurrent) state by
// stateVariants, which TestSlotContract runs in two slots, plus
// twoSlotFixtures. Computed once over every fixture under testdata/
// whatever -run selects, so that every test opening a fixture with
// execOptions compiles the same module.
var batchedCoverSet = sync.OnceValues(func() (map[string]bool, error) {
	paths, err := filepath.Glob("testdata/*/config.json")
	if err != nil {
		return nil, err
	}
	var dirs, fixed []string
	var sets, fixedSets []map[string]bool
	out := map[string]bool{}
	for _, p := range paths {
		dir := filepath.Dir(p)
		v, err := batchedVariants(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		dirs, sets = append(dirs, filepath.Base(dir)), append(sets, v)
		sv, err := stateVariants(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		if len(sv) > 0 {
			fixed, fixedSets = append(fixed, filepath.Base(dir)), append(fixedSets, sv)
		}
	}
	picked, _ := cover(dirs, sets)
	pickedFixed, _ := cover(fixed, fixedSets)
	for _, d := range slices.Concat(picked, pickedFixed, twoSlotFixtures) {
		out[d] = true
	}
	return out, nil
})

// stateVariants are what TestSlotContract exercises of a fixture with a
// window or recurrent state (none for one without): each primitive
// variant (primVariant) of a node that declares a state, and each row kind
// of the fixed state by rank and dtype. The reset at position 0, the
// padded row's other buffer, the slot copy and the parity rules are
// state.go's and copy.go's for every such node alike; what differs is the
// state each primitive reads and writes.
func stateVariants(dir string) (map[string]bool, error) {
	p, err := driver.NewPlan(dir, driver.PlanOptions{})
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, row := range p.States {
		if row.Kind.Fixed() {
			out[fmt.Sprint("state ", row.Kind, len(row.Shape), row.DType)] = true
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	for _, n := range p.Graph.Nodes {
		if len(n.States) > 0 {
			out[primVariant(n)] = true
		}
	}
	return out, nil
}

// batchedFixture says whether the fixture in dir compiles batched decode
// and the slot copies (execOptions' two slots) and runs TestExecution's
// batched == single check: under -batched-all or -fixture, for a folder
// that is not a testdata/<name> fixture (the vision fixtures, the MTP
// tests' modules), and for batchedCoverSet's fixtures. The others run
// every other check in one slot: their batched decode is the same
// lowerings, which the covering fixtures run batched.
func batchedFixture(t *testing.T, dir string) bool {
	t.Helper()
	if *batchedAll || *onlyFixture != "" || filepath.Dir(dir) != "testdata" {
		return true
	}
	set, err := batchedCoverSet()
	if err != nil {
		t.Fatal(err)
	}
	return set[filepath.Base(dir)]
}
