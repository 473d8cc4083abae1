// Package ir is archc's typed dataflow IR: a model graph for one concrete
// config, with two symbolic dimensions (Batch and Seq) that each graph kind
// (prefill, decode) binds when package lower instantiates it.
//
// A Graph is built by dsl.Build from a checked .arch file and a config; every
// node has been shape-checked by its primitive's Infer rule before lowering.
package ir

import (
	"fmt"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// Dim is one dimension: a concrete size (>= 0) or one of the symbols.
type Dim int64

const (
	// Batch is the number of sequences in a call (1 for prefill).
	Batch Dim = -1
	// Seq is the number of new tokens per sequence in a call (1 for decode).
	Seq Dim = -2
)

func (d Dim) String() string {
	switch d {
	case Batch:
		return "batch"
	case Seq:
		return "seq"
	}
	return fmt.Sprint(int64(d))
}

// Shape is a tensor shape, outermost dimension first.
type Shape []Dim

func (s Shape) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Equal reports whether two shapes are identical (symbols equal only to themselves).
func (s Shape) Equal(o Shape) bool {
	if len(s) != len(o) {
		return false
	}
	for i := range s {
		if s[i] != o[i] {
			return false
		}
	}
	return true
}

// DType is an element type, spelled as in MLIR ("f32", "i32", ...).
type DType string

// Element types used by the IR. Activations are f32 (DESIGN §4: HF's fp32 path).
const (
	F32  DType = "f32"
	I32  DType = "i32"
	Bool DType = "i1" // masks: comparisons of tensors, the condition of where
)

// Type is a tensor type.
type Type struct {
	Shape Shape
	DType DType
}

func (t Type) String() string { return t.Shape.String() + string(t.DType) }

// Weight is one checkpoint tensor a node reads, by its checkpoint name
// (e.g. "model.layers.0.self_attn.q_proj.weight"), with the shape the config
// implies and the position of the .arch path that named its module (where a
// missing or mis-shaped tensor is reported). Its stored dtype comes from
// the checkpoint.
type Weight struct {
	Name  string
	Shape []int64
	Pos   lexer.Position
	// Parts, when set, are the checkpoint tensors a stacked weight is made
	// of where the checkpoint does not hold Name itself: Shape[0] tensors of
	// shape Shape[1:], stacked along a new first axis at load (an MoE
	// layer's per-expert projections, <experts>.<e>.w1.weight, as
	// <experts>.w1.weight [experts, rows, cols]).
	Parts []string
}

// Errorf returns an error about the weight, prefixed with the .arch
// position that declared it when it has one (`llama.arch:38:43: ...`);
// format may wrap an error with %w.
func (w Weight) Errorf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if w.Pos.Line == 0 {
		return err
	}
	return fmt.Errorf("%s: %w", w.Pos, err)
}

// Node is one primitive application.
type Node struct {
	ID   int     // index in Graph.Nodes
	Prim string  // primitive name, e.g. "rms_norm"
	Args []*Node // tensor operands, in the primitive's parameter order
	// Module is the weight module path for primitives that read weights
	// (e.g. "model.layers.0.self_attn.q_proj"), else "".
	Module string
	// Attrs are the scalar and keyword arguments as the .arch evaluated
	// them (int64, float64, bool, string, []any, map[string]any, nil), by
	// parameter name; `archc ir` prints them. Lowerings do not read them:
	// they read Decoded.
	Attrs map[string]any
	// Decoded is the primitive's typed attributes (package lower's
	// <Prim>Attrs struct, generated from its primitive table), decoded
	// from Attrs and validated once by the Infer rule; nil for a
	// primitive without attributes.
	Decoded any
	Weights []Weight // filled by the primitive's Infer rule
	// States is the per-sequence state the node reads and writes, filled
	// by the primitive's Infer rule (see State); nil for a stateless
	// primitive. Attention declares its KV cache here too ("keys",
	// "values"); Primitive.Cache and Site number its sites.
	States []State
	// StateFrom, when set, is the earlier node (same primitive, an
	// earlier decoder layer) whose per-sequence state this node reads
	// instead of owning one: it declares no States, writes nothing, and
	// reads what StateFrom's node wrote, this call's positions included
	// (KV sharing across layers: Gemma 4's num_kv_shared_layers). The
	// builder sets it, before Infer, from the primitive's ShareState
	// attribute (a decoder-layer index); nil: the node's own state.
	StateFrom *Node
	Type      Type // result type, filled by Infer
	Layer     int  // decoder layer index, or -1 outside the layer loop
	// Site is the attention site index (0, 1, ...) for nodes that own a KV
	// cache; -1 otherwise.
	Site int
	Name string         // hierarchical name, e.g. "layers.3/q"
	Pos  lexer.Position // .arch source position
}

