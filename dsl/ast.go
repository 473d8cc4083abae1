// Package dsl parses and checks .arch files, evaluates their config block
// against a Hugging Face config.json, and builds the typed dataflow IR
// (package dsl/ir) that package lower turns into StableHLO.
//
// A .arch file describes one model family as a dataflow program: named
// bindings of primitive calls in the order of the Hugging Face forward pass.
// The grammar is in grammar.go; its EBNF is golden in testdata/grammar.ebnf.
// Every AST node carries Pos, the position of its first token, and EndPos,
// the position just past its last token (participle fills both); the
// printer (format.go) reads the source's line breaks from them.
package dsl

import "github.com/alecthomas/participle/v2/lexer"

// File is one parsed .arch file: a single
// `arch NAME [extends PARENT [with MIXIN, ...]] { ... }`.
type File struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Name    string `parser:"'arch' @Ident"`
	Extends string `parser:"( 'extends' @Ident"`
	// With names mixins: families whose own declarations (not their
	// parents') are applied over PARENT before this file's, each written
	// against one of PARENT's ancestors (Resolve). A vision family's
	// encoder and image merge, written once over a text family, join
	// that family's variants this way (qwen3_5_moe_vision extends
	// qwen3_5_moe with qwen3_5_vision).
	With  []string `parser:"( 'with' @Ident ( ',' @Ident )* )? )?"`
	Items []*Item  `parser:"'{' @@* '}'"`

	// encoder is set on the file EncoderFile makes of an encoder's body:
	// its input is the graph's input and its name the output's.
	encoder *Encoder

	// supers maps a family of the extends chain to the blocks its parent
	// resolves to: what `super.NAME(...)` calls inside that family's blocks
	// (filled by Resolve; nil for a file without extends).
	supers map[string]map[string]*Block

	// extended: the file as written extends a family (Resolve clears
	// Extends). Such a file without a match clause of its own matches no
	// config: a base its children match through, or a mixin
	// (qwen3_vl_images, mixed into qwen3_vl_vision and qwen3_vl_moe_vision).
	extended bool
}

// Item is one top-level entry of an arch body.
type Item struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Match   *Match   `parser:"@@"`
	Config  *Config  `parser:"| @@"`
	Block   *Block   `parser:"| @@"`
	Module  *Module  `parser:"| @@"`
	Loop    *Loop    `parser:"| @@"`
	GGUF    *GGUF    `parser:"| @@"`
	Encoder *Encoder `parser:"| @@"`
	MTP     *MTP     `parser:"| @@"`
	Stmt    *Stmt    `parser:"| @@"`
}

// MTP declares a family's multi-token-prediction module (DeepSeek-V3's
// MTP, GLM-4.5's "nextn" layer, MiMo's mtp_layers), the drafter of
// speculative decoding with the model's own layers:
//
//	mtp i = num_hidden_layers scope model.layers.{i} if num_nextn_predict_layers > 0 {
//	  h = linear(concat(norm(embed(tokens), enorm), norm(norm(x, model.norm), hnorm)), eh_proj, hidden_size)
//	  mtp_hidden = norm(layer(h), shared_head.norm)
//	  mtp_logits = linear(mtp_hidden, lm_head, vocab_size)
//	}
//
// Its body runs after the decoder's dataflow, with the loop variable bound
// to the module's layer index (blocks that choose by i choose as for that
// layer) under its weight scope, and sees the decoder's bindings: a
// tensor computed before the head (x, the last decoder layer's output
// before the final norm; a family whose MTP reads the normed state norms
// it in the body, as above) is the target's hidden state of each position
// t, and tokens is, here, the token that follows each position (t+1): the
// body predicts the token at t+2 and must bind mtp_logits, [batch, seq,
// vocab]; it may bind mtp_hidden, its own output hidden state, which a
// chained draft feeds back as the hidden state of the next position. Its
// weight paths are under its scope, except the modules the decoder reads
// outside its layer loop (model.embed_tokens, model.norm, lm_head), which
// name the decoder's own: the MTP module shares them. With a layer path
// (Qwen3-Next's and Qwen3.5's mtp.fc beside mtp.layers.0),
//
//	mtp i = num_hidden_layers scope mtp layer mtp.layers.0 if mtp_num_hidden_layers > 0 { ... }
//
// the blocks the body calls read their own weights under the layer path,
// while the paths written in the body (fc, the norms) stay under the
// scope. It is absent from
// the graph unless the cond (a config expression) holds; package lower
// runs it in its own entry point (ir.Graph.MTP), never in prefill, decode
// or verify.
type MTP struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Var    string  `parser:"'mtp' @Ident '='"`
	Index  *Expr   `parser:"@@"`
	Scope  *Path   `parser:"'scope' @@"`
	Layer  *Path   `parser:"( 'layer' @@ )?"`
	Cond   *Expr   `parser:"( 'if' @@ )?"`
	Body   []*Stmt `parser:"'{' @@* '}'"`
}

