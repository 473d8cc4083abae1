package gguf

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// family describes how one general.architecture maps to Hugging Face.
type family struct {
	modelType string // HF model_type
	hfClass   string // HF architectures[0]
	gemma     bool   // Gemma-style: norm weights stored as 1+w, gelu_pytorch_tanh
	permuteQK bool   // llama.cpp permuted Q/K rows for its rope layout
	// ropeDimHeadDim: take head_dim from rope.dimension_count when
	// attention.key_length is absent (transformers does for llama/mistral).
	ropeDimHeadDim bool
}

// families are the GGUF architectures Config and Materialize understand.
var families = map[string]family{
	"llama":   {modelType: "llama", hfClass: "LlamaForCausalLM", permuteQK: true, ropeDimHeadDim: true},
	"mistral": {modelType: "mistral", hfClass: "MistralForCausalLM", permuteQK: true, ropeDimHeadDim: true},
	"qwen2":   {modelType: "qwen2", hfClass: "Qwen2ForCausalLM"},
	"qwen3":   {modelType: "qwen3", hfClass: "Qwen3ForCausalLM"},
	"gemma":   {modelType: "gemma", hfClass: "GemmaForCausalLM", gemma: true},
	"gemma2":  {modelType: "gemma2", hfClass: "Gemma2ForCausalLM", gemma: true},
	"gemma3":  {modelType: "gemma3_text", hfClass: "Gemma3ForCausalLM", gemma: true},
}

