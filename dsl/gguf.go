package dsl

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
)

// The gguf section of a family file says how the family reads llama.cpp's
// GGUF files (ast.go, GGUF): which general.architecture values it claims,
// how the file's metadata becomes config.json fields, which GGUF tensor is
// which Hugging Face tensor, and which shared load transforms undo the way
// llama.cpp stored a tensor. EvalGGUF evaluates it against one file (any
// GGUFSource; package formats/gguf provides the real one); the result is a
// config.json equivalent, fed to the family's config block like a real
// config.json, and a tensor map (GGUFReading.Tensor).

// GGUFSource is the GGUF file a gguf section reads.
type GGUFSource interface {
	// Name names the file in messages.
	Name() string
	// Architecture is the file's general.architecture ("llama", ...).
	Architecture() string
	// Meta returns the metadata value under key as a config-time value
	// (int64, float64, bool, string, or []any of them for an array); ok is
	// false when the key is absent; err reports a value archc cannot
	// represent.
	Meta(key string) (v any, ok bool, err error)
	// TensorShape returns the row-major (Hugging Face) shape of the tensor
	// called name in the file, and whether there is one.
	TensorShape(name string) (shape []int64, ok bool)
}

// ggufFunc is a function gguf-section expressions may call.
type ggufFunc struct {
	args int // positional arguments; -1: keyword arguments only
	eval func(s *scope, c *Call, args []any) (any, error)
}

// ggufFuncs are the functions of gguf-section expressions. A KEY is a
// metadata key in which "{arch}" stands for the file's general.architecture,
// as gguf-py's constants spell it ("{arch}.block_count").
var ggufFuncs = map[string]ggufFunc{
	"meta":       {1, ggufMeta},  // meta(KEY): the value under KEY, none when absent
	"need":       {1, ggufNeed},  // need(KEY): the value under KEY; absent is an error
	"has_tensor": {1, ggufHas},   // has_tensor(NAME): whether the file has tensor NAME
	"shape":      {1, ggufShape}, // shape(NAME): tensor NAME's row-major shape, none when absent
	// layers_with(NAME): the layer indices i, ascending, for which the file
	// has tensor NAME with its "{i}" replaced by i ("blk.{i}.ffn_gate_inp.weight":
	// the layers llama.cpp's Jamba reads as MoE, which no metadata key lists)
	"layers_with": {1, ggufLayersWith},
	// token(TEXT): the id of the token TEXT in the file's vocabulary
	// (tokenizer.ggml.tokens), none when absent: a vision-language
	// family's image placeholder ("<image>"), which llama.cpp's files
	// carry only as a token
	"token": {1, ggufToken},
}

// GGUFTransforms are the load transforms a gguf section may name, with
// their (integer) parameters. Each is implemented once, in package driver/ggufmap,
// and undoes one way llama.cpp's converter stores a tensor.
var GGUFTransforms = map[string][]string{
	"unpermute_qk":  {"heads"},                 // rows were interleaved per head for llama.cpp's rope (LlamaModel.permute): put them back
	"regroup":       {"parts", "heads"},        // the file holds a fused per-head projection's rows [parts, heads, r] that HF holds as [heads, parts, r] (GPTNeoXModel's query_key_value): put them back
	"minus_one":     nil,                       // the file stores 1 + w (Gemma's RMSNorm weights): subtract 1
	"minus":         {"c:float"},               // the file stores w + c, c a number (Plamo2Model folds PLaMo 2's norm offsets 1, 1/5, 1/5^1.5 into the weights): subtract float32(c), in float32
	"transpose":     nil,                       // the file stores the last two dimensions swapped (GptOssModel's experts): swap them back
	"interleave":    {"part", "parts"},         // the tensor is one of `parts` GGUF tensors mapped to one Hugging Face tensor: it fills HF[..., part::parts] (GptOssModel split gate_up_proj's [..., ::2] and [..., 1::2]); after transpose
	"chunk":         {"part", "parts"},         // the tensor is the rows `part` of `parts` joined along dim -2 (torch.cat; parts may differ in rows) into one Hugging Face tensor (GraniteMoeModel split input_linear [E, 2I, H] into gate and up)
	"chunk_cols":    {"part", "parts"},         // as chunk, joined along the last dimension (torch.cat(dim=-1); parts may differ in columns), after transpose (Llama4Model split gate_up_proj [E, H, 2I] into gate and up and transposed each to [E, I, H])
	"stack":         {"part", "parts", "axis"}, // the tensor is slice `part` of the new dimension `axis` of a Hugging Face tensor made of `parts` GGUF tensors of one shape (torch.stack(dim=axis)): Qwen2VLVisionModel split the Conv3d patch kernel [O, C, 2, p, p] into v.patch_embd.weight and .weight.1, [O, C, p, p] each
	"flatten":       {},                        // the Hugging Face tensor is the GGUF one (or the chunk result) with its leading dimensions merged, [a, b, c] → [a·b, c] (DeepseekV2Model split kv_b_proj per head into attn_k_b and attn_v_b)
	"reshape":       {"dims..."},               // the Hugging Face tensor is the GGUF one, same values in the same order, in shape dims (one may be -1: the rest of the elements) (MambaModel squeezed conv1d's [C, 1, K] to [C, K]; Mamba2Model stored A and D [H] as [H, 1], the gated norm [d] as [groups, d/groups])
	"channels_last": nil,                       // the file stores a Conv2d kernel [O, C, kh, kw] that the Hugging Face tensor holds as a linear over flattened [kh, kw, C] patches, [O, kh·kw·C] (LFM2VLModel viewed SigLIP2's patch_embedding [O, p·p·3] as [O, p, p, 3] and permuted it to [O, 3, p, p])
	"log_neg":       nil,                       // the file stores A = -exp(A_log) (MambaModel's ssm_a): A_log = log(-A), computed in float64 and rounded to float32
	// the Hugging Face tensor's entries [offset, offset + heads·Σsizes) along
	// dimension axis are held by the file as [parts, heads, size_p] where HF
	// holds [heads, parts, size_p] (sizes: one size for every part, or one per
	// part); applied last, to the tensor every other transform made
	// (Qwen3NextModel regroups in_proj_qkvz's per-key-head [q | k | v | z];
	// Qwen3.5's converter puts the value heads in tiled order)
	"regroup_span": {"axis", "offset", "parts", "heads", "sizes..."},
}

