package dsl

import (
	"github.com/alecthomas/participle/v2/lexer"

	"github.com/archc/archc/dsl/ir"
)

// The checker's kind pass: what can be known without a config about which
// expressions are tensors and which are config-time values, so that
// `archc check` reports what Build would reject whatever the config:
// `x > 0.0 ? x : 0.0` or `activation(x, "relu") ** 2` on a tensor x, a
// tensor where a primitive takes a scalar. A primitive's result is a
// tensor, as `tokens` is; literals, config fields and the loop variable are
// config-time values; a block parameter takes the kind its call sites agree
// on, and a block call the kind of its return expression. Anything else is
// unknown and never an error here. The messages are Build's.

// inputKinds is a fresh scope holding the graph's inputs, tensors all.
func (c *checker) inputKinds() map[string]kind {
	m := map[string]kind{}
	for _, n := range c.inputs {
		m[n] = tensorKind
	}
	return m
}

// kind is what the checker knows about a value.
type kind int

const (
	unknownKind kind = iota
	tensorKind       // an IR value
	scalarKind       // a config-time value
)

func (k kind) String() string { return [...]string{"unknown", "tensor", "config-time value"}[k] }

// join is the kind of a value that is a or b.
func join(a, b kind) kind {
	if a == b {
		return a
	}
	return unknownKind
}

// kinds runs the kind pass: block parameter and result kinds to a fixed
// point, then one reporting walk over the dataflow and every block.
func (c *checker) kinds(f *File) {
	k := &kinder{c: c, params: map[*Block][]kind{}, results: map[*Block]kind{}}
	blocks := c.bs.all()
	for _, b := range blocks {
		k.params[b] = make([]kind, len(b.Params))
	}
	for round := 0; round < 8; round++ {
		k.calls = map[*Block][][]kind{}
		k.walkFile(f, blocks)
		changed := false
		for _, b := range blocks {
			for j := range b.Params {
				nk := unknownKind
				for i, args := range k.calls[b] {
					if i == 0 {
						nk = args[j]
					} else {
						nk = join(nk, args[j])
					}
				}
				if nk != k.params[b][j] {
					k.params[b][j], changed = nk, true
				}
			}
		}
		if !changed {
			break
		}
	}
	k.report = true
	k.walkFile(f, blocks)
}

// kinder computes kinds; with report set it records diagnostics.
type kinder struct {
	c       *checker
	params  map[*Block][]kind   // per block parameter
	results map[*Block]kind     // per block, its return's kind (this walk)
	calls   map[*Block][][]kind // argument kinds per call site (this walk)
	active  map[*Block]bool     // blocks whose result is being computed
	report  bool
}

// kscope is the kinds of the names bound in one scope.
type kscope struct {
	locals map[string]kind
	in     *Block
}

func (k *kinder) errf(pos lexer.Position, format string, args ...any) {
	if k.report {
		k.c.errf(pos, format, args...)
	}
}

func (k *kinder) walkFile(f *File, blocks []*Block) {
	k.results, k.active = map[*Block]kind{}, map[*Block]bool{}
	top := &kscope{locals: k.c.inputKinds()}
	for _, it := range f.Items {
		switch {
		case it.Stmt != nil:
			top.locals[it.Stmt.Name] = k.expr(top, it.Stmt.Value)
		case it.Loop != nil:
			for _, st := range it.Loop.Body {
				top.locals[st.Name] = k.expr(top, st.Value)
			}
		}
	}
	for _, b := range blocks {
		k.block(b)
	}
	for _, it := range f.Items {
		if it.Module != nil && k.report {
			k.module(it.Module)
		}
	}
}

// block returns the kind of a block's result, walking its body once per
// walk.
func (k *kinder) block(b *Block) kind {
	if r, ok := k.results[b]; ok {
		return r
	}
	if k.active[b] { // recursion: reported by the checker
		return unknownKind
	}
	k.active[b] = true
	s := &kscope{locals: k.c.inputKinds(), in: b}
	for j, p := range b.Params {
		s.locals[p] = k.params[b][j]
	}
	for _, st := range b.Body {
		s.locals[st.Name] = k.expr(s, st.Value)
	}
	r := k.expr(s, b.Return)
	k.results[b] = r
	return r
}

