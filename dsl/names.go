package dsl

import (
	"fmt"
	"sort"

	"github.com/archc/archc/dsl/ir"
)

// Name resolution, shared by the checker (check.go) and the evaluator
// (eval.go). A name resolves, in order, to a local binding (a statement or a
// block parameter), the loop variable, a config field, or the graph input
// `tokens`. An unbound name is a weight module path, relative to the current
// weight scope (`self_attn.q_proj` in layer 3 is
// model.layers.3.self_attn.q_proj), only in a weight position:
//
//   - the argument of a primitive's weight-module parameter;
//   - the argument of a block parameter that the block itself uses in a
//     weight position (inferred, through any depth of block calls);
//   - either branch of a conditional, or a parenthesised expression, that
//     stands in a weight position;
//   - the scope path of the layer loop.
//
// Anywhere else an unbound name is an error with a did-you-mean, so that a
// typo such as `hiden` never silently becomes a weight path.

// blockSet resolves block calls and knows which block parameters take
// weight modules.
type blockSet struct {
	reg     ir.Registry
	blocks  map[string]*Block            // the file's blocks by name (the last of a name wins)
	supers  map[string]map[string]*Block // see File.supers
	modules map[string]*moduleDef        // the declared modules by name
	orphans []*Module                    // overrides of modules declared nowhere
	weight  map[*Block][]bool            // per parameter: used in a weight position
	unsure  map[*Block][]bool            // per parameter: passed to a callee that does not resolve
}

func newBlockSet(f *File, reg ir.Registry) *blockSet {
	bs := &blockSet{reg: reg, blocks: map[string]*Block{}, modules: map[string]*moduleDef{}, supers: f.supers, weight: map[*Block][]bool{}, unsure: map[*Block][]bool{}}
	for _, it := range f.Items {
		if it.Block != nil {
			bs.blocks[it.Block.Name] = it.Block
		}
		if it.Module == nil {
			continue
		}
		for _, m := range it.Module.split() {
			switch def := bs.modules[m.Name]; {
			case m.Call != nil:
				bs.modules[m.Name] = &moduleDef{decl: m}
			case def == nil:
				bs.orphans = append(bs.orphans, m)
			default:
				def.over = append(def.over, m)
			}
		}
	}
	bs.inferParams(bs.weight, bs.argIsWeight)
	bs.inferParams(bs.unsure, bs.argIsUnsure)
	return bs
}

// all returns every block a call can reach, the file's and the parents'
// versions that super calls name, in a deterministic order.
func (bs *blockSet) all() []*Block {
	seen := map[*Block]bool{}
	var out []*Block
	add := func(m map[string]*Block) {
		for _, name := range keysOf(m) {
			if b := m[name]; !seen[b] {
				seen[b] = true
				out = append(out, b)
			}
		}
	}
	add(bs.blocks)
	fams := make([]string, 0, len(bs.supers))
	for f := range bs.supers {
		fams = append(fams, f)
	}
	sort.Strings(fams)
	for _, f := range fams {
		add(bs.supers[f])
	}
	return out
}

// resolve returns the block that c calls from inside block in (nil at top
// level), or nil when c calls a primitive. A super call resolves against
// the parent of the family that wrote in.
func (bs *blockSet) resolve(c *Call, in *Block) (*Block, error) {
	if !c.Super {
		return bs.blocks[c.Name], nil
	}
	if in == nil {
		return nil, errorf(c.Pos, "super.%s(...) may only be called inside a block", c.Name)
	}
	parent, ok := bs.supers[in.family]
	if !ok {
		return nil, errorf(c.Pos, "super.%s: arch %s does not extend another family", c.Name, in.family)
	}
	b, ok := parent[c.Name]
	if !ok {
		return nil, errorf(c.Pos, "super.%s: the parent of arch %s has no block %q%s", c.Name, in.family, c.Name, suggest(c.Name, keysOf(parent)))
	}
	return b, nil
}

// blockBuiltins are the config builtins a block may call too, on
// config-time values (a list, a string, a number; never a tensor): len,
// int and str. A block, module or primitive of the same name wins (max,
// for one, is a primitive in a block).
var blockBuiltins = map[string]bool{lenFunc: true, intFunc: true, strFunc: true}

// builtin reports whether call c in a block calls a builtin, not a block,
// module or primitive: fail(...), or root(...) or one of blockBuiltins
// that nothing of the file or the registry shadows.
func (bs *blockSet) builtin(c *Call) bool {
	switch {
	case c.Super:
		return false
	case c.Name == failFunc:
		return true
	case !blockBuiltins[c.Name] && c.Name != rootFunc:
		return false
	case bs.blocks[c.Name] != nil || bs.modules[c.Name] != nil:
		return false
	}
	_, prim := bs.reg.Primitive(c.Name)
	return !prim
}

// target returns what call c, made inside block in (nil at top level),
// reaches: a block, a primitive or a declared module. A bad super call or
// an unknown name is an error (with a did-you-mean); a builtin (fail(...),
// len(...), bs.builtin) is not a call target (nil, nil).
func (bs *blockSet) target(c *Call, in *Block) (*callee, error) {
	if bs.builtin(c) {
		return nil, nil
	}
	blk, err := bs.resolve(c, in)
	switch {
	case err != nil:
		return nil, err
	case blk != nil:
		return blockCallee(blk), nil
	}
	if p, ok := bs.reg.Primitive(c.Name); ok { // a module of a primitive's name is an error (check.go)
		return primCallee(p), nil
	}
	if m, ok := bs.modules[c.Name]; ok {
		p, ok := bs.reg.Primitive(m.decl.Call.Name)
		if !ok {
			return nil, errorf(m.decl.Call.Pos, "module %s: unknown primitive %q%s (a module declares a primitive call)", c.Name, m.decl.Call.Name, unknownCallHint(m.decl.Call.Name, bs.reg.Names(), nil, nil))
		}
		return moduleCallee(c.Name, m, p), nil
	}
	return nil, errorf(c.Pos, "unknown primitive %q%s", c.Name, unknownCallHint(c.Name, bs.reg.Names(), keysOf(bs.blocks), keysOfModules(bs.modules)))
}