// variadic reports whether a transform's last parameter is taken one or
// more times ("dims...").
func variadic(params []string) bool {
	return len(params) > 0 && strings.HasSuffix(params[len(params)-1], "...")
}

// floatParam reports whether transform parameter k is a number ("NAME:float").
func floatParam(params []string, k int) bool {
	return k < len(params) && strings.HasSuffix(params[k], ":float")
}

// transformParams are a transform's parameters for messages.
func transformParams(params []string) string {
	out := make([]string, len(params))
	for i, p := range params {
		out[i] = strings.TrimSuffix(p, ":float")
	}
	return strings.Join(out, ", ")
}

func (s *scope) ggufCall(c *Call, fn ggufFunc) (any, error) {
	var args []any
	for _, a := range c.Args {
		if fn.args >= 0 && a.Name != "" {
			return nil, errorf(a.Pos, "%s takes no keyword arguments", c.Name)
		}
		if fn.args < 0 && a.Name == "" {
			return nil, errorf(a.Pos, "%s takes keyword arguments only (name: value)", c.Name)
		}
		v, err := s.expr(a.Value)
		if err != nil {
			return nil, err
		}
		args = append(args, v)
	}
	if fn.args >= 0 && len(args) != fn.args {
		return nil, errorf(c.Pos, "%s takes %d argument(s), got %d", c.Name, fn.args, len(args))
	}
	return fn.eval(s, c, args)
}

// stringArg returns args[0] as a string, or an error at the argument.
func stringArg(c *Call, args []any) (string, error) {
	k, ok := args[0].(string)
	if !ok {
		return "", errorf(c.Args[0].Pos, "%s needs a string, got %s %s", c.Name, typeName(args[0]), show(args[0]))
	}
	return k, nil
}

// metaKey expands "{arch}" in a metadata key.
func (s *scope) metaKey(c *Call, args []any) (string, error) {
	k, err := stringArg(c, args)
	return strings.ReplaceAll(k, "{arch}", s.src.Architecture()), err
}

func ggufMeta(s *scope, c *Call, args []any) (any, error) {
	key, err := s.metaKey(c, args)
	if err != nil {
		return nil, err
	}
	v, _, err := s.src.Meta(key)
	if err != nil {
		return nil, errorf(c.Pos, "%s: %v", s.src.Name(), err)
	}
	return v, nil
}

func ggufNeed(s *scope, c *Call, args []any) (any, error) {
	key, err := s.metaKey(c, args)
	if err != nil {
		return nil, err
	}
	v, ok, err := s.src.Meta(key)
	switch {
	case err != nil:
		return nil, errorf(c.Pos, "%s: %v", s.src.Name(), err)
	case !ok:
		return nil, errorf(c.Pos, "%s has no metadata %q: the file does not describe a %s model", s.src.Name(), key, s.src.Architecture())
	}
	return v, nil
}

func ggufHas(s *scope, c *Call, args []any) (any, error) {
	name, err := stringArg(c, args)
	if err != nil {
		return nil, err
	}
	_, ok := s.src.TensorShape(name)
	return ok, nil
}

func ggufShape(s *scope, c *Call, args []any) (any, error) {
	name, err := stringArg(c, args)
	if err != nil {
		return nil, err
	}
	shape, ok := s.src.TensorShape(name)
	if !ok {
		return nil, nil
	}
	out := make([]any, len(shape))
	for i, d := range shape {
		out[i] = d
	}
	return out, nil
}

func ggufToken(s *scope, c *Call, args []any) (any, error) {
	text, err := stringArg(c, args)
	if err != nil {
		return nil, err
	}
	toks, _, err := s.src.Meta("tokenizer.ggml.tokens")
	if err != nil {
		return nil, errorf(c.Pos, "%s: %v", s.src.Name(), err)
	}
	list, _ := toks.([]any)
	for i, t := range list {
		if t == text {
			return int64(i), nil
		}
	}
	return nil, nil
}

func ggufLayersWith(s *scope, c *Call, args []any) (any, error) {
	name, err := stringArg(c, args)
	if err != nil {
		return nil, err
	}
	if strings.Count(name, "{i}") != 1 {
		return nil, errorf(c.Args[0].Pos, "layers_with needs a tensor name with one {i} (the layer index), got %q", name)
	}
	out := []any{}
	for i := 0; i < maxLayers; i++ {
		if _, ok := s.src.TensorShape(strings.Replace(name, "{i}", strconv.Itoa(i), 1)); ok {
			out = append(out, int64(i))
		}
	}
	return out, nil
}

// ggufSection returns the file's gguf section, or nil.
func ggufSection(f *File) *GGUF {
	for _, it := range f.Items {
		if it.GGUF != nil {
			return it.GGUF
		}
	}
	return nil
}

// entryKey is what a child's gguf entry overrides a parent's by.
func entryKey(e *GGUFEntry) string {
	switch {
	case e.Field != nil:
		return "field " + e.Field.Name
	case e.Tensor != nil && e.Tensor.Value != nil:
		return "value " + tensorKey(e.Tensor.GGUF)
	case e.Tensor != nil && e.Tensor.Layers != nil:
		return "tensor " + tensorKey(e.Tensor.GGUF) + " for"
	case e.Tensor != nil:
		return "tensor " + tensorKey(e.Tensor.GGUF)
	case e.Rename != nil:
		return "rename " + pathText(e.Rename.From)
	}
	return "transform " + e.Transform.Pattern
}