func (k *kinder) expr(s *kscope, e *Expr) kind {
	if e == nil {
		return unknownKind
	}
	c := k.binary(s, e.Cond)
	if e.Then == nil {
		return c
	}
	t, f := k.expr(s, e.Then), k.expr(s, e.Else)
	switch c {
	case tensorKind: // a mask: where(c, then, else), a number branch broadcast
		return tensorKind
	case unknownKind: // a mask or a bool: the branches' kind only if both are tensors
		if t == tensorKind && f == tensorKind {
			return tensorKind
		}
		return unknownKind
	}
	return join(t, f)
}

// binary applies the operators by precedence, as eval's binary does; `??`
// splits the run at its first occurrence.
func (k *kinder) binary(s *kscope, e *BinExpr) kind {
	for i, op := range e.Rest {
		if op.Op == "??" {
			l := k.binary(s, &BinExpr{Pos: e.Pos, First: e.First, Rest: e.Rest[:i]})
			r := k.binary(s, &BinExpr{Pos: op.Right.Pos, First: op.Right, Rest: e.Rest[i+1:]})
			if l == tensorKind { // a tensor is never none
				return tensorKind
			}
			return join(l, r)
		}
	}
	vals := []kind{k.unary(s, e.First)}
	descs := []string{literal(e.First)}
	var ops []*BinOp
	reduce := func() {
		op := ops[len(ops)-1]
		ops = ops[:len(ops)-1]
		n := len(vals)
		v := k.apply(op, vals[n-2], vals[n-1], descs[n-2], descs[n-1])
		vals, descs = append(vals[:n-2], v), append(descs[:n-2], "")
	}
	for _, op := range e.Rest {
		for len(ops) > 0 {
			top := precedence[ops[len(ops)-1].Op]
			if top < precedence[op.Op] || (top == precedence[op.Op] && op.Op == "**") {
				break
			}
			reduce()
		}
		ops = append(ops, op)
		vals = append(vals, k.unary(s, op.Right))
		descs = append(descs, literal(op.Right))
	}
	for len(ops) > 0 {
		reduce()
	}
	return vals[0]
}

// literal describes an operand that is a literal as Build does (`int 1`),
// else "".
func literal(u *Unary) string {
	if u.Op != "" || len(u.Index) > 0 {
		return ""
	}
	var v any
	switch p := u.Operand; {
	case p.Float != nil:
		v = *p.Float
	case p.Int != nil:
		v = *p.Int
	case p.Str != nil:
		v = *p.Str
	case p.True, p.False:
		v = p.True
	default:
		return ""
	}
	return typeName(v) + " " + show(v)
}

// apply is eval's apply on kinds: tensor ± tensor, tensor * tensor, a
// tensor times or divided by a number, a tensor to a number's power and a
// comparison of a tensor with a tensor or a number (a mask) are tensors;
// any other operator with
// a tensor operand is an error, naming literal operands as Build does.
func (k *kinder) apply(op *BinOp, l, r kind, ldesc, rdesc string) kind {
	switch {
	case l == unknownKind || r == unknownKind:
		return unknownKind
	case l == scalarKind && r == scalarKind:
		return scalarKind
	case l == tensorKind && r == tensorKind:
		if _, ok := tensorOps[op.Op]; ok || compareOps[op.Op] != "" {
			return tensorKind
		}
	case op.Op == "*", op.Op == "/" && l == tensorKind, op.Op == "**" && l == tensorKind, compareOps[op.Op] != "":
		return tensorKind
	}
	if ldesc == "" {
		ldesc = l.String()
	}
	if rdesc == "" {
		rdesc = r.String()
	}
	k.errf(op.Pos, "operator %s is not defined on %s and %s", op.Op, ldesc, rdesc)
	return unknownKind
}

