package dsl

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/archc/archc/dsl/ir"
)

// precedence of binary operators, loosest first; ** is right-associative.
var precedence = map[string]int{
	"??": 1,
	"||": 2,
	"&&": 3,
	"==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4, "in": 4,
	"+": 5, "-": 5,
	"*": 6, "/": 6, "//": 6, "%": 6,
	"**": 7,
}

// tensorOps maps binary operators on tensors to elementwise primitives.
var tensorOps = map[string]string{"+": "add", "-": "sub", "*": "mul", "/": "div"}

// compareOps maps comparison operators on tensors (tensor and tensor, or a
// tensor and a number) to the primitives that give a mask.
var compareOps = map[string]string{"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}

// scope is what names resolve against during evaluation.
type scope struct {
	cfg     map[string]any // evaluated config fields
	locals  map[string]any // bindings: tensors (*ir.Node) and block parameters of any kind
	loopVar string         // loop variable name, "" outside the loop
	index   int64          // loop variable value
	prefix  string         // weight module prefix, e.g. "model.layers.3."
	b       *builder       // nil while evaluating config expressions
	block   *Block         // the block whose body is evaluated, nil outside blocks
	src     GGUFSource     // the GGUF file a gguf section reads, nil elsewhere
}

// expr evaluates e where a value is expected (not a weight position; see
// names.go).
func (s *scope) expr(e *Expr) (any, error) { return s.eval(e, false) }

// eval evaluates e; w says whether e stands in a weight position, where an
// unbound name is a weight module path.
func (s *scope) eval(e *Expr, w bool) (any, error) {
	c, err := s.binary(e.Cond, condWeight(e, w))
	if err != nil || e.Then == nil {
		return c, err
	}
	if cn, ok := c.(*ir.Node); ok && s.b != nil && !w {
		return s.where(e, cn)
	}
	b, ok := c.(bool)
	if !ok {
		return nil, errorf(e.Cond.Pos, "condition of ?: must be bool, got %s %s", typeName(c), show(c))
	}
	if b {
		return s.eval(e.Then, w)
	}
	return s.eval(e.Else, w)
}

// binary evaluates a flat operator run: operands left to right, then the
// operators by precedence (shunting-yard); ** associates to the right. `??`,
// the loosest operator, short-circuits: its operands are evaluated left to
// right up to the first that is not none; so do `||` and `&&`, the next
// loosest (the right side of `true ||` and `false &&` is not evaluated, as
// in Python). Only a lone operand can stand in a weight position.
func (s *scope) binary(e *BinExpr, w bool) (any, error) {
	for i, op := range e.Rest {
		if op.Op != "??" {
			continue
		}
		v, err := s.binary(&BinExpr{Pos: e.Pos, First: e.First, Rest: e.Rest[:i]}, false)
		if err != nil || v != nil {
			return v, err
		}
		return s.binary(&BinExpr{Pos: op.Right.Pos, First: op.Right, Rest: e.Rest[i+1:]}, false)
	}
	for _, logical := range []string{"||", "&&"} { // the next loosest: short-circuit too
		for i, op := range e.Rest {
			if op.Op != logical {
				continue
			}
			l, err := s.binary(&BinExpr{Pos: e.Pos, First: e.First, Rest: e.Rest[:i]}, false)
			if err != nil {
				return nil, err
			}
			if b, ok := l.(bool); ok && b == (logical == "||") {
				return b, nil // true || ..., false && ...: the right side is not evaluated
			}
			r, err := s.binary(&BinExpr{Pos: op.Right.Pos, First: op.Right, Rest: e.Rest[i+1:]}, false)
			if err != nil {
				return nil, err
			}
			return s.apply(op, l, r)
		}
	}
	first, err := s.unary(e.First, firstWeight(e, w))
	if err != nil {
		return nil, err
	}
	vals := []any{first}
	names := []string{operandName(e.First)} // a config name per operand, for errors ("" for others)
	var ops []*BinOp
	reduce := func() error {
		op := ops[len(ops)-1]
		ops = ops[:len(ops)-1]
		l, r := vals[len(vals)-2], vals[len(vals)-1]
		v, err := s.apply(op, l, r)
		if err != nil {
			err = nameOperands(err, names[len(names)-2:], []any{l, r})
		}
		vals, names = append(vals[:len(vals)-2], v), append(names[:len(names)-2], "")
		return err
	}
	for _, op := range e.Rest {
		for len(ops) > 0 {
			top := precedence[ops[len(ops)-1].Op]
			if top < precedence[op.Op] || (top == precedence[op.Op] && op.Op == "**") {
				break
			}
			if err := reduce(); err != nil {
				return nil, err
			}
		}
		v, err := s.unary(op.Right, false)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
		vals, names = append(vals, v), append(names, operandName(op.Right))
	}
	for len(ops) > 0 {
		if err := reduce(); err != nil {
			return nil, err
		}
	}
	return vals[0], nil
}

// operandName is the name path an operand is (`num_experts`,
// `rope_scaling.factor`), or "" for any other operand.
func operandName(u *Unary) string {
	if u.Op != "" || len(u.Index) > 0 || u.Operand.Path == nil {
		return ""
	}
	parts := make([]string, len(u.Operand.Path.Segs))
	for i, sg := range u.Operand.Path.Segs {
		if sg.Name == "" {
			return ""
		}
		parts[i] = sg.Name
	}
	return strings.Join(parts, ".")
}

// nameOperands adds to an operator's error the config names among its
// operands and their values (`division by zero (decoder_sparse_step is
// 0)`), so that the message says which config key to fix. Tensors are
// left out.
func nameOperands(err error, names []string, vals []any) error {
	var notes []string
	for i, n := range names {
		if _, tensor := vals[i].(*ir.Node); n == "" || tensor {
			continue
		}
		notes = append(notes, n+" is "+show(vals[i]))
	}
	if len(notes) == 0 {
		return err
	}
	var e *Error
	if errors.As(err, &e) {
		out := *e
		out.Msg += " (" + strings.Join(notes, ", ") + ")"
		return &out
	}
	return fmt.Errorf("%w (%s)", err, strings.Join(notes, ", "))
}

func (s *scope) apply(op *BinOp, l, r any) (any, error) {
	n, f, ts := tensorScalar(l, r)
	switch {
	case ts && s.b != nil && (op.Op == "*" || (op.Op == "/" && n == l)):
		if op.Op == "/" { // torch's tensor / float divides (not a multiply by 1/f)
			return s.b.node(op.Pos, "divide", []*ir.Node{n}, module{}, map[string]any{"divisor": f})
		}
		return s.b.node(op.Pos, "scale", []*ir.Node{n}, module{}, map[string]any{"factor": f})
	case ts && s.b != nil && op.Op == "**" && n == l: // torch.pow(x, n): the exponent keeps its kind
		return s.b.node(op.Pos, "pow", []*ir.Node{n}, module{}, map[string]any{"exponent": r})
	case ts && s.b != nil && compareOps[op.Op] != "": // x > 0.0: the number as full_like(x, 0.0)
		c, err := s.b.node(op.Pos, "full_like", []*ir.Node{n}, module{}, map[string]any{"value": f})
		if err != nil {
			return nil, err
		}
		args := []*ir.Node{n, c}
		if n == r {
			args = []*ir.Node{c, n}
		}
		return s.b.node(op.Pos, compareOps[op.Op], args, module{}, nil)
	}
	if ln, ok := l.(*ir.Node); ok {
		rn, ok := r.(*ir.Node)
		prim, known := tensorOps[op.Op]
		if !known {
			prim, known = compareOps[op.Op]
		}
		if !ok || !known || s.b == nil {
			return nil, errorf(op.Pos, "operator %s is not defined on %s and %s", op.Op, operand(l), operand(r))
		}
		return s.b.node(op.Pos, prim, []*ir.Node{ln, rn}, module{}, nil)
	}
	if _, ok := r.(*ir.Node); ok {
		return nil, errorf(op.Pos, "operator %s is not defined on %s and tensor", op.Op, operand(l))
	}
	v, err := scalarOp(op.Op, l, r)
	if err != nil {
		return nil, errorf(op.Pos, "%v", err)
	}
	return v, nil
}

// where evaluates `c ? a : b` with a tensor condition c (a mask): both
// branches, a number among them as full_like(c, number), then where.
func (s *scope) where(e *Expr, c *ir.Node) (any, error) {
	var branches []*ir.Node
	for _, br := range []*Expr{e.Then, e.Else} {
		v, err := s.expr(br)
		if err != nil {
			return nil, err
		}
		switch x := v.(type) {
		case *ir.Node:
			branches = append(branches, x)
		case int64, float64:
			f, _ := number(x)
			n, err := s.b.node(br.Pos, "full_like", []*ir.Node{c}, module{}, map[string]any{"value": f})
			if err != nil {
				return nil, err
			}
			branches = append(branches, n)
		default:
			return nil, errorf(br.Pos, "a branch of ?: with a tensor condition must be a tensor or a number, got %s %s", typeName(v), show(v))
		}
	}
	return s.b.node(e.Pos, "where", []*ir.Node{c, branches[0], branches[1]}, module{}, nil)
}

// operand describes a non-tensor operand for an error message.
func operand(v any) string {
	if _, ok := v.(*ir.Node); ok {
		return "tensor"
	}
	return typeName(v) + " " + show(v)
}

// tensorScalar matches a tensor and a number in either order.
func tensorScalar(l, r any) (*ir.Node, float64, bool) {
	if n, ok := l.(*ir.Node); ok {
		f, ok := number(r)
		return n, f, ok
	}
	if n, ok := r.(*ir.Node); ok {
		f, ok := number(l)
		return n, f, ok
	}
	return nil, 0, false
}

// scalarOp applies a binary operator to config-time values.
func scalarOp(op string, l, r any) (any, error) {
	switch op {
	case "??":
		if l == nil {
			return r, nil
		}
		return l, nil
	case "==":
		return equal(l, r), nil
	case "!=":
		return !equal(l, r), nil
	case "in": // membership in a list (none: nothing is in it), a dict's keys, a substring
		switch c := r.(type) {
		case nil:
			return false, nil
		case []any:
			for _, x := range c {
				if equal(l, x) {
					return true, nil
				}
			}
			return false, nil
		case map[string]any:
			key, ok := l.(string)
			_, has := c[key]
			return ok && has, nil
		case string:
			sub, ok := l.(string)
			if !ok {
				return nil, fmt.Errorf("operator in on a string needs a string, got %s %s", typeName(l), show(l))
			}
			return strings.Contains(c, sub), nil
		}
		return nil, fmt.Errorf("operator in needs a list, dict, string or none on its right, got %s %s", typeName(r), show(r))
	case "&&", "||":
		lb, ok1 := l.(bool)
		rb, ok2 := r.(bool)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("operator %s needs bools, got %s and %s", op, typeName(l), typeName(r))
		}
		if op == "&&" {
			return lb && rb, nil
		}
		return lb || rb, nil
	}
	li, lInt := l.(int64)
	ri, rInt := r.(int64)
	lf, ok1 := number(l)
	rf, ok2 := number(r)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("operator %s needs numbers, got %s %s and %s %s", op, typeName(l), show(l), typeName(r), show(r))
	}
	ints := lInt && rInt
	switch op {
	case "<":
		return lf < rf, nil
	case "<=":
		return lf <= rf, nil
	case ">":
		return lf > rf, nil
	case ">=":
		return lf >= rf, nil
	case "+":
		if ints {
			return li + ri, nil
		}
		return lf + rf, nil
	case "-":
		if ints {
			return li - ri, nil
		}
		return lf - rf, nil
	case "*":
		if ints {
			return li * ri, nil
		}
		return lf * rf, nil
	case "/":
		if rf == 0 {
			return nil, fmt.Errorf("division by zero")
		}
		return lf / rf, nil
	case "//", "%":
		if !ints {
			return nil, fmt.Errorf("operator %s needs ints, got %s and %s", op, typeName(l), typeName(r))
		}
		if ri == 0 {
			return nil, fmt.Errorf("division by zero")
		}
		q, m := li/ri, li%ri
		if m != 0 && (m < 0) != (ri < 0) { // floor semantics, as in Python
			q--
			m += ri
		}
		if op == "//" {
			return q, nil
		}
		return m, nil
	case "**":
		if ints && ri >= 0 { // int ** non-negative int is an int, as in Python
			p := int64(1)
			for b, e := li, ri; e > 0; e >>= 1 {
				if e&1 == 1 {
					p *= b
				}
				b *= b
			}
			return p, nil
		}
		return math.Pow(lf, rf), nil
	}
	return nil, fmt.Errorf("unknown operator %s", op)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func equal(l, r any) bool {
	if lf, ok := number(l); ok {
		rf, ok := number(r)
		return ok && lf == rf
	}
	switch l.(type) {
	case nil, bool, string:
		return l == r
	}
	return false
}

