package codegen

import (
	"fmt"
	"strconv"
	"strings"
)

// Verify type-checks the module before it is handed to iree-compile, so
// that an ill-typed module is an error with the .arch position of the node
// whose lowering emitted the bad op, never a module that fails later (or,
// worse, compiles). It checks, for every function:
//
//   - each operand is an argument or an earlier result of the function, used
//     with the type it was defined with (a builder placeholder is not);
//   - each op obeys its shape rule (rules below: the constraints of the
//     StableHLO specification for the ops archc emits; an op without a rule
//     is an error, so a new op brings its rule);
//   - globals that are loaded or stored exist, with the type used;
//   - the returned values are defined.
//
// It returns the first violation, formatted like Func.Errorf:
// `llama.arch:44:9: model.layers.0/attention (prefill_16): stablehlo.add: ...`.
func (m *Module) Verify() error {
	globals := map[string]Global{}
	for _, g := range m.Globals {
		globals[g.Name] = g
	}
	for _, f := range m.Funcs {
		if err := f.verify(globals); err != nil {
			return err
		}
	}
	return nil
}

func (f *Func) verify(globals map[string]Global) error {
	defined := map[string]Type{}
	for _, a := range f.Args {
		defined[a.name] = a.Type
	}
	if err := f.verifyOps(f.ops, defined, globals); err != nil {
		return err
	}
	for i, r := range f.Results {
		if t, ok := defined[r.name]; !ok || r.name == "" || t.String() != r.Type.String() {
			return fmt.Errorf("%s: result %d (%s %s) is not a value of the function", f.Name, i, r.name, r.Type)
		}
	}
	return nil
}

// verifyOps checks ops in order in the scope defined, adding each result
// to it (a loop's body in a scope of its own: see checkLoop).
func (f *Func) verifyOps(ops []op, defined map[string]Type, globals map[string]Global) error {
	for _, o := range ops {
		err := checkOperands(o, defined)
		if err == nil && o.loop != nil {
			scope := loopScope(o, defined)
			if err := f.verifyOps(o.loop.ops, scope, globals); err != nil {
				return err // an op of the body, placed where it was emitted
			}
			if err = checkYield(o, scope); err == nil {
				for _, r := range o.results {
					defined[r.name] = r.Type
				}
				continue
			}
		} else if err == nil {
			err = checkOp(o, globals)
		}
		if err != nil {
			return fmt.Errorf("%s: %s: %v", f.context(o.where), o.name, err)
		}
		if o.result != nil {
			defined[o.result.name] = o.result.Type
		}
	}
	return nil
}

func checkOperands(o op, defined map[string]Type) error {
	for i, v := range o.operands {
		t, ok := defined[v.name]
		switch {
		case v.name == "" || !ok:
			return fmt.Errorf("operand %d (%s) is not defined before its use", i, v.Type)
		case t.String() != v.Type.String():
			return fmt.Errorf("operand %d (%s) is used as %s but defined as %s", i, v.name, v.Type, t)
		}
	}
	return nil
}

func checkOp(o op, globals map[string]Global) error {
	switch o.name {
	case "util.global.load":
		g, ok := globals[o.global]
		if !ok {
			return fmt.Errorf("no global @%s", o.global)
		}
		return sameTypes("the load", *o.result, "global", Value{Type: g.Type})
	case "util.global.store":
		g, ok := globals[o.global]
		switch {
		case !ok:
			return fmt.Errorf("no global @%s", o.global)
		case !g.Mutable:
			return fmt.Errorf("global @%s is not mutable", o.global)
		}
		return sameTypes("the stored value", o.operands[0], "global", Value{Type: g.Type})
	case "stablehlo.reduce":
		return checkReduce(o)
	case "stablehlo.sort":
		x := o.operands[0].Type
		if err := distinctIn(o.dims, x.Rank(), "dimension"); err != nil {
			return err
		}
		if x.Elem != "f32" {
			return fmt.Errorf("sorts f32 tensors, got %s", x)
		}
		return sameTypes("the result", *o.result, "operand", o.operands[0])
	}
	rule, ok := rules[o.name]
	if !ok {
		return fmt.Errorf("no type rule for this op (add one to codegen/verify.go)")
	}
	if rule.operands >= 0 && len(o.operands) != rule.operands {
		return fmt.Errorf("takes %d operands, got %d", rule.operands, len(o.operands))
	}
	if o.result == nil {
		return fmt.Errorf("has no result")
	}
	return rule.check(o.operands, o.result.Type, o.attrs)
}

