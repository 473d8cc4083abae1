package dsl

import (
	"fmt"

	"github.com/archc/archc/dsl/ir"
)

// The argument binder, the one place that matches a call's arguments to
// its callee's parameters. Check (check.go, kinds.go) and Build (eval.go)
// both bind through it, so a call is refused by both with the same message
// or by neither. A callee is a primitive, a block or a declared module (a
// primitive whose first argument is left open, ast.go's Module).

// param is one parameter of a callee.
type param struct {
	name     string
	kind     ir.Kind // a primitive parameter's kind (when typed)
	typed    bool    // false for block parameters, which take any kind
	optional bool
}

// callee is what a call reaches.
type callee struct {
	who    string        // as messages name it: `linear`, `block attn`, `module q_proj`
	prim   *ir.Primitive // a primitive, or the primitive a module declares
	blk    *Block        // a block
	mod    *moduleDef    // a declared module
	params []param
}

// moduleDef is a declared module as the extends chain resolves it: the
// declaration and the overrides of its arguments, in order (a later one of
// an argument replaces an earlier one).
type moduleDef struct {
	decl *Module
	over []*Module
}

// binding is one argument bound to a parameter.
type binding struct {
	param int  // index into callee.params
	arg   *Arg // as written: at the call, in the module declaration or in an override
	decl  bool // written in the declaration or an override: evaluated in the module's scope
}

// primCallee is the callee of a primitive call.
func primCallee(p *ir.Primitive) *callee {
	cl := &callee{who: p.Name, prim: p}
	for _, q := range p.Params {
		cl.params = append(cl.params, param{name: q.Name, kind: q.Kind, typed: true, optional: q.Optional})
	}
	return cl
}

// blockCallee is the callee of a call of block b.
func blockCallee(b *Block) *callee {
	cl := &callee{who: "block " + b.Name, blk: b}
	for _, q := range b.Params {
		cl.params = append(cl.params, param{name: q})
	}
	return cl
}

// moduleCallee is the callee of a call of module m, which declares
// primitive p.
func moduleCallee(name string, m *moduleDef, p *ir.Primitive) *callee {
	cl := primCallee(p)
	cl.who, cl.mod = "module "+name, m
	return cl
}

// takes says how many arguments a callee takes and how many a call gave,
// for errors.
func (cl *callee) takes(got int) string {
	required := 0
	for _, p := range cl.params {
		if !p.optional {
			required++
		}
	}
	if required == len(cl.params) {
		return fmt.Sprintf("%s takes %d %s, got %d", cl.who, len(cl.params), plural(len(cl.params), "argument"), got)
	}
	return fmt.Sprintf("%s takes at most %d %s, got %d", cl.who, len(cl.params), plural(len(cl.params), "argument"), got)
}

// plural is word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func (cl *callee) paramNames() []string {
	out := make([]string, len(cl.params))
	for i, p := range cl.params {
		out[i] = p.name
	}
	return out
}

// index returns the parameter that argument i (a) of a call binds, or -1
// (positional arguments bind in order; a module's call has one, its input).
func (cl *callee) index(i int, a *Arg) int {
	if a.Name == "" {
		if i < len(cl.params) && (cl.mod == nil || i == 0) {
			return i
		}
		return -1
	}
	for j, p := range cl.params {
		if p.name == a.Name {
			return j
		}
	}
	return -1
}

