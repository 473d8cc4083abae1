package lower

// Per-primitive tests, in the manner of MLIR's FileCheck tests: each
// testdata/prims/<case>.txtar applies one primitive of the table to small
// inputs. gen.py (numpy) writes a case's shapes, attributes, weights, the
// inputs of one or more calls and each call's expected result; this file
// checks
//
//   - TestPrimitiveMLIR: the StableHLO emitted for the case (section
//     out/mlir, byte-exact; go test ./lower -update rewrites it);
//   - TestPrimitiveNumerics: the compiled module's results against numpy's,
//     through iree-compile and the rt/iree worker (skipped without the IREE
//     venv, failed under CI);
//   - TestPrimitiveCoverage: every primitive of the table has a case.
//
// The whole-model goldens (package golden) stay as the integration tier.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/archc/archc/formats/ireetool"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/archc/archc/codegen"
	"github.com/archc/archc/dsl/ir"
	rtensor "github.com/archc/archc/formats/tensor"
	"github.com/archc/archc/internal/golden"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt/iree"
)

// primSpec is a case's case.json section (see gen.py).
type primSpec struct {
	Prim      string                     `json:"prim"`
	Attrs     map[string]json.RawMessage `json:"attrs"`
	Args      []tensorSpec               `json:"args"`
	Weights   []tensorSpec               `json:"weights"`
	Out       []any                      `json:"out"`
	OutDType  string                     `json:"out_dtype"` // the result's dtype when not f32: i1 (a mask, returned as f32 0 and 1)
	Positions bool                       `json:"positions"` // the functions take positions [batch, seq] i32
	// RoPEPositions: the functions take multimodal RoPE positions [3,
	// batch, seq] i32 after positions (fn.ropePositions).
	RoPEPositions bool `json:"rope_positions"`
	Cache         *struct {
		Slots  int64 `json:"slots"`
		MaxLen int64 `json:"max_len"`
	} `json:"cache"` // the functions take slots [batch] i32 and own a KV cache
	// ScoreBytes sets Options.ScoreBytes: a small budget makes attention
	// over a few rows run its queries in blocks.
	ScoreBytes int64 `json:"score_bytes"`
	Calls      []struct {
		Batch int64 `json:"batch"`
		Seq   int64 `json:"seq"`
	} `json:"calls"`
	Tol struct {
		Abs float64 `json:"abs"`
		Rel float64 `json:"rel"`
	} `json:"tol"`
}

// tensorSpec is an argument or weight: shape entries are sizes or the
// symbols "batch" and "seq".
type tensorSpec struct {
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Shape []any  `json:"shape"`
	Node  string `json:"node"` // an argument's IR node kind when not a plain input ("encoded": an encoder's rows)
}

// primCase is one loaded case.
type primCase struct {
	name string
	path string
	ar   *txtar.Archive
	spec primSpec
}

func loadPrimCases(t *testing.T) []*primCase {
	t.Helper()
	files, err := filepath.Glob("testdata/prims/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases in testdata/prims (python3 testdata/prims/gen.py writes them)")
	}
	var out []*primCase
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		c := &primCase{name: strings.TrimSuffix(filepath.Base(file), ".txtar"), path: file, ar: ar}
		js, err := c.section("case.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(js, &c.spec); err != nil {
			t.Fatalf("%s: case.json: %v", file, err)
		}
		out = append(out, c)
	}
	return out
}

func (c *primCase) section(name string) ([]byte, error) {
	for _, f := range c.ar.Files {
		if f.Name == name {
			return f.Data, nil
		}
	}
	return nil, fmt.Errorf("%s: no section %q", c.path, name)
}

// attrs decodes the attributes into the Go values the IR uses: int64 for
// integral JSON numbers, float64 for the others, nested dicts and lists
// likewise.
func (c *primCase) attrs() (map[string]any, error) {
	out := map[string]any{}
	for k, raw := range c.spec.Attrs {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return nil, fmt.Errorf("attr %s: %v", k, err)
		}
		v, err := irValue(v)
		if err != nil {
			return nil, fmt.Errorf("attr %s: %v", k, err)
		}
		out[k] = v
	}
	return out, nil
}