// Encoder declares a second graph beside the decoder: an image encoder and
// its projector (a vision-language family's vision tower), DESIGN §4.
//
//	encoder image(pixels: [3, image_size, image_size]) in vision_config {
//	  config { hidden_size: int  ... }
//	  block ... module ...
//	  x = ...pixels...
//	  for i in range(num_hidden_layers) scope model.vision_model.encoder.layers.{i} { ... }
//	  image = ...   # the output: [1, tokens, width], bound to the encoder's name
//	}
//
// Its body is an arch body of its own: config fields (bound from
// config.json's KEY object, vision_config, with the top level's fields
// filling what KEY lacks: Idefics3Config's scale_factor), blocks and
// modules (its own, apart from the decoder's), statements and at most one
// layer loop. Its input is one image tile, [1, C, H, W] f32, the shape
// given after the input's name evaluated over the encoder's config; its
// output is the binding named like the encoder, [1, N, width]: N rows that
// the decoder reads, in order, at its image-placeholder positions. The
// decoder sees the encoder's name as a graph input beside tokens,
// [batch, seq, width] (see primitive masked_scatter).
type Encoder struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string `parser:"'encoder' @Ident"`
	// Over, `encoder image[patches](...)`, names the encoder's variable
	// size: a dimension its inputs' shapes may use, which the module
	// fixes per bucket (one entry point per size; padding rows past the
	// call's real count are masked out of attention and their output
	// rows dropped). "" for fixed shapes.
	Over string `parser:"( '[' @Ident ']' )?"`
	// Params are the encoder's inputs. An encoder written without them
	// (`encoder image { ... }`, no header) amends the encoder of that name
	// the family inherits: its config fields, blocks, modules and gguf
	// entries replace the inherited ones by name, as a child family's do,
	// and its statements, if any, the inherited ones (Qwen3.5's tower is
	// Qwen3-VL's without DeepStack: qwen3_5_vision amends
	// qwen3_vl_images's encoder with its defaults and its mmproj reading).
	Params []*EncoderParam `parser:"( '(' @@ ( ',' @@ )* ')' )?"`
	Key    string          `parser:"( 'in' @Ident )?"`
	// Scope and As: `scope PATH as AS`, the checkpoint may hold the
	// encoder's weights under PATH where the body names them AS...: llava-hf's
	// vision_tower.vision_model.encoder.layers.0... are the
	// vision_tower.encoder.layers.0... that transformers 5 saves (each name
	// the checkpoint already has is kept; see Nest).
	Scope *Path   `parser:"( 'scope' @@ "`
	As    *Path   `parser:"'as' @@ )?"`
	Items []*Item `parser:"'{' @@* '}'"`
}

// EncoderParam is one input of an encoder: `pixels: [C, H, W]` (f32) or
// `grid: [patches, 2] int` (i32, such as an index table the processor
// computes). The call gives it a leading 1: [1, dims...].
type EncoderParam struct {
	Pos   lexer.Position
	Name  string  `parser:"@Ident ':'"`
	Shape []*Expr `parser:"'[' @@ ( ',' @@ )* ']'"`
	Int   bool    `parser:"@'int'?"`
}

// Match selects the configs the family handles: `match model_type "a", "b" [if EXPR]`.
type Match struct {
	Pos    lexer.Position
	EndPos lexer.Position
	// Key is the config field the clause tests: model_type, the only one
	// (parsed as any name so that a misspelling is reported at the name,
	// by Parse, not as an unexpected `match`).
	Key        *MatchKey `parser:"'match' @@"`
	ModelTypes []string  `parser:"@String ( ',' @String )*"`
	Nest       *Nest     `parser:"@@?"`
	Cond       *Expr     `parser:"( 'if' @@ )?"`
}

// MatchKey is the name after `match`: model_type.
type MatchKey struct {
	Pos  lexer.Position
	Name string `parser:"@Ident"`
}

