package dsl

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/archc/archc/dsl/ir"
)

// Check validates a parsed file without a config: config fields are unique;
// config defaults use only earlier fields and match conditions only config
// fields; every call names a known primitive or block (super calls a block
// of the parent family) with known parameters; every name is a local bound
// before use, a block parameter, the loop variable, a config field, or a
// weight path in a weight position (names.go); the file has a decoder-layer
// loop (prefill and decode treat the nodes after it as the head, lowered
// for the returned position only) and binds logits. It
// returns every diagnostic found, sorted by position (nil when the file is
// valid). A kind pass (kinds.go) reports tensors used where only
// config-time values can stand, and the reverse.
func Check(f *File, reg ir.Registry) []*Error {
	c := &checker{reg: reg, bs: newBlockSet(f, reg), fields: map[string]bool{}, allFields: map[string]bool{},
		loopVars: map[string]bool{}, inputs: f.inputs()}
	c.locals = c.inputSet()
	own := map[*Block]bool{}
	blocks := map[string]bool{}
	sections := 0
	for _, it := range f.Items {
		switch {
		case it.Block != nil:
			b := it.Block
			if blocks[b.Name] {
				c.errf(b.Pos, "block %q declared twice", b.Name)
			}
			if _, isPrim := reg.Primitive(b.Name); isPrim {
				c.errf(b.Pos, "block %q has the name of a primitive", b.Name)
			}
			blocks[b.Name] = true
			own[b] = true
			if parent := f.supers[f.Name][b.Name]; parent != nil && b.family == f.Name && strings.Join(parent.Params, ",") != strings.Join(b.Params, ",") {
				c.errf(b.Pos, "block %s(%s) overrides %s's %s(%s): an override takes the parameters of the block it replaces, which %s's callers pass", b.Name, strings.Join(b.Params, ", "), parent.family, b.Name, strings.Join(parent.Params, ", "), parent.family)
			}
		case it.Config != nil:
			for _, fd := range it.Config.Fields {
				if fd.Require == nil {
					c.allFields[fd.Name] = true
				}
			}
		case it.Loop != nil:
			c.loopVars[it.Loop.Var] = true
		case it.MTP != nil:
			c.loopVars[it.MTP.Var] = true
		case it.GGUF != nil:
			if sections++; sections == 2 {
				c.errf(it.GGUF.Pos, "a second gguf section; a family has one")
			}
		}
	}
	matched := false
	var firstLoop *Loop
	var firstMTP *MTP
	for _, it := range f.Items {
		switch {
		case it.Match != nil:
			matched = true
			c.cfgExpr(it.Match.Cond, c.allFields)
			if n := it.Match.Nest; n != nil && n.Scope != nil {
				segs := n.Scope.Segs
				if n.As != nil {
					segs = append(append([]*Seg{}, segs...), n.As.Segs...)
				}
				for _, sg := range segs {
					if sg.Name == "" {
						c.errf(sg.Pos, "a match clause's weight scope is a path of names (the wrapper's module, e.g. language_model)")
					}
				}
			}
		case it.Config != nil:
			for _, fd := range it.Config.Fields {
				if r := fd.Require; r != nil {
					if len(r.Message) == 0 {
						c.errf(r.Pos, "require needs a message saying what the family cannot run and what to do: require COND, \"...\"")
					}
					// Checked once every field is bound: it sees them all.
					c.cfgExpr(r.Cond, c.allFields)
					for _, e := range r.Message {
						c.cfgExpr(e, c.allFields)
					}
					continue
				}
				c.cfgExpr(fd.Default, c.fields)
				if c.fields[fd.Name] {
					c.errf(fd.Pos, "config field %q declared twice", fd.Name)
				}
				c.fields[fd.Name] = true
			}
		case it.Block != nil:
			c.block(it.Block)
		case it.Module != nil:
			for _, m := range it.Module.split() {
				c.module(m)
			}
		case it.GGUF != nil:
			c.gguf(it.GGUF)
		case it.Stmt != nil:
			c.stmt(it.Stmt)
		case it.Loop != nil:
			if firstLoop != nil {
				c.errf(it.Loop.Pos, "a second decoder-layer loop (the first is at %s): a family has one loop, and what follows it is the head, which prefill runs on the last position only; put every layer kind in one loop and choose per layer (layer_types[i])", firstLoop.Pos)
			}
			firstLoop = it.Loop
			c.cfgExpr(it.Loop.Count, c.allFields)
			c.loopVar = it.Loop.Var
			c.path(it.Loop.Scope, true)
			inLoop := map[string]bool{it.Loop.Var: true}
			for k := range c.allFields {
				inLoop[k] = true
			}
			for _, sg := range it.Loop.Scope.Segs {
				if sg.Index != nil { // model.layers.{i}: the loop variable and config fields
					c.valueExpr(sg.Index, inLoop, false)
				}
			}
			for _, st := range it.Loop.Body {
				c.stmt(st)
			}
			c.loopVar = ""
		case it.MTP != nil:
			m := it.MTP
			if firstMTP != nil {
				c.errf(m.Pos, "a second mtp module (the first is at %s): archc drafts with one", firstMTP.Pos)
			}
			firstMTP = m
			c.cfgExpr(m.Index, c.allFields)
			c.cfgExpr(m.Cond, c.allFields)
			c.loopVar = m.Var
			c.path(m.Scope, true)
			inMTP := map[string]bool{m.Var: true}
			for k := range c.allFields {
				inMTP[k] = true
			}
			for _, p := range []*Path{m.Scope, m.Layer} {
				if p == nil {
					continue
				}
				if p == m.Layer {
					c.path(p, true)
				}
				for _, sg := range p.Segs {
					if sg.Index != nil {
						c.valueExpr(sg.Index, inMTP, false)
					}
				}
			}
			for _, st := range m.Body {
				c.stmt(st)
			}
			c.loopVar = ""
		}
	}
	// Parent versions of blocks, reachable only through super calls.
	for _, b := range c.bs.all() {
		if !own[b] {
			c.block(b)
		}
	}
	c.recursion()
	c.kinds(f)
	switch {
	case f.encoder != nil:
		e := f.encoder
		fields := c.allFields
		if e.Over != "" {
			fields = maps.Clone(fields)
			fields[e.Over] = true
		}
		if len(e.Params) == 0 {
			c.errf(e.Pos, "encoder %s has no inputs: it amends an inherited encoder of that name, which the family does not have; declare its inputs, `encoder %s(pixels: [...]) ...`", e.Name, e.Name)
		}
		for i, p := range e.Params {
			if slices.ContainsFunc(e.Params[:i], func(q *EncoderParam) bool { return q.Name == p.Name }) {
				c.errf(p.Pos, "encoder %s: input %s declared twice", e.Name, p.Name)
			}
			for _, x := range p.Shape {
				c.cfgExpr(x, fields)
			}
		}
		if !c.locals[f.output()] && len(e.Params) > 0 {
			c.errf(f.Pos, "encoder %s never binds %s, its output ([1, tokens, width])", f.output(), f.output())
		}
	default:
		if !matched && f.Extends == "" && !f.extended {
			c.errf(f.Pos, "arch %s has no match clause; add `match model_type \"...\"`", f.Name)
		}
		if !c.locals["logits"] {
			c.errf(f.Pos, "arch %s never binds logits", f.Name)
		}
		if len(c.loopVars) == 0 {
			c.errf(f.Pos, "arch %s has no decoder-layer loop; add one: `for i in range(num_hidden_layers) scope model.layers.{i} { ... }`", f.Name)
		}
		for _, ef := range Encoders(f) {
			c.errs = append(c.errs, Check(ef, reg)...)
			if e := ef.encoder; e.Scope != nil {
				for _, sg := range append(append([]*Seg{}, e.Scope.Segs...), e.As.Segs...) {
					if sg.Name == "" {
						c.errf(sg.Pos, "an encoder's weight scope is a path of names (e.g. vision_tower.vision_model as vision_tower)")
					}
				}
			}
		}
	}
	sort.SliceStable(c.errs, func(i, j int) bool {
		a, b := c.errs[i].Pos, c.errs[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Line < b.Line || (a.Line == b.Line && a.Column < b.Column)
	})
	// A module declaration's errors are found again at each of its uses.
	out := c.errs[:0]
	seen := map[string]bool{}
	for _, e := range c.errs {
		if k := e.Error(); !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// recursion reports blocks that call themselves, directly or through other
// blocks (block calls are inlined, so recursion can never end). A super
// call reaches another block (the parent's version), not itself.
func (c *checker) recursion() {
	type edge struct {
		call *Call
		to   *Block
	}
	calls := map[*Block][]edge{}
	blocks := c.bs.all()
	for _, b := range blocks {
		Inspect(b, func(n Node) bool {
			if call, ok := n.(*Call); ok {
				if to, err := c.bs.resolve(call, b); err == nil && to != nil {
					calls[b] = append(calls[b], edge{call, to})
				}
			}
			return true
		})
	}
	const (
		unvisited = iota
		active
		done
	)
	state := map[*Block]int{}
	var visit func(b *Block) bool
	visit = func(b *Block) bool {
		state[b] = active
		for _, e := range calls[b] {
			switch state[e.to] {
			case active:
				c.errf(e.call.Pos, "block %s calls %s recursively; blocks are inlined, so recursion never ends", b.Name, callName(e.call))
				state[b] = done // off the stack: a later caller of b is not itself recursive
				return true
			case unvisited:
				if visit(e.to) {
					state[b] = done
					return true
				}
			}
		}
		state[b] = done
		return false
	}
	for _, b := range blocks {
		if state[b] == unvisited {
			visit(b)
		}
	}
}

// callName is a call's callee as written: NAME or super.NAME.
func callName(c *Call) string {
	if c.Super {
		return "super." + c.Name
	}
	return c.Name
}

type checker struct {
	reg       ir.Registry
	bs        *blockSet
	fields    map[string]bool // config fields declared so far (defaults see only these)
	allFields map[string]bool // every config field
	loopVars  map[string]bool // the layer loops' variables, which blocks may read
	locals    map[string]bool // bindings in scope: statements, block parameters, the graph's inputs
	inputs    []string        // the graph's inputs (File.inputs): tokens, an encoder's output, or an encoder's pixels
	loopVar   string          // the loop variable, inside a loop body
	in        *Block          // the block being checked, nil outside blocks
	inModule  bool            // checking a module declaration, which may read the loop variable
	errs      []*Error
}

// inputSet is a fresh scope holding the graph's inputs.
func (c *checker) inputSet() map[string]bool {
	m := map[string]bool{}
	for _, n := range c.inputs {
		m[n] = true
	}
	return m
}

func (c *checker) errf(pos lexer.Position, format string, args ...any) {
	c.errs = append(c.errs, errorf(pos, format, args...))
}

func (c *checker) block(b *Block) {
	outer := c.locals
	c.locals = c.inputSet()
	for _, p := range b.Params {
		c.locals[p] = true
	}
	c.in = b
	for _, st := range b.Body {
		c.stmt(st)
	}
	c.expr(b.Return, false)
	c.locals, c.in = outer, nil
}

func (c *checker) stmt(st *Stmt) {
	c.expr(st.Value, false)
	c.locals[st.Name] = true
}

// cfgExpr checks a config expression: only literals, lists, the fields in
// fields and dict keys of them; no calls.
func (c *checker) cfgExpr(e *Expr, fields map[string]bool) {
	c.valueExpr(e, fields, false)
}

// valueExpr checks an expression over config-time values: names must be in
// names (config fields, or a gguf section's earlier entries); calls are
// allowed only of configFuncs (log), range, int, len, str, max, dict and, in a gguf section (gguf true), of
// ggufFuncs.
func (c *checker) valueExpr(e *Expr, names map[string]bool, gguf bool) {
	Inspect(e, func(n Node) bool {
		switch n := n.(type) {
		case *List:
			if n.Var == "" {
				return true
			}
			c.valueExpr(n.Over, names, gguf)
			if len(n.Elems) != 1 {
				c.errf(n.Pos, "a comprehension has one element expression, got %d", len(n.Elems))
			}
			inner := map[string]bool{n.Var: true}
			for k := range names {
				inner[k] = true
			}
			for _, el := range n.Elems {
				c.valueExpr(el, inner, gguf)
			}
			return false
		case *Call:
			switch {
			case !n.Super && n.Name == failFunc:
			case !n.Super && (configFuncs[n.Name] != nil || n.Name == rangeFunc || n.Name == intFunc || n.Name == lenFunc || n.Name == strFunc):
				if len(n.Args) != 1 || n.Args[0].Name != "" {
					c.errf(n.Pos, "%s takes one positional argument", n.Name)
				}
			case !n.Super && n.Name == maxFunc:
				for _, a := range n.Args {
					if a.Name != "" {
						c.errf(a.Pos, "%s takes positional arguments only", n.Name)
					}
				}
				if len(n.Args) == 0 {
					c.errf(n.Pos, "%s needs a list or some numbers", n.Name)
				}
			case !n.Super && n.Name == splitFunc:
				if len(n.Args) != 2 || n.Args[0].Name != "" || n.Args[1].Name != "" {
					c.errf(n.Pos, "%s takes two positional arguments (a string and its separator)", n.Name)
				}
			case !n.Super && n.Name == dictFunc:
				for _, a := range n.Args {
					if a.Name == "" {
						c.errf(a.Pos, "%s takes keyword arguments only (name: value)", n.Name)
					}
				}
			case gguf:
				c.ggufCall(n, names)
				return false
			default:
				c.errf(n.Pos, "primitive call %s(...) is not allowed in a config expression", callName(n))
				return false
			}
		case *Path:
			head := n.Segs[0]
			if head.Name != "" && !names[head.Name] {
				what := "config field"
				if gguf {
					what = "name (a gguf field or let declared before, or a metadata key through meta(...))"
				}
				c.errf(head.Pos, "unknown %s %q%s", what, head.Name, suggest(head.Name, keys(names)))
			}
		}
		return true
	})
}

// expr checks the names and calls in e; w says whether e stands in a
// weight position (names.go). An argument stands in a weight position
// where its parameter takes a weight module; one without a known parameter
// (argIsUnsure) has no known kind, so any name is accepted there: the call
// itself is reported, once. An unknown callee's arguments are checked
// against the primitive or block its did-you-mean names.
func (c *checker) expr(e *Expr, w bool) {
	arg := func(call *Call, i int, a *Arg) bool {
		return c.bs.argIsWeight(call, c.in, i, a) || c.bs.argIsUnsure(call, c.in, i, a)
	}
	inspectWeights(e, w, arg, func(n Node, w bool) bool {
		switch n := n.(type) {
		case *List:
			if n.Var != "" {
				c.comprehension(n)
				return false
			}
		case *Call:
			c.call(n)
		case *Path:
			c.path(n, w)
		}
		return true
	})
}

// comprehension checks a comprehension in a graph expression: its
// variable is bound in its element expression only.
func (c *checker) comprehension(l *List) {
	c.expr(l.Over, false)
	if len(l.Elems) != 1 {
		c.errf(l.Pos, "a comprehension has one element expression, got %d", len(l.Elems))
	}
	saved, had := c.locals[l.Var]
	c.locals[l.Var] = true
	for _, e := range l.Elems {
		c.expr(e, false)
	}
	if had {
		c.locals[l.Var] = saved
	} else {
		delete(c.locals, l.Var)
	}
}

// path reports a name that is bound nowhere, unless it stands in a weight
// position (its computed segments are checked by the walk).
func (c *checker) path(p *Path, w bool) {
	head := p.Segs[0].Name
	if head != "" && (c.locals[head] || c.allFields[head] || head == c.loopVar || ((c.in != nil || c.inModule) && c.loopVars[head])) {
		return
	}
	if !w {
		c.errs = append(c.errs, c.bs.unknownName(p, c.known()))
	}
}

// known lists the names in scope, for did-you-mean hints.
func (c *checker) known() []string {
	out := append(keys(c.locals), keys(c.allFields)...)
	if c.loopVar != "" {
		out = append(out, c.loopVar)
	}
	if c.in != nil {
		out = append(out, keys(c.loopVars)...)
	}
	return out
}

// call reports a call whose callee is unknown or whose arguments do not
// bind (bind.go); the walk checks the arguments themselves.
func (c *checker) call(call *Call) {
	if c.bs.builtin(call) {
		if call.Name != failFunc && (len(call.Args) != 1 || call.Args[0].Name != "") {
			c.errf(call.Pos, "%s takes one positional argument", call.Name)
		}
		return
	}
	cl, err := c.bs.target(call, c.in)
	if err != nil {
		c.errs = append(c.errs, err.(*Error))
		return
	}
	_, errs, _ := bind(call, cl)
	c.errs = append(c.errs, errs...)
}

// module checks a module declaration or override: its callee is a
// primitive that takes the arguments given; its expressions name config
// fields, the loop variable or, where the primitive takes a weight module,
// weight paths (a declaration does not see the bindings where it is used).
func (c *checker) module(m *Module) {
	outer := c.locals
	c.locals, c.inModule = map[string]bool{}, true
	defer func() { c.locals, c.inModule = outer, false }()
	if m.Call == nil {
		def := c.bs.modules[m.Name]
		if def == nil {
			c.errf(m.Pos, "module %s.%s: no module %s is declared%s; declare it: module %s = PRIMITIVE(...)", m.Name, m.Attr, m.Name, suggest(m.Name, keysOfModules(c.bs.modules)), m.Name)
			c.expr(m.Value, true)
			return
		}
		cl, err := c.bs.target(&Call{Pos: m.Pos, Name: m.Name}, nil)
		w := false
		if err == nil {
			if j := cl.index(-1, &Arg{Name: m.Attr}); j >= 0 {
				w = cl.params[j].kind == ir.Module
			}
		}
		c.expr(m.Value, w)
		return
	}
	_, isPrim := c.reg.Primitive(m.Name)
	_, isBlock := c.bs.blocks[m.Name]
	switch {
	case isPrim:
		c.errf(m.Pos, "module %q has the name of a primitive", m.Name)
		return
	case isBlock:
		c.errf(m.Pos, "module %q has the name of a block", m.Name)
		return
	}
	use := &Call{Pos: m.Call.Pos, Name: m.Name, Args: []*Arg{{Pos: m.Call.Pos}}} // the input, given where it is used
	cl, err := c.bs.target(use, nil)
	if err != nil {
		c.errs = append(c.errs, err.(*Error))
		for _, a := range m.Call.Args {
			c.expr(a.Value, true)
		}
		return
	}
	bound, errs, _ := bind(use, cl)
	c.errs = append(c.errs, errs...)
	weight := map[*Arg]bool{}
	for _, b := range bound {
		weight[b.arg] = cl.params[b.param].kind == ir.Module
	}
	for _, a := range m.Call.Args {
		c.expr(a.Value, weight[a])
	}
}

func keysOfModules(m map[string]*moduleDef) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
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