func irValue(v any) (any, error) {
	switch v := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(v.String(), 10, 64); err == nil {
			return i, nil
		}
		return strconv.ParseFloat(v.String(), 64)
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			x, err := irValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			x, err := irValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case nil, bool, string:
		return v, nil
	}
	return nil, fmt.Errorf("unsupported value %v", v)
}

// irShape turns a spec shape into an IR shape.
func irShape(s []any) (ir.Shape, error) {
	out := make(ir.Shape, len(s))
	for i, d := range s {
		switch d {
		case "batch":
			out[i] = ir.Batch
		case "seq":
			out[i] = ir.Seq
		default:
			f, ok := d.(float64)
			if !ok || f != math.Trunc(f) || f < 0 {
				return nil, fmt.Errorf("bad dimension %v", d)
			}
			out[i] = ir.Dim(f)
		}
	}
	return out, nil
}

// primNode builds the case's IR: one input node per argument and the
// primitive's node, shape-checked by its Infer rule. Its weights are
// named <case>.<suffix>, or <case> for a tensor path such as sinks (the
// case name is the node's module when the case has weights), so that
// the cases' globals do not collide in one module.
func (c *primCase) primNode() (*primitive, *ir.Graph, error) {
	p, ok := primitives.lookup(c.spec.Prim)
	if !ok {
		return nil, nil, fmt.Errorf("unknown primitive %q", c.spec.Prim)
	}
	attrs, err := c.attrs()
	if err != nil {
		return nil, nil, err
	}
	g := &ir.Graph{Arch: c.name, File: c.name + ".txtar"}
	n := &ir.Node{Prim: p.Name, Attrs: attrs, Layer: -1, Site: -1, Name: p.Name}
	if len(c.spec.Weights) > 0 { // an optional weight module (attention's sinks) is given only where the case has weights
		n.Module = c.name
	}
	for _, a := range c.spec.Args {
		sh, err := irShape(a.Shape)
		if err != nil {
			return nil, nil, fmt.Errorf("arg %s: %v", a.Name, err)
		}
		prim := "input"
		if a.Node != "" {
			prim = a.Node
		}
		in := &ir.Node{ID: len(g.Nodes), Prim: prim, Type: ir.Type{Shape: sh, DType: ir.DType(a.DType)}, Layer: -1, Site: -1, Name: a.Name}
		g.Nodes = append(g.Nodes, in)
		n.Args = append(n.Args, in)
	}
	if p.Cache {
		n.Site, g.Sites = 0, 1
	}
	n.ID = len(g.Nodes)
	g.Nodes = append(g.Nodes, n)
	if err := p.Infer(n); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", p.Name, err)
	}
	out, err := irShape(c.spec.Out)
	if err != nil {
		return nil, nil, fmt.Errorf("out: %v", err)
	}
	outDType := ir.F32
	if c.spec.OutDType != "" {
		outDType = ir.DType(c.spec.OutDType)
	}
	if want := (ir.Type{Shape: out, DType: outDType}); n.Type.String() != want.String() {
		return nil, nil, fmt.Errorf("%s: shape rule gives %s, the case expects %s", p.Name, n.Type, want)
	}
	if len(n.Weights) != len(c.spec.Weights) {
		return nil, nil, fmt.Errorf("%s reads weights %v, the case has %v", p.Name, n.Weights, c.spec.Weights)
	}
	for i, w := range n.Weights {
		s := c.spec.Weights[i]
		if sh, err := irShape(s.Shape); err != nil || s.Name != w.Name || fmt.Sprint(sh) != fmt.Sprint(ir.Shape(dims(w.Shape))) {
			return nil, nil, fmt.Errorf("%s reads weight %s %v, the case has %s %v", p.Name, w.Name, w.Shape, s.Name, s.Shape)
		}
	}
	g.Weights = n.Weights
	return p, g, nil
}

