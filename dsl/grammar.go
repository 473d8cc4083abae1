package dsl

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// archLexer tokenizes .arch source. `#` starts a comment to the end of line;
// newlines are insignificant, except that a string ends on its own line:
// a `"` without a closing one on that line lexes as Unterminated, which
// unquote reports (without it, the string would run on to the next `"`
// in the file and be reported with all the text in between).
var archLexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Comment", Pattern: `#[^\n]*`},
	{Name: "Whitespace", Pattern: `[ \t\r\n]+`},
	{Name: "Float", Pattern: `\d+\.\d*([eE][-+]?\d+)?|\d+[eE][-+]?\d+`},
	{Name: "Int", Pattern: `\d+`},
	{Name: "String", Pattern: `"(\\.|[^"\\\n])*"`},
	{Name: "Unterminated", Pattern: `"(\\.|[^"\\\n])*\\?`},
	{Name: "Ident", Pattern: `[A-Za-z_][A-Za-z0-9_]*`},
	{Name: "Op", Pattern: `\?\?|\*\*|==|!=|<=|>=|&&|\|\||//|->|[-+*/%<>!?:=.,(){}\[\]]`},
})

// unterminatedToken is the lexer's token type of an unterminated string.
var unterminatedToken = archLexer.Symbols()["Unterminated"]

var parser = participle.MustBuild[File](
	participle.Lexer(archLexer),
	participle.Elide("Comment", "Whitespace"),
	participle.Map(unquote, "String", "Unterminated"), // not participle.Unquote: it concatenates per character, quadratic in the string's length
	participle.UseLookahead(4),
)

// unquote replaces a String token's quoted text with its value, with Go's
// escapes (strconv.Unquote); an invalid escape, or a string the line ends
// before it is closed (an Unterminated token), is an error at the token.
func unquote(t lexer.Token) (lexer.Token, error) {
	if t.Type == unterminatedToken {
		return t, participle.Errorf(t.Pos, "unterminated string %s (close it with a double quote, \", on the same line: a string does not span lines)", clip(strings.TrimRight(t.Value, " \t\r"), 60))
	}
	v, err := strconv.Unquote(t.Value)
	if err != nil {
		return t, participle.Errorf(t.Pos, "invalid string %s: a bad escape (strings take Go's escapes: \\\" \\\\ \\n \\t \\u00e9 ...)", t.Value)
	}
	t.Value = v
	return t, nil
}

// clip returns s, or its first n bytes (whole runes) and "..." when longer.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
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
			return nil, &Error{Pos: perr.Position(), Msg: fileMessage(err, perr.Message(), src)}
		}
		return nil, fmt.Errorf("%s: %w", filename, err)
	}
	if err := annotate(f.Name, f.Items, false); err != nil {
		return nil, err
	}
	return f, nil
}

// fileShape is what an .arch file holds, for the errors about its top
// level.
const fileShape = "an .arch file holds one family declaration: `arch NAME { ... }` or `arch NAME extends PARENT { ... }`"

// fileMessage rewrites a parse error that participle gives without saying
// what it expected, which it does at the top level of the file: before the
// family declaration (an empty file, or one that does not start with
// `arch`) and after its closing brace. Any other error keeps its message.
func fileMessage(err error, msg string, src []byte) string {
	var ute *participle.UnexpectedTokenError
	if !errors.As(err, &ute) || strings.Contains(msg, "(expected ") {
		return msg
	}
	off := min(max(ute.Unexpected.Pos.Offset, 0), len(src))
	switch {
	case !onlyComments(src[:off]):
		return fmt.Sprintf("unexpected token %q after the family's closing brace; %s", ute.Unexpected, fileShape)
	case ute.Unexpected.EOF():
		if len(bytes.TrimSpace(src)) > 0 {
			return "no family declaration, only comments; " + fileShape
		}
		return "empty file; " + fileShape
	}
	return fmt.Sprintf("unexpected token %q (expected \"arch\"); %s", ute.Unexpected, fileShape)
}

// onlyComments reports whether src holds only whitespace and comments.
func onlyComments(src []byte) bool {
	lx, err := archLexer.LexString("", string(src))
	if err != nil {
		return false
	}
	syms := archLexer.Symbols()
	for {
		t, err := lx.Next()
		switch {
		case err != nil:
			return false
		case t.EOF():
			return true
		case t.Type != syms["Comment"] && t.Type != syms["Whitespace"]:
			return false
		}
	}
}

// matchKey is the config field a match clause tests.
const matchKey = "model_type"

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
		if m := it.Match; m != nil && m.Key.Name != matchKey {
			return errorf(m.Key.Pos, "unknown match key %q%s; a match clause tests %s: `match %s \"...\"`", m.Key.Name, suggest(m.Key.Name, []string{matchKey}), matchKey, matchKey)
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