func (s *scope) unary(u *Unary, w bool) (any, error) {
	v, err := s.primary(u.Operand, operandWeight(u, w))
	if err != nil {
		return nil, err
	}
	for k, ix := range u.Index {
		list := v
		if v, err = s.indexValue(v, ix); err != nil {
			if c, ok := list.([]any); ok && k == 0 && s.loopVar != "" && loopIndexed(ix, s.loopVar) {
				if name := operandName(&Unary{Operand: u.Operand}); name != "" { // a per-layer config list too short
					return nil, errorf(ix.Pos, "%s has %d entries, but layer %d reads %s[%s]: give one entry per layer", name, len(c), s.index, name, s.loopVar)
				}
			}
			if k == 0 { // name the indexed config list: (ssm_multipliers is [1.0, 2.0])
				return nil, nameOperands(err, []string{operandName(&Unary{Operand: u.Operand})}, []any{list})
			}
			return nil, err
		}
	}
	switch u.Op {
	case "-":
		switch x := v.(type) {
		case int64:
			return -x, nil
		case float64:
			return -x, nil
		}
		return nil, errorf(u.Pos, "cannot negate %s", typeName(v))
	case "!":
		if b, ok := v.(bool); ok {
			return !b, nil
		}
		return nil, errorf(u.Pos, "operator ! needs bool, got %s", typeName(v))
	}
	return v, nil
}

