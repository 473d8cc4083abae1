package ir

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// FormatOptions choose what Graph.Format shows.
type FormatOptions struct {
	// Kind binds the symbolic dimensions as one graph kind does: "" keeps
	// batch and seq; "prefill" (one sequence, a chunk of seq tokens) sets
	// batch to 1, and seq to 1 from HeadStart on (the head runs on the
	// returned position only); "decode" (batch sequences, one token each)
	// sets seq to 1.
	Kind string
}

// Format prints the graph compactly and deterministically, the form
// `archc ir` shows and the dsl tests keep as goldens: a header, one line per
// node, then the weights with their shapes and the .arch positions of the
// paths that named them, then HeadStart, Sites and Logits.
//
//	%5 = linear(%4) module=M attrs={bias: false, out: 64} : [batch, seq, 64]f32 @llama.arch:12:7
//
// A node that reads weights shows its module, any other its hierarchical
// name (name=model.layers.0/layer/attn/query/heads: layer, enclosing block
// calls, binding, primitive); a node owning a KV cache shows site=N, one
// reading an earlier node's state state_from=%ID.
// Attribute values show their kind: floats always carry a '.' or an
// exponent, strings are quoted, dict keys are sorted. Positions name the
// .arch file by its base name. Format returns an error for an unknown Kind.
func (g *Graph) Format(opts FormatOptions) (string, error) {
	bind := func(t Type, head bool) Type { return t }
	switch opts.Kind {
	case "":
	case "prefill", "decode":
		bind = func(t Type, head bool) Type {
			s := make(Shape, len(t.Shape))
			for i, d := range t.Shape {
				switch {
				case d == Batch && opts.Kind == "prefill":
					d = 1
				case d == Seq && (opts.Kind == "decode" || head):
					d = 1
				}
				s[i] = d
			}
			return Type{Shape: s, DType: t.DType}
		}
	default:
		return "", fmt.Errorf("unknown graph kind %q (want prefill or decode)", opts.Kind)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "arch %s (%s)\n", g.Arch, g.File)
	switch opts.Kind {
	case "prefill":
		fmt.Fprintf(&b, "graph prefill: batch = 1, seq = the chunk's tokens; from %%%d on (after the layer loop) seq = 1, the returned position\n", g.HeadStart)
	case "decode":
		fmt.Fprintf(&b, "graph decode: batch = the sequences of the call, seq = 1\n")
	}
	g.formatNodes(&b, bind)
	fmt.Fprintln(&b, "weights:")
	for _, w := range g.Weights {
		fmt.Fprintf(&b, "  %s %v @%s:%d:%d\n", w.Name, w.Shape, filepath.Base(w.Pos.Filename), w.Pos.Line, w.Pos.Column)
	}
	fmt.Fprintf(&b, "head_start: %d\nsites: %d\n", g.HeadStart, g.Sites)
	if g.Logits != nil {
		fmt.Fprintf(&b, "logits: %%%d\n", g.Logits.ID)
	}
	for _, e := range g.Encoders { // concrete shapes: no kind binds them
		fmt.Fprintf(&b, "encoder %s: one tile in, its rows out (weights above)\n", e.Encoder)
		e.formatNodes(&b, func(t Type, _ bool) Type { return t })
		fmt.Fprintf(&b, "%s: %%%d\n", e.Encoder, e.Logits.ID)
	}
	return b.String(), nil
}

// formatNodes prints one line per node (see Format), bind giving each
// node's type as the graph kind binds it (head: the node is after the
// layer loop).
func (g *Graph) formatNodes(b *strings.Builder, bind func(t Type, head bool) Type) {
	for _, n := range g.Nodes {
		fmt.Fprintf(b, "%%%d = %s", n.ID, n.Prim)
		if n != g.Tokens && n.Prim != "encoded" {
			args := make([]string, len(n.Args))
			for i, a := range n.Args {
				args[i] = fmt.Sprintf("%%%d", a.ID)
			}
			fmt.Fprintf(b, "(%s)", strings.Join(args, ", "))
		}
		if n.Module != "" {
			fmt.Fprintf(b, " module=%s", n.Module)
		} else {
			fmt.Fprintf(b, " name=%s", n.Name)
		}
		if len(n.Attrs) > 0 {
			fmt.Fprintf(b, " attrs=%s", FormatValue(n.Attrs))
		}
		if n.Site >= 0 {
			fmt.Fprintf(b, " site=%d", n.Site)
		}
		if n.StateFrom != nil { // a state shared with an earlier layer's node
			fmt.Fprintf(b, " state_from=%%%d", n.StateFrom.ID)
		}
		for _, st := range n.States { // per-sequence state: state=NAME:KIND[shape] (a KV cache shows as site=)
			if st.Kind != KVCache {
				fmt.Fprintf(b, " state=%s:%s%v", st.Name, st.Kind, st.Shape)
			}
		}
		head := g.HeadStart > 0 && n.ID >= g.HeadStart && g.Encoder == ""
		fmt.Fprintf(b, " : %s @%s:%d:%d\n", bind(n.Type, head), filepath.Base(n.Pos.Filename), n.Pos.Line, n.Pos.Column)
	}
}

// FormatValue prints a config-time value (an attribute: int64, float64,
// bool, string, map[string]any, []any or nil) with its kind visible: floats
// always carry a '.' or an exponent, strings are quoted, dict keys are
// sorted, nil is none.
func FormatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "none"
	case float64:
		s := strconv.FormatFloat(v, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eIN") {
			s += ".0"
		}
		return s
	case string:
		return strconv.Quote(v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + FormatValue(v[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = FormatValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}
