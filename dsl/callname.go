package dsl

// callName is the segment a block call adds to the names of the nodes it
// builds (their path, which locations and emit summaries show): the
// callee's name, and when the caller calls that block more than once, the
// callee of its first argument (or that argument's name) in parentheses,
// so that the calls are told apart as the source reads: llama's
// `rotary(query(h))` and `rotary(key(h))` are attn/rotary(query) and
// attn/rotary(key). A call whose first argument is neither keeps the bare
// name.
func (b *builder) callName(caller *Block, c *Call) string {
	if caller == nil || !b.callsMoreThanOnce(caller, c.Name) || len(c.Args) == 0 || c.Args[0].Name != "" {
		return c.Name
	}
	if l := argLabel(c.Args[0].Value); l != "" {
		return c.Name + "(" + l + ")"
	}
	return c.Name
}

// callsMoreThanOnce reports whether blk's body and return call name more
// than once.
func (b *builder) callsMoreThanOnce(blk *Block, name string) bool {
	if b.repeated == nil {
		b.repeated = map[*Block]map[string]bool{}
	}
	rep, ok := b.repeated[blk]
	if !ok {
		rep = map[string]bool{}
		seen := map[string]bool{}
		Inspect(blk, func(n Node) bool {
			if c, ok := n.(*Call); ok {
				rep[c.Name] = seen[c.Name]
				seen[c.Name] = true
			}
			return true
		})
		b.repeated[blk] = rep
	}
	return rep[name]
}

// argLabel names an argument for callName: the callee of a call
// (`query(h)`: query), a bare name (`q`), else "".
func argLabel(e *Expr) string {
	if e == nil || e.Then != nil || e.Cond == nil || len(e.Cond.Rest) > 0 {
		return ""
	}
	u := e.Cond.First
	if u.Op != "" || len(u.Index) > 0 {
		return ""
	}
	if c := u.Operand.Call; c != nil {
		return c.Name
	}
	return operandName(u)
}
