package ggufmap

import (
	"fmt"
	"strings"
	"testing"

	"github.com/archc/archc/formats/gguf"
)

// TestConfigDense3: the gguf sections of issue 21's third pack
// (llama4_text, dbrx, gemma4_text, glm) on files as llama.cpp's converters write them,
// without archc's extension keys: the values llama.cpp fixes become the
// config; a key llama.cpp needs is one error naming it.
func TestConfigDense3(t *testing.T) {
	llama4 := func(experts uint32, extra ...kv) []kv {
		return baseKVs("llama4", append([]kv{
			{"llama4.expert_count", experts},
			{"llama4.expert_used_count", uint32(1)},
			{"llama4.expert_feed_forward_length", uint32(8)},
			{"llama4.interleave_moe_layer_step", uint32(2)},
		}, extra...)...)
	}
	t.Run("llama4", func(t *testing.T) {
		m := mustRead(t, openBuilt(t, llama4(16), nil))
		c := evalConfig(t, m)
		if m.Family != "llama4_text" || m.Config["model_type"] != "llama4_text" || c["intermediate_size_mlp"] != int64(96) || c["intermediate_size"] != int64(8) ||
			c["attention_chunk_size"] != int64(8192) || c["floor_scale"] != 8192.0 || c["attn_scale"] != 0.1 || c["use_qk_norm"] != true ||
			fmt.Sprint(c["no_rope_layers"]) != "[1 1 1 0 1 1 1 0 1 1 1 0]" ||
			fmt.Sprint(c["layer_types"]) != "[chunked_attention chunked_attention chunked_attention full_attention chunked_attention chunked_attention chunked_attention full_attention chunked_attention chunked_attention chunked_attention full_attention]" {
			t.Errorf("llama4 config: %v (raw %v)", c, m.Config)
		}
	})
	t.Run("llama4 without chunks", func(t *testing.T) { // MobileLLM-R1: sliding_window 0, RoPE on every layer but the last (llama.cpp's n_no_rope_layer_step = n_layer)
		c := evalConfig(t, mustRead(t, openBuilt(t, llama4(128, kv{"llama4.attention.sliding_window", uint32(0)}), nil)))
		if c["use_qk_norm"] != false || fmt.Sprint(c["no_rope_layers"]) != "[1 1 1 1 1 1 1 1 1 1 1 0]" ||
			fmt.Sprint(c["layer_types"]) != "[full_attention full_attention full_attention full_attention full_attention full_attention full_attention full_attention full_attention full_attention full_attention full_attention]" {
			t.Errorf("llama4 config: %v", c)
		}
	})
	t.Run("dbrx", func(t *testing.T) {
		dbrx := baseKVs("dbrx", kv{"dbrx.expert_count", uint32(4)}, kv{"dbrx.expert_used_count", uint32(2)},
			kv{"dbrx.attention.layer_norm_epsilon", float32(1e-5)}, kv{"dbrx.rope.freq_base", float32(10000)})
		c := evalConfig(t, mustRead(t, openBuilt(t, append(dbrx, kv{"dbrx.attention.clamp_kqv", float32(8)}), nil)))
		if c["hidden_size"] != int64(64) || c["num_hidden_layers"] != int64(12) || c["kv_n_heads"] != int64(2) ||
			c["clip_qkv"] != 8.0 || c["intermediate_size"] != int64(96) || c["moe_num_experts"] != int64(4) || c["moe_top_k"] != int64(2) ||
			c["moe_normalize_expert_weights"] != 1.0 || c["rope_theta"] != 10000.0 {
			t.Errorf("dbrx config: %v", c)
		}
		if _, err := read(openBuilt(t, dbrx, nil)); err == nil || !strings.Contains(err.Error(), "dbrx.arch:") || !strings.Contains(err.Error(), "dbrx.attention.clamp_kqv") {
			t.Errorf("dbrx without clamp_kqv: %v", err)
		}
	})
	t.Run("gemma4", func(t *testing.T) {
		gemma4 := func(extra ...kv) []kv {
			return baseKVs("gemma4", append([]kv{
				{"gemma4.attention.key_length", uint32(32)}, {"gemma4.attention.key_length_swa", uint32(16)},
				{"gemma4.attention.sliding_window", uint32(8)}, {"gemma4.rope.freq_base", float32(1e6)}, {"gemma4.rope.freq_base_swa", float32(1e4)},
				{"gemma4.attention.sliding_window_pattern", []bool{true, true, true, true, true, false, true, true, true, true, true, false}},
			}, extra...)...)
		}
		ts := []tdesc{{"blk.0.ffn_gate.weight", gguf.F32, []uint64{64, 96}, make([]byte, 4*64*96)}}
		c := evalConfig(t, mustRead(t, openBuilt(t, gemma4(), ts)))
		rp := fmt.Sprint(c["rope_parameters"])
		if c["head_dim"] != int64(16) || c["global_head_dim"] != int64(32) || c["num_key_value_heads"] != int64(2) || c["num_global_key_value_heads"] != nil ||
			c["intermediate_size"] != int64(96) || c["use_double_wide_mlp"] != false || c["num_kv_shared_layers"] != int64(0) || c["hidden_size_per_layer_input"] != int64(0) ||
			c["attention_k_eq_v"] != false || c["enable_moe_block"] != false ||
			rp != "map[full_attention:map[partial_rotary_factor:0.25 rope_theta:1e+06 rope_type:proportional] sliding_attention:map[rope_theta:10000 rope_type:default]]" {
			t.Errorf("gemma4 config: %v", c)
		}
		// Per-layer kv heads (sliding 2, full 1) and feed-forward widths (the
		// last two layers share KV and are double-wide).
		kvs := gemma4(kv{"gemma4.attention.shared_kv_layers", uint32(2)})
		kvs[6].Val = []uint32{2, 2, 2, 2, 2, 1, 2, 2, 2, 2, 2, 1}               // head_count_kv
		kvs[4].Val = []uint32{96, 96, 96, 96, 96, 96, 96, 96, 96, 96, 192, 192} // feed_forward_length
		c = evalConfig(t, mustRead(t, openBuilt(t, kvs, ts)))
		if c["num_key_value_heads"] != int64(2) || c["num_global_key_value_heads"] != int64(1) || c["intermediate_size"] != int64(96) ||
			c["use_double_wide_mlp"] != true || c["num_kv_shared_layers"] != int64(2) {
			t.Errorf("gemma4 per-layer config: %v", c)
		}
	})
	t.Run("chatglm", func(t *testing.T) { // GlmForCausalLM as ChatGLMModel writes it: hidden_size as the context length
		m := mustRead(t, openBuilt(t, baseKVs("chatglm", kv{"chatglm.rope.dimension_count", uint32(8)}, kv{"chatglm.rope.freq_base", float32(10000)}),
			[]tdesc{{"blk.0.attn_q.bias", gguf.F32, []uint64{64}, make([]byte, 4*64)}}))
		c := evalConfig(t, m)
		if m.Family != "glm" || c["max_position_embeddings"] != int64(128) || c["head_dim"] != int64(16) || c["partial_rotary_factor"] != 0.5 ||
			c["rope_theta"] != 10000.0 || c["attention_bias"] != true {
			t.Errorf("chatglm config: %v", c)
		}
	})
}