// rule is one row of the rule table: the operand count (-1: variadic) and
// the check of operand types, result type and attributes.
type rule struct {
	operands int
	check    func(x []Value, r Type, attrs Attrs) error
}

// rules holds the shape rule of every op archc emits, by name.
var rules = map[string]rule{
	"stablehlo.add":                      {2, elementwise(numeric)},  // r = x + y
	"stablehlo.subtract":                 {2, elementwise(numeric)},  // r = x - y
	"stablehlo.remainder":                {2, elementwise(numeric)},  // r = x mod y (sign of x), elementwise
	"stablehlo.multiply":                 {2, elementwise(numeric)},  // r = x · y
	"stablehlo.divide":                   {2, elementwise(numeric)},  // r = x / y
	"stablehlo.maximum":                  {2, elementwise(numeric)},  // r = max(x, y)
	"stablehlo.minimum":                  {2, elementwise(numeric)},  // r = min(x, y)
	"stablehlo.and":                      {2, elementwise(logical)},  // r = x & y
	"stablehlo.or":                       {2, elementwise(logical)},  // r = x | y
	"stablehlo.xor":                      {2, elementwise(logical)},  // r = x ^ y
	"stablehlo.shift_left":               {2, elementwise(integer)},  // r = x << y
	"stablehlo.shift_right_logical":      {2, elementwise(integer)},  // r = x >>> y
	"stablehlo.power":                    {2, elementwise(floating)}, // r = xʸ
	"stablehlo.negate":                   {1, elementwise(numeric)},  // r = -x
	"stablehlo.abs":                      {1, elementwise(numeric)},  // r = |x|
	"stablehlo.exponential":              {1, elementwise(floating)}, // r = eˣ
	"stablehlo.exponential_minus_one":    {1, elementwise(floating)}, // r = eˣ − 1
	"stablehlo.logistic":                 {1, elementwise(floating)}, // r = 1 / (1 + e⁻ˣ)
	"stablehlo.rsqrt":                    {1, elementwise(floating)}, // r = 1 / √x
	"stablehlo.sqrt":                     {1, elementwise(floating)}, // r = √x
	"stablehlo.tanh":                     {1, elementwise(floating)}, // r = tanh x
	"stablehlo.log_plus_one":             {1, elementwise(floating)}, // r = log(1 + x)
	"stablehlo.floor":                    {1, elementwise(floating)}, // r = ⌊x⌋
	"chlo.erf":                           {1, elementwise(floating)}, // r = erf x
	"stablehlo.sine":                     {1, elementwise(floating)}, // r = sin x
	"stablehlo.cosine":                   {1, elementwise(floating)}, // r = cos x
	"stablehlo.optimization_barrier":     {1, elementwise(anyElem)},  // r = x, not fused across
	"stablehlo.convert":                  {1, checkConvert},          // r = x in r's element type
	"stablehlo.bitcast_convert":          {1, checkBitcast},          // r = x's bits as r's element type
	"stablehlo.compare":                  {2, checkCompare},          // r = x ⋈ y (i1)
	"stablehlo.select":                   {3, checkSelect},           // r = p ? x : y
	"stablehlo.constant":                 {0, checkConstant},         // r = value
	"stablehlo.iota":                     {0, checkIota},             // r[..., i, ...] = i
	"stablehlo.dynamic_iota":             {1, checkIota},             // iota of a run-time shape
	"stablehlo.reshape":                  {1, checkReshape},          // same elements, new static shape
	"stablehlo.transpose":                {1, checkTranspose},        // r[i...] = x[permuted i...]
	"stablehlo.broadcast_in_dim":         {1, checkBroadcast},        // x's dim i to r's dim dims[i]
	"stablehlo.dynamic_broadcast_in_dim": {2, checkBroadcast},        // broadcast to a run-time shape
	"stablehlo.slice":                    {1, checkSlice},            // static start/limit/strides
	"stablehlo.dynamic_slice":            {-1, checkDynamicSlice},    // sizes static, starts run-time
	"stablehlo.real_dynamic_slice":       {4, checkRealDynamicSlice}, // start/limit/strides run-time
	"stablehlo.dynamic_update_slice":     {-1, checkDynamicUpdate},   // r = x with update at starts
	"stablehlo.concatenate":              {-1, checkConcat},          // operands joined along dimension
	"stablehlo.dot_general":              {2, checkDot},              // batch, lhs free, rhs free
	"stablehlo.gather":                   {2, checkGather},           // slices of x at indices
	"flow.dispatch":                      {-1, checkDispatch},        // a hand-written kernel (opaque)
	"arith.constant":                     {0, checkIndexConstant},    // an index constant
}

