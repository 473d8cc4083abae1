package dsl

// The printer behind `archc fmt`: it writes a parsed file back as .arch text
// in one canonical layout, keeping the source's comments.
//
// The layout, in the spirit of gofmt (docs/arch-language.md, "Layout"):
//   - two spaces per level; one item, statement, config field or gguf entry
//     per line; at most one blank line between entries, none after `{` or
//     before `}`; single spaces around binary operators, `?`, `:`, `=` and
//     `->`, after commas and keyword colons, none inside brackets;
//   - a block whose body is only `return EXPR` and that sits on one source
//     line stays on one line (`block key(h) { return ... }`), any other block
//     spans lines; an empty section is `{}`;
//   - call arguments and list elements keep the source's line breaks: an
//     argument that starts a source line starts an output line, indented
//     four spaces past the line holding the opening bracket; a closing
//     bracket on its own source line stays on its own line, after a
//     trailing comma;
//   - columns are aligned across runs of consecutive entries of one kind at
//     one indentation (deeper lines do not break a run; blank lines, comment
//     lines and other entries do): config field types and `=`, module `=`, gguf `=`,
//     `->` and transform patterns, the `{` of one-line blocks, and keyword
//     arguments that start their lines;
//   - comments stay where they were relative to the code: a comment that
//     ended a source line ends the line holding that code (trailing
//     comments of consecutive lines are aligned, two spaces past the longest
//     code), a comment on its own line stays on its own line, indented as
//     the code that follows it; a comment inside an expression printed on
//     one line moves to its own line before it;
//   - literals keep their source spelling (`1e-6` stays `1e-6`), strings
//     are quoted as Go quotes them.
//
// Parsing the printed text gives the same AST as the source (positions
// aside), and printing is idempotent; tests check both for every .arch file
// in the repository.

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2/lexer"
)

