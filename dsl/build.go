package dsl

import (
	"fmt"
	"maps"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/archc/archc/dsl/ir"
)

// builder accumulates the IR graph while a file's statements are evaluated.
type builder struct {
	g     *ir.Graph
	reg   ir.Registry
	bs    *blockSet
	layer int
	stmt  string   // binding name of the statement being evaluated
	path  []string // enclosing block calls, outermost first
	depth int
	seen  map[string]ir.Weight
	// inputs are the graph's inputs by name: tokens and each encoder's
	// output (a decoder), or the pixels (an encoder).
	inputs map[string]*ir.Node
	// top are the weight modules the decoder reads outside its layer
	// loop (embedding, final norm, output head): an mtp body (inMTP)
	// names them as they are, not under its scope.
	top   map[string]bool
	inMTP bool
	// mtpLayer is the mtp module's layer path with a trailing dot ("" when
	// it has none): the prefix of the blocks its body calls.
	mtpLayer string
	// repeated holds, per block, the blocks its body calls more than once
	// (callName).
	repeated map[*Block]map[string]bool
}

// Build evaluates a checked file's dataflow against an evaluated config (see
// EvalConfig) and returns the IR graph with every node shape-checked by its
// primitive's Infer rule; every weight carries the position of the .arch
// path that named it. Errors carry .arch positions.
//
// An error inside a block the family inherits (its position in the
// parent's file) also names the family and its file, since the family's
// config led there: `llama.arch:38:28: heads: ... (building arch qwen3 of
// qwen3.arch, which inherits this code)`.
//
// A family with encoders (Encoders) takes each one's graph, built first
// by BuildEncoder; the decoder reads it as a graph input named like the
// encoder, [batch, seq, width], and the graph keeps it in Encoders.
func Build(f *File, cfg map[string]any, reg ir.Registry, encoders ...*ir.Graph) (*ir.Graph, error) {
	g, err := build(f, cfg, reg, encoders)
	if e, ok := err.(*Error); ok && e.Pos.Filename != f.Pos.Filename && f.Pos.Filename != "" {
		return nil, &Error{Pos: e.Pos, Msg: fmt.Sprintf("%s (building arch %s of %s, which inherits this code)", e.Msg, f.Name, f.Pos.Filename)}
	}
	return g, err
}

func build(f *File, cfg map[string]any, reg ir.Registry, encoders []*ir.Graph) (*ir.Graph, error) {
	b := newBuilder(f, reg)
	tok := &ir.Node{Prim: "tokens", Type: ir.Type{Shape: ir.Shape{ir.Batch, ir.Seq}, DType: ir.I32}, Layer: -1, Site: -1, Name: "tokens", Pos: f.Pos}
	b.g.Tokens = tok
	b.g.Nodes = append(b.g.Nodes, tok)
	b.inputs["tokens"] = tok
	for _, it := range f.Items {
		e := it.Encoder
		if e == nil {
			continue
		}
		var eg *ir.Graph
		for _, g := range encoders {
			if g.Encoder == e.Name {
				eg = g
			}
		}
		if eg == nil {
			return nil, errorf(e.Pos, "arch %s declares encoder %s, but its graph was not built (dsl.BuildEncoder, with the config of %s)", f.Name, e.Name, orTop(e.Key))
		}
		width := eg.Logits.Type.Shape[2]
		in := &ir.Node{ID: len(b.g.Nodes), Prim: "encoded", Type: ir.Type{Shape: ir.Shape{ir.Batch, ir.Seq, width}, DType: ir.F32}, Layer: -1, Site: -1, Name: e.Name, Pos: e.Pos}
		b.g.Nodes = append(b.g.Nodes, in)
		b.g.Inputs = append(b.g.Inputs, in)
		b.g.Encoders = append(b.g.Encoders, eg)
		b.inputs[e.Name] = in
	}
	s := &scope{cfg: cfg, locals: map[string]any{}, b: b}
	if err := s.dataflow(f); err != nil {
		return nil, err
	}
	lv, bound := s.locals["logits"]
	if !bound {
		return nil, errorf(f.Pos, "arch %s never binds logits", f.Name)
	}
	logits, ok := lv.(*ir.Node)
	if !ok {
		return nil, errorf(f.Pos, "logits must be a tensor, got %s %s", typeName(lv), show(lv))
	}
	if t := logits.Type; len(t.Shape) != 3 || t.Shape[0] != ir.Batch || t.Shape[1] != ir.Seq {
		return nil, errorf(logits.Pos, "logits must be [batch, seq, vocab], got %s", t)
	}
	b.g.Logits = logits
	for _, e := range b.g.Encoders { // the module holds them all: Weights lists them all
		for _, w := range e.Weights {
			if prev, ok := b.seen[w.Name]; ok {
				if fmt.Sprint(prev.Shape) != fmt.Sprint(w.Shape) {
					return nil, errorf(w.Pos, "weight %s used with shape %v here but %v at %s", w.Name, w.Shape, prev.Shape, prev.Pos)
				}
				continue
			}
			b.seen[w.Name] = w
			b.g.Weights = append(b.g.Weights, w)
		}
	}
	return b.g, nil
}