// Element kinds.

func isFloat(e string) bool { return e == "f16" || e == "bf16" || e == "f32" || e == "f64" }
func isInteger(e string) bool {
	return e != "i1" && (strings.HasPrefix(e, "i") || strings.HasPrefix(e, "ui"))
}

func floating(e string) bool { return isFloat(e) }
func integer(e string) bool  { return isInteger(e) }
func numeric(e string) bool  { return isFloat(e) || isInteger(e) }
func logical(e string) bool  { return isInteger(e) || e == "i1" }
func anyElem(string) bool    { return true }

// bitWidth is the width of an element type, 0 if unknown.
func bitWidth(e string) int {
	switch e {
	case "i1":
		return 1
	case "f16", "bf16":
		return 16
	}
	for _, p := range []string{"ui", "i", "f"} {
		if n, err := strconv.Atoi(strings.TrimPrefix(e, p)); strings.HasPrefix(e, p) && err == nil {
			return n
		}
	}
	return 0
}

// Shapes. A Dynamic dimension is compatible with every size.

func dimEq(a, b int64) bool { return a == b || a == Dynamic || b == Dynamic }

func shapeEq(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !dimEq(a[i], b[i]) {
			return false
		}
	}
	return true
}

func compatible(a, b Type) bool {
	return a.Index == b.Index && a.Elem == b.Elem && shapeEq(a.Shape, b.Shape)
}

func sameTypes(what string, a Value, other string, b Value) error {
	if !compatible(a.Type, b.Type) {
		return fmt.Errorf("%s is %s but the %s is %s", what, a.Type, other, b.Type)
	}
	return nil
}

func isTensor(t Type) bool { return !t.Index && t.Elem != "" }

// elementwise: operands and result of one type, with an element kind.
func elementwise(kind func(string) bool) func([]Value, Type, Attrs) error {
	return func(x []Value, r Type, _ Attrs) error {
		for i, v := range x {
			if !compatible(v.Type, r) {
				return fmt.Errorf("operand %d is %s, the result %s: an elementwise op needs one type", i, v.Type, r)
			}
		}
		if !isTensor(r) || !kind(r.Elem) {
			return fmt.Errorf("element type %s is not allowed here", r.Elem)
		}
		return nil
	}
}

func checkConvert(x []Value, r Type, _ Attrs) error {
	if !isTensor(x[0].Type) || !isTensor(r) || !shapeEq(x[0].Type.Shape, r.Shape) {
		return fmt.Errorf("converts %s to %s: shapes differ", x[0].Type, r)
	}
	return nil
}