func dims(xs []int64) []ir.Dim {
	out := make([]ir.Dim, len(xs))
	for i, x := range xs {
		out[i] = ir.Dim(x)
	}
	return out
}

// funcName is the function of call i.
func (c *primCase) funcName(i int) string { return fmt.Sprintf("%s_%d", c.name, i) }

// lower adds the case to m: its weight globals, its KV cache (named
// <case>.kv_cache) and one function per call,
//
//	@<case>_<i>(args..., [positions: [batch, seq] i32], [slots: [batch] i32]) -> result
//
// with batch and seq bound to the call's sizes. With a KV cache, call b's
// keys and values go to slot slots[b] at positions[b, 0] onwards and
// attention reads max(positions) + 1 cache positions, as in decode_B.
func (c *primCase) lower(m *codegen.Module) error {
	p, g, err := c.primNode()
	if err != nil {
		return err
	}
	n := g.Nodes[len(g.Nodes)-1]
	opts := Options{WeightDTypes: map[string]string{}, Slots: 1, MaxLen: 1, ScoreBytes: c.spec.ScoreBytes}
	if cs := c.spec.Cache; cs != nil {
		opts.Slots, opts.MaxLen = cs.Slots, cs.MaxLen
	}
	globals := map[string]codegen.Global{}
	for i, w := range g.Weights {
		opts.WeightDTypes[w.Name] = c.spec.Weights[i].DType
		st, err := opts.storageOf(w.Name)
		if err != nil {
			return err
		}
		t, err := st.globalType(w.Shape)
		if err != nil {
			return err
		}
		gl := codegen.Global{Name: w.Name, Type: t, Param: w.Name}
		m.AddGlobal(gl)
		globals[w.Name] = gl
	}
	cache := newCacheLayout(g, opts)
	// Each case's state globals start at splats after those of the cases
	// before it (kvcache.go: IREE shares the buffer of equal splats).
	mutable := 0
	for _, gl := range m.Globals {
		if gl.Mutable {
			mutable++
		}
	}
	add := func(gls []codegen.Global) {
		for i := range gls {
			gls[i].Name = c.name + "." + gls[i].Name
			gls[i].Init += float64(mutable)
			m.AddGlobal(gls[i])
		}
	}
	for _, grp := range cache.groups {
		add(grp.globals)
	}
	for _, grp := range cache.states.groups {
		add(grp.globals)
	}
	if (p.Cache || len(n.States) > 0) && c.spec.Cache == nil {
		return fmt.Errorf("%s owns per-sequence state: the case needs \"cache\" (slots, max_len)", p.Name)
	}
	if (p.Cache || len(n.States) > 0) && !c.spec.Positions {
		return fmt.Errorf("%s reads positions: the case needs \"positions\": true", p.Name)
	}
	for i, call := range c.spec.Calls {
		B, S := call.Batch, call.Seq
		var args []codegen.Type
		for _, in := range g.Nodes[:len(g.Nodes)-1] {
			args = append(args, maskAsI32(bind(in.Type, B, S)))
		}
		if c.spec.Positions {
			args = append(args, codegen.T("i32", B, S))
		}
		if c.spec.RoPEPositions {
			args = append(args, codegen.T("i32", 3, B, S))
		}
		stateful := p.Cache || len(n.States) > 0
		if stateful {
			args = append(args, codegen.T("i32", B))
		}
		fn := m.NewFunc(c.funcName(i), args...)
		f := newFn(fn, g, opts, globals, cache, B, S)
		for j, in := range g.Nodes[:len(g.Nodes)-1] {
			f.vals[in] = fn.Args[j]
			if in.Type.DType == ir.Bool { // a mask arrives as i32 0/1
				f.vals[in] = f.compare("NE", fn.Args[j], f.broadcast(f.constI32(0), fn.Args[j].Type))
			}
		}
		if c.spec.Positions {
			f.positions = fn.Args[len(g.Nodes)-1]
			f.mkSeqLens = func() codegen.Value { // max position + 1 per row
				return f.add(f.Reduce(f.positions, f.constI32(-1), "stablehlo.maximum", 1), f.broadcast(f.constI32(1), codegen.T("i32", B)))
			}
		}
		if c.spec.RoPEPositions {
			f.ropePositions = fn.Args[len(g.Nodes)]
		}
		if stateful {
			slots := fn.Args[len(fn.Args)-1]
			if p.Cache {
				f.context = f.add(f.Reduce(f.positions, f.constI32(-1), "stablehlo.maximum", 0, 1), f.constI32(1))
			}
			if S > 1 && HasFixedState(g) { // every token of a case's call is real
				f.length = f.constI32(S)
			}
			for b := int64(0); b < B; b++ {
				f.starts = append(f.starts, f.reshape(f.slice(f.positions, []int64{b, 0}, []int64{b + 1, 1})))
				f.slots = append(f.slots, f.reshape(f.slice(slots, []int64{b}, []int64{b + 1})))
			}
		}
		v := p.lower(f, n)
		if want := f.ty(n.Type); v.Type.String() != want.String() && fn.Err() == nil {
			return fmt.Errorf("%s lowered to %s, its shape rule says %s", p.Name, v.Type, want)
		}
		f.storeCaches()
		if v.Type.Elem == "i1" { // a mask returns as f32 0 and 1
			v = f.convert(v, "f32")
		}
		fn.Return(v)
		if err := fn.Err(); err != nil {
			return err
		}
	}
	return nil
}