// callee returns what call c, made inside block in, reaches: as target, or
// for an unknown name the primitive or block its did-you-mean names
// (unknownCallHint), so that one misspelt call does not change the kinds of
// the names around it; nil for fail(...), a bad super call or a name close
// to nothing.
func (bs *blockSet) callee(c *Call, in *Block) *callee {
	cl, err := bs.target(c, in)
	if err == nil || c.Super {
		return cl
	}
	p, b, m := meant(c.Name, bs.reg.Names(), keysOf(bs.blocks), keysOfModules(bs.modules))
	if prim, ok := bs.reg.Primitive(p); p != "" && ok {
		return primCallee(prim)
	}
	if blk := bs.blocks[b]; blk != nil {
		return blockCallee(blk)
	}
	if mod := bs.modules[m]; mod != nil {
		if prim, ok := bs.reg.Primitive(mod.decl.Call.Name); ok {
			return moduleCallee(m, mod, prim)
		}
	}
	return nil
}

// argIsWeight reports whether argument i (a) of call c, made inside block
// in, stands in a weight position.
func (bs *blockSet) argIsWeight(c *Call, in *Block, i int, a *Arg) bool {
	if c.Name == rootFunc && bs.builtin(c) {
		return true // root(PATH): a weight path from the file's root
	}
	cl := bs.callee(c, in)
	if cl == nil {
		return false
	}
	j := cl.index(i, a)
	switch {
	case j < 0:
		return false
	case cl.blk != nil:
		return bs.weight[cl.blk][j]
	}
	return cl.params[j].kind == ir.Module
}

// argIsUnsure reports whether argument i (a) of call c, made inside block
// in, has no known parameter, directly or through a block parameter that
// has none: the callee is unknown (and close to nothing), a bad super call,
// or takes no such argument. The checker reports that call and accepts a
// weight path for such an argument, so that one misspelt primitive in a
// block does not also make every weight path its callers pass an
// "unknown name".
func (bs *blockSet) argIsUnsure(c *Call, in *Block, i int, a *Arg) bool {
	if bs.builtin(c) {
		return false
	}
	cl := bs.callee(c, in)
	if cl == nil {
		return true
	}
	j := cl.index(i, a)
	return j < 0 || (cl.blk != nil && bs.unsure[cl.blk][j])
}

// inferParams marks in mark the block parameters that stand in an argument
// position for which arg holds (argIsWeight: a weight position;
// argIsUnsure: an unresolved callee), directly or as arguments of other
// blocks' marked parameters, until nothing changes. A parameter rebound by
// a statement is a plain local from there on.
func (bs *blockSet) inferParams(mark map[*Block][]bool, arg blockArgPred) {
	blocks := bs.all()
	for _, b := range blocks {
		mark[b] = make([]bool, len(b.Params))
	}
	for changed := true; changed; {
		changed = false
		for _, b := range blocks {
			rebound := map[string]bool{}
			visit := func(n Node, w bool) bool {
				p, ok := n.(*Path)
				if !ok {
					return true
				}
				head := p.Segs[0].Name
				if !w || head == "" || rebound[head] {
					return true
				}
				for j, name := range b.Params {
					if name == head && !mark[b][j] {
						mark[b][j] = true
						changed = true
					}
				}
				return true
			}
			in := func(c *Call, i int, a *Arg) bool { return arg(c, b, i, a) }
			for _, st := range b.Body {
				inspectWeights(st.Value, false, in, visit)
				rebound[st.Name] = true
			}
			inspectWeights(b.Return, false, in, visit)
		}
	}
}

// blockArgPred says whether argument i (a) of call c, made inside block
// in, stands in the position an inference looks for.
type blockArgPred func(c *Call, in *Block, i int, a *Arg) bool

// unknownName is the diagnostic for an unbound name outside a weight
// position. known lists the names in scope, for the did-you-mean.
func (bs *blockSet) unknownName(p *Path, known []string) *Error {
	head := p.Segs[0]
	if head.Name == "" {
		return errorf(p.Pos, "a weight path may only stand where a weight module is expected")
	}
	if _, ok := bs.blocks[head.Name]; ok && len(p.Segs) == 1 {
		return errorf(head.Pos, "block %s is not a value; call it: %s(...)", head.Name, head.Name)
	}
	hint := suggest(head.Name, known)
	if hint == "" && len(p.Segs) > 1 {
		hint = " (a weight path such as " + pathText(p) + " may only stand where a weight module is expected)"
	}
	return errorf(head.Pos, "unknown name %q%s", head.Name, hint)
}

// pathText renders a path as written, with `{...}` for computed segments.
func pathText(p *Path) string {
	s := ""
	for i, seg := range p.Segs {
		if i > 0 {
			s += "."
		}
		switch {
		case seg.Name != "":
			s += seg.Name
		case seg.Num != nil:
			s += fmt.Sprint(*seg.Num)
		default:
			s += "{...}"
		}
	}
	return s
}