// checkBitcast: equal widths keep the shape; a narrower operand has one
// more, innermost, dimension of width ratio (and a wider one, one less).
func checkBitcast(x []Value, r Type, _ Attrs) error {
	xt := x[0].Type
	xw, rw := bitWidth(xt.Elem), bitWidth(r.Elem)
	switch {
	case xw == 0 || rw == 0:
		return fmt.Errorf("unknown width of %s or %s", xt.Elem, r.Elem)
	case xw == rw && shapeEq(xt.Shape, r.Shape):
		return nil
	case xw < rw && rw%xw == 0 && shapeEq(xt.Shape, append(append([]int64{}, r.Shape...), int64(rw/xw))):
		return nil
	case xw > rw && xw%rw == 0 && shapeEq(r.Shape, append(append([]int64{}, xt.Shape...), int64(xw/rw))):
		return nil
	}
	return fmt.Errorf("cannot reinterpret %s as %s", xt, r)
}

func checkCompare(x []Value, r Type, attrs Attrs) error {
	if !compatible(x[0].Type, x[1].Type) {
		return fmt.Errorf("compares %s with %s", x[0].Type, x[1].Type)
	}
	if r.Elem != "i1" || !shapeEq(r.Shape, x[0].Type.Shape) {
		return fmt.Errorf("result %s must be %s", r, x[0].Type.WithElem("i1"))
	}
	dir := attrs.enum("comparison_direction")
	switch dir {
	case "EQ", "NE", "LT", "LE", "GT", "GE":
	default:
		return fmt.Errorf("comparison direction %q", dir)
	}
	switch kind := attrs.enum("compare_type"); kind {
	case "FLOAT", "SIGNED", "UNSIGNED":
		if (kind == "FLOAT") != isFloat(x[0].Type.Elem) {
			return fmt.Errorf("compare_type %s for %s", kind, x[0].Type)
		}
	default:
		return fmt.Errorf("compare_type %q", kind)
	}
	return nil
}

func checkSelect(x []Value, r Type, _ Attrs) error {
	p, a, b := x[0].Type, x[1].Type, x[2].Type
	if p.Elem != "i1" || (p.Rank() != 0 && !shapeEq(p.Shape, a.Shape)) {
		return fmt.Errorf("predicate %s does not fit %s", p, a)
	}
	if !compatible(a, b) || !compatible(a, r) {
		return fmt.Errorf("selects between %s and %s into %s", a, b, r)
	}
	return nil
}

// checkConstant: value is a dense attribute of the result's type, a
// splat (one value) or every element, integers for an integer type.
func checkConstant(_ []Value, r Type, attrs Attrs) error {
	v, _ := attrs.find("value")
	var t Type
	var n int
	var list bool
	switch v := v.(type) {
	case DenseInts:
		t, n, list = v.Type, len(v.Values), v.List
		if !isInteger(r.Elem) && r.Elem != "i1" {
			return fmt.Errorf("integer value for %s", r)
		}
	case DenseFloats:
		t, n, list = v.Type, len(v.Values), v.List
		if !isFloat(r.Elem) {
			return fmt.Errorf("float value for %s", r)
		}
	default:
		return fmt.Errorf("value %s is not a dense %s", attrs, r)
	}
	switch {
	case t.String() != r.String():
		return fmt.Errorf("value of type %s for a result %s", t, r)
	case r.IsDynamic():
		return fmt.Errorf("a constant cannot be %s", r)
	case list && int64(n) != r.NumElements(), !list && n != 1:
		return fmt.Errorf("%d values for %s", n, r)
	}
	return nil
}

func checkIndexConstant(_ []Value, r Type, _ Attrs) error {
	if !r.Index {
		return fmt.Errorf("result %s is not an index", r)
	}
	return nil
}