// maskAsI32 is the type a case's function takes for an argument of type
// t: an i1 mask travels as i32 0/1 (converted to i1 in the function).
func maskAsI32(t codegen.Type) codegen.Type {
	if t.Elem == "i1" {
		return t.WithElem("i32")
	}
	return t
}

// bind is an IR type with batch and seq bound.
func bind(t ir.Type, batch, seq int64) codegen.Type {
	shape := make([]int64, len(t.Shape))
	for i, d := range t.Shape {
		switch d {
		case ir.Batch:
			shape[i] = batch
		case ir.Seq:
			shape[i] = seq
		default:
			shape[i] = int64(d)
		}
	}
	return codegen.T(string(t.DType), shape...)
}

func TestPrimitiveMLIR(t *testing.T) {
	for _, c := range loadPrimCases(t) {
		t.Run(c.name, func(t *testing.T) {
			m := &codegen.Module{Name: c.name}
			if err := c.lower(m); err != nil {
				t.Fatal(err)
			}
			again := &codegen.Module{Name: c.name}
			if err := c.lower(again); err != nil {
				t.Fatal(err)
			}
			got := m.Print()
			if !bytes.Equal(got, again.Print()) {
				t.Fatal("lowering the same case twice gave different bytes")
			}
			ar := *c.ar
			ar.Files = nil
			for _, f := range c.ar.Files {
				if f.Name != "out/mlir" {
					ar.Files = append(ar.Files, f)
				}
			}
			ar.Files = append(ar.Files, txtar.File{Name: "out/mlir", Data: got})
			golden.Check(t, c.path, txtar.Format(&ar))
		})
	}
}

// TestPrimitiveCoverage: every primitive of the table has a case, and
// every case names a primitive of the table.
func TestPrimitiveCoverage(t *testing.T) {
	has := map[string]bool{}
	for _, c := range loadPrimCases(t) {
		if _, ok := primitives.lookup(c.spec.Prim); !ok {
			t.Errorf("%s: unknown primitive %q", c.path, c.spec.Prim)
		}
		has[c.spec.Prim] = true
	}
	for _, name := range (Registry{}).Names() {
		if !has[name] {
			t.Errorf("primitive %s has no case in testdata/prims (add one to gen.py)", name)
		}
	}
}