// loopIndexed reports whether index expression ix is the loop variable
// alone (layer_types[i]).
func loopIndexed(ix *Expr, loopVar string) bool {
	if ix.Then != nil || ix.Cond == nil || len(ix.Cond.Rest) > 0 {
		return false
	}
	return operandName(ix.Cond.First) == loopVar
}

// indexValue evaluates v[ix]: a list element by int (negative counts from the
// end, as in Python) or a dict value by string key (missing: none).
func (s *scope) indexValue(v any, ix *Expr) (any, error) {
	k, err := s.expr(ix)
	if err != nil {
		return nil, err
	}
	switch c := v.(type) {
	case []any:
		i, ok := k.(int64)
		if !ok {
			return nil, errorf(ix.Pos, "list index must be an int, got %s %s", typeName(k), show(k))
		}
		if i < 0 {
			i += int64(len(c))
		}
		if i < 0 || i >= int64(len(c)) {
			return nil, errorf(ix.Pos, "list index %s out of range (length %d)", show(k), len(c))
		}
		return c[i], nil
	case map[string]any:
		key, ok := k.(string)
		if !ok {
			return nil, errorf(ix.Pos, "dict key must be a string, got %s", typeName(k))
		}
		return c[key], nil
	case string: // one character, as Python's str[i] (Nemotron-H's hybrid_override_pattern "M-M*")
		r := []rune(c)
		i, ok := k.(int64)
		if !ok {
			return nil, errorf(ix.Pos, "string index must be an int, got %s %s", typeName(k), show(k))
		}
		if i < 0 {
			i += int64(len(r))
		}
		if i < 0 || i >= int64(len(r)) {
			return nil, errorf(ix.Pos, "string index %s out of range (length %d)", show(k), len(r))
		}
		return string(r[i]), nil
	case nil:
		return nil, nil
	}
	return nil, errorf(ix.Pos, "cannot index %s", typeName(v))
}

