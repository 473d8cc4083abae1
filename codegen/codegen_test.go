package codegen

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"github.com/archc/archc/formats/ireetool"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/archc/archc/formats/tensor"
	"github.com/archc/archc/internal/golden"
	"github.com/archc/archc/internal/testmodels"
	"github.com/archc/archc/rt/iree"
)

func TestTypeString(t *testing.T) {
	for _, c := range []struct {
		t    Type
		want string
	}{
		{T("f32"), "tensor<f32>"},
		{T("i32", 4), "tensor<4xi32>"},
		{T("bf16", 2, 3, 4), "tensor<2x3x4xbf16>"},
		{T("f32", 1, Dynamic, 8), "tensor<1x?x8xf32>"},
		{T("i1", 0), "tensor<0xi1>"},
		{IndexType, "index"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("%#v: got %s, want %s", c.t, got, c.want)
		}
	}
}

func TestTypeShapes(t *testing.T) {
	for _, c := range []struct {
		t       Type
		rank    int
		n       int64
		dynamic bool
	}{
		{T("f32"), 0, 1, false},
		{T("f32", 2, 3), 2, 6, false},
		{T("f32", 2, 0), 2, 0, false},
		{T("f32", 2, Dynamic, 3), 3, Dynamic, true},
	} {
		if c.t.Rank() != c.rank || c.t.NumElements() != c.n || c.t.IsDynamic() != c.dynamic {
			t.Errorf("%s: rank %d, elements %d, dynamic %v; want %d, %d, %v", c.t, c.t.Rank(), c.t.NumElements(), c.t.IsDynamic(), c.rank, c.n, c.dynamic)
		}
	}
	x := T("f32", 2, 3)
	if got := x.With(6).String(); got != "tensor<6xf32>" {
		t.Errorf("With: %s", got)
	}
	if got := x.WithElem("i8").String(); got != "tensor<2x3xi8>" {
		t.Errorf("WithElem: %s", got)
	}
	if got := x.With().String(); got != "tensor<f32>" {
		t.Errorf("With(): %s", got)
	}
	if x.String() != "tensor<2x3xf32>" {
		t.Errorf("With and WithElem changed their receiver: %s", x)
	}
}

func TestFloatLit(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0.0e+00"},
		{1, "1.0e+00"},
		{-2.5, "-2.5e+00"},
		{0.1, "1.0e-01"},
		{1e-6, "1.0e-06"},
		{1 / math.Sqrt(8), "3.5355338e-01"},
		{-3.4028234663852886e38, "-3.4028235e+38"},
		{math.Inf(1), "0x7F800000"},
		{math.Inf(-1), "0xFF800000"},
		{math.NaN(), "0x7FC00000"},
	} {
		if got := FloatLit(c.v); got != c.want {
			t.Errorf("FloatLit(%g) = %s, want %s", c.v, got, c.want)
		}
	}
	// Every finite float32 comes back exactly from its literal.
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		v := math.Float32frombits(r.Uint32())
		if math.IsInf(float64(v), 0) || math.IsNaN(float64(v)) {
			continue
		}
		lit := FloatLit(float64(v))
		back, err := strconv.ParseFloat(lit, 32)
		if err != nil || math.Float32bits(float32(back)) != math.Float32bits(v) || !strings.Contains(lit, ".") {
			t.Fatalf("FloatLit(%g) = %s parses back to %g (%v)", v, lit, back, err)
		}
	}
}

