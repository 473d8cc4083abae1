package dsl_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/dsl/ir"
	"github.com/archc/archc/lower"
)

const parentSrc = `arch base {
  match model_type "base"
  config {
    vocab_size:  int
    hidden_size: int
    eps:         float = 1e-6
  }
  block norm(x, w) { return rms_norm(x, w, eps: eps) }
  block head(x) { return linear(norm(x, model.norm), lm_head, vocab_size) }
  x = embedding(tokens, model.embed_tokens, vocab_size, hidden_size)
  for i in range(1) scope model.layers.{i} {}
  logits = head(x)
}
`

const childSrc = `arch child extends base {
  match model_type "child"
  config {
    eps:   float = 1e-5
    extra: int   = 3
  }
  block norm(x, w) { return rms_norm_1p(x, w, eps: eps) }
}
`

// lookupIn is dsl.Resolve's parent lookup over files (read at each call,
// so a test may change files after taking it).
func lookupIn(files map[string]*dsl.File) func(string) (*dsl.File, error) {
	return func(name string) (*dsl.File, error) {
		if f, ok := files[name]; ok {
			return f, nil
		}
		return nil, fmt.Errorf("no family %q", name)
	}
}

func parseOrFatal(t *testing.T, name, src string) *dsl.File {
	t.Helper()
	f, err := dsl.Parse(name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestResolveExtends(t *testing.T) {
	parent := parseOrFatal(t, "base.arch", parentSrc)
	child := parseOrFatal(t, "child.arch", childSrc)
	files := map[string]*dsl.File{"base": parent}
	lookup := lookupIn(files)
	f, err := dsl.Resolve(child, lookup)
	if err != nil {
		t.Fatal(err)
	}
	if errs := dsl.Check(f, lower.Registry{}); errs != nil {
		t.Fatalf("merged file does not check: %v", errs)
	}
	if got := dsl.ModelTypes(f); len(got) != 1 || got[0] != "child" {
		t.Errorf("match clauses = %v, want only the child's", got)
	}
	cfg, err := dsl.EvalConfig(f, map[string]any{"vocab_size": int64(16), "hidden_size": int64(8)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg["eps"] != 1e-5 || cfg["extra"] != int64(3) {
		t.Errorf("config = %v, want the child's eps default and its new field", cfg)
	}
	g, err := dsl.Build(f, cfg, lower.Registry{})
	if err != nil {
		t.Fatal(err)
	}
	var prims []string
	for _, n := range g.Nodes {
		prims = append(prims, n.Prim)
	}
	if got := strings.Join(prims, " "); got != "tokens embedding rms_norm_1p linear" {
		t.Errorf("nodes = %q: the parent's dataflow must call the child's norm block", got)
	}

	// Errors: an unknown parent and a cycle.
	orphan := parseOrFatal(t, "orphan.arch", strings.Replace(childSrc, "extends base", "extends nobody", 1))
	if _, err := dsl.Resolve(orphan, lookup); err == nil || !strings.Contains(err.Error(), `orphan.arch:1:1: arch child extends nobody`) {
		t.Errorf("unknown parent: got %v", err)
	}
	files["base"] = parseOrFatal(t, "base.arch", strings.Replace(parentSrc, "arch base {", "arch base extends child {", 1))
	files["child"] = child
	if _, err := dsl.Resolve(child, lookup); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("cycle: got %v", err)
	}
}

func TestParseNestingLimit(t *testing.T) {
	src := "arch deep {\n  logits = " + strings.Repeat("(", 300) + "x" + strings.Repeat(")", 300) + "\n}\n"
	_, err := dsl.Parse("deep.arch", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "deep.arch:2:") || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("got %v, want a positioned nesting error", err)
	}
}

// grandchildSrc overrides norm again and reaches the child's version with
// super, which reaches the base's: each super call goes one family up.
const grandchildSrc = `arch grandchild extends child {
  match model_type "grandchild"
  block norm(x, w) { return super.norm(x, w) * 2.0 }
}
`

// TestSuper builds a chain of overrides through super and checks the
// nodes: the grandchild's norm scales the child's (rms_norm_1p), whose own
// super would be the base's rms_norm.
func TestSuper(t *testing.T) {
	files := map[string]*dsl.File{
		"base":  parseOrFatal(t, "base.arch", parentSrc),
		"child": parseOrFatal(t, "child.arch", strings.Replace(childSrc, "rms_norm_1p(x, w, eps: eps)", "rms_norm_1p(super.norm(x, w), w, eps: eps)", 1)),
	}
	lookup := lookupIn(files)
	f, err := dsl.Resolve(parseOrFatal(t, "grandchild.arch", grandchildSrc), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if errs := dsl.Check(f, lower.Registry{}); errs != nil {
		t.Fatalf("check: %v", errs)
	}
	cfg, err := dsl.EvalConfig(f, map[string]any{"vocab_size": int64(16), "hidden_size": int64(8)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := dsl.Build(f, cfg, lower.Registry{})
	if err != nil {
		t.Fatal(err)
	}
	var prims []string
	for _, n := range g.Nodes {
		prims = append(prims, n.Prim)
	}
	if got, want := strings.Join(prims, " "), "tokens embedding rms_norm rms_norm_1p scale linear"; got != want {
		t.Errorf("nodes = %q, want %q (grandchild scale over child rms_norm_1p over base rms_norm)", got, want)
	}
	// The weight the base's norm reads carries the position where the
	// base's head block names it.
	for _, w := range g.Weights {
		if w.Name == "model.norm.weight" && (w.Pos.Filename != "base.arch" || w.Pos.Line != 9) {
			t.Errorf("model.norm.weight at %v, want base.arch:9", w.Pos)
		}
	}
}

// TestSuperGemma3 rewrites gemma3's q/k projections, norms over
// super.query and super.key (gemma2's, which are llama's, over llama's
// declared modules), as the full lines they stand for and checks that the
// graph equals the built-in gemma3's.
func TestSuperGemma3(t *testing.T) {
	src, err := os.ReadFile("../archs/gemma3.arch")
	if err != nil {
		t.Fatal(err)
	}
	diff := string(src)
	for _, kv := range [][2]string{
		{"query(h) { return norm(super.query(h), self_attn.q_norm) }",
			"query(h) { return norm(heads(linear(h, self_attn.q_proj, num_attention_heads * head_dim, bias: attention_bias), num_attention_heads), self_attn.q_norm) }"},
		{"key(h)   { return norm(super.key(h), self_attn.k_norm) }",
			"key(h)   { return norm(heads(linear(h, self_attn.k_proj, num_key_value_heads * head_dim, bias: attention_bias), num_key_value_heads), self_attn.k_norm) }"},
	} {
		if !strings.Contains(diff, kv[0]) {
			t.Fatalf("archs/gemma3.arch no longer holds %q; update the test", kv[0])
		}
		diff = strings.Replace(diff, kv[0], kv[1], 1)
	}
	raw, err := dsl.DecodeConfig([]byte(`{"model_type": "gemma3_text", "vocab_size": 32, "hidden_size": 16,
		"intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 1,
		"head_dim": 8, "sliding_window": 4, "query_pre_attn_scalar": 8}`))
	if err != nil {
		t.Fatal(err)
	}
	build := func(name, src string) *ir.Graph {
		t.Helper()
		f, err := dsl.Resolve(parseOrFatal(t, name, src), builtinFamily)
		if err != nil {
			t.Fatal(err)
		}
		if errs := dsl.Check(f, lower.Registry{}); errs != nil {
			t.Fatalf("%s: %v", name, errs)
		}
		cfg, err := dsl.EvalConfig(f, raw)
		if err != nil {
			t.Fatal(err)
		}
		g, err := dsl.Build(f, cfg, lower.Registry{})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	want, got := build("gemma3.arch", string(src)), build("gemma3_full.arch", diff)
	if len(got.Nodes) != len(want.Nodes) {
		t.Fatalf("%d nodes, want %d", len(got.Nodes), len(want.Nodes))
	}
	for i, n := range got.Nodes {
		w := want.Nodes[i]
		if n.Prim != w.Prim || n.Module != w.Module || n.Type.String() != w.Type.String() || fmt.Sprint(n.Attrs) != fmt.Sprint(w.Attrs) || len(n.Args) != len(w.Args) {
			t.Fatalf("node %d: %s %s %v %s, want %s %s %v %s", i, n.Prim, n.Module, n.Attrs, n.Type, w.Prim, w.Module, w.Attrs, w.Type)
		}
		for j := range n.Args {
			if n.Args[j].ID != w.Args[j].ID {
				t.Fatalf("node %d (%s): argument %d is %%%d, want %%%d", i, n.Prim, j, n.Args[j].ID, w.Args[j].ID)
			}
		}
	}
	if fmt.Sprint(weightNames(got)) != fmt.Sprint(weightNames(want)) {
		t.Errorf("weights %v, want %v", weightNames(got), weightNames(want))
	}
}

func weightNames(g *ir.Graph) []string {
	var out []string
	for _, w := range g.Weights {
		out = append(out, fmt.Sprint(w.Name, w.Shape))
	}
	return out
}

// TestBuildUnboundName: Build on an unchecked file reports a name bound
// nowhere, outside a weight position, instead of reading it as a weight.
func TestBuildUnboundName(t *testing.T) {
	f := parseOrFatal(t, "typo.arch", strings.Replace(parentSrc, "linear(norm(x, model.norm), lm_head, vocab_size)", "linear(norm(x, model.norm), lm_head, vocab_size) * scal", 1))
	cfg, err := dsl.EvalConfig(f, map[string]any{"vocab_size": int64(16), "hidden_size": int64(8)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = dsl.Build(f, cfg, lower.Registry{})
	if err == nil || err.Error() != `typo.arch:9:77: unknown name "scal"` {
		t.Fatalf("got %v, want the unknown name at typo.arch:9:77", err)
	}
}

// TestExtendsConfigAlias: a new child field written before an override is
// evaluated before it, so the override's default can read it (a config
// spelling a field by another name, as EXAONE's num_layers), and a new
// field after every override stays at the end.
func TestExtendsConfigAlias(t *testing.T) {
	parent := parseOrFatal(t, "base.arch", parentSrc)
	child := parseOrFatal(t, "alias.arch", `arch alias extends base {
  match model_type "alias"
  config {
    d_model:     int   = none
    hidden_size: int   = d_model
    tail:        float = eps * 2
  }
}
`)
	f, err := dsl.Resolve(child, func(string) (*dsl.File, error) { return parent, nil })
	if err != nil {
		t.Fatal(err)
	}
	if errs := dsl.Check(f, lower.Registry{}); errs != nil {
		t.Fatalf("merged file does not check: %v", errs)
	}
	for _, raw := range []map[string]any{
		{"vocab_size": int64(16), "d_model": int64(8)},
		{"vocab_size": int64(16), "hidden_size": int64(8)},
	} {
		cfg, err := dsl.EvalConfig(f, raw)
		if err != nil {
			t.Fatal(err)
		}
		if cfg["hidden_size"] != int64(8) || cfg["tail"] != 2e-6 {
			t.Errorf("config.json %v: config %v, want hidden_size 8 and tail 2e-6", raw, cfg)
		}
	}
}

// TestInheritedErrorNamesFamily: a build error in a block the family
// inherits points at the parent's line and names the family and its file.
func TestInheritedErrorNamesFamily(t *testing.T) {
	parent := parseOrFatal(t, "base.arch", parentSrc)
	child := parseOrFatal(t, "child.arch", childSrc)
	f, err := dsl.Resolve(child, func(string) (*dsl.File, error) { return parent, nil })
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"vocab_size": "many", "hidden_size": int64(4), "eps": 1e-5, "extra": int64(3)}
	_, err = dsl.Build(f, cfg, lower.Registry{})
	want := `base.arch:10:7: embedding: `
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "(building arch child of child.arch, which inherits this code)") {
		t.Fatalf("got %v; want an error at %s... naming child.arch", err, want)
	}
}

// TestResolveOwnDuplicates: a block or config field that a child declares
// twice is an error at the second, naming the first (merging by name would
// otherwise keep one silently).
func TestResolveOwnDuplicates(t *testing.T) {
	base := parseOrFatal(t, "base.arch", parentSrc)
	lookup := func(string) (*dsl.File, error) { return base, nil }
	for _, c := range []struct{ src, want string }{
		{"arch c extends base {\n  match model_type \"c\"\n  block norm(x, w) { return x }\n  block norm(x, w) { return w }\n}\n",
			`c.arch:4:3: block "norm" declared twice (first at c.arch:3:3)`},
		{"arch c extends base {\n  match model_type \"c\"\n  config {\n    eps: float = 1e-5\n    eps: float = 1e-4\n  }\n}\n",
			`c.arch:5:5: config field "eps" declared twice (first at c.arch:4:5)`},
	} {
		_, err := dsl.Resolve(parseOrFatal(t, "c.arch", c.src), lookup)
		if err == nil || err.Error() != c.want {
			t.Errorf("Resolve = %v, want %s", err, c.want)
		}
	}
}

// mixinSrc is written over base: it scales the head's input through
// super and adds a config field.
const mixinSrc = `arch scaled extends base {
  match model_type "scaled"
  config {
    factor: float = 2.0
  }
  block norm(x, w) { return super.norm(x, w) * factor }
}
`

// TestResolveWith applies a mixin written over base to child (which
// extends base): its block lands over the child's, its super call reaches
// the child's norm, its match clause is not taken; and refuses mixins
// written against a family outside the chain, mixins with mixins, and
// unknown names.
func TestResolveWith(t *testing.T) {
	files := map[string]*dsl.File{
		"base":   parseOrFatal(t, "base.arch", parentSrc),
		"child":  parseOrFatal(t, "child.arch", childSrc),
		"scaled": parseOrFatal(t, "scaled.arch", mixinSrc),
	}
	lookup := lookupIn(files)
	const src = "arch both extends child with scaled {\n  match model_type \"both\"\n}\n"
	f, err := dsl.Resolve(parseOrFatal(t, "both.arch", src), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if errs := dsl.Check(f, lower.Registry{}); errs != nil {
		t.Fatalf("check: %v", errs)
	}
	if got := dsl.ModelTypes(f); len(got) != 1 || got[0] != "both" {
		t.Errorf("match clauses = %v, want only the family's own", got)
	}
	cfg, err := dsl.EvalConfig(f, map[string]any{"vocab_size": int64(16), "hidden_size": int64(8)})
	if err != nil {
		t.Fatal(err)
	}
	if cfg["factor"] != 2.0 || cfg["eps"] != 1e-5 {
		t.Errorf("config = %v, want the mixin's factor and the child's eps", cfg)
	}
	g, err := dsl.Build(f, cfg, lower.Registry{})
	if err != nil {
		t.Fatal(err)
	}
	var prims []string
	for _, n := range g.Nodes {
		prims = append(prims, n.Prim)
	}
	if got, want := strings.Join(prims, " "), "tokens embedding rms_norm_1p scale linear"; got != want {
		t.Errorf("nodes = %q, want %q (the mixin's scale over the child's rms_norm_1p)", got, want)
	}
	// A mixin with a mixin of its own brings it: nested (with scaled) is
	// scaled's declarations, then nested's.
	files["nested"] = parseOrFatal(t, "nested.arch", "arch nested extends base with scaled {}")
	nested, err := dsl.Resolve(parseOrFatal(t, "n.arch", "arch n extends child with nested {\n  match model_type \"n\"\n}\n"), lookup)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := dsl.EvalConfig(nested, map[string]any{"vocab_size": int64(16), "hidden_size": int64(8)}); err != nil || cfg["factor"] != 2.0 {
		t.Errorf("with nested: config %v, %v; want scaled's factor 2 through nested", cfg, err)
	}
	if out, err := dsl.Format("both.arch", []byte("arch   both extends child   with scaled {\n}\n")); err != nil || !strings.HasPrefix(string(out), "arch both extends child with scaled {") {
		t.Errorf("format: %q, %v", out, err)
	}

	for _, c := range []struct{ src, want string }{
		{"arch x extends child with base {}", "base is already in the extends chain"},
		{"arch x extends child with nobody {}", `arch x with nobody: no family "nobody"`},
		{"arch x extends child with other {}", "other is written over both, which is not child or one of its ancestors"},
		{"arch x extends child with loop1 {}", "mixins that mix each other in (a cycle): x with loop1 with loop2 with loop1"},
	} {
		files["other"] = parseOrFatal(t, "other.arch", "arch other extends both {}")
		files["loop1"] = parseOrFatal(t, "loop1.arch", "arch loop1 extends base with loop2 {}")
		files["loop2"] = parseOrFatal(t, "loop2.arch", "arch loop2 extends base with loop1 {}")
		files["both"] = parseOrFatal(t, "both.arch", src)
		_, err := dsl.Resolve(parseOrFatal(t, "x.arch", c.src), lookup)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "x.arch:1:1") {
			t.Errorf("%s: got %v, want x.arch:1:1 ... %q", c.src, err, c.want)
		}
	}
}

// TestMixinWithoutMatch: a family that extends another and has no match
// clause of its own checks clean and matches no config (a mixin, as
// qwen3_vl_images); a family that extends none still needs one.
func TestMixinWithoutMatch(t *testing.T) {
	files := map[string]*dsl.File{"base": parseOrFatal(t, "base.arch", parentSrc)}
	mixin := parseOrFatal(t, "mixin.arch", `arch mixin extends base {
  block norm(x, w) { return rms_norm_1p(x, w, eps: eps) }
}
`)
	r, err := dsl.Resolve(mixin, lookupIn(files))
	if err != nil {
		t.Fatal(err)
	}
	if errs := dsl.Check(r, lower.Registry{}); len(errs) > 0 {
		t.Fatalf("a mixin without match: %v", errs)
	}
	if got := dsl.ModelTypes(r); len(got) != 0 {
		t.Errorf("a mixin without match matches %v, want none", got)
	}
	alone := parseOrFatal(t, "alone.arch", strings.Replace(parentSrc, "  match model_type \"base\"\n", "", 1))
	errs := dsl.Check(alone, lower.Registry{})
	if len(errs) == 0 || !strings.Contains(errs[0].Error(), "has no match clause") {
		t.Errorf("a family that extends none without match: %v, want 'has no match clause'", errs)
	}
}

// TestEncoderAmend: an encoder written without inputs in a child amends
// the parent's encoder of that name (config defaults and blocks by name,
// the parent's header and statements kept); one with a header but no
// inputs is a parse error naming both ways to write it.
func TestEncoderAmend(t *testing.T) {
	const towerSrc = `arch tower extends base {
  match model_type "tower"
  config {
    image_token_id: int = 5
  }
  encoder image(pixels: [3, size, size]) in vision_config scope vision as vision {
    config {
      size:        int = 8
      hidden_size: int = 4
      eps:         float = 1e-6
    }
    block norm(x) { return layer_norm(x, vision.norm, eps: eps) }
    image = norm(patch_embed(pixels, vision.patch, 4, hidden_size))
  }
  x = masked_scatter(embedding(tokens, model.embed_tokens, vocab_size, hidden_size), tokens == image_token_id, image)
  for i in range(1) scope model.layers.{i} {}
  logits = head(x)
}
`
	files := map[string]*dsl.File{"base": parseOrFatal(t, "base.arch", parentSrc), "tower": parseOrFatal(t, "tower.arch", towerSrc)}
	child := parseOrFatal(t, "child.arch", `arch child extends tower {
  match model_type "child"
  encoder image {
    config {
      eps: float = 1e-5
    }
  }
}
`)
	r, err := dsl.Resolve(child, lookupIn(files))
	if err != nil {
		t.Fatal(err)
	}
	if errs := dsl.Check(r, lower.Registry{}); len(errs) > 0 {
		t.Fatalf("an amended encoder: %v", errs)
	}
	encs := dsl.Encoders(r)
	if len(encs) != 1 || dsl.EncoderKey(encs[0]) != "vision_config" {
		t.Fatalf("encoders %d, key %q: want the parent's one, in vision_config", len(encs), dsl.EncoderKey(encs[0]))
	}
	cfg, err := dsl.EvalConfig(encs[0], map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg["eps"] != 1e-5 || cfg["size"] != int64(8) {
		t.Errorf("amended config eps %v size %v, want the child's 1e-05 and the parent's 8", cfg["eps"], cfg["size"])
	}
	_, err = dsl.Parse("bad.arch", []byte(`arch bad extends tower {
  match model_type "bad"
  encoder image in vision_config {
  }
}
`))
	if err == nil || !strings.Contains(err.Error(), "an encoder without inputs amends the inherited encoder of that name and takes no header") {
		t.Errorf("a header without inputs: %v", err)
	}
}