func (s *scope) primary(p *Primary, w bool) (any, error) {
	switch {
	case p.Float != nil:
		return *p.Float, nil
	case p.Int != nil:
		return *p.Int, nil
	case p.Str != nil:
		return *p.Str, nil
	case p.True:
		return true, nil
	case p.False:
		return false, nil
	case p.None:
		return nil, nil
	case p.List != nil:
		return s.list(p.List)
	case p.Call != nil:
		return s.call(p.Call)
	case p.Path != nil:
		return s.path(p.Path, w)
	}
	return s.eval(p.Sub, w)
}

// list evaluates a list literal, or a comprehension: the element
// expression once per item of the list it ranges over, with the variable
// bound to the item (a none list gives none).
func (s *scope) list(l *List) (any, error) {
	if l.Var == "" {
		out := make([]any, 0, len(l.Elems))
		for _, e := range l.Elems {
			v, err := s.expr(e)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	if len(l.Elems) != 1 {
		return nil, errorf(l.Pos, "a comprehension has one element expression, got %d", len(l.Elems))
	}
	over, err := s.expr(l.Over)
	if err != nil || over == nil {
		return nil, err
	}
	items, ok := over.([]any)
	if !ok {
		return nil, errorf(l.Over.Pos, "a comprehension ranges over a list, got %s %s", typeName(over), show(over))
	}
	inner := *s
	inner.locals = make(map[string]any, len(s.locals)+1)
	for k, v := range s.locals {
		inner.locals[k] = v
	}
	out := make([]any, 0, len(items))
	for _, it := range items {
		inner.locals[l.Var] = it
		v, err := inner.expr(l.Elems[0])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// path resolves a dotted name: a local binding (a weight module binding
// takes further segments as a sub-module), the loop variable, a config
// field (later segments index dicts; none propagates), the graph input
// `tokens`, or else, in a weight position only, a weight module relative to
// the current scope (see names.go).
func (s *scope) path(p *Path, w bool) (any, error) {
	head := p.Segs[0]
	if head.Name != "" {
		if v, ok := s.locals[head.Name]; ok {
			if len(p.Segs) == 1 {
				return v, nil
			}
			switch x := v.(type) {
			case module:
				return s.modulePath(x.path+".", p.Segs[1:], p.Pos)
			case map[string]any, nil:
				return dictPath(head.Name, v, p.Segs[1:])
			}
			return nil, errorf(p.Segs[1].Pos, "%s is a %s; it has no field", head.Name, typeName(v))
		}
		if head.Name == s.loopVar && s.loopVar != "" {
			return s.index, nil
		}
		if v, ok := s.cfg[head.Name]; ok {
			return dictPath(head.Name, v, p.Segs[1:])
		}
	}
	if s.b == nil {
		return nil, errorf(p.Pos, "unknown name %q in a config expression", segText(head))
	}
	if in, ok := s.b.inputs[head.Name]; ok && len(p.Segs) == 1 {
		return in, nil
	}
	if !w {
		return nil, s.b.bs.unknownName(p, s.known())
	}
	if s.b.inMTP && s.prefix != "" {
		if m, err := s.modulePath("", p.Segs, p.Pos); err == nil && s.b.top[m.(module).path] {
			return m, nil // the decoder's embedding or output head (ast.go's MTP)
		}
	}
	return s.modulePath(s.prefix, p.Segs, p.Pos)
}

// known lists the names in scope, for did-you-mean hints.
func (s *scope) known() []string {
	var out []string
	if s.b != nil {
		for n := range s.b.inputs {
			out = append(out, n)
		}
	}
	for n := range s.locals {
		out = append(out, n)
	}
	for n := range s.cfg {
		out = append(out, n)
	}
	if s.loopVar != "" {
		out = append(out, s.loopVar)
	}
	sort.Strings(out)
	return out
}

// dictPath follows named keys into nested dicts; none propagates (a missing
// key or a none value yields none).
func dictPath(name string, v any, segs []*Seg) (any, error) {
	for _, seg := range segs {
		if seg.Name == "" {
			return nil, errorf(seg.Pos, "%s: only named keys can follow a dot", name)
		}
		if v == nil {
			continue
		}
		d, ok := v.(map[string]any)
		if !ok {
			return nil, errorf(seg.Pos, "%s is %s, not a dict", name, typeName(v))
		}
		v = d[seg.Name]
	}
	return v, nil
}

// modulePath joins path segments into a weight module name under prefix;
// pos is where the path is written.
func (s *scope) modulePath(prefix string, segs []*Seg, pos lexer.Position) (any, error) {
	name := prefix
	for i, seg := range segs {
		if i > 0 {
			name += "."
		}
		switch {
		case seg.Name != "":
			name += seg.Name
		case seg.Num != nil:
			name += fmt.Sprint(*seg.Num)
		default:
			v, err := s.expr(seg.Index)
			if err != nil {
				return nil, err
			}
			i, ok := v.(int64)
			if !ok {
				return nil, errorf(seg.Pos, "weight path index must be int, got %s", typeName(v))
			}
			name += fmt.Sprint(i)
		}
	}
	return module{path: name, pos: pos}, nil
}

func segText(s *Seg) string {
	if s.Name != "" {
		return s.Name
	}
	return "{...}"
}

func (s *scope) call(c *Call) (any, error) {
	if c.Name == failFunc && !c.Super {
		return nil, s.fail(c)
	}
	if c.Name == rootFunc && s.b != nil && s.b.bs.builtin(c) {
		return s.rootCall(c)
	}
	if s.b == nil && s.src != nil {
		if fn, ok := ggufFuncs[c.Name]; ok && !c.Super {
			return s.ggufCall(c, fn)
		}
	}
	if c.Name == rangeFunc && s.b == nil && !c.Super {
		return s.rangeCall(c)
	}
	if c.Name == dictFunc && s.b == nil && !c.Super {
		return s.dictCall(c)
	}
	if c.Name == splitFunc && s.b == nil && !c.Super {
		return s.splitCall(c)
	}
	if blockBuiltins[c.Name] && !c.Super && (s.b == nil || s.b.bs.builtin(c)) {
		switch c.Name {
		case lenFunc:
			return s.lenCall(c)
		case intFunc:
			return s.intCall(c)
		case strFunc:
			return s.strCall(c)
		}
	}
	if c.Name == maxFunc && s.b == nil && !c.Super {
		return s.maxCall(c)
	}
	if fn, ok := configFuncs[c.Name]; ok && s.b == nil && !c.Super {
		return s.configCall(c, fn)
	}
	if s.b == nil {
		return nil, errorf(c.Pos, "primitive call %s(...) is not allowed in a config expression", c.Name)
	}
	cl, err := s.b.bs.target(c, s.block)
	if err != nil {
		return nil, err
	}
	bound, errs, _ := bind(c, cl)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	if cl.blk != nil {
		return s.callBlock(c, cl, bound)
	}
	// A module's declared arguments see the config, the loop variable and
	// the weight scope where it is used, not the caller's bindings.
	decl := &scope{cfg: s.cfg, locals: map[string]any{}, loopVar: s.loopVar, index: s.index, prefix: s.prefix, b: s.b}
	vals := make(map[string]any, len(bound))
	var named []string // "out is num_local_experts = 0": scalar arguments given by a config name
	for _, bd := range bound {
		p := cl.params[bd.param]
		in := s
		if bd.decl {
			in = decl
		}
		v, err := in.eval(bd.arg.Value, p.kind == ir.Module)
		if err != nil {
			return nil, err
		}
		if got := wrongKind(p, v); got != "" {
			return nil, errorf(bd.arg.Pos, "%s", kindError(cl, p, got))
		}
		vals[p.name] = v
		if n := exprName(bd.arg.Value); n != "" && p.kind == ir.Scalar && n != p.name {
			named = append(named, fmt.Sprintf("%s is %s = %s", p.name, n, show(v)))
		}
	}
	prim := cl.prim
	var args []*ir.Node
	var mod module
	attrs := map[string]any{}
	for _, p := range prim.Params {
		v, ok := vals[p.Name]
		if !ok {
			if !p.Optional {
				return nil, errorf(c.Pos, "%s: missing argument %q (%s)", c.Name, p.Name, p.Kind)
			}
			continue
		}
		switch p.Kind {
		case ir.Tensor:
			args = append(args, v.(*ir.Node))
		case ir.Module:
			mod = v.(module)
			mod.keyword = p.Optional
		default:
			attrs[p.Name] = v
		}
	}
	n, err := s.b.node(c.Pos, prim.Name, args, mod, attrs)
	if err != nil && len(named) > 0 { // say which config names gave the refused values
		var e *Error
		if errors.As(err, &e) {
			out := *e
			out.Msg += " (" + strings.Join(named, ", ") + ")"
			return nil, &out
		}
	}
	return n, err
}

// exprName is the name path an expression is (`num_local_experts`), or
// the first operand of a `??` chain (`ffn_config.ffn_act_fn.name ??
// "silu"`: the config key the value comes from unless it is absent), or "".
func exprName(e *Expr) string {
	if e == nil || e.Then != nil || e.Cond == nil {
		return ""
	}
	for _, op := range e.Cond.Rest {
		if op.Op != "??" {
			return ""
		}
	}
	return operandName(e.Cond.First)
}

// maxBlockDepth bounds nested block calls (a block calling itself).
const maxBlockDepth = 32

// callBlock evaluates a block call: arguments are bound to the block's
// parameters (positionally or by name) in a fresh scope that shares the
// config, loop variable and weight prefix; the return expression is the value.
func (s *scope) callBlock(c *Call, cl *callee, bound []binding) (any, error) {
	blk := cl.blk
	if s.b.depth >= maxBlockDepth {
		return nil, errorf(c.Pos, "block %s: calls nested deeper than %d (recursion?)", blk.Name, maxBlockDepth)
	}
	inner := &scope{cfg: s.cfg, locals: map[string]any{}, loopVar: s.loopVar, index: s.index, prefix: s.prefix, b: s.b, block: blk}
	if s.b.inMTP && s.block == nil && s.b.mtpLayer != "" { // a block the mtp body calls reads under its layer path
		inner.prefix = s.b.mtpLayer
	}
	for _, bd := range bound {
		v, err := s.eval(bd.arg.Value, s.b.bs.weight[blk][bd.param])
		if err != nil {
			return nil, err
		}
		inner.locals[blk.Params[bd.param]] = v
	}
	saved := s.b.stmt
	s.b.depth++
	s.b.path = append(s.b.path, s.b.callName(s.block, c))
	defer func() {
		s.b.depth--
		s.b.path = s.b.path[:len(s.b.path)-1]
		s.b.stmt = saved
	}()
	for _, st := range blk.Body {
		if err := inner.stmt(st); err != nil {
			return nil, err
		}
	}
	s.b.stmt = ""
	return inner.expr(blk.Return)
}

func paramNames(p *ir.Primitive) []string {
	names := make([]string, len(p.Params))
	for i, q := range p.Params {
		names[i] = q.Name
	}
	return names
}

// wrongKind describes v where primitive parameter p takes another kind
// (as kindError words it), or is "" when v fits.
func wrongKind(p param, v any) string {
	got := "a config-time value"
	switch v.(type) {
	case *ir.Node:
		got = "tensor"
	case module:
		got = "a weight module"
	}
	switch {
	case p.kind == ir.Tensor && got == "tensor", p.kind == ir.Module && got == "a weight module":
		return ""
	case p.kind != ir.Tensor && p.kind != ir.Module && got == "a config-time value":
		return ""
	}
	return got
}
