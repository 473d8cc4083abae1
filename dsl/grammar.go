package dsl

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// archLexer tokenizes .arch source. `#` starts a comment to the end of line;
// newlines are insignificant.
var archLexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Comment", Pattern: `#[^\n]*`},
	{Name: "Whitespace", Pattern: `[ \t\r\n]+`},
	{Name: "Float", Pattern: `\d+\.\d*([eE][-+]?\d+)?|\d+[eE][-+]?\d+`},
	{Name: "Int", Pattern: `\d+`},
	{Name: "String", Pattern: `"(\\.|[^"\\])*"`},
	{Name: "Ident", Pattern: `[A-Za-z_][A-Za-z0-9_]*`},
	{Name: "Op", Pattern: `\?\?|\*\*|==|!=|<=|>=|&&|\|\||//|->|[-+*/%<>!?:=.,(){}\[\]]`},
})

var parser = participle.MustBuild[File](
	participle.Lexer(archLexer),
	participle.Elide("Comment", "Whitespace"),
	participle.Map(unquote, "String"), // not participle.Unquote: it concatenates per character, quadratic in the string's length
	participle.UseLookahead(4),
)

// unquote replaces a String token's quoted text with its value, with Go's
// escapes (strconv.Unquote); an invalid escape is an error at the token.
func unquote(t lexer.Token) (lexer.Token, error) {
	v, err := strconv.Unquote(t.Value)
	if err != nil {
		return t, participle.Errorf(t.Pos, "invalid string %s: %v", t.Value, err)
	}
	t.Value = v
	return t, nil
}

// Grammar returns the EBNF of the .arch grammar (golden in testdata).
func Grammar() string { return parser.String() }

// Parse parses one .arch file. filename is used in error positions.
// Errors are *Error values formatted `file:line:col: message`.
func Parse(filename string, src []byte) (*File, error) {
	if err := checkNesting(filename, src); err != nil {
		return nil, err
	}
	f, err := parser.ParseBytes(filename, src)
	if err != nil {
		var perr participle.Error
		if errors.As(err, &perr) {
			return nil, &Error{Pos: perr.Position(), Msg: perr.Message()}
		}
		return nil, fmt.Errorf("%s: %w", filename, err)
	}
	if err := annotate(f.Name, f.Items, false); err != nil {
		return nil, err
	}
	return f, nil
}

// annotate marks each block with the family that wrote it and checks the
// config field types, in an arch body or an encoder's; an encoder holds
// no match clause or encoder of its own, and its gguf section (how it reads
// llama.cpp's mmproj file) claims the file it reads.
func annotate(family string, items []*Item, inEncoder bool) error {
	for _, it := range items {
		if it.Block != nil {
			it.Block.family = family
		}
		if it.Config != nil {
			for _, fd := range it.Config.Fields {
				if fd.Require == nil && !slices.Contains(configTypes, fd.Type.Name) {
					return errorf(fd.Type.Pos, "unknown type %q (types: %s%s)", fd.Type.Name, strings.Join(configTypes, ", "), typeHint(fd.Type.Name))
				}
			}
		}
		if inEncoder {
			switch {
			case it.Match != nil:
				return errorf(it.Pos, "a match clause inside an encoder; the family's match clauses go at the top of its arch body")
			case it.GGUF != nil && len(it.GGUF.Archs) == 0:
				return errorf(it.Pos, "an encoder's gguf section names the file it reads (gguf \"clip\" if meta(\"clip.projector_type\") == ...: llama.cpp's mmproj file)")
			case it.Encoder != nil:
				return errorf(it.Pos, "an encoder inside an encoder; declare each encoder in the arch body")
			}
		}
		if e := it.Encoder; e != nil {
			if len(e.Params) == 0 && (e.Over != "" || e.Key != "" || e.Scope != nil) {
				return errorf(e.Pos, "encoder %s: an encoder without inputs amends the inherited encoder of that name and takes no header (size, in, scope): write `encoder %s { ... }`, or declare its inputs, `encoder %s(pixels: [...]) ...`", e.Name, e.Name, e.Name)
			}
			if err := annotate(family, e.Items, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// typeHint is `; did you mean T?` for the config type closest to name
// (within a small edit distance, or a prefix of it or it of them: integer,
// str, boolean), else "".
func typeHint(name string) string {
	best := closest(name, configTypes)
	for _, t := range configTypes {
		if best == "" && (strings.HasPrefix(name, t) || strings.HasPrefix(t, name)) {
			best = t
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// maxNesting bounds bracket nesting, so that a pathological file gets an
// error instead of exhausting the recursive-descent parser's stack.
const maxNesting = 256

// checkNesting reports the first bracket nested deeper than maxNesting
// (brackets inside comments and strings count too; no real file comes close).
func checkNesting(filename string, src []byte) error {
	depth, line, col := 0, 1, 1
	for _, c := range src {
		switch c {
		case '(', '[', '{':
			if depth++; depth > maxNesting {
				return &Error{Pos: lexer.Position{Filename: filename, Line: line, Column: col}, Msg: fmt.Sprintf("brackets nested deeper than %d", maxNesting)}
			}
		case ')', ']', '}':
			depth--
		case '\n':
			line, col = line+1, 0
		}
		col++
	}
	return nil
}

// Error is a diagnostic at a source position.
type Error struct {
	Pos lexer.Position
	Msg string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Pos.Filename, e.Pos.Line, e.Pos.Column, e.Msg)
}

func errorf(pos lexer.Position, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