// TestAttrsPrint: every kind of attribute value prints as MLIR, in the
// order given.
func TestAttrsPrint(t *testing.T) {
	for _, c := range []struct {
		attrs Attrs
		want  string
	}{
		{Attrs{A("permutation", I64s(nil))}, "permutation = array<i64>"},
		{Attrs{A("permutation", I64s{0, -1, 2})}, "permutation = array<i64: 0, -1, 2>"},
		{Attrs{A("dimension", Int{V: 3, Type: "i64"}), A("x", Int{V: -2})}, "dimension = 3 : i64, x = -2"},
		{Attrs{A("value", DenseInts{Type: T("i32", 5), Values: []int64{0}})}, "value = dense<0> : tensor<5xi32>"},
		{Attrs{A("value", DenseInts{Type: T("i8", 2), Values: []int64{0, 4}, List: true})}, "value = dense<[0, 4]> : tensor<2xi8>"},
		{Attrs{A("value", DenseFloats{Type: T("f32"), Values: []float64{0.5}})}, "value = dense<5.0e-01> : tensor<f32>"},
		{Attrs{A("value", DenseFloats{Type: T("f32", 1), Values: []float64{1}, List: true})}, "value = dense<[1.0e+00]> : tensor<1xf32>"},
		{Attrs{A("comparison_direction", Enum{Dialect: "stablehlo", Kind: "comparison_direction", Value: "LT"})}, "comparison_direction = #stablehlo<comparison_direction LT>"},
		{Attrs{A("dot_dimension_numbers", Struct{Name: "stablehlo.dot", Fields: Attrs{A("lhs_batching_dimensions", Ints(nil)), A("rhs_contracting_dimensions", Ints{3, 4})}})},
			"dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [], rhs_contracting_dimensions = [3, 4]>"},
	} {
		if got := c.attrs.String(); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}

// TestAttrsRead: the verifier reads values, also inside struct values.
func TestAttrsRead(t *testing.T) {
	as := Attrs{A("iota_dimension", Int{V: 1, Type: "i64"}), A("d", Struct{Name: "stablehlo.gather", Fields: Attrs{A("offset_dims", Ints{2}), A("index_vector_dim", Int{V: 2})}}), A("slice_sizes", I64s{1, 64})}
	if d, err := as.int("iota_dimension"); err != nil || d != 1 {
		t.Errorf("iota_dimension: %d, %v", d, err)
	}
	if d, err := as.int("index_vector_dim"); err != nil || d != 2 {
		t.Errorf("index_vector_dim: %d, %v", d, err)
	}
	if l, err := as.ints("offset_dims"); err != nil || fmt.Sprint(l) != "[2]" {
		t.Errorf("offset_dims: %v, %v", l, err)
	}
	if l, err := as.ints("slice_sizes"); err != nil || fmt.Sprint(l) != "[1 64]" {
		t.Errorf("slice_sizes: %v, %v", l, err)
	}
	if _, err := as.ints("iota_dimension"); err == nil || err.Error() != "attribute iota_dimension is not an integer list" {
		t.Errorf("ints of an int: %v", err)
	}
	if _, err := as.int("permutation"); err == nil || err.Error() != "missing attribute permutation" {
		t.Errorf("missing: %v", err)
	}
}

func TestSymbol(t *testing.T) {
	for name, want := range map[string]string{
		"w":                             "w",
		"kv_cache_1":                    "kv_cache_1",
		"_x$Y":                          "_x$Y",
		"model.layers.0.mlp.up.weight":  `"model.layers.0.mlp.up.weight"`,
		"0w":                            `"0w"`,
		"a-b":                           `"a-b"`,
		`quote"d`:                       `"quote\"d"`,
		"lm_head.weight":                `"lm_head.weight"`,
		"model.embed_tokens.weight/q80": `"model.embed_tokens.weight/q80"`,
	} {
		if got := symbol(name); got != want {
			t.Errorf("symbol(%q) = %s, want %s", name, got, want)
		}
	}
}

// lines returns the body lines a function printed (without indentation).
func lines(f *Func) string {
	var sb strings.Builder
	f.print(&sb)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(sb.String()), "\n") {
		out = append(out, strings.TrimSpace(l))
	}
	return strings.Join(out, "\n")
}

func TestFuncOps(t *testing.T) {
	m := &Module{Name: "m"}
	f := m.NewFunc("f", T("f32", 2, 3, 4), T("i32"))
	if f.Args[0].String() != "%arg0" || f.Args[1].String() != "%arg1" || f.Args[1].Type.String() != "tensor<i32>" {
		t.Fatalf("args %v", f.Args)
	}
	x := f.Args[0]
	zero := f.Op("stablehlo.constant", T("f32"), Attrs{A("value", DenseFloats{Type: T("f32"), Values: []float64{0.0e+00}})})
	s := f.Reduce(x, zero, "stablehlo.add", 0, 2)
	if s.Type.String() != "tensor<3xf32>" {
		t.Errorf("reduce over dims 0, 2 of %s gives %s, want tensor<3xf32>", x.Type, s.Type)
	}
	f.SetLoc("layers.0/attn", "llama.arch", 12, 3)
	n := f.Op("stablehlo.negate", s.Type, nil, s)
	i := f.Index(7)
	f.Return(n, f.Args[1])
	want := `func.func @f(%arg0: tensor<2x3x4xf32>, %arg1: tensor<i32>) -> (tensor<3xf32>, tensor<i32>) {
%0 = "stablehlo.constant"() {value = dense<0.0e+00> : tensor<f32>} : () -> tensor<f32>
%1 = "stablehlo.reduce"(%arg0, %0) ({
^bb0(%a: tensor<f32>, %b: tensor<f32>):
%c = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
"stablehlo.return"(%c) : (tensor<f32>) -> ()
}) {dimensions = array<i64: 0, 2>} : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3xf32>
%2 = "stablehlo.negate"(%1) : (tensor<3xf32>) -> tensor<3xf32> loc("layers.0/attn"("llama.arch":12:3))
%3 = arith.constant 7 : index loc("layers.0/attn"("llama.arch":12:3))
func.return %2, %arg1 : tensor<3xf32>, tensor<i32>
}`
	if got := lines(f); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if i.Type.String() != "index" || f.Err() != nil {
		t.Errorf("index %s, err %v", i.Type, f.Err())
	}
}