func newBuilder(f *File, reg ir.Registry) *builder {
	return &builder{
		g:      &ir.Graph{Arch: f.Name, File: f.Pos.Filename},
		reg:    reg,
		bs:     newBlockSet(f, reg),
		layer:  -1,
		seen:   map[string]ir.Weight{},
		inputs: map[string]*ir.Node{},
		top:    map[string]bool{},
	}
}

// dataflow evaluates a file's top-level statements and its layer loop, in
// order; HeadStart is set after the loop.
func (s *scope) dataflow(f *File) error {
	for _, it := range f.Items {
		switch {
		case it.Stmt != nil:
			if err := s.stmt(it.Stmt); err != nil {
				return err
			}
		case it.Loop != nil:
			if err := s.forLoop(it.Loop); err != nil {
				return err
			}
			s.b.g.HeadStart = len(s.b.g.Nodes)
		case it.MTP != nil:
			s.mtpOrError(it.MTP)
		}
	}
	return nil
}

// mtpOrError builds the MTP module (mtp), or, when that fails, leaves the
// graph as it was before it and records the error in ir.Graph.MTPErr: a
// model runs without its MTP module, and only asking for it (the
// driver's lower.Options.MTP) reports why it cannot.
func (s *scope) mtpOrError(m *MTP) {
	g, b := s.b.g, s.b
	nodes, weights, sites := len(g.Nodes), len(g.Weights), g.Sites
	locals := map[string]any{}
	for k, v := range s.locals {
		locals[k] = v
	}
	err := s.mtp(m)
	s.locals = locals
	s.loopVar, s.prefix, b.layer, b.inMTP = "", "", -1, false
	if err == nil {
		return
	}
	for _, w := range g.Weights[weights:] {
		delete(b.seen, w.Name)
	}
	g.Nodes, g.Weights, g.Sites, g.MTP, g.MTPErr = g.Nodes[:nodes], g.Weights[:weights], sites, nil, err
}

