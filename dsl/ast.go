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
	Name    string  `parser:"'arch' @Ident"`
	Extends string  `parser:"( 'extends' @Ident )?"`
	Items   []*Item `parser:"'{' @@* '}'"`

	// supers maps a family of the extends chain to the blocks its parent
	// resolves to: what `super.NAME(...)` calls inside that family's blocks
	// (filled by Resolve; nil for a file without extends).
	supers map[string]map[string]*Block
}

// Item is one top-level entry of an arch body.
type Item struct {
	Pos    lexer.Position
	Match  *Match  `parser:"@@"`
	Config *Config `parser:"| @@"`
	Block  *Block  `parser:"| @@"`
	Loop   *Loop   `parser:"| @@"`
	Stmt   *Stmt   `parser:"| @@"`
}

// Match selects the configs the family handles: `match model_type "a", "b" [if EXPR]`.
type Match struct {
	Pos        lexer.Position
	ModelTypes []string `parser:"'match' 'model_type' @String ( ',' @String )*"`
	Cond       *Expr    `parser:"( 'if' @@ )?"`
}

// Config binds Hugging Face config.json fields by name: `name: type [= default]`.
type Config struct {
	Pos    lexer.Position
	Fields []*Field `parser:"'config' '{' @@* '}'"`
}

// Field is one config binding. A field absent from config.json (or null
// there) takes its default; a field without a default is required.
type Field struct {
	Pos     lexer.Position
	Name    string `parser:"@Ident ':'"`
	Type    string `parser:"@( 'int' | 'float' | 'bool' | 'string' | 'dict' | 'list' )"`
	Default *Expr  `parser:"( '=' @@ )?"`
}

// Loop is the decoder-layer loop:
// `for i in range(N) scope model.layers.{i} { ... }`.
// Weight paths inside the body are relative to the scope.
type Loop struct {
	Pos   lexer.Position
	Var   string  `parser:"'for' @Ident 'in' 'range' '('"`
	Count *Expr   `parser:"@@ ')'"`
	Scope *Path   `parser:"'scope' @@"`
	Body  []*Stmt `parser:"'{' @@* '}'"`
}

// Block is a named sub-computation, like a Hugging Face nn.Module's forward:
// `block attn(h) { q = ...  return expr }`. It is called like a primitive;
// its parameters take any value (tensor, weight module, scalar) and its body
// sees them, the config, the loop variable and the current weight scope, but
// not the caller's bindings. A family that extends another overrides blocks
// by name; the overriding block reaches the parent's version (or any other
// block as the parent resolves it) with `super.NAME(...)`.
type Block struct {
	Pos    lexer.Position
	Name   string   `parser:"'block' @Ident '('"`
	Params []string `parser:"( @Ident ( ',' @Ident )* )? ')' '{'"`
	Body   []*Stmt  `parser:"@@*"`
	Return *Expr    `parser:"'return' @@ '}'"`

	family string // arch name of the file that wrote the block (set by Parse)
}

// Stmt binds a name to the value of an expression: `x = expr`.
type Stmt struct {
	Pos   lexer.Position
	Name  string `parser:"@Ident '='"`
	Value *Expr  `parser:"@@"`
}

// Expr is a conditional expression: `cond ? then : else`, or just `cond`.
type Expr struct {
	Pos  lexer.Position
	Cond *BinExpr `parser:"@@"`
	Then *Expr    `parser:"( '?' @@"`
	Else *Expr    `parser:"':' @@ )?"`
}

// BinExpr is a flat run of operands and binary operators; precedence is
// applied when the expression is evaluated (see precedence in eval.go).
type BinExpr struct {
	Pos   lexer.Position
	First *Unary   `parser:"@@"`
	Rest  []*BinOp `parser:"@@*"`
}

// BinOp is one `op operand` pair of a BinExpr.
type BinOp struct {
	Pos   lexer.Position
	Op    string `parser:"@( '??' | '||' | '&&' | '==' | '!=' | '<=' | '>=' | '<' | '>' | '+' | '-' | '**' | '*' | '//' | '/' | '%' )"`
	Right *Unary `parser:"@@"`
}

// Unary is an optionally negated primary, optionally indexed:
// `layer_types[i]` (a list element or a dict key).
type Unary struct {
	Pos     lexer.Position
	Op      string   `parser:"@( '-' | '!' )?"`
	Operand *Primary `parser:"@@"`
	Index   []*Expr  `parser:"( '[' @@ ']' )*"`
}

// Primary is a literal, a call, a name path or a parenthesised expression.
type Primary struct {
	Pos   lexer.Position
	Float *float64 `parser:"@Float"`
	Int   *int64   `parser:"| @Int"`
	Str   *string  `parser:"| @String"`
	True  bool     `parser:"| @'true'"`
	False bool     `parser:"| @'false'"`
	None  bool     `parser:"| @'none'"`
	Call  *Call    `parser:"| @@"`
	Path  *Path    `parser:"| @@"`
	Sub   *Expr    `parser:"| '(' @@ ')'"`
}

// Call is a primitive or block call with positional and keyword arguments.
// `super.NAME(...)`, inside a block of a family that extends another, calls
// block NAME as the parent family defines it (Hugging Face's super()).
type Call struct {
	Pos   lexer.Position
	Super bool   `parser:"( @'super' '.' )?"`
	Name  string `parser:"@Ident '('"`
	Args  []*Arg `parser:"( @@ ( ',' @@ )* ','? )? ')'"`
}

// Arg is one call argument, positional (`x`) or keyword (`eps: 1e-6`).
type Arg struct {
	Pos   lexer.Position
	Name  string `parser:"( @Ident ':' )?"`
	Value *Expr  `parser:"@@"`
}

// Path is a dotted name: a local binding, a config field (with dict keys,
// `rope_parameters.rope_theta`) or a weight module (`self_attn.q_proj`,
// `model.layers.{i}`).
type Path struct {
	Pos  lexer.Position
	Segs []*Seg `parser:"@@ ( '.' @@ )*"`
}

// Seg is one segment of a Path: a name, a literal index or `{expr}`.
type Seg struct {
	Pos   lexer.Position
	Name  string `parser:"@Ident"`
	Num   *int64 `parser:"| @Int"`
	Index *Expr  `parser:"| '{' @@ '}'"`
}
