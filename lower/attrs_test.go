package lower

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/archc/archc/dsl/ir"
)

// attrDecoder matches the functions that decode or check a primitive's
// attributes: the generated decode<Struct> functions and registry.go's
// decodeX, the shape rules' plan builders, and the untyped readers the
// typed attributes replaced (intAttr, floatAttr, ...), should they return.
var attrDecoder = regexp.MustCompile(`^(decode\w*|\w+Attr|routerOf|expertsLayoutOf|ropeParams|routeBiasShape)$`)

// TestNoDroppedAttrErrors is a vet-style check over lower/*.go: no
// attribute decoder's result is assigned to _ (an attribute error must
// reach the .arch position, never be dropped), and only the generated
// decoders (primitives_gen.go) read a node's untyped Attrs map; lowerings
// and shape rules read the typed struct.
func TestNoDroppedAttrErrors(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, msg := range attrViolations(fset, f, file == "primitives_gen.go") {
			t.Error(msg)
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d files; the glob found %v", checked, files)
	}
}

// attrViolations lists f's dropped decoder results and, unless
// generated, its reads of ir.Node.Attrs.
func attrViolations(fset *token.FileSet, f *ast.File, generated bool) []string {
	var out []string
	ast.Inspect(f, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.AssignStmt:
			if len(x.Rhs) != 1 {
				return true
			}
			call, ok := x.Rhs[0].(*ast.CallExpr)
			if !ok {
				return true
			}
			name := calleeName(call)
			if !attrDecoder.MatchString(name) {
				return true
			}
			for _, l := range x.Lhs {
				if id, ok := l.(*ast.Ident); ok && id.Name == "_" {
					out = append(out, fset.Position(x.Pos()).String()+": the result of "+name+" is assigned to _ (return its error)")
				}
			}
		case *ast.ExprStmt:
			if call, ok := x.X.(*ast.CallExpr); ok && attrDecoder.MatchString(calleeName(call)) {
				out = append(out, fset.Position(x.Pos()).String()+": the result of "+calleeName(call)+" is dropped")
			}
		case *ast.SelectorExpr:
			if pkg, ok := x.X.(*ast.Ident); ok && pkg.Name == "codegen" {
				return true // the codegen.Attrs type, not a node's map
			}
			if x.Sel.Name == "Attrs" && !generated {
				out = append(out, fset.Position(x.Pos()).String()+": reads .Attrs; read the primitive's typed attributes (its <Prim>Attrs argument) instead")
			}
		}
		return true
	})
	return out
}

func calleeName(call *ast.CallExpr) string {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		return fn.Sel.Name
	case *ast.IndexExpr: // a generic instantiation, decodeEnum[T]
		if id, ok := fn.X.(*ast.Ident); ok {
			return id.Name
		}
	}
	return ""
}

