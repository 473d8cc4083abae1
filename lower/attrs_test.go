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
		{map[string]any{"top_k": int64(2), "softmax": "after", "norm": true}, `norm with softmax "after"`},
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