// primsOnly restricts TestPrimitiveNumerics to some cases (a quicker
// compile while working on one primitive).
var primsOnly = flag.String("prims", "", "TestPrimitiveNumerics: only these comma-separated cases")

// TestPrimitiveNumerics compiles the cases (primModules' groups, each
// split into primPartCount modules that compile at once), runs every call
// in order on its loaded module and holds each result against numpy's:
// |got - want| <= abs + rel·|want|.
func TestPrimitiveNumerics(t *testing.T) {
	testmodels.NeedIREE(t)
	cases := loadPrimCases(t)
	if *primsOnly != "" { // compile only the named cases
		keep := map[string]bool{}
		for _, name := range strings.Split(*primsOnly, ",") {
			keep[name] = true
		}
		var some []*primCase
		for _, c := range cases {
			if keep[c.name] {
				some = append(some, c)
			}
		}
		if len(some) == 0 {
			t.Fatalf("-prims %q names no case", *primsOnly)
		}
		cases = some
	}
	// Each module's weights file and MLIR, built here; then every module
	// compiles at once (at most GOMAXPROCS iree-compiles), then each runs.
	type primModule struct {
		cases  []*primCase
		mlir   []byte
		params []ireetool.Param
		vmfb   string
		err    error
	}
	var mods []*primModule
	for gi, group := range primModules(t, cases) {
		for pi, part := range primParts(t, group, primPartCount) {
			m := &codegen.Module{Name: fmt.Sprintf("prims_%d_%d", gi, pi)}
			pm := &primModule{cases: part}
			var data []byte
			file := filepath.Join(t.TempDir(), "weights.bin")
			for _, c := range part {
				if err := c.lower(m); err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				for _, w := range c.spec.Weights {
					raw, err := c.weightBytes(w)
					if err != nil {
						t.Fatalf("%s: %v", c.name, err)
					}
					pm.params = append(pm.params, ireetool.Param{Name: w.Name, File: file, Offset: int64(len(data)), Length: int64(len(raw))})
					data = append(data, raw...)
				}
			}
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			pm.mlir = m.Print()
			mods = append(mods, pm)
		}
	}
	// A cold compile of all cases in one module took 173 s on 2 cores
	// beside the golden package's compiles, and 64 s alone (1.4 cores);
	// the go test -timeout bounds the whole run.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, pm := range mods {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			pm.vmfb, _, pm.err = ireetool.Compile(ctx, pm.mlir, ireetool.CompileOptions{})
		})
	}
	wg.Wait()
	for _, pm := range mods {
		if pm.err != nil {
			t.Fatalf("cases %v: %v", caseNames(pm.cases), pm.err)
		}
	}
	for _, pm := range mods {
		w, err := iree.Start(context.Background(), iree.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Load(context.Background(), pm.vmfb, pm.params, ""); err != nil {
			w.Close()
			t.Fatal(err)
		}
		for _, c := range pm.cases {
			t.Run(c.name, func(t *testing.T) { c.check(t, w) })
		}
		w.Close()
	}
}

// primPartCount is how many modules TestPrimitiveNumerics splits each
// group of cases into, so that their compiles run at once: one module of
// every case was the longest single compile of a cold CI run (173 s), and
// alone it kept 1.4 of 2 cores busy (64 s). Cold, on a loaded 2-core
// machine: 90 s of CPU in one module, 93 s in two, 100 s in four.
const primPartCount = 2

