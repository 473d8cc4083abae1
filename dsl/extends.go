package dsl

import (
	"slices"
	"strings"
)

// Resolve returns the file a family denotes once its `extends` chain is
// applied; a file without `extends` is returned as is. parent looks a family
// up by arch name (it returns an error for unknown names). The result keeps
// the child's name and match clauses and merges the rest by name, as Hugging
// Face modular files do:
//   - config fields: the parent's, each replaced by a child field of the
//     same name, then the child's new fields (a new field written before
//     an overriding one is placed before the parent field it overrides);
//   - blocks: the parent's, each replaced by a child block of the same name,
//     then the child's new blocks;
//   - modules: the parent's declarations and overrides, a declaration the
//     child repeats replaced by it (with the parent's overrides of it
//     dropped), an override the child repeats replaced by it, then the
//     child's new overrides and declarations;
//   - the gguf section: the child's claim (the general.architecture names
//     and condition, never inherited) over the parent's entries, each
//     replaced by a child entry of the same key (a field or let by name, a
//     tensor row by its GGUF name, a transform by its pattern), then the
//     child's new entries;
//   - encoders: the parent's, each replaced whole by a child encoder of the
//     same name, then the child's new ones;
//   - dataflow (top-level statements and the layer loop): the child's if it
//     has any, else the parent's.
//
// A block the child writes may call `super.NAME(...)`: block NAME as the
// parent resolves it (for an overriding block, the version it replaces).
//
// `extends PARENT with M1, M2` applies each mixin's own declarations (its
// file as written, not what its own parent gives it) over the resolved
// PARENT, in order, as a child would, before the file's own: a mixin's
// blocks call `super.NAME` into what it is applied over. A mixin's own
// mixins are applied before it (once each). Each mixin must extend PARENT
// or one of PARENT's ancestors (what it was written against); its match
// clauses are not taken.
//
// Nodes keep their source positions, so diagnostics point into the file
// that wrote them. Errors: an unknown parent or mixin, an extends cycle,
// a mixin written against a family outside PARENT's chain.
func Resolve(f *File, parent func(name string) (*File, error)) (*File, error) {
	return resolve(f, parent, map[string]bool{})
}

func resolve(f *File, parent func(string) (*File, error), seen map[string]bool) (*File, error) {
	if f.Extends == "" {
		return f, nil
	}
	if seen[f.Name] || f.Extends == f.Name {
		return nil, errorf(f.Pos, "arch %s: extends cycle", f.Name)
	}
	seen[f.Name] = true
	pf, err := parent(f.Extends)
	if err != nil {
		return nil, errorf(f.Pos, "arch %s extends %s: %v", f.Name, f.Extends, err)
	}
	base, err := resolve(pf, parent, seen)
	if err != nil {
		return nil, err
	}
	if len(f.With) > 0 {
		if base, err = mixIn(f, base, parent); err != nil {
			return nil, err
		}
	}
	if err := ownDuplicates(f); err != nil {
		return nil, err
	}
	return merge(base, f), nil
}

