package codegen_test

import (
	"strings"
	"testing"

	"github.com/archc/archc/codegen"
)

var (
	f32  = func(shape ...int64) codegen.Type { return codegen.T("f32", shape...) }
	i32  = func(shape ...int64) codegen.Type { return codegen.T("i32", shape...) }
	dyn  = codegen.Dynamic
	dotN = func(lb, rb, lc, rc codegen.Ints) codegen.Attrs {
		return codegen.Attrs{codegen.A("dot_dimension_numbers", codegen.Struct{Name: "stablehlo.dot", Fields: codegen.Attrs{
			codegen.A("lhs_batching_dimensions", lb), codegen.A("rhs_batching_dimensions", rb),
			codegen.A("lhs_contracting_dimensions", lc), codegen.A("rhs_contracting_dimensions", rc)}})}
	}
	gatherN = codegen.Attrs{
		codegen.A("dimension_numbers", codegen.Struct{Name: "stablehlo.gather", Fields: codegen.Attrs{
			codegen.A("offset_dims", codegen.Ints{2}), codegen.A("collapsed_slice_dims", codegen.Ints{0}),
			codegen.A("start_index_map", codegen.Ints{0}), codegen.A("index_vector_dim", codegen.Int{V: 2})}}),
		codegen.A("slice_sizes", codegen.I64s{1, 64}),
	}
)

