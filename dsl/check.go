package dsl

import (
	"sort"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/archc/archc/dsl/ir"
)

// Check validates a parsed file without a config: config fields are unique;
// config defaults use only earlier fields; every call names a known
// primitive with known parameters; tensor arguments name bindings made
// before use; the file binds logits. It returns every diagnostic found,
// sorted by position (nil when the file is valid).
func Check(f *File, reg ir.Registry) []*Error {
	c := &checker{reg: reg, fields: map[string]bool{}, locals: map[string]bool{"tokens": true}, blocks: map[string]*Block{}}
	for _, it := range f.Items {
		if b := it.Block; b != nil {
			if _, dup := c.blocks[b.Name]; dup {
				c.errf(b.Pos, "block %q declared twice", b.Name)
			}
			if _, isPrim := reg.Primitive(b.Name); isPrim {
				c.errf(b.Pos, "block %q has the name of a primitive", b.Name)
			}
			c.blocks[b.Name] = b
		}
	}
	matched := false
	for _, it := range f.Items {
		switch {
		case it.Match != nil:
			matched = true
		case it.Config != nil:
			for _, fd := range it.Config.Fields {
				if fd.Default != nil {
					c.expr(fd.Default, true)
				}
				if c.fields[fd.Name] {
					c.errf(fd.Pos, "config field %q declared twice", fd.Name)
				}
				c.fields[fd.Name] = true
			}
		case it.Block != nil:
			outer := c.locals
			c.locals = map[string]bool{"tokens": true}
			for _, p := range it.Block.Params {
				c.locals[p] = true
			}
			for _, st := range it.Block.Body {
				c.stmt(st)
			}
			c.expr(it.Block.Return, false)
			c.locals = outer
		case it.Stmt != nil:
			c.stmt(it.Stmt)
		case it.Loop != nil:
			c.expr(it.Loop.Count, true)
			c.loopVar = it.Loop.Var
			for _, st := range it.Loop.Body {
				c.stmt(st)
			}
			c.loopVar = ""
		}
	}
	c.recursion()
	if !matched && f.Extends == "" {
		c.errf(f.Pos, "arch %s has no match clause; add `match model_type \"...\"`", f.Name)
	}
	if !c.locals["logits"] {
		c.errf(f.Pos, "arch %s never binds logits", f.Name)
	}
	sort.SliceStable(c.errs, func(i, j int) bool {
		a, b := c.errs[i].Pos, c.errs[j].Pos
		return a.Line < b.Line || (a.Line == b.Line && a.Column < b.Column)
	})
	return c.errs
}

// recursion reports blocks that call themselves, directly or through other
// blocks (block calls are inlined, so recursion can never end).
func (c *checker) recursion() {
	calls := map[string][]*Call{}
	for name, b := range c.blocks {
		var walk func(e *Expr)
		walk = func(e *Expr) {
			if e == nil {
				return
			}
			us := []*Unary{e.Cond.First}
			for _, op := range e.Cond.Rest {
				us = append(us, op.Right)
			}
			for _, u := range us {
				for _, ix := range u.Index {
					walk(ix)
				}
				p := u.Operand
				switch {
				case p.Sub != nil:
					walk(p.Sub)
				case p.Call != nil:
					if _, ok := c.blocks[p.Call.Name]; ok {
						calls[name] = append(calls[name], p.Call)
					}
					for _, a := range p.Call.Args {
						walk(a.Value)
					}
				}
			}
			walk(e.Then)
			walk(e.Else)
		}
		for _, st := range b.Body {
			walk(st.Value)
		}
		walk(b.Return)
	}
	const (
		unvisited = iota
		active
		done
	)
	state := map[string]int{}
	var visit func(name string) bool
	visit = func(name string) bool {
		state[name] = active
		for _, call := range calls[name] {
			switch state[call.Name] {
			case active:
				c.errf(call.Pos, "block %s calls %s recursively; blocks are inlined, so recursion never ends", name, call.Name)
				return true
			case unvisited:
				if visit(call.Name) {
					return true
				}
			}
		}
		state[name] = done
		return false
	}
	for _, name := range keysOf(c.blocks) {
		if state[name] == unvisited {
			visit(name)
		}
	}
}

