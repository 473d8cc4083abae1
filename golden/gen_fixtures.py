#!/usr/bin/env python3
"""Generate archc's oracle fixtures (DESIGN.md section 7, oracle tier).

For every entry of FIXTURES this writes golden/testdata/<name>/:

  config.json, generation_config.json, model.safetensors
      a tiny random-weight checkpoint in Hugging Face layout (fp32),
      written by save_pretrained(..., safe_serialization=True);
  oracle.json
      the HF fp32 eager-attention oracle: greedy token ids for a few
      prompts and the logits that produced the first generated token
      (plus, for the newer fixtures, RoPE tables and feature-switch checks).

An entry with mlx_module (a model type transformers lacks: remote code)
is built by mlx_oracle.py instead: config.json as published, random
weights under mlx-lm's names, and oracle.json from mlx-lm's model file in
float32 (no generation_config.json).

Other files in the folder (emit.summary, the structural golden) are kept.
The 13 fixtures of the first families (llama, qwen2, mistral, qwen3,
gemma, gemma2, gemma3, smollm3, olmo2, olmo3) are also recomputed by spec_forward, FAMILIES.md as
code, which must reproduce the oracle; every later fixture says
spec_check=False and rests on the HF oracle alone.

Everything is seeded and single-threaded, so a rerun with the same pinned
versions (requirements-oracle.txt) is byte-identical.

Run (from the repository root) with the oracle venv of
docs/adding-a-family.md step 0 (python3 -m venv .venv-oracle;
.venv-oracle/bin/pip install -r golden/requirements-oracle.txt):
    .venv-oracle/bin/python golden/gen_fixtures.py --out golden/testdata
    .venv-oracle/bin/python golden/gen_fixtures.py --only NAME

To add a family/config: append one dict to FIXTURES (model class, config
kwargs, seeds). Nothing else needs to change.
"""

import argparse
import hashlib
import json
import math
import os
import sys

import torch
import transformers
from safetensors.torch import load_file
from transformers import (
    Gemma2Config,
    Gemma2ForCausalLM,
    Gemma3ForCausalLM,
    Gemma3TextConfig,
    GemmaConfig,
    GemmaForCausalLM,
    GptOssConfig,
    GptOssForCausalLM,
    CohereConfig,
    CohereForCausalLM,
    Cohere2Config,
    Cohere2ForCausalLM,
    Ernie4_5Config,
    Ernie4_5ForCausalLM,
    ExaoneConfig,
    Exaone4Config,
    Exaone4ForCausalLM,
    GraniteConfig,
    InternLM3Config,
    GraniteForCausalLM,
    LlamaConfig,
    LlamaForCausalLM,
    MistralConfig,
    MistralForCausalLM,
    MixtralConfig,
    MixtralForCausalLM,
    GraniteMoeConfig,
    GraniteMoeForCausalLM,
    OlmoeConfig,
    OlmoeForCausalLM,
    Qwen2MoeConfig,
    Qwen2MoeForCausalLM,
    Qwen3MoeConfig,
    Qwen3MoeForCausalLM,
    Olmo2Config,
    Olmo2ForCausalLM,
    Olmo3Config,
    Olmo3ForCausalLM,
    Phi3Config,
    Phi3ForCausalLM,
    Qwen2Config,
    Qwen2ForCausalLM,
    Qwen3Config,
    Qwen3ForCausalLM,
    SeedOssConfig,
    SeedOssForCausalLM,
    SmolLM3Config,
    StableLmConfig,
    StableLmForCausalLM,
    Starcoder2Config,
    Starcoder2ForCausalLM,
    SmolLM3ForCausalLM,
)

MAX_NEW_TOKENS = 16
PROMPT_LENGTHS = (1, 7, 29)  # including the leading BOS
MIN_TOKEN_ID = 3  # prompt ids lie in [3, vocab-1]; 0..2 are pad/bos/eos-ish
# A fixture's generated files stay under 1 MiB: every fixture is committed
# (the tracked tree must fit a GPU machine's 64 MiB of carried files, with
# room for more families) and compiled and run by every CI run.
MAX_FOLDER_BYTES = 1 << 20
# The files this script writes into a fixture folder (and removes before
# writing); anything else there (emit.summary, the GGUF twins that
# gen_gguf_fixtures.py writes from the new checkpoint: rerun it) is left alone.
GENERATED_FILES = ("config.json", "generation_config.json", "model.safetensors", "oracle.json")
# mtp_reference.json is mtp_reference.py's (rerun it: it reads the
# checkpoint) and gguf.folded a hand-written note (gguf_test.go's
# foldedTwin).
KEPT_FILES = ("emit.summary", "model.f32.gguf", "model.q8_0.gguf", "oracle.q8_0.json", "gguf.skip", "gguf.folded", "mtp_reference.json")
# Every greedy step must win by at least this much over the runner-up, so a
# 1e-4-accurate reimplementation cannot flip a token (DESIGN.md section 7).
MIN_TOP2_MARGIN = 1e-3
LOGITS_CHECK_TOL = 1e-6
FULL_FORWARD_TOL = 1e-5
# A switch "matters" when turning it off moves some first-step logit by at
# least this much (100x the archc tolerance of 1e-4).
SWITCH_MIN_DIFF = 1e-2
WINDOW_PROMPT_LENGTHS = (1, 12, 29)  # for sliding_window 8
GDN_PROMPT_LENGTHS = (1, 9, 70)  # past torch_chunk_gated_delta_rule's chunk of 64
# spec_forward (FAMILIES.md as code) must match the oracle this closely
# (it is bit-identical today; same float32 ops in the same order).
SPEC_TOL = 1e-5

# Shared shape of the tiny Llama-family models.
TINY_LLAMA = dict(
    vocab_size=256,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=256,
    rms_norm_eps=1e-5,
    hidden_act="silu",
    bos_token_id=1,
    eos_token_id=2,
    initializer_range=0.2,
)

# Shared shape of the other families (no hidden_act: Gemma 2/3 call it
# hidden_activation and an unknown kwarg would be saved into config.json).
# pad 0 / bos 1 / eos 2 for every family (some defaults lie outside vocab 256).
TINY = dict(
    vocab_size=256,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    max_position_embeddings=256,
    pad_token_id=0,
    bos_token_id=1,
    eos_token_id=2,
    initializer_range=0.2,
)
# Olmo2/Olmo3 configs have no head_dim field (head_dim = hidden / heads).
TINY_NO_HEAD_DIM = {k: v for k, v in TINY.items() if k != "head_dim"}


# Switch mutators: each turns one feature off on a loaded config.
def _set(**kw):
    def mutate(cfg):
        for k, v in kw.items():
            setattr(cfg, k, v)

    return mutate


def _rope_type_default(layer_type):
    def mutate(cfg):
        theta = cfg.rope_parameters[layer_type]["rope_theta"]
        cfg.rope_parameters[layer_type] = {"rope_type": "default", "rope_theta": theta}

    return mutate


def _local_theta_as_global(cfg):
    theta = cfg.rope_parameters["full_attention"]["rope_theta"]
    cfg.rope_parameters["sliding_attention"] = {"rope_type": "default", "rope_theta": theta}


def _sub_set(sub, **kw):
    """Sets fields of a nested config (DbrxConfig's attn_config, ffn_config)."""
    def mutate(cfg):
        for k, v in kw.items():
            setattr(getattr(cfg, sub), k, v)

    return mutate


def _all_rope(cfg):
    cfg.no_rope_layers = [1] * cfg.num_hidden_layers


def _rope_param(**kw):
    def mutate(cfg):
        cfg.rope_parameters = dict(cfg.rope_parameters, **kw)

    return mutate


