package dsl_test

import (
	"strings"
	"testing"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/lower"
)

// shareSrc is a three-layer family whose layer i attends with its own keys
// and values when src[i] is none, else over layer src[i]'s KV cache
// (attention's kv_layer, the primitive's share attribute). ATTN replaces
// the shared call in the error cases.
const shareSrc = `arch share {
  match model_type "share"
  config {
    src: list
  }
  block kv(x) { return heads(linear(x, k_proj, 8), 2) }
  x = embedding(tokens, model.embed_tokens, 16, 8)
  for i in range(3) scope model.layers.{i} {
    q = heads(linear(x, q_proj, 8), 2)
    a = src[i] == none ? attention(q, kv(x), heads(linear(x, v_proj, 8), 2)) : ATTN
    x = x + linear(a, o_proj, 8)
  }
  logits = linear(x, lm_head, 16)
}
`

func buildShare(t *testing.T, attn string, src []any) (*ir.Graph, error) {
	t.Helper()
	f := parseOrFatal(t, "share.arch", strings.Replace(shareSrc, "ATTN", attn, 1))
	if errs := dsl.Check(f, lower.Registry{}); errs != nil {
		t.Fatalf("check: %v", errs)
	}
	cfg, err := dsl.EvalConfig(f, map[string]any{"src": src})
	if err != nil {
		t.Fatal(err)
	}
	return dsl.Build(f, cfg, lower.Registry{})
}

// TestBuildSharedState: a call with kv_layer j is linked to the attention
// node of layer j that owns its cache (following j's own link), declares
// no state and takes no site; the graph's KV bytes count the owners only.
func TestBuildSharedState(t *testing.T) {
	g, err := buildShare(t, "attention(q, kv_layer: src[i])", []any{nil, int64(0), int64(1)})
	if err != nil {
		t.Fatal(err)
	}
	var attn []*ir.Node
	for _, n := range g.Nodes {
		if n.Prim == "attention" {
			attn = append(attn, n)
		}
	}
	if len(attn) != 3 {
		t.Fatalf("%d attention nodes, want 3", len(attn))
	}
	if attn[0].StateFrom != nil || len(attn[0].States) != 2 || attn[0].Site != 0 {
		t.Errorf("layer 0 owns its cache: state_from %v, %d states, site %d", attn[0].StateFrom, len(attn[0].States), attn[0].Site)
	}
	for _, n := range attn[1:] {
		if n.StateFrom != attn[0] || n.States != nil || n.Site != -1 {
			t.Errorf("layer %d: state_from %v, states %v, site %d; want layer 0's node, none, -1", n.Layer, n.StateFrom, n.States, n.Site)
		}
		if n.Type.String() != "[batch, seq, 8]f32" {
			t.Errorf("layer %d: type %s", n.Layer, n.Type)
		}
	}
	if g.Sites != 1 {
		t.Errorf("sites %d, want 1", g.Sites)
	}
	if got, want := lower.KVBytesPerToken(g), int64(2*2*4*4); got != want {
		t.Errorf("KV bytes per token %d, want %d (one layer's keys and values)", got, want)
	}
	text, err := g.Format(ir.FormatOptions{})
	if err != nil || !strings.Contains(text, "state_from=%") {
		t.Errorf("archc ir shows no state_from: %v", err)
	}
}

// TestBuildSharedStateErrors: a kv_layer that names no earlier layer with
// an attention call, or a call that gives k and v as well, or none of
// them, is an error at the call.
func TestBuildSharedStateErrors(t *testing.T) {
	for _, tc := range []struct {
		attn string
		src  []any
		want string
	}{
		{"attention(q, kv_layer: 2)", []any{nil, int64(2), nil}, "share.arch:10:80: attention: kv_layer 2: the layer shared must be an earlier one (this is layer 1)"},
		{"attention(q, kv_layer: 1)", []any{nil, int64(1), nil}, "kv_layer 1: the layer shared must be an earlier one (this is layer 1)"},
		{"attention(q, kv(x), kv(x), kv_layer: 0)", []any{nil, int64(0), nil}, "kv_layer 0 reads that layer's keys and values: give no k and v"},
		{"attention(q)", []any{nil, int64(0), nil}, "needs k and v (or kv_layer, to read an earlier layer's KV cache instead)"},
		{"attention(heads(linear(x, q_proj, 8), 4), kv_layer: 0)", []any{nil, int64(0), nil}, "does not fit layer 0's cached keys [2 kv_heads, 4]"},
		{"attention(q, kv_layer: 0.5)", []any{nil, int64(0), nil}, "kv_layer must be a decoder-layer index (an int), got 0.5"},
	} {
		_, err := buildShare(t, tc.attn, tc.src)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with src %v: got %v, want %q", tc.attn, tc.src, err, tc.want)
		}
	}
	// A layer without an attention call of its own to share.
	f := parseOrFatal(t, "share.arch", strings.Replace(strings.Replace(shareSrc, "ATTN", "attention(q, kv_layer: 0)", 1),
		"a = src[i] == none ?", "a = i == 0 ? x : src[i] == none ?", 1))
	cfg, err := dsl.EvalConfig(f, map[string]any{"src": []any{nil, nil, int64(0)}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = dsl.Build(f, cfg, lower.Registry{})
	if want := "kv_layer 0: layer 0 has no attention call whose state this one could share"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("sharing a layer without attention: got %v, want %q", err, want)
	}
}
