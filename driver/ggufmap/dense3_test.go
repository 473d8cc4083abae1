package ggufmap

import (
	"fmt"
	"testing"
)

// TestConfigDense3: the gguf sections of issue 21's newest families
// (llama4_text, ...) on files as llama.cpp's converters write them, without
// archc's extension keys: the values llama.cpp fixes become the config.
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
}