def _rewrite_config(out, **kw):
    """Updates config.json's keys (written sorted, as save_pretrained does)."""
    path = os.path.join(out, "config.json")
    with open(path) as f:
        cfg = json.load(f)
    cfg.update(kw)
    with open(path, "w") as f:
        f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def _mimo_checkpoint(out, gen):
    """A Qwen2 checkpoint as Xiaomi's MiMo-7B publishes it: model_type mimo,
    attention_bias true (MiMo's config; Qwen2Attention ignores it), and one
    multi-token-prediction layer model.mtp_layers.0.* (remote code
    modeling_mimo.py's MiMoMTPLayers) that plain generation never runs."""
    from safetensors.torch import save_file

    path = os.path.join(out, "model.safetensors")
    state = dict(load_file(path))
    cfg = json.load(open(os.path.join(out, "config.json")))
    H, I = cfg["hidden_size"], cfg["intermediate_size"]
    d, nh, nkv = cfg["head_dim"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    p = "model.mtp_layers.0."
    shapes = {
        "input_layernorm.weight": [H], "post_attention_layernorm.weight": [H],
        "token_layernorm.weight": [H], "hidden_layernorm.weight": [H], "final_layernorm.weight": [H],
        "input_proj.weight": [H, 2 * H],
        "self_attn.q_proj.weight": [nh * d, H], "self_attn.q_proj.bias": [nh * d],
        "self_attn.k_proj.weight": [nkv * d, H], "self_attn.k_proj.bias": [nkv * d],
        "self_attn.v_proj.weight": [nkv * d, H], "self_attn.v_proj.bias": [nkv * d],
        "self_attn.o_proj.weight": [H, nh * d],
        "mlp.gate_proj.weight": [I, H], "mlp.up_proj.weight": [I, H], "mlp.down_proj.weight": [H, I],
    }
    for name in sorted(shapes):
        state[p + name] = 0.2 * torch.randn(shapes[name], generator=gen, dtype=torch.float32)
    save_file(state, path, metadata={"format": "pt"})
    _rewrite_config(out, model_type="mimo", architectures=["MiMoForCausalLM"], attention_bias=True,
                    num_nextn_predict_layers=1)


def _olmo_hybrid_checkpoint(out, gen):
    """An OLMo Hybrid checkpoint as allenai publishes it: save_pretrained
    writes transformers' reverse of its olmo_hybrid conversion mapping
    (attention_layer_norm, feedforward_layer_norm, and linear_attn.conv1d as
    q_conv1d, k_conv1d, v_conv1d), but splits the conv into three equal
    chunks; the published files split it at the q, k and v widths, as here.
    Loading concatenates them again, so the oracle is unchanged."""
    from safetensors.torch import save_file

    path = os.path.join(out, "model.safetensors")
    state = dict(load_file(path))
    cfg = json.load(open(os.path.join(out, "config.json")))
    kd = cfg["linear_num_key_heads"] * cfg["linear_key_head_dim"]
    vd = cfg["linear_num_value_heads"] * cfg["linear_value_head_dim"]
    for name in [n for n in state if n.endswith("linear_attn.q_conv1d.weight")]:
        p = name[: -len("q_conv1d.weight")]
        w = torch.cat([state.pop(p + c + "_conv1d.weight") for c in "qkv"], dim=0)
        assert w.shape[0] == 2 * kd + vd, (name, w.shape)
        for c, part in zip("qkv", torch.split(w, [kd, kd, vd], dim=0)):
            state[p + c + "_conv1d.weight"] = part.contiguous()
    save_file(state, path, metadata={"format": "pt"})


def _minimax_checkpoint(out, gen):
    """Drops MiniMaxLightningAttention's decay buffers (slope_rate,
    query_decay, key_decay, diagonal_decay), which save_pretrained writes
    in the checkpoint's dtype: bf16-rounded slopes would be what HF runs.
    Missing, HF computes them at load (_init_weights, float32), as archc
    does from the config."""
    from safetensors.torch import save_file

    path = os.path.join(out, "model.safetensors")
    state = {k: v for k, v in load_file(path).items()
             if not k.endswith((".slope_rate", ".query_decay", ".key_decay", ".diagonal_decay"))}
    save_file(state, path, metadata={"format": "pt"})


def _minicpm_checkpoint(out, gen):
    """A Llama checkpoint as OpenBMB publishes MiniCPM: model_type minicpm
    with scale_emb, scale_depth and dim_model_base."""
    _rewrite_config(out, model_type="minicpm", architectures=["MiniCPMForCausalLM"],
                    scale_emb=12, scale_depth=1.4, dim_model_base=32)


def _minicpm_hooks(model):
    """MiniCPM's forward (openbmb/MiniCPM-2B-sft-bf16 modeling_minicpm.py)
    is Llama's with three scalings, put on LlamaForCausalLM as hooks with
    the same float32 ops:
      MiniCPMModel.forward:        inputs_embeds = embed_tokens(ids) * scale_emb
      MiniCPMDecoderLayer.forward: h = residual + h * (scale_depth / math.sqrt(num_hidden_layers))
                                   (after self_attn and after mlp)
      MiniCPMForCausalLM.forward:  logits = lm_head(h / (hidden_size / dim_model_base))"""
    c = model.config
    depth = c.scale_depth / math.sqrt(c.num_hidden_layers)
    model.model.embed_tokens.register_forward_hook(lambda m, i, o: o * c.scale_emb)
    for layer in model.model.layers:
        layer.self_attn.register_forward_hook(lambda m, i, o: (o[0] * depth,) + tuple(o[1:]))
        layer.mlp.register_forward_hook(lambda m, i, o: o * depth)
    model.lm_head.register_forward_pre_hook(lambda m, i: (i[0] / (c.hidden_size / c.dim_model_base),) + tuple(i[1:]))
    return model


def _internlm3_checkpoint(out, gen):
    """config.json as the published InternLM3 checkpoints spell it: the
    biases as qkv_bias and bias (transformers' attribute_map reads them)."""
    path = os.path.join(out, "config.json")
    cfg = json.load(open(path))
    cfg["qkv_bias"], cfg["bias"] = cfg.pop("attention_bias"), cfg.pop("mlp_bias")
    cfg["architectures"] = ["InternLM3ForCausalLM"]
    with open(path, "w") as f:
        f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def _rope_default(cfg):
    cfg.rope_parameters = {"rope_type": "default", "rope_theta": cfg.rope_parameters["rope_theta"]}


def _partial_rotary(factor):
    def mutate(cfg):
        cfg.rope_parameters["partial_rotary_factor"] = factor

    return mutate


def _in_text_config(mutate):
    """mutate applied to a composite config's text decoder (Qwen3_5Config)."""
    return lambda cfg: mutate(cfg.get_text_config())


def _long_as_short(cfg):
    cfg.rope_parameters["long_factor"] = list(cfg.rope_parameters["short_factor"])


def _qwen2_vl_published_rope(out, gen):
    """text_config's RoPE as the published Qwen2.5-VL configs spell it:
    rope_scaling {"type": "mrope", "mrope_section": ...} and rope_theta
    (Qwen2VLTextConfig.convert_rope_params_to_dict reads "mrope" as the
    default RoPE)."""
    path = os.path.join(out, "config.json")
    with open(path) as f:
        cfg = json.load(f)
    tc = cfg["text_config"]
    rp = tc.pop("rope_parameters")
    tc["rope_theta"] = rp["rope_theta"]
    tc["rope_scaling"] = {"type": "mrope", "mrope_section": rp["mrope_section"]}
    with open(path, "w") as f:
        f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def _qwen3_vl_moe_published_experts(out, gen):
    """The stacked experts as the published Qwen3-VL-MoE checkpoints store
    them, gate_up_proj [E, hidden, 2I] and down_proj [E, I, hidden]:
    transformers transposes them on load (conversion_mapping's
    Transpose(1, 2, check_dims=True), which takes either layout) and
    save_pretrained writes its own [E, 2I, hidden] / [E, hidden, I]."""
    from safetensors.torch import save_file
    path = os.path.join(out, "model.safetensors")
    state = dict(load_file(path))
    for k in list(state):
        if k.endswith(("mlp.experts.gate_up_proj", "mlp.experts.down_proj")):
            state[k] = state[k].transpose(1, 2).contiguous()
    save_file(state, path, metadata={"format": "pt"})


def _kimi_k25_published_names(out, gen):
    """The text model's tensors as the published Kimi K2.5 checkpoints name
    them, language_model.model.layers.N.*: save_pretrained reverses
    conversion_mapping's kimi_k25 rename blocks -> layers (meant for the
    vision tower) on every name and writes language_model.model.blocks.N.*,
    which transformers reads back either way."""
    from safetensors.torch import save_file
    path = os.path.join(out, "model.safetensors")
    state = dict(load_file(path))
    prefix = "language_model.model.blocks."
    state = {("language_model.model.layers." + k[len(prefix):] if k.startswith(prefix) else k): v
             for k, v in state.items()}
    save_file(state, path, metadata={"format": "pt"})


def _exaone_checkpoint(out, gen):
    """config.json as LG publishes EXAONE 3.x: num_layers,
    layer_norm_epsilon, activation_function (transformers' attribute_map
    reads them); the tensors are already under the GPT-2-style names
    (save_pretrained reverses transformers' exaone renaming)."""
    path = os.path.join(out, "config.json")
    cfg = json.load(open(path))
    for old, new in (("num_hidden_layers", "num_layers"), ("rms_norm_eps", "layer_norm_epsilon"),
                     ("hidden_act", "activation_function")):
        cfg[new] = cfg.pop(old)
    cfg["architectures"] = ["ExaoneForCausalLM"]
    with open(path, "w") as f:
        f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def _gemma4_hub_config(global_head_dim, num_global_key_value_heads):
    """config.json as the published Gemma 4 checkpoints spell it:
    global_head_dim and num_global_key_value_heads (which
    Gemma4TextConfig.__post_init__ turns into per_layer_config for the full
    layers) instead of the per_layer_config transformers 5.24 saves."""
    def post_save(out, gen):
        path = os.path.join(out, "config.json")
        cfg = json.load(open(path))
        plc = cfg.pop("per_layer_config")
        want = {str(i): {"head_dim": global_head_dim, "num_key_value_heads": num_global_key_value_heads}
                for i, t in enumerate(cfg["layer_types"]) if t == "full_attention"}
        assert plc == want, plc
        _rewrite_config(out, global_head_dim=global_head_dim, num_global_key_value_heads=num_global_key_value_heads)
        with open(path) as f:
            cfg = json.load(f)
        cfg.pop("per_layer_config", None)
        with open(path, "w") as f:
            f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")

    return post_save


def _nemotron_h_pattern_config(out, gen):
    """config.json as NVIDIA publishes Nemotron-H: the layers as
    hybrid_override_pattern (a character a layer: M Mamba2, * attention,
    - MLP, E MoE) and num_hidden_layers, where transformers 5 writes the
    layers_block_type list (NemotronHConfig reads both)."""
    path = os.path.join(out, "config.json")
    cfg = json.load(open(path))
    kinds = cfg.pop("layers_block_type")
    cfg["hybrid_override_pattern"] = "".join({"linear_attention": "M", "full_attention": "*", "mlp": "-", "moe": "E"}[k]
                                             for k in kinds)
    cfg["num_hidden_layers"] = len(kinds)
    with open(path, "w") as f:
        f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def _falcon_h1_auto_head(out, gen):
    """config.json with mamba_d_head "auto", as FalconH1Config takes it
    (transformers writes the resolved number)."""
    path = os.path.join(out, "config.json")
    cfg = json.load(open(path))
    cfg["mamba_d_head"] = "auto"
    with open(path, "w") as f:
        f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


WINDOW_OFF = ("window_matters", "sliding_window=4096 (no key is cut)", _set(sliding_window=4096))

# The fixture table. One entry per fixture; keep names stable, Go tests
# refer to them.
#   name         folder name under --out
#   model_cls    HF model class (or its name, resolved when the fixture is built)
#   config_cls   HF config class (or its name, resolved when the fixture is built)
#   config       kwargs for config_cls (as a user would pass them)
#   seed         seed for the weights
#   prompt_seed  seed for the prompt ids
#   weight_std   std of the random matrices (embeddings, projections)
#   norm_std     norm weights are 1 + norm_std * N(0, 1)
#   bias_std     biases are bias_std * N(0, 1)
#   check_rope_scaling   print/verify that rope scaling changes inv_freq
# (weight_std, norm_std, bias_std and check_rope_scaling default to
# FIXTURE_DEFAULTS.)
# Optional keys (absent from the llama entries, whose files must stay
# byte-identical):
#   prompt_lengths  prompt lengths incl. BOS (default PROMPT_LENGTHS); the
#                   sliding-window fixtures use (1, 12, 29) with window 8
#   norm_center     norm weights are norm_center + norm_std * N(0, 1)
#                   (default 1.0)
#   embed_std       std of embed_tokens.weight (default weight_std)
#   The Gemma entries use a small embed_std and (1 + w) ~ 2..3: with tied
#   embeddings scaled by sqrt(hidden) the input token's own embedding
#   otherwise dominates the last hidden state and greedy decoding repeats
#   one token (usually BOS) forever.
#   record_rope     write the HF inv_freq / attention_scaling per layer type
#                   into oracle.json ("rope")
#   extra_params    {name suffix: (center, std)}: parameters randomize_'s
#                   rules do not know (a family's own scalars or gains)
#   spec_check      False: the fixture's family is not in spec_forward
#                   (FAMILIES.md as code covers the first 13 fixtures; the
#                   later families are checked against HF alone)
#   post_save       f(folder, generator): rewrites the saved checkpoint
#                   (a family transformers lacks, written as its nearest
#                   HF class plus what the published checkpoints add)
#   oracle_config   True: the oracle loads config_cls.from_pretrained(folder)
#                   (the saved model_type is not config_cls's)
#   oracle_hooks    f(model): the family's forward as hooks on model_cls
#                   (MiniCPM: Llama plus three scalings)
#   expert_std      std of stacked expert tensors (GptOss gate_up_proj,
#                   down_proj; their ..._proj_bias take bias_std)
#   sink_std        std of attention sinks (GptOss self_attn.sinks)
#   plain_norms     name suffixes of norm gains applied as w (drawn around
#                   1.0) in a model whose other norms are (1 + w) (drawn
#                   around norm_center)
#   a_values        per-head A of the gated DeltaNet layers (A_log = log A):
#                   slow and fast decays, so long prompts exercise the state
#   score_bias_std  std of routers' selection biases (e_score_correction_bias:
#                   Ernie 4.5 MoE, DeepSeek-V3-style routers)
#   stored_dtype    "bfloat16": every parameter is rounded to bf16 and the
#                   checkpoint stored so (half the bytes of f32: the tracked
#                   tree's limit); the oracle loads it in float32, which
#                   widens it exactly, so it still computes in f32 alone
#   switches        list of (key, what, mutate): mutate(config) turns one
#                   feature off; the oracle model is rebuilt from the same
#                   weights with that config and the first-step logits must
#                   move by >= SWITCH_MIN_DIFF for some prompt. oracle.json
#                   gets key: true and the details under "switch_checks".
#   mlx_module      a model type transformers lacks (remote code): the
#                   oracle is mlx-lm's model file of this name
#                   (mlx_lm.models.<mlx_module>) in float32 on the CPU, as
#                   mlx_oracle.py runs it; no model_cls/config_cls, config
#                   is config.json as the published checkpoint writes it,
#                   the weights take their names and shapes from mlx-lm's
#                   model on it; a switch's mutate is a dict of config.json
#                   overrides
#   generation_config  with mlx_module: generation_config.json as published
#                   (where a checkpoint keeps its eos_token_id: Qwen)
#   unstack         (mlx-lm's stacked experts module, the published one):
#                   the checkpoint holds the experts mlx-lm stacks at load
#                   one by one ("switch_mlp", "experts": experts.{e}.*)
# The keys an entry may leave out (the values nearly every fixture uses).
FIXTURE_DEFAULTS = dict(weight_std=0.2, norm_std=0.1, bias_std=0.1, check_rope_scaling=False)

FIXTURES = [
    dict(
        name="llama-tied",
        model_cls=LlamaForCausalLM,
        config_cls=LlamaConfig,
        config=dict(
            TINY_LLAMA,
            tie_word_embeddings=True,
            attention_bias=False,
            rope_theta=10000.0,
        ),
        seed=1234,
        prompt_seed=4321,
    ),
    dict(
        name="llama-untied-llama3",
        model_cls=LlamaForCausalLM,
        config_cls=LlamaConfig,
        config=dict(
            TINY_LLAMA,
            tie_word_embeddings=False,
            attention_bias=True,
            head_dim=16,
            rope_theta=500000.0,
            # original_max_position_embeddings=64 puts the 8 rotary
            # frequencies of head_dim 16 into all three llama3 bands:
            # wavelen < 16 (kept), 16..64 (smoothed), > 64 (divided by 8).
            rope_scaling={
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 64,
            },
        ),
        seed=5678,
        prompt_seed=8765,
        check_rope_scaling=True,
    ),
    # ---- qwen2: q/k/v bias, o_proj without bias -------------------------
    dict(
        name="qwen2-tied",
        model_cls=Qwen2ForCausalLM,
        config_cls=Qwen2Config,
        config=dict(
            TINY,
            hidden_act="silu",
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            rope_theta=1000000.0,
            use_sliding_window=False,  # config then stores sliding_window null
        ),
        seed=2101,
        prompt_seed=1201,
        record_rope=True,
    ),
    dict(
        # layer_types = [full, sliding, sliding] (i >= max_window_layers)
        name="qwen2-sliding",
        model_cls=Qwen2ForCausalLM,
        config_cls=Qwen2Config,
        config=dict(
            TINY,
            hidden_act="silu",
            num_hidden_layers=3,
            intermediate_size=96,
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            rope_theta=1000000.0,
            use_sliding_window=True,
            sliding_window=8,
            max_window_layers=1,
        ),
        seed=2102,
        prompt_seed=1202,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        record_rope=True,
        switches=[WINDOW_OFF],
    ),
    # ---- mistral: every layer sliding -----------------------------------
    dict(
        name="mistral-sliding",
        model_cls=MistralForCausalLM,
        config_cls=MistralConfig,
        config=dict(
            TINY,
            hidden_act="silu",
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            sliding_window=8,
        ),
        seed=2201,
        prompt_seed=1301,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        record_rope=True,
        switches=[("window_matters", "sliding_window=None (plain causal)", _set(sliding_window=None))],
    ),
    # ---- mixtral: sparse MoE MLP, 8 SwiGLU experts, top-2 renormalised ---
    dict(
        name="mixtral",
        model_cls=MixtralForCausalLM,
        config_cls=MixtralConfig,
        config=dict(
            TINY,
            hidden_act="silu",
            intermediate_size=48,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            num_local_experts=8,
            num_experts_per_tok=2,
        ),
        seed=4102,
        prompt_seed=4201,
        record_rope=True,
        spec_check=False,
        moe=True,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- qwen2_moe: 8 experts top 2 (not renormalised) + sigmoid-gated
    # shared expert on layer 0; layer 1 is in mlp_only_layers (dense MLP)
    dict(
        name="qwen2_moe",
        model_cls=Qwen2MoeForCausalLM,
        config_cls=Qwen2MoeConfig,
        config=dict(
            TINY,
            hidden_act="silu",
            intermediate_size=80,
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            num_experts=8,
            num_experts_per_tok=2,
            moe_intermediate_size=24,
            shared_expert_intermediate_size=40,
            norm_topk_prob=False,
            mlp_only_layers=[1],
        ),
        seed=4302,
        prompt_seed=4401,
        record_rope=True,
        spec_check=False,
        moe=True,
    ),
    # ---- qwen3_moe: per-head q/k norm, 16 experts top 4 renormalised, 3
    # layers with decoder_sparse_step 2 (layer 1 sparse, layers 0, 2 dense)
    dict(
        name="qwen3_moe",
        model_cls=Qwen3MoeForCausalLM,
        config_cls=Qwen3MoeConfig,
        config=dict(
            TINY,
            num_hidden_layers=3,
            hidden_act="silu",
            intermediate_size=72,
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            rope_theta=10000.0,
            num_experts=16,
            num_experts_per_tok=4,
            moe_intermediate_size=20,
            norm_topk_prob=True,
            decoder_sparse_step=2,
        ),
        seed=4502,
        prompt_seed=4601,
        record_rope=True,
        spec_check=False,
        moe=True,
    ),
    # ---- olmoe: q/k norm over the projection, clip_qkv, 8 experts top 2
    dict(
        name="olmoe",
        model_cls=OlmoeForCausalLM,
        config_cls=OlmoeConfig,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            intermediate_size=40,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            num_experts=8,
            num_experts_per_tok=2,
            clip_qkv=0.5,
        ),
        seed=4701,
        prompt_seed=4801,
        record_rope=True,
        spec_check=False,
        moe=True,
        switches=[("clip_qkv_matters", "clip_qkv=None", _set(clip_qkv=None))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- granitemoe: granite's multipliers, fused experts, top-k then softmax
    dict(
        name="granitemoe",
        model_cls=GraniteMoeForCausalLM,
        config_cls=GraniteMoeConfig,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            intermediate_size=32,
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            embedding_multiplier=12.0,
            attention_multiplier=0.0625,
            residual_multiplier=0.22,
            logits_scaling=8.0,
            num_local_experts=8,
            num_experts_per_tok=3,
        ),
        seed=4903,
        prompt_seed=5001,
        embed_std=0.02,
        record_rope=True,
        spec_check=False,
        moe=True,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- qwen3: per-head q/k RMSNorm before RoPE ------------------------
    dict(
        name="qwen3-tied",
        model_cls=Qwen3ForCausalLM,
        config_cls=Qwen3Config,
        config=dict(
            TINY,
            hidden_act="silu",
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            rope_theta=1000000.0,
        ),
        seed=2302,
        prompt_seed=1401,
        record_rope=True,
    ),
    dict(
        name="qwen3-untied",
        model_cls=Qwen3ForCausalLM,
        config_cls=Qwen3Config,
        config=dict(
            TINY,
            hidden_act="silu",
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            rope_theta=1000000.0,
        ),
        seed=2303,
        prompt_seed=1402,
        record_rope=True,
    ),
    # ---- gemma: (1 + w) norms, sqrt(hidden) embedding scale, GeGLU -------
    # hidden 80 != heads * head_dim 64 (as in Gemma 7B / Gemma 3 270M), and
    # sqrt(80) is not exact in float32.
    dict(
        name="gemma-tied",
        model_cls=GemmaForCausalLM,
        config_cls=GemmaConfig,
        config=dict(
            TINY,
            hidden_size=80,
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            rope_theta=10000.0,
        ),
        seed=2401,
        prompt_seed=1501,
        embed_std=0.07,
        norm_center=1.0,  # (1 + w) ~ 2
        record_rope=True,
    ),
    # ---- gemma2: 4 norms, soft-caps, query_pre_attn_scalar, sliding/global
    dict(
        name="gemma2-sliding",
        model_cls=Gemma2ForCausalLM,
        config_cls=Gemma2Config,
        config=dict(
            TINY,
            num_hidden_layers=4,
            intermediate_size=64,
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            rope_theta=10000.0,
            query_pre_attn_scalar=24,
            attn_logit_softcapping=50.0,
            final_logit_softcapping=30.0,
            sliding_window=8,
        ),
        seed=2502,
        prompt_seed=1601,
        embed_std=0.1,
        norm_center=2.0,  # (1 + w) ~ 3
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        record_rope=True,
        switches=[
            WINDOW_OFF,
            ("attn_softcap_matters", "attn_logit_softcapping=None", _set(attn_logit_softcapping=None)),
            ("final_softcap_matters", "final_logit_softcapping=None", _set(final_logit_softcapping=None)),
            ("query_pre_attn_scalar_matters", "query_pre_attn_scalar=head_dim (16)", _set(query_pre_attn_scalar=16)),
        ],
    ),
    # ---- gemma3_text: q/k (1 + w) norms, local/global RoPE, linear scaling
    # Passed the way a transformers-4.x config.json is read (rope_theta,
    # rope_local_base_freq, rope_scaling, sliding_window_pattern); saved in
    # the v5 form (rope_parameters per layer type, layer_types).
    # layer_types = [sliding, sliding, full, sliding] ((i + 1) % 3 != 0).
    dict(
        name="gemma3-text-sliding",
        model_cls=Gemma3ForCausalLM,
        config_cls=Gemma3TextConfig,
        config=dict(
            TINY,
            hidden_size=80,
            num_hidden_layers=4,
            intermediate_size=64,
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            rope_theta=1000000.0,
            rope_local_base_freq=10000.0,
            rope_scaling={"rope_type": "linear", "factor": 8.0},
            query_pre_attn_scalar=24,
            sliding_window=8,
            sliding_window_pattern=3,
        ),
        seed=2601,
        prompt_seed=1701,
        embed_std=0.07,
        norm_center=2.0,  # (1 + w) ~ 3
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        record_rope=True,
        switches=[
            WINDOW_OFF,
            ("global_rope_scaling_matters", "full_attention rope_type default", _rope_type_default("full_attention")),
            ("local_rope_base_matters", "sliding_attention rope_theta = global", _local_theta_as_global),
        ],
    ),
    # ---- gemma4_text (issue 21): per-layer inputs (PLE), KV sharing (the
    # last 3 of 6 layers read the caches of layers 2 (sliding) and 1 (full)),
    # attention_k_eq_v with num_global_key_value_heads 1 and global_head_dim
    # 24 on full layers, proportional RoPE there, sliding window 8 (prompts
    # up to 29 tokens), double-wide MLPs in the shared layers, layer_scalar,
    # final soft-cap 10. config.json in the published form (global_head_dim).
    # No switch turns KV sharing off: the shared layers' MLPs are
    # double-wide, so their checkpoint no longer fits a model without
    # sharing (and they have no k/v projections at all). Nor does one turn
    # PLE off: Gemma4TextModel._maybe_slice_kv_shared_inputs (transformers
    # 5.24) indexes the per-layer inputs it then lacks. ----
    dict(
        name="gemma4_text",
        model_cls="Gemma4ForCausalLM",
        config_cls="Gemma4TextConfig",
        config=dict(
            TINY,
            num_hidden_layers=6,
            intermediate_size=48,
            layer_types=["sliding_attention", "full_attention", "sliding_attention",
                         "sliding_attention", "full_attention", "full_attention"],
            sliding_window=8,
            global_head_dim=24,
            num_global_key_value_heads=1,
            attention_k_eq_v=True,
            num_kv_shared_layers=3,
            use_double_wide_mlp=True,
            vocab_size_per_layer_input=256,
            hidden_size_per_layer_input=8,
            final_logit_softcapping=10.0,
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
        ),
        seed=2611,
        prompt_seed=1711,
        embed_std=0.07,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        record_rope=True,
        post_save=_gemma4_hub_config(24, 1),
        spec_check=False,
        switches=[
            WINDOW_OFF,
            ("proportional_rope_matters", "full_attention rope_type default (the whole head rotates)",
             _rope_type_default("full_attention")),
            ("k_eq_v_matters", "attention_k_eq_v=False (full layers read a v_proj: fresh weights)",
             _set(attention_k_eq_v=False)),
        ],
    ),
    # ---- gemma4_text-moe (issue 21): the 26B-A4B layout: each layer's MLP
    # beside an MoE (Gemma4TextRouter: RMS-normalised input times a learned
    # scale, softmax, top 2 of 4 renormalised, times per_expert_scale;
    # Gemma4TextExperts' stacked gate_up_proj / down_proj parameters), its
    # own pre/post norms; no PLE, no KV sharing; attention_k_eq_v with one
    # global kv head, window 8. ----
    dict(
        name="gemma4_text-moe",
        model_cls="Gemma4ForCausalLM",
        config_cls="Gemma4TextConfig",
        config=dict(
            TINY,
            num_hidden_layers=4,
            intermediate_size=32,
            layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
            sliding_window=8,
            global_head_dim=32,
            num_global_key_value_heads=1,
            attention_k_eq_v=True,
            hidden_size_per_layer_input=0,
            enable_moe_block=True,
            num_experts=4,
            top_k_experts=2,
            moe_intermediate_size=16,
            final_logit_softcapping=30.0,
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
        ),
        seed=2612,
        prompt_seed=1712,
        embed_std=0.07,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        post_save=_gemma4_hub_config(32, 1),
        spec_check=False,
        moe=True,
        switches=[
            WINDOW_OFF,
            ("moe_matters", "enable_moe_block=False (the dense MLP alone)", _set(enable_moe_block=False)),
        ],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- smollm3: NoPE layers (no_rope_layers[i] == 0) ------------------
    dict(
        name="smollm3-nope",
        model_cls=SmolLM3ForCausalLM,
        config_cls=SmolLM3Config,
        config=dict(
            TINY,
            hidden_act="silu",
            num_hidden_layers=4,
            intermediate_size=64,
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            rope_theta=5000000.0,
            no_rope_layers=[1, 0, 1, 1],
        ),
        seed=2701,
        prompt_seed=1801,
        record_rope=True,
        switches=[("nope_matters", "no_rope_layers all 1 (RoPE everywhere)", _all_rope)],
    ),
    # ---- olmo2: post-norm block, flat q/k RMSNorm -----------------------
    dict(
        name="olmo2",
        model_cls=Olmo2ForCausalLM,
        config_cls=Olmo2Config,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            rope_theta=500000.0,
        ),
        seed=2801,
        prompt_seed=1901,
        record_rope=True,
    ),
    # ---- olmo3: olmo2 + sliding layers + yarn on full-attention layers ---
    # layer_types = [sliding, sliding, sliding, full] ((i + 1) % 4 != 0).
    # original_max_position_embeddings 64 with head_dim 16, theta 500000:
    # yarn keeps frequency 0, blends 1, divides 2..7 by the factor.
    dict(
        name="olmo3-sliding-yarn",
        model_cls=Olmo3ForCausalLM,
        config_cls=Olmo3Config,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            num_hidden_layers=4,
            intermediate_size=64,
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            rope_theta=500000.0,
            rope_scaling={
                "rope_type": "yarn",
                "factor": 4.0,
                "original_max_position_embeddings": 64,
            },
            sliding_window=8,
        ),
        seed=2901,
        prompt_seed=2001,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        record_rope=True,
        switches=[
            WINDOW_OFF,
            ("yarn_matters", "full_attention rope_type default", _rope_type_default("full_attention")),
        ],
    ),
    # ---- dense pack 2 (issue 10): spec_forward does not cover these; the
    # HF modeling file is the reference. Unusual sizes: explicit head_dim
    # with heads * head_dim != hidden, GQA.
    # ---- seed_oss: q/k/v bias (attention_bias), o_proj bias of its own
    dict(
        name="seed_oss",
        model_cls=SeedOssForCausalLM,
        config_cls=SeedOssConfig,
        config=dict(
            TINY,
            hidden_size=48,
            hidden_act="silu",
            intermediate_size=80,
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            attention_bias=True,
            attention_out_bias=True,
        ),
        seed=3002,
        prompt_seed=3101,
        record_rope=True,
        spec_check=False,
        switches=[("out_bias_matters", "attention_out_bias=False", _set(attention_out_bias=False))],
    ),
    # ---- mimo: Qwen2 plus multi-token-prediction layers generation ignores
    # (not in transformers: the oracle is Qwen2ForCausalLM on the same
    # folder, the MTP tensors present and unused)
    dict(
        name="mimo",
        model_cls=Qwen2ForCausalLM,
        config_cls=Qwen2Config,
        config=dict(
            TINY,
            hidden_size=48,
            hidden_act="silu",
            intermediate_size=96,
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            rope_theta=640000.0,
            use_sliding_window=False,
        ),
        seed=3201,
        prompt_seed=3301,
        record_rope=True,
        spec_check=False,
        post_save=_mimo_checkpoint,
        oracle_config=True,
    ),
    # ---- granite: embedding, attention, residual multipliers; logits divided
    dict(
        name="granite",
        model_cls=GraniteForCausalLM,
        config_cls=GraniteConfig,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            intermediate_size=96,
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            embedding_multiplier=12.0,
            attention_multiplier=0.0625,
            residual_multiplier=0.22,
            logits_scaling=8.0,
        ),
        seed=3401,
        prompt_seed=3501,
        embed_std=0.02,
        record_rope=True,
        spec_check=False,
        switches=[
            ("embedding_multiplier_matters", "embedding_multiplier=1", _set(embedding_multiplier=1.0)),
            ("attention_multiplier_matters", "attention_multiplier=head_dim^-0.5", _set(attention_multiplier=0.25)),
            ("residual_multiplier_matters", "residual_multiplier=1", _set(residual_multiplier=1.0)),
            ("logits_scaling_matters", "logits_scaling=1", _set(logits_scaling=1.0)),
        ],
    ),
    # ---- minicpm: Llama with µP scalings (not in transformers: the oracle is
    # LlamaForCausalLM with MiniCPM's three scalings as hooks, _minicpm_hooks)
    dict(
        name="minicpm",
        model_cls=LlamaForCausalLM,
        config_cls=LlamaConfig,
        config=dict(
            TINY_LLAMA,
            intermediate_size=96,
            rms_norm_eps=1e-5,
            tie_word_embeddings=True,
            rope_theta=10000.0,
            pad_token_id=0,
        ),
        seed=3601,
        prompt_seed=3701,
        embed_std=0.1,
        record_rope=True,
        spec_check=False,
        post_save=_minicpm_checkpoint,
        oracle_config=True,
        oracle_hooks=_minicpm_hooks,
        switches=[
            ("scale_emb_matters", "scale_emb=1", _set(scale_emb=1)),
            ("scale_depth_matters", "scale_depth=0.5", _set(scale_depth=0.5)),
            ("dim_model_base_matters", "dim_model_base=hidden_size", _set(dim_model_base=64)),
        ],
    ),
    # ---- helium: llama with interleaved (GPT-J) RoPE pairs and an o_proj
    # without bias (archs/helium.arch). attention_bias and mlp_bias on, so
    # that q/k/v and the MLP carry biases and o_proj's absence shows;
    # head_dim must be hidden/heads (HeliumAttention's o_proj takes
    # hidden_size inputs). No GGUF twin: llama.cpp has no Helium.
    dict(
        name="helium",
        model_cls=transformers.HeliumForCausalLM,
        config_cls=transformers.HeliumConfig,
        config=dict(
            TINY,
            hidden_act="silu",
            intermediate_size=96,
            rms_norm_eps=1e-6,
            attention_bias=True,
            mlp_bias=True,
            tie_word_embeddings=False,
            rope_theta=10000.0,
        ),
        seed=6101,
        prompt_seed=6036,
        spec_check=False,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- internlm3: Llama with q/k/v/o and MLP biases (spelled qkv_bias,
    # bias), dynamic NTK RoPE (inactive below max_position_embeddings)
    dict(
        name="internlm3",
        model_cls=LlamaForCausalLM,
        config_cls=InternLM3Config,
        config=dict(
            TINY,
            hidden_size=48,
            hidden_act="silu",
            intermediate_size=80,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_theta=50000.0,
            rope_scaling={"rope_type": "dynamic", "factor": 6.0},
            attention_bias=True,
            mlp_bias=True,
        ),
        seed=3801,
        prompt_seed=3901,
        record_rope=True,
        spec_check=False,
        post_save=_internlm3_checkpoint,
        oracle_config=True,  # LlamaConfig would not read qkv_bias / bias
        switches=[("bias_matters", "qkv_bias=bias=False", _set(attention_bias=False, mlp_bias=False))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- arcee: llama with a non-gated relu2 MLP (archs/arcee.arch):
    # mlp_bias on; explicit head_dim 24 (not hidden/heads) and GQA.
    dict(
        name="arcee",
        model_cls=transformers.ArceeForCausalLM,
        config_cls=transformers.ArceeConfig,
        config=dict(
            TINY,
            head_dim=24,
            hidden_act="relu2",
            intermediate_size=96,
            rms_norm_eps=1e-5,
            mlp_bias=True,
            attention_bias=False,
            tie_word_embeddings=False,
            rope_theta=10000.0,
        ),
        seed=5173,
        prompt_seed=5174,
        spec_check=False,
    ),
    # ---- starcoder2: LayerNorm with bias, biases everywhere, non-gated
    # gelu_pytorch_tanh MLP, sliding window on every layer
    dict(
        name="starcoder2-sliding",
        model_cls=Starcoder2ForCausalLM,
        config_cls=Starcoder2Config,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="gelu_pytorch_tanh",
            intermediate_size=96,
            norm_epsilon=1e-5,
            tie_word_embeddings=True,
            rope_theta=100000.0,
            sliding_window=8,
            use_bias=True,
        ),
        seed=4001,
        prompt_seed=4103,
        embed_std=0.1,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        record_rope=True,
        spec_check=False,
        switches=[WINDOW_OFF, ("use_bias_matters", "use_bias=False (projection biases)", _set(use_bias=False))],
    ),
    # ---- stablelm: LayerNorm with bias, partial rotary (0.25 of head_dim),
    # sequential residual; and with per-head q/k LayerNorm (qk_layernorm),
    # q/k/v biases and the parallel residual
    dict(
        name="stablelm",
        model_cls=StableLmForCausalLM,
        config_cls=StableLmConfig,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            intermediate_size=96,
            layer_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
        ),
        seed=4202,
        prompt_seed=4302,
        record_rope=True,
        spec_check=False,
        switches=[("partial_rotary_matters", "partial_rotary_factor=1", _partial_rotary(1.0))],
    ),
    dict(
        name="stablelm-qknorm-parallel",
        model_cls=StableLmForCausalLM,
        config_cls=StableLmConfig,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            intermediate_size=96,
            layer_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            partial_rotary_factor=0.5,
            use_qkv_bias=True,
            qk_layernorm=True,
            use_parallel_residual=True,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
        ),
        seed=4401,
        prompt_seed=4502,
        record_rope=True,
        spec_check=False,
        switches=[("qk_layernorm_matters", "qk_layernorm=False", _set(qk_layernorm=False))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- phi3: fused qkv_proj / gate_up_proj, partial rotary, LongRoPE,
    # sliding window. original_max_position_embeddings 20: the 1- and
    # 4-token prompts stay on the short factors for all 16 new tokens
    # (length <= 20), the 29-token prompt uses the long ones from its
    # prefill on (HF picks them by the sequence length > 20). No prompt
    # crosses 20 while decoding (phi3-longrope-cross does).
    dict(
        name="phi3-longrope",
        model_cls=Phi3ForCausalLM,
        config_cls=Phi3Config,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            intermediate_size=80,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            partial_rotary_factor=0.5,
            original_max_position_embeddings=20,
            rope_scaling={
                "rope_type": "longrope",
                "short_factor": [1.0, 1.25, 1.5, 2.0],
                "long_factor": [1.0, 3.0, 9.0, 27.0],
            },
            sliding_window=8,
        ),
        seed=4601,
        prompt_seed=4701,
        prompt_lengths=(1, 4, 29),
        record_rope=True,
        spec_check=False,
        switches=[
            WINDOW_OFF,
            ("long_factor_matters", "long_factor = short_factor", _long_as_short),
        ],
    ),
    # ---- phi3-longrope-cross: sequences that cross
    # original_max_position_embeddings (80). The 70-token prompt crosses
    # while decoding: on the step that feeds position 80,
    # Phi3ForCausalLM.prepare_inputs_for_generation drops the cache and
    # recomputes all 81 tokens with the long factors (archc: rt recomputes
    # the slot's keys, LengthRule.Recompute). The 90-token prompt is longer
    # than 80 and than the first prefill chunk (64): HF runs it in one call
    # with the long factors, archc in two chunks, each told the prompt's
    # total length. No window, so that every cached key counts; otherwise
    # as phi3-longrope.
    dict(
        name="phi3-longrope-cross",
        model_cls=Phi3ForCausalLM,
        config_cls=Phi3Config,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            intermediate_size=80,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            partial_rotary_factor=0.5,
            original_max_position_embeddings=80,
            rope_scaling={
                "rope_type": "longrope",
                "short_factor": [1.0, 1.25, 1.5, 2.0],
                "long_factor": [1.0, 3.0, 9.0, 27.0],
            },
            sliding_window=None,  # every key counts: a stale chunk cannot hide outside a window
        ),
        seed=4602,
        prompt_seed=4702,
        prompt_lengths=(1, 70, 90),
        record_rope=True,
        spec_check=False,
        switches=[
            ("long_factor_matters", "long_factor = short_factor", _long_as_short),
        ],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- exaone: Llama under GPT-2-style tensor and config names, llama3 RoPE
    dict(
        name="exaone-llama3",
        model_cls=LlamaForCausalLM,
        config_cls=ExaoneConfig,
        config=dict(
            TINY,
            hidden_size=48,
            hidden_act="silu",
            intermediate_size=80,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_theta=500000.0,
            rope_scaling={
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 64,
            },
        ),
        seed=4802,
        prompt_seed=4903,
        record_rope=True,
        spec_check=False,
        post_save=_exaone_checkpoint,
        oracle_config=True,  # LlamaConfig would not read num_layers & co.
        switches=[("llama3_matters", "rope_type default", _rope_default)],
    ),
    # ---- cohere: LayerNorm without bias, parallel block, interleaved RoPE,
    # logit_scale, tied; use_qk_norm (per-head LayerNorm, [heads, d] weights)
    dict(
        name="cohere-qknorm",
        model_cls=CohereForCausalLM,
        config_cls=CohereConfig,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            intermediate_size=96,
            layer_norm_eps=1e-5,
            tie_word_embeddings=True,
            rope_theta=10000.0,
            logit_scale=0.5,
            use_qk_norm=True,
        ),
        seed=5002,
        prompt_seed=5101,
        embed_std=0.1,
        record_rope=True,
        spec_check=False,
        switches=[
            ("qk_norm_matters", "use_qk_norm=False", _set(use_qk_norm=False)),
            ("logit_scale_matters", "logit_scale=1", _set(logit_scale=1.0)),
        ],
    ),
    # ---- cohere2: sliding layers [s, s, s, f], RoPE on sliding layers only
    dict(
        name="cohere2-sliding",
        model_cls=Cohere2ForCausalLM,
        config_cls=Cohere2Config,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            num_hidden_layers=4,
            intermediate_size=96,
            layer_norm_eps=1e-5,
            tie_word_embeddings=True,
            rope_theta=50000.0,
            logit_scale=0.5,
            sliding_window=8,
        ),
        seed=5204,
        prompt_seed=5301,
        embed_std=0.1,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        record_rope=True,
        spec_check=False,
        switches=[WINDOW_OFF],
    ),
    # ---- exaone4: post-norm layer, per-head q/k RMSNorm, hybrid sliding
    # layers [s, s, s, f], RoPE on the sliding layers only, llama3 RoPE
    dict(
        name="exaone4-sliding",
        model_cls=Exaone4ForCausalLM,
        config_cls=Exaone4Config,
        config=dict(
            TINY,
            hidden_size=48,
            hidden_act="silu",
            num_hidden_layers=4,
            intermediate_size=80,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_theta=1000000.0,
            rope_scaling={
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 64,
            },
            sliding_window=8,
            sliding_window_pattern=4,
        ),
        seed=5401,
        prompt_seed=5501,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        record_rope=True,
        spec_check=False,
        switches=[WINDOW_OFF],
    ),
    # ---- ernie4_5: Llama with interleaved RoPE and use_bias
    dict(
        name="ernie4_5",
        model_cls=Ernie4_5ForCausalLM,
        config_cls=Ernie4_5Config,
        config=dict(
            TINY,
            hidden_size=48,
            hidden_act="silu",
            intermediate_size=80,
            rms_norm_eps=1e-5,
            tie_word_embeddings=True,
            rope_theta=500000.0,
            use_bias=True,
        ),
        seed=5601,
        prompt_seed=5701,
        embed_std=0.1,
        record_rope=True,
        spec_check=False,
        switches=[("use_bias_matters", "use_bias=False", _set(use_bias=False))],
    ),
    # ---- minicpm3: MiniCPM's scalings around multi-head latent attention
    # (q LoRA, kv latent + shared rotary key head, v_head_dim 12 != qk_head_dim
    # 10 + 6) and LongRoPE on the 6 rotary dims. hidden 64, intermediate 96 and
    # q_lora_rank 32 give the Q8_0 twin rows of whole 32-blocks. original_max
    # 20: the 1-token prompt stays short; the 18-token prompt crosses it on its
    # third decode step, where HF switches to the long factors and, unlike
    # Phi-3's generate, keeps the cached short-factor keys (MiniCPM3 uses
    # Llama's prepare_inputs_for_generation), for 13 more tokens: archc's
    # runtime must not recompute them (minicpm3.arch's rope has no recompute:
    # with it this prompt's tokens differ); the 29-token prompt is long from
    # its prefill. (Not lower: TestExecution's prefill-vs-decode prompt has 19
    # tokens, and without the recompute a sequence decoded token by token
    # across original_max keeps short keys that a prefill of it would not.)
    dict(
        name="minicpm3",
        model_cls=transformers.MiniCPM3ForCausalLM,
        config_cls=transformers.MiniCPM3Config,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_size=64,
            intermediate_size=96,
            num_key_value_heads=4,
            hidden_act="silu",
            rms_norm_eps=1e-5,
            tie_word_embeddings=True,
            q_lora_rank=32,
            kv_lora_rank=20,
            qk_nope_head_dim=10,
            qk_rope_head_dim=6,
            v_head_dim=12,
            scale_emb=2.5,
            scale_depth=1.4,
            dim_model_base=16,
            rope_parameters={
                "rope_type": "longrope",
                "rope_theta": 10000.0,
                "original_max_position_embeddings": 20,
                "short_factor": [1.0, 1.5, 2.0],
                "long_factor": [1.0, 4.0, 16.0],
            },
        ),
        seed=7104,
        prompt_seed=7201,
        embed_std=0.1,
        prompt_lengths=(1, 18, 29),
        record_rope=True,
        spec_check=False,
        switches=[
            ("long_factor_matters", "long_factor = short_factor", _long_as_short),
            ("scale_emb_matters", "scale_emb=1", _set(scale_emb=1)),
            ("scale_depth_matters", "scale_depth=0.5", _set(scale_depth=0.5)),
            ("dim_model_base_matters", "dim_model_base=hidden_size", _set(dim_model_base=64)),
        ],
    ),
    # ---- deepseek_v2: multi-head latent attention with a plain q_proj
    # (q_lora_rank null), YaRN (factor 4, original 64) with mscale 1 and
    # mscale_all_dim 0.8 (cos/sin times mscale(4, 1)/mscale(4, 0.8) = 1.0250,
    # softmax scale times mscale(4, 0.8)² = 1.1109²), interleaved RoPE pairs; layer 0 dense (first_k_dense_replace
    # 1), layers 1-2 MoE: 8 routed experts in 4 groups, group_limited_greedy
    # top 3 of the best 2 groups, routed_scaling_factor 1.5, one shared expert.
    dict(
        name="deepseek_v2",
        model_cls=transformers.DeepseekV2ForCausalLM,
        config_cls=transformers.DeepseekV2Config,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_size=64,  # a multiple of 32: the Q8_0 twin quantizes the matrices that read the hidden state
            intermediate_size=80,
            num_hidden_layers=3,
            num_key_value_heads=4,
            hidden_act="silu",
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            q_lora_rank=None,
            kv_lora_rank=16,
            qk_nope_head_dim=8,
            qk_rope_head_dim=4,
            v_head_dim=12,
            n_routed_experts=8,
            num_experts_per_tok=3,
            n_group=4,
            topk_group=2,
            topk_method="group_limited_greedy",
            routed_scaling_factor=1.5,
            n_shared_experts=1,
            moe_intermediate_size=24,
            first_k_dense_replace=1,
            rope_parameters={
                "rope_type": "yarn",
                "rope_theta": 10000.0,
                "factor": 4.0,
                "original_max_position_embeddings": 64,
                "mscale": 1.0,
                "mscale_all_dim": 0.8,
                "beta_fast": 32,
                "beta_slow": 1,
            },
        ),
        seed=7301,
        prompt_seed=7401,
        record_rope=True,
        spec_check=False,
        moe=True,
        switches=[
            ("group_limit_matters", "topk_method=greedy", _set(topk_method="greedy")),
            ("routed_scaling_factor_matters", "routed_scaling_factor=1", _set(routed_scaling_factor=1.0)),
            ("mscale_all_dim_matters", "mscale_all_dim=0 (softmax scale and cos/sin factor)", _rope_param(mscale_all_dim=0)),
        ],
    ),
    # ---- deepseek_v3 (issue 21): DeepSeek-V2's MLA, here with the q LoRA
    # (q_a_proj 32 → q_a_layernorm → q_b_proj) and default RoPE on
    # interleaved pairs (rope_interleave); layer 0 dense, layers 1-2 MoE
    # with DeepseekV3TopkRouter: sigmoid scores, e_score_correction_bias for
    # the choice, noaux_tc over 4 groups of 2 (best 2 by top-2 sum), top 3
    # renormalised, times 2.5; one shared expert. MTP layers: none
    # (num_mtp_layers is not read by DeepseekV3ForCausalLM).
    dict(
        name="deepseek_v3",
        model_cls=transformers.DeepseekV3ForCausalLM,
        config_cls=transformers.DeepseekV3Config,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_size=64,
            intermediate_size=80,
            num_hidden_layers=3,
            num_key_value_heads=4,
            hidden_act="silu",
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            q_lora_rank=32,
            kv_lora_rank=16,
            qk_nope_head_dim=8,
            qk_rope_head_dim=4,
            v_head_dim=12,
            n_routed_experts=8,
            num_experts_per_tok=3,
            n_group=4,
            topk_group=2,
            routed_scaling_factor=2.5,
            norm_topk_prob=True,
            n_shared_experts=1,
            moe_intermediate_size=24,
            first_k_dense_replace=1,
            rope_interleave=True,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        ),
        seed=7511,
        prompt_seed=7512,
        score_bias_std=0.1,
        record_rope=True,
        spec_check=False,
        moe=True,
        switches=[
            ("group_limit_matters", "topk_group=n_group", _set(topk_group=4)),
            ("norm_topk_prob_matters", "norm_topk_prob=False", _set(norm_topk_prob=False)),
            ("rope_interleave_matters", "rope_interleave=False", _set(rope_interleave=False)),
        ],
    ),
    # ---- ministral (issue 21): Mistral with per-layer windows from
    # layer_types [s, f, s] (window 8)
    dict(
        name="ministral-sliding",
        model_cls=transformers.MinistralForCausalLM,
        config_cls=transformers.MinistralConfig,
        config=dict(
            TINY,
            num_hidden_layers=3,
            hidden_act="silu",
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            sliding_window=8,
            layer_types=["sliding_attention", "full_attention", "sliding_attention"],
        ),
        seed=7601,
        prompt_seed=7602,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        record_rope=True,
        spec_check=False,
        switches=[WINDOW_OFF],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- vaultgemma (issue 21): Gemma 2 with two norms per layer (no
    # post-attention / post-feedforward norms), soft-caps, [s, f, s, f]
    dict(
        name="vaultgemma-sliding",
        model_cls=transformers.VaultGemmaForCausalLM,
        config_cls=transformers.VaultGemmaConfig,
        config=dict(
            TINY,
            num_hidden_layers=4,
            intermediate_size=64,
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            rope_theta=10000.0,
            query_pre_attn_scalar=24,
            attn_logit_softcapping=50.0,
            final_logit_softcapping=30.0,
            sliding_window=8,
        ),
        seed=7613,
        prompt_seed=7614,
        embed_std=0.1,
        norm_center=2.0,  # (1 + w) ~ 3
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        record_rope=True,
        spec_check=False,
        switches=[
            WINDOW_OFF,
            ("final_softcap_matters", "final_logit_softcapping=None", _set(final_logit_softcapping=None)),
        ],
    ),
    # ---- olmo (issue 21): non-parametric LayerNorm, clip_qkv 0.5
    dict(
        name="olmo",
        model_cls=transformers.OlmoForCausalLM,
        config_cls=transformers.OlmoConfig,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            tie_word_embeddings=False,
            rope_theta=10000.0,
            clip_qkv=0.5,
        ),
        seed=7621,
        prompt_seed=7622,
        record_rope=True,
        spec_check=False,
        switches=[("clip_qkv_matters", "clip_qkv=None", _set(clip_qkv=None))],
    ),
    # ---- nemotron (issue 21): LayerNorm1P (w + 1, with bias), relu2
    # non-gated MLP, partial rotary 0.5
    dict(
        name="nemotron",
        model_cls=transformers.NemotronForCausalLM,
        config_cls=transformers.NemotronConfig,
        config=dict(
            TINY,
            hidden_act="relu2",
            norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
        ),
        seed=7631,
        prompt_seed=7632,
        norm_center=0.0,  # stored w, applied as w + 1 ~ 1
        record_rope=True,
        spec_check=False,
        switches=[("partial_rotary_matters", "partial_rotary_factor=1", _partial_rotary(1.0))],
    ),
    # ---- apertus (issue 21): llama with q/k RMSNorm before RoPE, renamed
    # layer norms, a non-gated MLP down(xielu(up(h))) whose xIELU
    # activation has two learned scalars per layer (mlp.act_fn.alpha_p,
    # alpha_n), llama3 RoPE by default
    dict(
        name="apertus",
        model_cls=transformers.ApertusForCausalLM,
        config_cls=transformers.ApertusConfig,
        config=dict(
            TINY,
            hidden_act="xielu",
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_parameters={"rope_type": "llama3", "rope_theta": 12000000.0, "factor": 8.0,
                             "original_max_position_embeddings": 64, "low_freq_factor": 1.0, "high_freq_factor": 4.0},
        ),
        seed=7643,
        prompt_seed=7642,
        record_rope=True,
        spec_check=False,
    ),
    # ---- minimax_m2 (issue 21): Mixtral's experts under a sigmoid router
    # whose top_k is chosen with a selection bias, RMSNorm over the whole q
    # and k projections, partial rotary 0.5
    dict(
        name="minimax_m2",
        model_cls=transformers.MiniMaxM2ForCausalLM,
        config_cls=transformers.MiniMaxM2Config,
        config=dict(
            TINY,
            hidden_act="silu",
            intermediate_size=48,
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            num_local_experts=8,
            num_experts_per_tok=3,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
        ),
        seed=7651,
        prompt_seed=7652,
        score_bias_std=0.1,
        record_rope=True,
        spec_check=False,
        moe=True,
    ),
    # ---- phimoe (issue 21): Mixtral's experts under PhimoeTopKRouter's
    # sparsemixer (inference: the two best experts, each weighted by a
    # softmax over the experts within 2·router_jitter_noise of it,
    # relatively), LayerNorm with bias, q/k/v/o and lm_head biases, LongRoPE
    # as PhimoeRotaryEmbedding applies it
    dict(
        name="phimoe",
        model_cls=transformers.PhimoeForCausalLM,
        config_cls=transformers.PhimoeConfig,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            intermediate_size=48,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            attention_bias=True,
            lm_head_bias=True,
            num_local_experts=8,
            num_experts_per_tok=2,
            router_jitter_noise=0.3,
            # PhimoeRotaryEmbedding: the short factors at every length, cos
            # and sin times short_mscale (= long_mscale); generation
            # crosses original_max_position_embeddings 32
            rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0, "original_max_position_embeddings": 32,
                             "short_factor": [1.0, 1.1, 1.3, 1.6, 2.0, 2.5, 3.1, 4.0],
                             "long_factor": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
                             "short_mscale": 1.2, "long_mscale": 1.2},
        ),
        seed=7681,
        prompt_seed=7682,
        record_rope=True,
        spec_check=False,
        moe=True,
        switches=[("jitter_matters", "router_jitter_noise=0.01", _set(router_jitter_noise=0.01))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- exaone_moe (issue 21): EXAONE 4 attention (sliding layers with
    # RoPE, the global one without), pre-norm layers, layer 0 dense, then
    # DeepseekV3's noaux_tc MoE (2 of 4 groups, top 3 of 8, scale 2.5) with a
    # shared MLP
    dict(
        name="exaone_moe-sliding",
        model_cls=transformers.ExaoneMoeForCausalLM,
        config_cls=transformers.ExaoneMoeConfig,
        config=dict(
            TINY,
            hidden_act="silu",
            num_hidden_layers=4,
            intermediate_size=80,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
            sliding_window=8,
            sliding_window_pattern=4,
            num_experts=8,
            num_experts_per_tok=3,
            num_shared_experts=1,
            moe_intermediate_size=24,
            first_k_dense_replace=1,
            n_group=4,
            topk_group=2,
            routed_scaling_factor=2.5,
            norm_topk_prob=True,
        ),
        seed=7661,
        prompt_seed=7662,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        score_bias_std=0.1,
        record_rope=True,
        spec_check=False,
        moe=True,
        switches=[WINDOW_OFF],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- cohere2_moe (issue 21): Cohere 2's parallel layer; a dense first
    # layer (prefix pattern 1: full attention with force_rope), then
    # sliding / full (no RoPE) / sliding MoE layers: sigmoid router, top 3 of
    # 8 renormalised, one shared expert averaged in; LayerNorm (no
    # rms_norm_eps)
    dict(
        name="cohere2_moe-sliding",
        model_cls=transformers.Cohere2MoeForCausalLM,
        config_cls=transformers.Cohere2MoeConfig,
        config=dict(
            TINY,
            hidden_act="silu",
            num_hidden_layers=4,
            intermediate_size=24,
            layer_norm_eps=1e-5,
            tie_word_embeddings=True,
            logit_scale=0.5,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
            sliding_window=8,
            sliding_window_pattern=2,
            first_k_dense_replace=1,
            prefix_dense_sliding_window_pattern=1,
            prefix_dense_intermediate_size=96,
            num_experts=8,
            num_experts_per_tok=3,
            num_shared_experts=1,
            shared_expert_combination_strategy="average",
            expert_selection_fn="sigmoid",
            norm_topk_prob=True,
        ),
        seed=7671,
        prompt_seed=7672,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        record_rope=True,
        spec_check=False,
        moe=True,
        switches=[WINDOW_OFF],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- glm (issue 21): q/k/v biases, partial (0.5) interleaved RoPE,
    # fused gate_up MLP
    dict(
        name="glm",
        model_cls=transformers.GlmForCausalLM,
        config_cls=transformers.GlmConfig,
        config=dict(
            TINY,
            hidden_act="silu",
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            attention_bias=True,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
        ),
        seed=7641,
        prompt_seed=7642,
        record_rope=True,
        spec_check=False,
        switches=[("partial_rotary_matters", "partial_rotary_factor=1", _partial_rotary(1.0))],
    ),
    # ---- glm4 (issue 21): glm plus post_self_attn_layernorm and
    # post_mlp_layernorm
    dict(
        name="glm4",
        model_cls=transformers.Glm4ForCausalLM,
        config_cls=transformers.Glm4Config,
        config=dict(
            TINY,
            hidden_act="silu",
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            attention_bias=True,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
        ),
        seed=7653,
        prompt_seed=7654,
        record_rope=True,
        spec_check=False,
        switches=[("partial_rotary_matters", "partial_rotary_factor=1", _partial_rotary(1.0))],
    ),
    # ---- hunyuan_v1_dense (issue 21): q/k per-head RMSNorm after RoPE,
    # RoPE dynamic with alpha 4 (NTK-alpha: a fixed stretched base)
    dict(
        name="hunyuan_v1_dense",
        model_cls=transformers.HunYuanDenseV1ForCausalLM,
        config_cls=transformers.HunYuanDenseV1Config,
        config=dict(
            TINY,
            hidden_act="silu",
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_parameters={"rope_type": "dynamic", "rope_theta": 10000.0, "alpha": 4.0, "factor": 1.0},
        ),
        seed=7661,
        prompt_seed=7662,
        record_rope=True,
        spec_check=False,
        switches=[("alpha_matters", "rope default", _rope_default)],
    ),
    # ---- hunyuan_v1_moe (issue 21): hunyuan attention, every layer MoE:
    # softmax router (mlp.gate.wg) top 2 renormalised over 8 experts, plus
    # the shared MLP
    dict(
        name="hunyuan_v1_moe",
        model_cls=transformers.HunYuanMoEV1ForCausalLM,
        config_cls=transformers.HunYuanMoEV1Config,
        config=dict(
            TINY,
            hidden_act="silu",
            intermediate_size=32,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            num_experts=8,
            moe_topk=2,
        ),
        seed=7671,
        prompt_seed=7672,
        record_rope=True,
        spec_check=False,
        moe=True,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- gpt_oss (issue 11): attention sinks, [s, f] window 8, YaRN
    # (truncate false), q/k/v/o biases; MoE: router linear with bias, top-k
    # then softmax, 8 experts of which 2 per token, stacked experts with
    # interleaved gate/up and biases, clamped SwiGLU (alpha 1.702, limit 7)
    dict(
        name="gpt_oss",
        model_cls=GptOssForCausalLM,
        config_cls=GptOssConfig,
        config=dict(
            TINY,
            intermediate_size=32,
            num_local_experts=8,
            num_experts_per_tok=2,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            sliding_window=8,
            layer_types=["sliding_attention", "full_attention"],
            rope_parameters={
                "rope_type": "yarn",
                "rope_theta": 150000.0,
                "factor": 32.0,
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "truncate": False,
                "original_max_position_embeddings": 4096,
            },
        ),
        seed=6201,
        prompt_seed=6301,
        expert_std=0.6,
        sink_std=1.0,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        record_rope=True,
        spec_check=False,
        moe=True,
        switches=[
            WINDOW_OFF,
            ("yarn_truncate_matters", "rope_parameters truncate true", _rope_param(truncate=True)),
            ("swiglu_limit_matters", "swiglu_limit=1e4 (no clamp)", _set(swiglu_limit=1e4)),
        ],
    ),
    # ---- granitemoeshared: granitemoe's multipliers and fused experts (top-k
    # then softmax) plus a shared SwiGLU MLP (shared_mlp, fused input_linear)
    # added to the experts' output inside the residual multiplier
    dict(
        name="granitemoeshared",
        model_cls=transformers.GraniteMoeSharedForCausalLM,
        config_cls=transformers.GraniteMoeSharedConfig,
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="silu",
            intermediate_size=24,
            shared_intermediate_size=40,
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            embedding_multiplier=12.0,
            attention_multiplier=0.0625,
            residual_multiplier=0.22,
            logits_scaling=8.0,
            num_local_experts=8,
            num_experts_per_tok=3,
        ),
        seed=3523,
        prompt_seed=3506,
        embed_std=0.02,
        record_rope=True,
        spec_check=False,
        moe=True,
        switches=[
            ("shared_mlp_matters", "shared_intermediate_size=0 (no shared MLP)", _set(shared_intermediate_size=0)),
        ],
    ),
    # ---- ernie4_5_moe: Ernie 4.5 attention (interleaved RoPE, use_bias) with
    # MoE layers 1 and 3 of 4 (moe_layer_start_index 1, interval 2): softmax
    # router whose top-k picks by p + e_score_correction_bias and keeps p,
    # renormalised (clamped by moe_norm_min), plus a shared MLP
    dict(
        name="ernie4_5_moe",
        model_cls=transformers.Ernie4_5_MoeForCausalLM,
        config_cls=transformers.Ernie4_5_MoeConfig,
        config=dict(
            TINY,
            num_hidden_layers=4,
            hidden_act="silu",
            intermediate_size=48,
            rms_norm_eps=1e-5,
            use_bias=True,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            moe_num_experts=8,
            moe_k=3,
            moe_intermediate_size=24,
            moe_num_shared_experts=2,
            moe_layer_start_index=1,
            moe_layer_end_index=3,
            moe_layer_interval=2,
        ),
        seed=3507,
        prompt_seed=3508,
        score_bias_std=0.1,
        record_rope=True,
        spec_check=False,
        moe=True,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- glm4_moe: q/k/v biases, per-head q/k norm, partial RoPE (0.5);
    # layer 0 dense, layers 1-2 MoE with DeepSeek-V3's router: sigmoid
    # scores, e_score_correction_bias for the choice, noaux_tc over 4 groups
    # of 2 (best 2), top 3 renormalised, times 2.5; plus a shared MLP
    dict(
        name="glm4_moe",
        model_cls=transformers.Glm4MoeForCausalLM,
        config_cls=transformers.Glm4MoeConfig,
        config=dict(
            TINY,
            num_hidden_layers=3,
            hidden_act="silu",
            intermediate_size=48,
            rms_norm_eps=1e-5,
            attention_bias=True,
            use_qk_norm=True,
            partial_rotary_factor=0.5,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            n_routed_experts=8,
            num_experts_per_tok=3,
            n_group=4,
            topk_group=2,
            n_shared_experts=1,
            moe_intermediate_size=24,
            first_k_dense_replace=1,
            routed_scaling_factor=2.5,
            norm_topk_prob=True,
        ),
        seed=3601,
        prompt_seed=3602,
        score_bias_std=0.1,
        record_rope=True,
        spec_check=False,
        moe=True,
        switches=[
            ("qk_norm_matters", "use_qk_norm=False", _set(use_qk_norm=False)),
            ("norm_topk_prob_matters", "norm_topk_prob=False", _set(norm_topk_prob=False)),
        ],
    ),
    # ---- dots1: Qwen3 attention with biases (o_proj too), layer 2 of 3
    # sliding (window 8, max_window_layers 2); layer 0 dense, layers 1-2 MoE
    # with DeepSeek-V3's router (sigmoid, e_score_correction_bias, noaux_tc
    # over 4 groups of 2, best 3), top 2 not renormalised, times 1.5; shared MLP
    dict(
        name="dots1",
        model_cls=transformers.Dots1ForCausalLM,
        config_cls=transformers.Dots1Config,
        config=dict(
            TINY,
            num_hidden_layers=3,
            hidden_act="silu",
            intermediate_size=48,
            rms_norm_eps=1e-6,
            attention_bias=True,
            tie_word_embeddings=False,
            rope_theta=10000.0,
            sliding_window=8,
            max_window_layers=2,
            n_routed_experts=8,
            num_experts_per_tok=2,
            n_group=4,
            topk_group=3,
            n_shared_experts=2,
            moe_intermediate_size=20,
            first_k_dense_replace=1,
            routed_scaling_factor=1.5,
            norm_topk_prob=False,
        ),
        seed=3703,
        prompt_seed=3702,
        score_bias_std=0.1,
        record_rope=True,
        spec_check=False,
        moe=True,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        switches=[WINDOW_OFF],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- mamba: no attention; a conv window and an SSM state per layer ----
    dict(
        name="mamba",
        model_cls="MambaForCausalLM",
        config_cls="MambaConfig",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            state_size=8,
            num_hidden_layers=2,
            expand=2,
            conv_kernel=4,
            time_step_rank="auto",  # ceil(64 / 16) = 4
            layer_norm_epsilon=1e-5,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            tie_word_embeddings=True,
        ),
        seed=7301,
        prompt_seed=1037,
        spec_check=False,
    ),
    # ---- falcon_mamba: mamba plus weightless RMS norms on dt, B and C ----
    dict(
        name="falcon_mamba",
        model_cls="FalconMambaForCausalLM",
        config_cls="FalconMambaConfig",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            state_size=8,
            num_hidden_layers=2,
            expand=2,
            conv_kernel=4,
            time_step_rank=6,  # an explicit rank (mamba's fixture resolves "auto")
            layer_norm_epsilon=1e-5,
            mixer_rms_eps=1e-6,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            tie_word_embeddings=False,
        ),
        seed=7302,
        prompt_seed=2037,
        spec_check=False,
    ),
    # ---- lfm2: hybrid; gated short convs (kernel 3, carried window) beside
    # attention with per-head q/k RMSNorm; a KV cache and conv windows in one model
    dict(
        name="lfm2",
        model_cls="Lfm2ForCausalLM",
        config_cls="Lfm2Config",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            intermediate_size=128,  # Lfm2MLP: int(2 * 128 / 3) = 85, rounded up to 16: 96
            block_multiple_of=16,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=256,
            norm_eps=1e-5,
            conv_L_cache=3,
            full_attn_idxs=[1],  # [conv, full_attention, conv]
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            tie_word_embeddings=True,
        ),
        seed=7401,
        prompt_seed=4037,
        spec_check=False,
    ),
    # ---- lfm2_moe: lfm2 with a sigmoid-routed MoE (expert_bias choice,
    # sum + 1e-6 renormalisation, routed scaling) after num_dense_layers
    dict(
        name="lfm2_moe",
        model_cls="Lfm2MoeForCausalLM",
        config_cls="Lfm2MoeConfig",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            intermediate_size=96,
            moe_intermediate_size=32,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=256,
            norm_eps=1e-5,
            conv_L_cache=3,
            layer_types=["conv", "full_attention", "conv"],
            num_dense_layers=1,  # [dense, moe, moe]
            num_experts=8,
            num_experts_per_tok=2,
            use_expert_bias=True,
            routed_scaling_factor=1.5,
            norm_topk_prob=True,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            tie_word_embeddings=True,
        ),
        seed=7402,
        prompt_seed=4038,
        score_bias_std=0.1,
        spec_check=False,
        moe=True,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- jamba: hybrid; Mamba1 mixers (RMS norms on dt, B, C) beside
    # attention without RoPE, MoE on some layers of either kind
    dict(
        name="jamba",
        model_cls="JambaForCausalLM",
        config_cls="JambaConfig",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            intermediate_size=32,
            num_hidden_layers=4,
            num_attention_heads=4,
            num_key_value_heads=2,
            max_position_embeddings=256,
            rms_norm_eps=1e-6,
            attn_layer_period=2,
            attn_layer_offset=1,  # [mamba, attention, mamba, attention]
            expert_layer_period=3,
            expert_layer_offset=0,  # MoE on layers 0 (mamba) and 3 (attention)
            num_experts=4,
            num_experts_per_tok=2,
            mamba_d_state=8,
            mamba_d_conv=4,
            mamba_expand=2,
            mamba_dt_rank="auto",  # ceil(64 / 16) = 4
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            tie_word_embeddings=False,
        ),
        seed=7403,
        prompt_seed=4039,
        spec_check=False,
        moe=True,
    ),
    # ---- issue 21 (dense pack 3, h-dense-b): GPT-NeoX, Phi, GPT-2,
    # GPT-BigCode. gpt_neox: fused per-head query_key_value, rotary 0.5,
    # the parallel residual on two norms.
    dict(
        name="gpt_neox",
        model_cls="GPTNeoXForCausalLM",
        config_cls="GPTNeoXConfig",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=256,
            hidden_act="gelu",
            rotary_pct=0.5,
            rotary_emb_base=10000.0,
            layer_norm_eps=1e-5,
            use_parallel_residual=True,
            tie_word_embeddings=False,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            initializer_range=0.2,
        ),
        seed=8101,
        prompt_seed=8102,
        record_rope=True,
        spec_check=False,
        switches=[("use_parallel_residual_matters", "use_parallel_residual=False", _set(use_parallel_residual=False)),
                  ("partial_rotary_matters", "partial_rotary_factor=1", _partial_rotary(1.0))],
    ),
    # ---- phi: parallel attention/MLP on one LayerNorm, q/k/v/dense biases,
    # rotary 0.5, q/k LayerNorm over head_dim (qk_layernorm), lm_head bias
    dict(
        name="phi-qk-layernorm",
        model_cls="PhiForCausalLM",
        config_cls="PhiConfig",
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="gelu_new",
            intermediate_size=96,
            layer_norm_eps=1e-5,
            partial_rotary_factor=0.5,
            qk_layernorm=True,
            tie_word_embeddings=False,
        ),
        seed=8204,
        prompt_seed=8202,
        record_rope=True,
        spec_check=False,
        switches=[("qk_layernorm_matters", "qk_layernorm=False", _set(qk_layernorm=False))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    dict(
        name="phi",
        model_cls="PhiForCausalLM",
        config_cls="PhiConfig",
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="gelu_new",
            intermediate_size=96,
            layer_norm_eps=1e-5,
            partial_rotary_factor=0.5,
            tie_word_embeddings=False,
        ),
        seed=8211,
        prompt_seed=8212,
        record_rope=True,
        spec_check=False,
        switches=[("partial_rotary_matters", "partial_rotary_factor=1", _partial_rotary(1.0))],
    ),
    # ---- gpt2: learned absolute positions, Conv1D ([in, out]) c_attn /
    # c_proj / c_fc, tied; scores also divided by layer + 1
    dict(
        name="gpt2",
        model_cls="GPT2LMHeadModel",
        config_cls="GPT2Config",
        config=dict(
            vocab_size=256,
            n_embd=64,
            n_layer=2,
            n_head=4,
            n_inner=128,
            n_positions=256,
            activation_function="gelu_new",
            layer_norm_epsilon=1e-5,
            scale_attn_by_inverse_layer_idx=True,
            tie_word_embeddings=True,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            initializer_range=0.2,
        ),
        seed=8301,
        prompt_seed=8302,
        embed_std=0.2,
        norm_suffixes=(".ln_1.weight", ".ln_2.weight", ".ln_f.weight"),
        spec_check=False,
        switches=[("scale_attn_by_inverse_layer_idx_matters", "scale_attn_by_inverse_layer_idx=False",
                   _set(scale_attn_by_inverse_layer_idx=False))],
    ),
    # ---- gpt_bigcode: GPT-2 with nn.Linear projections and multi-query
    # attention (one k/v head), and its multi_query false variant (per-head
    # [q | k | v] rows)
    dict(
        name="gpt_bigcode-mqa",
        model_cls="GPTBigCodeForCausalLM",
        config_cls="GPTBigCodeConfig",
        config=dict(
            vocab_size=256,
            n_embd=64,
            n_layer=2,
            n_head=4,
            n_inner=128,
            n_positions=256,
            activation_function="gelu_pytorch_tanh",
            layer_norm_epsilon=1e-5,
            multi_query=True,
            tie_word_embeddings=True,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            initializer_range=0.2,
        ),
        seed=8401,
        prompt_seed=8402,
        norm_suffixes=(".ln_1.weight", ".ln_2.weight", ".ln_f.weight"),
        spec_check=False,
    ),
    dict(
        name="gpt_bigcode-mha",
        model_cls="GPTBigCodeForCausalLM",
        config_cls="GPTBigCodeConfig",
        config=dict(
            vocab_size=256,
            n_embd=64,
            n_layer=2,
            n_head=4,
            n_inner=128,
            n_positions=256,
            activation_function="gelu_pytorch_tanh",
            layer_norm_epsilon=1e-5,
            multi_query=False,
            tie_word_embeddings=True,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            initializer_range=0.2,
        ),
        seed=8505,
        prompt_seed=8502,
        norm_suffixes=(".ln_1.weight", ".ln_2.weight", ".ln_f.weight"),
        spec_check=False,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- mamba2: the SSD scan (chunked prefill, chunk_size 8 < the 29-token
    # prompt), n_groups 2 of 4 heads each, gated RMSNorm per group ----
    dict(
        name="mamba2",
        model_cls="Mamba2ForCausalLM",
        config_cls="Mamba2Config",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            expand=2,
            num_heads=8,
            head_dim=16,
            n_groups=2,
            state_size=8,
            num_hidden_layers=2,
            conv_kernel=4,
            chunk_size=8,
            layer_norm_epsilon=1e-5,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            tie_word_embeddings=False,
        ),
        seed=7304,
        prompt_seed=3038,
        spec_check=False,
    ),
    # ---- bamba: Mamba2 layers and one attention layer (attn_layer_indices)
    # in one model: a KV cache beside conv windows and SSM states;
    # mamba_d_head "auto" (2 * 64 / 8 = 16) ----
    dict(
        name="bamba",
        model_cls="BambaForCausalLM",
        config_cls="BambaConfig",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            intermediate_size=96,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=2,
            attn_layer_indices=[1],
            mamba_n_heads=8,
            mamba_d_head="auto",
            mamba_n_groups=2,
            mamba_d_state=8,
            mamba_d_conv=4,
            mamba_expand=2,
            mamba_chunk_size=8,
            rms_norm_eps=1e-5,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            tie_word_embeddings=False,
        ),
        seed=7305,
        prompt_seed=3039,
        spec_check=False,
    ),
    # ---- granitemoehybrid: granitemoeshared's layer (muP multipliers, MoE
    # plus the shared MLP) with Mamba2 or NoPE attention per layer_types ----
    dict(
        name="granitemoehybrid",
        model_cls="GraniteMoeHybridForCausalLM",
        config_cls="GraniteMoeHybridConfig",
        config=dict(
            TINY_NO_HEAD_DIM,
            num_hidden_layers=3,
            layer_types=["linear_attention", "full_attention", "linear_attention"],
            position_embedding_type="nope",
            hidden_act="silu",
            intermediate_size=24,
            shared_intermediate_size=40,
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            embedding_multiplier=12.0,
            attention_multiplier=0.0625,
            residual_multiplier=0.22,
            logits_scaling=8.0,
            num_local_experts=4,
            num_experts_per_tok=2,
            mamba_n_heads=8,
            mamba_n_groups=2,
            mamba_d_state=8,
            mamba_d_conv=4,
            mamba_expand=2,
            mamba_chunk_size=8,
        ),
        seed=7306,
        prompt_seed=3040,
        embed_std=0.02,
        spec_check=False,
        moe=True,
    ),
    # ---- qwen3_5: gated DeltaNet layers (causal conv over q, k, v; the gated
    # delta rule, 2 value heads per key head; a gated RMSNorm per value head)
    # beside gated attention with partial RoPE; (1 + w) RMSNorms; a 70-token
    # prompt is longer than torch_chunk_gated_delta_rule's chunk of 64. As
    # Qwen3.5 is published: Qwen3_5ForConditionalGeneration, its config a
    # qwen3_5 with the decoder under text_config and its weights under
    # model.language_model (a one-block vision tower archc does not read) ----
    dict(
        name="qwen3_5",
        model_cls="Qwen3_5ForConditionalGeneration",
        config_cls="Qwen3_5Config",
        config=dict(
            text_config=dict(
                TINY,
                num_hidden_layers=3,
                intermediate_size=96,
                layer_types=["linear_attention", "full_attention", "linear_attention"],
                linear_conv_kernel_dim=4,
                linear_num_key_heads=2,
                linear_num_value_heads=4,
                linear_key_head_dim=8,
                linear_value_head_dim=12,
                rope_parameters=dict(rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.5),
                rms_norm_eps=1e-6,
                mtp_num_hidden_layers=1,  # as published (mtp.*; mtp_test.go adds a random layer)
            ),
            vision_config=dict(depth=1, hidden_size=16, intermediate_size=16, num_heads=2, out_hidden_size=64,
                               num_position_embeddings=16, patch_size=4, temporal_patch_size=1),
            tie_word_embeddings=False,
        ),
        seed=7501,
        prompt_seed=3501,
        weight_std=0.2,
        norm_center=0.0,  # stored w, applied as 1 + w ~ 1 (Qwen3NextRMSNorm)
        plain_norms=("linear_attn.norm.weight",),  # Qwen3NextRMSNormGated: w
        a_values=[0.05, 0.3, 1.0, 4.0],
        prompt_lengths=GDN_PROMPT_LENGTHS,
        switches=[("partial_rotary_matters", "partial_rotary_factor=1", _in_text_config(_partial_rotary(1.0)))],
        spec_check=False,
    ),
    # ---- qwen3_5_moe: qwen3_5 with Qwen3-Next's MoE on every layer (6 experts,
    # top 2, always renormalised, a sigmoid-gated shared expert) ----
    dict(
        name="qwen3_5_moe",
        model_cls="Qwen3_5MoeForCausalLM",
        config_cls="Qwen3_5MoeTextConfig",
        config=dict(
            TINY,
            num_hidden_layers=3,
            layer_types=["linear_attention", "full_attention", "linear_attention"],
            linear_conv_kernel_dim=3,
            linear_num_key_heads=2,
            linear_num_value_heads=6,
            linear_key_head_dim=8,
            linear_value_head_dim=8,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.25),
            num_experts=6,
            num_experts_per_tok=2,
            moe_intermediate_size=24,
            shared_expert_intermediate_size=40,
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            mtp_num_hidden_layers=1,  # as published (mtp.*; mtp_test.go adds a random layer)
        ),
        seed=7522,
        prompt_seed=3502,
        weight_std=0.2,
        norm_center=0.0,  # stored w, applied as 1 + w ~ 1 (Qwen3NextRMSNorm)
        plain_norms=("linear_attn.norm.weight",),  # Qwen3NextRMSNormGated: w
        a_values=[0.05, 0.2, 0.5, 1.0, 2.0, 4.0],
        prompt_lengths=GDN_PROMPT_LENGTHS,
        spec_check=False,
        moe=True,
    ),
    # ---- qwen3_next: the same layers with in_proj_qkvz / in_proj_ba grouped
    # per key head (fix_query_key_value_ordering), MoE except on
    # mlp_only_layers (a dense MLP there), norm_topk_prob ----
    dict(
        name="qwen3_next",
        model_cls="Qwen3NextForCausalLM",
        config_cls="Qwen3NextConfig",
        config=dict(
            TINY,
            num_hidden_layers=3,
            intermediate_size=96,
            layer_types=["linear_attention", "full_attention", "linear_attention"],
            linear_conv_kernel_dim=4,
            linear_num_key_heads=2,
            linear_num_value_heads=4,
            linear_key_head_dim=8,
            linear_value_head_dim=12,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.5),
            num_experts=6,
            num_experts_per_tok=2,
            moe_intermediate_size=24,
            shared_expert_intermediate_size=40,
            norm_topk_prob=True,
            mlp_only_layers=[2],
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            # As the published checkpoints declare their mtp.* layer (the
            # checkpoint here has none: mtp_test.go adds a random one);
            # HF's model reads past it.
            mtp_num_hidden_layers=1,
        ),
        seed=7503,
        prompt_seed=3503,
        weight_std=0.15,
        norm_center=0.0,  # stored w, applied as 1 + w ~ 1 (Qwen3NextRMSNorm)
        plain_norms=("linear_attn.norm.weight",),  # Qwen3NextRMSNormGated: w
        a_values=[0.05, 0.3, 1.0, 4.0],
        prompt_lengths=GDN_PROMPT_LENGTHS,
        switches=[
            ("partial_rotary_matters", "partial_rotary_factor=1", _partial_rotary(1.0)),
            ("norm_topk_prob_matters", "norm_topk_prob=False", _set(norm_topk_prob=False)),
        ],
        spec_check=False,
        moe=True,
    ),
    # ---- olmo_hybrid (issue 30): gated DeltaNet layers (separate q/k/v/a/b/g
    # projections, one conv over q|k|v, β = 2·sigmoid(b): allow_neg_eigval)
    # in a pre-norm Llama layer, and OLMo 3's post-norm full-attention layer
    # (q/k RMSNorm over all heads) with RoPE; the gated norm's eps is 1e-5 ----
    dict(
        name="olmo_hybrid",
        model_cls="OlmoHybridForCausalLM",
        config_cls="OlmoHybridConfig",
        config=dict(
            TINY,
            num_hidden_layers=3,
            intermediate_size=96,
            layer_types=["linear_attention", "full_attention", "linear_attention"],
            linear_conv_kernel_dim=4,
            linear_num_key_heads=2,
            linear_num_value_heads=4,
            linear_key_head_dim=8,
            linear_value_head_dim=12,
            linear_allow_neg_eigval=True,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0),
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
        ),
        seed=7531,
        prompt_seed=3531,
        weight_std=0.15,
        a_values=[0.05, 0.3, 1.0, 4.0],
        prompt_lengths=GDN_PROMPT_LENGTHS,
        switches=[
            ("neg_eigval_matters", "linear_allow_neg_eigval=False", _set(linear_allow_neg_eigval=False)),
        ],
        post_save=_olmo_hybrid_checkpoint,
        stored_dtype="bfloat16",
        spec_check=False,
    ),
    # ---- mimo_v2_flash (issue 30): layer 0 full attention with a dense MLP,
    # layers 1 and 2 sliding-window (8) attention with twice the key-value
    # heads and sinks, and the MoE (DeepSeek-V3's sigmoid router, 2 groups of
    # 4 experts, top 2, no shared experts); q/k heads of 24, v heads of 16
    # scaled by attention_value_scale; RoPE on int(24 · 0.334) = 8 dims with
    # each layer type's theta ----
    dict(
        name="mimo_v2_flash",
        model_cls="MiMoV2FlashForCausalLM",
        config_cls="MiMoV2FlashConfig",
        config=dict(
            TINY,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=1,
            head_dim=24,
            v_head_dim=16,
            intermediate_size=96,
            moe_intermediate_size=24,
            n_routed_experts=8,
            num_experts_per_tok=2,
            n_group=2,
            topk_group=1,
            norm_topk_prob=True,
            routed_scaling_factor=1.5,
            sliding_window=8,
            attention_value_scale=0.707,
            layer_types=["full_attention", "sliding_attention", "sliding_attention"],
            mlp_layer_types=["dense", "sparse", "sparse"],
            rope_parameters={
                "full_attention": {"rope_type": "default", "rope_theta": 1000000.0, "partial_rotary_factor": 0.334},
                "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.334},
            },
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
        ),
        seed=7541,
        prompt_seed=3541,
        weight_std=0.2,
        sink_std=1.0,
        score_bias_std=0.5,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        switches=[
            ("window_matters", "sliding_window=4096", _set(sliding_window=4096)),
            ("value_scale_matters", "attention_value_scale=1.0", _set(attention_value_scale=1.0)),
        ],
        stored_dtype="bfloat16",  # the tracked tree's limit
        spec_check=False,
        moe=True,
    ),
    # ---- laguna (issue 30): per-layer query heads (4, 2, 4 over 2 KV heads),
    # layer 1 sliding (window 8, theta 1e4, RoPE on all of the head), layers
    # 0 and 2 full (theta 5e5, half the head); per-head q/k RMSNorm; the
    # output times softplus(g_proj) per head; layer 0 a dense MLP, layers 1
    # and 2 the MoE (sigmoid router, softcapped logits, top 2 of 6 by score +
    # correction bias, renormalised, times 1.5, plus a shared expert) ----
    dict(
        name="laguna",
        model_cls="LagunaForCausalLM",
        config_cls="LagunaConfig",
        config=dict(
            TINY,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=16,
            num_attention_heads_per_layer=[4, 2, 4],
            intermediate_size=96,
            moe_intermediate_size=24,
            shared_expert_intermediate_size=32,
            num_experts=6,
            num_experts_per_tok=2,
            sliding_window=8,
            layer_types=["full_attention", "sliding_attention", "full_attention"],
            mlp_layer_types=["dense", "sparse", "sparse"],
            moe_routed_scaling_factor=1.5,
            moe_router_logit_softcapping=2.0,
            gating=True,
            rope_parameters={
                "full_attention": {"rope_type": "default", "rope_theta": 500000.0, "partial_rotary_factor": 0.5},
                "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 1.0},
            },
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
        ),
        seed=7551,
        prompt_seed=3551,
        weight_std=0.2,
        score_bias_std=0.5,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        switches=[
            ("window_matters", "sliding_window=4096", _set(sliding_window=4096)),
            ("softcap_matters", "moe_router_logit_softcapping=0", _set(moe_router_logit_softcapping=0.0)),
        ],
        stored_dtype="bfloat16",  # the tracked tree's limit
        spec_check=False,
        moe=True,
    ),
    # ---- llama4_text (issue 21): the RoPE layers (0, 1, 3) attend within
    # chunks of 8 positions (< the 29-token prompt), with interleaved
    # (complex) RoPE under Scout's llama3 scaling shape (low = high freq
    # factor) and q/k L2 norm; the NoPE layer 2 attends to everything with
    # the attention temperature (floor_scale 4, so it grows within the
    # prompt); layers 1 and 3 are Llama4TextMoe (top 2 of 4 experts, the
    # sigmoid scores scaling the experts' inputs, a shared expert), 0 and 2
    # a dense MLP of intermediate_size_mlp; head_dim 24 (not hidden/heads)
    dict(
        name="llama4_text",
        model_cls="Llama4ForCausalLM",
        config_cls="Llama4TextConfig",
        config=dict(
            TINY,
            head_dim=24,
            hidden_act="silu",
            num_hidden_layers=4,
            intermediate_size=32,
            intermediate_size_mlp=96,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            num_local_experts=4,
            num_experts_per_tok=2,
            interleave_moe_layer_step=2,
            no_rope_layers=[1, 1, 0, 1],
            attention_chunk_size=8,
            attn_temperature_tuning=True,
            floor_scale=4,
            attn_scale=0.5,
            use_qk_norm=True,
            rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 16.0, "low_freq_factor": 1.0,
                             "high_freq_factor": 1.0, "original_max_position_embeddings": 64},
        ),
        seed=8601,
        prompt_seed=8602,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        spec_check=False,
        moe=True,
        switches=[
            ("chunk_matters", "layer_types all full_attention", _set(layer_types=["full_attention"] * 4)),
            ("nope_matters", "no_rope_layers all 1 (RoPE and qk norm everywhere)", _all_rope),
            ("temperature_matters", "attn_temperature_tuning=False", _set(attn_temperature_tuning=False)),
            ("qk_norm_matters", "use_qk_norm=False", _set(use_qk_norm=False)),
            ("llama3_matters", "rope_type default", _rope_default),
        ],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- dbrx (issue 21): fused Wqkv clamped to ±clip_qkv 0.6, GQA 4 on 2,
    # LayerNorm without bias; every layer a MoE of 4 DbrxExpertGLU experts
    # (w1, v1, w2 each [4·32, 64]) under softmax, top 2, divided by their
    # 2-norm (moe_normalize_expert_weights 2: the p-norm, not the sum)
    dict(
        name="dbrx",
        model_cls="DbrxForCausalLM",
        config_cls="DbrxConfig",
        config=dict(
            vocab_size=256,
            d_model=64,
            n_heads=4,
            n_layers=2,
            max_seq_len=256,
            attn_config=dict(clip_qkv=0.6, kv_n_heads=2, rope_theta=10000.0),
            ffn_config=dict(ffn_hidden_size=32, moe_num_experts=4, moe_top_k=2, moe_normalize_expert_weights=2.0,
                            ffn_act_fn={"name": "silu"}),
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
            tie_word_embeddings=False,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            initializer_range=0.2,
        ),
        seed=8611,
        prompt_seed=8612,
        norm_suffixes=("norm_1.weight", "norm_2.weight", "norm_f.weight"),
        spec_check=False,
        moe=True,
        switches=[
            ("clip_qkv_matters", "attn_config.clip_qkv=1e4 (never cuts; HF's clamp refuses None)", _sub_set("attn_config", clip_qkv=1e4)),
            ("pnorm_matters", "ffn_config.moe_normalize_expert_weights=1 (the sum)",
             _sub_set("ffn_config", moe_normalize_expert_weights=1.0)),
        ],
    ),
    # ---- jetmoe (issue 21): the mixture of attention heads: per token the
    # top 2 of 4 query-projection experts (kv_channels 12, 2 heads each: 4
    # query heads) over one kv_proj's 2 tiled kv heads, their output
    # projections weighted and summed plus a bias; a MoE MLP (fused
    # input_linear, top 2 of 4) plus a bias; tied embeddings (the default)
    dict(
        name="jetmoe",
        model_cls="JetMoeForCausalLM",
        config_cls="JetMoeConfig",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            num_hidden_layers=2,
            num_key_value_heads=2,
            kv_channels=12,
            intermediate_size=32,
            max_position_embeddings=256,
            activation_function="silu",
            num_local_experts=4,
            num_experts_per_tok=2,
            rms_norm_eps=1e-5,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            initializer_range=0.2,
        ),
        seed=8631,
        prompt_seed=8622,
        spec_check=False,
        moe=True,
        switches=[("top_k_matters", "num_experts_per_tok=1 (one attention expert: 2 query heads)",
                   _set(num_experts_per_tok=1))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- nemotron_h (issue 18): every layer kind, M * - E, as NVIDIA's
    # configs write them (hybrid_override_pattern "ME*M-", post_save): the
    # Mamba2 mixer 8 heads of 12 (not expand · hidden), 2 groups, chunk 8
    # < the 29-token prompt; NoPE attention with head_dim 24; the relu2
    # MLP; the MoE's sigmoid router with its selection bias, noaux_tc over
    # 4 groups of 2 (the best one), top 2 renormalised, times 2.5, non-gated
    # experts and the shared MLP. Biases on (use_bias, mlp_bias). ----
    dict(
        name="nemotron_h",
        model_cls="NemotronHForCausalLM",
        config_cls="NemotronHConfig",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            hybrid_override_pattern="ME*M-",
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=24,
            intermediate_size=48,
            mlp_hidden_act="relu2",
            mlp_bias=True,
            mamba_num_heads=8,
            mamba_head_dim=12,
            n_groups=2,
            ssm_state_size=8,
            conv_kernel=4,
            chunk_size=8,
            use_bias=True,
            n_routed_experts=8,
            num_experts_per_tok=2,
            moe_intermediate_size=20,
            moe_shared_expert_intermediate_size=28,
            n_group=4,
            topk_group=1,
            routed_scaling_factor=2.5,
            norm_topk_prob=True,
            layer_norm_epsilon=1e-5,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            tie_word_embeddings=False,
        ),
        seed=7312,
        prompt_seed=3041,
        score_bias_std=0.1,
        post_save=_nemotron_h_pattern_config,
        spec_check=False,
        moe=True,
        switches=[
            ("group_limit_matters", "topk_group=n_group", _set(topk_group=4)),
            ("norm_topk_prob_matters", "norm_topk_prob=False", _set(norm_topk_prob=False)),
        ],
    ),
    # ---- nemotron_h-latent: the layers_block_type list transformers 5
    # writes, MoE in a latent space (moe_latent_size 24: fc1/fc2_latent_proj
    # around the experts; the router and the shared MLP see the hidden
    # state), one group, routed_scaling_factor 1.7 ----
    dict(
        name="nemotron_h-latent",
        model_cls="NemotronHForCausalLM",
        config_cls="NemotronHConfig",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            layers_block_type=["moe", "linear_attention", "full_attention", "moe"],
            num_attention_heads=4,
            num_key_value_heads=4,
            head_dim=16,
            intermediate_size=48,
            mamba_num_heads=4,
            mamba_head_dim=16,
            n_groups=1,
            ssm_state_size=8,
            conv_kernel=3,
            chunk_size=8,
            n_routed_experts=6,
            num_experts_per_tok=2,
            moe_intermediate_size=20,
            moe_shared_expert_intermediate_size=24,
            moe_latent_size=24,
            routed_scaling_factor=1.7,
            layer_norm_epsilon=1e-5,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            tie_word_embeddings=False,
        ),
        seed=7323,
        prompt_seed=3042,
        score_bias_std=0.1,
        spec_check=False,
        moe=True,
        switches=[
            ("routed_scaling_factor_matters", "routed_scaling_factor=1.0", _set(routed_scaling_factor=1.0)),
        ],
    ),
    # ---- falcon_h1 (issue 18): attention and the Mamba2 mixer in parallel
    # in every layer, every muP multiplier away from 1 (embedding,
    # lm_head, attention in/out, key, ssm in/out, the five ssm_multipliers
    # segments [z | x | B | C | dt], mlp gate/down); the gated RMSNorm on
    # (mamba_rms_norm), before the gate; mamba_d_ssm 96 (not expand ·
    # hidden 128), mamba_d_head "auto" (96 / 8); head_dim 24; chunk 8 < the
    # 29-token prompt; every bias on ----
    dict(
        name="falcon_h1",
        model_cls="FalconH1ForCausalLM",
        config_cls="FalconH1Config",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            intermediate_size=96,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=24,
            hidden_act="silu",
            attention_bias=True,
            mlp_bias=True,
            projectors_bias=True,
            mamba_proj_bias=True,
            mamba_conv_bias=True,
            mamba_d_ssm=96,
            mamba_n_heads=8,
            mamba_d_head="auto",
            mamba_n_groups=2,
            mamba_d_state=8,
            mamba_d_conv=4,
            mamba_expand=2,
            mamba_chunk_size=8,
            mamba_rms_norm=True,
            mamba_norm_before_gate=True,
            embedding_multiplier=2.5,
            lm_head_multiplier=0.6,
            key_multiplier=0.7,
            attention_in_multiplier=1.3,
            attention_out_multiplier=0.8,
            ssm_in_multiplier=1.25,
            ssm_out_multiplier=0.75,
            ssm_multipliers=[0.9, 1.2, 1.4, 0.6, 1.5],
            mlp_multipliers=[1.6, 0.55],
            rms_norm_eps=1e-5,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            tie_word_embeddings=False,
        ),
        seed=7309,
        prompt_seed=3043,
        spec_check=False,
        switches=[
            ("key_multiplier_matters", "key_multiplier=1.0", _set(key_multiplier=1.0)),
            ("ssm_multipliers_matter", "ssm_multipliers=[1.0] * 5", _set(ssm_multipliers=[1.0] * 5)),
            ("mlp_multipliers_matter", "mlp_multipliers=[1.0, 1.0]", _set(mlp_multipliers=[1.0, 1.0])),
            ("attention_in_multiplier_matters", "attention_in_multiplier=1.0", _set(attention_in_multiplier=1.0)),
            ("ssm_in_multiplier_matters", "ssm_in_multiplier=1.0", _set(ssm_in_multiplier=1.0)),
            ("norm_before_gate_matters", "mamba_norm_before_gate=False", _set(mamba_norm_before_gate=False)),
        ],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- falcon_h1-nonorm: no gated RMSNorm (mamba_rms_norm false, the
    # default: y · silu(z)), mamba_d_ssm null and mamba_d_head "auto" in
    # config.json (post_save: mamba_expand · hidden_size = 128 over 8
    # heads), tied embeddings, no biases ----
    dict(
        name="falcon_h1-nonorm",
        model_cls="FalconH1ForCausalLM",
        config_cls="FalconH1Config",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            intermediate_size=80,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=4,
            mamba_d_ssm=None,
            mamba_n_heads=8,
            mamba_d_head="auto",
            mamba_n_groups=1,
            mamba_d_state=8,
            mamba_d_conv=4,
            mamba_expand=2,
            mamba_chunk_size=8,
            mamba_rms_norm=False,
            embedding_multiplier=1.8,
            lm_head_multiplier=0.7,
            ssm_out_multiplier=1.4,
            ssm_multipliers=[1.3, 0.8, 1.1, 0.9, 0.7],
            rms_norm_eps=1e-6,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            tie_word_embeddings=True,
        ),
        seed=7310,
        prompt_seed=3044,
        post_save=_falcon_h1_auto_head,
        spec_check=False,
        switches=[
            ("ssm_multipliers_matter", "ssm_multipliers=[1.0] * 5", _set(ssm_multipliers=[1.0] * 5)),
        ],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- falcon_h1-gguf: a Falcon-H1 llama.cpp's FalconH1Model converts to
    # the same model (its GGUF twins fold every multiplier into the
    # weights): no attention or in_proj biases (it would scale them too, or
    # fail), mamba_d_ssm and mamba_d_head written out, the gated RMSNorm
    # after the gate (llama.cpp's Mamba2 order), untied; every multiplier
    # != 1, MLP and out_proj biases (their scaling commutes) ----
    dict(
        name="falcon_h1-gguf",
        model_cls="FalconH1ForCausalLM",
        config_cls="FalconH1Config",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            intermediate_size=96,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=24,
            hidden_act="silu",
            attention_bias=False,
            mlp_bias=True,
            projectors_bias=True,
            mamba_proj_bias=False,
            mamba_conv_bias=True,
            mamba_d_ssm=96,
            mamba_n_heads=8,
            mamba_d_head=12,
            mamba_n_groups=2,
            mamba_d_state=8,
            mamba_d_conv=4,
            mamba_expand=2,
            mamba_chunk_size=8,
            mamba_rms_norm=True,
            mamba_norm_before_gate=False,
            embedding_multiplier=2.5,
            lm_head_multiplier=0.6,
            key_multiplier=0.7,
            attention_in_multiplier=1.3,
            attention_out_multiplier=0.8,
            ssm_in_multiplier=1.25,
            ssm_out_multiplier=0.75,
            ssm_multipliers=[0.9, 1.2, 1.4, 0.6, 1.5],
            mlp_multipliers=[1.6, 0.55],
            rms_norm_eps=1e-5,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            tie_word_embeddings=False,
        ),
        seed=7311,
        prompt_seed=3045,
        spec_check=False,
        switches=[],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- ministral3 (issue 30): Mistral whose queries are scaled after RoPE
    # by 1 + beta·log(1 + floor(p / original_max_position_embeddings))
    # (get_llama_4_attn_scale); YaRN with original 8, so the temperature steps
    # every 8 positions within the prompts, and a sliding window of 8 ----
    dict(
        name="ministral3",
        model_cls="Ministral3ForCausalLM",
        config_cls="Ministral3Config",
        config=dict(
            TINY,
            hidden_act="silu",
            intermediate_size=96,
            rms_norm_eps=1e-5,
            sliding_window=8,
            tie_word_embeddings=False,
            rope_parameters=dict(rope_type="yarn", rope_theta=10000.0, factor=4.0, original_max_position_embeddings=8,
                                 beta_fast=32.0, beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0,
                                 llama_4_scaling_beta=0.5),
        ),
        seed=3541,
        prompt_seed=3540,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        switches=[("temperature_matters", "llama_4_scaling_beta=0 (no temperature)", _rope_param(llama_4_scaling_beta=0.0))],
        spec_check=False,
    ),
    # ---- mistral4 (issue 30): DeepSeek-V3's latent attention and MoE with
    # Mistral4TopkRouter (softmax scores, groups ranked by the sum of their
    # two best, no bias) and Ministral 3's query temperature (llama_4_scaling_beta);
    # yarn RoPE over the qk_rope part (partial_rotary_factor) ----
    dict(
        name="mistral4",
        model_cls="Mistral4ForCausalLM",
        config_cls="Mistral4Config",
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_size=64,
            intermediate_size=80,
            num_hidden_layers=2,
            num_key_value_heads=4,
            hidden_act="silu",
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            q_lora_rank=32,
            kv_lora_rank=16,
            qk_nope_head_dim=8,
            qk_rope_head_dim=8,
            v_head_dim=12,
            n_routed_experts=8,
            num_experts_per_tok=3,
            n_group=2,
            topk_group=1,
            routed_scaling_factor=1.5,
            norm_topk_prob=True,
            n_shared_experts=1,
            moe_intermediate_size=16,
            first_k_dense_replace=1,
            rope_interleave=True,
            rope_parameters=dict(rope_type="yarn", rope_theta=10000.0, factor=4.0, original_max_position_embeddings=8,
                                 beta_fast=32.0, beta_slow=1.0, mscale=1.0, mscale_all_dim=1.0,
                                 llama_4_scaling_beta=0.5, partial_rotary_factor=0.5),
        ),
        seed=3661,
        prompt_seed=3622,
        record_rope=True,
        spec_check=False,
        moe=True,
        switches=[
            ("group_limit_matters", "n_group=topk_group=1 (no group limit)", _set(n_group=1, topk_group=1)),
            ("temperature_matters", "llama_4_scaling_beta=0 (no temperature)", _rope_param(llama_4_scaling_beta=0.0)),
        ],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- afmoe (issue 30): Arcee's AFMoE (Trinity): per-head q/k RMSNorm,
    # RoPE on the sliding layers only (the full ones are NoPE), the attention
    # output gated by sigmoid(gate_proj(h)), sandwich norms around attention
    # and MLP, a dense first layer, then MoE with AfmoeTokenChoiceRouter
    # (sigmoid, chosen by score + expert_bias, renormalised, times
    # route_scale) beside shared experts; muP input scaling ----
    dict(
        name="afmoe",
        model_cls="AfmoeForCausalLM",
        config_cls="AfmoeConfig",
        config=dict(
            TINY,
            num_hidden_layers=2,
            num_dense_layers=1,
            intermediate_size=64,
            moe_intermediate_size=16,
            num_experts=4,
            num_experts_per_tok=2,
            num_shared_experts=1,
            route_scale=1.5,
            global_attn_every_n_layers=2,
            sliding_window=8,
            mup_enabled=True,
            rms_norm_eps=1e-5,
            tie_word_embeddings=True,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0),
        ),
        seed=3711,
        prompt_seed=3702,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        embed_std=0.05,
        score_bias_std=0.5,
        extra_params={"mlp.expert_bias": (0.0, 0.5)},
        spec_check=False,
        moe=True,
        switches=[
            ("window_matters", "sliding_window=4096 (no key is cut)", _set(sliding_window=4096)),
            ("mup_matters", "mup_enabled=False", _set(mup_enabled=False)),
        ],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- bitnet (issue 30): Llama with RMSNorm sub-norms on the merged
    # attention output (attn_sub_norm) and on act(gate) · up (ffn_sub_norm),
    # relu2; unquantized (no quantization_config) ----
    dict(
        name="bitnet",
        model_cls="BitNetForCausalLM",
        config_cls="BitNetConfig",
        config=dict(
            TINY_NO_HEAD_DIM,
            intermediate_size=96,
            hidden_act="relu2",
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0),
        ),
        seed=3601,
        prompt_seed=3602,
        spec_check=False,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- mistral3 (issue 30): Mistral3ForConditionalGeneration as Mistral
    # Small 3.x is published: the decoder under text_config (a mistral one:
    # no llama_4_scaling_beta, so no temperature), weights under
    # model.language_model, lm_head at the top; a one-layer Pixtral vision
    # tower and projector (not read) ----
    dict(
        name="mistral3",
        model_cls="Mistral3ForConditionalGeneration",
        config_cls="Mistral3Config",
        config=dict(
            text_config=dict(
                TINY,
                model_type="mistral",
                hidden_act="silu",
                intermediate_size=96,
                rms_norm_eps=1e-5,
                sliding_window=None,
                tie_word_embeddings=False,
                rope_parameters=dict(rope_type="default", rope_theta=100000.0),
            ),
            vision_config=dict(model_type="pixtral", hidden_size=16, intermediate_size=16, num_hidden_layers=1,
                               num_attention_heads=2, head_dim=8, image_size=16, patch_size=4),
            tie_word_embeddings=False,
        ),
        seed=3621,
        prompt_seed=3622,
        spec_check=False,
    ),
    # ---- gptj (issue 30): parallel attention and MLP on one LayerNorm, GPT-J's
    # interleaved RoPE on the first rotary_dim 8 of head_dim 16, q/k/v/out
    # without bias, fc_in/fc_out and lm_head with biases ----
    dict(
        name="gptj",
        model_cls="GPTJForCausalLM",
        config_cls="GPTJConfig",
        config=dict(
            vocab_size=256,
            n_positions=256,
            n_embd=64,
            n_layer=2,
            n_head=4,
            n_inner=96,
            rotary_dim=8,
            activation_function="gelu_new",
            layer_norm_epsilon=1e-5,
            tie_word_embeddings=False,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            initializer_range=0.2,
        ),
        seed=3641,
        prompt_seed=3642,
        norm_suffixes=("ln_1.weight", "ln_f.weight"),
        spec_check=False,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- falcon (issue 30): new_decoder_architecture (Falcon-40B/180B's
    # layout): query_key_value per kv group [q, q | k | v] (GQA 4 on 2),
    # ln_attn and ln_mlp feeding attention and MLP in parallel, rope theta
    # 10000, untied; no biases (as the published checkpoints: llama.cpp's
    # FalconModel cannot regroup a query_key_value bias). The multi_query,
    # per-head and sequential layouts and the biases were run against the
    # oracle by hand (temporary fixtures, not kept) ----
    dict(
        name="falcon",
        model_cls="FalconForCausalLM",
        config_cls="FalconConfig",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_kv_heads=2,
            new_decoder_architecture=True,
            multi_query=False,
            parallel_attn=True,
            bias=False,
            ffn_hidden_size=96,
            activation="gelu",
            layer_norm_epsilon=1e-5,
            max_position_embeddings=256,
            tie_word_embeddings=False,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            initializer_range=0.2,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0),
        ),
        seed=3661,
        prompt_seed=3662,
        norm_suffixes=("ln_attn.weight", "ln_mlp.weight", "ln_f.weight"),
        spec_check=False,
    ),
    # ---- solar_open (issue 30): Glm4MoeMoE on every layer (sigmoid router
    # with e_score_correction_bias, noaux_tc over 4 groups of 2, best 2, top
    # 3 of 8 renormalised, times 2.5; a shared MLP) under Llama attention
    # with q/k/v biases, full-width RoPE ----
    dict(
        name="solar_open",
        model_cls="SolarOpenForCausalLM",
        config_cls="SolarOpenConfig",
        config=dict(
            {k: v for k, v in TINY.items() if k != "intermediate_size"},
            hidden_act="silu",
            rms_norm_eps=1e-5,
            attention_bias=True,
            tie_word_embeddings=False,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0),
            n_routed_experts=8,
            num_experts_per_tok=3,
            n_group=4,
            topk_group=2,
            n_shared_experts=1,
            moe_intermediate_size=24,
            routed_scaling_factor=2.5,
            norm_topk_prob=True,
        ),
        seed=3701,
        prompt_seed=3702,
        score_bias_std=0.1,
        spec_check=False,
        moe=True,
        switches=[("norm_topk_prob_matters", "norm_topk_prob=False", _set(norm_topk_prob=False))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- mellum (issue 30): layer 0 sliding (window 8, rope theta 500) with a
    # dense MLP, layer 1 full (theta 10000) with Qwen3-MoE's block (8 experts,
    # top 2 renormalised); per-head q/k norms ----
    dict(
        name="mellum",
        model_cls="MellumForCausalLM",
        config_cls="MellumConfig",
        config=dict(
            TINY,
            hidden_act="silu",
            intermediate_size=96,
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            sliding_window=8,
            layer_types=["sliding_attention", "full_attention"],
            mlp_layer_types=["dense", "sparse"],
            rope_parameters={"full_attention": dict(rope_type="default", rope_theta=10000.0),
                             "sliding_attention": dict(rope_type="default", rope_theta=500.0)},
            num_experts=8,
            num_experts_per_tok=2,
            moe_intermediate_size=24,
            norm_topk_prob=True,
        ),
        seed=3721,
        prompt_seed=3722,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        spec_check=False,
        moe=True,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- iquestcoder (issue 30): IQuestCoderConfig run by LlamaForCausalLM
    # (transformers' mapping for the model type): GQA 4 on 2 with an explicit
    # head_dim 24 (not hidden / heads), untied ----
    dict(
        name="iquestcoder",
        model_cls="LlamaForCausalLM",
        config_cls="IQuestCoderConfig",
        config=dict(
            TINY,
            head_dim=24,
            hidden_act="silu",
            intermediate_size=96,
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0),
        ),
        seed=3741,
        prompt_seed=3742,
        spec_check=False,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- nanochat (issue 30): weightless RMSNorms (embeddings, layers, q/k
    # after RoPE, final), RoPE with rotate_half's flipped sign, relu2 MLP
    # fc1/fc2, q/k/v/o biases, logits soft-capped at 8 ----
    dict(
        name="nanochat",
        model_cls="NanoChatForCausalLM",
        config_cls="NanoChatConfig",
        config=dict(
            TINY_NO_HEAD_DIM,
            hidden_act="relu2",
            intermediate_size=96,
            rms_norm_eps=1e-6,
            attention_bias=True,
            final_logit_softcapping=8.0,
            tie_word_embeddings=False,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0),
        ),
        seed=3761,
        prompt_seed=3762,
        spec_check=False,
        switches=[("softcap_matters", "final_logit_softcapping=None", _set(final_logit_softcapping=None))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- jais2 (issue 30): LayerNorm with bias for every norm, non-gated
    # relu2 MLP up/down with biases, q/k/v/o biases, GQA 4 on 2 ----
    dict(
        name="jais2",
        model_cls="Jais2ForCausalLM",
        config_cls="Jais2Config",
        config=dict(
            TINY,
            hidden_act="relu2",
            intermediate_size=96,
            layer_norm_eps=1e-5,
            attention_bias=True,
            mlp_bias=True,
            tie_word_embeddings=False,
            rope_parameters=dict(rope_type="default", rope_theta=10000.0),
        ),
        seed=3781,
        prompt_seed=3782,
        spec_check=False,
    ),
    # ---- glm4_moe_lite (issue 30): DeepSeek-V3's MLA (q_lora 32, kv_lora 16,
    # nope 8 + rope 4, v 12, interleaved RoPE) with mlp_layer_types
    # [sparse, dense] (a pattern first_k_dense_replace cannot say): layer 0
    # Glm4MoeMoE (sigmoid noaux_tc, 4 groups of 2, best 2, top 3 of 8, x 2.5,
    # shared MLP), layer 1 dense ----
    dict(
        name="glm4_moe_lite",
        model_cls="Glm4MoeLiteForCausalLM",
        config_cls="Glm4MoeLiteConfig",
        config=dict(
            TINY_NO_HEAD_DIM,
            intermediate_size=80,
            num_key_value_heads=4,
            hidden_act="silu",
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            q_lora_rank=32,
            kv_lora_rank=16,
            qk_nope_head_dim=8,
            qk_rope_head_dim=4,
            v_head_dim=12,
            n_routed_experts=8,
            num_experts_per_tok=3,
            n_group=4,
            topk_group=2,
            routed_scaling_factor=2.5,
            norm_topk_prob=True,
            n_shared_experts=1,
            moe_intermediate_size=24,
            mlp_layer_types=["sparse", "dense"],
            rope_interleave=True,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        ),
        seed=3801,
        prompt_seed=3802,
        score_bias_std=0.1,
        spec_check=False,
        moe=True,
        switches=[("rope_interleave_matters", "rope_interleave=False", _set(rope_interleave=False))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- deepseek_v32 (issue 30): DeepSeek-V3.2's sparse attention. The
    # lightning indexer keeps index_topk = 4 keys per query, fewer than every
    # prompt + generation but the shortest, so the selection drops keys in
    # prefill and in decode (HF's eager path folds it into the mask in both);
    # 16 indexer heads make an exact zero score (all relu'd) and so a tie at
    # the top-k boundary unlikely. MLP types sparse, dense (mlp_layer_types);
    # oracle: transformers fp32, eager ----
    dict(
        name="deepseek_v32",
        model_cls="DeepseekV32ForCausalLM",
        config_cls="DeepseekV32Config",
        config=dict(
            TINY_NO_HEAD_DIM,
            intermediate_size=80,
            num_key_value_heads=4,
            hidden_act="silu",
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            q_lora_rank=32,
            kv_lora_rank=16,
            qk_nope_head_dim=8,
            qk_rope_head_dim=4,
            v_head_dim=12,
            n_routed_experts=8,
            num_experts_per_tok=3,
            n_group=4,
            topk_group=2,
            routed_scaling_factor=2.5,
            norm_topk_prob=True,
            n_shared_experts=1,
            moe_intermediate_size=24,
            first_k_dense_replace=1,
            mlp_layer_types=["sparse", "dense"],
            index_topk=4,
            index_head_dim=8,
            index_n_heads=16,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        ),
        seed=3811,
        prompt_seed=3812,
        score_bias_std=0.1,
        spec_check=False,
        moe=True,
        switches=[("index_topk_matters", "index_topk=64", _set(index_topk=64))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- glm_moe_dsa (issue 30): GLM-5, deepseek_v32's sparse attention with
    # the indexer's RoPE on interleaved pairs; index_topk = 4 drops keys in
    # prefill and decode; every layer's indexer "full" (the default
    # pattern); oracle: transformers fp32, eager ----
    dict(
        name="glm_moe_dsa",
        model_cls="GlmMoeDsaForCausalLM",
        config_cls="GlmMoeDsaConfig",
        config=dict(
            TINY_NO_HEAD_DIM,
            intermediate_size=72,
            num_key_value_heads=4,
            hidden_act="silu",
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            q_lora_rank=24,
            kv_lora_rank=16,
            qk_nope_head_dim=12,
            qk_rope_head_dim=4,
            v_head_dim=8,
            n_routed_experts=8,
            num_experts_per_tok=2,
            n_group=1,
            topk_group=1,
            routed_scaling_factor=1.8,
            norm_topk_prob=True,
            n_shared_experts=1,
            moe_intermediate_size=20,
            first_k_dense_replace=1,
            mlp_layer_types=["dense", "sparse"],
            index_topk=6,
            index_head_dim=12,
            index_n_heads=16,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        ),
        seed=3821,
        prompt_seed=3822,
        score_bias_std=0.1,
        spec_check=False,
        moe=True,
        switches=[("index_topk_matters", "index_topk=64", _set(index_topk=64))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- bloom (issue 30): ALiBi on 6 heads (slopes 1/4, 1/16, 1/64, 1/256 for
    # the closest power of 2, then 1/2, 1/8), per-head fused query_key_value,
    # the embeddings' LayerNorm, sequential layers, biases, tied ----
    dict(
        name="bloom",
        model_cls="BloomForCausalLM",
        config_cls="BloomConfig",
        config=dict(
            vocab_size=256,
            hidden_size=48,
            n_layer=2,
            n_head=6,
            layer_norm_epsilon=1e-5,
            apply_residual_connection_post_layernorm=False,
            tie_word_embeddings=True,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            initializer_range=0.2,
        ),
        seed=3681,
        prompt_seed=3682,
        weight_std=0.35,
        norm_suffixes=("layernorm.weight", "ln_f.weight"),
        spec_check=False,
    ),
    # ---- mpt (issue 30): ALiBi (4 heads: slopes 1/4, 1/16, 1/64, 1/256),
    # Wqkv clamped to ±1.5 (clip_qkv), softmax_scale 0.3 (not 1/√16),
    # LayerNorms without bias, no projection biases, tied ----
    dict(
        name="mpt",
        model_cls="MptForCausalLM",
        config_cls="MptConfig",
        config=dict(
            vocab_size=256,
            d_model=64,
            n_heads=4,
            n_layers=2,
            max_seq_len=256,
            layer_norm_epsilon=1e-5,
            attn_config=dict(clip_qkv=1.5, softmax_scale=0.3),
            tie_word_embeddings=True,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            initializer_range=0.2,
        ),
        seed=3821,
        prompt_seed=3822,
        norm_suffixes=("norm_1.weight", "norm_2.weight", "norm_f.weight"),
        spec_check=False,
        switches=[("clip_qkv_matters", "clip_qkv=None", lambda cfg: setattr(cfg.attn_config, "clip_qkv", None))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- recurrent_gemma (issue 30): Griffin, block_types [recurrent,
    # attention] repeated over 3 layers (R, A, R); MQA local attention with
    # window 8 (< the 29-token prompt) and RoPE on half of each 12-wide head;
    # the RG-LRU of lru_width 64 (not hidden) in 4 head blocks of 16 with
    # decays from fast to slow (recurrent_param -3.5 ± 1.5); hidden 48, whose
    # √48 differs in bfloat16 (the normalizer) from float32; logits soft-cap
    # 5 so that it bites ----
    dict(
        name="recurrent_gemma",
        model_cls="RecurrentGemmaForCausalLM",
        config_cls="RecurrentGemmaConfig",
        config=dict(
            vocab_size=256,
            hidden_size=48,
            intermediate_size=96,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=1,
            lru_width=64,
            attention_window_size=8,
            conv1d_width=4,
            logits_soft_cap=5.0,
            block_types=["recurrent", "attention"],
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.5},
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
        ),
        seed=7601,
        prompt_seed=3601,
        embed_std=0.1,
        norm_center=1.0,  # (1 + w) ~ 2
        extra_params={
            "rg_lru.recurrent_param": (-3.5, 1.5),
            "rg_lru.input_gate_weight": (0.0, 0.3),
            "rg_lru.recurrent_gate_weight": (0.0, 0.3),
            "rg_lru.input_gate_bias": (0.0, 0.1),
            "rg_lru.recurrent_gate_bias": (0.0, 0.1),
        },
        # Not (1, ...): RecurrentGemmaRecurrentBlock's first decode step
        # reads conv1d_state, made hidden_size wide (not lru_width), unless a
        # prefill of 2 or more tokens replaced it; a 1-token prompt fails.
        prompt_lengths=(2, 12, 29),
        # No record_rope: each attention block holds its own rotary_emb (none
        # on RecurrentGemmaModel); partial_rotary_matters checks the RoPE.
        switches=[
            ("window_matters", "attention_window_size=4096 (no key is cut)", _set(attention_window_size=4096)),
            ("softcap_matters", "logits_soft_cap=1e6", _set(logits_soft_cap=1e6)),
            ("partial_rotary_matters", "partial_rotary_factor=1.0", _partial_rotary(1.0)),
        ],
        stored_dtype="bfloat16",  # the tracked tree's limit
        spec_check=False,
    ),
    # ---- kimi_linear (issue 30): Kimi Delta Attention layers 0 and 2 (4
    # heads × 8, per-channel decay, slow and fast: A_log -1.5 ± 1.0) around
    # an MLA layer 1 without RoPE; layer 0 a dense MLP, 1 and 2 the
    # sigmoid/noaux_tc MoE (4 experts in 2 groups, top 2 of 1 group, a
    # shared expert); prompts past the 64-token chunk ----
    dict(
        name="kimi_linear",
        model_cls="KimiLinearForCausalLM",
        config_cls="KimiLinearConfig",
        config=dict(
            vocab_size=256,
            hidden_size=64,
            intermediate_size=96,
            moe_intermediate_size=24,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=4,
            kv_lora_rank=16,
            q_lora_rank=None,
            qk_nope_head_dim=8,
            qk_rope_head_dim=4,
            v_head_dim=12,
            num_local_experts=4,
            num_experts_per_tok=2,
            n_shared_experts=1,
            n_group=2,
            topk_group=1,
            norm_topk_prob=True,
            routed_scaling_factor=1.5,
            linear_head_dim=8,
            linear_num_heads=4,
            linear_conv_kernel_dim=4,
            layer_types=["linear_attention", "full_attention", "linear_attention"],
            mlp_layer_types=["dense", "sparse", "sparse"],
            hidden_act="silu",
            rms_norm_eps=1e-6,
            tie_word_embeddings=False,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
        ),
        seed=7621,
        prompt_seed=3621,
        score_bias_std=0.5,
        extra_params={"A_log": (-1.5, 1.0)},
        prompt_lengths=GDN_PROMPT_LENGTHS,
        switches=[
            ("group_limit_matters", "topk_group=n_group", _set(topk_group=2)),
            ("norm_topk_prob_matters", "norm_topk_prob=False", _set(norm_topk_prob=False)),
        ],
        stored_dtype="bfloat16",  # the tracked tree's limit
        spec_check=False,
        moe=True,
    ),
    # ---- youtu (issue 30): Youtu-LLM: DeepSeek-V3's latent attention (q LoRA,
    # interleaved RoPE pairs) under Llama's decoder layer, a dense SwiGLU MLP
    # on every layer, tied embeddings ----
    dict(
        name="youtu",
        model_cls="YoutuForCausalLM",
        config_cls="YoutuConfig",
        config=dict(
            TINY_NO_HEAD_DIM,
            # no pad token: YoutuPreTrainedModel._init_weights zeroes the
            # embedding's padding_idx row on every load (through .data, past
            # the loaded-weights guard), tied to lm_head here
            pad_token_id=None,
            intermediate_size=96,
            num_key_value_heads=4,
            hidden_act="silu",
            rms_norm_eps=1e-6,
            tie_word_embeddings=True,
            q_lora_rank=32,
            kv_lora_rank=16,
            qk_nope_head_dim=8,
            qk_rope_head_dim=8,
            v_head_dim=12,
            rope_interleave=True,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
        ),
        seed=4103,
        prompt_seed=4102,
        spec_check=False,
        switches=[("rope_interleave_matters", "rope_interleave=False", _set(rope_interleave=False))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- longcat_flash (issue 30): LongCat-Flash: two MLA + dense-MLP
    # sublayers per layer (q scaled by sqrt(hidden / q_lora), the kv latent by
    # sqrt(hidden / kv_lora)), and a shortcut MoE from the first sublayer's
    # post-attention norm to the second's output: softmax router over 4 SwiGLU
    # experts and 2 zero-computation (identity) experts, top 3 by score +
    # correction bias, not renormalised, times 1.5 ----
    dict(
        name="longcat_flash",
        model_cls="LongcatFlashForCausalLM",
        config_cls="LongcatFlashConfig",
        config=dict(
            vocab_size=256,
            hidden_size=32,
            num_layers=2,
            num_attention_heads=2,
            ffn_hidden_size=32,
            q_lora_rank=16,
            kv_lora_rank=8,
            qk_nope_head_dim=8,
            qk_rope_head_dim=8,
            head_dim=8,
            v_head_dim=8,
            moe_topk=3,
            n_routed_experts=4,
            zero_expert_num=2,
            expert_ffn_hidden_size=16,
            routed_scaling_factor=1.5,
            hidden_act="silu",
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            max_position_embeddings=256,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            initializer_range=0.2,
        ),
        seed=4203,
        prompt_seed=4202,
        norm_suffixes=("norm.weight", "layernorm.0.weight", "layernorm.1.weight"),  # the sublayers' norms (ModuleLists)
        score_bias_std=0.1,
        spec_check=False,
        moe=True,
        switches=[("routed_scaling_factor_matters", "routed_scaling_factor=1", _set(routed_scaling_factor=1.0))],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- minimax (issue 30): MiniMax-Text-01: lightning attention layers
    # (silu'd per-head q, k, v; unnormalised linear attention whose state
    # decays by exp(-slope) a token, the slopes per head and layer; RMSNorm
    # over the heads, sigmoid output gate) beside softmax attention, Mixtral
    # MoE, the residual taken after the input norm with alpha / beta factors;
    # block_size 8, so HF's prefill crosses blocks ----
    dict(
        name="minimax",
        model_cls="MiniMaxForCausalLM",
        config_cls="MiniMaxConfig",
        config=dict(
            vocab_size=256,
            hidden_size=32,
            intermediate_size=32,
            num_hidden_layers=3,
            num_attention_heads=4,
            num_key_value_heads=2,
            head_dim=8,
            layer_types=["linear_attention", "full_attention", "linear_attention"],
            block_size=8,
            num_local_experts=4,
            num_experts_per_tok=2,
            full_attn_alpha_factor=1.5,
            linear_attn_alpha_factor=1.3,
            linear_attn_beta_factor=0.8,
            mlp_alpha_factor=1.2,
            hidden_act="silu",
            rms_norm_eps=1e-5,
            tie_word_embeddings=False,
            max_position_embeddings=256,
            rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            initializer_range=0.2,
        ),
        seed=4301,
        prompt_seed=4302,
        post_save=_minimax_checkpoint,
        spec_check=False,
        moe=True,
        switches=[
            ("linear_attn_alpha_matters", "linear_attn_alpha_factor=1", _set(linear_attn_alpha_factor=1)),
            ("full_attn_alpha_matters", "full_attn_alpha_factor=1", _set(full_attn_alpha_factor=1)),
            ("mlp_alpha_matters", "mlp_alpha_factor=1", _set(mlp_alpha_factor=1)),
        ],
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- internlm2 (issue 30; transformers has no InternLM2: the oracle is
    # mlx-lm's internlm2.py): Llama under InternLM's names with one fused
    # wqkv, rows per kv group [q_1 .. q_r | k | v] (GQA 4 on 2); config.json
    # as internlm/internlm2_5-7b-chat publishes it (bias, rope_scaling
    # dynamic: no effect below max_position_embeddings) ----
    dict(
        name="internlm2",
        mlx_module="internlm2",
        config={
            "architectures": ["InternLM2ForCausalLM"],
            "attn_implementation": "eager",
            "auto_map": {
                "AutoConfig": "configuration_internlm2.InternLM2Config",
                "AutoModel": "modeling_internlm2.InternLM2ForCausalLM",
                "AutoModelForCausalLM": "modeling_internlm2.InternLM2ForCausalLM",
            },
            "bias": False,
            "bos_token_id": 1,
            "eos_token_id": 2,
            "hidden_act": "silu",
            "hidden_size": 48,
            "initializer_range": 0.02,
            "intermediate_size": 96,
            "max_position_embeddings": 32768,
            "model_type": "internlm2",
            "num_attention_heads": 4,
            "num_hidden_layers": 2,
            "num_key_value_heads": 2,
            "pad_token_id": 2,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-05,
            "rope_scaling": {"factor": 2.0, "type": "dynamic"},
            "rope_theta": 1000000,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "transformers_version": "4.41.0",
            "use_cache": True,
            "vocab_size": 256,
        },
        seed=7701,
        prompt_seed=3701,
        stored_dtype="bfloat16",  # the tracked tree's limit
        spec_check=False,
    ),
    # ---- deepseek (issue 30; DeepSeekMoE v1, remote code: the oracle is
    # mlx-lm's deepseek.py): Llama attention (MHA), layer 0 dense
    # (first_k_dense_replace 1), layer 1 MoE: softmax over 8 experts, top 3
    # not renormalised (norm_topk_prob false, as published), plus 2 shared
    # experts' width of one MLP; config.json as
    # deepseek-ai/deepseek-moe-16b-base publishes it ----
    dict(
        name="deepseek",
        mlx_module="deepseek",
        unstack=("switch_mlp", "experts"),
        config={
            "architectures": ["DeepseekForCausalLM"],
            "attention_bias": False,
            "attention_dropout": 0.0,
            "auto_map": {
                "AutoConfig": "configuration_deepseek.DeepseekConfig",
                "AutoModel": "modeling_deepseek.DeepseekModel",
                "AutoModelForCausalLM": "modeling_deepseek.DeepseekForCausalLM",
            },
            "aux_loss_alpha": 0.001,
            "bos_token_id": 1,
            "eos_token_id": 2,
            "first_k_dense_replace": 1,
            "hidden_act": "silu",
            "hidden_size": 48,
            "initializer_range": 0.02,
            "intermediate_size": 96,
            "max_position_embeddings": 4096,
            "model_type": "deepseek",
            "moe_intermediate_size": 12,
            "moe_layer_freq": 1,
            "n_routed_experts": 8,
            "n_shared_experts": 2,
            "norm_topk_prob": False,
            "num_attention_heads": 4,
            "num_experts_per_tok": 3,
            "num_hidden_layers": 2,
            "num_key_value_heads": 4,
            "pretraining_tp": 1,
            "rms_norm_eps": 1e-06,
            "rope_scaling": None,
            "rope_theta": 10000,
            "scoring_func": "softmax",
            "seq_aux": True,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "transformers_version": "4.36.0",
            "use_cache": True,
            "vocab_size": 256,
        },
        seed=7714,
        prompt_seed=3711,
        stored_dtype="bfloat16",  # the tracked tree's limit
        spec_check=False,
    ),
    # ---- xverse (issue 30; remote code, mlx-lm loads it with llama.py):
    # a Llama under model_type xverse; config.json as xverse/XVERSE-7B
    # publishes it (no num_key_value_heads, no rope_theta: MHA and base
    # 10000 by default; pad 1, bos 2, eos 3; tie_word_embeddings false,
    # which mlx-lm's llama.py needs: its default is true) ----
    dict(
        name="xverse",
        mlx_module="llama",
        config={
            "architectures": ["XverseForCausalLM"],
            "auto_map": {
                "AutoConfig": "configuration_xverse.XverseConfig",
                "AutoModelForCausalLM": "modeling_xverse.XverseForCausalLM",
            },
            "bos_token_id": 2,
            "eos_token_id": 3,
            "hidden_act": "silu",
            "hidden_size": 48,
            "initializer_range": 0.02,
            "intermediate_size": 96,
            "max_position_embeddings": 8192,
            "max_tokenizer_truncation": 6144,
            "model_type": "xverse",
            "num_attention_heads": 4,
            "num_hidden_layers": 2,
            "pad_token_id": 1,
            "rms_norm_eps": 1e-06,
            "tie_word_embeddings": False,
            "torch_dtype": "bfloat16",
            "transformers_version": "4.30.2",
            "use_cache": True,
            "vocab_size": 256,
        },
        seed=7722,
        prompt_seed=3721,
        stored_dtype="bfloat16",  # the tracked tree's limit
        spec_check=False,
    ),
    # ---- plamo (issue 30; PLaMo-13B, remote code: the oracle is mlx-lm's
    # plamo.py): one norm feeding attention and MLP in parallel, 4 query
    # heads on ceil(4 / n_shared_head 2) = 2 key-value heads tiled (query
    # head h reads kv head h mod 2); layers under model.layers.layers;
    # config.json in PLaMo-13B's layout (its num_key_value_heads, equal to
    # the heads, is not read) ----
    dict(
        name="plamo",
        mlx_module="plamo",
        config={
            "architectures": ["PlamoForCausalLM"],
            "auto_map": {
                "AutoConfig": "modeling_plamo.PlamoConfig",
                "AutoModelForCausalLM": "modeling_plamo.PlamoForCausalLM",
            },
            "bos_token_id": 1,
            "eos_token_id": 2,
            "hidden_size": 48,
            "intermediate_size": 96,
            "max_position_embeddings": 4096,
            "model_type": "plamo",
            "n_shared_head": 2,
            "num_attention_heads": 4,
            "num_hidden_layers": 2,
            "num_key_value_heads": 4,
            "rms_norm_eps": 1e-06,
            "tie_word_embeddings": False,
            "tokenizer_class": "PlamoTokenizer",
            "torch_dtype": "bfloat16",
            "transformers_version": "4.31.0",
            "use_cache": True,
            "vocab_size": 256,
        },
        seed=7733,
        prompt_seed=3731,
        stored_dtype="bfloat16",  # the tracked tree's limit
        spec_check=False,
    ),
    # ---- qwen (issue 30; Qwen 1.0, remote code: the oracle is mlx-lm's
    # qwen.py): fused c_attn with a bias, w1 / w2 / c_proj MLP of
    # intermediate_size / 2; config.json as Qwen/Qwen-7B publishes it
    # (no bos/eos: eos in generation_config.json; use_logn_attn and
    # use_dynamic_ntk act only past seq_length) ----
    dict(
        name="qwen",
        mlx_module="qwen",
        config={
            "architectures": ["QWenLMHeadModel"],
            "auto_map": {
                "AutoConfig": "configuration_qwen.QWenConfig",
                "AutoModelForCausalLM": "modeling_qwen.QWenLMHeadModel",
            },
            "attn_dropout_prob": 0.0,
            "bf16": False,
            "emb_dropout_prob": 0.0,
            "fp16": False,
            "fp32": False,
            "hidden_size": 48,
            "initializer_range": 0.02,
            "intermediate_size": 192,
            "kv_channels": 12,
            "layer_norm_epsilon": 1e-06,
            "max_position_embeddings": 8192,
            "model_type": "qwen",
            "no_bias": True,
            "num_attention_heads": 4,
            "num_hidden_layers": 2,
            "onnx_safe": None,
            "rotary_emb_base": 10000,
            "rotary_pct": 1.0,
            "scale_attn_weights": True,
            "seq_length": 8192,
            "tie_word_embeddings": False,
            "tokenizer_class": "QWenTokenizer",
            "transformers_version": "4.32.0",
            "use_cache": True,
            "use_dynamic_ntk": True,
            "use_flash_attn": "auto",
            "use_logn_attn": True,
            "vocab_size": 256,
        },
        generation_config={
            "chat_format": "chatml",
            "eos_token_id": 2,
            "max_window_size": 6144,
            "pad_token_id": 2,
            "transformers_version": "4.32.0",
        },
        seed=7741,
        prompt_seed=3741,
        bias_std=0.1,
        stored_dtype="bfloat16",  # the tracked tree's limit
        spec_check=False,
    ),
    # ---- openelm (issue 30; apple/OpenELM, remote code: the oracle is
    # mlx-lm's openelm.py): per-layer widths, 2 then 4 query heads on 1 then
    # 2 kv heads of 12, per-head q/k RMSNorm, GLU MLP 32 then 96 wide
    # (make_divisible of 0.5 and 2.0 x 48 by 16), tied; config.json in
    # OpenELM-270M's layout ----
    dict(
        name="openelm",
        mlx_module="openelm",
        config={
            "activation_fn_name": "swish",
            "architectures": ["OpenELMForCausalLM"],
            "auto_map": {
                "AutoConfig": "configuration_openelm.OpenELMConfig",
                "AutoModelForCausalLM": "modeling_openelm.OpenELMForCausalLM",
            },
            "bos_token_id": 1,
            "eos_token_id": 2,
            "ffn_dim_divisor": 16,
            "ffn_multipliers": [0.5, 2.0],
            "ffn_with_glu": True,
            "head_dim": 12,
            "initializer_range": 0.02,
            "max_context_length": 2048,
            "model_dim": 48,
            "model_type": "openelm",
            "normalization_layer_name": "rms_norm",
            "normalize_qk_projections": True,
            "num_gqa_groups": 2,
            "num_kv_heads": [1, 2],
            "num_query_heads": [2, 4],
            "num_transformer_layers": 2,
            "qkv_multipliers": [0.5, 1.0],
            "rope_freq_constant": 10000,
            "rope_max_length": 4096,
            "share_input_output_layers": True,
            "torch_dtype": "float32",
            "transformers_version": "4.39.3",
            "use_cache": True,
            "vocab_size": 256,
        },
        seed=7751,
        prompt_seed=3751,
        weight_std=0.5,
        extra_params={"token_embeddings.weight": (0.0, 0.3)},  # tied: small embeddings, or greedy repeats the input token
        stored_dtype="bfloat16",  # the tracked tree's limit
        spec_check=False,
    ),
    # ---- qwen2_vl (issues 30, 32): Qwen2VLForConditionalGeneration's text
    # model: Qwen2's decoder (q/k/v biases) under M-RoPE (mrope_section
    # [2, 3, 3] over head_dim 16's 8 frequencies), which for text-only input
    # is plain RoPE; config under text_config, weights under
    # model.language_model, tied at the top level; a one-block vision tower
    # (not read) ----
    dict(
        name="qwen2_vl",
        model_cls="Qwen2VLForConditionalGeneration",
        config_cls="Qwen2VLConfig",
        config=dict(
            text_config=dict(
                TINY_NO_HEAD_DIM,
                intermediate_size=32,
                rms_norm_eps=1e-6,
                rope_parameters=dict(rope_type="default", rope_theta=10000.0, mrope_section=[2, 3, 3]),
            ),
            vision_config=dict(depth=1, embed_dim=16, hidden_size=64, num_heads=2, mlp_ratio=1, patch_size=2,
                               temporal_patch_size=1, spatial_merge_size=2),
            tie_word_embeddings=True,
        ),
        seed=7701,
        prompt_seed=3701,
        spec_check=False,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- qwen2_5_vl (issues 30, 32): Qwen2_5_VLForConditionalGeneration's
    # text model (the same Qwen2VLTextModel) with the published configs' RoPE
    # spelling (rope_scaling type "mrope", post_save) and sliding window 8 on
    # layer 1 (max_window_layers 1; prompts 12, 29); a one-block vision
    # tower (not read) ----
    dict(
        name="qwen2_5_vl",
        model_cls="Qwen2_5_VLForConditionalGeneration",
        config_cls="Qwen2_5_VLConfig",
        config=dict(
            text_config=dict(
                TINY_NO_HEAD_DIM,
                intermediate_size=32,
                rms_norm_eps=1e-6,
                use_sliding_window=True,
                sliding_window=8,
                max_window_layers=1,
                rope_parameters=dict(rope_type="default", rope_theta=10000.0, mrope_section=[4, 2, 2]),
            ),
            vision_config=dict(depth=1, hidden_size=16, intermediate_size=16, num_heads=2, out_hidden_size=64,
                               patch_size=2, temporal_patch_size=1, spatial_merge_size=2, window_size=4,
                               fullatt_block_indexes=[0]),
            tie_word_embeddings=True,
        ),
        seed=7711,
        prompt_seed=3711,
        prompt_lengths=WINDOW_PROMPT_LENGTHS,
        post_save=_qwen2_vl_published_rope,
        switches=[("window_matters", "use_sliding_window=False", _in_text_config(_set(layer_types=["full_attention", "full_attention"])))],
        spec_check=False,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- qwen3_vl (issues 30, 32): Qwen3VLForConditionalGeneration's text
    # model: Qwen3's decoder (per-head q/k RMSNorm) under interleaved M-RoPE
    # (mrope_section [2, 3, 3]), plain RoPE for text; no deepstack layers in
    # the one-block vision tower (not read) ----
    dict(
        name="qwen3_vl",
        model_cls="Qwen3VLForConditionalGeneration",
        config_cls="Qwen3VLConfig",
        config=dict(
            text_config=dict(
                TINY,
                intermediate_size=32,
                rms_norm_eps=1e-6,
                rope_parameters=dict(rope_type="default", rope_theta=10000.0, mrope_section=[2, 3, 3],
                                     mrope_interleaved=True),
            ),
            vision_config=dict(depth=1, hidden_size=16, intermediate_size=16, num_heads=2, out_hidden_size=64,
                               num_position_embeddings=16, patch_size=2, temporal_patch_size=1,
                               spatial_merge_size=2, deepstack_visual_indexes=[]),
            tie_word_embeddings=True,
        ),
        seed=7721,
        prompt_seed=3721,
        spec_check=False,
        stored_dtype="bfloat16",  # the tracked tree's limit
    ),
    # ---- qwen3_vl_moe (issues 30, 32): Qwen3VLMoeForConditionalGeneration's
    # text model: Qwen3-MoE attention under interleaved M-RoPE; layer 0 dense
    # (mlp_only_layers), layer 1 MoE: 4 stacked experts (width 8) top 2, always
    # renormalised (Qwen3VLMoeTextTopKRouter); a one-block vision tower (not
    # read) ----
    dict(
        name="qwen3_vl_moe",
        model_cls="Qwen3VLMoeForConditionalGeneration",
        config_cls="Qwen3VLMoeConfig",
        config=dict(
            text_config=dict(
                TINY,
                intermediate_size=32,
                rms_norm_eps=1e-6,
                num_experts=4,
                num_experts_per_tok=2,
                moe_intermediate_size=8,
                decoder_sparse_step=1,
                mlp_only_layers=[0],
                rope_parameters=dict(rope_type="default", rope_theta=10000.0, mrope_section=[2, 3, 3],
                                     mrope_interleaved=True),
            ),
            vision_config=dict(depth=1, hidden_size=16, intermediate_size=16, num_heads=2, out_hidden_size=64,
                               num_position_embeddings=16, patch_size=2, temporal_patch_size=1,
                               spatial_merge_size=2, deepstack_visual_indexes=[]),
            tie_word_embeddings=True,
        ),
        seed=7732,
        prompt_seed=3731,
        post_save=_qwen3_vl_moe_published_experts,
        spec_check=False,
        stored_dtype="bfloat16",  # the tracked tree's limit
        moe=True,
    ),
    # ---- kimi_k25 (issue 30): Kimi_K25ForConditionalGeneration's text model,
    # DeepSeek-V3 under text_config (MLA with the q LoRA, interleaved RoPE;
    # [dense, moe]: 4 experts in 2 groups, best 1 group, top 2, scale 2.5,
    # one shared expert); weights under the published names
    # (language_model.model.layers.*: post_save undoes save_pretrained's
    # blocks); tied at the top level; a one-layer vision tower and projector
    # (not read) ----
    dict(
        name="kimi_k25",
        model_cls="Kimi_K25ForConditionalGeneration",
        config_cls="Kimi_K25Config",
        config=dict(
            text_config=dict(
                TINY_NO_HEAD_DIM,
                model_type="deepseek_v3",
                intermediate_size=16,
                num_hidden_layers=2,
                num_key_value_heads=4,
                hidden_act="silu",
                rms_norm_eps=1e-6,
                tie_word_embeddings=True,
                q_lora_rank=32,
                kv_lora_rank=16,
                qk_nope_head_dim=8,
                qk_rope_head_dim=4,
                v_head_dim=12,
                n_routed_experts=4,
                num_experts_per_tok=2,
                n_group=2,
                topk_group=1,
                routed_scaling_factor=2.5,
                norm_topk_prob=True,
                n_shared_experts=1,
                moe_intermediate_size=8,
                first_k_dense_replace=1,
                rope_interleave=True,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
            ),
            vision_config=dict(patch_size=2, pos_emb_height=4, pos_emb_width=4, pos_emb_time=1,
                               num_attention_heads=2, num_hidden_layers=1, hidden_size=16, intermediate_size=16),
            projection_hidden_size=16,
            tie_word_embeddings=True,
        ),
        seed=7741,
        prompt_seed=3741,
        post_save=_kimi_k25_published_names,
        extra_params={"pos_emb.position_embeddings": (0.0, 0.2)},  # the vision tower's (not read)
        score_bias_std=0.1,
        spec_check=False,
        stored_dtype="bfloat16",  # the tracked tree's limit
        moe=True,
    ),
]
# What every entry has unless it says otherwise.
FIXTURES = [dict(FIXTURE_DEFAULTS, **spec) for spec in FIXTURES]


def randomize_(model, gen, weight_std, norm_std, bias_std, norm_center=1.0, embed_std=None, expert_std=None, sink_std=None,
               score_bias_std=None, norm_suffixes=("norm.weight", "norm_f.weight"), a_values=None, plain_norms=(),
               extra_params=None):
    """Overwrite every parameter in a fixed (sorted-name) order. Stacked
    expert tensors (mlp.experts.gate_up_proj, down_proj) draw with
    expert_std (default weight_std), their biases (..._bias) with bias_std,
    attention sinks (GptOss self_attn.sinks) with sink_std, routers'
    selection biases (e_score_correction_bias) with score_bias_std; a
    per-head A_log is log(a_values) when given (slow and fast decays). A
    weight whose name ends in one of plain_norms is a w-scaled norm's gain
    beside (1 + w) ones, drawn around 1.0 whatever norm_center. A
    weight whose name ends in one of norm_suffixes is a norm's gain, drawn
    around norm_center (GPT-2's ln_1, ln_2, ln_f: the fixture's suffixes).
    extra_params maps a name suffix to (center, std) for parameters none of
    these rules knows (a family's own scalars or gains, which need not end
    in .weight): they draw center + std * N(0, 1), checked first."""
    with torch.no_grad():
        params = dict(model.named_parameters())  # tied params appear once
        # routers' selection biases kept as buffers (DeepseekV3TopkRouter)
        params.update((n, b) for n, b in model.named_buffers() if n.endswith((".e_score_correction_bias", ".expert_bias")))
        # Gemma 4's per-layer output scale, a persistent buffer (ones at init)
        params.update((n, b) for n, b in model.named_buffers() if n.endswith(".layer_scalar"))
        for name in sorted(params):
            p = params[name]
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            extra = next((v for k, v in sorted((extra_params or {}).items()) if name.endswith(k)), None)
            if extra is not None:
                p.copy_(extra[0] + extra[1] * noise)
            elif embed_std is not None and name.endswith("embed_tokens.weight"):
                p.copy_(embed_std * noise)
            elif name.endswith(".A_log"):  # Mamba: A = -exp(A_log), S4D-real init (arange(1, N+1)) jittered
                n = torch.arange(1, p.shape[-1] + 1, dtype=torch.float32).expand_as(p)
                a = torch.log(n) + norm_std * noise
                if a_values is not None:
                    a = torch.log(torch.tensor(a_values, dtype=torch.float32))
                # Values that survive llama.cpp's A = -exp(A_log) (float32) and
                # log(-A) back (float64, rounded) unchanged, so the GGUF twin is
                # bit-identical: a round trip or two reaches such a value.
                for _ in range(8):
                    back = torch.log(torch.exp(a).double()).float()
                    if torch.equal(a, back):
                        break
                    a = back
                assert torch.equal(a, torch.log(torch.exp(a).double()).float()), f"{name}: no round-trip-exact A_log"
                p.copy_(a)
            elif name.endswith(".dt_bias"):  # Mamba2's dt bias (softplus(dt + dt_bias))
                p.copy_(bias_std * noise)
            elif name.endswith(".D"):  # Mamba's skip, around its init of ones
                p.copy_(1 + norm_std * noise)
            elif plain_norms and name.endswith(tuple(plain_norms)):
                p.copy_(1.0 + norm_std * noise)
            elif name.endswith(tuple(norm_suffixes)):
                p.copy_(norm_center + norm_std * noise)
            elif name.endswith(".bias"):
                p.copy_(bias_std * noise)
            elif name.endswith(".weight"):
                p.copy_(weight_std * noise)
            elif ".experts." in name and name.endswith("_bias"):  # stacked expert biases
                p.copy_(bias_std * noise)
            elif ".experts." in name:  # stacked expert projections ([experts, rows, cols])
                p.copy_((weight_std if expert_std is None else expert_std) * noise)
            elif name.endswith(".sinks") and sink_std is not None:
                p.copy_(sink_std * noise)
            elif name.endswith((".e_score_correction_bias", ".expert_bias")) and score_bias_std is not None:
                p.copy_(score_bias_std * noise)
            elif name.endswith(".layer_scalar"):  # Gemma4TextDecoderLayer's output scale [1]
                p.copy_(1 + 0.25 * noise)
            elif name.endswith((".router.scale", ".router.per_expert_scale")):  # Gemma4TextRouter's gains (ones at init)
                p.copy_(1 + 0.25 * noise)
            elif name.endswith((".act_fn.alpha_p", ".act_fn.alpha_n")):  # xIELU's raw scalars (softplus'd)
                # around XIELUActivation's init, log(expm1(0.8)) and log(expm1(0.8 - beta))
                init = 0.2034 if name.endswith("alpha_p") else -1.0502
                p.copy_(init + 0.5 * noise)
            else:
                raise ValueError(f"unexpected parameter {name} {tuple(p.shape)}: give it a rule in the fixture's "
                                 f"extra_params, {{suffix: (center, std)}} (a gain around 1.0: (1.0, 0.1); "
                                 f"a projection: (0.0, 0.2))")


def make_prompts(seed, vocab, bos, lengths=PROMPT_LENGTHS):
    gen = torch.Generator().manual_seed(seed)
    prompts = []
    for n in lengths:
        rest = torch.randint(MIN_TOKEN_ID, vocab, (n - 1,), generator=gen)
        prompts.append([bos] + [int(x) for x in rest])
    return prompts


def rope_report(config):
    """inv_freq with and without the configured scaling; must differ."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    rope_type = config.rope_parameters["rope_type"]
    scaled, _ = ROPE_INIT_FUNCTIONS[rope_type](config)
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    plain, _ = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    print(f"  rope_type={rope_type}")
    print(f"  inv_freq default: {[float(x) for x in plain]}")
    print(f"  inv_freq scaled : {[float(x) for x in scaled]}")
    ratio = (plain / scaled).tolist()
    print(f"  default/scaled  : {ratio}")
    kept = sum(1 for r in ratio if abs(r - 1.0) < 1e-6)
    divided = sum(1 for r in ratio if abs(r - config.rope_parameters["factor"]) < 1e-4)
    smoothed = len(ratio) - kept - divided
    print(f"  kept={kept} smoothed={smoothed} divided={divided}")
    assert kept and smoothed and divided, "llama3 scaling should hit all three bands"


# ---- FAMILIES.md, executable: an independent fp32 forward ----------------

def spec_inv_freq(rp, d):
    """inv_freq and the cos/sin factor of one rope_parameters dict."""
    theta = rp["rope_theta"]
    exponent = torch.arange(0, d, 2, dtype=torch.float32) / d
    base = 1.0 / (theta**exponent)
    kind = rp.get("rope_type", "default")
    if kind == "default":
        return base, 1.0
    if kind == "linear":
        return base / rp["factor"], 1.0
    if kind == "llama3":
        factor, omax = rp["factor"], rp["original_max_position_embeddings"]
        lo_f, hi_f = rp["low_freq_factor"], rp["high_freq_factor"]
        wavelen = 2 * math.pi / base
        scaled = torch.where(wavelen > omax / lo_f, base / factor, base)
        smooth = (omax / wavelen - lo_f) / (hi_f - lo_f)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < omax / hi_f) * ~(wavelen > omax / lo_f)
        return torch.where(medium, smoothed, scaled), 1.0
    if kind == "yarn":
        factor, omax = rp["factor"], rp["original_max_position_embeddings"]

        def mscale(scale, m=1):
            return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

        attn = rp.get("attention_factor")
        if attn is None:
            ms, ms_all = rp.get("mscale"), rp.get("mscale_all_dim")
            attn = mscale(factor, ms) / mscale(factor, ms_all) if (ms and ms_all) else mscale(factor)

        def corr_dim(rot):
            return (d * math.log(omax / (rot * 2 * math.pi))) / (2 * math.log(theta))

        lo, hi = corr_dim(rp.get("beta_fast") or 32), corr_dim(rp.get("beta_slow") or 1)
        if rp.get("truncate", True):
            lo, hi = math.floor(lo), math.ceil(hi)
        lo, hi = max(lo, 0), min(hi, d - 1)
        if lo == hi:
            hi += 0.001
        ramp = ((torch.arange(d // 2, dtype=torch.float32) - lo) / (hi - lo)).clamp(0, 1)
        pos_freqs = theta**exponent
        extrapolation = 1.0 / pos_freqs
        interpolation = 1.0 / (factor * pos_freqs)
        keep = 1 - ramp
        return interpolation * (1 - keep) + extrapolation * keep, attn
    raise ValueError(f"rope_type {kind}")


def spec_rms(x, w, eps, one_plus):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y * ((1.0 + w) if one_plus else w)


def spec_rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), -1)


def spec_forward(d, ids):
    """Last-position logits of the fixture in folder d, computed from
    config.json and model.safetensors alone by the math of FAMILIES.md
    (no transformers code). Full recompute, no KV cache."""
    c = json.load(open(os.path.join(d, "config.json")))
    W = load_file(os.path.join(d, "model.safetensors"))
    mt = c["model_type"]
    gemma = mt.startswith("gemma")  # (1 + w) norms, sqrt(hidden) embedding scale
    gemma_23 = mt in ("gemma2", "gemma3_text")  # four norms, query_pre_attn_scalar
    olmo = mt in ("olmo2", "olmo3")  # post-norm, flat q/k norm
    H, nh, nkv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
    hd = c.get("head_dim") or H // nh
    L, eps = c["num_hidden_layers"], c["rms_norm_eps"]
    layer_types = c.get("layer_types") or ["full_attention"] * L
    if mt == "mistral" and c.get("sliding_window") is not None:
        layer_types = ["sliding_attention"] * L
    window = c.get("sliding_window")
    rope = c["rope_parameters"]
    nested = "full_attention" in rope or "sliding_attention" in rope
    S = len(ids)
    pos = torch.arange(S, dtype=torch.long)
    act_name = c.get("hidden_activation") if gemma_23 else c.get("hidden_act")
    if act_name in ("gelu_pytorch_tanh", "gelu"):
        act = lambda t: torch.nn.functional.gelu(t, approximate="tanh")  # noqa: E731
    else:
        act = torch.nn.functional.silu

    def lin(t, n):
        y = t @ W[n + ".weight"].T
        return y + W[n + ".bias"] if n + ".bias" in W else y

    x = W["model.embed_tokens.weight"][torch.tensor(ids)]
    if gemma:
        x = x * torch.tensor(H**0.5, dtype=torch.float32)
    for i in range(L):
        p = f"model.layers.{i}."
        inv, attn_factor = spec_inv_freq(rope[layer_types[i]] if nested else rope, hd)
        freqs = pos[:, None].float() * inv
        emb = torch.cat((freqs, freqs), -1)
        cos, sin = emb.cos() * attn_factor, emb.sin() * attn_factor

        h = x if olmo else spec_rms(x, W[p + "input_layernorm.weight"], eps, gemma)
        q, k, v = (lin(h, p + f"self_attn.{n}_proj") for n in "qkv")
        if olmo:
            q = spec_rms(q, W[p + "self_attn.q_norm.weight"], eps, False)
            k = spec_rms(k, W[p + "self_attn.k_norm.weight"], eps, False)
        q = q.view(S, nh, hd).transpose(0, 1)
        k = k.view(S, nkv, hd).transpose(0, 1)
        v = v.view(S, nkv, hd).transpose(0, 1)
        if mt in ("qwen3", "gemma3_text"):
            q = spec_rms(q, W[p + "self_attn.q_norm.weight"], eps, gemma)
            k = spec_rms(k, W[p + "self_attn.k_norm.weight"], eps, gemma)
        if mt != "smollm3" or c["no_rope_layers"][i]:
            q = q * cos + spec_rotate_half(q) * sin
            k = k * cos + spec_rotate_half(k) * sin
        k = k.repeat_interleave(nh // nkv, 0)
        v = v.repeat_interleave(nh // nkv, 0)
        scale = c["query_pre_attn_scalar"] ** -0.5 if gemma_23 else hd**-0.5
        scores = (q @ k.transpose(1, 2)) * scale
        if mt == "gemma2" and c.get("attn_logit_softcapping") is not None:
            cap = c["attn_logit_softcapping"]
            scores = torch.tanh(scores / cap) * cap
        visible = pos[None, :] <= pos[:, None]
        if layer_types[i] == "sliding_attention":
            visible &= pos[None, :] > pos[:, None] - window
        scores = scores + torch.where(visible, 0.0, torch.finfo(torch.float32).min)
        a = torch.softmax(scores, -1) @ v
        a = lin(a.transpose(0, 1).reshape(S, nh * hd), p + "self_attn.o_proj")
        if olmo or gemma_23:
            a = spec_rms(a, W[p + "post_attention_layernorm.weight"], eps, gemma)
        x = x + a

        if olmo:
            h = x
        elif gemma_23:
            h = spec_rms(x, W[p + "pre_feedforward_layernorm.weight"], eps, True)
        else:
            h = spec_rms(x, W[p + "post_attention_layernorm.weight"], eps, gemma)
        m = lin(act(lin(h, p + "mlp.gate_proj")) * lin(h, p + "mlp.up_proj"), p + "mlp.down_proj")
        if olmo or gemma_23:
            m = spec_rms(m, W[p + "post_feedforward_layernorm.weight"], eps, gemma)
        x = x + m
    x = spec_rms(x, W["model.norm.weight"], eps, gemma)
    head = W.get("lm_head.weight", W["model.embed_tokens.weight"])
    logits = x[-1] @ head.T
    cap = c.get("final_logit_softcapping")
    if cap is not None:
        logits = torch.tanh(logits / cap) * cap
    return logits


def spec_check(name, out, prompts, tokens, first_logits):
    """The FAMILIES.md math must reproduce the oracle: first-step logits and
    every greedy token (each step recomputed from scratch)."""
    worst = 0.0
    with torch.no_grad():
        for prompt, toks, ref in zip(prompts, tokens, first_logits):
            got = spec_forward(out, prompt)
            worst = max(worst, float((got - torch.tensor(ref)).abs().max()))
            seq = list(prompt)
            for t in toks:
                nxt = int(spec_forward(out, seq).argmax())
                assert nxt == t, f"{name}: FAMILIES.md forward picks {nxt}, oracle {t}"
                seq.append(t)
    print(f"  FAMILIES.md forward: max |dlogit| vs oracle {worst:.3g}, greedy tokens equal")
    assert worst <= SPEC_TOL, f"{name}: FAMILIES.md forward differs by {worst}"


def rope_tables(model):
    """HF's inv_freq (float32) and cos/sin scaling per layer type; None for
    a model without a rotary embedding (record_rope on a family without
    RoPE, as archc new's stub sets it, records nothing)."""
    rot = getattr(model.base_model, "rotary_emb", None)
    if rot is None:
        print(f"  rope: {type(model.base_model).__name__} has no rotary_emb: no RoPE table recorded")
        return None
    if hasattr(rot, "inv_freq"):
        types = {"all_layers": (rot.inv_freq, rot.attention_scaling, rot.rope_type)}
    else:
        types = {
            lt: (getattr(rot, f"{lt}_inv_freq"), getattr(rot, f"{lt}_attention_scaling"), rot.rope_type[lt])
            for lt in rot.layer_types
        }
    out = {}
    for lt, (inv, scaling, rope_type) in sorted(types.items()):
        out[lt] = {
            "rope_type": rope_type,
            "attention_scaling": float(scaling),
            "inv_freq": [fmt_float(x) for x in inv.to(torch.float32)],
        }
        print(f"  rope {lt}: {rope_type} scaling={float(scaling)!r} inv_freq={out[lt]['inv_freq']}")
    return out


def resolve_classes(spec):
    """Replaces a class given by name (model_cls="FooForCausalLM", as archc
    new writes a guessed name) with transformers' class of that name, only
    for the fixture being built, so that a wrong guess stops that fixture
    with a message naming it, not every run of this script."""
    for key in ("model_cls", "config_cls"):
        if isinstance(spec[key], str):
            cls = getattr(transformers, spec[key], None)
            if cls is None:
                raise SystemExit(f"fixture {spec['name']}: transformers {transformers.__version__} has no class "
                                 f"{spec[key]!r} ({key}); check the name in the model's modeling_*.py")
            spec[key] = cls


def load_oracle_model(spec, out, config=None):
    resolve_classes(spec)
    if config is None and spec.get("oracle_config"):
        config = spec["config_cls"].from_pretrained(out)
    kw = {} if config is None else {"config": config}
    if spec.get("moe"):  # the reference loop, not grouped_mm
        kw["experts_implementation"] = "eager"
    model = spec["model_cls"].from_pretrained(
        out, dtype=torch.float32, attn_implementation="eager", **kw
    ).eval()
    return spec["oracle_hooks"](model) if spec.get("oracle_hooks") else model


def first_step_logits(model, prompt):
    ids = torch.tensor([prompt], dtype=torch.long)
    return model(ids, logits_to_keep=1).logits[0, -1].to(torch.float32)


def check_switches(spec, out, prompts, reference):
    """Turn each switch off and show that the first-step logits move."""
    result = {}
    for key, what, mutate in spec.get("switches", []):
        cfg = spec["config_cls"].from_pretrained(out)
        mutate(cfg)
        alt = load_oracle_model(spec, out, cfg)
        diffs = []
        with torch.no_grad():
            for prompt, ref in zip(prompts, reference):
                diffs.append(float((first_step_logits(alt, prompt) - ref).abs().max()))
        print(f"  switch {key}: off = {what}; max |dlogit| per prompt {diffs}")
        assert max(diffs) >= SWITCH_MIN_DIFF, f"{spec['name']}: {key} does not matter ({diffs})"
        result[key] = {"disabled_by": what, "max_abs_first_logit_diff_per_prompt": diffs}
    return result


def fmt_float(x):
    # float32 -> python float is exact; repr is the shortest string that
    # round-trips, so the float32 value is recovered exactly.
    v = float(x)
    assert math.isfinite(v)
    return v


def dump_json(obj):
    """Plain JSON, one top-level key per line and one row per line for
    lists of lists, so diffs stay readable. Floats use Python's repr."""
    lines = []
    for i, (k, v) in enumerate(obj.items()):
        sep = "," if i + 1 < len(obj) else ""
        if isinstance(v, list) and v and all(isinstance(r, list) for r in v):
            rows = [json.dumps(r) for r in v]
            body = "[\n  " + ",\n  ".join(rows) + "\n ]"
        else:
            body = json.dumps(v, sort_keys=True)
        lines.append(f" {json.dumps(k)}: {body}{sep}")
    text = "{\n" + "\n".join(lines) + "\n}\n"
    assert json.loads(text) == obj
    return text


def greedy_oracle(name, model, prompts, eos):
    """Greedy generation of MAX_NEW_TOKENS for each prompt with the HF
    model, checked (no EOS, not degenerate, the plain forward agrees with
    generate's logits). Returns (tokens, first_logits as fmt_float strings,
    top1-top2 margins of every step, max prefill-check diff, max
    full-forward diff)."""
    tokens, first_logits, margins = [], [], []
    max_check_diff = max_full_diff = 0.0
    with torch.no_grad():
        for prompt in prompts:
            ids = torch.tensor([prompt], dtype=torch.long)
            res = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                do_sample=False,
                max_new_tokens=MAX_NEW_TOKENS,
                eos_token_id=eos,
                pad_token_id=eos,
                output_logits=True,
                return_dict_in_generate=True,
            )
            new = [int(t) for t in res.sequences[0, len(prompt):]]
            step_logits = [l[0].to(torch.float32) for l in res.logits]
            assert len(new) == MAX_NEW_TOKENS, (
                f"{name}: prompt {prompt} stopped after {len(new)} tokens "
                f"(eos {eos}); change the seed"
            )
            assert eos not in new, f"{name}: eos in output {new}; change the seed"
            assert len(set(new)) > 1, f"{name}: degenerate output {new}; change the seed"
            for t, l in zip(new, step_logits):
                top2 = torch.topk(l, 2).values
                assert int(torch.argmax(l)) == t
                margins.append(float(top2[0] - top2[1]))

            # Same logits by a plain forward. With logits_to_keep=1 (what
            # generate does) lm_head runs on the last row only and the
            # result is bit-identical; the full-sequence forward runs
            # lm_head as a [len, hidden] matmul, whose BLAS blocking rounds
            # differently by a few float32 ulps (~1e-6 at |logit| ~ 6).
            last = model(ids, logits_to_keep=1).logits[0, -1].to(torch.float32)
            full = model(ids).logits[0, -1].to(torch.float32)
            d_last = float((last - step_logits[0]).abs().max())
            d_full = float((full - step_logits[0]).abs().max())
            assert d_last <= LOGITS_CHECK_TOL, f"{name}: prefill logits differ by {d_last}"
            assert d_full <= FULL_FORWARD_TOL, f"{name}: full-forward logits differ by {d_full}"
            max_check_diff = max(max_check_diff, d_last)
            max_full_diff = max(max_full_diff, d_full)

            tokens.append(new)
            first_logits.append([fmt_float(x) for x in step_logits[0]])
            print(f"  prompt len {len(prompt):2d} -> {new}")

    return tokens, first_logits, margins, max_check_diff, max_full_diff


def build_fixture(spec, out_root):
    name = spec["name"]
    print(f"== {name}")
    out = os.path.join(out_root, name)
    # Remove only what this script writes: emit.summary (the structural golden,
    # written by `go test ./golden -update`) lives in the same folder.
    os.makedirs(out, exist_ok=True)
    for fn in GENERATED_FILES:
        p = os.path.join(out, fn)
        if os.path.exists(p):
            os.remove(p)

    if spec.get("mlx_module"):  # a model type transformers lacks: mlx-lm's model file is the oracle
        import mlx_oracle

        mlx_oracle.build_mlx_fixture(spec, out)
        report_files(name, out)
        return

    resolve_classes(spec)
    config = spec["config_cls"](**spec["config"])
    torch.manual_seed(spec["seed"])  # for whatever HF's own init draws
    model = spec["model_cls"](config)
    gen = torch.Generator().manual_seed(spec["seed"])
    randomize_(
        model,
        gen,
        spec["weight_std"],
        spec["norm_std"],
        spec["bias_std"],
        spec.get("norm_center", 1.0),
        spec.get("embed_std"),
        spec.get("expert_std"),
        spec.get("sink_std"),
        spec.get("score_bias_std"),
        spec.get("norm_suffixes", ("norm.weight", "norm_f.weight")),
        spec.get("a_values"),
        spec.get("plain_norms", ()),
        spec.get("extra_params"),
    )
    model = model.to(torch.float32).eval()
    if spec.get("stored_dtype") == "bfloat16":
        model = model.to(torch.bfloat16)
    else:
        assert spec.get("stored_dtype") is None, f"{name}: stored_dtype {spec['stored_dtype']!r} (bfloat16 or none)"

    if spec["check_rope_scaling"]:
        rope_report(model.config)

    model.save_pretrained(out, safe_serialization=True)
    if spec.get("post_save"):
        spec["post_save"](out, gen)
    written = sorted(os.listdir(out))
    unexpected = set(written) - set(GENERATED_FILES) - set(KEPT_FILES)
    assert not unexpected, f"{name}: save_pretrained wrote {unexpected}"

    # Reload from disk so the oracle is computed from exactly what we ship.
    model = load_oracle_model(spec, out)
    cfg = model.config.get_text_config()  # a composite (multimodal) config: its text decoder's
    eos = cfg.eos_token_id
    prompts = make_prompts(
        spec["prompt_seed"], cfg.vocab_size, cfg.bos_token_id, spec.get("prompt_lengths", PROMPT_LENGTHS)
    )
    rope = rope_tables(model) if spec.get("record_rope") else None

    tokens, first_logits, margins, max_check_diff, max_full_diff = greedy_oracle(name, model, prompts, eos)

    min_margin = min(margins)
    print(f"  min top1-top2 margin over all greedy steps: {min_margin:.6g}")
    assert min_margin >= MIN_TOP2_MARGIN, f"{name}: near-tie in greedy path; change the seed"
    switch_checks = check_switches(spec, out, prompts, [torch.tensor(l) for l in first_logits])
    if spec.get("spec_check", True):
        spec_check(name, out, prompts, tokens, first_logits)

    oracle = {
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "model_class": spec["model_cls"].__name__,
        "attn_implementation": "eager",
        "dtype": "float32",
        "seed": spec["seed"],
        "prompt_seed": spec["prompt_seed"],
        "eos_token_id": eos,
        "max_new_tokens": MAX_NEW_TOKENS,
        "prompts": prompts,
        "tokens": tokens,
        "min_top2_margin": min_margin,
        "prefill_logits_check": {
            "reference": "generate(output_logits=True).logits[0] (= first_logits)",
            "method": "model(input_ids, logits_to_keep=1).logits[0,-1]",
            "tolerance": LOGITS_CHECK_TOL,
            "max_abs_diff": max_check_diff,
            "full_forward_method": "model(input_ids).logits[0,-1]",
            "full_forward_tolerance": FULL_FORWARD_TOL,
            "full_forward_max_abs_diff": max_full_diff,
            "ok": True,
        },
    }
    if rope is not None:
        oracle["rope"] = rope
    for key in switch_checks:
        oracle[key] = True
    if switch_checks:
        oracle["switch_checks"] = switch_checks
    oracle["first_logits"] = first_logits
    with open(os.path.join(out, "oracle.json"), "w") as f:
        f.write(dump_json(oracle))
    report_files(name, out)


def report_files(name, out):
    """Prints each generated file's size and sha256 and checks the total
    against MAX_FOLDER_BYTES."""
    total = 0
    for fn in GENERATED_FILES:
        p = os.path.join(out, fn)
        if not os.path.exists(p):  # an mlx-lm fixture has no generation_config.json
            continue
        size = os.path.getsize(p)
        total += size
        with open(p, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        print(f"  {fn:24s} {size:8d}  {digest}")
    assert total <= MAX_FOLDER_BYTES, (
        f"{name}: the generated files are {total} bytes, over MAX_FOLDER_BYTES ({MAX_FOLDER_BYTES}): every fixture "
        f"is committed and compiled by CI, so keep to the tiny shapes (2 layers, hidden 64, vocabulary 256)")
    for fn in sorted(set(os.listdir(out)) - set(GENERATED_FILES)):
        size = os.path.getsize(os.path.join(out, fn))
        print(f"  {fn:24s} {size:8d}  (kept, not generated here)")
        total += size
    if total > MAX_FOLDER_BYTES:
        print(f"  WARNING: folder is {total} bytes with the kept files (> {MAX_FOLDER_BYTES})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata"))
    ap.add_argument("--only", action="append", help="fixture name (repeatable)")
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    transformers.logging.set_verbosity_error()
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")

    names = [s["name"] for s in FIXTURES]
    assert len(set(names)) == len(names)
    for spec in FIXTURES:
        if args.only and spec["name"] not in args.only:
            continue
        build_fixture(spec, args.out)


if __name__ == "__main__":
    sys.exit(main())