// TestAttrViolationsFound: the check finds what it is meant to find.
func TestAttrViolationsFound(t *testing.T) {
	src := `package lower
func f(n *ir.Node) {
	k, _ := intAttr(n, "top_k")
	_, _ = decodeRouteAttrs(n)
	decodeInt("k", 1)
	v := n.Attrs["window"]
	a, err := decodeRouteAttrs(n)
	c := codegen.Attrs{}
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := attrViolations(fset, f, false)
	want := []string{"intAttr is assigned to _", "decodeRouteAttrs is assigned to _", "decodeRouteAttrs is assigned to _", "decodeInt is dropped", "reads .Attrs"}
	if len(got) != len(want) {
		t.Fatalf("got %d violations %q, want %d", len(got), got, len(want))
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("violation %d: %q, want it to contain %q", i, got[i], want[i])
		}
	}
	if g := attrViolations(fset, f, true); len(g) != 4 {
		t.Errorf("generated file: %d violations %q, want the 4 dropped results only", len(g), g)
	}
}

// TestAttrDecodeErrors: a malformed attribute is an error naming it and
// what it must be, raised by the shape rule (where the IR builder adds
// the .arch position); a good one reaches the lowering typed.
func TestAttrDecodeErrors(t *testing.T) {
	logits := &ir.Node{Prim: "input", Type: ir.Type{Shape: ir.Shape{ir.Batch, ir.Seq, 8}, DType: ir.F32}}
	for _, c := range []struct {
		attrs map[string]any
		want  string
	}{
		{map[string]any{"top_k": 2.5}, "top_k must be an int, got 2.5"},
		{map[string]any{"top_k": int64(2), "softmax": "later"}, `softmax must be "before" or "after", got "later"`},
		{map[string]any{"top_k": int64(2), "norm": "yes"}, `norm must be a bool, got "yes"`},
		{map[string]any{"top_k": int64(2), "bias_shape": []any{int64(1), "8"}}, `bias_shape must be a list of ints, got [1 8]`},
		{map[string]any{"top_k": int64(2), "topk_method": "noaux_tc", "n_group": int64(3), "topk_group": int64(1)}, `topk_method "noaux_tc" needs n_group dividing the 8 experts`},
		{map[string]any{"top_k": int64(2), "norm_min": 1e-12}, "norm_min clamps the sum that norm divides by: it needs norm: true"},
		{map[string]any{"top_k": int64(2), "norm_eps": 1e-6}, "norm_eps is added to the sum that norm divides by: it needs norm: true"},
		{map[string]any{"top_k": int64(2), "softmax": "after", "norm": true}, `norm with softmax "after"`},
		{map[string]any{"top_k": int64(2), "topk_method": "sparsemixer"}, `topk_method "sparsemixer" needs jitter_eps >= 0 (router_jitter_noise), got none`},
		{map[string]any{"top_k": int64(2), "jitter_eps": 0.01}, `jitter_eps is the band of topk_method "sparsemixer"`},
		{map[string]any{"top_k": int64(2), "topk_method": "sparsemixer", "jitter_eps": 0.01, "norm": true}, `topk_method "sparsemixer" computes its own weights`},
	} {
		n := &ir.Node{Prim: "route", Args: []*ir.Node{logits}, Attrs: c.attrs}
		err := primitives["route"].Infer(n)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("route %v: got %v, want an error containing %q", c.attrs, err, c.want)
		}
	}
	n := &ir.Node{Prim: "route", Args: []*ir.Node{logits}, Attrs: map[string]any{"top_k": int64(2), "norm": true, "scoring": "sigmoid", "topk_method": "noaux_tc", "n_group": int64(4), "topk_group": int64(2)}}
	if err := primitives["route"].Infer(n); err != nil {
		t.Fatal(err)
	}
	a, ok := n.Decoded.(*RouteAttrs)
	if !ok {
		t.Fatalf("Decoded is %T, want *RouteAttrs", n.Decoded)
	}
	want := router{topK: 2, scoring: scoreSigmoid, selection: routeSelection{grouping: groupTop2, groups: 4, top: 2}, norm: normSum, scale: 1}
	if a.Router != want {
		t.Errorf("router %+v, want %+v", a.Router, want)
	}
}

// TestAttrChecks: each primitive's shape rule refuses bad attribute values
// and combinations by name.
func TestAttrChecks(t *testing.T) {
	f32 := func(shape ...ir.Dim) *ir.Node {
		return &ir.Node{Prim: "input", Type: ir.Type{Shape: shape, DType: ir.F32}}
	}
	x4 := f32(ir.Batch, ir.Seq, 2, 8) // [batch, seq, heads, d]
	x3 := f32(ir.Batch, ir.Seq, 16)   // [batch, seq, hidden]
	w8 := f32(ir.Batch, ir.Seq, 8)    // routing weights over 8 experts
	for _, c := range []struct {
		prim  string
		args  []*ir.Node
		attrs map[string]any
		want  string
	}{
		{"layer_norm", []*ir.Node{x4}, map[string]any{"eps": 1e-5, "per_head": int64(2)}, "per_head must be a bool or a name, got 2"},
		{"layer_norm", []*ir.Node{x4}, map[string]any{"eps": 1e-5, "per_head": ""}, `per_head must be a bool or a name, got ""`},
		{"rms_norm", []*ir.Node{x3}, map[string]any{"eps": nil}, "eps must be a number, got none"},
		{"rope", []*ir.Node{x4}, map[string]any{"theta": 1e4, "rotary_dim": -2.0}, "rotary_dim must be a non-negative number, got -2"},
		{"rope", []*ir.Node{x4}, map[string]any{"theta": 1e4, "rotary_dim": int64(10)}, "rotary_dim must be even and in [2, head_dim=8], got 10"},
		{"rope", []*ir.Node{x4}, map[string]any{"theta": 1e4, "scaling": "yarn"}, `scaling must be a dict or none, got "yarn"`},
		{"rope", []*ir.Node{x4}, map[string]any{"theta": 1e4, "mrope_section": []any{int64(1), int64(1), int64(1)}}, "mrope_section [1 1 1] must be three sections (temporal, height, width) summing to the rotary half-dimension 4 (rotary_dim / 2), got a sum of 3: fix rope_scaling's (rope_parameters') mrope_section"},
		{"rope", []*ir.Node{x4}, map[string]any{"theta": 1e4, "mrope_section": []any{int64(2), int64(2)}}, "mrope_section [2 2] must be three sections"},
		{"rope", []*ir.Node{x4}, map[string]any{"theta": 1e4, "mrope_interleaved": true}, "mrope_interleaved and mrope_restart need mrope_section"},
		{"rope", []*ir.Node{x4}, map[string]any{"theta": 1e4, "scaling": map[string]any{"rope_type": int64(5)}}, `rope_scaling (rope_parameters) "rope_type" must be a string, got 5`},
		{"attention", []*ir.Node{x4, x4, x4}, map[string]any{"window": int64(0)}, "window must be a positive int (tokens) or none, got 0"},
		{"attention", []*ir.Node{x4, x4, x4}, map[string]any{"window": 4.5}, "window must be an int, got 4.5"},
		{"activation", []*ir.Node{x3}, map[string]any{"name": "swish2"}, `activation "swish2" is not supported`},
		{"activation", []*ir.Node{x3}, map[string]any{"name": int64(1)}, "name must be a name (string), got 1"},
		{"clamp", []*ir.Node{x3}, map[string]any{"min": int64(2), "max": 1.0}, "min 2 is above max 1"},
		{"experts", []*ir.Node{x3, w8}, map[string]any{"intermediate": int64(4), "layout": "columns"}, `layout must be "linear" or "transposed" or "flat" or "parameter", got "columns"`},
		{"experts", []*ir.Node{x3, w8}, map[string]any{"intermediate": int64(4), "interleaved": true}, "interleaved needs a fused gate_up tensor (gate_up: NAME)"},
		{"experts", []*ir.Node{x3, w8}, map[string]any{"intermediate": int64(4), "act": "swish2"}, `activation "swish2" is not supported`},
		{"experts", []*ir.Node{x3, w8}, map[string]any{"intermediate": int64(4), "gate": ""}, "gate must be a name, got an empty string"},
		{"experts", []*ir.Node{x3, w8}, map[string]any{"intermediate": int64(4), "alpha": 1.0}, `alpha is clamped_swiglu's: act "silu" does not read it`},
		{"experts", []*ir.Node{x3, w8}, map[string]any{"intermediate": int64(4), "limit": 0.0}, `limit must be positive, got 0 (leave it out for no clamp)`},
		{"experts", []*ir.Node{x3, w8}, map[string]any{"intermediate": int64(4), "gated": false, "gate_up": "gate_up_proj"}, `gated false has no gate projection: it takes neither gate_up, act "clamped_swiglu" nor limit`},
		{"route", []*ir.Node{w8}, map[string]any{"top_k": int64(2), "bias_shape": []any{int64(1), int64(8)}}, "bias_shape needs bias"},
		{"attention", []*ir.Node{x4, x4, x4}, map[string]any{"chunk": int64(0)}, "chunk must be a positive int (tokens) or none, got 0"},
		{"attn_temperature", []*ir.Node{x4}, map[string]any{"floor_scale": 0.0, "attn_scale": 0.1}, "floor_scale must be positive"},
		{"route", []*ir.Node{w8}, map[string]any{"top_k": int64(2), "norm_p": 2.0}, "norm_p is the p-norm that norm divides by: it needs norm: true"},
		{"route", []*ir.Node{w8}, map[string]any{"top_k": int64(2), "norm": true, "norm_p": 0.0}, "norm_p must be a positive finite p, got 0"},
		{"route", []*ir.Node{w8}, map[string]any{"top_k": int64(2), "softmax": "after", "scoring": "sigmoid", "norm": true}, `norm with softmax "after" and scoring "sigmoid"`},
		{"experts", []*ir.Node{x3, w8}, map[string]any{"intermediate": int64(4), "layout": "flat", "gate_up": "gu"}, `layout "flat" is DbrxExpertGLU's`},
		{"experts", []*ir.Node{x3, w8}, map[string]any{"intermediate": int64(4), "weighting": "input", "bias": true}, `weighting "input" with bias`},
		{"expert_linear", []*ir.Node{x3, w8}, map[string]any{"out": int64(4)}, "weights do not come from route: give top_k"},
		{"expert_linear", []*ir.Node{x3, w8}, map[string]any{"out": int64(4), "top_k": int64(3), "reduce": true}, "reduce: x's last dimension 16 must hold top_k 3 equal slot inputs"},
		{"attention", []*ir.Node{x4, x4, x4}, map[string]any{"kv_repeat": "repeat"}, `kv_repeat must be "interleave" or "tile", got "repeat"`},
	} {
		n := &ir.Node{Prim: c.prim, Args: c.args, Attrs: c.attrs, Module: "m"}
		if c.prim == "route" {
			n.Module = ""
		}
		err := primitives[c.prim].Infer(n)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: got %v, want an error containing %q", c.prim, c.attrs, err, c.want)
		}
	}
	// A good experts call: its plan is derived once, in the shape rule.
	n := &ir.Node{Prim: "experts", Args: []*ir.Node{x3, w8}, Module: "m", Attrs: map[string]any{"intermediate": int64(4), "gate_up": "gate_up_proj", "interleaved": true, "layout": "transposed", "act": "clamped_swiglu", "limit": 5.0}}
	if err := primitives["experts"].Infer(n); err != nil {
		t.Fatal(err)
	}
	want := expertsLayout{inter: 4, proj: expertProjections{gate: "gate_proj", up: "up_proj", down: "down_proj", gateUp: "gate_up_proj", interleaved: true}, transposed: true, gate: expertGate{clamped: true, alpha: 1.702, limit: 5}}
	if got := n.Decoded.(*ExpertsAttrs).Plan; got != want {
		t.Errorf("experts plan %+v, want %+v", got, want)
	}
}