// tensorKey renders a tensor row's GGUF side with `{}` for the layer index.
func tensorKey(p *Path) string {
	parts := make([]string, len(p.Segs))
	for i, s := range p.Segs {
		switch {
		case s.Name != "":
			parts[i] = s.Name
		case s.Num != nil:
			parts[i] = strconv.FormatInt(*s.Num, 10)
		default:
			parts[i] = "{}"
		}
	}
	return strings.Join(parts, ".")
}

// mergeGGUF applies a child's gguf section on top of a resolved parent's
// (see Resolve); either may be nil.
func mergeGGUF(base, child *GGUF) *GGUF {
	if base == nil && child == nil {
		return nil
	}
	out := &GGUF{}
	if child != nil {
		out.Pos, out.Archs, out.Cond = child.Pos, child.Archs, child.Cond
	} else {
		out.Pos = base.Pos
	}
	own := map[string]*GGUFEntry{}
	if child != nil {
		for _, e := range child.Entries {
			own[entryKey(e)] = e
		}
	}
	if base != nil {
		for _, e := range base.Entries {
			k := entryKey(e)
			if c, ok := own[k]; ok {
				out.Entries = append(out.Entries, c)
				delete(own, k)
				continue
			}
			out.Entries = append(out.Entries, e)
		}
	}
	if child != nil {
		for _, e := range child.Entries {
			if _, ok := own[entryKey(e)]; ok {
				out.Entries = append(out.Entries, e)
			}
		}
	}
	return out
}

// gguf checks a gguf section: the claim's condition uses only the
// functions; a field or let uses the functions and the entries before it
// and is declared once; a tensor row maps names made of name and number
// segments and at most one `{i}` layer placeholder, the same on both sides,
// once per GGUF name; a transform has a valid pattern, a known transform
// with its parameters, once per pattern; a rename is declared once per
// FROM path, its `{expr}` segments config expressions over every field.
func (c *checker) gguf(g *GGUF) {
	c.valueExpr(g.Cond, map[string]bool{}, true)
	names := map[string]bool{}
	tensors := map[string]bool{}
	values := map[string]bool{}
	patterns := map[string]bool{}
	renames := map[string]bool{}
	var renameRows []*GGUFRename
	defer func() { // a rename's {expr} segments may use every field
		for _, r := range renameRows {
			for _, p := range []*Path{r.From, r.To} {
				for _, sg := range p.Segs {
					if sg.Index != nil {
						c.valueExpr(sg.Index, names, true)
					}
				}
			}
		}
	}()
	for _, e := range g.Entries {
		switch {
		case e.Field != nil:
			fd := e.Field
			c.valueExpr(fd.Value, names, true)
			if names[fd.Name] {
				c.errf(fd.Pos, "gguf field %q declared twice", fd.Name)
			}
			names[fd.Name] = true
		case e.Tensor != nil && e.Tensor.Value != nil:
			t := e.Tensor
			k := tensorKey(t.GGUF)
			if values[k] {
				c.errf(t.Pos, "tensor %s made twice", pathText(t.GGUF))
			}
			values[k] = true
			c.tensorPath(t.GGUF)
			c.valueExpr(t.Value, names, true)
		case e.Tensor != nil:
			t := e.Tensor
			k := tensorKey(t.GGUF)
			if t.Layers != nil {
				k += " for"
			}
			if tensors[k] {
				c.errf(t.Pos, "tensor %s mapped twice", pathText(t.GGUF))
			}
			tensors[k] = true
			gv, gok := c.tensorPath(t.GGUF)
			if t.Layers != nil {
				c.valueExpr(t.Layers, names, true)
				if !strings.Contains(k, "{}") {
					c.errf(t.Layers.Pos, "tensor %s: a row with for LIST needs the layer placeholder {i}", pathText(t.GGUF))
				}
			}
			if t.HF != nil {
				if hv, hok := c.hfTensorPath(t.HF, names); gok && hok && gv != hv {
					c.errf(t.HF.Pos, "the layer placeholder must be the same on both sides: {%s} -> {%s}", gv, hv)
				}
			}
			c.splitRow(t, gv, gok)
		case e.Rename != nil:
			k := pathText(e.Rename.From)
			if renames[k] {
				c.errf(e.Rename.Pos, "rename %s declared twice", k)
			}
			renames[k] = true
			renameRows = append(renameRows, e.Rename)
		case e.Transform != nil:
			tr := e.Transform
			if patterns[tr.Pattern] {
				c.errf(tr.Pos, "transform %q declared twice", tr.Pattern)
			}
			patterns[tr.Pattern] = true
			if _, err := path.Match(tr.Pattern, ""); err != nil || tr.Pattern == "" {
				c.errf(tr.Pos, "bad tensor-name pattern %q (use * for any run of characters)", tr.Pattern)
			}
			if tr.Call != nil {
				c.transformCall(tr.Call, names)
			}
		}
	}
}

// splitRow checks a split row's list: two or more elements, not all none,
// each with the GGUF side's plain placeholder, each once.
func (c *checker) splitRow(t *GGUFTensor, ggufPlaceholder string, ok bool) {
	if t.Split == nil {
		return
	}
	if len(t.Split) < 2 {
		c.errf(t.Pos, "tensor %s: a split row lists two or more Hugging Face tensors, one per slice of the GGUF tensor's first dimension (use -> NAME for one)", pathText(t.GGUF))
	}
	seen, some := map[string]bool{}, false
	for _, sp := range t.Split {
		if sp.None {
			continue
		}
		some = true
		for _, sg := range sp.HF.Segs {
			if sg.Index != nil {
				if list, _ := indexedPlaceholder(sg.Index); list != "" {
					c.errf(sg.Pos, "tensor %s: a split row's Hugging Face sides take the plain layer placeholder {i}, not {%s[...]}", pathText(t.GGUF), list)
					return
				}
			}
		}
		if hv, hok := c.tensorPath(sp.HF); ok && hok && hv != ggufPlaceholder {
			c.errf(sp.HF.Pos, "the layer placeholder must be the same on both sides: {%s} -> {%s}", ggufPlaceholder, hv)
		}
		if k := tensorKey(sp.HF); seen[k] {
			c.errf(sp.Pos, "tensor %s: %s is listed twice in the split", pathText(t.GGUF), pathText(sp.HF))
		} else {
			seen[k] = true
		}
	}
	if !some {
		c.errf(t.Pos, "tensor %s: every slice of the split is none (use -> none)", pathText(t.GGUF))
	}
}