// Nest is a match clause's `in KEY [scope PATH]`: the model_type is a
// wrapper (a multimodal model) whose text model the family is. The config
// block binds config.json's KEY object (Llama4Config's text_config) instead
// of the top level, and the checkpoint holds the family's weights under
// PATH (Llama4ForConditionalGeneration's language_model: the family's
// model.layers.0... are language_model.model.layers.0...).
type Nest struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Key    string `parser:"'in' @Ident"`
	Scope  *Path  `parser:"( 'scope' @@ "`
	// As, with scope, names the family's prefix for what the checkpoint
	// holds under PATH: `scope model.language_model as model` reads
	// Gemma4ForConditionalGeneration's model.language_model.layers.0... as
	// the family's model.layers.0... (a rename; without as, PATH is a
	// prefix of the family's names).
	As *Path `parser:"( 'as' @@ )? )?"`
}

// Config binds Hugging Face config.json fields by name: `name: type [= default]`.
type Config struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Fields []*Field `parser:"'config' '{' @@* '}'"`
}

// Field is one entry of a config block: a binding `name: type [=
// default]` or, when Require is set, a requirement (Name is then empty). A
// field absent from config.json (or null there) takes its default; a field
// without a default is required.
type Field struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Require *Require `parser:"( @@"`
	Name    string   `parser:"| @Ident ':'"`
	Type    TypeName `parser:"@@"`
	Default *Expr    `parser:"( '=' @@ )? )"`
}

// Require is a config requirement, `require COND, PART, ...`: once every
// config field is bound, COND (a config expression, bool) must hold, or
// the config is refused with the parts joined as fail(...) joins them
// (strings as they are, other values as .arch writes them), at the
// require's position. It states what a family cannot run without taking a
// field's place in the config's dataflow.
type Require struct {
	Pos     lexer.Position
	Cond    *Expr   `parser:"'require' @@"`
	Message []*Expr `parser:"( ',' @@ )*"` // at least one (Check says so)
}

// TypeName is a config field's type as written; Parse accepts only the
// names in configTypes.
type TypeName struct {
	Pos  lexer.Position
	Name string `parser:"@Ident"`
}

// configTypes are the config field types, as coerce (value.go) converts
// config.json values to them; "any" takes the value as it is (a field HF
// lets be a string or a number, such as Mamba's time_step_rank "auto").
var configTypes = []string{"int", "float", "bool", "string", "dict", "list", "any"}

// GGUF declares how the family reads llama.cpp's GGUF files (gguf.go):
//
//	gguf "llama" [, "..."] [if COND] {
//	  num_hidden_layers = need("{arch}.block_count")   # a config.json field
//	  let kind = meta("{arch}.rope.scaling.type")      # a helper binding
//	  tensor blk.{i}.attn_q -> model.layers.{i}.self_attn.q_proj
//	  transform "blk.*.attn_q.*": unpermute_qk(num_attention_heads)
//	}
//
// The strings name the general.architecture values the family reads (if
// COND holds for the file); they are the family's own, not inherited. The
// entries are inherited through extends and merged by key: a field or let
// by name, a tensor row by its GGUF name, a transform by its pattern, a
// rename by its FROM path.
type GGUF struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Archs   []string     `parser:"'gguf' ( @String ( ',' @String )*"`
	Cond    *Expr        `parser:"  ( 'if' @@ )? )?"`
	Entries []*GGUFEntry `parser:"'{' @@* '}'"`
}

// GGUFEntry is one line of a gguf section.
type GGUFEntry struct {
	Pos       lexer.Position
	EndPos    lexer.Position
	Tensor    *GGUFTensor    `parser:"@@"`
	Transform *GGUFTransform `parser:"| @@"`
	Rename    *GGUFRename    `parser:"| @@"`
	Field     *GGUFField     `parser:"| @@"`
}

// GGUFRename renames the Hugging Face names the tensor rows give, for a
// block llama.cpp files at a layer index where the checkpoint keeps it
// elsewhere: `rename model.layers.{num_hidden_layers} -> mtp.layers.0`
// (Qwen3-Next's MTP layer, which llama.cpp appends as block
// num_hidden_layers). A `{expr}` segment is a config expression (an int),
// evaluated after the section's fields; a name equal to FROM, or FROM
// followed by ".", gets TO in FROM's place, the longest matching FROM
// winning (GGUFReading.Tensor).
type GGUFRename struct {
	Pos    lexer.Position
	EndPos lexer.Position
	From   *Path `parser:"'rename' @@ '->'"`
	To     *Path `parser:"@@"`
}