// mtp builds a family's MTP module (ast.go's MTP) after the decoder's
// dataflow, when its cond holds: its body under the loop variable bound to
// its layer index and its weight scope, then ir.Graph.MTP. Errors: no
// mtp_logits of [batch, seq, vocab], a body that reads a decoder tensor
// other than tokens and one hidden state computed before the head.
func (s *scope) mtp(m *MTP) error {
	cs := &scope{cfg: s.cfg}
	if m.Cond != nil {
		on, err := cs.expr(m.Cond)
		if err != nil {
			return err
		}
		if b, ok := on.(bool); !ok {
			return errorf(m.Cond.Pos, "an mtp module's condition must be a bool, got %s %s", typeName(on), show(on))
		} else if !b {
			return nil
		}
	}
	iv, err := cs.expr(m.Index)
	if err != nil {
		return err
	}
	idx, ok := iv.(int64)
	if !ok || idx < 0 || idx > maxLayers {
		return errorf(m.Index.Pos, "an mtp module's layer index must be an int in [0, %d], got %s", maxLayers, show(iv))
	}
	g := s.b.g
	start, sites, nw := len(g.Nodes), g.Sites, len(g.Weights)
	s.loopVar, s.index, s.b.layer, s.prefix = m.Var, idx, int(idx), ""
	scope, err := s.weightPrefix(m.Scope, "scope")
	if err != nil {
		return err
	}
	s.b.mtpLayer = ""
	if m.Layer != nil {
		if s.b.mtpLayer, err = s.weightPrefix(m.Layer, "layer"); err != nil {
			return err
		}
	}
	s.prefix = scope
	s.b.inMTP = true
	for _, st := range m.Body {
		if err := s.stmt(st); err != nil {
			return err
		}
	}
	s.loopVar, s.prefix, s.b.layer, s.b.inMTP, s.b.mtpLayer = "", "", -1, false, ""
	lv, bound := s.locals["mtp_logits"]
	out, isNode := lv.(*ir.Node)
	if !bound || !isNode || out.ID < start {
		return errorf(m.Pos, "the mtp module must bind mtp_logits, a tensor [batch, seq, vocab]")
	}
	if t := out.Type; len(t.Shape) != 3 || t.Shape[0] != ir.Batch || t.Shape[1] != ir.Seq {
		return errorf(out.Pos, "mtp_logits must be [batch, seq, vocab], got %s", t)
	}
	var hidden *ir.Node
	for _, n := range g.Nodes[start:] {
		for _, a := range n.Args {
			if a.ID >= start || a == g.Tokens || a == hidden {
				continue
			}
			if hidden != nil || a.ID >= g.HeadStart || a.Type.DType != ir.F32 || len(a.Type.Shape) != 3 {
				return errorf(n.Pos, "the mtp module reads %s (%s): it may read, of the decoder, tokens and one hidden state [batch, seq, hidden] computed before the head (x after the layer loop)", a.Name, a.Type)
			}
			hidden = a
		}
	}
	if hidden == nil {
		return errorf(m.Pos, "the mtp module never reads the decoder's hidden state (x after the layer loop)")
	}
	// A state-like binding of the body: computed in the module, shaped as
	// the decoder's hidden state; nil when the body does not bind it.
	stateLike := func(name, what string) (*ir.Node, error) {
		v, ok := s.locals[name]
		if !ok {
			return nil, nil
		}
		n, isNode := v.(*ir.Node)
		if !isNode || n.ID < start || n.Type.DType != ir.F32 || n.Type.String() != hidden.Type.String() {
			return nil, errorf(m.Pos, "%s, %s, must be a tensor like the decoder's hidden state (%s), computed in the module", name, what, hidden.Type)
		}
		return n, nil
	}
	next, err := stateLike("mtp_hidden", "the module's output hidden state")
	if err != nil {
		return err
	}
	state, err := stateLike("mtp_state", "the target's hidden state as the module reads it")
	if err != nil {
		return err
	}
	g.MTP = &ir.MTP{Start: start, Hidden: hidden, Logits: out, Next: next, State: state, Layer: int(idx), Sites: sites, Weights: append([]ir.Weight(nil), g.Weights[nw:]...)}
	return nil
}

// weightPrefix evaluates an mtp module's scope or layer path (what names
// which) to a weight prefix with its trailing dot. Errors: a path that is
// no weight path.
func (s *scope) weightPrefix(p *Path, what string) (string, error) {
	v, err := s.path(p, true)
	if err != nil {
		return "", err
	}
	mod, ok := v.(module)
	if !ok {
		return "", errorf(p.Pos, "the mtp %s must be a weight path, got %s %s", what, typeName(v), show(v))
	}
	return mod.path + ".", nil
}