func checkIota(x []Value, r Type, attrs Attrs) error {
	d, err := attrs.int("iota_dimension")
	if err != nil {
		return err
	}
	if d < 0 || d >= int64(r.Rank()) || !numeric(r.Elem) {
		return fmt.Errorf("iota_dimension %d of %s", d, r)
	}
	if len(x) == 1 {
		return shapeOperand(x[0].Type, "output shape", r.Rank())
	}
	if r.IsDynamic() {
		return fmt.Errorf("a static iota cannot be %s", r)
	}
	return nil
}

// shapeOperand checks a run-time shape or index operand: rank 1, integer,
// n elements.
func shapeOperand(t Type, what string, n int) error {
	if t.Rank() != 1 || !isInteger(t.Elem) || t.Shape[0] != int64(n) {
		return fmt.Errorf("%s operand %s must be a %d-element integer vector", what, t, n)
	}
	return nil
}

func checkReshape(x []Value, r Type, _ Attrs) error {
	xt := x[0].Type
	switch {
	case xt.Elem != r.Elem:
		return fmt.Errorf("reshapes %s to %s: element types differ", xt, r)
	case r.IsDynamic():
		return fmt.Errorf("result %s must be static", r)
	case xt.NumElements() != Dynamic && xt.NumElements() != r.NumElements():
		return fmt.Errorf("reshapes %s (%d elements) to %s (%d)", xt, xt.NumElements(), r, r.NumElements())
	}
	return nil
}

func checkTranspose(x []Value, r Type, attrs Attrs) error {
	perm, err := attrs.ints("permutation")
	if err != nil {
		return err
	}
	xt := x[0].Type
	if err := distinctIn(perm, xt.Rank(), "permutation"); err != nil {
		return err
	}
	if len(perm) != xt.Rank() || r.Rank() != xt.Rank() || r.Elem != xt.Elem {
		return fmt.Errorf("permutation %v of %s cannot give %s", perm, xt, r)
	}
	for i, p := range perm {
		if !dimEq(r.Shape[i], xt.Shape[p]) {
			return fmt.Errorf("permutation %v of %s gives dimension %d of size %d, the result says %d", perm, xt, i, xt.Shape[p], r.Shape[i])
		}
	}
	return nil
}

// distinctIn checks that xs are distinct and in [0, n).
func distinctIn(xs []int64, n int, what string) error {
	seen := map[int64]bool{}
	for _, d := range xs {
		if d < 0 || d >= int64(n) || seen[d] {
			return fmt.Errorf("%s %v: %d is repeated or outside [0, %d)", what, xs, d, n)
		}
		seen[d] = true
	}
	return nil
}

func checkBroadcast(x []Value, r Type, attrs Attrs) error {
	dims, err := attrs.ints("broadcast_dimensions")
	if err != nil {
		return err
	}
	xt := x[0].Type
	if len(x) == 2 {
		if err := shapeOperand(x[1].Type, "output dimensions", r.Rank()); err != nil {
			return err
		}
	} else if r.IsDynamic() {
		return fmt.Errorf("a static broadcast cannot give %s", r)
	}
	if xt.Elem != r.Elem || len(dims) != xt.Rank() {
		return fmt.Errorf("broadcasts %s with dimensions %v to %s", xt, dims, r)
	}
	if err := distinctIn(dims, r.Rank(), "broadcast_dimensions"); err != nil {
		return err
	}
	for i, d := range dims {
		if xt.Shape[i] != 1 && !dimEq(xt.Shape[i], r.Shape[d]) {
			return fmt.Errorf("operand dimension %d (size %d) cannot broadcast to result dimension %d (size %d) of %s", i, xt.Shape[i], d, r.Shape[d], r)
		}
	}
	return nil
}