// tensorPath checks one side of a tensor row and returns its layer
// placeholder's name ("" when it has none); ok is false after an error.
func (c *checker) tensorPath(p *Path) (v string, ok bool) {
	ok = true
	for _, s := range p.Segs {
		if s.Index == nil {
			continue
		}
		name := placeholder(s.Index)
		switch {
		case name == "":
			c.errf(s.Pos, "a tensor-name segment in braces is the layer placeholder, a bare name such as {i}")
			ok = false
		case v != "":
			c.errf(s.Pos, "a tensor name has at most one layer placeholder")
			ok = false
		default:
			v = name
		}
	}
	return v, ok
}

// hfTensorPath checks a tensor row's Hugging Face side as tensorPath does,
// where the placeholder may also be indexed, `{LIST[i]}`: the Hugging Face
// index is element i of LIST, a field or let of the section declared
// before the row (llama.cpp numbers Qwen3-VL's DeepStack mergers by the
// block they follow, transformers by their order).
func (c *checker) hfTensorPath(p *Path, names map[string]bool) (v string, ok bool) {
	for _, s := range p.Segs {
		if s.Index == nil {
			continue
		}
		if list, idx := indexedPlaceholder(s.Index); list != "" {
			if !names[list] {
				c.errf(s.Pos, "{%s[%s]}: %s is not a field or let of this gguf section declared before the row", list, idx, list)
				return "", false
			}
			if v != "" {
				c.errf(s.Pos, "a tensor name has at most one layer placeholder")
				return "", false
			}
			v = idx
			continue
		}
		name := placeholder(s.Index)
		switch {
		case name == "":
			c.errf(s.Pos, "a tensor-name segment in braces is the layer placeholder, a bare name such as {i}, or on the Hugging Face side a list indexed by it, {LIST[i]}")
			return "", false
		case v != "":
			c.errf(s.Pos, "a tensor name has at most one layer placeholder")
			return "", false
		default:
			v = name
		}
	}
	return v, true
}

// indexedPlaceholder reads a `{LIST[i]}` segment's expression: the list's
// and the index's bare names, or "", "" for any other expression.
func indexedPlaceholder(e *Expr) (list, idx string) {
	if e.Then != nil || len(e.Cond.Rest) > 0 {
		return "", ""
	}
	u := e.Cond.First
	if u.Op != "" || len(u.Index) != 1 || u.Operand.Path == nil || len(u.Operand.Path.Segs) != 1 || u.Operand.Path.Segs[0].Name == "" {
		return "", ""
	}
	if idx = placeholder(u.Index[0]); idx == "" {
		return "", ""
	}
	return u.Operand.Path.Segs[0].Name, idx
}

// placeholder returns the name of a `{i}` segment's expression, or "" when
// it is not a bare name.
func placeholder(e *Expr) string {
	if e.Then != nil || len(e.Cond.Rest) > 0 {
		return ""
	}
	u := e.Cond.First
	if u.Op != "" || len(u.Index) > 0 || u.Operand.Path == nil || len(u.Operand.Path.Segs) != 1 {
		return ""
	}
	return u.Operand.Path.Segs[0].Name
}

func (c *checker) transformCall(call *Call, names map[string]bool) {
	params, ok := GGUFTransforms[call.Name]
	if !ok || call.Super {
		c.errf(call.Pos, "unknown transform %q%s", callName(call), suggest(call.Name, transformNames()))
	}
	for _, a := range call.Args {
		if a.Name != "" {
			c.errf(a.Pos, "transform arguments are positional")
		}
		c.valueExpr(a.Value, names, true)
	}
	switch {
	case ok && variadic(params) && len(params) == 1 && len(call.Args) == 0:
		c.errf(call.Pos, "transform %s takes one or more arguments (%s)", call.Name, params[0])
	case ok && variadic(params) && len(call.Args) < len(params):
		c.errf(call.Pos, "transform %s takes %d or more arguments (%s), got %d", call.Name, len(params), transformParams(params), len(call.Args))
	case ok && !variadic(params) && len(call.Args) != len(params):
		c.errf(call.Pos, "transform %s takes %d argument(s) (%s), got %d", call.Name, len(params), transformParams(params), len(call.Args))
	}
}

