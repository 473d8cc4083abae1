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

The fixtures are data beside their family: golden/fixtures/<family>.py
holds a FIXTURES list of the family's entries (model class, config kwargs,
seeds, switches), evaluated in this module's namespace (load_fixture_specs).
To add a family or a config: write or extend that file (`archc new` writes
the first entry). Nothing else needs to change.
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

# The fixture table: one entry per fixture, in golden/fixtures/<family>.py
# (load_fixture_specs); keep names stable, Go tests refer to them.
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
#   published_shapes  with mlx_module: {name suffix: shape} for tensors the
#                   checkpoint publishes in another shape than mlx-lm's
#                   model holds (its sanitize reshapes them: rwkv7's k_k)
#   unstack         (mlx-lm's stacked experts module, the published one):
#                   the checkpoint holds the experts mlx-lm stacks at load
#                   one by one ("switch_mlp", "experts": experts.{e}.*)
#   grid            (mlx_module only) {name suffix: step}: those parameters
#                   rounded to multiples of step after drawing, where mlx-lm's
#                   sanitize does arithmetic on the stored dtype before the
#                   oracle widens it (Step3p5's zero-centred norms: 1 + w in
#                   bf16, exact for w on the 2^-7 grid)
#   float32_params  (mlx_module only) name suffixes stored float32 whatever
#                   stored_dtype, where mlx-lm's sanitize rescales the tensor
#                   and casts the result back to the stored dtype, which
#                   bf16 would round (Baichuan-M1's NormHead lm_head rows
#                   divided by their norm)
#   rename          (mlx_module only) (regex, replacement) pairs turning
#                   mlx-lm's parameter names into the published ones where
#                   its sanitize renames at load (Ling's mlp.gate.weight is
#                   mlx-lm's mlp.gate.gate_proj.weight)
#   unrename        (mlx_module only) (regex, replacement) pairs turning the
#                   published names back into mlx-lm's at the oracle's load,
#                   where its model file spells a published tensor otherwise
#                   and its sanitize does not map it (with rename for the
#                   other direction: nemotron-nas's self_attn.linear_attn)
# The keys an entry may leave out (the values nearly every fixture uses).
FIXTURE_DEFAULTS = dict(weight_std=0.2, norm_std=0.1, bias_std=0.1, check_rope_scaling=False)

FIXTURE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")


def load_fixture_specs(namespace, folder=FIXTURE_DIR):
    """The entries of every golden/fixtures/<family>.py, by file name then
    in file order. Each file is a FIXTURES list of dicts (the keys above),
    run in a copy of namespace: the names it uses (model classes, TINY,
    the switches and hooks) are this module's. Errors name the file: no
    FIXTURES list, an entry without a name, a name two entries share."""
    out, where = [], {}
    for fname in sorted(os.listdir(folder)):
        if not fname.endswith(".py"):
            continue
        path = os.path.join(folder, fname)
        ns = dict(namespace)
        with open(path) as f:
            exec(compile(f.read(), path, "exec"), ns)
        specs = ns.get("FIXTURES")
        if not isinstance(specs, list) or not specs:
            raise SystemExit(f"{path}: no FIXTURES list of entries")
        for spec in specs:
            name = spec.get("name") if isinstance(spec, dict) else None
            if not name:
                raise SystemExit(f"{path}: an entry without a name: {spec!r:.200}")
            if name in where:
                raise SystemExit(f"{path}: fixture {name!r} is also in {where[name]}")
            where[name] = path
            out.append(spec)
    return out


FIXTURES = load_fixture_specs(globals())
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