func checkSlice(x []Value, r Type, attrs Attrs) error {
	xt := x[0].Type
	var idx [3][]int64
	for i, k := range []string{"start_indices", "limit_indices", "strides"} {
		v, err := attrs.ints(k)
		if err != nil {
			return err
		}
		if len(v) != xt.Rank() {
			return fmt.Errorf("%s %v for an operand of rank %d", k, v, xt.Rank())
		}
		idx[i] = v
	}
	if r.Rank() != xt.Rank() || r.Elem != xt.Elem {
		return fmt.Errorf("slices %s into %s", xt, r)
	}
	for i := range xt.Shape {
		lo, hi, st := idx[0][i], idx[1][i], idx[2][i]
		if lo < 0 || hi < lo || st <= 0 || (xt.Shape[i] != Dynamic && hi > xt.Shape[i]) {
			return fmt.Errorf("dimension %d: [%d, %d) step %d is not within size %d", i, lo, hi, st, xt.Shape[i])
		}
		if n := (hi - lo + st - 1) / st; !dimEq(r.Shape[i], n) {
			return fmt.Errorf("dimension %d: [%d, %d) step %d has %d elements, the result says %d", i, lo, hi, st, n, r.Shape[i])
		}
	}
	return nil
}

// startIndices checks the per-dimension start operands: rank-0 integers.
func startIndices(xs []Value, rank int) error {
	if len(xs) != rank {
		return fmt.Errorf("needs %d start indices, got %d", rank, len(xs))
	}
	for i, v := range xs {
		if v.Type.Rank() != 0 || !isInteger(v.Type.Elem) {
			return fmt.Errorf("start index %d is %s, not an integer scalar", i, v.Type)
		}
	}
	return nil
}

func checkDynamicSlice(x []Value, r Type, attrs Attrs) error {
	if len(x) == 0 {
		return fmt.Errorf("has no operand")
	}
	xt := x[0].Type
	if err := startIndices(x[1:], xt.Rank()); err != nil {
		return err
	}
	sizes, err := attrs.ints("slice_sizes")
	if err != nil {
		return err
	}
	if len(sizes) != xt.Rank() || r.Elem != xt.Elem || !shapeEq(r.Shape, sizes) {
		return fmt.Errorf("slice_sizes %v of %s cannot give %s", sizes, xt, r)
	}
	for i, s := range sizes {
		if s < 0 || (xt.Shape[i] != Dynamic && s > xt.Shape[i]) {
			return fmt.Errorf("slice size %d exceeds dimension %d of %s", s, i, xt)
		}
	}
	return nil
}

func checkRealDynamicSlice(x []Value, r Type, _ Attrs) error {
	xt := x[0].Type
	for i, what := range []string{"start", "limit", "strides"} {
		if err := shapeOperand(x[i+1].Type, what, xt.Rank()); err != nil {
			return err
		}
	}
	if r.Rank() != xt.Rank() || r.Elem != xt.Elem {
		return fmt.Errorf("slices %s into %s", xt, r)
	}
	for i := range r.Shape {
		if r.Shape[i] != Dynamic && xt.Shape[i] != Dynamic && r.Shape[i] > xt.Shape[i] {
			return fmt.Errorf("result dimension %d (%d) exceeds the operand's (%d)", i, r.Shape[i], xt.Shape[i])
		}
	}
	return nil
}

func checkDynamicUpdate(x []Value, r Type, _ Attrs) error {
	if len(x) < 2 {
		return fmt.Errorf("needs an operand and an update")
	}
	xt, ut := x[0].Type, x[1].Type
	if err := startIndices(x[2:], xt.Rank()); err != nil {
		return err
	}
	if ut.Rank() != xt.Rank() || ut.Elem != xt.Elem || !compatible(r, xt) {
		return fmt.Errorf("updates %s with %s into %s", xt, ut, r)
	}
	for i := range ut.Shape {
		if ut.Shape[i] != Dynamic && xt.Shape[i] != Dynamic && ut.Shape[i] > xt.Shape[i] {
			return fmt.Errorf("update dimension %d (%d) exceeds the operand's (%d)", i, ut.Shape[i], xt.Shape[i])
		}
	}
	return nil
}

