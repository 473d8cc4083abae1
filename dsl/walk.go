package dsl

import "reflect"

// The AST walker: the one place that knows each node's children and which
// of them stand in a weight position (names.go). The checker's name,
// call and config-expression passes, the weight-parameter inference and the
// recursion check walk with it; the evaluators (eval.go, kinds.go), which
// compute a value per node rather than visit nodes, take the weight-position
// rule from the same functions (condWeight, firstWeight, operandWeight).

// Node is a node of the .arch AST: *File, *Item, *Match, *Config, *Field,
// *Block, *Module, *ModuleAttr, *Loop, *MTP, *GGUF, *GGUFEntry, *GGUFTensor, *GGUFSplitPart,
// *GGUFTransform, *GGUFField, *Stmt, *Expr, *BinExpr, *BinOp, *Unary, *Primary, *List,
// *Call, *Arg, *Path or *Seg.
type Node interface{ astNode() }

func (*File) astNode()          {}
func (*Item) astNode()          {}
func (*Encoder) astNode()       {}
func (*Match) astNode()         {}
func (*Require) astNode()       {}
func (*Nest) astNode()          {}
func (*Config) astNode()        {}
func (*Field) astNode()         {}
func (*Block) astNode()         {}
func (*Module) astNode()        {}
func (*ModuleAttr) astNode()    {}
func (*Loop) astNode()          {}
func (*MTP) astNode()           {}
func (*GGUF) astNode()          {}
func (*GGUFEntry) astNode()     {}
func (*GGUFTensor) astNode()    {}
func (*GGUFSplitPart) astNode() {}
func (*GGUFTransform) astNode() {}
func (*GGUFRename) astNode()    {}
func (*GGUFField) astNode()     {}
func (*Stmt) astNode()          {}
func (*Expr) astNode()          {}
func (*BinExpr) astNode()       {}
func (*BinOp) astNode()         {}
func (*Unary) astNode()         {}
func (*Primary) astNode()       {}
func (*List) astNode()          {}
func (*Call) astNode()          {}
func (*Arg) astNode()           {}
func (*Path) astNode()          {}
func (*Seg) astNode()           {}

// Inspect walks the AST under n depth-first in source order, as go/ast's
// Inspect does: it calls f(node) for n and every node under it, and skips a
// node's children when f returns false. Nil nodes are not visited.
func Inspect(n Node, f func(Node) bool) {
	walk(n, false, nil, func(n Node, _ bool) bool { return f(n) })
}

// argPred says whether argument i (a) of call c stands in the position a
// walk looks for (a weight position, names.go).
type argPred func(c *Call, i int, a *Arg) bool

// inspectWeights is Inspect that also says, for each node, whether it
// stands in a weight position, given whether n does (w) and, per call
// argument, arg (nil: no argument does). A module declaration's call binds
// its arguments from the callee's second parameter on (the first is the
// module's input), which arg sees as indexes from 1.
func inspectWeights(n Node, w bool, arg argPred, f func(n Node, w bool) bool) {
	walk(n, w, arg, f)
}

// condWeight, firstWeight and operandWeight are the weight-position rule:
// a conditional's branches stand where the conditional does, its condition
// never; of a binary run only a lone operand does; of a unary only a bare
// primary (no operator, no index) does; a parenthesised expression stands
// where its parentheses do.
func condWeight(e *Expr, w bool) bool     { return w && e.Then == nil }
func firstWeight(b *BinExpr, w bool) bool { return w && len(b.Rest) == 0 }
func operandWeight(u *Unary, w bool) bool { return w && u.Op == "" && len(u.Index) == 0 }

func walk(n Node, w bool, arg argPred, f func(Node, bool) bool) {
	if isNil(n) || !f(n, w) {
		return
	}
	sub := func(c Node, w bool) { walk(c, w, arg, f) }
	exprs := func(es []*Expr) {
		for _, e := range es {
			sub(e, false)
		}
	}
	switch n := n.(type) {
	case *File:
		for _, it := range n.Items {
			sub(it, false)
		}
	case *Item:
		sub(n.Match, false)
		sub(n.Config, false)
		sub(n.Block, false)
		sub(n.Module, false)
		sub(n.Loop, false)
		sub(n.GGUF, false)
		sub(n.Encoder, false)
		sub(n.MTP, false)
		sub(n.Stmt, false)
	case *Encoder:
		for _, p := range n.Params {
			exprs(p.Shape)
		}
		for _, it := range n.Items {
			sub(it, false)
		}
	case *Match:
		sub(n.Nest, false)
		sub(n.Cond, false)
	case *Nest:
		sub(n.Scope, true)
		sub(n.As, true)
	case *Config:
		for _, fd := range n.Fields {
			sub(fd, false)
		}
	case *Field:
		sub(n.Require, false)
		sub(n.Default, false)
	case *Require:
		sub(n.Cond, false)
		for _, e := range n.Message {
			sub(e, false)
		}
	case *Block:
		for _, st := range n.Body {
			sub(st, false)
		}
		sub(n.Return, false)
	case *Module:
		if n.Call != nil {
			if f(n.Call, false) {
				for i, a := range n.Call.Args {
					sub(a, arg != nil && arg(n.Call, i+1, a))
				}
			}
			return
		}
		for _, t := range n.More {
			sub(t, false)
		}
		sub(n.Value, false)
	case *Loop:
		sub(n.Count, false)
		sub(n.Scope, true)
		for _, st := range n.Body {
			sub(st, false)
		}
	case *MTP:
		sub(n.Index, false)
		sub(n.Scope, true)
		sub(n.Layer, true)
		sub(n.Cond, false)
		for _, st := range n.Body {
			sub(st, false)
		}
	case *GGUF:
		sub(n.Cond, false)
		for _, e := range n.Entries {
			sub(e, false)
		}
	case *GGUFEntry:
		sub(n.Tensor, false)
		sub(n.Transform, false)
		sub(n.Rename, false)
		sub(n.Field, false)
	case *GGUFTensor:
		sub(n.GGUF, false)
		sub(n.HF, false)
		for _, sp := range n.Split {
			sub(sp, false)
		}
		sub(n.Layers, false)
		sub(n.Value, false)
	case *GGUFSplitPart:
		sub(n.HF, false)
	case *GGUFTransform:
		sub(n.Call, false)
	case *GGUFRename:
		sub(n.From, false)
		sub(n.To, false)
	case *GGUFField:
		sub(n.Value, false)
	case *Stmt:
		sub(n.Value, false)
	case *Expr:
		sub(n.Cond, condWeight(n, w))
		sub(n.Then, w)
		sub(n.Else, w)
	case *BinExpr:
		sub(n.First, firstWeight(n, w))
		for _, op := range n.Rest {
			sub(op, false)
		}
	case *BinOp:
		sub(n.Right, false)
	case *Unary:
		sub(n.Operand, operandWeight(n, w))
		exprs(n.Index)
	case *Primary:
		sub(n.List, false)
		sub(n.Call, false)
		sub(n.Path, w)
		sub(n.Sub, w)
	case *List:
		exprs(n.Elems)
		sub(n.Over, false)
	case *Call:
		for i, a := range n.Args {
			sub(a, arg != nil && arg(n, i, a))
		}
	case *Arg:
		sub(n.Value, w)
	case *Path:
		for _, s := range n.Segs {
			sub(s, false)
		}
	case *Seg:
		sub(n.Index, false)
	}
}

// isNil reports whether n is nil or a nil pointer (every node type is a
// pointer).
func isNil(n Node) bool { return n == nil || reflect.ValueOf(n).IsNil() }