// Architectures returns the general.architecture values this package
// supports, sorted.
func Architectures() []string {
	out := make([]string, 0, len(families))
	for a := range families {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

func (f *File) family() (family, error) {
	fam, ok := families[f.Arch]
	if !ok {
		return family{}, fmt.Errorf("gguf: %s: general.architecture %q is not supported (supported: %s)", f.Path, f.Arch, strings.Join(Architectures(), ", "))
	}
	return fam, nil
}

// Config returns the Hugging Face config.json equivalent of the file's
// metadata, as transformers' GGUF loader derives it
// (transformers/integrations/ggml.py, modeling_gguf_pytorch_utils.py),
// with values typed as dsl.DecodeConfig types them: int64, float64, bool,
// string, []any, map[string]any.
//
// Keys, from "<arch>.<key>" metadata: max_position_embeddings
// (context_length), num_hidden_layers (block_count), intermediate_size
// (feed_forward_length), hidden_size (embedding_length),
// num_attention_heads, num_key_value_heads (default: num_attention_heads),
// head_dim (attention.key_length; else, for llama/mistral,
// rope.dimension_count; else hidden_size/num_attention_heads), rms_norm_eps
// (the stored float32 widened exactly), rope_theta (rope.freq_base,
// default 10000), rope_scaling (from rope.scaling.*; absent when none),
// vocab_size (vocab_size; else the tokenizer.ggml.tokens length; else the
// embedding rows), sliding_window. From tokenizer.ggml.*: bos_token_id,
// eos_token_id, pad_token_id, unk_token_id. Derived: model_type (llama,
// mistral — also llama with general.name "mistral", as transformers —,
// qwen2, qwen3, gemma, gemma2, gemma3_text), architectures,
// tie_word_embeddings (true when there is no output.weight),
// attention_bias (blk.0.attn_q.bias present), hidden_act, torch_dtype
// "float32" (Materialize's output).
//
// Gemma families add hidden_activation "gelu_pytorch_tanh" and
// query_pre_attn_scalar (head_dim, or hidden_size/num_attention_heads for
// the 27B sizes, as llama.cpp); gemma2 adds attn_logit_softcapping and
// final_logit_softcapping (metadata, default 50 and 30) and alternating
// layer_types; gemma3 adds rope_local_base_freq 10000 (llama.cpp's fixed
// local base), sliding_window_pattern 6 and layer_types (from
// attention.sliding_window_pattern when present), and the softcaps only
// when the metadata has them.
//
// Errors: an unsupported architecture (named), a required key missing or
// of the wrong type, per-layer (array) values for a scalar field.
func (f *File) Config() (map[string]any, error) {
	fam, err := f.family()
	if err != nil {
		return nil, err
	}
	arch := f.Arch
	modelType := fam.modelType
	if arch == "llama" {
		if n, _ := f.Value("general.name"); n == "mistral" {
			modelType = "mistral"
			fam.hfClass = families["mistral"].hfClass
		}
	}
	c := map[string]any{
		"model_type":    modelType,
		"architectures": []any{fam.hfClass},
		"torch_dtype":   "float32",
	}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("gguf: %s: "+format, append([]any{f.Path}, a...)...)
	}
	getInt := func(key string) (int64, bool, error) {
		v, ok := f.Value(key)
		if !ok {
			return 0, false, nil
		}
		switch x := v.(type) {
		case int64:
			return x, true, nil
		case uint64:
			if x > math.MaxInt64 {
				return 0, false, bad("metadata %s = %d is out of range", key, x)
			}
			return int64(x), true, nil
		case ArrayInfo:
			return 0, false, bad("metadata %s holds per-layer values (%d), which archc does not support", key, x.Len)
		}
		return 0, false, bad("metadata %s is a %T, want an integer", key, v)
	}
	getFloat := func(key string) (float64, bool, error) {
		v, ok := f.Value(key)
		if !ok {
			return 0, false, nil
		}
		switch x := v.(type) {
		case float64:
			return x, true, nil
		case int64:
			return float64(x), true, nil
		case uint64:
			return float64(x), true, nil
		}
		return 0, false, bad("metadata %s is a %T, want a number", key, v)
	}
	need := map[string]string{
		"block_count":                      "num_hidden_layers",
		"embedding_length":                 "hidden_size",
		"feed_forward_length":              "intermediate_size",
		"attention.head_count":             "num_attention_heads",
		"context_length":                   "max_position_embeddings",
		"attention.layer_norm_rms_epsilon": "rms_norm_eps",
	}
	for _, k := range sortedKeys(need) {
		key := arch + "." + k
		if k == "attention.layer_norm_rms_epsilon" {
			v, ok, err := getFloat(key)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, bad("metadata %s is missing: the file does not describe a %s model", key, arch)
			}
			c[need[k]] = v
			continue
		}
		v, ok, err := getInt(key)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, bad("metadata %s is missing: the file does not describe a %s model", key, arch)
		}
		if v <= 0 {
			return nil, bad("metadata %s is %d, must be positive", key, v)
		}
		c[need[k]] = v
	}
	heads := c["num_attention_heads"].(int64)
	hidden := c["hidden_size"].(int64)
	layers := c["num_hidden_layers"].(int64)

	kvHeads, ok, err := getInt(arch + ".attention.head_count_kv")
	if err != nil {
		return nil, err
	}
	if !ok {
		kvHeads = heads
	}
	if kvHeads <= 0 || heads%kvHeads != 0 {
		return nil, bad("num_key_value_heads %d does not divide num_attention_heads %d", kvHeads, heads)
	}
	c["num_key_value_heads"] = kvHeads

	headDim, ok, err := getInt(arch + ".attention.key_length")
	if err != nil {
		return nil, err
	}
	if !ok && fam.ropeDimHeadDim {
		if headDim, ok, err = getInt(arch + ".rope.dimension_count"); err != nil {
			return nil, err
		}
	}
	if !ok {
		headDim = hidden / heads
	}
	if headDim <= 0 {
		return nil, bad("head_dim %d must be positive", headDim)
	}
	c["head_dim"] = headDim

	theta, ok, err := getFloat(arch + ".rope.freq_base")
	if err != nil {
		return nil, err
	}
	if !ok {
		theta = 10000
	}
	c["rope_theta"] = theta
	if rs, err := f.ropeScaling(arch); err != nil {
		return nil, err
	} else if rs != nil {
		c["rope_scaling"] = rs
	}

	vocab, ok, err := getInt(arch + ".vocab_size")
	if err != nil {
		return nil, err
	}
	if !ok {
		if a, isArr := f.kv["tokenizer.ggml.tokens"].v.(array); isArr {
			vocab, ok = a.n, true
		}
	}
	if !ok {
		if t, has := f.Lookup("token_embd.weight"); has && len(t.Dims) == 2 {
			vocab, ok = t.Dims[1], true
		}
	}
	if !ok {
		return nil, bad("cannot tell the vocabulary size: no %s.vocab_size, tokenizer.ggml.tokens or token_embd.weight", arch)
	}
	c["vocab_size"] = vocab

	for k, hf := range map[string]string{"bos_token_id": "bos_token_id", "eos_token_id": "eos_token_id", "padding_token_id": "pad_token_id", "unknown_token_id": "unk_token_id"} {
		v, ok, err := getInt("tokenizer.ggml." + k)
		if err != nil {
			return nil, err
		}
		if ok {
			c[hf] = v
		}
	}

	_, hasOutput := f.Lookup("output.weight")
	c["tie_word_embeddings"] = !hasOutput
	_, hasBias := f.Lookup("blk.0.attn_q.bias")
	c["attention_bias"] = hasBias

	sw, hasSW, err := getInt(arch + ".attention.sliding_window")
	if err != nil {
		return nil, err
	}
	if hasSW {
		c["sliding_window"] = sw
	}

	if !fam.gemma {
		c["hidden_act"] = "silu"
		return c, nil
	}
	c["hidden_act"] = "gelu_pytorch_tanh"
	c["hidden_activation"] = "gelu_pytorch_tanh"
	qpas := headDim
	if (arch == "gemma2" && layers == 46) || (arch == "gemma3" && layers == 62) { // the 27B sizes
		qpas = hidden / heads
	}
	c["query_pre_attn_scalar"] = qpas
	for _, k := range []string{"attn_logit_softcapping", "final_logit_softcapping"} {
		v, ok, err := getFloat(arch + "." + k)
		if err != nil {
			return nil, err
		}
		switch {
		case ok:
			c[k] = v
		case arch == "gemma2" && k == "attn_logit_softcapping":
			c[k] = 50.0
		case arch == "gemma2":
			c[k] = 30.0
		case arch == "gemma3":
			c[k] = nil
		}
	}
	switch arch {
	case "gemma2":
		lt := make([]any, layers)
		for i := range lt {
			lt[i] = layerType((i+1)%2 != 0)
		}
		c["layer_types"] = lt
	case "gemma3":
		c["rope_local_base_freq"] = 10000.0
		c["sliding_window_pattern"] = int64(6)
		lt := make([]any, layers)
		pat, hasPat := f.Value(arch + ".attention.sliding_window_pattern")
		if a, isArr := pat.(ArrayInfo); hasPat && isArr && a.Values != nil {
			if a.Len != layers {
				return nil, bad("metadata %s.attention.sliding_window_pattern has %d entries for %d layers", arch, a.Len, layers)
			}
			for i, v := range a.Values {
				b, isBool := v.(bool)
				if !isBool {
					return nil, bad("metadata %s.attention.sliding_window_pattern holds %s, want bool", arch, a.Elem)
				}
				lt[i] = layerType(b)
			}
			delete(c, "sliding_window_pattern")
		} else {
			for i := range lt {
				lt[i] = layerType((i+1)%6 != 0)
			}
		}
		c["layer_types"] = lt
	}
	return c, nil
}