// primParts splits a group of cases into at most n parts of about equal
// MLIR size (the largest case first into the smallest part), each part's
// cases in their group order.
func primParts(t *testing.T, group []*primCase, n int) [][]*primCase {
	size := make(map[*primCase]int, len(group))
	for _, c := range group {
		m := &codegen.Module{}
		if err := c.lower(m); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		size[c] = len(m.Print())
	}
	bySize := slices.Clone(group)
	slices.SortStableFunc(bySize, func(a, b *primCase) int { return size[b] - size[a] })
	n = min(n, len(group))
	part := make(map[*primCase]int, len(group))
	total := make([]int, n)
	for _, c := range bySize {
		i := slices.Index(total, slices.Min(total))
		part[c] = i
		total[i] += size[c]
	}
	parts := make([][]*primCase, n)
	for _, c := range group {
		parts[part[c]] = append(parts[part[c]], c)
	}
	return parts
}

// primModules groups the cases into modules. Cases share a module unless
// two KV caches would have the same type: IREE 3.13 may let mutable globals
// with equal splat initializers share a buffer (see kvcache.go).
func primModules(t *testing.T, cases []*primCase) [][]*primCase {
	var groups [][]*primCase
	var types []map[string]bool
	for _, c := range cases {
		m := &codegen.Module{}
		if err := c.lower(m); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var mine []string
		for _, g := range m.Globals {
			if g.Mutable {
				mine = append(mine, g.Type.String())
			}
		}
		placed := false
		for i := range groups {
			clash := false
			for _, ty := range mine {
				clash = clash || types[i][ty]
			}
			if !clash {
				groups[i] = append(groups[i], c)
				for _, ty := range mine {
					types[i][ty] = true
				}
				placed = true
				break
			}
		}
		if !placed {
			set := map[string]bool{}
			for _, ty := range mine {
				set[ty] = true
			}
			groups = append(groups, []*primCase{c})
			types = append(types, set)
		}
	}
	return groups
}

func caseNames(cs []*primCase) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

// check runs the case's calls in order and compares each result.
func (c *primCase) check(t *testing.T, w *iree.Worker) {
	_, g, err := c.primNode()
	if err != nil {
		t.Fatal(err)
	}
	n := g.Nodes[len(g.Nodes)-1]
	for i, call := range c.spec.Calls {
		B, S := call.Batch, call.Seq
		var args []rtensor.Tensor
		for _, in := range g.Nodes[:len(g.Nodes)-1] {
			ty := maskAsI32(bind(in.Type, B, S))
			x, err := c.tensor(fmt.Sprintf("call%d/%s", i, in.Name), ty)
			if err != nil {
				t.Fatal(err)
			}
			args = append(args, x)
		}
		if c.spec.Positions {
			x, err := c.tensor(fmt.Sprintf("call%d/positions", i), codegen.T("i32", B, S))
			if err != nil {
				t.Fatal(err)
			}
			args = append(args, x)
		}
		if c.spec.RoPEPositions {
			x, err := c.tensor(fmt.Sprintf("call%d/rope_positions", i), codegen.T("i32", 3, B, S))
			if err != nil {
				t.Fatal(err)
			}
			args = append(args, x)
		}
		if c.spec.Cache != nil {
			x, err := c.tensor(fmt.Sprintf("call%d/slots", i), codegen.T("i32", B))
			if err != nil {
				t.Fatal(err)
			}
			args = append(args, x)
		}
		out := bind(n.Type, B, S).WithElem("f32")
		want, err := c.numbers(fmt.Sprintf("call%d/want", i), out.NumElements(), 64)
		if err != nil {
			t.Fatal(err)
		}
		res, err := w.Call(context.Background(), c.funcName(i), args)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if len(res) != 1 || fmt.Sprint(res[0].Shape) != fmt.Sprint(out.Shape) {
			t.Fatalf("call %d returned %v, want one %v", i, res, out)
		}
		got, err := res[0].F32()
		if err != nil {
			t.Fatal(err)
		}
		bad, worst := 0, 0.0
		for j, wv := range want {
			d := math.Abs(float64(got[j]) - wv)
			worst = math.Max(worst, d)
			if !(d <= c.spec.Tol.Abs+c.spec.Tol.Rel*math.Abs(wv)) {
				if bad < 5 {
					t.Errorf("call %d, element %d (index %v): got %.9g, numpy %.9g (|diff| %.2g)", i, j, unravel(int64(j), out.Shape), got[j], wv, d)
				}
				bad++
			}
		}
		if bad > 0 {
			t.Errorf("call %d: %d of %d values outside abs %g + rel %g", i, bad, len(want), c.spec.Tol.Abs, c.spec.Tol.Rel)
		}
		t.Logf("call %d: %v, max |got - numpy| = %.2g", i, out, worst)
	}
}