// mixIn applies f's mixins (f.With) over base, the resolved f.Extends.
func mixIn(f, base *File, parent func(string) (*File, error)) (*File, error) {
	chain := map[string]bool{}
	for name := f.Extends; name != "" && !chain[name]; {
		chain[name] = true
		pf, err := parent(name)
		if err != nil {
			break // resolve reported the chain's errors already
		}
		name = pf.Extends
	}
	applied := map[string]bool{}
	var apply func(name string, via []string) error
	apply = func(name string, via []string) error {
		if applied[name] {
			return nil
		}
		if slices.Contains(via, name) || (len(via) > 0 && name == f.Name) {
			return errorf(f.Pos, "arch %s: mixins that mix each other in (a cycle): %s with %s", f.Name, strings.Join(append([]string{f.Name}, via...), " with "), name)
		}
		mf, err := parent(name)
		if err != nil {
			return errorf(f.Pos, "arch %s with %s: %v", f.Name, name, err)
		}
		switch {
		case name == f.Name:
			return errorf(f.Pos, "arch %s with %s: a family cannot mix itself in", f.Name, name)
		case chain[name]:
			return errorf(f.Pos, "arch %s with %s: %s is already in the extends chain", f.Name, name, name)
		case mf.Extends == "" || !chain[mf.Extends]:
			return errorf(f.Pos, "arch %s with %s: %s is written over %s, which is not %s or one of its ancestors: a mixin's declarations fit only the family they were written against", f.Name, name, name, orNone(mf.Extends), f.Extends)
		}
		// A mixin's own mixins first (what it was written on top of).
		for _, m := range mf.With {
			if err := apply(m, append(slices.Clone(via), name)); err != nil {
				return err
			}
		}
		if err := ownDuplicates(mf); err != nil {
			return err
		}
		applied[name] = true
		base = merge(base, mf)
		return nil
	}
	for _, name := range f.With {
		if err := apply(name, nil); err != nil {
			return nil, err
		}
	}
	return base, nil
}

func orNone(s string) string {
	if s == "" {
		return "no family (it extends none)"
	}
	return s
}

// ownDuplicates reports a block or config field a file declares twice
// itself. Merging keeps one entry per name (a child's replaces its
// parent's), so Check, which sees the merged file, could not tell.
func ownDuplicates(f *File) error {
	blocks := map[string]*Block{}
	fields := map[string]*Field{}
	modules := map[string]*Module{}
	for _, it := range f.Items {
		if it.Module != nil {
			for _, m := range it.Module.split() {
				key := m.Name
				if m.Call == nil {
					key += "." + m.Attr
				}
				if first, dup := modules[key]; dup {
					return errorf(m.Pos, "module %s declared twice (first at %s)", key, first.Pos)
				}
				modules[key] = m
			}
		}
		if b := it.Block; b != nil {
			if first, dup := blocks[b.Name]; dup {
				return errorf(b.Pos, "block %q declared twice (first at %s)", b.Name, first.Pos)
			}
			blocks[b.Name] = b
		}
		if it.Config != nil {
			for _, fd := range it.Config.Fields {
				if fd.Require != nil {
					continue
				}
				if first, dup := fields[fd.Name]; dup {
					return errorf(fd.Pos, "config field %q declared twice (first at %s)", fd.Name, first.Pos)
				}
				fields[fd.Name] = fd
			}
		}
	}
	return nil
}