func checkConcat(x []Value, r Type, attrs Attrs) error {
	d, err := attrs.int("dimension")
	if err != nil {
		return err
	}
	if len(x) == 0 || d < 0 || d >= int64(r.Rank()) {
		return fmt.Errorf("dimension %d of %d operands into %s", d, len(x), r)
	}
	sum := int64(0)
	for i, v := range x {
		t := v.Type
		if t.Rank() != r.Rank() || t.Elem != r.Elem {
			return fmt.Errorf("operand %d is %s, the result %s", i, t, r)
		}
		for j := range t.Shape {
			if int64(j) != d && !dimEq(t.Shape[j], r.Shape[j]) {
				return fmt.Errorf("operand %d is %s: dimension %d differs from the result %s", i, t, j, r)
			}
		}
		if sum != Dynamic && t.Shape[d] != Dynamic {
			sum += t.Shape[d]
		} else {
			sum = Dynamic
		}
	}
	if !dimEq(sum, r.Shape[d]) {
		return fmt.Errorf("joins %d elements along dimension %d, the result %s says %d", sum, d, r, r.Shape[d])
	}
	return nil
}

func checkDot(x []Value, r Type, attrs Attrs) error {
	var dims [4][]int64
	for i, k := range []string{"lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions", "rhs_contracting_dimensions"} {
		v, err := attrs.ints(k)
		if err != nil {
			return err
		}
		dims[i] = v
	}
	l, rh := x[0].Type, x[1].Type
	lb, rb, lc, rc := dims[0], dims[1], dims[2], dims[3]
	if len(lb) != len(rb) || len(lc) != len(rc) {
		return fmt.Errorf("batching %v/%v or contracting %v/%v dimensions differ in number", lb, rb, lc, rc)
	}
	if err := distinctIn(append(append([]int64{}, lb...), lc...), l.Rank(), "lhs dimensions"); err != nil {
		return err
	}
	if err := distinctIn(append(append([]int64{}, rb...), rc...), rh.Rank(), "rhs dimensions"); err != nil {
		return err
	}
	for i := range lb {
		if !dimEq(l.Shape[lb[i]], rh.Shape[rb[i]]) {
			return fmt.Errorf("batching dimension %d of %s and %d of %s differ", lb[i], l, rb[i], rh)
		}
	}
	for i := range lc {
		if !dimEq(l.Shape[lc[i]], rh.Shape[rc[i]]) {
			return fmt.Errorf("contracting dimension %d of %s and %d of %s differ", lc[i], l, rc[i], rh)
		}
	}
	if l.Elem != rh.Elem || r.Elem != l.Elem {
		return fmt.Errorf("multiplies %s by %s into %s: element types differ", l, rh, r)
	}
	var want []int64
	for _, d := range lb {
		want = append(want, l.Shape[d])
	}
	want = append(want, free(l.Shape, lb, lc)...)
	want = append(want, free(rh.Shape, rb, rc)...)
	if !shapeEq(r.Shape, want) {
		return fmt.Errorf("%s · %s gives %s, the result says %s", l, rh, r.With(want...), r)
	}
	return nil
}

// free lists the sizes of the dimensions that are neither batching nor
// contracting, in order.
func free(shape, batch, contract []int64) []int64 {
	var out []int64
	for i, d := range shape {
		if !containsDim(batch, int64(i)) && !containsDim(contract, int64(i)) {
			out = append(out, d)
		}
	}
	return out
}