func TestFuncNoResults(t *testing.T) {
	m := &Module{Name: "m"}
	g := Global{Name: "state", Type: T("f32", 2), Mutable: true}
	m.AddGlobal(g)
	f := m.NewFunc("reset")
	f.GlobalStore(g, f.Op("stablehlo.constant", T("f32", 2), Attrs{A("value", DenseFloats{Type: T("f32", 2), Values: []float64{1.0e+00}})}))
	want := `func.func @reset() -> () {
%0 = "stablehlo.constant"() {value = dense<1.0e+00> : tensor<2xf32>} : () -> tensor<2xf32>
util.global.store %0, @state : tensor<2xf32>
func.return
}`
	if got := lines(f); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestBuilderErrors(t *testing.T) {
	m := &Module{Name: "m"}
	g := Global{Name: "model.cache", Type: T("f32", 2), Mutable: true}
	f := m.NewFunc("decode_1")
	f.GlobalStore(g, f.Op("stablehlo.constant", T("f32", 3), Attrs{A("value", DenseFloats{Type: T("f32", 3), Values: []float64{0.0e+00}})}))
	f.Errorf("second error %d", 2)
	err := f.Err()
	if err == nil || err.Error() != `decode_1: store of tensor<3xf32> into global model.cache of type tensor<2xf32>` {
		t.Fatalf("got %v, want the first error, prefixed with the function name", err)
	}
	// Building continues after an error: ops still get fresh values.
	v := f.Op("stablehlo.add", T("f32"), nil, f.Index(1), f.Index(2))
	if v.String() != "%3" {
		t.Errorf("value after error: %s", v)
	}
	if m2 := (&Module{}); m2.NewFunc("ok").Err() != nil {
		t.Error("a fresh function has an error")
	}
}

// testModule is a module using every printer feature: an executable (when
// kernel is set, with a dispatch to it), a parameter global with a dotted
// name, a mutable global, dynamic shapes, locations and a function without
// results.
func testModule(kernel bool) *Module {
	m := &Module{Name: "codegen_test"}
	if kernel {
		m.AddExecutable("  stream.executable private @kernels {\n    // printed verbatim\n  }")
	}
	w := Global{Name: "p.w", Type: T("f32", 4), Param: "p.w"}
	state := Global{Name: "state", Type: T("f32", 5), Mutable: true}
	m.AddGlobal(w)
	m.AddGlobal(state)

	// sum(x) = Σ x·w
	f := m.NewFunc("sum", T("f32", 4))
	f.SetLoc("sum", "test.arch", 1, 1)
	y := f.Op("stablehlo.multiply", T("f32", 4), nil, f.Args[0], f.GlobalLoad(w))
	f.Return(f.Reduce(y, f.Op("stablehlo.constant", T("f32"), Attrs{A("value", DenseFloats{Type: T("f32"), Values: []float64{0}})}), "stablehlo.add", 0))

	// prefix(x, n) = Σ x[:n], through a tensor<?xf32>
	f = m.NewFunc("prefix", T("f32", 4), T("i32"))
	start := f.Op("stablehlo.constant", T("i32", 1), Attrs{A("value", DenseInts{Type: T("i32", 1), Values: []int64{0}})})
	stride := f.Op("stablehlo.constant", T("i32", 1), Attrs{A("value", DenseInts{Type: T("i32", 1), Values: []int64{1}})})
	limit := f.Op("stablehlo.reshape", T("i32", 1), nil, f.Args[1])
	part := f.Op("stablehlo.real_dynamic_slice", T("f32", Dynamic), nil, f.Args[0], start, limit, stride)
	f.Return(f.Reduce(part, f.Op("stablehlo.constant", T("f32"), Attrs{A("value", DenseFloats{Type: T("f32"), Values: []float64{0}})}), "stablehlo.add", 0))

	// twice(x) = 8·x + 4: three trips of acc ← 2·acc + i from acc = x.
	f = m.NewFunc("twice", T("f32", 4))
	two := f.Op("stablehlo.constant", T("f32", 4), Attrs{A("value", DenseFloats{Type: T("f32", 4), Values: []float64{2}})})
	f.Return(f.Loop(3, []Value{f.Args[0]}, func(i Value, acc []Value) []Value {
		fi := f.Op("stablehlo.broadcast_in_dim", T("f32", 4), Attrs{A("broadcast_dimensions", I64s{})}, f.Op("stablehlo.convert", T("f32"), nil, i))
		return []Value{f.Op("stablehlo.add", T("f32", 4), nil, f.Op("stablehlo.multiply", T("f32", 4), nil, acc[0], two), fi)}
	})[0])

	// reset() stores specials and extremes; get() reads them back.
	f = m.NewFunc("reset")
	var parts []Value
	for _, v := range specials {
		c := f.Op("stablehlo.constant", T("f32"), Attrs{A("value", DenseFloats{Type: T("f32"), Values: []float64{v}})})
		parts = append(parts, f.Op("stablehlo.reshape", T("f32", 1), nil, c))
	}
	f.GlobalStore(state, f.Op("stablehlo.concatenate", state.Type, Attrs{A("dimension", Int{V: 0, Type: "i64"})}, parts...))
	f = m.NewFunc("get")
	f.Return(f.GlobalLoad(state))

	if kernel {
		f = m.NewFunc("dispatch", T("f32", 4))
		n := f.Index(4)
		f.Return(f.Dispatch("kernels", "scale", []Value{n}, T("f32", 4), f.Args[0], n))
	}
	return m
}

// specials are the values reset() stores: literals that need care.
var specials = []float64{math.Inf(1), math.Inf(-1), 0.1, math.MaxFloat32, math.SmallestNonzeroFloat32}

func TestModuleGolden(t *testing.T) {
	got := testModule(true).Print()
	if again := testModule(true).Print(); !bytes.Equal(got, again) {
		t.Fatal("printing the same module twice gave different bytes")
	}
	golden.Check(t, filepath.Join("testdata", "module.mlir"), got)
}

// TestModuleRuns compiles the printed module (without the executable) with
// iree-compile and runs it: the text is valid MLIR and means what it says.
func TestModuleRuns(t *testing.T) {
	testmodels.NeedIREE(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	vmfb, _, err := ireetool.Compile(ctx, testModule(false).Print(), ireetool.CompileOptions{CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	for _, v := range []float32{1, 2, 3, 4} {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
	}
	file := filepath.Join(t.TempDir(), "w.bin")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := iree.Start(ctx, iree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Load(ctx, vmfb, []ireetool.Param{{Name: "p.w", File: file, Length: int64(len(data))}}, ""); err != nil {
		t.Fatal(err)
	}
	call := func(fn string, args ...tensor.Tensor) []float32 {
		t.Helper()
		res, err := w.Call(ctx, fn, args)
		if err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		if len(res) == 0 {
			return nil
		}
		out, err := res[0].F32()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	x, _ := tensor.FromF32([]int64{4}, []float32{1, 10, 100, 1000})
	if got := call("sum", x); len(got) != 1 || got[0] != 4321 {
		t.Errorf("sum = %v, want 4321", got)
	}
	if got := call("prefix", x, tensor.ScalarI32(3)); len(got) != 1 || got[0] != 111 {
		t.Errorf("prefix(x, 3) = %v, want 111", got)
	}
	if got := call("twice", x); fmt.Sprint(got) != "[12 84 804 8004]" {
		t.Errorf("twice(x) = %v, want [12 84 804 8004] (8·x + 4)", got)
	}
	// (No check of the state before reset: IREE folds a mutable global
	// whose only store is a constant into that constant.)
	if got := call("reset"); got != nil {
		t.Errorf("reset returned %v", got)
	}
	got := call("get")
	if len(got) != len(specials) {
		t.Fatalf("state = %v, want %d values", got, len(specials))
	}
	for i, v := range specials {
		if math.Float32bits(got[i]) != math.Float32bits(float32(v)) {
			t.Errorf("state[%d] = %g, want %g (literal %s)", i, got[i], float32(v), FloatLit(v))
		}
	}
}