// TestVerify builds one small function per case and type-checks it: each
// well-typed case must pass, each ill-typed one must fail naming the op and
// the problem.
func TestVerify(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []codegen.Type
		build   func(f *codegen.Func) codegen.Value
		wantErr string // "" for a well-typed function
	}{
		{name: "add", args: []codegen.Type{f32(2, 3), f32(2, 3)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.add", f32(2, 3), nil, f.Args[0], f.Args[1])
			}},
		{name: "add with a dynamic dimension", args: []codegen.Type{f32(2, dyn), f32(2, dyn)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.add", f32(2, dyn), nil, f.Args[0], f.Args[1])
			}},
		{name: "add of different shapes", args: []codegen.Type{f32(2, 3), f32(3, 2)}, wantErr: "stablehlo.add: operand 1 is tensor<3x2xf32>, the result tensor<2x3xf32>: an elementwise op needs one type",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.add", f32(2, 3), nil, f.Args[0], f.Args[1])
			}},
		{name: "add into another type", args: []codegen.Type{f32(2, 3), f32(2, 3)}, wantErr: "an elementwise op needs one type",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.add", i32(2, 3), nil, f.Args[0], f.Args[1])
			}},
		{name: "add with one operand", args: []codegen.Type{f32(2)}, wantErr: "stablehlo.add: takes 2 operands, got 1",
			build: func(f *codegen.Func) codegen.Value { return f.Op("stablehlo.add", f32(2), nil, f.Args[0]) }},
		{name: "exp of integers", args: []codegen.Type{i32(4)}, wantErr: "element type i32 is not allowed",
			build: func(f *codegen.Func) codegen.Value { return f.Op("stablehlo.exponential", i32(4), nil, f.Args[0]) }},
		{name: "unknown op", args: []codegen.Type{f32(4)}, wantErr: "stablehlo.frobnicate: no type rule",
			build: func(f *codegen.Func) codegen.Value { return f.Op("stablehlo.frobnicate", f32(4), nil, f.Args[0]) }},
		{name: "undefined operand", wantErr: "operand 0 (tensor<4xf32>) is not defined before its use",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.negate", f32(4), nil, codegen.Value{Type: f32(4)})
			}},
		{name: "operand used with another type", args: []codegen.Type{f32(4)}, wantErr: "is used as tensor<8xf32> but defined as tensor<4xf32>",
			build: func(f *codegen.Func) codegen.Value {
				x := f.Args[0]
				x.Type = f32(8)
				return f.Op("stablehlo.negate", f32(8), nil, x)
			}},
		{name: "loop", args: []codegen.Type{f32(4)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Loop(2, []codegen.Value{f.Args[0]}, func(_ codegen.Value, acc []codegen.Value) []codegen.Value {
					return []codegen.Value{f.Op("stablehlo.add", f32(4), nil, acc[0], f.Args[0])}
				})[0]
			}},
		{name: "loop body value used after the loop", args: []codegen.Type{f32(4)}, wantErr: "stablehlo.negate: operand 0 (tensor<4xf32>) is not defined before its use",
			build: func(f *codegen.Func) codegen.Value {
				var inner codegen.Value
				f.Loop(2, []codegen.Value{f.Args[0]}, func(_ codegen.Value, acc []codegen.Value) []codegen.Value {
					inner = f.Op("stablehlo.negate", f32(4), nil, acc[0])
					return []codegen.Value{inner}
				})
				return f.Op("stablehlo.negate", f32(4), nil, inner)
			}},
		{name: "loop body yielding another type", args: []codegen.Type{f32(4), i32(4)}, wantErr: "stablehlo.while: the body's value 1 (%arg1 tensor<4xi32>) is not a value of the body of type tensor<4xf32>",
			build: func(f *codegen.Func) codegen.Value {
				return f.Loop(2, []codegen.Value{f.Args[0]}, func(_ codegen.Value, _ []codegen.Value) []codegen.Value {
					return []codegen.Value{f.Args[1]}
				})[0]
			}},
		{name: "ill-typed op in a loop body", args: []codegen.Type{f32(4), f32(2)}, wantErr: "stablehlo.add: operand 1 is tensor<2xf32>",
			build: func(f *codegen.Func) codegen.Value {
				return f.Loop(2, []codegen.Value{f.Args[0]}, func(_ codegen.Value, acc []codegen.Value) []codegen.Value {
					return []codegen.Value{f.Op("stablehlo.add", f32(4), nil, acc[0], f.Args[1])}
				})[0]
			}},
		{name: "constant", build: func(f *codegen.Func) codegen.Value {
			return f.Op("stablehlo.constant", i32(2), codegen.Attrs{codegen.A("value", codegen.DenseInts{Type: codegen.T("i32", 2), Values: []int64{1, 2}, List: true})})
		}},
		{name: "constant splat", build: func(f *codegen.Func) codegen.Value {
			return f.Op("stablehlo.constant", f32(2, 3), codegen.Attrs{codegen.A("value", codegen.DenseFloats{Type: f32(2, 3), Values: []float64{0.5}})})
		}},
		{name: "constant with too few elements", wantErr: "2 values for tensor<3xi32>",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.constant", i32(3), codegen.Attrs{codegen.A("value", codegen.DenseInts{Type: i32(3), Values: []int64{1, 2}, List: true})})
			}},
		{name: "constant of floats for an integer type", wantErr: "float value for tensor<i32>",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.constant", i32(), codegen.Attrs{codegen.A("value", codegen.DenseFloats{Type: i32(), Values: []float64{1}})})
			}},
		{name: "constant without a value", wantErr: "is not a dense tensor<i32>",
			build: func(f *codegen.Func) codegen.Value { return f.Op("stablehlo.constant", i32(), nil) }},
		{name: "compare of floats as signed", args: []codegen.Type{f32(4), f32(4)}, wantErr: "compare_type SIGNED for tensor<4xf32>",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.compare", codegen.T("i1", 4), codegen.Attrs{
					codegen.A("comparison_direction", codegen.Enum{Dialect: "stablehlo", Kind: "comparison_direction", Value: "LT"}),
					codegen.A("compare_type", codegen.Enum{Dialect: "stablehlo", Kind: "comparison_type", Value: "SIGNED"})}, f.Args[0], f.Args[1])
			}},
		{name: "compare without a direction", args: []codegen.Type{f32(4), f32(4)}, wantErr: `comparison direction ""`,
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.compare", codegen.T("i1", 4), nil, f.Args[0], f.Args[1])
			}},
		{name: "iota with a list for its dimension", wantErr: "attribute iota_dimension is not an integer",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.iota", i32(1, 16), codegen.Attrs{codegen.A("iota_dimension", codegen.I64s{1})})
			}},
		{name: "constant of another type", wantErr: "value of type tensor<2xi32> for a result tensor<3xi32>",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.constant", i32(3), codegen.Attrs{codegen.A("value", codegen.DenseInts{Type: codegen.T("i32", 2), Values: []int64{1, 2}, List: true})})
			}},
		{name: "convert", args: []codegen.Type{f32(2, 3)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.convert", codegen.T("bf16", 2, 3), nil, f.Args[0])
			}},
		{name: "convert changing shape", args: []codegen.Type{f32(2, 3)}, wantErr: "shapes differ",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.convert", codegen.T("bf16", 6), nil, f.Args[0])
			}},
		{name: "bitcast bytes to f16", args: []codegen.Type{codegen.T("i8", 4, 2)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.bitcast_convert", codegen.T("f16", 4), nil, f.Args[0])
			}},
		{name: "bitcast without the width dimension", args: []codegen.Type{codegen.T("i8", 4, 3)}, wantErr: "cannot reinterpret",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.bitcast_convert", codegen.T("f16", 4), nil, f.Args[0])
			}},
		{name: "reshape", args: []codegen.Type{f32(2, 3)},
			build: func(f *codegen.Func) codegen.Value { return f.Op("stablehlo.reshape", f32(3, 1, 2), nil, f.Args[0]) }},
		{name: "reshape losing elements", args: []codegen.Type{f32(16, 64)}, wantErr: "reshapes tensor<16x64xf32> (1024 elements) to tensor<1x1x64xf32> (64)",
			build: func(f *codegen.Func) codegen.Value { return f.Op("stablehlo.reshape", f32(1, 1, 64), nil, f.Args[0]) }},
		{name: "transpose", args: []codegen.Type{f32(2, 3, 4)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.transpose", f32(4, 2, 3), codegen.Attrs{codegen.A("permutation", codegen.I64s{2, 0, 1})}, f.Args[0])
			}},
		{name: "transpose with a repeated dimension", args: []codegen.Type{f32(2, 3)}, wantErr: "permutation [0 0]",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.transpose", f32(2, 2), codegen.Attrs{codegen.A("permutation", codegen.I64s{0, 0})}, f.Args[0])
			}},
		{name: "transpose into the wrong shape", args: []codegen.Type{f32(2, 3)}, wantErr: "gives dimension 0 of size 3, the result says 2",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.transpose", f32(2, 3), codegen.Attrs{codegen.A("permutation", codegen.I64s{1, 0})}, f.Args[0])
			}},
		{name: "broadcast_in_dim", args: []codegen.Type{f32(3)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.broadcast_in_dim", f32(2, 3), codegen.Attrs{codegen.A("broadcast_dimensions", codegen.I64s{1})}, f.Args[0])
			}},
		{name: "broadcast_in_dim of a scalar", args: []codegen.Type{f32()},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.broadcast_in_dim", f32(2, 3), codegen.Attrs{codegen.A("broadcast_dimensions", codegen.I64s{})}, f.Args[0])
			}},
		{name: "broadcast_in_dim onto a different size", args: []codegen.Type{f32(3)}, wantErr: "operand dimension 0 (size 3) cannot broadcast to result dimension 0 (size 2)",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.broadcast_in_dim", f32(2, 3), codegen.Attrs{codegen.A("broadcast_dimensions", codegen.I64s{0})}, f.Args[0])
			}},
		{name: "broadcast_in_dim without its attribute", args: []codegen.Type{f32(3)}, wantErr: "missing attribute broadcast_dimensions",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.broadcast_in_dim", f32(2, 3), nil, f.Args[0])
			}},
		{name: "dynamic_broadcast_in_dim", args: []codegen.Type{f32(), i32(2)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.dynamic_broadcast_in_dim", f32(2, dyn), codegen.Attrs{codegen.A("broadcast_dimensions", codegen.I64s{})}, f.Args[0], f.Args[1])
			}},
		{name: "dynamic_broadcast_in_dim with a short shape", args: []codegen.Type{f32(), i32(1)}, wantErr: "must be a 2-element integer vector",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.dynamic_broadcast_in_dim", f32(2, dyn), codegen.Attrs{codegen.A("broadcast_dimensions", codegen.I64s{})}, f.Args[0], f.Args[1])
			}},
		{name: "iota", build: func(f *codegen.Func) codegen.Value {
			return f.Op("stablehlo.iota", i32(1, 16), codegen.Attrs{codegen.A("iota_dimension", codegen.Int{V: 1, Type: "i64"})})
		}},
		{name: "iota past the rank", wantErr: "iota_dimension 2",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.iota", i32(1, 16), codegen.Attrs{codegen.A("iota_dimension", codegen.Int{V: 2, Type: "i64"})})
			}},
		{name: "dynamic_iota", args: []codegen.Type{i32(1)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.dynamic_iota", i32(dyn), codegen.Attrs{codegen.A("iota_dimension", codegen.Int{V: 0, Type: "i64"})}, f.Args[0])
			}},
		{name: "slice", args: []codegen.Type{f32(4, 6)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.slice", f32(2, 3), codegen.Attrs{codegen.A("start_indices", codegen.I64s{1, 0}), codegen.A("limit_indices", codegen.I64s{3, 6}), codegen.A("strides", codegen.I64s{1, 2})}, f.Args[0])
			}},
		{name: "slice past the end", args: []codegen.Type{f32(4, 6)}, wantErr: "dimension 0: [1, 5) step 1 is not within size 4",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.slice", f32(4, 6), codegen.Attrs{codegen.A("start_indices", codegen.I64s{1, 0}), codegen.A("limit_indices", codegen.I64s{5, 6}), codegen.A("strides", codegen.I64s{1, 1})}, f.Args[0])
			}},
		{name: "slice into the wrong size", args: []codegen.Type{f32(4, 6)}, wantErr: "has 6 elements, the result says 5",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.slice", f32(4, 5), codegen.Attrs{codegen.A("start_indices", codegen.I64s{0, 0}), codegen.A("limit_indices", codegen.I64s{4, 6}), codegen.A("strides", codegen.I64s{1, 1})}, f.Args[0])
			}},
		{name: "dynamic_slice", args: []codegen.Type{f32(4, 6), i32(), i32()},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.dynamic_slice", f32(1, 6), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s{1, 6})}, f.Args[0], f.Args[1], f.Args[2])
			}},
		{name: "dynamic_slice missing a start", args: []codegen.Type{f32(4, 6), i32()}, wantErr: "needs 2 start indices, got 1",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.dynamic_slice", f32(1, 6), codegen.Attrs{codegen.A("slice_sizes", codegen.I64s{1, 6})}, f.Args[0], f.Args[1])
			}},
		{name: "real_dynamic_slice", args: []codegen.Type{f32(4, 6), i32(2), i32(2), i32(2)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.real_dynamic_slice", f32(dyn, 6), nil, f.Args[0], f.Args[1], f.Args[2], f.Args[3])
			}},
		{name: "dynamic_update_slice", args: []codegen.Type{f32(4, 6), f32(1, 6), i32(), i32()},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.dynamic_update_slice", f32(4, 6), nil, f.Args...)
			}},
		{name: "dynamic_update_slice with a larger update", args: []codegen.Type{f32(4, 6), f32(1, 7), i32(), i32()}, wantErr: "update dimension 1 (7) exceeds the operand's (6)",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.dynamic_update_slice", f32(4, 6), nil, f.Args...)
			}},
		{name: "concatenate", args: []codegen.Type{f32(2, 3), f32(2, 1)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.concatenate", f32(2, 4), codegen.Attrs{codegen.A("dimension", codegen.Int{V: 1, Type: "i64"})}, f.Args[0], f.Args[1])
			}},
		{name: "concatenate of mismatched operands", args: []codegen.Type{f32(2, 3), f32(3, 1)}, wantErr: "operand 1 is tensor<3x1xf32>: dimension 0 differs",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.concatenate", f32(2, 4), codegen.Attrs{codegen.A("dimension", codegen.Int{V: 1, Type: "i64"})}, f.Args[0], f.Args[1])
			}},
		{name: "dot_general", args: []codegen.Type{f32(1, 16, 64), f32(32, 64)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.dot_general", f32(1, 16, 32), dotN(codegen.Ints{}, codegen.Ints{}, codegen.Ints{2}, codegen.Ints{1}), f.Args[0], f.Args[1])
			}},
		{name: "dot_general with batching", args: []codegen.Type{f32(2, 4, 8), f32(2, 8, 5)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.dot_general", f32(2, 4, 5), dotN(codegen.Ints{0}, codegen.Ints{0}, codegen.Ints{2}, codegen.Ints{1}), f.Args[0], f.Args[1])
			}},
		{name: "dot_general contracting different sizes", args: []codegen.Type{f32(1, 16, 8), f32(32, 4)}, wantErr: "contracting dimension 2 of tensor<1x16x8xf32> and 1 of tensor<32x4xf32> differ",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.dot_general", f32(1, 16, 32), dotN(codegen.Ints{}, codegen.Ints{}, codegen.Ints{2}, codegen.Ints{1}), f.Args[0], f.Args[1])
			}},
		{name: "dot_general into the wrong shape", args: []codegen.Type{f32(1, 16, 64), f32(32, 64)}, wantErr: "gives tensor<1x16x32xf32>, the result says tensor<1x32xf32>",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.dot_general", f32(1, 32), dotN(codegen.Ints{}, codegen.Ints{}, codegen.Ints{2}, codegen.Ints{1}), f.Args[0], f.Args[1])
			}},
		{name: "gather (an embedding)", args: []codegen.Type{f32(256, 64), i32(1, 16)},
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.gather", f32(1, 16, 64), gatherN, f.Args[0], f.Args[1])
			}},
		{name: "gather into the wrong shape", args: []codegen.Type{f32(256, 64), i32(1, 16)}, wantErr: "gathers tensor<1x16x64xf32>",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.gather", f32(16, 1, 64), gatherN, f.Args[0], f.Args[1])
			}},
		{name: "compare and select", args: []codegen.Type{f32(4), f32(4)},
			build: func(f *codegen.Func) codegen.Value {
				p := f.Op("stablehlo.compare", codegen.T("i1", 4), codegen.Attrs{codegen.A("comparison_direction", codegen.Enum{Dialect: "stablehlo", Kind: "comparison_direction", Value: "LT"}), codegen.A("compare_type", codegen.Enum{Dialect: "stablehlo", Kind: "comparison_type", Value: "FLOAT"})}, f.Args[0], f.Args[1])
				return f.Op("stablehlo.select", f32(4), nil, p, f.Args[0], f.Args[1])
			}},
		{name: "select on a mis-shaped predicate", args: []codegen.Type{codegen.T("i1", 3), f32(4), f32(4)}, wantErr: "predicate tensor<3xi1> does not fit",
			build: func(f *codegen.Func) codegen.Value {
				return f.Op("stablehlo.select", f32(4), nil, f.Args[0], f.Args[1], f.Args[2])
			}},
		{name: "reduce", args: []codegen.Type{f32(2, 3), f32()},
			build: func(f *codegen.Func) codegen.Value { return f.Reduce(f.Args[0], f.Args[1], "stablehlo.add", 1) }},
		{name: "reduce with a shaped init", args: []codegen.Type{f32(2, 3), f32(2)}, wantErr: "init value tensor<2xf32>",
			build: func(f *codegen.Func) codegen.Value { return f.Reduce(f.Args[0], f.Args[1], "stablehlo.add", 1) }},
		{name: "reduce over a missing dimension", args: []codegen.Type{f32(2, 3), f32()}, wantErr: "dimensions [2]",
			build: func(f *codegen.Func) codegen.Value { return f.Reduce(f.Args[0], f.Args[1], "stablehlo.add", 2) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &codegen.Module{Name: "m"}
			f := m.NewFunc("f", tc.args...)
			f.SetLoc("layers.0/q", "llama.arch", 12, 3)
			f.Return(tc.build(f))
			err := m.Verify()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("well-typed function rejected: %v\n%s", err, m.Print())
			case tc.wantErr != "" && err == nil:
				t.Fatalf("ill-typed function accepted, want %q\n%s", tc.wantErr, m.Print())
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("error %q does not contain %q", err, tc.wantErr)
			case tc.wantErr != "" && !strings.HasPrefix(err.Error(), "llama.arch:12:3: layers.0/q (f): "):
				t.Fatalf("error %q does not start with the op's position", err)
			}
		})
	}
}