// BuildEncoder builds an encoder's graph (a file of Encoders) against its
// evaluated config (EvalConfig over the object the encoder binds, see
// EncoderConfig): its first input (one image tile [1, C, H, W] f32, or an
// encoder over patches' rows) in Tokens and the others in Inputs, each
// [1, dims...] with the dims its declaration gives over that config
// (Prim "pixels", f32, or "index", i32, for an `int` input); its output,
// the binding named like the encoder, [1, N, width] f32, in Logits;
// Encoder is the encoder's name. An encoder with a variable size
// (`encoder image[patches](...)`, EncoderOver) is built at size: its
// inputs' dimension named so is size (> 0; BuildEncoder's size is ignored
// otherwise). Errors carry .arch positions: a shape that is not positive
// ints, an output never bound or of another rank.
func BuildEncoder(f *File, cfg map[string]any, reg ir.Registry, size int64) (*ir.Graph, error) {
	e := f.encoder
	if e == nil {
		return nil, errorf(f.Pos, "BuildEncoder: arch %s is not an encoder (see Encoders)", f.Name)
	}
	dims := cfg
	if e.Over != "" {
		if size <= 0 {
			return nil, errorf(e.Pos, "encoder %s[%s]: its size must be positive, got %d", e.Name, e.Over, size)
		}
		dims = maps.Clone(cfg)
		dims[e.Over] = size
	}
	cs := &scope{cfg: dims}
	b := newBuilder(f, reg)
	b.g.Encoder = e.Name
	for i, p := range e.Params {
		shape := ir.Shape{1}
		for _, x := range p.Shape {
			v, err := cs.expr(x)
			if err != nil {
				return nil, err
			}
			d, ok := v.(int64)
			if !ok || d <= 0 {
				return nil, errorf(x.Pos, "encoder %s: input dimensions must be positive ints, got %s", e.Name, show(v))
			}
			shape = append(shape, ir.Dim(d))
		}
		in := &ir.Node{Prim: "pixels", Type: ir.Type{Shape: shape, DType: ir.F32}, Layer: -1, Site: -1, Name: p.Name, Pos: p.Pos}
		if p.Int {
			in.Prim, in.Type.DType = "index", ir.I32
		}
		if i == 0 {
			b.g.Tokens = in
		} else {
			in.ID = len(b.g.Nodes)
			b.g.Inputs = append(b.g.Inputs, in)
		}
		b.g.Nodes = append(b.g.Nodes, in)
		b.inputs[p.Name] = in
	}
	s := &scope{cfg: cfg, locals: map[string]any{}, b: b}
	if err := s.dataflow(f); err != nil {
		return nil, err
	}
	ov, bound := s.locals[e.Name]
	if !bound {
		return nil, errorf(e.Pos, "encoder %s never binds %s, its output", e.Name, e.Name)
	}
	out, ok := ov.(*ir.Node)
	if !ok {
		return nil, errorf(e.Pos, "encoder %s's output must be a tensor, got %s %s", e.Name, typeName(ov), show(ov))
	}
	if t := out.Type; len(t.Shape) != 3 || t.Shape[0] != 1 || t.DType != ir.F32 {
		return nil, errorf(out.Pos, "encoder %s's output must be [1, tokens, width] f32 (one tile's rows), got %s", e.Name, t)
	}
	if b.g.HeadStart == 0 {
		b.g.HeadStart = len(b.g.Nodes)
	}
	b.g.Logits = out
	return b.g, nil
}

func orTop(key string) string {
	if key == "" {
		return "config.json's top level"
	}
	return key
}

func (s *scope) stmt(st *Stmt) error {
	s.b.stmt = st.Name
	v, err := s.expr(st.Value)
	if err != nil {
		return err
	}
	s.locals[st.Name] = v
	return nil
}

// maxLayers bounds the decoder-layer loop: far above any real model, low
// enough that a corrupt config fails fast instead of building a huge graph.
const maxLayers = 4096

// forLoop builds the decoder-layer loop. Its count is a config expression
// (archc check reads it so): it is evaluated over the config alone, with
// the config builtins (range, len, int, ...).
func (s *scope) forLoop(l *Loop) error {
	cv, err := (&scope{cfg: s.cfg}).expr(l.Count)
	if err != nil {
		return err
	}
	count, ok := cv.(int64)
	if !ok || count < 0 || count > maxLayers {
		return errorf(l.Count.Pos, "layer count must be an int in [0, %d], got %s", maxLayers, show(cv))
	}
	for i := int64(0); i < count; i++ {
		s.loopVar, s.index, s.b.layer = l.Var, i, int(i)
		s.prefix = ""
		p, err := s.path(l.Scope, true)
		if err != nil {
			return err
		}
		m, ok := p.(module)
		if !ok {
			return errorf(l.Scope.Pos, "the loop scope must be a weight path, got %s %s", typeName(p), show(p))
		}
		s.prefix = m.path + "."
		for _, st := range l.Body {
			if err := s.stmt(st); err != nil {
				return err
			}
		}
	}
	s.loopVar, s.prefix, s.b.layer = "", "", -1
	return nil
}

