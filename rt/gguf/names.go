package gguf

import (
	"fmt"
	"strconv"
	"strings"
)

// nameRow maps one GGUF tensor base name (without ".weight"/".bias") to
// its Hugging Face name. Per-layer rows use "blk.N." / "model.layers.N."
// prefixes implicitly. archs, when set, limits a row to those
// architectures (rows are tried in order; the first that applies wins).
type nameRow struct {
	gguf, hf string
	archs    []string
}

// nameTable is the GGUF → Hugging Face tensor name table for the families
// in families (gguf-py's tensor_mapping.py, read in reverse).
var nameTable = []nameRow{
	// Global tensors.
	{gguf: "token_embd", hf: "model.embed_tokens"},
	{gguf: "output_norm", hf: "model.norm"},
	{gguf: "output", hf: "lm_head"},
	// Per-layer tensors (blk.N.* → model.layers.N.*).
	{gguf: "attn_norm", hf: "input_layernorm"},
	{gguf: "attn_q", hf: "self_attn.q_proj"},
	{gguf: "attn_k", hf: "self_attn.k_proj"},
	{gguf: "attn_v", hf: "self_attn.v_proj"},
	{gguf: "attn_output", hf: "self_attn.o_proj"},
	{gguf: "attn_q_norm", hf: "self_attn.q_norm"},
	{gguf: "attn_k_norm", hf: "self_attn.k_norm"},
	{gguf: "ffn_norm", hf: "pre_feedforward_layernorm", archs: []string{"gemma2", "gemma3"}},
	{gguf: "ffn_norm", hf: "post_attention_layernorm"},
	{gguf: "post_attention_norm", hf: "post_attention_layernorm", archs: []string{"gemma2", "gemma3"}},
	{gguf: "post_ffw_norm", hf: "post_feedforward_layernorm", archs: []string{"gemma2", "gemma3"}},
	{gguf: "ffn_gate", hf: "mlp.gate_proj"},
	{gguf: "ffn_up", hf: "mlp.up_proj"},
	{gguf: "ffn_down", hf: "mlp.down_proj"},
}

// ignored are GGUF tensors with no Hugging Face counterpart that
// Materialize skips: llama 3's rope_freqs holds frequency factors that HF
// recomputes from rope_scaling.
var ignored = map[string]bool{"rope_freqs.weight": true}

var globalNames = map[string]bool{"token_embd": true, "output_norm": true, "output": true}

// HFName returns the Hugging Face name of the GGUF tensor ggufName in a
// model of architecture arch ("blk.3.attn_q.weight" →
// "model.layers.3.self_attn.q_proj.weight"). ok is false for a name the
// table does not cover (including ignored tensors such as
// rope_freqs.weight).
func HFName(arch, ggufName string) (hf string, ok bool) {
	base, suffix := ggufName, ""
	for _, s := range []string{".weight", ".bias"} {
		if strings.HasSuffix(ggufName, s) {
			base, suffix = strings.TrimSuffix(ggufName, s), s
		}
	}
	if suffix == "" {
		return "", false
	}
	prefix, hfPrefix := "", ""
	if rest, found := strings.CutPrefix(base, "blk."); found {
		i := strings.IndexByte(rest, '.')
		if i <= 0 {
			return "", false
		}
		n, err := strconv.ParseUint(rest[:i], 10, 32)
		if err != nil || strconv.FormatUint(n, 10) != rest[:i] {
			return "", false
		}
		prefix, hfPrefix = "blk."+rest[:i]+".", fmt.Sprintf("model.layers.%d.", n)
		base = rest[i+1:]
	} else if !globalNames[base] {
		return "", false
	}
	for _, row := range nameTable {
		if row.gguf != base || globalNames[row.gguf] == (prefix != "") {
			continue
		}
		if row.archs != nil && !contains(row.archs, arch) {
			continue
		}
		return hfPrefix + row.hf + suffix, true
	}
	return "", false
}

func contains(xs []string, x string) bool {
	for _, e := range xs {
		if e == x {
			return true
		}
	}
	return false
}
