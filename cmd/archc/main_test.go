package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/archc/archc/internal/clitest"
)

const fixture = "../../golden/testdata/llama-tied"

func TestCLI(t *testing.T) {
	dir := t.TempDir()
	bin := clitest.Build(t, dir, "github.com/archc/archc/cmd/archc")

	t.Run("list", func(t *testing.T) {
		r := clitest.Run(t, bin, "list")
		if r.Code != 0 || !strings.Contains(r.Stdout, "llama") || !strings.Contains(r.Stdout, "mistral") {
			t.Fatalf("list: code %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
		}
		for _, want := range [][]string{{"olmo3", "olmo3.arch", "olmo3", "-", "olmo2", "(conditional)"}, {"gemma3", "gemma3.arch", "gemma3_text,", "gemma3", "(conditional)", "-", "gemma3"}, {"gemma3_vision", "gemma3_vision.arch", "gemma3", "(conditional)", "image", "clip", "(mmproj)"}, {"idefics3", "idefics3.arch", "idefics3,", "smolvlm", "image", "clip", "(mmproj)"}} {
			found := false
			for _, line := range strings.Split(r.Stdout, "\n") {
				found = found || strings.Join(strings.Fields(line), " ") == strings.Join(want, " ")
			}
			if !found {
				t.Errorf("list: no line %q (family, file, model types, encoders, GGUF architectures) in\n%s", strings.Join(want, " "), r.Stdout)
			}
		}
	})
	t.Run("a broken --arch before the kernels' venv", func(t *testing.T) {
		// Without a venv the kernels cannot be built; the .arch file's own
		// error (file:line:col) is still the one reported.
		broken := filepath.Join(t.TempDir(), "broken.arch")
		if err := os.WriteFile(broken, []byte("arch llama extends nosuch {\n}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("ARCHC_VENV", filepath.Join(t.TempDir(), "no-venv"))
		r := clitest.Run(t, bin, "emit", "--arch", broken, fixture)
		if r.Code == 0 || !strings.Contains(r.Stderr, broken+":1:1:") || !strings.Contains(r.Stderr, `no family named "nosuch"`) {
			t.Fatalf("code %d, stderr %q; want the file's error at 1:1", r.Code, r.Stderr)
		}
	})
	t.Run("emit is deterministic", func(t *testing.T) {
		a := clitest.Run(t, bin, "emit", fixture)
		b := clitest.Run(t, bin, "emit", filepath.Join(fixture, "config.json"))
		if a.Code != 0 || a.Stdout == "" || a.Stdout != b.Stdout {
			t.Fatalf("emit twice: codes %d %d, equal %v, stderr %q", a.Code, b.Code, a.Stdout == b.Stdout, a.Stderr)
		}
		out := filepath.Join(dir, "m.mlir")
		if r := clitest.Run(t, bin, "emit", fixture, "-o", out); r.Code != 0 {
			t.Fatalf("emit -o: %q", r.Stderr)
		}
		if data, err := os.ReadFile(out); err != nil || string(data) != a.Stdout {
			t.Fatalf("emit -o wrote different bytes (%v)", err)
		}
	})
	t.Run("check", func(t *testing.T) {
		if r := clitest.Run(t, bin, "check", "../../archs/llama.arch"); r.Code != 0 {
			t.Fatalf("check llama.arch: %q", r.Stderr)
		}
		bad := filepath.Join(dir, "bad.arch")
		os.WriteFile(bad, []byte("arch bad {\n  match model_type \"x\"\n  logits = rms_norm(tokens, model.norm eps: 1)\n}\n"), 0o644)
		r := clitest.Run(t, bin, "check", bad)
		if r.Code == 0 || !strings.Contains(r.Stderr, "bad.arch:3:") {
			t.Fatalf("check bad.arch: code %d, stderr %q; want a file:line:col error", r.Code, r.Stderr)
		}

		// A folder: every .arch file in it, each reported.
		if r := clitest.Run(t, bin, "check", "../../archs"); r.Code != 0 || !strings.Contains(r.Stdout, "llama.arch: ok") || !strings.Contains(r.Stdout, "mixtral.arch: ok") {
			t.Fatalf("check archs/: code %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
		}
		if r := clitest.Run(t, bin, "check", dir); r.Code == 0 || !strings.Contains(r.Stderr, "bad.arch:3:") {
			t.Fatalf("check on a folder with bad.arch: code %d, stderr %q", r.Code, r.Stderr)
		}
		// Two files declaring one family: the second is an error naming the first.
		dup := t.TempDir()
		for _, n := range []string{"a.arch", "b.arch"} {
			os.WriteFile(filepath.Join(dup, n), []byte("arch zz extends llama {\n  match model_type \"zz\"\n}\n"), 0o644)
		}
		if r := clitest.Run(t, bin, "check", dup); r.Code == 0 || !strings.Contains(r.Stderr, "b.arch:1:1: arch zz is also declared in") {
			t.Fatalf("check on two files declaring arch zz: code %d, stderr %q", r.Code, r.Stderr)
		}
	})
	t.Run("image sizes", func(t *testing.T) {
		// A variable-size encoder: one entry point per --image-sizes entry.
		vl := "../../golden/testdata/vision/qwen2_vl"
		r := clitest.Run(t, bin, "emit", vl, "--kernels", "none", "--image-sizes", "96,32")
		if r.Code != 0 || !strings.Contains(r.Stdout, "func.func @encode_image_32(") || !strings.Contains(r.Stdout, "func.func @encode_image_96(") || strings.Contains(r.Stdout, "func.func @encode_image_256(") {
			t.Fatalf("emit --image-sizes 96,32: code %d, stderr %q; want encode_image_32 and _96 only", r.Code, r.Stderr)
		}
		if r := clitest.Run(t, bin, "emit", vl, "--kernels", "none", "--image-sizes", "0"); r.Code == 0 || !strings.Contains(r.Stderr, "--image-sizes [0]: each size must be at least 1") {
			t.Fatalf("emit --image-sizes 0: code %d, stderr %q", r.Code, r.Stderr)
		}
	})
	t.Run("gpu target", func(t *testing.T) {
		// A GPU plan: no CPU kernels, GPU batch buckets (decode up to 64).
		r := clitest.Run(t, bin, "emit", fixture, "--target", "cuda")
		if r.Code != 0 || !strings.Contains(r.Stdout, "func.func @decode_64(") || !strings.Contains(r.Stdout, "func.func @prefill_128(") || strings.Contains(r.Stdout, "hal.executable") {
			t.Fatalf("emit --target cuda: code %d, stderr %q; want decode_64 and prefill_128 and no kernels", r.Code, r.Stderr)
		}
		r = clitest.Run(t, bin, "emit", fixture, "--target", "cuda", "--decode-batches", "8,1", "--prefill-buckets", "16")
		if r.Code != 0 || !strings.Contains(r.Stdout, "func.func @decode_8(") || strings.Contains(r.Stdout, "func.func @decode_64(") || strings.Contains(r.Stdout, "func.func @prefill_128(") {
			t.Fatalf("emit --target cuda --decode-batches 8,1: code %d, stderr %q", r.Code, r.Stderr)
		}
		r = clitest.Run(t, bin, "emit", fixture, "--target", "cuda", "--kernels", "avx2")
		if r.Code != 1 || !strings.Contains(r.Stderr, "--kernels avx2: archc's matmul kernels are CPU code") {
			t.Fatalf("--target cuda --kernels avx2: code %d, stderr %q", r.Code, r.Stderr)
		}
	})
	t.Run("int8 precision refusals", func(t *testing.T) {
		// The int8 mode is a build of archc's CPU kernels: refused on a GPU,
		// without kernels and for a variant without an int8 build.
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{"--target", "cuda", "--precision", "int8"}, "--precision int8: the int8 mode is archc's CPU kernels; for --target cuda"},
			{[]string{"--no-kernels", "--precision", "int8"}, "--precision int8 needs archc's kernels; --no-kernels"},
			{[]string{"--kernels", "avx2", "--precision", "int8"}, "--kernels avx2: no int8 build"},
			{[]string{"--precision", "int4"}, "--precision must be one of"},
		} {
			r := clitest.Run(t, bin, append([]string{"emit", fixture}, c.args...)...)
			if r.Code == 0 || !strings.Contains(r.Stderr, c.want) {
				t.Errorf("emit %v: code %d, stderr %q; want %q", c.args, r.Code, r.Stderr, c.want)
			}
		}
	})
	t.Run("family config refusals", func(t *testing.T) {
		// Config values a family cannot honour are one line at the .arch
		// position that reads them, naming the key (issue 21's families).
		cfg := func(fixture string, edit func(map[string]any)) string {
			b, err := os.ReadFile(filepath.Join("../../golden/testdata", fixture, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			var c map[string]any
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			edit(c)
			d := t.TempDir()
			out, _ := json.Marshal(c)
			os.WriteFile(filepath.Join(d, "config.json"), out, 0o644)
			return filepath.Join(d, "config.json")
		}
		for _, c := range []struct {
			name, fixture string
			edit          func(map[string]any)
			want          string
		}{
			{"apertus without rope parameters", "apertus", func(c map[string]any) { delete(c, "rope_parameters") },
				"config.json has neither rope_parameters nor rope_scaling"},
			{"laguna heads not a multiple of the KV heads", "laguna", func(c map[string]any) { c["num_attention_heads_per_layer"] = []any{4, 3, 4} },
				"num_attention_heads_per_layer is [4, 3, 4]: each a positive multiple of num_key_value_heads (2)"},
			{"laguna heads for fewer layers", "laguna", func(c map[string]any) { c["num_attention_heads_per_layer"] = []any{4, 2} },
				"num_attention_heads_per_layer has 2 entries: give one per layer (num_hidden_layers 3)"},
			{"mimo_v2_flash layer types for fewer layers", "mimo_v2_flash", func(c map[string]any) { c["layer_types"] = []any{"full_attention"} },
				"layer_types has 1 entries: give one per layer (num_hidden_layers 3)"},
			{"cohere2 layer types for fewer layers (any family's per-layer list)", "cohere2-sliding", func(c map[string]any) { c["layer_types"] = []any{"sliding_attention"} },
				"layer_types has 1 entries, but layer 1 reads layer_types[i]: give one entry per layer"},
			{"recurrent_gemma unknown block type", "recurrent_gemma", func(c map[string]any) { c["block_types"] = []any{"recurrent", "mlp"} },
				"recurrent_gemma.arch:43:55: block_types[1] is mlp: recurrent_gemma blocks are recurrent or attention"},
			{"recurrent_gemma lru_width not in head blocks", "recurrent_gemma", func(c map[string]any) { c["lru_width"] = 50 },
				"recurrent_gemma.arch:34:5: lru_width (50) must be a multiple of num_attention_heads (4)"},
			{"kimi_linear layer kind", "kimi_linear", func(c map[string]any) { c["layer_types"].([]any)[1] = "mamba" },
				"kimi_linear.arch:58:67: layer_types[1] is mamba: kimi_linear layers are linear_attention or full_attention"},
			{"kimi_linear KV heads", "kimi_linear", func(c map[string]any) { c["num_key_value_heads"] = 2 },
				"kimi_linear.arch:52:5: num_key_value_heads (2) differs from num_attention_heads (4)"},
			{"longcat_flash RoPE width", "longcat_flash", func(c map[string]any) { c["head_dim"] = 16 },
				"longcat_flash.arch:48:5: head_dim (16, the RoPE table's width) differs from qk_rope_head_dim (8)"},
			{"minimax layer kind", "minimax", func(c map[string]any) { c["layer_types"].([]any)[1] = "mamba" },
				"minimax.arch:45:72: layer_types[1] is mamba: minimax layers are full_attention or linear_attention"},
			{"deepseek scoring_func", "deepseek", func(c map[string]any) { c["scoring_func"] = "sigmoid" },
				`deepseek.arch:23:5: scoring_func "sigmoid": DeepSeekMoE's MoEGate scores by softmax only`},
			{"deepseek experts without top-k", "deepseek", func(c map[string]any) { delete(c, "num_experts_per_tok") },
				"deepseek.arch:24:5: n_routed_experts is set without num_experts_per_tok"},
			{"xverse MoE", "xverse", func(c map[string]any) { c["num_experts"] = 8 },
				"xverse.arch:17:5: num_experts is set: an XVERSE-MoE config; xverse.arch is the dense XVERSE (a Llama)"},
			{"nanbeige enable_double_loop_split", "nanbeige", func(c map[string]any) { c["enable_double_loop_split"] = true },
				"nanbeige.arch:26:5: enable_double_loop_split is true: the reference's double-loop split is not implemented (mlx-lm refuses it too)"},
			{"nanbeige loop_share_kv", "nanbeige", func(c map[string]any) { c["loop_share_kv"] = true },
				"nanbeige.arch:27:5: loop_share_kv is true: passes sharing one KV cache are not implemented (mlx-lm refuses it too); archc gives each pass its own"},
			{"nanbeige enable_depth_attention", "nanbeige", func(c map[string]any) { c["enable_depth_attention"] = true },
				"nanbeige.arch:28:5: enable_depth_attention is true: the reference's depth attention is not implemented (mlx-lm refuses it too)"},
			{"plamo kv heads not dividing the heads", "plamo", func(c map[string]any) { c["num_attention_heads"] = 5 },
				"plamo.arch:18:5: n_shared_head (2) gives 3 key-value heads, which do not divide num_attention_heads (5)"},
			{"plamo n_shared_head 0", "plamo", func(c map[string]any) { c["n_shared_head"] = 0 },
				"plamo.arch:17:78: division by zero (n_shared_head is 0)"},
			{"qwen rotary_pct", "qwen", func(c map[string]any) { c["rotary_pct"] = 0.5 },
				"qwen.arch:34:5: rotary_pct is 0.5: QWen's partial rotary embedding is not implemented (every published config has 1.0)"},
			{"qwen kv_channels", "qwen", func(c map[string]any) { c["kv_channels"] = 16 },
				"qwen.arch:35:5: kv_channels (16) differs from hidden_size / num_attention_heads (12)"},
			{"openelm ffn_with_glu", "openelm", func(c map[string]any) { c["ffn_with_glu"] = false },
				"openelm.arch:40:5: ffn_with_glu is false: OpenELM's plain (non-GLU) MLP is not implemented (every published config has true)"},
			{"openelm per-layer lists", "openelm", func(c map[string]any) { c["num_kv_heads"] = []any{1} },
				"openelm.arch:41:5: num_query_heads, num_kv_heads and ffn_multipliers need one entry per layer (num_transformer_layers 2)"},
			{"openelm kv heads", "openelm", func(c map[string]any) { c["num_kv_heads"] = []any{1, 3} },
				"openelm.arch:42:5: num_query_heads [2, 4] and num_kv_heads [1, 3]: each layer's query heads a multiple of its key-value heads"},
			{"rwkv7 hidden_act", "rwkv7", func(c map[string]any) { c["hidden_act"] = "gelu" },
				`rwkv7.arch:40:5: hidden_act is gelu: rwkv7's channel mixing is relu² (sqrelu); give "sqrelu"`},
			{"plamo2 mamba_step", "plamo2", func(c map[string]any) { c["mamba_step"] = 1 },
				"plamo2.arch:38:5: mamba_step is 1: it must be at least 2"},
			{"negative size (any family's)", "llama-tied", func(c map[string]any) { c["intermediate_size"] = -96 },
				`config.json field "intermediate_size" is -96: a size or count cannot be negative`},
			{"recurrent_gemma negative logits_soft_cap", "recurrent_gemma", func(c map[string]any) { c["logits_soft_cap"] = -5.0 },
				"cap is -5: a soft cap must be a positive finite number (none for no cap) (cap is logits_soft_cap = -5.0)"},
			// KimiLinearConfig.__post_init__: linear_attn_config's values win over linear_conv_kernel_dim (4 here) and the others.
			{"kimi_linear linear_attn_config over its flat fields", "kimi_linear", func(c map[string]any) { c["linear_attn_config"] = map[string]any{"short_conv_kernel_size": 0} },
				"linear_conv_kernel_dim is 0: it must be at least 1"},
			{"kimi_linear layer in neither list", "kimi_linear", func(c map[string]any) {
				delete(c, "layer_types")
				c["linear_attn_config"] = map[string]any{"full_attn_layers": []any{2}, "kda_layers": []any{1}}
			}, "linear_attn_config: layer 3 is in neither full_attn_layers nor kda_layers"},
			{"kimi_linear layer out of range", "kimi_linear", func(c map[string]any) {
				delete(c, "layer_types")
				c["linear_attn_config"] = map[string]any{"full_attn_layers": []any{7}, "kda_layers": []any{1, 2, 3}}
			}, "must name layers 1 to num_hidden_layers (3)"},
			{"cohere2_moe expert_selection_fn", "cohere2_moe-sliding", func(c map[string]any) { c["expert_selection_fn"] = "relu" },
				`expert_selection_fn "relu" is not supported by Cohere2MoeTopKRouter (softmax, sigmoid)`},
			{"cohere2_moe shared_expert_combination_strategy", "cohere2_moe-sliding", func(c map[string]any) { c["shared_expert_combination_strategy"] = "max" },
				`shared_expert_combination_strategy "max" is not supported (sum, average)`},
			{"gemma4_text every layer kv-shared", "gemma4_text", func(c map[string]any) { c["num_kv_shared_layers"] = 6 },
				"num_kv_shared_layers is 6: it must be in [0, num_hidden_layers - 1 = 5]"},
			{"gemma4_text a shared type without a source", "gemma4_text", func(c map[string]any) {
				c["layer_types"] = []any{"sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "sliding_attention", "full_attention"}
			}, "num_kv_shared_layers is 3: layer 5 (full_attention) shares an earlier layer's KV cache, but none of layers 0..2 is full_attention"},
			{"gemma4_text unknown layer type", "gemma4_text", func(c map[string]any) { c["layer_types"].([]any)[0] = "chunked_attention" },
				"layer_types[0] is chunked_attention: Gemma 4 layers are sliding_attention or full_attention"},
			{"gemma4_text bidirectional", "gemma4_text", func(c map[string]any) { c["use_bidirectional_attention"] = "all" },
				`use_bidirectional_attention is "all"`},
			{"gemma4_text MoE block without experts", "gemma4_text", func(c map[string]any) { c["enable_moe_block"] = true },
				"enable_moe_block needs num_experts, top_k_experts and moe_intermediate_size"},
			// issue 18's gated DeltaNet families
			{"qwen3_next layer kind", "qwen3_next", func(c map[string]any) { c["layer_types"].([]any)[2] = "mamba" },
				"layer_types[2] is mamba: qwen3_next layers are linear_attention or full_attention"},
			{"qwen3_next conv kernel", "qwen3_next", func(c map[string]any) { c["linear_conv_kernel_dim"] = 0 },
				"linear_conv_kernel_dim is 0: it must be at least 1"},
			{"qwen3_5_moe value heads", "qwen3_5_moe", func(c map[string]any) { c["linear_num_value_heads"] = 5 },
				"linear_num_value_heads (5) must be a multiple of linear_num_key_heads (2)"},
			{"qwen3_5 text_config value heads", "qwen3_5", func(c map[string]any) { c["text_config"].(map[string]any)["linear_num_value_heads"] = 3 },
				"linear_num_value_heads (3) must be a multiple of linear_num_key_heads (2)"},
			{"llama4_text attention_chunk_size 0", "llama4_text", func(c map[string]any) { c["attention_chunk_size"] = 0 },
				"llama4_text.arch:44:112: attention_chunk_size is 0: the chunked_attention layers need a positive number of positions per chunk"},
			{"llama4_text hidden_act outside ACT2FN", "llama4_text", func(c map[string]any) { c["hidden_act"] = "swiglu2" },
				`(name is hidden_act = "swiglu2")`},
			{"dbrx ffn_act_fn outside ACT2FN", "dbrx", func(c map[string]any) {
				c["ffn_config"].(map[string]any)["ffn_act_fn"] = map[string]any{"name": "swiglu"}
			}, `dbrx.arch:49:12: experts: activation "swiglu" is not supported (intermediate is intermediate_size = 32, act is ffn_config.ffn_act_fn.name = "swiglu")`},
			{"dbrx moe_normalize_expert_weights 0", "dbrx", func(c map[string]any) { c["ffn_config"].(map[string]any)["moe_normalize_expert_weights"] = 0 },
				"dbrx.arch:48:9: route: norm_p must be a positive finite p, got 0 (top_k is moe_top_k = 2, norm_p is moe_normalize_expert_weights = 0.0)"},
			{"jetmoe activation_function outside ACT2FN", "jetmoe", func(c map[string]any) { c["activation_function"] = "swiglu" },
				`jetmoe.arch:48:14: experts: activation "swiglu" is not supported (intermediate is intermediate_size = 32, act is activation_function = "swiglu")`},
			{"jetmoe more experts per token than experts", "jetmoe", func(c map[string]any) { c["num_experts_per_tok"] = 5 },
				"jetmoe.arch:32:34: route: top_k 5 must be in [1, 4] (the number of experts) (top_k is num_experts_per_tok = 5)"},
			// issue 18's Mamba2 hybrids: a layer kind, a head count, a conv kernel.
			{"nemotron_h pattern character", "nemotron_h", func(c map[string]any) { c["hybrid_override_pattern"] = "ME*X-" },
				"hybrid_override_pattern[3] is X: nemotron_h layers are M (Mamba2), * (attention), - (MLP) or E (MoE)"},
			{"nemotron_h layer kind", "nemotron_h-latent", func(c map[string]any) {
				c["layers_block_type"] = []any{"moe", "hybrid", "full_attention", "moe"}
			}, "layers_block_type[1] is hybrid: nemotron_h layers are linear_attention, full_attention, mlp or moe"},
			{"nemotron_h n_groups", "nemotron_h", func(c map[string]any) { c["n_groups"] = 3 },
				"mamba_num_heads (8) must be a multiple of n_groups (3)"},
			{"nemotron_h conv_kernel", "nemotron_h", func(c map[string]any) { c["conv_kernel"] = 0 },
				"conv_kernel is 0: it must be at least 1"},
			{"falcon_h1 mamba_n_groups", "falcon_h1", func(c map[string]any) { c["mamba_n_groups"] = 3 },
				"heads 8 (num_heads / mamba_n_heads) must be a positive multiple of groups 3 (n_groups / mamba_n_groups)"},
			{"falcon_h1 mamba_d_conv", "falcon_h1", func(c map[string]any) { c["mamba_d_conv"] = 0 },
				"mamba_d_conv is 0: it must be at least 1"},
			{"falcon_h1 mamba_d_head", "falcon_h1", func(c map[string]any) { c["mamba_d_head"] = 5 },
				"mamba_d_head (5) * mamba_n_heads (8) must equal mamba_d_ssm (96)"},
			{"falcon_h1 mamba_d_head auto", "falcon_h1-nonorm", func(c map[string]any) { c["mamba_n_heads"] = 6 },
				"mamba_d_head (21) * mamba_n_heads (6) must equal mamba_expand * hidden_size (128)"},
			// require statements (issue 29.5): at the require's position, the parts joined.
			{"falcon alibi", "falcon", func(c map[string]any) { c["alibi"] = true },
				"falcon.arch:29:5: alibi is true: Falcon's ALiBi attention (the first RW checkpoints) is not implemented"},
			{"bloom slow_but_exact", "bloom", func(c map[string]any) { c["slow_but_exact"], c["pretraining_tp"] = true, 2 },
				"bloom.arch:28:5: slow_but_exact with pretraining_tp 2: BloomAttention and BloomMLP then sum their output projections in slices"},
			{"bitnet quantized", "bitnet", func(c map[string]any) { c["quantization_config"] = map[string]any{"quant_method": "bitnet"} },
				`bitnet.arch:26:5: quantization_config.quant_method is "bitnet": archc reads unquantized BitNet checkpoints only`},
			{"iquestcoder clip_qkv", "iquestcoder", func(c map[string]any) { c["clip_qkv"] = 8.0 },
				"iquestcoder.arch:21:5: clip_qkv or use_sliding_window is set: IQuestCoderConfig refuses both"},
			{"mpt qk_ln", "mpt", func(c map[string]any) { c["attn_config"].(map[string]any)["qk_ln"] = true },
				"mpt.arch:32:5: attn_config.qk_ln is true: MptAttention has no q/k LayerNorm"},
			{"falcon_h1 ssm_multipliers", "falcon_h1", func(c map[string]any) { c["ssm_multipliers"] = []any{1.5, 2.5} },
				"list index 2 out of range (length 2) (ssm_multipliers is [1.5, 2.5])"},
		} {
			r := clitest.Run(t, bin, "emit", cfg(c.fixture, c.edit), "--kernels", "none")
			if r.Code != 1 || !strings.Contains(r.Stderr, c.want) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
				t.Errorf("%s: code %d, stderr %q; want one line with %q", c.name, r.Code, r.Stderr, c.want)
			}
		}
		// xielu's eps caps the negative branch: a positive one is refused.
		arch := filepath.Join(t.TempDir(), "bad.arch")
		os.WriteFile(arch, []byte("arch bad_xielu extends apertus {\n  match model_type \"apertus\"\n  block act(x) { return xielu(x, mlp.act_fn, eps: 0.5) }\n}\n"), 0o644)
		r := clitest.Run(t, bin, "emit", "../../golden/testdata/apertus", "--arch", arch, "--kernels", "none")
		if r.Code != 1 || !strings.Contains(r.Stderr, "bad.arch:3:") || !strings.Contains(r.Stderr, "eps must be at most 0") {
			t.Errorf("xielu eps 0.5: code %d, stderr %q; want the .arch position and the eps rule", r.Code, r.Stderr)
		}
	})
	t.Run("gemma4_text per_layer_config", func(t *testing.T) {
		// transformers >= 5.2x saves the full layers' head_dim and kv heads
		// as per_layer_config; the published configs (the fixture's) as
		// global_head_dim and num_global_key_value_heads: one module.
		b, err := os.ReadFile("../../golden/testdata/gemma4_text/config.json")
		if err != nil {
			t.Fatal(err)
		}
		var c map[string]any
		if err := json.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		full := map[string]any{"head_dim": c["global_head_dim"], "num_key_value_heads": c["num_global_key_value_heads"]}
		c["per_layer_config"] = map[string]any{"1": full, "4": full, "5": full}
		delete(c, "global_head_dim")
		delete(c, "num_global_key_value_heads")
		d := t.TempDir()
		out, _ := json.Marshal(c)
		os.WriteFile(filepath.Join(d, "config.json"), out, 0o644)
		want := clitest.Run(t, bin, "emit", "../../golden/testdata/gemma4_text/config.json", "--kernels", "none")
		got := clitest.Run(t, bin, "emit", filepath.Join(d, "config.json"), "--kernels", "none")
		if want.Code != 0 || got.Code != 0 || got.Stdout != want.Stdout {
			t.Errorf("per_layer_config form: code %d (stderr %q), module equal %v; want the published form's module", got.Code, got.Stderr, got.Stdout == want.Stdout)
		}
	})
	t.Run("unknown model_type", func(t *testing.T) {
		cfg := filepath.Join(dir, "config.json")
		os.WriteFile(cfg, []byte(`{"model_type": "frobnicator"}`), 0o644)
		r := clitest.Run(t, bin, "emit", cfg)
		if r.Code != 1 || !strings.Contains(r.Stderr, `unsupported model_type "frobnicator"`) || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
			t.Fatalf("code %d, stderr %q; want one line naming the model_type", r.Code, r.Stderr)
		}
	})
}

// TestLinksNoRuntime: archc (emit, compile, check, list) is the compiler
// side only: it links neither the IREE worker nor the tokenizer.
func TestLinksNoRuntime(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"github.com/archc/archc/rt/iree", "github.com/archc/archc/rt/tokenizer", "github.com/archc/archc/rt"} {
		for _, dep := range strings.Fields(string(out)) {
			if dep == pkg {
				t.Errorf("cmd/archc links %s", pkg)
			}
		}
	}
}