func transformNames() []string {
	out := make([]string, 0, len(GGUFTransforms))
	for n := range GGUFTransforms {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ggufCall checks a function call in a gguf expression.
func (c *checker) ggufCall(call *Call, names map[string]bool) {
	fn, ok := ggufFuncs[call.Name]
	if !ok || call.Super {
		fns := make([]string, 0, len(ggufFuncs))
		for n := range ggufFuncs {
			fns = append(fns, n)
		}
		sort.Strings(fns)
		c.errf(call.Pos, "unknown function %q in a gguf section (functions: %s)", callName(call), strings.Join(fns, ", "))
	}
	for _, a := range call.Args {
		c.valueExpr(a.Value, names, true)
		switch {
		case !ok:
		case fn.args >= 0 && a.Name != "":
			c.errf(a.Pos, "%s takes no keyword arguments", call.Name)
		case fn.args < 0 && a.Name == "":
			c.errf(a.Pos, "%s takes keyword arguments only (name: value)", call.Name)
		}
	}
	if ok && fn.args >= 0 && len(call.Args) != fn.args {
		c.errf(call.Pos, "%s takes %d argument(s), got %d", call.Name, fn.args, len(call.Args))
	}
}

// GGUFArchs lists the general.architecture values the family's gguf
// section claims, each marked " (conditional)" when the claim has a
// condition; nil when the family reads no GGUF file of its own.
func GGUFArchs(f *File) []string {
	g := ggufSection(f)
	if g == nil {
		return nil
	}
	var out []string
	for _, a := range g.Archs {
		if g.Cond != nil {
			a += " (conditional)"
		}
		out = append(out, a)
	}
	return out
}

// ClaimsGGUF reports whether the family reads the file: its gguf section
// names the file's general.architecture and its condition, if any, holds.
func ClaimsGGUF(f *File, src GGUFSource) (bool, error) {
	g := ggufSection(f)
	if g == nil || !contains(g.Archs, src.Architecture()) {
		return false, nil
	}
	if g.Cond == nil {
		return true, nil
	}
	s := &scope{cfg: map[string]any{}, locals: map[string]any{}, src: src}
	v, err := s.expr(g.Cond)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, errorf(g.Cond.Pos, "gguf condition must be bool, got %s %s", typeName(v), show(v))
	}
	return b, nil
}

// SelectGGUF returns the family that reads the file: among the families
// that claim it (ClaimsGGUF), one whose claim is conditional wins over an
// unconditional one (mistral reads llama files named "mistral", llama the
// rest). Errors: no family claims the file (the message lists the
// architectures the families read), two claims of the same kind, a
// condition that fails to evaluate.
func SelectGGUF(files []*File, src GGUFSource) (*File, error) {
	var cond, plain []*File
	var known []string
	for _, f := range files {
		for _, a := range GGUFArchs(f) {
			known = append(known, strings.TrimSuffix(a, " (conditional)"))
		}
		ok, err := ClaimsGGUF(f, src)
		if err != nil {
			return nil, err
		}
		switch {
		case !ok:
		case ggufSection(f).Cond != nil:
			cond = append(cond, f)
		default:
			plain = append(plain, f)
		}
	}
	pick := plain
	if len(cond) > 0 {
		pick = cond
	}
	switch len(pick) {
	case 0:
		sort.Strings(known)
		known = compact(known)
		return nil, fmt.Errorf("%s: general.architecture %q is not supported (supported: %s)", src.Name(), src.Architecture(), strings.Join(known, ", "))
	case 1:
		return pick[0], nil
	}
	names := make([]string, len(pick))
	for i, f := range pick {
		names[i] = fmt.Sprintf("%s (%s)", f.Name, f.Pos.Filename)
	}
	return nil, fmt.Errorf("%s: general.architecture %q is claimed by several families: %s", src.Name(), src.Architecture(), strings.Join(names, ", "))
}

func compact(sorted []string) []string {
	var out []string
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

// GGUFReading is a GGUF file as a family's gguf section reads it.
type GGUFReading struct {
	Family string         // the family whose section read the file
	Config map[string]any // the config.json equivalent (values typed as DecodeConfig types them)
	// Values are the Hugging Face tensors the section makes from metadata
	// (`tensor HF = EXPR` rows), in section order.
	Values []GGUFValue

	tensors    []tensorRule
	transforms []transformRule
	renames    []renameRule
}

// GGUFValue is a Hugging Face tensor a gguf section makes from metadata
// values (`tensor model.layers.{i}.mlp.act_fn.alpha_p =
// meta("xielu.alpha_p")`: llama.cpp stores Apertus's per-layer xIELU
// scalars as metadata arrays). With a `{i}` segment the value is a list
// with one element per layer, element i making layer i's tensor; a number
// makes a tensor of shape [1], a list of numbers one of shape [n]; none
// makes none.
type GGUFValue struct {
	HF    string    // the Hugging Face tensor name
	Data  []float32 // its values, row-major
	Shape []int64
	Pos   lexer.Position // the row
}

// GGUFTransformCall is a transform applied to one tensor, with its
// evaluated arguments and the position of the transform line. An argument
// given per layer (a list) is the element of the tensor's layer; Unresolved
// says why there is none (the tensor's row has no layer index, or the list
// is too short), and the call must not be applied.
type GGUFTransformCall struct {
	Name       string
	Args       []int64   // its int arguments, in order
	Floats     []float64 // its number arguments (the parameters GGUFTransforms spells NAME:float: minus's c), in order
	Pos        lexer.Position
	Unresolved string
}

// GGUFTensorMap is where one GGUF tensor goes.
type GGUFTensorMap struct {
	HF   string // its Hugging Face name ("" when Skip or Split)
	Skip bool   // no Hugging Face counterpart: not loaded
	// Split, for a split row, is each slice's Hugging Face name ("": not
	// read); the transforms apply to each slice.
	Split      []string
	Transforms []GGUFTransformCall // applied in order on load
	Pos        lexer.Position      // the tensor row
}

type tensorRule struct {
	gguf, hf []string   // segments; "{}" is the layer placeholder
	split    [][]string // a split row's parts' segments (nil for a none part); hf is nil
	// hfIndex, for a `{LIST[i]}` Hugging Face side: the Hugging Face index
	// of each GGUF index (LIST's elements that are ints >= 0); nil: the same
	hfIndex map[string]string
	skip    bool
	layers  map[string]bool // with for LIST: the layers it maps (decimal indices); nil: every layer
	pos     lexer.Position
}

// matches matches a name's segments against the rule: its layer index
// (when the rule has a placeholder) and whether it matches.
func (t tensorRule) matches(segs []string) (idx string, ok bool) {
	idx, ok = matchSegs(t.gguf, segs)
	if ok && t.layers != nil && !t.layers[idx] {
		return "", false
	}
	return idx, ok
}

// fullName reports whether the row names one tensor (its GGUF side ends
// in .weight or .bias) rather than a base name.
func (t tensorRule) fullName() bool {
	last := t.gguf[len(t.gguf)-1]
	return last == "weight" || last == "bias"
}

// renameRule renames a Hugging Face name's leading segments from to to.
type renameRule struct{ from, to string }

// rename applies the longest rule whose from is hf or a prefix of it
// ending at a segment boundary.
func (r *GGUFReading) rename(hf string) string {
	best := -1
	for i, rn := range r.renames {
		if (hf == rn.from || strings.HasPrefix(hf, rn.from+".")) && (best < 0 || len(rn.from) > len(r.renames[best].from)) {
			best = i
		}
	}
	if best < 0 {
		return hf
	}
	return r.renames[best].to + hf[len(r.renames[best].from):]
}

type transformRule struct {
	pattern string
	call    GGUFTransformCall
	layered map[int][]int64 // argument index → its value per layer (a list argument)
}

// EvalGGUF reads a GGUF file through the family's gguf section (f resolved
// and checked): the fields are evaluated in order over the file's metadata
// and tensors (a let binds a helper name only); a field that evaluates to
// none is left out, so the family's config default applies; a field the
// family's config block declares is converted to its type. model_type is
// the family's first match model_type unless a field sets it. The tensor
// rows and transforms (their arguments evaluated) make the tensor map.
// Errors carry the .arch position and name the file: a missing need(...)
// key, a value of the wrong type, a transform argument that is not an int.
func EvalGGUF(f *File, src GGUFSource) (*GGUFReading, error) {
	g := ggufSection(f)
	if g == nil {
		return nil, errorf(f.Pos, "arch %s has no gguf section: it cannot read %s", f.Name, src.Name())
	}
	r := &GGUFReading{Family: f.Name, Config: map[string]any{}}
	for _, it := range f.Items {
		if it.Match != nil && len(it.Match.ModelTypes) > 0 {
			r.Config["model_type"] = it.Match.ModelTypes[0]
			break
		}
	}
	types := map[string]*Field{}
	for _, fd := range configFields(f) {
		types[fd.Name] = fd
	}
	s := &scope{cfg: map[string]any{}, locals: map[string]any{}, src: src}
	var renames []*GGUFRename
	for _, e := range g.Entries {
		switch {
		case e.Field != nil:
			fd := e.Field
			v, err := s.expr(fd.Value)
			if err != nil {
				return nil, err
			}
			if fd.Let {
				s.locals[fd.Name] = v
				continue
			}
			if t, ok := types[fd.Name]; ok {
				cv, err := coerce(v, t.Type.Name)
				if err != nil {
					hint := ""
					if _, isList := v.([]any); isList && t.Type.Name != "list" {
						hint = " (per-layer values, which archc does not support)"
					}
					return nil, errorf(fd.Value.Pos, "%s: %s: %v%s", src.Name(), fd.Name, err, hint)
				}
				v = cv
			}
			delete(s.locals, fd.Name)
			s.cfg[fd.Name] = v
			if v == nil {
				delete(r.Config, fd.Name)
			} else {
				r.Config[fd.Name] = v
			}
		case e.Tensor != nil && e.Tensor.Value != nil:
			vals, err := s.ggufValues(e.Tensor, src)
			if err != nil {
				return nil, err
			}
			r.Values = append(r.Values, vals...)
		case e.Tensor != nil:
			rule := tensorRule{gguf: ruleSegs(e.Tensor.GGUF), hf: ruleSegs(e.Tensor.HF), skip: e.Tensor.None, pos: e.Tensor.Pos}
			for _, sp := range e.Tensor.Split {
				rule.split = append(rule.split, ruleSegs(sp.HF))
			}
			if m, err := s.hfIndex(e.Tensor, src); err != nil {
				return nil, err
			} else if m != nil {
				rule.hfIndex = m
			}
			if e.Tensor.Layers != nil {
				v, err := s.expr(e.Tensor.Layers)
				if err != nil {
					return nil, err
				}
				l, isList := v.([]any)
				if !isList && v != nil {
					return nil, errorf(e.Tensor.Layers.Pos, "%s: tensor %s: for needs a list of bools, one per layer, got %s %s", src.Name(), pathText(e.Tensor.GGUF), typeName(v), show(v))
				}
				rule.layers = map[string]bool{}
				for k, el := range l {
					b, ok := el.(bool)
					if !ok {
						return nil, errorf(e.Tensor.Layers.Pos, "%s: tensor %s: for needs a list of bools, one per layer, got element %d %s %s", src.Name(), pathText(e.Tensor.GGUF), k, typeName(el), show(el))
					}
					if b {
						rule.layers[strconv.Itoa(k)] = true
					}
				}
			}
			r.tensors = append(r.tensors, rule)
		case e.Transform != nil && e.Transform.Call != nil:
			tr := e.Transform
			call := GGUFTransformCall{Name: tr.Call.Name, Pos: tr.Pos}
			rule := transformRule{pattern: tr.Pattern}
			params := GGUFTransforms[tr.Call.Name]
			for k, a := range tr.Call.Args {
				v, err := s.expr(a.Value)
				if err != nil {
					return nil, err
				}
				if floatParam(params, k) {
					x, ok := number(v)
					if !ok {
						return nil, errorf(a.Pos, "%s: transform %s: %s must be a number (one for every tensor the pattern matches), got %s %s", src.Name(), tr.Call.Name, transformParams(params[k:k+1]), typeName(v), show(v))
					}
					call.Floats = append(call.Floats, x)
					continue
				}
				if l, isList := v.([]any); isList { // per layer: element i for layer i's tensors
					vals := make([]int64, len(l))
					for j, el := range l {
						n, ok := el.(int64)
						if !ok {
							return nil, errorf(a.Pos, "%s: transform %s: a per-layer argument must be a list of ints, element %d is %s %s", src.Name(), tr.Call.Name, j, typeName(el), show(el))
						}
						vals[j] = n
					}
					if rule.layered == nil {
						rule.layered = map[int][]int64{}
					}
					rule.layered[k] = vals
					call.Args = append(call.Args, 0)
					continue
				}
				n, ok := v.(int64)
				if !ok {
					return nil, errorf(a.Pos, "%s: transform %s: argument must be an int or a list of ints (one per layer), got %s %s", src.Name(), tr.Call.Name, typeName(v), show(v))
				}
				call.Args = append(call.Args, n)
			}
			rule.call = call
			r.transforms = append(r.transforms, rule)
		case e.Rename != nil:
			renames = append(renames, e.Rename)
		}
	}
	for _, rn := range renames { // after the fields, which their segments may read
		from, err := s.renamePath(rn.From, src)
		if err != nil {
			return nil, err
		}
		to, err := s.renamePath(rn.To, src)
		if err != nil {
			return nil, err
		}
		r.renames = append(r.renames, renameRule{from: from, to: to})
	}
	return r, nil
}

// hfIndex evaluates a tensor row's `{LIST[i]}` Hugging Face placeholder:
// GGUF index k maps to LIST[k] where that is an int >= 0 (other elements
// map nothing: the file must not hold that layer's tensor); nil for a row
// without one.
func (s *scope) hfIndex(t *GGUFTensor, src GGUFSource) (map[string]string, error) {
	if t.HF == nil {
		return nil, nil
	}
	for _, sg := range t.HF.Segs {
		if sg.Index == nil {
			continue
		}
		list, _ := indexedPlaceholder(sg.Index)
		if list == "" {
			return nil, nil
		}
		v, bound := s.locals[list]
		if !bound {
			v = s.cfg[list]
		}
		l, ok := v.([]any)
		if !ok {
			return nil, errorf(sg.Pos, "%s: tensor %s: %s must be a list of ints (the Hugging Face index of each GGUF index), got %s %s", src.Name(), pathText(t.GGUF), list, typeName(v), show(v))
		}
		m := map[string]string{}
		for k, el := range l {
			n, ok := el.(int64)
			if !ok {
				return nil, errorf(sg.Pos, "%s: tensor %s: %s[%d] is %s %s, want an int (-1: no tensor)", src.Name(), pathText(t.GGUF), list, k, typeName(el), show(el))
			}
			if n >= 0 {
				m[strconv.Itoa(k)] = strconv.FormatInt(n, 10)
			}
		}
		return m, nil
	}
	return nil, nil
}

// renamePath evaluates a rename's path: its `{expr}` segments as ints.
func (s *scope) renamePath(p *Path, src GGUFSource) (string, error) {
	parts := make([]string, len(p.Segs))
	for i, sg := range p.Segs {
		switch {
		case sg.Name != "":
			parts[i] = sg.Name
		case sg.Num != nil:
			parts[i] = strconv.FormatInt(*sg.Num, 10)
		default:
			v, err := s.expr(sg.Index)
			if err != nil {
				return "", err
			}
			n, ok := v.(int64)
			if !ok || n < 0 {
				return "", errorf(sg.Pos, "%s: rename %s: a segment in braces must be a non-negative int, got %s %s", src.Name(), pathText(p), typeName(v), show(v))
			}
			parts[i] = strconv.FormatInt(n, 10)
		}
	}
	return strings.Join(parts, "."), nil
}

// ggufValues evaluates a `tensor HF = EXPR` row (see GGUFValue).
func (s *scope) ggufValues(t *GGUFTensor, src GGUFSource) ([]GGUFValue, error) {
	v, err := s.expr(t.Value)
	if err != nil || v == nil {
		return nil, err
	}
	segs := ruleSegs(t.GGUF)
	layered := slices.Contains(segs, "{}")
	one := func(hf string, v any, what string) (GGUFValue, error) {
		out := GGUFValue{HF: hf, Pos: t.Pos}
		items, isList := v.([]any)
		if !isList {
			items = []any{v}
		}
		if len(items) == 0 {
			return out, errorf(t.Value.Pos, "%s: tensor %s: %s is an empty list", src.Name(), hf, what)
		}
		for _, it := range items {
			x, ok := number(it)
			if !ok {
				return out, errorf(t.Value.Pos, "%s: tensor %s: %s must be a number or a list of numbers, got %s %s", src.Name(), hf, what, typeName(v), show(v))
			}
			out.Data = append(out.Data, float32(x))
		}
		out.Shape = []int64{int64(len(out.Data))}
		return out, nil
	}
	if !layered {
		val, err := one(strings.Join(segs, "."), v, "the value")
		return []GGUFValue{val}, err
	}
	l, ok := v.([]any)
	if !ok {
		return nil, errorf(t.Value.Pos, "%s: tensor %s: a row with {i} needs a list with one element per layer, got %s %s", src.Name(), strings.ReplaceAll(tensorKey(t.GGUF), "{}", "{i}"), typeName(v), show(v))
	}
	var out []GGUFValue
	for i, el := range l {
		name := make([]string, len(segs))
		for k, sg := range segs {
			if sg == "{}" {
				sg = strconv.Itoa(i)
			}
			name[k] = sg
		}
		val, err := one(strings.Join(name, "."), el, fmt.Sprintf("element %d", i))
		if err != nil {
			return nil, err
		}
		out = append(out, val)
	}
	return out, nil
}

// resolve returns the rule's call for a tensor of layer idx (its row's
// {i}, "" for a row without one): each per-layer argument is the layer's
// element.
func (tr transformRule) resolve(idx string) GGUFTransformCall {
	if len(tr.layered) == 0 {
		return tr.call
	}
	call := tr.call
	call.Args = slices.Clone(call.Args)
	layer, err := strconv.Atoi(idx)
	for k, vals := range tr.layered {
		switch {
		case err != nil:
			call.Unresolved = "a per-layer argument, but the tensor's row has no layer index {i}"
		case layer >= len(vals):
			call.Unresolved = fmt.Sprintf("a per-layer argument of %d elements, but the tensor is layer %d's", len(vals), layer)
		default:
			call.Args[k] = vals[layer]
		}
	}
	return call
}

// ruleSegs returns a tensor row side's segments, "{}" for the placeholder
// (nil for a none side).
func ruleSegs(p *Path) []string {
	if p == nil {
		return nil
	}
	return strings.Split(tensorKey(p), ".")
}

// Tensor maps the GGUF tensor called name ("blk.3.attn_q.weight"): the
// row whose GGUF side matches its base name (the name without ".weight"
// or ".bias"; a `{i}` segment matches a layer index written without
// leading zeros) gives the Hugging Face name, with the same suffix and
// index ("model.layers.3.self_attn.q_proj.weight"). A name without either
// suffix is its own base name (llama.cpp's Mamba "blk.3.ssm_a" →
// "backbone.layers.3.mixer.A_log"). A row whose GGUF side
// ends in .weight or .bias maps that one tensor, to its Hugging Face side
// as written (`tensor blk.{i}.attn_sinks.weight ->
// model.layers.{i}.self_attn.sinks`, a parameter with no suffix); such a
// row wins over a base-name row. The section's renames then apply to the
// Hugging Face name (GGUFRename). A split row (`tensor GGUF -> [HF0,
// HF1, ...]`) gives each slice's name in Split instead of HF. Every
// transform whose pattern matches the full name applies, in section order
// (to each slice of a split tensor). ok is false for a name no row
// matches.
func (r *GGUFReading) Tensor(name string) (m GGUFTensorMap, ok bool) {
	base, suffix := name, ""
	for _, sfx := range []string{".weight", ".bias"} {
		if strings.HasSuffix(name, sfx) {
			base, suffix = strings.TrimSuffix(name, sfx), sfx
		}
	}
	full, segs := strings.Split(name, "."), strings.Split(base, ".")
	rule, idx, matched := tensorRule{}, "", false
	// full-name rows first, then base-name rows; in each, rows with for
	// LIST before the others
	for _, pass := range []struct{ full, restricted bool }{{true, true}, {true, false}, {false, true}, {false, false}} {
		for _, rl := range r.tensors {
			if matched {
				break
			}
			if rl.fullName() != pass.full || (rl.layers != nil) != pass.restricted {
				continue
			}
			if pass.full {
				if idx, matched = rl.matches(full); matched {
					rule, suffix = rl, ""
				}
			} else if idx, matched = rl.matches(segs); matched {
				rule = rl
			}
		}
	}
	if matched {
		m = GGUFTensorMap{Skip: rule.skip, Pos: rule.pos}
		hfName := func(segs []string) (string, bool) {
			hf := make([]string, len(segs))
			for i, s := range segs {
				if s == "{}" {
					s = idx
					if rule.hfIndex != nil {
						if s, ok = rule.hfIndex[idx]; !ok {
							return "", false // a layer the row's list maps to no Hugging Face index
						}
					}
				}
				hf[i] = s
			}
			return r.rename(strings.Join(hf, ".") + suffix), true
		}
		switch {
		case rule.split != nil:
			m.Split = make([]string, len(rule.split))
			for k, segs := range rule.split {
				if segs != nil {
					m.Split[k], _ = hfName(segs) // (a split row has no {LIST[i]}: the checker refuses it)
				}
			}
		case !rule.skip:
			if m.HF, ok = hfName(rule.hf); !ok {
				return GGUFTensorMap{}, false
			}
		}
		for _, tr := range r.transforms {
			if ok, _ := path.Match(tr.pattern, name); ok {
				m.Transforms = append(m.Transforms, tr.resolve(idx))
			}
		}
		return m, true
	}
	return m, false
}

// matchSegs matches a name's segments against a rule's; the placeholder
// matches a decimal index without leading zeros, returned as idx.
func matchSegs(rule, segs []string) (idx string, ok bool) {
	if len(rule) != len(segs) {
		return "", false
	}
	for i, r := range rule {
		if r != "{}" {
			if r != segs[i] {
				return "", false
			}
			continue
		}
		n, err := strconv.ParseUint(segs[i], 10, 31)
		if err != nil || strconv.FormatUint(n, 10) != segs[i] {
			return "", false
		}
		idx = segs[i]
	}
	return idx, true
}

// Source inverts Tensor for messages (a weight a file lacks): the GGUF
// tensor a row reads Hugging Face tensor hf from and, for a split row, its
// slice (else -1); ok is false when none does (`{LIST[i]}` rows and
// renames are not inverted).
func (r *GGUFReading) Source(hf string) (gguf string, slice int, ok bool) {
	base, suffix := hf, ""
	for _, sfx := range []string{".weight", ".bias"} {
		if strings.HasSuffix(hf, sfx) {
			base, suffix = strings.TrimSuffix(hf, sfx), sfx
		}
	}
	for _, rl := range r.tensors {
		if rl.skip || rl.hfIndex != nil {
			continue
		}
		sides, at := [][]string{rl.hf}, []int{-1}
		if rl.split != nil {
			sides, at = rl.split, nil
			for k := range rl.split {
				at = append(at, k)
			}
		}
		for k, side := range sides {
			if side == nil {
				continue
			}
			want, sfx := base, suffix
			if rl.fullName() {
				want, sfx = hf, ""
			}
			idx, matched := matchSegs(side, strings.Split(want, "."))
			if !matched || (rl.layers != nil && !rl.layers[idx]) {
				continue
			}
			name := slices.Clone(rl.gguf)
			for i, sg := range name {
				if sg == "{}" {
					name[i] = idx
				}
			}
			return strings.Join(name, ".") + sfx, at[k], true
		}
	}
	return "", -1, false
}