// Graph is a model's dataflow for one config. Nodes are in topological
// (source) order. Nodes at index >= HeadStart run after the decoder layers
// and only on the positions whose logits are returned.
type Graph struct {
	Arch      string  // family name, e.g. "llama"
	File      string  // .arch file name, for locations
	Tokens    *Node   // the graph input: token ids [Batch, Seq] i32
	Nodes     []*Node // every node including Tokens, topologically ordered
	HeadStart int
	Logits    *Node    // the output: [Batch, Seq, vocab] f32 before position selection
	Weights   []Weight // every weight the graph reads, in first-use order (a decoder's: its encoders' too, after its own)
	Sites     int      // number of attention sites (KV caches)

	// Inputs are a decoder's graph inputs beside Tokens: one per encoder,
	// Prim "encoded", named like it, [Batch, Seq, width] f32 — the
	// encoder's rows placed at the positions they replace (a prefill's
	// argument; see package lower).
	Inputs []*Node
	// Encoders are the encoder graphs the Inputs come from, in order.
	Encoders []*Graph
	// Encoder, on an encoder's own graph, is its name ("image"): Tokens
	// is then its first input (one tile [1, C, H, W] f32, Prim "pixels"),
	// Inputs the others (Prim "pixels" f32 or "index" i32, [1, dims...])
	// and Logits its output, [1, N, width] f32. "" on a decoder.
	Encoder string
	// Size, on an encoder with a variable size (.arch `encoder
	// image[patches]`), is the size this graph was built at, and Sizes the
	// encoder built at each size the module compiles, ascending (the
	// decoder's Encoders hold the largest, whose Sizes lists them all); 0
	// and nil for an encoder of fixed shapes.
	Size  int64
	Sizes []*Graph
	// MTP is the family's multi-token-prediction module (the .arch's mtp
	// item), nil without one: the nodes from MTP.Start on, which prefill,
	// decode and verify do not run.
	MTP *MTP
	// MTPErr is why the family's MTP module could not be built for this
	// config (MTP is then nil and the graph is as without one).
	MTPErr error
}

// MTP is a decoder graph's multi-token-prediction module: Nodes[Start:]
// compute MTP logits [Batch, Seq, vocab] (Logits) at each position t from
// the target's hidden state h_t (Hidden, a node before the head: the last
// decoder layer's output) and Tokens, which the module's entry point binds
// to the token at t+1 of each position; its layer (Layer, a decoder-layer
// index past the model's) owns a KV cache of its own.
type MTP struct {
	Start  int
	Hidden *Node
	Logits *Node
	// Next, when the module binds mtp_hidden, is its own output hidden
	// state [Batch, Seq, hidden] (before its head's norm): a chained
	// draft feeds it back as the hidden state of the next position, as
	// vLLM runs one MTP layer for several draft tokens. Nil: one draft
	// token per step.
	Next *Node
	// State, when the module binds mtp_state, is the node of its body
	// that holds the target's hidden state as the module reads it (DeepSeek's
	// and Qwen3-Next's: after the main model's final norm): a chained draft
	// replaces this node's row, not Hidden's, with Next. Nil: Hidden's.
	State   *Node
	Layer   int
	Sites   int      // the graph's attention sites before the module's
	Weights []Weight // the weights only the module reads, in first-use order
}

// WithoutMTP returns g without its MTP module (g itself when it has
// none): the nodes, weights and attention sites before it, as the graph
// would be had the family no mtp item.
func (g *Graph) WithoutMTP() *Graph {
	if g.MTP == nil {
		return g
	}
	c := *g
	c.Nodes = g.Nodes[:g.MTP.Start]
	c.Sites = g.MTP.Sites
	only := map[string]bool{}
	for _, w := range g.MTP.Weights {
		only[w.Name] = true
	}
	c.Weights = nil
	for _, w := range g.Weights {
		if !only[w.Name] {
			c.Weights = append(c.Weights, w)
		}
	}
	c.MTP = nil
	return &c
}

// StateKind is how a per-sequence state relates to the sequence's
// positions (DESIGN §4: state is one concept).
type StateKind int

// State kinds.
const (
	// KVCache grows with tokens: one row per position, up to max_len;
	// Shape is one position's row (attention's keys or values,
	// [kv_heads, width]).
	KVCache StateKind = iota
	// Window is the last k−1 inputs of a causal convolution,
	// [k−1, channels] f32, replaced by every call.
	Window
	// Recurrent is a fixed-size recurrent state (a Mamba ssm_state
	// [d_inner, d_state], a DeltaNet matrix) in f32, replaced by every call.
	Recurrent
)

func (k StateKind) String() string {
	return [...]string{"kv_cache", "window", "recurrent"}[k]
}

// State is one per-sequence state a node reads and writes: its kind, a
// name unique within the node ("conv", "ssm") and its shape for one
// sequence (one slot), f32. A sequence starting at position 0 reads a zero
// state; each call reads the state its slot holds after the tokens before
// the call's first position and writes the state after its last real token
// (package lower's slot contract).
type State struct {
	Kind  StateKind
	Name  string
	Shape []int64
}

// Param is one parameter of a primitive's signature.
type Param struct {
	Name     string
	Kind     Kind
	Optional bool // may be omitted; Infer sees a missing attr as absent (nil)
}

// Kind is the kind of a primitive parameter.
type Kind int

// Parameter kinds.
const (
	Tensor Kind = iota // an IR value
	Module             // a weight module path
	Scalar             // a config-time value (int, float, bool, string, dict, none)
)

func (k Kind) String() string {
	return [...]string{"tensor", "weight module", "scalar"}[k]
}

// Primitive is what the IR builder needs to know about a primitive: its
// signature and its shape rule. Package lower supplies the table.
type Primitive struct {
	Name   string
	Params []Param
	// Infer checks the node's operands and attributes and fills Type and
	// Weights. cfg gives nothing; all it needs is on the node.
	Infer func(n *Node) error
	// Cache reports whether the primitive owns a KV cache site.
	Cache bool
	// ShareState names the primitive's int attribute that makes a call
	// share an earlier layer's state (attention's kv_layer): the builder
	// links a call that gives it to the node of the same primitive in
	// that decoder layer (Node.StateFrom); "" for none.
	ShareState string
}

// Registry looks primitives up by name.
type Registry interface {
	Primitive(name string) (*Primitive, bool)
	Names() []string
}
