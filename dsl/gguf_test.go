package dsl_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/archc/archc/dsl"
	"github.com/archc/archc/lower"
)

// fakeGGUF is a GGUF file as a gguf section sees it.
type fakeGGUF struct {
	arch    string
	meta    map[string]any
	tensors map[string][]int64
}

func (f fakeGGUF) Name() string         { return "fake.gguf" }
func (f fakeGGUF) Architecture() string { return f.arch }
func (f fakeGGUF) Meta(key string) (any, bool, error) {
	if key == "broken" {
		return nil, true, errors.New("metadata broken: 18446744073709551615 is out of range")
	}
	v, ok := f.meta[key]
	return v, ok, nil
}
func (f fakeGGUF) TensorShape(name string) ([]int64, bool) {
	s, ok := f.tensors[name]
	return s, ok
}

const ggufBase = `arch gbase {
  match model_type "gbase", "gbase_alias"
  config {
    vocab_size:  int
    hidden_size: int
    heads:       int
    eps:         float = 1e-6
    window:      int   = none
    kinds:       list  = none
  }
  x = embedding(tokens, model.embed_tokens, vocab_size, hidden_size)
  for i in range(1) scope model.layers.{i} {}
  logits = linear(x, lm_head, vocab_size)

  gguf "gbase" {
    hidden_size = need("{arch}.embedding_length")
    vocab_size  = meta("{arch}.vocab_size") ?? len(meta("tokenizer.ggml.tokens")) ?? shape("token_embd.weight")[0]
    heads       = need("{arch}.head_count")
    eps         = meta("{arch}.eps")
    window      = meta("{arch}.window")
    let pattern = meta("{arch}.pattern")
    kinds       = [p ? "sliding" : "full" for p in pattern]
    rope        = dict(factor: meta("{arch}.factor"), kind: "linear")
    max_len     = meta("{arch}.context_length") ?? need("never.read")

    tensor token_embd     -> model.embed_tokens
    tensor output         -> lm_head
    tensor rope_freqs     -> none
    tensor blk.{i}.norm   -> model.layers.{i}.norm
    tensor blk.{i}.attn_q -> model.layers.{i}.q_proj

    transform "blk.*.attn_q.*": unpermute_qk(heads)
    transform "*norm.weight":   minus_one()
  }
}
`

const ggufChild = `arch gchild extends gbase {
  match model_type "gchild"
  gguf "gbase" if meta("general.name") == "child" {
    window = meta("{arch}.window") ?? 8
    extra  = heads * 2
    tensor blk.{i}.norm -> model.layers.{i}.pre_norm
    tensor blk.{i}.attn_q.bias -> model.layers.{i}.q_bias
    transform "blk.*.attn_q.*": none
    rename model.layers.{window} -> mtp.layers.0
    rename model.layers.{window}.q_proj -> mtp.fc
  }
}
`

