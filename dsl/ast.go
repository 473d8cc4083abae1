// Package dsl parses and checks .arch files, evaluates their config block
// against a Hugging Face config.json, and builds the typed dataflow IR
// (package dsl/ir) that package lower turns into StableHLO.
//
// A .arch file describes one model family as a dataflow program: named
// bindings of primitive calls in the order of the Hugging Face forward pass.
// The grammar is in grammar.go; its EBNF is golden in testdata/grammar.ebnf.
package dsl

import "github.com/alecthomas/participle/v2/lexer"

// File is one parsed .arch file: a single `arch NAME [extends PARENT] { ... }`.
type File struct {
	Pos     lexer.Position
	Name    string  `"arch" @Ident`
	Extends string  `( "extends" @Ident )?`
	Items   []*Item `"{" @@* "}"`
}

// Item is one top-level entry of an arch body.
type Item struct {
	Pos    lexer.Position
	Match  *Match  `  @@`
	Config *Config `| @@`
	Loop   *Loop   `| @@`
	Stmt   *Stmt   `| @@`
}

// Match selects the configs the family handles: `match model_type "a", "b" [if EXPR]`.
type Match struct {
	Pos        lexer.Position
	ModelTypes []string `"match" "model_type" @String ( "," @String )*`
	Cond       *Expr    `( "if" @@ )?`
}

// Config binds Hugging Face config.json fields by name: `name: type [= default]`.
type Config struct {
	Pos    lexer.Position
	Fields []*Field `"config" "{" @@* "}"`
}

// Field is one config binding. A field absent from config.json (or null
// there) takes its default; a field without a default is required.
type Field struct {
	Pos     lexer.Position
	Name    string `@Ident ":"`
	Type    string `@( "int" | "float" | "bool" | "string" | "dict" | "list" )`
	Default *Expr  `( "=" @@ )?`
}

// Loop is the decoder-layer loop:
// `for i in range(N) scope model.layers.{i} { ... }`.
// Weight paths inside the body are relative to the scope.
type Loop struct {
	Pos   lexer.Position
	Var   string  `"for" @Ident "in" "range" "("`
	Count *Expr   `@@ ")"`
	Scope *Path   `"scope" @@`
	Body  []*Stmt `"{" @@* "}"`
}

// Stmt binds a name to the value of an expression: `x = expr`.
type Stmt struct {
	Pos   lexer.Position
	Name  string `@Ident "="`
	Value *Expr  `@@`
}

// Expr is a conditional expression: `cond ? then : else`, or just `cond`.
type Expr struct {
	Pos  lexer.Position
	Cond *BinExpr `@@`
	Then *Expr    `( "?" @@`
	Else *Expr    `  ":" @@ )?`
}

// BinExpr is a flat run of operands and binary operators; precedence is
// applied when the expression is evaluated (see precedence in eval.go).
type BinExpr struct {
	Pos   lexer.Position
	First *Unary   `@@`
	Rest  []*BinOp `@@*`
}

// BinOp is one `op operand` pair of a BinExpr.
type BinOp struct {
	Pos   lexer.Position
	Op    string `@( "??" | "||" | "&&" | "==" | "!=" | "<=" | ">=" | "<" | ">" | "+" | "-" | "**" | "*" | "//" | "/" | "%" )`
	Right *Unary `@@`
}

// Unary is an optionally negated primary.
type Unary struct {
	Pos     lexer.Position
	Op      string   `@( "-" | "!" )?`
	Operand *Primary `@@`
}

// Primary is a literal, a call, a name path or a parenthesised expression.
type Primary struct {
	Pos   lexer.Position
	Float *float64 `  @Float`
	Int   *int64   `| @Int`
	Str   *string  `| @String`
	True  bool     `| @"true"`
	False bool     `| @"false"`
	None  bool     `| @"none"`
	Call  *Call    `| @@`
	Path  *Path    `| @@`
	Sub   *Expr    `| "(" @@ ")"`
}

// Call is a primitive call with positional and keyword arguments.
type Call struct {
	Pos  lexer.Position
	Name string `@Ident "("`
	Args []*Arg `( @@ ( "," @@ )* ","? )? ")"`
}

// Arg is one call argument, positional (`x`) or keyword (`eps: 1e-6`).
type Arg struct {
	Pos   lexer.Position
	Name  string `( @Ident ":" )?`
	Value *Expr  `@@`
}

// Path is a dotted name: a local binding, a config field (with dict keys,
// `rope_parameters.rope_theta`) or a weight module (`self_attn.q_proj`,
// `model.layers.{i}`).
type Path struct {
	Pos  lexer.Position
	Segs []*Seg `@@ ( "." @@ )*`
}

// Seg is one segment of a Path: a name, a literal index or `{expr}`.
type Seg struct {
	Pos   lexer.Position
	Name  string `  @Ident`
	Num   *int64 `| @Int`
	Index *Expr  `| "{" @@ "}"`
}