// GGUFField binds a config.json field (or, with let, a helper name) to an
// expression over the file's metadata: `rms_norm_eps = need("{arch}.attention.layer_norm_rms_epsilon")`.
type GGUFField struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Let    bool   `parser:"( @'let' )?"`
	Name   string `parser:"@Ident '='"`
	Value  *Expr  `parser:"@@"`
}

// GGUFTensor maps a GGUF tensor base name to its Hugging Face name (both
// with .weight and .bias); a `{i}` segment stands for the layer index on
// both sides. `-> none` marks a tensor with no HF counterpart (skipped).
// With `=` instead of `->` it makes the Hugging Face tensor named on its
// left (GGUF holds that name) from metadata values, where llama.cpp stores
// a parameter as a key: `tensor model.layers.{i}.mlp.act_fn.alpha_p =
// meta("xielu.alpha_p")` (see GGUFValue). A `->` row may end in `for
// LIST`, a list of bools, one per layer, evaluated over the file as a
// field is: it maps only the layers whose element is true, ahead of the
// row of the same GGUF name without one: `tensor blk.{i}.attn_output ->
// model.layers.{i}.self_attn.linear_attn for [h > 0 && kv[k] == 0 for k
// in ...]` (llama.cpp's DeciModel stores a linear attention replacement as
// attn_output). `tensor GGUF -> [HF0, HF1, ...]` splits the tensor's first
// dimension, one Hugging Face tensor (or none) per slice: torch.stack(dim=0)
// undone (Rwkv7Model's time_mix_lerp_fused).
type GGUFTensor struct {
	Pos    lexer.Position
	EndPos lexer.Position
	GGUF   *Path            `parser:"'tensor' @@ ( '->'"`
	None   bool             `parser:"  ( @'none'"`
	HF     *Path            `parser:"  | @@"`
	Split  []*GGUFSplitPart `parser:"  | '[' @@ ( ',' @@ )* ','? ']' )"`
	Layers *Expr            `parser:"  ( 'for' @@ )?"`
	Value  *Expr            `parser:"| '=' @@ )"`
}

// GGUFSplitPart is one element of a split tensor row's list: the Hugging
// Face tensor that slice of the GGUF tensor is, or none (not read).
type GGUFSplitPart struct {
	Pos    lexer.Position
	EndPos lexer.Position
	None   bool  `parser:"  @'none'"`
	HF     *Path `parser:"| @@"`
}

// GGUFTransform applies a shared load transform (GGUFTransforms) to every
// GGUF tensor whose full name matches a glob pattern (`*` matches any
// run of characters): `transform "*norm.weight": minus_one()`. `: none`
// removes an inherited transform.
type GGUFTransform struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Pattern string `parser:"'transform' @String ':'"`
	None    bool   `parser:"( @'none'"`
	Call    *Call  `parser:"| @@ )"`
}

// Loop is the decoder-layer loop:
// `for i in range(N) scope model.layers.{i} { ... }`.
// Weight paths inside the body are relative to the scope.
type Loop struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Var    string  `parser:"'for' @Ident 'in' 'range' '('"`
	Count  *Expr   `parser:"@@ ')'"`
	Scope  *Path   `parser:"'scope' @@"`
	Body   []*Stmt `parser:"'{' @@* '}'"`
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
	EndPos lexer.Position
	Name   string   `parser:"'block' @Ident '('"`
	Params []string `parser:"( @Ident ( ',' @Ident )* )? ')' '{'"`
	Body   []*Stmt  `parser:"@@*"`
	Return *Expr    `parser:"'return' @@ '}'"`

	family string // arch name of the file that wrote the block (set by Parse)
}

// Module declares a weight module once, by name, as a primitive call whose
// first argument (the input) is left open: its checkpoint name, output
// width, bias and whatever else the primitive takes.
//
//	module q_proj = linear(self_attn.q_proj, num_attention_heads * head_dim, bias: attention_bias)
//
// A use `q_proj(h)` is `linear(h, self_attn.q_proj, ...)`, evaluated where
// it is used (the weight path under the caller's scope, the loop variable),
// but without the caller's bindings: a declaration sees config fields and
// the loop variable. A use may give any argument again by name, which
// replaces the declared one for that use (`o_proj(o, bias: false)`).
//
// In a family that extends another, `module q_proj.bias = true` changes one
// argument of the inherited declaration and `module q_proj = ...` replaces
// the declaration. One override may set the same value on several modules:
// `module q_proj.bias, k_proj.bias, v_proj.bias = true` (Qwen2's biased
// q/k/v projections).
type Module struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string        `parser:"'module' @Ident"`
	Attr   string        `parser:"( '.' @Ident"`
	More   []*ModuleAttr `parser:"  ( ',' @@ )* '='"`
	Value  *Expr         `parser:"  @@"`
	Call   *Call         `parser:"| '=' @@ )"`
}