// TestVerifyGlobals: loads and stores must name an existing global of the
// type used, stores only a mutable one; results must be values of the
// function.
func TestVerifyGlobals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		build   func(m *codegen.Module, f *codegen.Func)
		wantErr string
	}{
		{name: "load and store", build: func(m *codegen.Module, f *codegen.Func) {
			g := codegen.Global{Name: "kv", Type: f32(2), Mutable: true}
			m.AddGlobal(g)
			v := f.GlobalLoad(g)
			f.GlobalStore(g, v)
			f.Return(v)
		}},
		{name: "load of a missing global", wantErr: "no global @w", build: func(m *codegen.Module, f *codegen.Func) {
			f.Return(f.GlobalLoad(codegen.Global{Name: "w", Type: f32(2), Param: "w"}))
		}},
		{name: "load with another type", wantErr: "the load is tensor<3xf32> but the global is tensor<2xf32>", build: func(m *codegen.Module, f *codegen.Func) {
			m.AddGlobal(codegen.Global{Name: "w", Type: f32(2), Param: "w"})
			f.Return(f.GlobalLoad(codegen.Global{Name: "w", Type: f32(3), Param: "w"}))
		}},
		{name: "store into a parameter", wantErr: "global @w is not mutable", build: func(m *codegen.Module, f *codegen.Func) {
			g := codegen.Global{Name: "w", Type: f32(2), Param: "w"}
			m.AddGlobal(g)
			v := f.GlobalLoad(g)
			f.GlobalStore(g, v)
			f.Return(v)
		}},
		{name: "undefined result", wantErr: "result 0", build: func(m *codegen.Module, f *codegen.Func) {
			f.Return(codegen.Value{Type: f32(2)})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &codegen.Module{Name: "m"}
			tc.build(m, m.NewFunc("f"))
			err := m.Verify()
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("got %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestErrorfPosition: builder errors start with the position set by
// SetLoc and name the function; the first error wins.
func TestErrorfPosition(t *testing.T) {
	m := &codegen.Module{Name: "m"}
	f := m.NewFunc("decode_1")
	f.Errorf("before any position")
	if got := f.Err().Error(); got != "decode_1: before any position" {
		t.Errorf("got %q", got)
	}
	f = m.NewFunc("prefill_16")
	f.SetLoc("model.layers.0/attn", "llama.arch", 44, 9)
	f.Errorf("stablehlo.add of %s and %s", f32(1, 16), f32(1, 1))
	f.Errorf("a later error")
	want := "llama.arch:44:9: model.layers.0/attn (prefill_16): stablehlo.add of tensor<1x16xf32> and tensor<1x1xf32>"
	if got := f.Err().Error(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