// bind matches call c's arguments, and for a module call its declaration's
// and overrides', to cl's parameters. It returns the bindings in
// evaluation order (the call's arguments as written, then the declared ones
// the call does not replace, in declaration order), the errors in source
// order of the arguments, and whether a keyword named no parameter (a
// misspelt keyword explains a missing argument already, so none is
// reported then). Surplus positional arguments are one error, at the
// first of them. A caller that stops at the first error reports errs[0].
func bind(c *Call, cl *callee) (out []binding, errs []*Error, misnamed bool) {
	slot := make([]*binding, len(cl.params))
	positional := 0
	for _, a := range c.Args {
		if a.Name == "" {
			positional++
		}
	}
	surplus := false // the surplus positional arguments are reported
	for i, a := range c.Args {
		j := cl.index(i, a)
		switch {
		case j < 0 && a.Name != "":
			errs = append(errs, errorf(a.Pos, "%s has no parameter %q%s", cl.who, a.Name, suggest(a.Name, cl.paramNames())))
			misnamed = true
			continue
		case j < 0 && surplus:
			continue
		case j < 0 && cl.mod != nil:
			errs = append(errs, errorf(a.Pos, "%s takes one positional argument, its input (%s), got %d; give the others by name", cl.who, cl.params[0].name, positional))
			surplus = true
			continue
		case j < 0:
			errs = append(errs, errorf(a.Pos, "%s", cl.takes(len(c.Args))))
			surplus = true
			continue
		case slot[j] != nil:
			errs = append(errs, errorf(a.Pos, "%s: parameter %q given twice", cl.who, cl.params[j].name))
			continue
		}
		slot[j] = &binding{param: j, arg: a}
		out = append(out, *slot[j])
	}
	if cl.mod != nil {
		declared, derrs, dmis := cl.declared()
		errs = append(errs, derrs...)
		misnamed = misnamed || dmis
		for _, b := range declared {
			if slot[b.param] == nil {
				slot[b.param] = &b
				out = append(out, b)
			}
		}
	}
	if !misnamed {
		for j, p := range cl.params {
			if slot[j] == nil && !p.optional {
				if p.typed {
					errs = append(errs, errorf(c.Pos, "%s: missing argument %q (%s)", cl.who, p.name, p.kind))
				} else {
					errs = append(errs, errorf(c.Pos, "%s: missing argument %q", cl.who, p.name))
				}
			}
		}
	}
	return out, errs, misnamed
}

// declared binds a module declaration's arguments (the first, its input,
// is the call's) and then its overrides, each replacing the declared
// argument of its parameter.
func (cl *callee) declared() (out []binding, errs []*Error, misnamed bool) {
	m := cl.mod
	at := map[int]int{} // parameter -> index in out
	surplus := false    // the surplus positional arguments are reported
	for i, a := range m.decl.Call.Args {
		j := cl.index(i+1, a)
		if a.Name == "" && i+1 < len(cl.params) {
			j = i + 1
		}
		switch {
		case j < 0 && a.Name != "":
			errs = append(errs, errorf(a.Pos, "%s (%s) has no parameter %q%s", cl.who, cl.prim.Name, a.Name, suggest(a.Name, cl.paramNames())))
			misnamed = true
			continue
		case j < 0 && surplus:
			continue
		case j < 0:
			errs = append(errs, errorf(a.Pos, "%s: %s takes at most %d arguments, the first of them the module's input, got %d", cl.who, cl.prim.Name, len(cl.params), len(m.decl.Call.Args)+1))
			surplus = true
			continue
		case j == 0:
			errs = append(errs, errorf(a.Pos, "%s: %q is the module's input, given where it is used", cl.who, cl.params[0].name))
			continue
		}
		if _, dup := at[j]; dup {
			errs = append(errs, errorf(a.Pos, "%s: parameter %q given twice", cl.who, cl.params[j].name))
			continue
		}
		at[j] = len(out)
		out = append(out, binding{param: j, arg: a, decl: true})
	}
	for _, o := range m.over {
		a := &Arg{Pos: o.Pos, EndPos: o.EndPos, Name: o.Attr, Value: o.Value}
		j := cl.index(-1, a)
		switch {
		case j < 0:
			errs = append(errs, errorf(o.Pos, "module %s.%s: %s has no parameter %q%s", o.Name, o.Attr, cl.prim.Name, o.Attr, suggest(o.Attr, cl.paramNames())))
			continue
		case j == 0:
			errs = append(errs, errorf(o.Pos, "module %s.%s: %q is the module's input, given where it is used", o.Name, o.Attr, o.Attr))
			continue
		}
		b := binding{param: j, arg: a, decl: true}
		if k, ok := at[j]; ok {
			out[k] = b
			continue
		}
		at[j] = len(out)
		out = append(out, b)
	}
	return out, errs, misnamed
}

// kindError is the message for an argument of the wrong kind: a tensor
// where a primitive takes a scalar or a weight module, or the reverse.
// got describes the value: a literal as written (`int 1`), else its kind.
func kindError(cl *callee, p param, got string) string {
	return fmt.Sprintf("%s: argument %q must be a %s, got %s", cl.who, p.name, p.kind, got)
}