// ModuleAttr is a further target of an override: `k_proj.bias`.
type ModuleAttr struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string `parser:"@Ident '.'"`
	Attr   string `parser:"@Ident"`
}

// split returns an override as overrides of one target each (the first
// is m itself when m has one), the value shared; a declaration as itself.
func (m *Module) split() []*Module {
	if len(m.More) == 0 {
		return []*Module{m}
	}
	first := *m
	first.More = nil
	out := []*Module{&first}
	for _, t := range m.More {
		out = append(out, &Module{Pos: t.Pos, EndPos: m.EndPos, Name: t.Name, Attr: t.Attr, Value: m.Value})
	}
	return out
}

// Stmt binds a name to the value of an expression: `x = expr`.
type Stmt struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string `parser:"@Ident '='"`
	Value  *Expr  `parser:"@@"`
}

// Expr is a conditional expression: `cond ? then : else`, or just `cond`.
type Expr struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Cond   *BinExpr `parser:"@@"`
	Then   *Expr    `parser:"( '?' @@"`
	Else   *Expr    `parser:"':' @@ )?"`
}

// BinExpr is a flat run of operands and binary operators; precedence is
// applied when the expression is evaluated (see precedence in eval.go).
type BinExpr struct {
	Pos    lexer.Position
	EndPos lexer.Position
	First  *Unary   `parser:"@@"`
	Rest   []*BinOp `parser:"@@*"`
}

// BinOp is one `op operand` pair of a BinExpr.
type BinOp struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Op     string `parser:"@( '??' | '||' | '&&' | '==' | '!=' | '<=' | '>=' | '<' | '>' | 'in' | '+' | '-' | '**' | '*' | '//' | '/' | '%' )"`
	Right  *Unary `parser:"@@"`
}

// Unary is an optionally negated primary, optionally indexed:
// `layer_types[i]` (a list element or a dict key).
type Unary struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Op      string   `parser:"@( '-':Op | '!':Op )?"`
	Operand *Primary `parser:"@@"`
	Index   []*Expr  `parser:"( '[' @@ ']' )*"`
}

// Primary is a literal, a list, a call, a name path or a parenthesised
// expression.
type Primary struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Float  *float64 `parser:"@Float"`
	Int    *int64   `parser:"| @Int"`
	Str    *string  `parser:"| @String"`
	True   bool     `parser:"| @'true'"`
	False  bool     `parser:"| @'false'"`
	None   bool     `parser:"| @'none'"`
	List   *List    `parser:"| @@"`
	Call   *Call    `parser:"| @@"`
	Path   *Path    `parser:"| @@"`
	Sub    *Expr    `parser:"| '(' @@ ')'"`
}

// List is a list of config-time values: a literal `[a, b]` or a
// comprehension `[EXPR for x in LIST]` (a none LIST gives none).
type List struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Elems  []*Expr `parser:"'[' ( @@ ( ',' @@ )* ','? )?"`
	Var    string  `parser:"( 'for' @Ident"`
	Over   *Expr   `parser:"  'in' @@ )? ']'"`
}

// Call is a primitive or block call with positional and keyword arguments.
// `super.NAME(...)`, inside a block of a family that extends another, calls
// block NAME as the parent family defines it (Hugging Face's super()).
type Call struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Super  bool   `parser:"( @'super' '.' )?"`
	Name   string `parser:"@Ident '('"`
	Args   []*Arg `parser:"( @@ ( ',' @@ )* ','? )? ')'"`
}

// Arg is one call argument, positional (`x`) or keyword (`eps: 1e-6`).
type Arg struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string `parser:"( @Ident ':' )?"`
	Value  *Expr  `parser:"@@"`
}

// Path is a dotted name: a local binding, a config field (with dict keys,
// `rope_parameters.rope_theta`) or a weight module (`self_attn.q_proj`,
// `model.layers.{i}`).
type Path struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Segs   []*Seg `parser:"@@ ( '.' @@ )*"`
}

// Seg is one segment of a Path: a name, a literal index or `{expr}`.
type Seg struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string `parser:"@Ident"`
	Num    *int64 `parser:"| @Int"`
	Index  *Expr  `parser:"| '{' @@ '}'"`
}