// node appends one primitive application, runs its Infer rule and records
// the weights it reads, each at the position of mod (the zero module for a
// primitive without weights).
func (b *builder) node(pos lexer.Position, prim string, args []*ir.Node, mod module, attrs map[string]any) (*ir.Node, error) {
	p, ok := b.reg.Primitive(prim)
	if !ok {
		return nil, errorf(pos, "unknown primitive %q", prim)
	}
	n := &ir.Node{ID: len(b.g.Nodes), Prim: prim, Args: args, Module: mod.path, Attrs: attrs, Layer: b.layer, Site: -1, Pos: pos}
	if mod.path != "" && b.layer < 0 && !b.inMTP {
		b.top[mod.path] = true
	}
	parts := append([]string{}, b.path...)
	if b.stmt != "" {
		parts = append(parts, b.stmt)
	}
	n.Name = strings.Join(append(parts, prim), "/")
	if mod.path != "" && !mod.keyword {
		n.Name = mod.path
	} else if b.layer >= 0 {
		n.Name = fmt.Sprintf("model.layers.%d/%s", b.layer, n.Name)
	}
	if err := b.shareState(p, n); err != nil {
		return nil, errorf(pos, "%s: %v", prim, err)
	}
	if err := p.Infer(n); err != nil {
		return nil, errorf(pos, "%s: %v", prim, err)
	}
	if p.Cache && n.StateFrom == nil {
		n.Site = b.g.Sites
		b.g.Sites++
	}
	for i := range n.Weights {
		n.Weights[i].Pos = mod.pos
	}
	for _, w := range n.Weights {
		if prev, ok := b.seen[w.Name]; ok {
			if fmt.Sprint(prev.Shape) != fmt.Sprint(w.Shape) {
				return nil, errorf(pos, "weight %s used with shape %v here but %v at %s", w.Name, w.Shape, prev.Shape, prev.Pos)
			}
			continue
		}
		b.seen[w.Name] = w
		b.g.Weights = append(b.g.Weights, w)
	}
	b.g.Nodes = append(b.g.Nodes, n)
	return n, nil
}

// shareState links a call that gives its primitive's ShareState attribute
// (attention's kv_layer: j) to the node of the same primitive in decoder
// layer j that owns its state (following j's own link, if it shares too):
// n.StateFrom. The layer must be an earlier one of the loop, with exactly
// one such node.
func (b *builder) shareState(p *ir.Primitive, n *ir.Node) error {
	if p.ShareState == "" || n.Attrs[p.ShareState] == nil {
		return nil
	}
	j, ok := n.Attrs[p.ShareState].(int64)
	switch {
	case !ok:
		return fmt.Errorf("%s must be a decoder-layer index (an int), got %s", p.ShareState, ir.FormatValue(n.Attrs[p.ShareState]))
	case b.layer < 0:
		return fmt.Errorf("%s %d: only a call inside the layer loop shares an earlier layer's state", p.ShareState, j)
	case j < 0 || j >= int64(b.layer):
		return fmt.Errorf("%s %d: the layer shared must be an earlier one (this is layer %d)", p.ShareState, j, b.layer)
	}
	var src *ir.Node
	for _, m := range b.g.Nodes {
		if m.Prim != n.Prim || int64(m.Layer) != j {
			continue
		}
		if src != nil {
			return fmt.Errorf("%s %d: layer %d has more than one %s call (at %s and %s); which state is shared is ambiguous", p.ShareState, j, j, n.Prim, src.Pos, m.Pos)
		}
		src = m
	}
	if src == nil {
		return fmt.Errorf("%s %d: layer %d has no %s call whose state this one could share", p.ShareState, j, j, n.Prim)
	}
	for src.StateFrom != nil {
		src = src.StateFrom
	}
	n.StateFrom = src
	return nil
}