// Format parses src (an .arch file; filename is used in error positions)
// and returns it in the canonical layout with its comments. A file that
// does not parse gives the parse error, `file:line:col: message`.
func Format(filename string, src []byte) ([]byte, error) {
	f, err := Parse(filename, src)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := Print(&b, f, src); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Print writes f as .arch text in the canonical layout. src is the text f
// was parsed from: its comments are printed where they stood, its line
// breaks between call arguments and its blank lines between entries are
// kept, and number literals keep their spelling. With src nil the AST alone
// is printed (no comments, no blank lines, no argument breaks).
func Print(w io.Writer, f *File, src []byte) error {
	p := &printer{}
	if src != nil {
		if err := p.lex(f.Pos.Filename, src); err != nil {
			return err
		}
	}
	p.file(f)
	_, err := w.Write(p.render())
	return err
}

// floatToken is the lexer's token type of float literals.
var floatToken = archLexer.Symbols()["Float"]

// Line-start modes: where blank lines may be kept.
const (
	inExpr  = iota // a continuation line inside an expression: no blank lines
	atClose        // a closing bracket: blank lines before comments only
	atEntry        // an entry: blank lines before comments and the entry
)

// printer accumulates output lines; render aligns and joins them.
type printer struct {
	comments []lexer.Token // the source's comments, in order
	next     int           // first comment not yet printed
	toks     []lexer.Token // the source's other tokens, in order
	lines    []*line
	cur      *line
	lastLine int  // source line of the last code or comment printed
	open     bool // the last line printed ends with an opening `{`
}

// line is one output line: indentation, aligned cells, the rest of the
// code and a trailing comment; or a blank line or a comment line.
type line struct {
	indent  int
	kind    string // alignment kind; "" aligns nothing
	cells   []string
	text    strings.Builder
	comment string
	blank   bool
	alone   bool // a comment on its own line (in text)
}

// lex splits src into comments and code tokens.
func (p *printer) lex(filename string, src []byte) error {
	lx, err := archLexer.LexString(filename, string(src))
	if err != nil {
		return err
	}
	syms := archLexer.Symbols()
	comment, space := syms["Comment"], syms["Whitespace"]
	for {
		t, err := lx.Next()
		if err != nil {
			return err
		}
		switch {
		case t.EOF():
			return nil
		case t.Type == comment:
			t.Value = strings.TrimRight(t.Value, " \t\r")
			p.comments = append(p.comments, t)
		case t.Type != space:
			p.toks = append(p.toks, t)
		}
	}
}

// tokenAt returns the first code token at or after offset off whose text
// is val ("" for any), if any.
func (p *printer) tokenAt(off int, val string) (lexer.Token, bool) {
	i := sort.Search(len(p.toks), func(i int) bool { return p.toks[i].Pos.Offset >= off })
	for ; i < len(p.toks); i++ {
		if val == "" || p.toks[i].Value == val {
			return p.toks[i], true
		}
	}
	return lexer.Token{}, false
}

// tokenBefore returns the last code token before offset off, if any.
func (p *printer) tokenBefore(off int) (lexer.Token, bool) {
	i := sort.Search(len(p.toks), func(i int) bool { return p.toks[i].Pos.Offset >= off })
	if i == 0 {
		return lexer.Token{}, false
	}
	return p.toks[i-1], true
}

// after returns the position just past token t (one byte: brackets).
func after(t lexer.Token) lexer.Position {
	pos := t.Pos
	pos.Offset += len(t.Value)
	pos.Column += len(t.Value)
	return pos
}

// closing returns the position of the closing bracket that ends a node
// whose EndPos is end.
func closing(end lexer.Position) lexer.Position {
	end.Offset--
	end.Column--
	return end
}

// opening returns the position just past the first `{` at or after off (the
// zero position without source).
func (p *printer) opening(off int) lexer.Position {
	if t, ok := p.tokenAt(off, "{"); ok {
		return after(t)
	}
	return lexer.Position{}
}

// gap reports whether the source had a blank line between the last thing
// printed and source line l, and the output may show one.
func (p *printer) gap(l int) bool {
	n := len(p.lines)
	return n > 0 && !p.open && !p.lines[n-1].blank && l > p.lastLine+1
}

// leading prints the comments before source position pos as lines of
// their own at indent, and a blank line where the source had one (as mode
// allows).
func (p *printer) leading(pos lexer.Position, indent, mode int) {
	for p.next < len(p.comments) && p.comments[p.next].Pos.Offset < pos.Offset {
		c := p.comments[p.next]
		p.next++
		if mode != inExpr && p.gap(c.Pos.Line) {
			p.lines = append(p.lines, &line{blank: true})
		}
		l := &line{indent: indent, alone: true}
		l.text.WriteString(c.Value)
		p.lines = append(p.lines, l)
		p.lastLine, p.open = c.Pos.Line, false
	}
	if mode == atEntry && p.gap(pos.Line) {
		p.lines = append(p.lines, &line{blank: true})
	}
}

// begin prints the comments before pos and starts a line of the given
// alignment kind.
func (p *printer) begin(pos lexer.Position, indent int, kind string, mode int) {
	p.leading(pos, indent, mode)
	p.cur = &line{indent: indent, kind: kind}
}

// end finishes the current line, whose last code ends at source position
// at: comments inside that code go on lines of their own before it, a
// comment right after it on its source line becomes the trailing comment.
func (p *printer) end(at lexer.Position) {
	l := p.cur
	for p.next < len(p.comments) && p.comments[p.next].Pos.Offset < at.Offset {
		c := p.comments[p.next]
		p.next++
		cl := &line{indent: l.indent, alone: true}
		cl.text.WriteString(c.Value)
		p.lines = append(p.lines, cl)
	}
	if p.next < len(p.comments) {
		c := p.comments[p.next]
		t, more := p.tokenAt(at.Offset, "")
		if c.Pos.Line == at.Line && (!more || t.Pos.Offset > c.Pos.Offset) {
			l.comment = c.Value
			p.next++
		}
	}
	p.lines = append(p.lines, l)
	p.lastLine, p.open = at.Line, false
	p.cur = nil
}

func (p *printer) put(s string) { p.cur.text.WriteString(s) }

// cell moves the current line's text into a new aligned cell.
func (p *printer) cell() {
	p.cur.cells = append(p.cur.cells, p.cur.text.String())
	p.cur.text.Reset()
}

// body prints a braced list of n entries at indent+2 after the current
// line's text (which gets ` {`), or ` {}` when there is nothing inside.
// open is the position just past the `{`, end the node's EndPos.
func (p *printer) body(open, end lexer.Position, indent, n int, entry func(i int)) {
	closePos := closing(end)
	if n == 0 && (p.next >= len(p.comments) || p.comments[p.next].Pos.Offset >= closePos.Offset) {
		p.put(" {}")
		p.end(end)
		return
	}
	p.put(" {")
	p.end(open)
	p.open = true
	for i := 0; i < n; i++ {
		entry(i)
	}
	p.begin(closePos, indent+2, "", atClose)
	p.cur.indent = indent
	p.put("}")
	p.end(end)
}

func (p *printer) file(f *File) {
	p.begin(f.Pos, 0, "", atEntry)
	p.put("arch " + f.Name)
	if f.Extends != "" {
		p.put(" extends " + f.Extends)
	}
	if len(f.With) > 0 {
		p.put(" with " + strings.Join(f.With, ", "))
	}
	p.body(p.opening(f.Pos.Offset), f.EndPos, 0, len(f.Items), func(i int) { p.item(f.Items[i], 2) })
	p.leading(lexer.Position{Offset: math.MaxInt, Line: math.MaxInt}, 0, atClose)
}

func (p *printer) item(it *Item, indent int) {
	switch {
	case it.Match != nil:
		m := it.Match
		p.begin(m.Pos, indent, "", atEntry)
		p.put("match model_type " + quoteAll(m.ModelTypes))
		if n := m.Nest; n != nil {
			p.put(" in " + n.Key)
			if n.Scope != nil {
				p.put(" scope ")
				p.path(n.Scope)
				if n.As != nil {
					p.put(" as ")
					p.path(n.As)
				}
			}
		}
		if m.Cond != nil {
			p.put(" if ")
			p.expr(m.Cond)
		}
		p.end(m.EndPos)
	case it.Config != nil:
		c := it.Config
		p.begin(c.Pos, indent, "", atEntry)
		p.put("config")
		p.body(p.opening(c.Pos.Offset), c.EndPos, indent, len(c.Fields), func(i int) {
			fd := c.Fields[i]
			if r := fd.Require; r != nil {
				p.begin(fd.Pos, indent+2, "field", atEntry)
				p.put("require ")
				p.expr(r.Cond)
				for _, e := range r.Message {
					p.put(", ")
					p.expr(e)
				}
				p.end(fd.EndPos)
				return
			}
			p.begin(fd.Pos, indent+2, "field", atEntry)
			p.put(fd.Name + ":")
			p.cell()
			p.put(fd.Type.Name)
			if fd.Default != nil {
				p.cell()
				p.put("= ")
				p.expr(fd.Default)
			}
			p.end(fd.EndPos)
		})
	case it.Block != nil:
		p.block(it.Block, indent)
	case it.Module != nil:
		m := it.Module
		p.begin(m.Pos, indent, "module", atEntry)
		p.put("module " + m.Name)
		if m.Call == nil {
			p.put("." + m.Attr)
			for _, t := range m.More {
				p.put(", " + t.Name + "." + t.Attr)
			}
		}
		p.cell()
		p.put("= ")
		if m.Call == nil {
			p.expr(m.Value)
		} else {
			p.call(m.Call)
		}
		p.end(m.EndPos)
	case it.Loop != nil:
		l := it.Loop
		p.begin(l.Pos, indent, "", atEntry)
		p.put("for " + l.Var + " in range(")
		p.expr(l.Count)
		p.put(") scope ")
		p.path(l.Scope)
		p.body(p.opening(l.Scope.EndPos.Offset), l.EndPos, indent, len(l.Body), func(i int) { p.stmt(l.Body[i], indent+2) })
	case it.MTP != nil:
		m := it.MTP
		p.begin(m.Pos, indent, "", atEntry)
		p.put("mtp " + m.Var + " = ")
		p.expr(m.Index)
		p.put(" scope ")
		p.path(m.Scope)
		from := m.Scope.EndPos.Offset
		if m.Layer != nil {
			p.put(" layer ")
			p.path(m.Layer)
			from = m.Layer.EndPos.Offset
		}
		if m.Cond != nil {
			p.put(" if ")
			p.expr(m.Cond)
			from = m.Cond.EndPos.Offset
		}
		p.body(p.opening(from), m.EndPos, indent, len(m.Body), func(i int) { p.stmt(m.Body[i], indent+2) })
	case it.GGUF != nil:
		g := it.GGUF
		p.begin(g.Pos, indent, "", atEntry)
		p.put("gguf")
		if len(g.Archs) > 0 {
			p.put(" " + quoteAll(g.Archs))
		}
		from := g.Pos.Offset
		if g.Cond != nil {
			p.put(" if ")
			p.expr(g.Cond)
			from = g.Cond.EndPos.Offset
		}
		p.body(p.opening(from), g.EndPos, indent, len(g.Entries), func(i int) { p.ggufEntry(g.Entries[i], indent+2) })
	case it.Encoder != nil:
		e := it.Encoder
		p.begin(e.Pos, indent, "", atEntry)
		p.put("encoder " + e.Name)
		if e.Over != "" {
			p.put("[" + e.Over + "]")
		}
		from := e.Pos.Offset
		if len(e.Params) > 0 {
			p.put("(")
		}
		for i, in := range e.Params {
			if i > 0 {
				p.put(", ")
			}
			p.put(in.Name + ": [")
			for j, x := range in.Shape {
				if j > 0 {
					p.put(", ")
				}
				p.expr(x)
			}
			p.put("]")
			from = in.Shape[len(in.Shape)-1].EndPos.Offset
			if in.Int {
				p.put(" int")
			}
		}
		if len(e.Params) > 0 {
			p.put(")")
		}
		if e.Key != "" {
			p.put(" in " + e.Key)
		}
		if e.Scope != nil {
			p.put(" scope ")
			p.path(e.Scope)
			p.put(" as ")
			p.path(e.As)
			from = e.As.EndPos.Offset
		}
		p.body(p.opening(from), e.EndPos, indent, len(e.Items), func(i int) { p.item(e.Items[i], indent+2) })
	case it.Stmt != nil:
		p.stmt(it.Stmt, indent)
	}
}

func (p *printer) block(b *Block, indent int) {
	head := "block " + b.Name + "(" + strings.Join(b.Params, ", ") + ")"
	if len(b.Body) == 0 && b.Pos.Line == b.EndPos.Line {
		p.begin(b.Pos, indent, "block", atEntry)
		p.put(head)
		p.cell()
		p.put("{ return ")
		p.expr(b.Return)
		p.put(" }")
		p.end(b.EndPos)
		return
	}
	p.begin(b.Pos, indent, "", atEntry)
	p.put(head)
	p.body(p.opening(b.Pos.Offset), b.EndPos, indent, len(b.Body)+1, func(i int) {
		if i < len(b.Body) {
			p.stmt(b.Body[i], indent+2)
			return
		}
		pos := b.Return.Pos
		if t, ok := p.tokenBefore(pos.Offset); ok && t.Value == "return" {
			pos = t.Pos
		}
		p.begin(pos, indent+2, "", atEntry)
		p.put("return ")
		p.expr(b.Return)
		p.end(b.Return.EndPos)
	})
}

func (p *printer) stmt(s *Stmt, indent int) {
	p.begin(s.Pos, indent, "", atEntry)
	p.put(s.Name + " = ")
	p.expr(s.Value)
	p.end(s.EndPos)
}

func (p *printer) ggufEntry(e *GGUFEntry, indent int) {
	switch {
	case e.Tensor != nil:
		t := e.Tensor
		p.begin(e.Pos, indent, "tensor", atEntry)
		p.put("tensor ")
		p.path(t.GGUF)
		p.cell()
		if t.Value != nil {
			p.put("= ")
			p.expr(t.Value)
			break
		}
		p.put("-> ")
		switch {
		case t.None:
			p.put("none")
		case t.Split != nil:
			p.put("[")
			for i, sp := range t.Split {
				if i > 0 {
					p.put(", ")
				}
				if sp.None {
					p.put("none")
				} else {
					p.path(sp.HF)
				}
			}
			p.put("]")
		default:
			p.path(t.HF)
		}
		if t.Layers != nil {
			p.put(" for ")
			p.expr(t.Layers)
		}
	case e.Transform != nil:
		t := e.Transform
		p.begin(e.Pos, indent, "transform", atEntry)
		p.put("transform " + strconv.Quote(t.Pattern) + ":")
		p.cell()
		if t.None {
			p.put("none")
		} else {
			p.call(t.Call)
		}
	case e.Rename != nil:
		p.begin(e.Pos, indent, "rename", atEntry)
		p.put("rename ")
		p.path(e.Rename.From)
		p.cell()
		p.put("-> ")
		p.path(e.Rename.To)
	case e.Field != nil:
		fd := e.Field
		p.begin(e.Pos, indent, "let", atEntry)
		if fd.Let {
			p.put("let ")
		}
		p.put(fd.Name)
		p.cell()
		p.put("= ")
		p.expr(fd.Value)
	}
	p.end(e.EndPos)
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

func (p *printer) expr(e *Expr) {
	p.binary(e.Cond)
	if e.Then != nil {
		p.put(" ? ")
		p.expr(e.Then)
		p.put(" : ")
		p.expr(e.Else)
	}
}

func (p *printer) binary(b *BinExpr) {
	p.unary(b.First)
	for _, op := range b.Rest {
		p.put(" " + op.Op + " ")
		p.unary(op.Right)
	}
}

func (p *printer) unary(u *Unary) {
	p.put(u.Op)
	p.primary(u.Operand)
	for _, ix := range u.Index {
		p.put("[")
		p.expr(ix)
		p.put("]")
	}
}

func (p *printer) primary(x *Primary) {
	switch {
	case x.Float != nil:
		if t, ok := p.tokenAt(x.Pos.Offset, ""); ok && t.Pos.Offset == x.Pos.Offset && t.Type == floatToken {
			p.put(strings.ToLower(t.Value))
			return
		}
		s := strconv.FormatFloat(*x.Float, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		p.put(s)
	case x.Int != nil:
		p.put(strconv.FormatInt(*x.Int, 10))
	case x.Str != nil:
		p.put(strconv.Quote(*x.Str))
	case x.True:
		p.put("true")
	case x.False:
		p.put("false")
	case x.None:
		p.put("none")
	case x.List != nil:
		p.list(x.List)
	case x.Call != nil:
		p.call(x.Call)
	case x.Path != nil:
		p.path(x.Path)
	case x.Sub != nil:
		p.put("(")
		p.expr(x.Sub)
		p.put(")")
	}
}

func (p *printer) list(l *List) {
	if l.Var != "" {
		p.put("[")
		for i, e := range l.Elems {
			if i > 0 {
				p.put(", ")
			}
			p.expr(e)
		}
		p.put(" for " + l.Var + " in ")
		p.expr(l.Over)
		p.put("]")
		return
	}
	open := lexer.Position{}
	if t, ok := p.tokenAt(l.Pos.Offset, "["); ok {
		open = after(t)
	}
	p.put("[")
	p.seq(open, l.EndPos, len(l.Elems), "]", func(i int) (lexer.Position, *Expr, string) { return l.Elems[i].Pos, l.Elems[i], "" })
}

func (p *printer) call(c *Call) {
	if c.Super {
		p.put("super.")
	}
	open := lexer.Position{}
	if t, ok := p.tokenAt(c.Pos.Offset, "("); ok {
		open = after(t)
	}
	p.put(c.Name + "(")
	p.seq(open, c.EndPos, len(c.Args), ")", func(i int) (lexer.Position, *Expr, string) {
		a := c.Args[i]
		return a.Pos, a.Value, a.Name
	})
}

// seq prints n comma-separated elements (each with its start position, its
// value and an optional keyword) and the closing bracket cl, breaking lines
// where the source did: open is the position just past the opening bracket,
// end the EndPos of the node the closing bracket ends.
func (p *printer) seq(open, end lexer.Position, n int, cl string, elem func(i int) (lexer.Position, *Expr, string)) {
	indent := p.cur.indent
	prev := open
	for i := 0; i < n; i++ {
		start, e, key := elem(i)
		if i > 0 {
			p.put(",")
		}
		if start.Line > prev.Line {
			p.end(p.pastComma(prev))
			kind := ""
			if key != "" {
				kind = "kwarg"
			}
			p.begin(start, indent+4, kind, inExpr)
			if key != "" {
				p.put(key + ":")
				p.cell()
				key = ""
			}
		} else if i > 0 {
			p.put(" ")
		}
		if key != "" {
			p.put(key + ": ")
		}
		p.expr(e)
		prev = e.EndPos
	}
	if closePos := closing(end); n > 0 && closePos.Line > prev.Line {
		p.put(",")
		p.end(p.pastComma(prev))
		p.begin(closePos, indent+4, "", inExpr)
		p.cur.indent = indent
	}
	p.put(cl)
}

// pastComma returns the position just past a comma that follows pos on its
// line, else pos: where a trailing comment after `arg,` is looked for.
func (p *printer) pastComma(pos lexer.Position) lexer.Position {
	if t, ok := p.tokenAt(pos.Offset, ""); ok && t.Value == "," && t.Pos.Line == pos.Line {
		return after(t)
	}
	return pos
}

func (p *printer) path(pa *Path) {
	for i, s := range pa.Segs {
		if i > 0 {
			if pa.Segs[i-1].Num != nil {
				p.put(" ") // `0.x` would lex as the float `0.` and `x`
			}
			p.put(".")
		}
		switch {
		case s.Num != nil:
			p.put(strconv.FormatInt(*s.Num, 10))
		case s.Index != nil:
			p.put("{")
			p.expr(s.Index)
			p.put("}")
		default:
			p.put(s.Name)
		}
	}
}

// render aligns the lines' cells and trailing comments and joins them.
func (p *printer) render() []byte {
	ls := p.lines
	// Cells: runs of one kind at one indentation; deeper lines are skipped.
	done := make([]bool, len(ls))
	for i, l := range ls {
		if done[i] || l.kind == "" || l.blank || l.alone {
			continue
		}
		group := []*line{l}
		for j := i + 1; j < len(ls); j++ {
			m := ls[j]
			if !m.blank && m.indent > l.indent {
				continue
			}
			if m.blank || m.alone || m.indent != l.indent || m.kind != l.kind {
				break
			}
			group = append(group, m)
			done[j] = true
		}
		var width []int
		for _, m := range group {
			for c, s := range m.cells {
				if c == len(width) {
					width = append(width, 0)
				}
				width[c] = max(width[c], utf8.RuneCountInString(s))
			}
		}
		for _, m := range group {
			for c, s := range m.cells {
				m.cells[c] = s + strings.Repeat(" ", width[c]-utf8.RuneCountInString(s))
			}
		}
	}
	code := make([]string, len(ls))
	for i, l := range ls {
		if l.blank {
			continue
		}
		var b strings.Builder
		b.WriteString(strings.Repeat(" ", l.indent))
		for _, c := range l.cells {
			b.WriteString(c + " ")
		}
		b.WriteString(l.text.String())
		code[i] = strings.TrimRight(b.String(), " ")
	}
	// Trailing comments: aligned over runs of consecutive commented lines.
	var out bytes.Buffer
	for i := 0; i < len(ls); {
		if ls[i].comment == "" {
			out.WriteString(code[i] + "\n")
			i++
			continue
		}
		j, col := i, 0
		for ; j < len(ls) && ls[j].comment != ""; j++ {
			col = max(col, utf8.RuneCountInString(code[j]))
		}
		for ; i < j; i++ {
			fmt.Fprintf(&out, "%s%s%s\n", code[i], strings.Repeat(" ", col+2-utf8.RuneCountInString(code[i])), ls[i].comment)
		}
	}
	return out.Bytes()
}