type checker struct {
	reg     ir.Registry
	fields  map[string]bool
	locals  map[string]bool
	blocks  map[string]*Block
	loopVar string
	errs    []*Error
}

func (c *checker) errf(pos lexer.Position, format string, args ...any) {
	c.errs = append(c.errs, errorf(pos, format, args...))
}

func (c *checker) stmt(st *Stmt) {
	c.expr(st.Value, false)
	c.locals[st.Name] = true
}

// expr checks names in e. In config expressions (cfgOnly) only earlier
// config fields and literals may appear.
func (c *checker) expr(e *Expr, cfgOnly bool) {
	if e == nil {
		return
	}
	c.unary(e.Cond.First, cfgOnly)
	for _, op := range e.Cond.Rest {
		c.unary(op.Right, cfgOnly)
	}
	c.expr(e.Then, cfgOnly)
	c.expr(e.Else, cfgOnly)
}

func (c *checker) unary(u *Unary, cfgOnly bool) {
	for _, ix := range u.Index {
		c.expr(ix, cfgOnly)
	}
	p := u.Operand
	switch {
	case p.Sub != nil:
		c.expr(p.Sub, cfgOnly)
	case p.Call != nil:
		if cfgOnly {
			c.errf(p.Call.Pos, "primitive call %s(...) is not allowed in a config expression", p.Call.Name)
			return
		}
		c.call(p.Call)
	case p.Path != nil:
		head := p.Path.Segs[0]
		if cfgOnly && head.Name != "" && !c.fields[head.Name] && head.Name != c.loopVar {
			c.errf(head.Pos, "unknown config field %q%s", head.Name, suggest(head.Name, keys(c.fields)))
		}
		for _, s := range p.Path.Segs {
			if s.Index != nil {
				c.expr(s.Index, cfgOnly)
			}
		}
	}
}

func (c *checker) call(call *Call) {
	if blk, ok := c.blocks[call.Name]; ok {
		for i, a := range call.Args {
			c.expr(a.Value, false)
			switch {
			case a.Name == "" && i >= len(blk.Params):
				c.errf(a.Pos, "block %s takes %d arguments", blk.Name, len(blk.Params))
			case a.Name != "" && !contains(blk.Params, a.Name):
				c.errf(a.Pos, "block %s has no parameter %q%s", blk.Name, a.Name, suggest(a.Name, blk.Params))
			}
		}
		if len(call.Args) < len(blk.Params) {
			c.errf(call.Pos, "block %s takes %d arguments, got %d", blk.Name, len(blk.Params), len(call.Args))
		}
		return
	}
	prim, ok := c.reg.Primitive(call.Name)
	if !ok {
		c.errf(call.Pos, "unknown primitive %q%s", call.Name, suggest(call.Name, append(c.reg.Names(), keysOf(c.blocks)...)))
	}
	for i, a := range call.Args {
		c.expr(a.Value, false)
		if prim == nil {
			continue
		}
		var p *ir.Param
		if a.Name == "" && i < len(prim.Params) {
			p = &prim.Params[i]
		}
		for j := range prim.Params {
			if prim.Params[j].Name == a.Name {
				p = &prim.Params[j]
			}
		}
		switch {
		case p == nil && a.Name != "":
			c.errf(a.Pos, "%s has no parameter %q%s", call.Name, a.Name, suggest(a.Name, paramNames(prim)))
		case p == nil:
			c.errf(a.Pos, "%s takes at most %d arguments", call.Name, len(prim.Params))
		case p.Kind == ir.Tensor:
			c.tensorArg(a.Value)
		}
	}
}

// tensorArg reports a bare name passed as a tensor that is not bound yet.
func (c *checker) tensorArg(e *Expr) {
	if e.Then != nil || len(e.Cond.Rest) > 0 || e.Cond.First.Operand.Path == nil {
		return
	}
	path := e.Cond.First.Operand.Path
	name := path.Segs[0].Name
	if len(path.Segs) == 1 && name != "" && !c.locals[name] && !c.fields[name] && name != c.loopVar {
		c.errf(path.Pos, "undefined tensor %q%s", name, suggest(name, keys(c.locals)))
	}
}

func keysOf(m map[string]*Block) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