func layerType(sliding bool) string {
	if sliding {
		return "sliding_attention"
	}
	return "full_attention"
}

// ropeScaling maps <arch>.rope.scaling.* (and the older rope.scale_linear)
// to an HF rope_scaling dict, or nil when the model has none.
func (f *File) ropeScaling(arch string) (map[string]any, error) {
	p := arch + ".rope.scaling."
	typ, hasType := f.Value(p + "type")
	factor, hasFactor := f.Value(p + "factor")
	if lin, ok := f.Value(arch + ".rope.scale_linear"); ok && !hasType {
		typ, hasType, factor, hasFactor = "linear", true, lin, true
	}
	if !hasType {
		return nil, nil
	}
	ts, ok := typ.(string)
	if !ok {
		return nil, fmt.Errorf("gguf: %s: metadata %stype is a %T, want a string", f.Path, p, typ)
	}
	if ts == "none" || ts == "" {
		return nil, nil
	}
	rs := map[string]any{"rope_type": ts, "type": ts}
	if hasFactor {
		v, ok := factor.(float64)
		if !ok {
			return nil, fmt.Errorf("gguf: %s: metadata %sfactor is a %T, want a float", f.Path, p, factor)
		}
		rs["factor"] = v
	}
	for gk, hk := range map[string]string{
		"original_context_length": "original_max_position_embeddings",
		"attn_factor":             "attention_factor",
		"yarn_beta_fast":          "beta_fast",
		"yarn_beta_slow":          "beta_slow",
	} {
		v, ok := f.Value(p + gk)
		if !ok {
			continue
		}
		switch x := v.(type) {
		case uint64:
			rs[hk] = int64(x)
		case int64, float64:
			rs[hk] = x
		default:
			return nil, fmt.Errorf("gguf: %s: metadata %s%s is a %T, want a number", f.Path, p, gk, v)
		}
	}
	return rs, nil
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