func (k *kinder) unary(s *kscope, u *Unary) kind {
	v := k.primary(s, u.Operand)
	for _, ix := range u.Index {
		k.expr(s, ix)
		if v == tensorKind {
			k.errf(ix.Pos, "cannot index tensor")
			v = unknownKind
		}
	}
	switch {
	case u.Op == "-" && v == tensorKind:
		k.errf(u.Pos, "cannot negate tensor")
		return unknownKind
	case u.Op == "!" && v == tensorKind:
		k.errf(u.Pos, "operator ! needs bool, got tensor")
		return unknownKind
	}
	return v
}

func (k *kinder) primary(s *kscope, p *Primary) kind {
	switch {
	case p.Float != nil, p.Int != nil, p.Str != nil, p.True, p.False, p.None:
		return scalarKind
	case p.List != nil:
		for _, e := range p.List.Elems {
			k.expr(s, e)
		}
		k.expr(s, p.List.Over)
		return unknownKind
	case p.Call != nil:
		return k.call(s, p.Call)
	case p.Path != nil:
		head := p.Path.Segs[0]
		for _, seg := range p.Path.Segs {
			if seg.Index != nil {
				k.expr(s, seg.Index)
			}
		}
		if head.Name == "" {
			return unknownKind
		}
		if v, ok := s.locals[head.Name]; ok {
			if len(p.Path.Segs) == 1 || v == scalarKind {
				return v
			}
			return unknownKind
		}
		if k.c.loopVars[head.Name] || k.c.allFields[head.Name] {
			return scalarKind
		}
		return unknownKind // a weight path
	case p.Sub != nil:
		return k.expr(s, p.Sub)
	}
	return unknownKind
}

func (k *kinder) call(s *kscope, c *Call) kind {
	args := map[*Arg]kind{}
	for _, a := range c.Args {
		args[a] = k.expr(s, a.Value)
	}
	if c.Name == rootFunc && k.c.bs.builtin(c) {
		return unknownKind // a weight path, from the file's root
	}
	if k.c.bs.builtin(c) && c.Name != failFunc { // len, int, str: of a config-time value
		for _, a := range c.Args {
			if args[a] == tensorKind {
				k.errf(a.Pos, "%s takes a config-time value (a list, a string, a number), not a tensor", c.Name)
			}
		}
		return scalarKind
	}
	cl, err := k.c.bs.target(c, s.in)
	if err != nil || cl == nil { // fail(...) never returns: takes any kind
		return unknownKind
	}
	bound, _, _ := bind(c, cl)
	if cl.blk != nil {
		site := make([]kind, len(cl.params))
		for _, b := range bound {
			site[b.param] = args[b.arg]
		}
		k.calls[cl.blk] = append(k.calls[cl.blk], site)
		return k.block(cl.blk)
	}
	for _, b := range bound {
		if !b.decl { // a module's declared arguments are judged once, at the declaration
			k.argKind(cl, cl.params[b.param], b.arg, args[b.arg])
		}
	}
	return tensorKind
}

// argKind reports an argument of kind got where primitive parameter p
// takes another kind.
func (k *kinder) argKind(cl *callee, p param, a *Arg, got kind) {
	switch {
	case p.kind == ir.Tensor && got == scalarKind:
		k.errf(a.Pos, "%s", kindError(cl, p, "a config-time value"))
	case p.kind == ir.Module && got == scalarKind:
		k.errf(a.Pos, "%s", kindError(cl, p, "a config-time value"))
	case p.kind != ir.Tensor && got == tensorKind:
		k.errf(a.Pos, "%s", kindError(cl, p, "tensor"))
	}
}

// module judges a module declaration's arguments, which see config fields
// and the loop variable only.
func (k *kinder) module(m *Module) {
	if m.Call == nil {
		return
	}
	use := &Call{Pos: m.Call.Pos, Name: m.Name, Args: []*Arg{{Pos: m.Call.Pos}}}
	cl, err := k.c.bs.target(use, nil)
	if err != nil {
		return
	}
	s := &kscope{locals: map[string]kind{}}
	bound, _, _ := bind(use, cl)
	for _, b := range bound {
		if b.decl {
			k.argKind(cl, cl.params[b.param], b.arg, k.expr(s, b.arg.Value))
		}
	}
}