func unravel(i int64, shape []int64) []int64 {
	idx := make([]int64, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = i % shape[d]
		i /= shape[d]
	}
	return idx
}

// numbers parses a section of n whitespace-separated numbers, each rounded
// once to bits (32: float32, as the inputs are written; 64: float64).
func (c *primCase) numbers(section string, n int64, bits int) ([]float64, error) {
	data, err := c.section(section)
	if err != nil {
		return nil, err
	}
	fields := strings.Fields(string(data))
	if int64(len(fields)) != n {
		return nil, fmt.Errorf("%s: section %s has %d numbers, want %d", c.path, section, len(fields), n)
	}
	out := make([]float64, n)
	for i, s := range fields {
		if out[i], err = strconv.ParseFloat(s, bits); err != nil {
			return nil, fmt.Errorf("%s: section %s: %v", c.path, section, err)
		}
	}
	return out, nil
}

// tensor reads an f32 or i32 argument of type ty from a section.
func (c *primCase) tensor(section string, ty codegen.Type) (rtensor.Tensor, error) {
	vs, err := c.numbers(section, ty.NumElements(), 32)
	if err != nil {
		return rtensor.Tensor{}, err
	}
	switch ty.Elem {
	case "f32":
		xs := make([]float32, len(vs))
		for i, v := range vs {
			xs[i] = float32(v)
		}
		return rtensor.FromF32(ty.Shape, xs)
	case "i32":
		xs := make([]int32, len(vs))
		for i, v := range vs {
			if xs[i] = int32(v); float64(xs[i]) != v {
				return rtensor.Tensor{}, fmt.Errorf("%s: section %s: %v is not an i32", c.path, section, v)
			}
		}
		return rtensor.FromI32(ty.Shape, xs)
	}
	return rtensor.Tensor{}, fmt.Errorf("%s: section %s: unsupported type %s", c.path, section, ty)
}

// weightBytes returns a weight's stored bytes: f32 sections hold decimals,
// other formats their bytes in hex; the length must match the global.
func (c *primCase) weightBytes(w tensorSpec) ([]byte, error) {
	section := "weight/" + w.Name
	shape, err := irShape(w.Shape)
	if err != nil {
		return nil, err
	}
	logical := make([]int64, len(shape))
	for i, d := range shape {
		logical[i] = int64(d)
	}
	st, err := (Options{WeightDTypes: map[string]string{w.Name: w.DType}}).storageOf(w.Name)
	if err != nil {
		return nil, err
	}
	gt, err := st.globalType(logical)
	if err != nil {
		return nil, err
	}
	size := gt.NumElements() * map[string]int64{"f32": 4, "f16": 2, "bf16": 2, "i8": 1}[gt.Elem]
	var raw []byte
	if w.DType == "f32" {
		vs, err := c.numbers(section, gt.NumElements(), 32)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(float32(v)))
		}
	} else {
		data, err := c.section(section)
		if err != nil {
			return nil, err
		}
		if raw, err = hex.DecodeString(strings.Join(strings.Fields(string(data)), "")); err != nil {
			return nil, fmt.Errorf("%s: section %s: %v", c.path, section, err)
		}
	}
	if int64(len(raw)) != size {
		return nil, fmt.Errorf("%s: section %s holds %d bytes, a %s global needs %d", c.path, section, len(raw), gt, size)
	}
	return raw, nil
}