// ggufFamilies parses and resolves ggufBase and ggufChild.
func ggufFamilies(t *testing.T) (base, child *dsl.File) {
	t.Helper()
	byName := map[string]*dsl.File{}
	var out []*dsl.File
	for _, src := range []string{ggufBase, ggufChild} {
		f, err := dsl.Parse(strings.Split(src, " ")[1]+".arch", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		byName[f.Name] = f
		out = append(out, f)
	}
	for i, f := range out {
		r, err := dsl.Resolve(f, func(n string) (*dsl.File, error) { return byName[n], nil })
		if err != nil {
			t.Fatal(err)
		}
		if errs := dsl.Check(r, lower.Registry{}); len(errs) > 0 {
			t.Fatalf("%s: %v", f.Name, errs)
		}
		out[i] = r
	}
	return out[0], out[1]
}

func TestEvalGGUF(t *testing.T) {
	base, child := ggufFamilies(t)
	src := fakeGGUF{arch: "gbase",
		meta: map[string]any{
			"gbase.embedding_length": int64(64), "gbase.head_count": int64(4), "gbase.eps": 1e-5,
			"gbase.pattern": []any{true, false}, "gbase.factor": 2.0, "tokenizer.ggml.tokens": []any{"a", "b", "c"},
			"gbase.context_length": int64(16),
		},
		tensors: map[string][]int64{"token_embd.weight": {3, 64}},
	}
	r, err := dsl.EvalGGUF(base, src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"model_type": "gbase", "hidden_size": int64(64), "vocab_size": int64(3), "heads": int64(4), "eps": 1e-5,
		"kinds": []any{"sliding", "full"}, "rope": map[string]any{"factor": 2.0, "kind": "linear"}, "max_len": int64(16),
	}
	if diff := cmp.Diff(want, r.Config); diff != "" || r.Family != "gbase" {
		t.Errorf("family %s, config (-want +got):\n%s", r.Family, diff)
	}
	// The family's config block takes the reading like a config.json.
	cfg, err := dsl.EvalConfig(base, r.Config)
	if err != nil || cfg["window"] != nil || cfg["eps"] != 1e-5 {
		t.Errorf("EvalConfig: %v, %v", cfg, err)
	}

	// The child overrides a field and a tensor row, adds a field, removes
	// a transform; its condition is its own.
	src.meta["general.name"] = "child"
	rc, err := dsl.EvalGGUF(child, src)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Config["model_type"] != "gchild" || rc.Config["window"] != int64(8) || rc.Config["extra"] != int64(8) {
		t.Errorf("child config %v", rc.Config)
	}
	for _, c := range []struct {
		r          *dsl.GGUFReading
		name, hf   string
		transforms string
		skip, ok   bool
	}{
		{r, "blk.3.attn_q.weight", "model.layers.3.q_proj.weight", "unpermute_qk[4]", false, true},
		{r, "blk.3.attn_q.bias", "model.layers.3.q_proj.bias", "unpermute_qk[4]", false, true},
		{r, "blk.0.norm.weight", "model.layers.0.norm.weight", "minus_one[]", false, true},
		{rc, "blk.0.norm.weight", "model.layers.0.pre_norm.weight", "minus_one[]", false, true},
		{rc, "blk.3.attn_q.weight", "model.layers.3.q_proj.weight", "", false, true},
		{rc, "blk.3.attn_q.bias", "model.layers.3.q_bias", "", false, true}, // a full-name row: that tensor, HF name as written
		{rc, "blk.3.attn_q.bias.bias", "", "", false, false},
		{r, "token_embd.weight", "model.embed_tokens.weight", "", false, true},
		{r, "rope_freqs.weight", "", "", true, true},
		{r, "blk.03.attn_q.weight", "", "", false, false},
		{r, "blk.3.attn_q", "model.layers.3.q_proj", "", false, true}, // no suffix: its own base name (llama.cpp's Mamba "ssm_a")
		{r, "blk.3.attn_q.scale", "", "", false, false},
		{r, "blk.99999999999.attn_q.weight", "", "", false, false},
		{r, "output_norm.weight", "", "", false, false},
		// The child's renames: the longest matching one, whole segments only.
		{rc, "blk.8.attn_q.weight", "mtp.fc.weight", "", false, true},
		{rc, "blk.8.norm.weight", "mtp.layers.0.pre_norm.weight", "minus_one[]", false, true},
		{rc, "blk.80.norm.weight", "model.layers.80.pre_norm.weight", "minus_one[]", false, true},
		{r, "blk.8.attn_q.weight", "model.layers.8.q_proj.weight", "unpermute_qk[4]", false, true},
	} {
		m, ok := c.r.Tensor(c.name)
		var trs []string
		for _, tr := range m.Transforms {
			trs = append(trs, fmt.Sprintf("%s%v", tr.Name, tr.Args))
		}
		if ok != c.ok || m.HF != c.hf || m.Skip != c.skip || strings.Join(trs, " ") != c.transforms {
			t.Errorf("%s (%s): %+v %v, want %q skip %v transforms %q ok %v", c.name, c.r.Family, m, ok, c.hf, c.skip, c.transforms, c.ok)
		}
	}
}

func TestEvalGGUFErrors(t *testing.T) {
	base, _ := ggufFamilies(t)
	good := func() map[string]any {
		return map[string]any{"gbase.embedding_length": int64(64), "gbase.head_count": int64(4), "gbase.vocab_size": int64(8)}
	}
	for _, c := range []struct {
		name string
		edit func(m map[string]any)
		want string
	}{
		{"need", func(m map[string]any) { delete(m, "gbase.head_count") }, `gbase.arch:18:19: fake.gguf has no metadata "gbase.head_count": the file does not describe a gbase model`},
		{"type", func(m map[string]any) { m["gbase.head_count"] = "four" }, `gbase.arch:18:19: fake.gguf: heads: want int, got string "four"`},
		{"per-layer", func(m map[string]any) { m["gbase.head_count"] = []any{int64(4), int64(8)} }, `heads: want int, got list [4, 8] (per-layer values, which archc does not support)`},
		{"comprehension over a non-list", func(m map[string]any) { m["gbase.pattern"] = int64(3) }, `gbase.arch:22:52: a comprehension ranges over a list, got int 3`},
		{"condition type", func(m map[string]any) { m["gbase.pattern"] = []any{"x"} }, `condition of ?: must be bool, got string "x"`},
		{"len of a number", func(m map[string]any) { delete(m, "gbase.vocab_size"); m["tokenizer.ggml.tokens"] = int64(5) }, `len needs a list, string or dict, got int 5`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := good()
			c.edit(m)
			_, err := dsl.EvalGGUF(base, fakeGGUF{arch: "gbase", meta: m})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
	t.Run("transform argument", func(t *testing.T) {
		f, err := dsl.Parse("t.arch", []byte(`arch t {
  match model_type "t"
  config { n: int }
  x = embedding(tokens, model.embed_tokens, n, n)
  for i in range(1) scope model.layers.{i} {}
  logits = linear(x, lm_head, n)
  gguf "t" {
    let heads = meta("broken") ?? 2
    transform "*": unpermute_qk(1.5)
  }
}`))
		if err != nil {
			t.Fatal(err)
		}
		_, err = dsl.EvalGGUF(f, fakeGGUF{arch: "t"})
		if err == nil || !strings.Contains(err.Error(), "t.arch:8:17: fake.gguf: metadata broken: 18446744073709551615 is out of range") {
			t.Errorf("got %v", err)
		}
		f.Items[len(f.Items)-1].GGUF.Entries = f.Items[len(f.Items)-1].GGUF.Entries[1:]
		_, err = dsl.EvalGGUF(f, fakeGGUF{arch: "t"})
		if err == nil || !strings.Contains(err.Error(), "t.arch:9:33: fake.gguf: transform unpermute_qk: argument must be an int or a list of ints (one per layer), got float 1.5") {
			t.Errorf("got %v", err)
		}
	})
}

// TestSelectGGUF: a conditional claim wins over an unconditional one for
// the same architecture; an unclaimed architecture is an error listing
// the ones the families read.
func TestSelectGGUF(t *testing.T) {
	base, child := ggufFamilies(t)
	fams := []*dsl.File{base, child}
	for _, c := range []struct {
		src  fakeGGUF
		want string
	}{
		{fakeGGUF{arch: "gbase"}, "gbase"},
		{fakeGGUF{arch: "gbase", meta: map[string]any{"general.name": "other"}}, "gbase"},
		{fakeGGUF{arch: "gbase", meta: map[string]any{"general.name": "child"}}, "gchild"},
		{fakeGGUF{arch: "mamba"}, `fake.gguf: general.architecture "mamba" is not supported (supported: gbase)`},
	} {
		f, err := dsl.SelectGGUF(fams, c.src)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = f.Name
		}
		if got != c.want {
			t.Errorf("%s %v: got %q, want %q", c.src.arch, c.src.meta, got, c.want)
		}
	}
	_, err := dsl.SelectGGUF([]*dsl.File{base, base}, fakeGGUF{arch: "gbase"})
	if err == nil || !strings.Contains(err.Error(), "claimed by several families: gbase (gbase.arch), gbase (gbase.arch)") {
		t.Errorf("two claims: %v", err)
	}
	if got := dsl.GGUFArchs(child); len(got) != 1 || got[0] != "gbase (conditional)" {
		t.Errorf("GGUFArchs(child) = %v", got)
	}
	if _, err := dsl.EvalGGUF(mustParse(t, `arch n { match model_type "n" }`), fakeGGUF{arch: "n"}); err == nil || !strings.Contains(err.Error(), "arch n has no gguf section") {
		t.Errorf("no section: %v", err)
	}
}

func mustParse(t *testing.T, src string) *dsl.File {
	t.Helper()
	f, err := dsl.Parse("in.arch", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestListExpr: list literals and comprehensions in config expressions;
// ?? evaluates its right side only when the left is none.
func TestListExpr(t *testing.T) {
	f := mustParse(t, `arch l {
  match model_type "l"
  config {
    n:     int
    types: list = [k % 2 == 0 ? "s" : "f" for k in [0, 1, n]]
    empty: list = []
    lazy:  int  = n ?? n // 0
    none_: list = [k for k in none]
  }
  x = embedding(tokens, model.embed_tokens, n, n)
  for i in range(1) scope model.layers.{i} {}
  logits = linear(x, lm_head, n)
}`)
	if errs := dsl.Check(f, lower.Registry{}); len(errs) > 0 {
		t.Fatal(errs)
	}
	cfg, err := dsl.EvalConfig(f, map[string]any{"n": int64(4)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": int64(4), "types": []any{"s", "f", "s"}, "empty": []any{}, "lazy": int64(4), "none_": nil}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

// TestGGUFLayersWithMax: layers_with lists the layers that have a tensor
// (Jamba's MoE layers), max reads a per-layer list (llama.cpp's hybrids'
// head_count_kv, 0 for the recurrent layers); both refuse what they cannot
// read, at the call.
func TestGGUFLayersWithMax(t *testing.T) {
	f := mustParse(t, `arch t {
  match model_type "t"
  config { n: int }
  x = embedding(tokens, model.embed_tokens, n, n)
  for i in range(1) scope model.layers.{i} {}
  logits = linear(x, lm_head, n)
  gguf "t" {
    moe   = layers_with("blk.{i}.ffn_gate_inp.weight")
    none_ = layers_with("blk.{i}.ffn_up_exps.weight")
    kv    = max(meta("{arch}.head_count_kv"))
    most  = max(1, 2.5, 2)
    n     = meta("{arch}.bad") == none ? 1 : max(meta("{arch}.bad"))
  }
}`)
	if errs := dsl.Check(f, lower.Registry{}); len(errs) > 0 {
		t.Fatal(errs)
	}
	src := fakeGGUF{arch: "t",
		meta:    map[string]any{"t.head_count_kv": []any{int64(0), int64(4), int64(0), int64(4)}},
		tensors: map[string][]int64{"blk.0.ffn_gate_inp.weight": {4, 8}, "blk.3.ffn_gate_inp.weight": {4, 8}, "blk.10.ffn_gate_inp.weight": {4, 8}},
	}
	r, err := dsl.EvalGGUF(f, src)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model_type": "t", "moe": []any{int64(0), int64(3), int64(10)}, "none_": []any{}, "kv": int64(4), "most": 2.5, "n": int64(1)}
	if diff := cmp.Diff(want, r.Config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	src.meta["t.bad"] = []any{"a"}
	if _, err := dsl.EvalGGUF(f, src); err == nil || !strings.Contains(err.Error(), `in.arch:12:46: max needs numbers, got string "a"`) {
		t.Errorf("max of strings: %v", err)
	}
	src.meta["t.bad"] = []any{}
	if _, err := dsl.EvalGGUF(f, src); err == nil || !strings.Contains(err.Error(), `max needs a non-empty list or some numbers`) {
		t.Errorf("max of nothing: %v", err)
	}
}

// TestGGUFValues: `tensor HF = EXPR` rows make Hugging Face tensors from
// metadata (Apertus's per-layer xIELU scalars): a list element per layer
// with {i}, a number as [1], a list as [n], none as nothing; other values
// are refused at the row's expression.
func TestGGUFValues(t *testing.T) {
	f := mustParse(t, `arch t {
  match model_type "t"
  config { n: int }
  x = embedding(tokens, model.embed_tokens, n, n)
  for i in range(1) scope model.layers.{i} {}
  logits = linear(x, lm_head, n)
  gguf "t" {
    n = 4
    tensor model.layers.{i}.act.alpha = meta("x.alpha")
    tensor model.scale                = meta("x.scale")
    tensor model.absent               = meta("x.absent")
  }
}`)
	if errs := dsl.Check(f, lower.Registry{}); len(errs) > 0 {
		t.Fatal(errs)
	}
	src := fakeGGUF{arch: "t", meta: map[string]any{"x.alpha": []any{0.5, []any{int64(1), 2.0}}, "x.scale": 3.0}}
	r, err := dsl.EvalGGUF(f, src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range r.Values {
		got = append(got, fmt.Sprintf("%s %v %v", v.HF, v.Shape, v.Data))
	}
	want := []string{"model.layers.0.act.alpha [1] [0.5]", "model.layers.1.act.alpha [2] [1 2]", "model.scale [1] [3]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	for _, c := range []struct {
		alpha any
		want  string
	}{
		{0.5, "in.arch:9:41: fake.gguf: tensor model.layers.{i}.act.alpha: a row with {i} needs a list with one element per layer, got float 0.5"},
		{[]any{"a"}, `in.arch:9:41: fake.gguf: tensor model.layers.0.act.alpha: element 0 must be a number or a list of numbers, got string "a"`},
		{[]any{[]any{}}, "tensor model.layers.0.act.alpha: element 0 is an empty list"},
	} {
		src.meta["x.alpha"] = c.alpha
		if _, err := dsl.EvalGGUF(f, src); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("alpha %v: got %v, want %q", c.alpha, err, c.want)
		}
	}
}

// TestGGUFToken: token(TEXT) is the id of TEXT in tokenizer.ggml.tokens,
// none when the vocabulary lacks it or the file has none; an encoder's
// gguf section claims and reads its own (mmproj) file.
func TestGGUFToken(t *testing.T) {
	f := mustParse(t, `arch t {
  match model_type "t"
  config { n: int  image_token_id: int = 7 }
  x = embedding(tokens, model.embed_tokens, n, n)
  for i in range(1) scope model.layers.{i} {}
  logits = linear(x, lm_head, n)
  encoder image(pixels: [3, 4, 4]) in vision_config {
    config { width: int }
    image = linear(pixels, proj, width)
    gguf "clip" if meta("clip.projector_type") == "tiny" {
      width = need("clip.vision.embedding_length")
      tensor mm.0 -> proj
    }
  }
  gguf "t" {
    n              = 4
    image_token_id = token("<image>")
    missing        = token("<video>")
  }
}`)
	if errs := dsl.Check(f, lower.Registry{}); len(errs) > 0 {
		t.Fatal(errs)
	}
	src := fakeGGUF{arch: "t", meta: map[string]any{"tokenizer.ggml.tokens": []any{"<s>", "a", "<image>"}}}
	r, err := dsl.EvalGGUF(f, src)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"model_type": "t", "n": int64(4), "image_token_id": int64(2)}, r.Config); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	delete(src.meta, "tokenizer.ggml.tokens")
	if r, err = dsl.EvalGGUF(f, src); err != nil || r.Config["image_token_id"] != nil {
		t.Errorf("no vocabulary: %v, %v", r.Config, err)
	}
	enc := dsl.Encoders(f)[0]
	mm := fakeGGUF{arch: "clip", meta: map[string]any{"clip.projector_type": "tiny", "clip.vision.embedding_length": int64(8)}}
	if ok, err := dsl.ClaimsGGUF(enc, mm); !ok || err != nil {
		t.Fatalf("the encoder does not claim its mmproj file: %v %v", ok, err)
	}
	if r, err = dsl.EvalGGUF(enc, mm); err != nil || r.Config["width"] != int64(8) {
		t.Errorf("encoder section: %v, %v", r, err)
	}
	if m, ok := r.Tensor("mm.0.weight"); !ok || m.HF != "proj.weight" {
		t.Errorf("mm.0.weight maps to %+v", m)
	}
	mm.meta["clip.projector_type"] = "other"
	if ok, _ := dsl.ClaimsGGUF(enc, mm); ok {
		t.Error("the encoder claims another projector type's file")
	}
}

// TestGGUFPerLayer: a tensor row with `for LIST` (a bool per layer) maps
// only the layers whose element is true, ahead of the row of the same GGUF
// name without one (DeciModel's attn_output: a linear attention
// replacement's weight in some layers); a transform argument given as a
// list is the element of the tensor's layer (unpermute_qk with per-layer
// key-value heads), and a tensor of a row without {i} or past the list's
// end gets no value but a reason.
func TestGGUFPerLayer(t *testing.T) {
	src := `arch t {
  match model_type "t"
  config { n: int }
  x = embedding(tokens, model.embed_tokens, n, n)
  for i in range(1) scope model.layers.{i} {}
  logits = linear(x, lm_head, n)
  gguf "t" {
    let kv = meta("{arch}.head_count_kv")
    n      = 4
    tensor token_embd          -> model.embed_tokens
    tensor blk.{i}.attn_output -> model.layers.{i}.self_attn.o_proj
    tensor blk.{i}.attn_output -> model.layers.{i}.self_attn.linear_attn for [h == 0 for h in kv]
    tensor blk.{i}.attn_k      -> model.layers.{i}.self_attn.k_proj

    transform "*attn_k*":    unpermute_qk(kv)
    transform "token_embd*": unpermute_qk(kv)
  }
}
`
	f := mustParse(t, src)
	if errs := dsl.Check(f, lower.Registry{}); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got, err := dsl.Format("in.arch", []byte(src)); err != nil || !strings.Contains(string(got), "-> model.layers.{i}.self_attn.linear_attn for [h == 0 for h in kv]\n") {
		t.Errorf("format (err %v):\n%s", err, got)
	}
	file := fakeGGUF{arch: "t", meta: map[string]any{"t.head_count_kv": []any{int64(2), int64(0), int64(1)}}}
	r, err := dsl.EvalGGUF(f, file)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"blk.0.attn_output.weight": "model.layers.0.self_attn.o_proj.weight",
		"blk.1.attn_output.weight": "model.layers.1.self_attn.linear_attn.weight",
		"blk.2.attn_output.bias":   "model.layers.2.self_attn.o_proj.bias",
	} {
		if m, ok := r.Tensor(name); !ok || m.HF != want {
			t.Errorf("%s: got %q %v, want %q", name, m.HF, ok, want)
		}
	}
	for name, want := range map[string]dsl.GGUFTransformCall{
		"blk.0.attn_k.weight": {Name: "unpermute_qk", Args: []int64{2}},
		"blk.2.attn_k.weight": {Name: "unpermute_qk", Args: []int64{1}},
		"blk.5.attn_k.weight": {Name: "unpermute_qk", Args: []int64{0}, Unresolved: "a per-layer argument of 3 elements, but the tensor is layer 5's"},
		"token_embd.weight":   {Name: "unpermute_qk", Args: []int64{0}, Unresolved: "a per-layer argument, but the tensor's row has no layer index {i}"},
	} {
		m, ok := r.Tensor(name)
		if !ok || len(m.Transforms) != 1 {
			t.Fatalf("%s: %v %+v", name, ok, m)
		}
		got := m.Transforms[0]
		got.Pos = want.Pos
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: transform (-want +got):\n%s", name, diff)
		}
	}
	file.meta["t.head_count_kv"] = []any{int64(2), "x"}
	if _, err := dsl.EvalGGUF(f, file); err == nil || !strings.Contains(err.Error(), `transform unpermute_qk: a per-layer argument must be a list of ints, element 1 is string "x"`) {
		t.Errorf("a list of strings: %v", err)
	}
}

// TestGGUFIndexedPlaceholder: a Hugging Face side `{LIST[i]}` renumbers
// the layer index (llama.cpp's v.deepstack.{block} are transformers'
// deepstack_merger_list.{k}): GGUF index b maps to LIST[b], an index
// LIST maps to -1 (or past its end) to nothing; LIST must be a field or
// let declared before the row, and a list of ints.
func TestGGUFIndexedPlaceholder(t *testing.T) {
	const head = `arch t {
  match model_type "t"
  config { n: int }
  x = embedding(tokens, model.embed_tokens, n, n)
  for i in range(1) scope model.layers.{i} {}
  logits = linear(x, lm_head, n)
  gguf "t" {
`
	f := mustParse(t, head+`    let slot = [-1, 0, -1, 1]
    tensor v.deepstack.{i}.fc1 -> visual.deepstack_merger_list.{slot[i]}.linear_fc1
  }
}`)
	if errs := dsl.Check(f, lower.Registry{}); len(errs) > 0 {
		t.Fatal(errs)
	}
	r, err := dsl.EvalGGUF(f, fakeGGUF{arch: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"v.deepstack.1.fc1.weight": "visual.deepstack_merger_list.0.linear_fc1.weight",
		"v.deepstack.3.fc1.bias": "visual.deepstack_merger_list.1.linear_fc1.bias", "v.deepstack.0.fc1.weight": "", "v.deepstack.7.fc1.weight": ""} {
		m, ok := r.Tensor(name)
		if got := m.HF; (want == "") == ok || got != want {
			t.Errorf("%s -> %q (mapped %v), want %q", name, got, ok, want)
		}
	}
	for _, c := range []struct{ rows, want string }{
		{"    tensor v.d.{i}.fc1 -> v.m.{slot[i]}.fc1\n", "slot is not a field or let of this gguf section declared before the row"},
		{"    let slot = [0]\n    tensor v.d.{i}.fc1 -> v.m.{slot[j]}.fc1\n", "the layer placeholder must be the same on both sides: {i} -> {j}"},
		{"    let slot = [0]\n    tensor v.d.{i}.fc1 -> v.m.{slot[i] + 1}.fc1\n", "or on the Hugging Face side a list indexed by it, {LIST[i]}"},
	} {
		f := mustParse(t, head+c.rows+"  }\n}")
		errs := dsl.Check(f, lower.Registry{})
		if len(errs) == 0 || !strings.Contains(errs[0].Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.rows, errs, c.want)
		}
	}
	f = mustParse(t, head+`    let slot = ["a"]
    tensor v.d.{i}.fc1 -> v.m.{slot[i]}.fc1
  }
}`)
	if _, err := dsl.EvalGGUF(f, fakeGGUF{arch: "t"}); err == nil || !strings.Contains(err.Error(), `slot[0] is string "a", want an int (-1: no tensor)`) {
		t.Errorf("a list of strings: %v", err)
	}
}

// TestGGUFSplitMinus: a split row maps each slice of a GGUF tensor's first
// dimension (none: not read) and inverts by Source; minus's argument is any
// number (Floats), and anything else is an error at the argument.
func TestGGUFSplitMinus(t *testing.T) {
	f := mustParse(t, `arch s {
  match model_type "s"
  config { n: int }
  x = embedding(tokens, model.embed_tokens, n, n)
  for i in range(1) scope model.layers.{i} {}
  logits = linear(x, lm_head, n)
  gguf "s" {
    tensor blk.{i}.mix.weight -> [model.layers.{i}.x_r, none, model.layers.{i}.x_k]
    tensor blk.{i}.norm       -> model.layers.{i}.norm
    transform "blk.*":        minus(meta("c") ?? 1.0 / 5)
  }
}`)
	r, err := dsl.EvalGGUF(f, fakeGGUF{arch: "s"})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := r.Tensor("blk.2.mix.weight")
	if !ok || m.HF != "" || !slices.Equal(m.Split, []string{"model.layers.2.x_r", "", "model.layers.2.x_k"}) || len(m.Transforms) != 1 || !slices.Equal(m.Transforms[0].Floats, []float64{0.2}) {
		t.Errorf("Tensor = %+v, %v", m, ok)
	}
	for _, c := range []struct {
		hf, gguf string
		slice    int
		ok       bool
	}{
		{"model.layers.2.x_k", "blk.2.mix.weight", 2, true},
		{"model.layers.0.norm.bias", "blk.0.norm.bias", -1, true},
		{"model.layers.0.x_v", "", -1, false},
	} {
		if g, k, ok := r.Source(c.hf); g != c.gguf || k != c.slice || ok != c.ok {
			t.Errorf("Source(%q) = %q, %d, %v; want %q, %d, %v", c.hf, g, k, ok, c.gguf, c.slice, c.ok)
		}
	}
	_, err = dsl.EvalGGUF(f, fakeGGUF{arch: "s", meta: map[string]any{"c": "x"}})
	if err == nil || !strings.Contains(err.Error(), `in.arch:10:37: fake.gguf: transform minus: c must be a number (one for every tensor the pattern matches), got string "x"`) {
		t.Errorf("got %v", err)
	}
}