// checkGather implements the gather shape rule (without operand batching
// dimensions): result dimensions offset_dims take the slice sizes of the
// uncollapsed operand dimensions, in order; the others the indices'
// dimensions other than index_vector_dim.
func checkGather(x []Value, r Type, attrs Attrs) error {
	var lists [4][]int64
	for i, k := range []string{"offset_dims", "collapsed_slice_dims", "start_index_map", "slice_sizes"} {
		v, err := attrs.ints(k)
		if err != nil {
			return err
		}
		lists[i] = v
	}
	offset, collapsed, startMap, sizes := lists[0], lists[1], lists[2], lists[3]
	ivd, err := attrs.int("index_vector_dim")
	if err != nil {
		return err
	}
	xt, it := x[0].Type, x[1].Type
	if !isInteger(it.Elem) || ivd < 0 || ivd > int64(it.Rank()) {
		return fmt.Errorf("indices %s with index_vector_dim %d", it, ivd)
	}
	vec := int64(1)
	if ivd < int64(it.Rank()) {
		vec = it.Shape[ivd]
	}
	if len(sizes) != xt.Rank() || !dimEq(int64(len(startMap)), vec) || r.Elem != xt.Elem {
		return fmt.Errorf("slice_sizes %v and start_index_map %v do not fit %s and indices %s", sizes, startMap, xt, it)
	}
	if err := distinctIn(startMap, xt.Rank(), "start_index_map"); err != nil {
		return err
	}
	if err := distinctIn(collapsed, xt.Rank(), "collapsed_slice_dims"); err != nil {
		return err
	}
	var offSizes []int64
	for i, s := range sizes {
		if s < 0 || (xt.Shape[i] != Dynamic && s > xt.Shape[i]) {
			return fmt.Errorf("slice size %d exceeds dimension %d of %s", s, i, xt)
		}
		if containsDim(collapsed, int64(i)) {
			if s > 1 {
				return fmt.Errorf("collapsed dimension %d has slice size %d", i, s)
			}
			continue
		}
		offSizes = append(offSizes, s)
	}
	var batch []int64
	for i, d := range it.Shape {
		if int64(i) != ivd {
			batch = append(batch, d)
		}
	}
	rank := len(batch) + len(offSizes)
	if len(offset) != len(offSizes) || r.Rank() != rank {
		return fmt.Errorf("offset_dims %v: the result of slicing %s at %s has rank %d, the result is %s", offset, xt, it, rank, r)
	}
	if err := distinctIn(offset, rank, "offset_dims"); err != nil {
		return err
	}
	want := make([]int64, rank)
	k, b := 0, 0
	for i := range want {
		if containsDim(offset, int64(i)) {
			want[i] = offSizes[k]
			k++
		} else {
			want[i] = batch[b]
			b++
		}
	}
	if !shapeEq(r.Shape, want) {
		return fmt.Errorf("gathers %s from %s, the result says %s", r.With(want...), xt, r)
	}
	return nil
}

func checkDispatch(_ []Value, r Type, _ Attrs) error {
	if !isTensor(r) || r.IsDynamic() {
		return fmt.Errorf("result %s must be a static tensor", r)
	}
	return nil
}

func checkReduce(o op) error {
	x, init, r := o.operands[0].Type, o.operands[1].Type, o.result.Type
	if err := distinctIn(o.dims, x.Rank(), "dimensions"); err != nil {
		return err
	}
	if init.Rank() != 0 || init.Elem != x.Elem {
		return fmt.Errorf("init value %s for an operand %s", init, x)
	}
	switch o.body {
	case "stablehlo.add", "stablehlo.maximum", "stablehlo.minimum", "stablehlo.multiply":
	default:
		return fmt.Errorf("body op %s is not a reduction archc knows", o.body)
	}
	var want []int64
	for i, d := range x.Shape {
		if !containsDim(o.dims, int64(i)) {
			want = append(want, d)
		}
	}
	if r.Elem != x.Elem || !shapeEq(r.Shape, want) {
		return fmt.Errorf("reducing %s over %v gives %s, the result says %s", x, o.dims, x.With(want...), r)
	}
	return nil
}