// merge applies child on top of a resolved base.
func merge(base, child *File) *File {
	out := &File{Pos: child.Pos, Name: child.Name, supers: map[string]map[string]*Block{}, extended: true}
	parentBlocks := map[string]*Block{}
	for _, it := range base.Items {
		if it.Block != nil {
			parentBlocks[it.Block.Name] = it.Block
		}
	}
	for fam, bl := range base.supers {
		out.supers[fam] = bl
	}
	out.supers[child.Name] = parentBlocks
	var items []*Item
	for _, it := range child.Items {
		if it.Match != nil {
			items = append(items, it)
		}
	}
	// Config fields, merged by name into one config block. A new child
	// field written before an overriding one stays before it (placed just
	// before the earliest parent field that a later child field
	// overrides), so that an override's default can read it: an alias such
	// as `num_layers: int = none` then `num_hidden_layers: int = num_layers`.
	childFields := map[string]*Field{}
	for _, fd := range configFields(child) {
		childFields[fd.Name] = fd
	}
	baseIndex := map[string]int{}
	for i, fd := range configFields(base) {
		baseIndex[fd.Name] = i
	}
	kids := configFields(child)
	before := map[int][]*Field{} // base index -> new child fields placed before it
	var after []*Field           // new child fields placed at the end
	for i, fd := range kids {
		if _, over := baseIndex[fd.Name]; over {
			continue
		}
		at := -1
		for _, later := range kids[i+1:] {
			if j, over := baseIndex[later.Name]; over && (at < 0 || j < at) {
				at = j
			}
		}
		if at < 0 {
			after = append(after, fd)
		} else {
			before[at] = append(before[at], fd)
		}
	}
	cfg := &Config{Pos: child.Pos}
	for i, fd := range configFields(base) {
		cfg.Fields = append(cfg.Fields, before[i]...)
		if c, ok := childFields[fd.Name]; ok {
			cfg.Fields = append(cfg.Fields, c)
			continue
		}
		cfg.Fields = append(cfg.Fields, fd)
	}
	cfg.Fields = append(cfg.Fields, after...)
	// Requirements: the parents' then the child's; each is checked once the
	// whole config is bound.
	cfg.Fields = append(append(cfg.Fields, configRequires(base)...), configRequires(child)...)
	items = append(items, &Item{Pos: cfg.Pos, Config: cfg})
	// Blocks, merged by name.
	childBlocks := map[string]*Block{}
	for _, it := range child.Items {
		if it.Block != nil {
			childBlocks[it.Block.Name] = it.Block
		}
	}
	for _, it := range base.Items {
		if b := it.Block; b != nil {
			if c, ok := childBlocks[b.Name]; ok {
				items = append(items, &Item{Pos: c.Pos, Block: c})
				delete(childBlocks, b.Name)
				continue
			}
			items = append(items, it)
		}
	}
	for _, it := range child.Items {
		if it.Block != nil {
			if _, ok := childBlocks[it.Block.Name]; ok {
				items = append(items, it)
			}
		}
	}
	items = append(items, mergeModules(base, child)...)
	if g := mergeGGUF(ggufSection(base), ggufSection(child)); g != nil {
		items = append(items, &Item{Pos: g.Pos, GGUF: g})
	}
	items = append(items, mergeEncoders(base, child)...)
	// Dataflow.
	flow := dataflow(child)
	if len(flow) == 0 {
		flow = dataflow(base)
	}
	out.Items = append(items, flow...)
	// The MTP module: the child's in place of the parent's.
	mtp := mtpItems(child)
	if len(mtp) == 0 {
		mtp = mtpItems(base)
	}
	out.Items = append(out.Items, mtp...)
	return out
}

func mtpItems(f *File) []*Item {
	var out []*Item
	for _, it := range f.Items {
		if it.MTP != nil {
			out = append(out, it)
		}
	}
	return out
}

func dataflow(f *File) []*Item {
	var out []*Item
	for _, it := range f.Items {
		if it.Stmt != nil || it.Loop != nil {
			out = append(out, it)
		}
	}
	return out
}

// mergeModules merges the module items of child over base's: a
// declaration in place of the parent's (dropping the parent's overrides
// of it), an override in place of the parent's override of the same
// argument, new items after.
func mergeModules(base, child *File) []*Item {
	key := func(m *Module) string {
		if m.Call == nil {
			return m.Name + "." + m.Attr
		}
		return m.Name
	}
	split := func(f *File) []*Module {
		var out []*Module
		for _, it := range f.Items {
			if it.Module != nil {
				out = append(out, it.Module.split()...)
			}
		}
		return out
	}
	redeclared := map[string]bool{}
	kids := map[string]*Module{}
	childMods := split(child)
	for _, m := range childMods {
		kids[key(m)] = m
		if m.Call != nil {
			redeclared[m.Name] = true
		}
	}
	var out []*Item
	for _, m := range split(base) {
		if m.Call == nil && redeclared[m.Name] {
			continue
		}
		if c, ok := kids[key(m)]; ok {
			out = append(out, &Item{Pos: c.Pos, Module: c})
			delete(kids, key(m))
			continue
		}
		out = append(out, &Item{Pos: m.Pos, Module: m})
	}
	for _, m := range childMods {
		if kids[key(m)] == m {
			out = append(out, &Item{Pos: m.Pos, Module: m})
		}
	}
	return out
}
