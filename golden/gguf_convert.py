#!/usr/bin/env python3
"""The GGUF converter of archc's oracle fixtures: numpy and gguf-py only
(no torch, no transformers), shared by the oracle generator
(gen_gguf_fixtures.py, run by hand) and the twins' CI entry point
(make_gguf_twins.py, run by scripts/test.sh).

For a fixture folder golden/testdata/<name>/ made by gen_fixtures.py,
write_twins writes, next to model.safetensors, from it and config.json:

  model.f32.gguf
      the checkpoint as llama.cpp's converter (convert_hf_to_gguf.py) writes
      it with --outtype f32: its general.architecture, its metadata keys and
      its tensor names (gguf-py's GGUFWriter, constants and TensorNameMap),
      Q/K rows permuted for the llama-style families (LlamaModel.permute),
      Gemma's RMSNorm weights stored as 1 + w, llama 3's rope_freqs tensor;
  model.q8_0.gguf
      the same with --outtype q8_0: 2-D weights Q8_0 (F16 where a row is
      not a multiple of 32, as the converter falls back), 1-D tensors and
      norms F32.

The twins are not committed: golden/testdata/gguf.sha256 (MANIFEST) holds
each one's sha256, the bytes oracle.q8_0.json was computed on, and
make_gguf_twins.py regenerates and checks them. The only input that is not
a fixture's own file is the random nextn tensors of the MTP blocks some
converters add and Mamba's A = -exp(A_log), as torch computes them
(TORCH_VALUES, committed).

Where a fixture's config uses a value llama.cpp's format cannot carry
(llama.cpp fixes it per architecture, or writes it only for other
architectures), the value is written under a key the family's .arch gguf
section reads, marked EXTENSION below: a standard gguf-py key where one
exists (sliding_window, sliding_window_pattern, rope.scaling.*), else an
archc key named after the Hugging Face field (query_pre_attn_scalar,
no_rope_layers, rope.scaling.low_freq_factor / high_freq_factor). Without
them a twin would be a different model from its safetensors folder.

Everything is deterministic: a rerun writes the same bytes.
"""

import hashlib
import glob
import json
import math
import os
import re

import numpy as np
from safetensors.numpy import load_file, save_file

import gguf
from gguf.constants import MODEL_ARCH_NAMES

TESTDATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata")
# sha256 of every twin (sha256sum's format, paths under TESTDATA).
MANIFEST = os.path.join(TESTDATA, "gguf.sha256")
TWINS = ("model.f32.gguf", "model.q8_0.gguf")
# Values the converter takes from torch because numpy cannot reproduce
# them bit for bit (nextn_eh_proj: torch's normal sampler; neg_exp: torch's
# float32 exp, which differs from numpy's and from the correctly rounded
# one by an ulp here and there), by key: drawn or computed once by
# gen_gguf_fixtures.py (it sets torch_randn and torch_neg_exp) and committed.
TORCH_VALUES = os.path.join(TESTDATA, "gguf.torch.safetensors")
torch_randn = None  # (seed, draw, shape) -> 0.1 · torch.randn(*shape) of a generator seeded seed, its draw-th draw
torch_neg_exp = None  # float32 array -> -torch.exp(array)
_torch_table = None


def torch_value(key, compute):
    """TORCH_VALUES[key]; a missing one computed (compute(), with torch) and
    added to the file, or, without torch, an error naming the generator."""
    global _torch_table
    if _torch_table is None:
        _torch_table = load_file(TORCH_VALUES) if os.path.exists(TORCH_VALUES) else {}
    if key not in _torch_table:
        if compute is None:
            raise SystemExit(f"{TORCH_VALUES} has no {key}: run golden/gen_gguf_fixtures.py (it computes it with torch)")
        _torch_table[key] = np.ascontiguousarray(compute(), dtype=np.float32)
        save_file(dict(sorted(_torch_table.items())), TORCH_VALUES)
    return _torch_table[key]


def shape_key(shape):
    return "x".join(str(d) for d in shape) or "scalar"


def nextn_eh_proj(seed, draw, shape):
    """0.1 · torch.randn(*shape) of a generator seeded seed, its draw-th draw."""
    return torch_value(f"randn.seed{seed}.draw{draw}.{shape_key(shape)}",
                       torch_randn and (lambda: torch_randn(seed, draw, shape)))


def neg_exp(t):
    """-torch.exp(t) for a float32 array (Mamba's A = -exp(A_log)), keyed by
    the input's bytes."""
    t = np.ascontiguousarray(t, dtype=np.float32)
    key = f"neg_exp.{hashlib.sha256(t.tobytes()).hexdigest()[:16]}.{shape_key(t.shape)}"
    return torch_value(key, torch_neg_exp and (lambda: torch_neg_exp(t))).reshape(t.shape)


# HF model_type -> the general.architecture llama.cpp writes for it.
GGUF_ARCH = {
    "llama": "llama",
    "mistral": "llama",  # MistralForCausalLM is converted by LlamaModel
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "gemma": "gemma",
    "gemma2": "gemma2",
    "gemma3_text": "gemma3",
    "olmo2": "olmo2",
    "olmo3": "olmo2",  # Olmo3ForCausalLM is converted by Olmo2Model
    "smollm3": "smollm3",
    "seed_oss": "seed_oss",
    "granite": "granite",
    "arcee": "arcee",  # ArceeModel(LlamaModel)
    "minicpm": "minicpm",
    "starcoder2": "starcoder2",
    "stablelm": "stablelm",
    "phi3": "phi3",
    "exaone": "exaone",
    "cohere": "command-r",
    "cohere2": "cohere2",
    "exaone4": "exaone4",
    "ernie4_5": "ernie4_5",
    "mixtral": "llama",  # MixtralForCausalLM is converted by LlamaModel
    "qwen2_moe": "qwen2moe",
    "qwen3_moe": "qwen3moe",
    "olmoe": "olmoe",
    "gpt_oss": "gpt-oss",
    "granitemoe": "granitemoe",
    "granitemoeshared": "granitemoe",  # GraniteMoeModel converts GraniteMoeSharedForCausalLM too
    "minicpm3": "minicpm3",
    "deepseek_v2": "deepseek2",
    # issue 21 (h-dense-b)
    "gpt2": "gpt2",
    "gpt_bigcode": "starcoder",  # StarCoderModel
    "phi": "phi2",  # Phi2Model
    "gpt_neox": "gptneox",
    "deepseek_v3": "deepseek2",  # DeepseekV2Model converts DeepseekV3ForCausalLM too
    "olmo": "olmo",
    # issue 18 (h-gguf): the recurrent and hybrid families
    "mamba": "mamba",
    "falcon_mamba": "mamba",  # MambaModel converts FalconMambaForCausalLM too (ssm.dt_b_c_rms true)
    "mamba2": "mamba2",
    "jamba": "jamba",
    # GraniteHybridModel converts both (use_rope, written as
    # rope.scaling.finetuned, true for Bamba only)
    "granitemoehybrid": "granitehybrid",
    "bamba": "granitehybrid",
    "lfm2": "lfm2",
    "lfm2_moe": "lfm2moe",
    # issue 18 (h-gguf2): the gated DeltaNet families
    "qwen3_next": "qwen3next",
    "qwen3_5": "qwen35",  # Qwen3_5TextModel converts Qwen3_5ForConditionalGeneration's text model
    "qwen3_5_text": "qwen35",
    "qwen3_5_moe": "qwen35moe",
    "qwen3_5_moe_text": "qwen35moe",
    # NemotronHModel: nemotron_h_moe when the config has num_experts_per_tok
    # (every config transformers writes: NemotronHConfig defaults it)
    "nemotron_h": "nemotron_h_moe",
    "falcon_h1": "falcon-h1",
    # issue 21 (h-gguf): dense pack families
    "apertus": "apertus",
    "minimax_m2": "minimax-m2",
    "exaone_moe": "exaone-moe",
    "glm4": "glm4",
    "glm4_moe": "glm4moe",
    "hunyuan_v1_dense": "hunyuan-dense",
    "hunyuan_v1_moe": "hunyuan-moe",
    "nemotron": "nemotron",
    "dots1": "dots1",
    "ernie4_5_moe": "ernie4_5-moe",
    "phimoe": "phimoe",  # PhiMoeModel (a Phi3MiniModel)
    # issue 21 (h-gguf3): the newest dense and MoE families
    "llama4_text": "llama4",  # Llama4Model (a LlamaModel)
    "dbrx": "dbrx",  # DbrxModel
    "glm": "chatglm",  # ChatGLMModel converts GlmForCausalLM too
    "gemma4_text": "gemma4",  # Gemma4Model (a Gemma3Model), for Gemma4ForCausalLM and Gemma4ForConditionalGeneration
    # issue 30 (h-fam)
    "ministral3": "mistral3",  # Mistral3Model's Ministral3Model (a LlamaModel), for Ministral3ForCausalLM and Mistral3ForConditionalGeneration
    "mistral3": "mistral3",  # the same for a Mistral3ForConditionalGeneration whose text_config is a mistral one
    "falcon": "falcon",  # FalconModel
    "jais2": "jais2",  # Jais2Model (a TextModel: q/k rows as HF has them)
    "bloom": "bloom",  # BloomModel
    # issue 30 (family pack 4): remote-code checkpoints (mlx-lm oracles)
    "internlm2": "internlm2",  # InternLM2Model: TextModel's keys, wqkv split into q, k, v (INTERNLM2_QKV)
    "deepseek": "deepseek",  # DeepseekModel (DeepSeekMoE v1)
    "xverse": "xverse",  # XverseModel
    "nanbeige": "nanbeige",  # NanbeigeModel(LlamaModel) + num_loops, skip_loop_final_norm
    "qwen": "qwen",  # QwenModel: TextModel's keys (Qwen's spellings: no rope base, its eps as the LayerNorm eps)
    "openelm": "openelm",  # OpenELMModel: its own keys, per-layer arrays; proj_1 split into ffn_gate, ffn_up
    "bailing_moe": "bailingmoe",  # BailingMoeModel: query_key_value split into q, k (both permuted), v (BAILING_QKV)
    "bailing_moe_v2": "bailingmoe2",  # BailingMoeV2Model: query_key_value fused, expert_bias as exp_probs_b.bias
    "nemotron-nas": "deci",  # DeciModel: per-layer head counts and widths, q/k permuted with the layer's heads
    "glm_moe_dsa": "glm-dsa",  # GlmMoeDsaModel (a DeepseekV2Model) + the DSA indexer's keys and tensors
    "step3p5": "step35",  # Step35Model: per-layer head counts, zero-centred norms stored as 1 + w
    # issue 32 (qvl-gguf): Qwen2VLModel, a TextModel (rope.dimension_sections
    # from mrope_section), for Qwen2VLForConditionalGeneration's text model
    "qwen2_vl_text": "qwen2vl",
    "qwen2_5_vl_text": "qwen2vl",  # the same Qwen2VLModel for Qwen2_5_VLForConditionalGeneration
    "qwen2_vl": "qwen2vl",  # the wrappers (their text_config at the root: text_config)
    "qwen2_5_vl": "qwen2vl",
    # issue 32: Qwen3VLTextModel (a Qwen3Model) and Qwen3VLMoeTextModel (a
    # Qwen3MoeModel), n_deepstack_layers beside their parents' keys
    "qwen3_vl_text": "qwen3vl",
    "qwen3_vl_moe_text": "qwen3vlmoe",
    "qwen3_vl": "qwen3vl",  # the wrappers, as qwen2_vl's
    "qwen3_vl_moe": "qwen3vlmoe",
    # issue 30 (the last GGUF item): remote-code checkpoints (mlx-lm oracles)
    "rwkv7": "rwkv7",  # Rwkv7Model: the six token-shift mixes stacked into time_mix_lerp_fused
    "plamo2": "plamo2",  # Plamo2Model: the norms' offsets folded into their weights
}
# Qwen3-VL's text models (QWEN3VL) and the MoE one's stacked experts,
# gate_up_proj [E, H, 2I] and down_proj [E, I, H] as published, which
# Qwen3VLMoeTextModel.modify_tensors splits and transposes (QWEN3VL_MOE).
QWEN3VL = {"qwen3_vl", "qwen3_vl_text", "qwen3_vl_moe", "qwen3_vl_moe_text"}
QWEN3VL_MOE = {"qwen3_vl_moe", "qwen3_vl_moe_text"}
# Families converted by Qwen3NextModel and its subclasses (gated DeltaNet):
# QWEN35: Qwen3.5's converter also puts the value heads in tiled order.
QWEN_GDN = {"qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text"}
QWEN35 = QWEN_GDN - {"qwen3_next"}
# NemotronHModel (a GraniteHybridModel): its own Mamba2 tensors as
# Mamba2Model stores them, q/k permuted (LlamaModel), stacked experts.
NEMOTRON_H = {"nemotron_h"}
# FalconH1Model (a Mamba2Model): every muP multiplier folded into weights.
FALCON_H1 = {"falcon_h1"}
# LFM2Model and LFM2MoeModel: head_count_kv per layer (0 for the conv
# layers), the short convolutions' kernel squeezed to [C, K].
LFM2 = {"lfm2", "lfm2_moe"}
# GraniteMoeModel's splits of input_linear (experts, shared MLP).
GRANITE_MOE = {"granitemoe", "granitemoeshared", "granitemoehybrid"}
GRANITE_HYBRID = {"granitemoehybrid", "bamba"}
# Families converted by MambaModel / Mamba2Model: their own metadata (no
# TextModel keys), A stored as -exp(A_log) (ssm_a), conv1d squeezed.
MAMBA_MODEL = {"mamba", "falcon_mamba"}
MAMBA2_MODEL = {"mamba2"}
# Families whose Mamba mixers the converters store as MambaModel does
# (MAMBA1: JambaModel too) or as Mamba2Model does (A and D [H, 1], the
# gated norm per group); SSM_PARAM: the tensors that changes.
MAMBA1 = MAMBA_MODEL | {"jamba"}
MAMBA2 = MAMBA2_MODEL | GRANITE_HYBRID
SSM_PARAM = re.compile(r"\.(A_log|D|dt_bias|conv1d\.weight)$|\.(mixer|mamba)\.norm\.weight$")
# Families whose converters (GPT2Model, StarCoderModel, Phi2Model) write
# 4·hidden_size as the feed-forward length, whatever the checkpoint's.
FF_4X = {"gpt2", "gpt_bigcode", "phi"}
# GPT-2's Conv1D weights ([in, out]), which GPT2Model.modify_tensors
# transposes to [out, in].
CONV1D = re.compile(r"\.(c_attn|c_proj|c_fc)\.weight$")
# The families DeepseekV2Model and its subclasses convert (MLA as MQA,
# kv_b_proj split per head).
DEEPSEEK2 = {"deepseek_v2", "deepseek_v3", "glm_moe_dsa"}
# Architectures newer than the pinned gguf-py (no MODEL_ARCH member): the
# architecture whose tensor list theirs equals in llama.cpp's constants.py
# (NANBEIGE's is LLAMA's).
TENSORS_AS = {"nanbeige": gguf.MODEL_ARCH.LLAMA}
# Families converted by LlamaModel and its subclasses: q/k rows permuted
# for llama.cpp's rope (pairs interleaved per head).
PERMUTE_QK = {"llama", "mistral", "smollm3", "granite", "minicpm", "arcee", "mixtral", "granitemoe", "granitemoeshared", "granitemoehybrid", "bamba",
              "olmo",  # OlmoModel: LlamaModel's permutation
              "ministral3", "mistral3",  # Ministral3Model (a LlamaModel)
              "deepseek", "xverse", "nanbeige"}  # DeepseekModel.permute, XverseModel._reverse_hf_permute (MHA: llama's)
# BailingMoeModel.modify_tensors: attention.query_key_value [q | k | v],
# written as attn_q, attn_k (both permuted) and attn_v.
BAILING_QKV = re.compile(r"\.attention\.query_key_value\.weight$")


def model_kind(cfg):
    """The converter a config takes, by its model_type, except where one
    model_type has two converters: Ling 2.0 (BailingMoeV2ForCausalLM,
    model_type bailing_moe) is "bailing_moe_v2"."""
    mt = cfg["model_type"]
    if mt == "bailing_moe" and "BailingMoeV2ForCausalLM" in (cfg.get("architectures") or []):
        return "bailing_moe_v2"
    return mt


# InternLM2Model.modify_tensors: attention.wqkv, rows per kv group
# [q_1 .. q_r | k | v], written as attn_q, attn_k (both permuted) and attn_v.
INTERNLM2_QKV = re.compile(r"\.attention\.wqkv\.weight$")
# Families converted by LlamaModel itself or a subclass (its metadata:
# vocab_size, rope.dimension_count, linear rope scaling).
LLAMA_MODEL = {"llama", "mistral", "smollm3", "granite", "mixtral", "granitemoe", "granitemoeshared", "granitemoehybrid", "bamba", "apertus",
               "llama4_text", "ministral3", "mistral3"}
# Families whose llama3 RoPE llama.cpp stores as the rope_freqs tensor only
# (LlamaModel.generate_extra_tensors and its kin).
ROPE_FREQS = {"llama", "exaone", "exaone4", "apertus", "llama4_text", "nemotron-nas"}
# MoE families whose HF configs may mix in dense layers (mlp_only_layers,
# decoder_sparse_step), which llama.cpp's converters do not carry.
DENSE_LAYERS_MOE = {"qwen2_moe", "qwen3_moe", "qwen3_next", "qwen3_vl_moe_text"}
# A per-expert checkpoint tensor (<prefix>.experts.<e>.<proj>.weight); the
# converter stacks each projection's experts into one tensor (ffn_*_exps).
EXPERT = re.compile(r"^(.*\.experts)\.(\d+)\.(\w+)\.weight$")
# The stacked name archc's experts primitive reads (<prefix>.experts.<proj>.weight).
STACKED = re.compile(r"^(.*\.experts)\.([a-z_]\w*)\.weight$")
# Families whose RMSNorm weights llama.cpp stores as 1 + w.
NORM_PLUS_ONE = {"gemma", "gemma2", "gemma3_text", "nemotron", "step3p5"}  # NemotronModel: LayerNorm1P's weights; Step35Model
# Families whose keys and tensors the DENSE3 functions below write and read
# back (issue 21's third pack, h-gguf3).
DENSE3 = {"llama4_text", "dbrx", "gemma4_text", "glm"}
# Families whose converter forces every tensor of 2 or more dimensions to
# the output type (tensor_force_quant), the router included (DbrxModel).
FORCE_QUANT = {"dbrx"}


def rope_params(cfg, layer_type="full_attention"):
    """The RoPE parameters of a layer type (transformers >= 5 config; a
    remote-code config in transformers 4's spelling, top-level rope_theta
    and rope_scaling, as one dict)."""
    if cfg.get("rope_parameters") is None and "rope_theta" in cfg:
        return dict(cfg.get("rope_scaling") or {}, rope_theta=cfg["rope_theta"])
    rp = cfg.get("rope_parameters") or {}
    return rp.get(layer_type, rp)


def permute(w, heads):
    """llama.cpp's q/k row permutation: within each head, rows
    [first half | second half] become interleaved pairs."""
    rows = w.shape[0]
    half = rows // heads // 2
    return w.reshape(heads, 2, half, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def unpermute(w, heads):
    """The inverse of permute."""
    rows = w.shape[0]
    half = rows // heads // 2
    return w.reshape(heads, half, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def llama3_rope_factors(p, dim):
    """The rope_freqs tensor llama.cpp's LlamaModel writes for llama3
    scaling: per frequency, the divisor HF's llama3 rule applies."""
    base, factor = p["rope_theta"], p["factor"]
    low, high = p.get("low_freq_factor", 1.0), p.get("high_freq_factor", 4.0)
    old = p["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    out = []
    for i in range(0, dim, 2):
        freq = 1.0 / base ** (i / dim)
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            out.append(1.0)
        elif wavelen > low_wavelen:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


# Config spellings of the published checkpoints (EXAONE's attribute_map)
# and the names the code below reads.
CONFIG_ALIASES = {"num_layers": "num_hidden_layers", "layer_norm_epsilon": "layer_norm_epsilon",
                  "activation_function": "hidden_act",
                  # GPT2Config's and GPTBigCodeConfig's attribute_map
                  "n_embd": "hidden_size", "n_layer": "num_hidden_layers", "n_head": "num_attention_heads",
                  "n_positions": "max_position_embeddings", "n_inner": "intermediate_size",
                  "n_layers": "num_hidden_layers",  # DbrxConfig's attribute_map
                  "num_transformer_layers": "num_hidden_layers"}  # OpenELM's


def write_metadata(w, name, cfg, ftype, state):
    """The keys convert_hf_to_gguf.py writes for the fixture's class, then
    the EXTENSION keys the fixture needs (see the module docstring); state:
    the checkpoint (for parameters llama.cpp stores as metadata)."""
    cfg = text_config(cfg)
    for alias, key in CONFIG_ALIASES.items():
        if alias in cfg:
            cfg.setdefault(key, cfg[alias])
    mt = model_kind(cfg)
    if mt in DENSE3:
        cfg = dense3_hparams(cfg)
    w.add_type("model")
    w.add_name("mistral" if mt == "mistral" else name)  # transformers and archc read a llama file named "mistral" as Mistral
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    if mt in MAMBA_MODEL | MAMBA2_MODEL:
        write_mamba_metadata(w, cfg, ftype)
        return
    if mt == "jamba":
        write_jamba_metadata(w, cfg, ftype)
        return
    if mt == "dbrx":
        write_dbrx_metadata(w, cfg, ftype)
        return
    if mt == "falcon":
        write_falcon_metadata(w, cfg, ftype)
        return
    if mt == "openelm":
        write_openelm_metadata(w, cfg, ftype)
        return
    if mt == "nemotron-nas":
        write_deci_metadata(w, cfg, ftype)
        return
    if mt == "step3p5":
        write_step35_metadata(w, cfg, ftype)
        return
    if mt == "bloom":  # BloomModel.set_gguf_parameters (not TextModel's)
        n_embed = cfg["hidden_size"]
        w.add_context_length(cfg.get("seq_length", n_embed))
        w.add_embedding_length(n_embed)
        w.add_feed_forward_length(4 * n_embed)
        w.add_block_count(cfg["n_layer"])
        w.add_head_count(cfg["n_head"])
        w.add_head_count_kv(cfg["n_head"])
        w.add_layer_norm_eps(cfg["layer_norm_epsilon"])
        w.add_file_type(ftype)
        write_special_tokens(w, cfg)
        return
    if mt == "gemma4_text":
        write_gemma4_metadata(w, cfg, ftype)
        return
    if mt == "glm":
        write_chatglm_metadata(w, cfg, ftype)
        return
    if mt in NEMOTRON_H:
        write_nemotron_h_metadata(w, cfg, ftype)
        return
    if mt in FALCON_H1:
        write_falcon_h1_metadata(w, cfg, ftype)
        return
    if mt == "rwkv7":
        write_rwkv7_metadata(w, cfg, ftype)
        return
    if mt == "plamo2":
        write_plamo2_metadata(w, cfg, ftype)
        return
    heads, layers = cfg["num_attention_heads"], cfg["num_hidden_layers"]
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // heads
    full = rope_params(cfg)
    arch_name = GGUF_ARCH[mt]
    # TextModel.set_gguf_parameters (Gemma's own lists are the same keys).
    w.add_block_count(layers)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(4 * cfg["hidden_size"] if mt in FF_4X else cfg.get("intermediate_size") or 4 * cfg["hidden_size"])
    w.add_head_count(heads)
    if mt not in ("gpt2", "gpt_neox", "qwen"):  # GPT2Model and GPTNeoXModel write no head_count_kv; TextModel none without num_key_value_heads
        w.add_head_count_kv(1 if mt in DEEPSEEK2 | {"gpt_bigcode"} else cfg.get("num_key_value_heads") or heads)  # DeepseekV2Model: MLA as MQA; StarCoderModel: always 1
    if mt not in ("gemma", "stablelm", "minicpm3", "gpt2", "gpt_bigcode", "phi", "gpt_neox") and (
            mt not in ("xverse", "qwen") or "rope_theta" in full):  # GemmaModel, StableLMModel, MiniCPM3Model, GPT2Model, StarCoderModel, Phi2Model, GPTNeoXModel write no rope base (llama.cpp's default 10000); TextModel none for a config without one (XVERSE's)
        if "mrope_section" in full:  # TextModel: M-RoPE's sections, padded to 4 ([time, height, width, extra])
            w.add_rope_dimension_sections((list(full["mrope_section"]) + [0, 0, 0, 0])[:4])
        w.add_rope_freq_base(full["rope_theta"])
    if "rms_norm_eps" in cfg:
        w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    for key in ("layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"):  # TextModel: LayerNorm families
        if key in cfg:
            w.add_layer_norm_eps(cfg[key])
            break
    if cfg.get("head_dim") is not None and mt not in ("minicpm3", "deepseek_v2", "deepseek_v3", "glm_moe_dsa"):  # their head_dim is the rotary part
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
    w.add_file_type(ftype)
    if mt in LLAMA_MODEL:
        w.add_vocab_size(cfg["vocab_size"])
        w.add_rope_dimension_count(head_dim)
        if full.get("rope_type") == "linear":
            w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
            w.add_rope_scaling_factor(full["factor"])
    if mt == "gemma2":
        w.add_attn_logit_softcapping(cfg["attn_logit_softcapping"])
        w.add_final_logit_softcapping(cfg["final_logit_softcapping"])
        w.add_sliding_window(cfg["sliding_window"])
    if mt == "gemma3_text":
        if cfg.get("final_logit_softcapping"):
            w.add_final_logit_softcapping(cfg["final_logit_softcapping"])
        w.add_sliding_window(cfg["sliding_window"])
        if full.get("rope_type") == "linear":
            w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
            w.add_rope_scaling_factor(full["factor"])
    if mt in ("olmo2", "olmo3"):  # Olmo2Model
        if full.get("rope_type") == "yarn":
            w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
            w.add_rope_scaling_factor(full["factor"])
            if "attention_factor" in full:
                w.add_rope_scaling_attn_factors(full["attention_factor"])
            w.add_rope_scaling_orig_ctx_len(full["original_max_position_embeddings"])
        if cfg.get("sliding_window") is not None:
            w.add_sliding_window(cfg["sliding_window"])
        types = cfg.get("layer_types") or ["sliding_attention" if (i + 1) % 4 else "full_attention" for i in range(layers)]
        w.add_sliding_window_pattern([t == "sliding_attention" for t in types])
    if mt in {"granite"} | GRANITE_MOE:  # GraniteModel: the multipliers as scales
        w.add_attention_scale(cfg["attention_multiplier"])
        w.add_embedding_scale(cfg["embedding_multiplier"])
        w.add_residual_scale(cfg["residual_multiplier"])
        w.add_logit_scale(cfg["logits_scaling"])
    if mt == "minicpm":  # MiniCPMModel
        w.add_embedding_scale(float(cfg["scale_emb"]))
        w.add_residual_scale(cfg["scale_depth"] / cfg["num_hidden_layers"] ** 0.5)
        w.add_logit_scale(cfg["hidden_size"] / cfg["dim_model_base"])
    experts = cfg.get("num_local_experts") or cfg.get("num_experts")
    if experts and mt != "hunyuan_v1_moe":  # the MoE converters (LlamaModel for Mixtral, Qwen2MoeModel, Qwen3MoeModel, OlmoeModel)
        w.add_expert_count(experts)
        w.add_expert_used_count(cfg["num_experts_per_tok"])
        if cfg.get("moe_intermediate_size"):
            w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
        elif mt in GRANITE_MOE:  # GraniteMoeModel
            w.add_expert_feed_forward_length(cfg["intermediate_size"])
        if mt in GRANITE_MOE and cfg.get("shared_intermediate_size"):  # GraniteMoeModel
            w.add_expert_shared_feed_forward_length(cfg["shared_intermediate_size"])
        if cfg.get("shared_expert_intermediate_size"):
            w.add_expert_shared_feed_forward_length(cfg["shared_expert_intermediate_size"])
    if mt in GRANITE_HYBRID:
        write_granite_hybrid_metadata(w, cfg)
    if mt in LFM2:
        write_lfm2_metadata(w, cfg)
    if mt in QWEN_GDN:
        write_qwen_gdn_metadata(w, cfg)
    if mt == "hunyuan_v1_moe":  # HunYuanMoEModel (moe_topk, moe_intermediate_size and num_shared_expert are per-layer
        # lists in the published configs, a number or absent in transformers': one shared MLP, experts intermediate_size wide)
        w.add_expert_count(cfg["num_experts"])
        w.add_expert_shared_feed_forward_length(cfg["intermediate_size"])
        w.add_expert_feed_forward_length(cfg["intermediate_size"])
        w.add_expert_used_count(cfg["moe_topk"])
        w.add_expert_shared_count(1)
    if mt in ("hunyuan_v1_dense", "hunyuan_v1_moe") and full.get("rope_type") == "dynamic":  # HunYuanModel's NTK alpha
        alpha, base = full.get("alpha", 50), full.get("rope_theta", 10000.0)
        w.add_rope_freq_base(base * (alpha ** (head_dim / (head_dim - 2))))
        w.add_rope_scaling_type(gguf.RopeScalingType.NONE)
        w.add_rope_scaling_factor(1)
        w.add_rope_scaling_orig_ctx_len(256 * 1024)
        w.add_context_length(256 * 1024)
        # EXTENSION: the base and alpha (llama.cpp keeps only their product,
        # rounded to f32) and the config's max_position_embeddings (archc's
        # default KV length), which llama.cpp replaces.
        w.add_float64(f"{GGUF_ARCH[mt]}.rope.scaling.alpha", float(alpha))
        w.add_float64(f"{GGUF_ARCH[mt]}.rope.scaling.freq_base", float(base))
        w.add_uint32(f"{GGUF_ARCH[mt]}.max_position_embeddings", cfg["max_position_embeddings"])
    if mt == "phimoe":
        # EXTENSION: HF's PhimoeRotaryEmbedding scales by short_mscale /
        # long_mscale, llama.cpp by its attn_factor formula; its router is
        # not the sparsemixer's jitter band.
        for key in ("short_mscale", "long_mscale"):
            if full.get(key) is not None:
                w.add_float64(f"{arch_name}.rope.scaling.{key}", float(full[key]))
        w.add_float64(f"{arch_name}.router_jitter_noise", float(cfg.get("router_jitter_noise", 0.01)))
    if mt == "ernie4_5_moe":  # Ernie4_5MoeModel
        w.add_expert_count(cfg["moe_num_experts"])
        w.add_expert_used_count(cfg["moe_k"])
        w.add_interleave_moe_layer_step(cfg["moe_layer_interval"])
        w.add_leading_dense_block_count(cfg["moe_layer_start_index"])
        if cfg.get("moe_intermediate_size") is not None:
            w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
        if cfg.get("moe_num_shared_experts") is not None:
            w.add_expert_shared_count(cfg["moe_num_shared_experts"])
            if cfg["moe_num_shared_experts"] > 0:
                w.add_expert_shared_feed_forward_length(cfg["intermediate_size"] // cfg["num_key_value_heads"])
        # EXTENSION: llama.cpp's MoE layers run to the last one and its
        # renormalisation has no floor; HF's end index and floor, where not
        # those.
        if cfg.get("moe_layer_end_index", -1) not in (-1, layers - 1):
            w.add_int32(f"{arch_name}.moe_layer_end_index", cfg["moe_layer_end_index"])
        if cfg.get("moe_norm_min", 1e-12) != 1e-12:
            w.add_float64(f"{arch_name}.moe_norm_min", cfg["moe_norm_min"])
    if mt == "dots1":  # Dots1Model (Qwen2MoeModel's keys with num_experts = n_routed_experts; TextModel's expert groups)
        w.add_expert_count(cfg["n_routed_experts"])
        w.add_expert_used_count(cfg["num_experts_per_tok"])
        if cfg.get("n_group") is not None:
            w.add_expert_group_count(cfg["n_group"])
        if cfg.get("topk_group") is not None:
            w.add_expert_group_used_count(cfg["topk_group"])
        w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
        w.add_leading_dense_block_count(cfg["first_k_dense_replace"])
        w.add_expert_shared_count(cfg["n_shared_experts"])
        w.add_expert_weights_scale(cfg["routed_scaling_factor"])
        w.add_expert_weights_norm(cfg["norm_topk_prob"])
        if "sliding_attention" in cfg.get("layer_types", []):  # EXTENSION: llama.cpp's dots1 has no sliding window
            w.add_sliding_window(cfg["sliding_window"])
            w.add_sliding_window_pattern([t == "sliding_attention" for t in cfg["layer_types"]])
    if mt == "nemotron":  # NemotronModel (TextModel finds norm_eps as the RMS eps too)
        w.add_layer_norm_rms_eps(cfg["norm_eps"])
        w.add_vocab_size(cfg["vocab_size"])
        w.add_layer_norm_eps(cfg["norm_eps"])
        w.add_rope_dimension_count(int(full.get("partial_rotary_factor", 0.5) * cfg["hidden_size"]) // heads)
        if full.get("factor") is None:
            w.add_rope_scaling_type(gguf.RopeScalingType.NONE)
        else:
            w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
            w.add_rope_scaling_factor(full["factor"])
    if mt in ("glm4", "glm4_moe"):  # Glm4Model, Glm4MoeModel: the rotary width
        w.add_rope_dimension_count(int(head_dim * full.get("partial_rotary_factor", 0.5)))
    if mt == "glm4_moe":  # Glm4MoeModel (its expert keys; TextModel's expert groups)
        w.add_expert_count(cfg["n_routed_experts"])
        w.add_expert_used_count(cfg["num_experts_per_tok"])
        if cfg.get("n_group") is not None:
            w.add_expert_group_count(cfg["n_group"])
        if cfg.get("topk_group") is not None:
            w.add_expert_group_used_count(cfg["topk_group"])
        w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
        w.add_expert_shared_count(cfg["n_shared_experts"])
        w.add_leading_dense_block_count(cfg["first_k_dense_replace"])
        w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
        w.add_expert_weights_scale(cfg["routed_scaling_factor"])
        w.add_expert_weights_norm(cfg["norm_topk_prob"])
        if cfg.get("num_nextn_predict_layers") is not None:
            w.add_nextn_predict_layers(cfg["num_nextn_predict_layers"])
            w.add_block_count(layers + cfg["num_nextn_predict_layers"])  # the MTP layers are extra blocks
    if mt == "minimax_m2":  # MiniMaxM2Model: the experts' width, the rotary width (rotary_dim; a transformers 5
        # config has rope_parameters' partial_rotary_factor instead, which the converter does not read)
        w.add_expert_feed_forward_length(cfg["intermediate_size"])
        w.add_rope_dimension_count(cfg.get("rotary_dim") or int(head_dim * full.get("partial_rotary_factor", 1.0)))
        w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)  # TextModel, from the published config's scoring_func
    if mt == "apertus":  # ApertusModel.modify_tensors: each layer's xIELU scalars, in layer order
        for key, add in (("alpha_p", w.add_xielu_alpha_p), ("alpha_n", w.add_xielu_alpha_n), ("beta", w.add_xielu_beta), ("eps", w.add_xielu_eps)):
            add([float(np.float32(state[f"model.layers.{i}.mlp.act_fn.{key}"]).item()) for i in range(layers)])
    if mt in QWEN3VL:  # Qwen3VLTextModel / Qwen3VLMoeTextModel: the DeepStack mergers' count
        w.add_num_deepstack_layers(len((cfg.get("vision_config") or {}).get("deepstack_visual_indexes", [])))
    if mt in DENSE_LAYERS_MOE:  # EXTENSION: which layers keep a dense MLP
        if cfg.get("decoder_sparse_step", 1) != 1:
            w.add_uint32(f"{GGUF_ARCH[mt]}.decoder_sparse_step", cfg["decoder_sparse_step"])
        if cfg.get("mlp_only_layers"):
            w.add_array(f"{GGUF_ARCH[mt]}.mlp_only_layers", [int(x) for x in cfg["mlp_only_layers"]])
    if mt == "olmo":  # OlmoModel.set_gguf_parameters: OlmoLayerNorm's fixed eps, clip_qkv
        w.add_layer_norm_eps(1e-5)
        if cfg.get("clip_qkv") is not None:
            w.add_clamp_kqv(cfg["clip_qkv"])
    if mt == "olmoe" and cfg.get("clip_qkv") is not None:
        w.add_clamp_kqv(cfg["clip_qkv"])
    if mt in DEEPSEEK2:  # DeepseekV2Model.set_gguf_parameters
        kv, rot = cfg["kv_lora_rank"], cfg["qk_rope_head_dim"]
        w.add_leading_dense_block_count(cfg.get("first_k_dense_replace") or 0)
        w.add_vocab_size(cfg["vocab_size"])
        if cfg.get("q_lora_rank") is not None:
            w.add_q_lora_rank(cfg["q_lora_rank"])
        w.add_kv_lora_rank(kv)
        w.add_key_length(kv + rot)
        w.add_value_length(kv)
        w.add_key_length_mla(cfg["qk_nope_head_dim"] + rot)
        w.add_value_length_mla(cfg["v_head_dim"])
        w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
        w.add_expert_count(cfg["n_routed_experts"])
        w.add_expert_used_count(cfg["num_experts_per_tok"])
        w.add_expert_shared_count(cfg.get("n_shared_experts") or 0)
        if cfg.get("routed_scaling_factor") is not None:
            w.add_expert_weights_scale(cfg["routed_scaling_factor"])
        if cfg.get("norm_topk_prob"):
            w.add_expert_weights_norm(True)
        w.add_rope_dimension_count(rot)
        if full.get("rope_type") == "yarn":
            w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
            w.add_rope_scaling_factor(full["factor"])
            w.add_rope_scaling_orig_ctx_len(full["original_max_position_embeddings"])
            if full.get("mscale_all_dim") is not None:
                w.add_rope_scaling_yarn_log_mul(0.1 * full["mscale_all_dim"])
        if mt == "deepseek_v3":
            # TextModel: the gating function from DeepSeek's scoring_func
            # ("sigmoid" in every V3 config; HF's DeepseekV3Config has no
            # such key and always computes sigmoid scores).
            w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
        if mt == "glm_moe_dsa":
            # TextModel: the expert groups (written where the config has
            # them; GlmMoeDsaConfig's n_group and topk_group), then
            # GlmMoeDsaModel.set_gguf_parameters: the rotary width (times a
            # partial_rotary_factor, 1 here), MTP layers where the config
            # has them, and the DSA indexer's keys (indexer_types as bools,
            # "full" true). No gating function: the config has no
            # scoring_func (GLM-5's sigmoid is the .arch section's).
            if cfg.get("n_group") is not None:
                w.add_expert_group_count(cfg["n_group"])
            if cfg.get("topk_group") is not None:
                w.add_expert_group_used_count(cfg["topk_group"])
            w.add_rope_dimension_count(int(rot * full.get("partial_rotary_factor", 1.0)))
            if cfg.get("num_nextn_predict_layers") is not None:
                w.add_nextn_predict_layers(cfg["num_nextn_predict_layers"])
            w.add_indexer_head_count(cfg["index_n_heads"])
            w.add_indexer_key_length(cfg["index_head_dim"])
            w.add_indexer_top_k(cfg["index_topk"])
            if cfg.get("indexer_types") is not None:
                # (gguf-py 0.19 has no add_indexer_types: its key and bool array)
                w.add_array(f"{GGUF_ARCH[mt]}.attention.indexer.types", [t == "full" for t in cfg["indexer_types"]])
    if mt == "minicpm3":  # MiniCPM3Model (its own set_gguf_parameters, no TextModel keys beyond these)
        w.add_vocab_size(cfg["vocab_size"])
        if cfg.get("q_lora_rank") is not None:
            w.add_q_lora_rank(cfg["q_lora_rank"])
        w.add_kv_lora_rank(cfg["kv_lora_rank"])
        w.add_key_length(cfg["qk_nope_head_dim"] + cfg["qk_rope_head_dim"])
        w.add_rope_dimension_count(cfg["qk_rope_head_dim"])
    if mt in DENSE3:
        write_dense3_metadata(w, cfg, arch_name)
    if mt == "nanbeige":  # NanbeigeModel.set_gguf_parameters (keys newer than the pinned gguf-py's writer)
        w.add_uint32(f"{arch_name}.num_loops", max(int(cfg.get("num_loops", 1) or 1), 1))
        w.add_bool(f"{arch_name}.skip_loop_final_norm", bool(cfg.get("skip_loop_final_norm", False)))
    if mt == "xverse":  # XverseModel.set_gguf_parameters
        w.add_tensor_data_layout("Meta AI original pth")
        w.add_rope_dimension_count(cfg["hidden_size"] // heads)
    if mt == "deepseek":  # TextModel's used-expert count and gating function (scoring_func), then DeepseekModel.set_gguf_parameters
        w.add_expert_used_count(cfg["num_experts_per_tok"])
        w.add_expert_gating_func({"softmax": gguf.ExpertGatingFuncType.SOFTMAX, "sigmoid": gguf.ExpertGatingFuncType.SIGMOID}[cfg.get("scoring_func", "softmax")])
        w.add_rope_dimension_count(head_dim)
        w.add_rope_scaling_type(gguf.RopeScalingType.NONE)
        w.add_leading_dense_block_count(cfg["first_k_dense_replace"])
        w.add_vocab_size(cfg["vocab_size"])
        w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
        w.add_expert_weights_scale(1.0)
        w.add_expert_count(cfg["n_routed_experts"])
        w.add_expert_shared_count(cfg["n_shared_experts"])
    if mt in ("bailing_moe", "bailing_moe_v2"):  # TextModel's groups and gating function, then BailingMoe(V2)Model.set_gguf_parameters
        if cfg.get("n_group") is not None:
            w.add_expert_group_count(cfg["n_group"])
        if cfg.get("topk_group") is not None:
            w.add_expert_group_used_count(cfg["topk_group"])
        if cfg.get("score_function") is not None:
            w.add_expert_gating_func({"softmax": gguf.ExpertGatingFuncType.SOFTMAX, "sigmoid": gguf.ExpertGatingFuncType.SIGMOID}[cfg["score_function"]])
        rope_dim = head_dim if mt == "bailing_moe" else int(head_dim * cfg.get("partial_rotary_factor", 0.5))
        w.add_rope_dimension_count(rope_dim)
        w.add_leading_dense_block_count(cfg["first_k_dense_replace"])
        w.add_vocab_size(cfg["vocab_size"])
        if mt == "bailing_moe_v2":
            w.add_expert_shared_feed_forward_length(cfg.get("moe_shared_expert_intermediate_size", cfg["moe_intermediate_size"] * cfg["num_shared_experts"]))
        w.add_expert_weights_scale(1.0 if mt == "bailing_moe" else cfg["routed_scaling_factor"])
        w.add_expert_shared_count(cfg["num_shared_experts"])
        w.add_expert_weights_norm(cfg["norm_topk_prob"])
        if mt == "bailing_moe_v2" and cfg.get("num_nextn_predict_layers") is not None:
            w.add_nextn_predict_layers(cfg["num_nextn_predict_layers"])
    write_special_tokens(w, cfg)

    # EXTENSION: what llama.cpp's format does not carry for this fixture.
    arch = GGUF_ARCH[mt]
    if mt == "internlm2" and (full.get("rope_type") or full.get("type")) == "dynamic":
        # InternLM2.5's dynamic NTK scaling (past max_position_embeddings),
        # which TextModel drops (llama.cpp has no dynamic type)
        w.add_float32(f"{arch}.rope.scaling.dynamic_factor", full["factor"])
    if mt == "deepseek":  # llama.cpp: MoE on every layer after the dense ones, never renormalised
        if cfg.get("moe_layer_freq", 1) != 1:
            w.add_uint32(f"{arch}.moe_layer_freq", cfg["moe_layer_freq"])
        if cfg.get("norm_topk_prob"):
            w.add_expert_weights_norm(True)
    if mt in ROPE_FREQS and full.get("rope_type") == "llama3":
        write_llama3_extension(w, arch, full)
    if mt in ("phi3", "phimoe"):  # Phi3MiniModel
        omax = cfg["original_max_position_embeddings"]
        w.add_rope_scaling_orig_ctx_len(omax)
        w.add_rope_dimension_count(int(full.get("partial_rotary_factor", 1.0) * cfg["hidden_size"]) // heads)
        w.add_sliding_window(cfg.get("sliding_window") or 0)
        if full.get("rope_type") == "longrope":
            scale = cfg["max_position_embeddings"] / omax
            w.add_rope_scaling_attn_factors(math.sqrt(1 + math.log(scale) / math.log(omax)) if scale > 1.0 else 1.0)
            # EXTENSION: llama.cpp stores the factors as the tensors
            # rope_factors_long/short, which a config cannot read.
            w.add_array(f"{GGUF_ARCH[mt]}.rope.scaling.short_factor", [float(x) for x in full["short_factor"]])
            w.add_array(f"{GGUF_ARCH[mt]}.rope.scaling.long_factor", [float(x) for x in full["long_factor"]])
    if mt in DEEPSEEK2:
        # llama.cpp stores mscale_all_dim only as 0.1·mscale_all_dim in f32
        # (yarn_log_multiplier), fixes mscale at 1 and beta_fast/slow at
        # 32/1, and reads no expert groups for deepseek2: the fixture's
        # values, exact.
        if full.get("rope_type") == "yarn":
            for k in ("mscale", "mscale_all_dim", "beta_fast", "beta_slow"):
                if full.get(k) is not None:
                    w.add_float64(f"{arch}.rope.scaling.{k}", float(full[k]))
        if cfg.get("topk_method") == "group_limited_greedy" or (mt == "deepseek_v3" and (cfg.get("n_group") or 1) > 1):
            w.add_expert_group_count(cfg["n_group"])
            w.add_expert_group_used_count(cfg["topk_group"])
    if mt == "minicpm3":
        # llama.cpp fixes scale_emb 12, scale_depth 1.4, dim_model_base 256
        # and v_head_dim hidden/heads, and stores LongRoPE's factors as the
        # tensors rope_factors_long/short only: the fixture's values under
        # minicpm's keys, value_length and the rope.scaling keys phi3 uses.
        if cfg["v_head_dim"] != cfg["hidden_size"] // heads:
            w.add_value_length(cfg["v_head_dim"])
        w.add_embedding_scale(float(cfg["scale_emb"]))
        w.add_residual_scale(cfg["scale_depth"] / cfg["num_hidden_layers"] ** 0.5)
        w.add_logit_scale(cfg["hidden_size"] / cfg["dim_model_base"])
        if full.get("rope_type") == "longrope":
            w.add_rope_scaling_orig_ctx_len(full["original_max_position_embeddings"])
            w.add_array(f"{arch}.rope.scaling.short_factor", [float(x) for x in full["short_factor"]])
            w.add_array(f"{arch}.rope.scaling.long_factor", [float(x) for x in full["long_factor"]])
    if mt == "cohere":  # CommandR2Model
        w.add_logit_scale(cfg["logit_scale"])
        w.add_rope_scaling_type(gguf.RopeScalingType.NONE)
    if mt == "cohere2":  # Cohere2Model (no rotary_pct in a transformers config: 1)
        w.add_logit_scale(cfg["logit_scale"])
        w.add_sliding_window(cfg["sliding_window"])
        w.add_vocab_size(cfg["vocab_size"])
        w.add_rope_dimension_count(cfg["hidden_size"] // heads)
        w.add_rope_scaling_type(gguf.RopeScalingType.NONE)
        default = ["full_attention" if (i + 1) % 4 == 0 else "sliding_attention" for i in range(layers)]
        if cfg["layer_types"] != default:  # EXTENSION: llama.cpp fixes every 4th layer global
            w.add_sliding_window_pattern([t == "sliding_attention" for t in cfg["layer_types"]])
    if mt in ("exaone4", "exaone_moe"):  # Exaone4Model
        w.add_vocab_size(cfg["vocab_size"])
        if cfg.get("sliding_window") is not None:
            w.add_sliding_window(cfg["sliding_window"])
            w.add_sliding_window_pattern([t == "sliding_attention" for t in cfg["layer_types"]])
    if mt == "exaone_moe":  # ExaoneMoEModel (TextModel's expert groups, then its own keys)
        if cfg.get("n_group") is not None:
            w.add_expert_group_count(cfg["n_group"])
        if cfg.get("topk_group") is not None:
            w.add_expert_group_used_count(cfg["topk_group"])
        w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
        w.add_expert_shared_count(cfg["num_shared_experts"])
        w.add_expert_shared_feed_forward_length(cfg["moe_intermediate_size"] * cfg["num_shared_experts"])
        w.add_expert_weights_scale(cfg["routed_scaling_factor"])
        w.add_expert_weights_norm(cfg["norm_topk_prob"])
        w.add_leading_dense_block_count(cfg.get("first_k_dense_replace", cfg.get("first_last_k_dense_replace", 0)))
        w.add_nextn_predict_layers(cfg.get("num_nextn_predict_layers", 0))
        w.add_rope_scaling_type(gguf.RopeScalingType.NONE)
    if mt == "exaone":  # ExaoneModel
        w.add_rope_dimension_count(cfg["hidden_size"] // heads)
    if mt in ("phi", "gpt_neox"):  # Phi2Model, GPTNeoXModel: the rotary width
        w.add_rope_dimension_count(int(full.get("partial_rotary_factor", 0.5 if mt == "phi" else 0.25) * (cfg["hidden_size"] // heads)))
    if mt == "gpt_neox":
        w.add_parallel_residual(cfg.get("use_parallel_residual", True))
    if mt == "gpt2" and cfg.get("scale_attn_by_inverse_layer_idx"):  # EXTENSION: GPT2Model writes none
        w.add_bool(f"{arch}.scale_attn_by_inverse_layer_idx", True)
    if mt == "stablelm":  # StableLMModel
        w.add_rope_dimension_count(int(full.get("partial_rotary_factor", 0.25) * (cfg["hidden_size"] // heads)))
        w.add_parallel_residual(cfg.get("use_parallel_residual", True))
    if mt == "gpt_oss":  # GptOssModel (TextModel's MoE keys, its own sliding window, yarn)
        w.add_expert_count(cfg["num_local_experts"])
        w.add_expert_used_count(cfg["num_experts_per_tok"])
        w.add_sliding_window(cfg["sliding_window"])
        w.add_expert_feed_forward_length(cfg["intermediate_size"])
        w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        w.add_rope_scaling_factor(full["factor"])
        w.add_rope_scaling_orig_ctx_len(full.get("original_max_position_embeddings", 4096))
        # EXTENSION: llama.cpp fixes yarn's betas (32, 1) and truncates the
        # correction range; HF reads them, and truncate false, from the config.
        w.add_float32(gguf.Keys.Rope.SCALING_YARN_BETA_FAST.format(arch=arch), full.get("beta_fast", 32.0))
        w.add_float32(gguf.Keys.Rope.SCALING_YARN_BETA_SLOW.format(arch=arch), full.get("beta_slow", 1.0))
        w.add_bool(f"{arch}.rope.scaling.yarn_truncate", full.get("truncate", True))
        default = ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(layers)]
        if cfg["layer_types"] != default:  # EXTENSION: llama.cpp fixes even layers sliding
            w.add_sliding_window_pattern([t == "sliding_attention" for t in cfg["layer_types"]])
        for key, default in (("swiglu_alpha", 1.702), ("swiglu_limit", 7.0)):
            if cfg.get(key, default) != default:  # EXTENSION: llama.cpp fixes them
                w.add_float32(f"{arch}.{key}", cfg[key])
    if mt == "starcoder2" and cfg.get("sliding_window") is not None:
        w.add_sliding_window(cfg["sliding_window"])  # StarCoder2Model writes none
    if mt == "jais2":  # Jais2Model.set_gguf_parameters: TextModel's keys and the rotary width
        w.add_rope_dimension_count(head_dim)
    if mt == "ministral3":  # Ministral3Model.set_gguf_parameters: TextModel's yarn keys, mscale_all_dim, the beta
        if full.get("rope_type") == "yarn":
            assert full.get("mscale", 1.0) == full.get("mscale_all_dim", 1.0), "llama.cpp keeps mscale_all_dim only"
            w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
            w.add_rope_scaling_factor(full["factor"])
            w.add_rope_scaling_orig_ctx_len(full["original_max_position_embeddings"])
            if "attention_factor" in full:
                w.add_rope_scaling_yarn_attn_factor(full["attention_factor"])
            for key, add in (("beta_fast", w.add_rope_scaling_yarn_beta_fast), ("beta_slow", w.add_rope_scaling_yarn_beta_slow)):
                if key in full:
                    add(full[key])
            w.add_rope_scaling_yarn_log_mul(full["mscale_all_dim"])
        if full.get("llama_4_scaling_beta") is not None:
            w.add_attn_temperature_scale(full["llama_4_scaling_beta"])
    if mt in ("mistral", "qwen2", "ministral3", "mistral3", "qwen2_vl_text", "qwen2_5_vl_text") and cfg.get("sliding_window") is not None and (
            mt not in ("qwen2", "qwen2_vl_text", "qwen2_5_vl_text") or cfg.get("use_sliding_window")):
        # llama.cpp's llama, mistral3, qwen2 and qwen2vl have no sliding window.
        w.add_sliding_window(cfg["sliding_window"])
        if mt in ("qwen2", "qwen2_vl_text", "qwen2_5_vl_text"):
            w.add_sliding_window_pattern([t == "sliding_attention" for t in cfg["layer_types"]])
    if mt == "gemma3_text":
        default = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(layers)]
        if cfg["layer_types"] != default:  # llama.cpp fixes every 6th layer global
            w.add_sliding_window_pattern([t == "sliding_attention" for t in cfg["layer_types"]])
        local = rope_params(cfg, "sliding_attention").get("rope_theta", 10000.0)
        if local != 10000.0:  # llama.cpp fixes the local base at 10000
            w.add_rope_freq_base_swa(local)
    if mt in ("gemma2", "gemma3_text") and cfg["query_pre_attn_scalar"] != head_dim:
        # llama.cpp scales attention by head_dim^-0.5 (hidden/heads for 27B).
        w.add_uint32(f"{arch}.query_pre_attn_scalar", cfg["query_pre_attn_scalar"])
    if mt == "smollm3":
        default = [0 if (i + 1) % cfg.get("no_rope_layer_interval", 4) == 0 else 1 for i in range(layers)]
        if cfg.get("no_rope_layers") not in (None, default):  # llama.cpp fixes every 4th layer NoPE
            w.add_array(f"{arch}.no_rope_layers", [int(x) for x in cfg["no_rope_layers"]])


def write_special_tokens(w, cfg):
    for key, add in (("bos_token_id", w.add_bos_token_id), ("eos_token_id", w.add_eos_token_id), ("pad_token_id", w.add_pad_token_id)):
        if cfg.get(key) is not None:
            add(cfg[key])


def write_mamba_metadata(w, cfg, ftype):
    """MambaModel.set_gguf_parameters (mamba, falcon_mamba) and
    Mamba2Model.set_gguf_parameters (mamba2): the SSM sizes under ssm.*,
    the RMS norms' eps, and the context length (2**20), feed-forward length
    and head count (0) llama.cpp fixes; then the EXTENSION keys."""
    mt, arch = cfg["model_type"], GGUF_ARCH[cfg["model_type"]]
    d_model = cfg["hidden_size"]
    w.add_context_length(2**20)
    w.add_embedding_length(d_model)
    w.add_feed_forward_length(0)
    w.add_head_count(0)
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_ssm_conv_kernel(cfg.get("conv_kernel") or 4)
    if mt in MAMBA_MODEL:
        d_inner = cfg.get("intermediate_size") or 2 * d_model
        assert d_inner == 2 * d_model  # MambaModel refuses other expansions
        w.add_ssm_inner_size(d_inner)
        w.add_ssm_state_size(cfg.get("state_size") or 16)
        w.add_ssm_time_step_rank(cfg.get("time_step_rank") or -(d_model // -16))
        w.add_layer_norm_rms_eps(cfg.get("layer_norm_epsilon") or 1e-5)
        w.add_ssm_dt_b_c_rms(mt == "falcon_mamba")
    else:  # Mamba2Model
        d_inner = cfg.get("intermediate_size") or 2 * d_model
        head_dim = cfg.get("head_dim") or 64
        assert d_inner == 2 * d_model and d_inner % head_dim == 0
        w.add_ssm_inner_size(d_inner)
        w.add_ssm_state_size(cfg.get("state_size") or 128)
        w.add_ssm_time_step_rank(d_inner // head_dim)
        w.add_ssm_group_count(cfg.get("n_groups") or 1)
        w.add_layer_norm_rms_eps(cfg.get("layer_norm_epsilon") or 1e-5)
    w.add_file_type(ftype)
    write_special_tokens(w, cfg)

    # EXTENSION: what llama.cpp's format does not carry for this fixture.
    if mt == "falcon_mamba" and cfg.get("mixer_rms_eps", 1e-6) != 1e-6:
        # llama.cpp normalizes dt, B and C with layer_norm_rms_epsilon.
        w.add_float32(f"{arch}.mixer_rms_eps", cfg["mixer_rms_eps"])
    if mt in MAMBA2_MODEL:
        # llama.cpp's scan is not chunked; HF's chunk size changes only the
        # order of its prefill sums (and archc's module).
        w.add_uint32(f"{arch}.chunk_size", cfg.get("chunk_size", 256))
        # llama.cpp does not clamp dt; HF clamps it to time_step_limit (the
        # default (0, inf) changes no value after softplus, but is a clamp in
        # archc's module).
        limit = [float(x["__float__"]) if isinstance(x, dict) else float(x) for x in cfg.get("time_step_limit") or []]
        if limit:
            w.add_array(f"{arch}.time_step_limit", limit)


def granite_hybrid_attention(cfg):
    """GraniteHybridModel.get_attn_layers: the attention layers, from
    layer_types (transformers 5 spells them "full_attention"; the converter
    looks for "attention", the older spelling) or attn_layer_indices."""
    if cfg.get("layer_types"):
        return [i for i, t in enumerate(cfg["layer_types"]) if t in ("attention", "full_attention")]
    return list(cfg.get("attn_layer_indices") or [])


def write_granite_hybrid_metadata(w, cfg):
    """GraniteHybridModel.set_gguf_parameters after GraniteMoeModel's keys:
    the Mamba2 sizes under ssm.* (time_step_rank: the head count), the
    attention layers as the nonzero entries of head_count_kv (replacing the
    scalar), rope.scaling.finetuned as "uses RoPE" (Bamba) and, without
    RoPE, a context length of 2**20 (replacing the config's); then the
    EXTENSION keys."""
    mt, arch = cfg["model_type"], GGUF_ARCH[cfg["model_type"]]
    layers, attn = cfg["num_hidden_layers"], granite_hybrid_attention(cfg)
    w.add_ssm_conv_kernel(cfg["mamba_d_conv"])
    w.add_ssm_state_size(cfg["mamba_d_state"])
    w.add_ssm_group_count(cfg["mamba_n_groups"])
    w.add_ssm_inner_size(cfg["mamba_expand"] * cfg["hidden_size"])
    w.add_ssm_time_step_rank(cfg["mamba_n_heads"])
    w.add_head_count_kv([cfg["num_key_value_heads"] if i in attn else 0 for i in range(layers)])
    use_rope = mt == "bamba"
    w.add_rope_scaling_finetuned(use_rope)
    if not use_rope:
        w.add_context_length(2**20)
        # EXTENSION: the config's max_position_embeddings (archc's default
        # KV-cache length), which llama.cpp replaces.
        w.add_uint32(f"{arch}.max_position_embeddings", cfg["max_position_embeddings"])
    # EXTENSION: HF's chunk size and dt clamp (as for mamba2).
    w.add_uint32(f"{arch}.mamba_chunk_size", cfg.get("mamba_chunk_size", 256))
    limit = [float(x["__float__"]) if isinstance(x, dict) else float(x) for x in cfg.get("time_step_limit") or []]
    if limit:
        w.add_array(f"{arch}.time_step_limit", limit)


def write_lfm2_metadata(w, cfg):
    """LFM2Model.set_gguf_parameters / LFM2MoeModel.set_gguf_parameters
    after TextModel's keys: head_count_kv per layer (0 for the conv layers),
    the conv cache length, the RMS eps (norm_eps), vocab_size; LFM2's
    feed-forward length as Lfm2MLP derives it; LFM2-MoE's expert keys and
    sigmoid gating; then the EXTENSION keys."""
    mt = cfg["model_type"]
    w.add_head_count_kv([cfg["num_key_value_heads"] if t == "full_attention" else 0 for t in cfg["layer_types"]])
    w.add_vocab_size(cfg["vocab_size"])
    w.add_shortconv_l_cache(cfg["conv_L_cache"])
    w.add_layer_norm_rms_eps(cfg["norm_eps"])
    if mt == "lfm2":  # LFM2Model._add_feed_forward_length
        ff = cfg.get("block_ff_dim") or cfg["intermediate_size"]
        if cfg["block_auto_adjust_ff_dim"]:
            ff = int(2 * ff / 3)
            if cfg.get("block_ffn_dim_multiplier") is not None:
                ff = int(cfg["block_ffn_dim_multiplier"] * ff)
            m = cfg["block_multiple_of"]
            ff = m * ((ff + m - 1) // m)
        w.add_feed_forward_length(ff)
        return
    w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
    w.add_leading_dense_block_count(cfg["num_dense_layers"])
    w.add_expert_gating_func(gguf.ExpertGatingFuncType.SIGMOID)
    # EXTENSION: llama.cpp's lfm2moe fixes the scale at 1 and always
    # renormalises; gguf-py has keys for both.
    if cfg.get("routed_scaling_factor", 1.0) != 1.0:
        w.add_expert_weights_scale(cfg["routed_scaling_factor"])
    if not cfg.get("norm_topk_prob", True):
        w.add_expert_weights_norm(False)


def write_jamba_metadata(w, cfg, ftype):
    """JambaModel.set_gguf_parameters (its own keys only): the attention
    layers as the nonzero entries of head_count_kv, the Mamba sizes under
    ssm.*; no expert layer period (llama.cpp finds the routers)."""
    layers, d_model = cfg["num_hidden_layers"], cfg["hidden_size"]
    off, per = cfg["attn_layer_offset"], cfg["attn_layer_period"]
    w.add_block_count(layers)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(d_model)
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv([cfg["num_key_value_heads"] if i >= off and (i - off) % per == 0 else 0 for i in range(layers)])
    w.add_ssm_conv_kernel(cfg.get("mamba_d_conv") or 4)
    w.add_ssm_inner_size(cfg["mamba_expand"] * d_model)
    w.add_ssm_state_size(cfg.get("mamba_d_state") or 16)
    w.add_ssm_time_step_rank(cfg.get("mamba_dt_rank") or -(d_model // -16))
    w.add_layer_norm_rms_eps(cfg.get("layer_norm_epsilon") or cfg.get("rms_norm_eps") or 1e-6)
    w.add_expert_count(cfg["num_experts"])
    w.add_expert_used_count(cfg["num_experts_per_tok"])
    w.add_file_type(ftype)
    write_special_tokens(w, cfg)


def mamba_tensor(mt, cfg, hf, t):
    """MambaModel.modify_tensors / Mamba2Model.modify_tensors on one
    tensor: A_log stored as A = -exp(A_log), Mamba2's A and D as [H, 1],
    its gated norm per group [G, d/G], conv1d squeezed to [C, K]. (Mamba2's
    dt_bias is renamed dt_proj.bias before the name map: ssm_dt.bias.)"""
    if hf.endswith(".conv1d.weight"):
        return t.squeeze()
    if mt in MAMBA2 and (hf.endswith(".A_log") or hf.endswith(".D")):
        t = t.reshape(*t.shape, 1)
    if mt in MAMBA2 and hf.endswith(".norm.weight"):
        groups = cfg.get("n_groups") or cfg.get("mamba_n_groups") or 1
        t = t.reshape(groups, -1)
    if hf.endswith(".A_log"):
        t = neg_exp(t)
    return t


def mamba_tensor_back(hf, data, shape):
    """The inverse of mamba_tensor on a numpy array, as archc's load
    transforms undo it: A_log = log(-A) in float64, rounded to float32
    (log_neg), then the HF shape (reshape)."""
    if hf.endswith(".A_log"):
        data = np.log(-data.astype(np.float64)).astype(np.float32)
    return data.reshape(shape)


def to_gguf(cfg, state):
    """The fixture's tensors as llama.cpp writes them: (GGUF name, HF name,
    float32 array), in HF name order, plus llama 3's rope_freqs."""
    cfg = text_config(cfg)
    mt = model_kind(cfg)
    for alias, key in CONFIG_ALIASES.items():
        if alias in cfg:
            cfg.setdefault(key, cfg[alias])
    if mt in NEMOTRON_H:  # NemotronHModel: len(layers_block_type) layers
        cfg.setdefault("num_hidden_layers", len(nemotron_h_kinds(cfg)))
    arch_enum = {v: k for k, v in MODEL_ARCH_NAMES.items()}.get(GGUF_ARCH[mt]) or TENSORS_AS[GGUF_ARCH[mt]]
    tmap = gguf.get_tensor_name_map(arch_enum, cfg.get("num_hidden_layers") or cfg["num_layers"])
    llama_map = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, cfg.get("num_hidden_layers") or cfg["num_layers"])
    heads = cfg.get("num_attention_heads")
    kv_heads = cfg.get("num_key_value_heads") or heads
    if mt == "rwkv7":
        return rwkv7_tensors(state, tmap)
    if mt == "plamo2":
        return plamo2_tensors(state, tmap)
    out = []
    state = dict(state)
    stacks = {}
    for hf in sorted(state):
        m = EXPERT.match(hf)
        if m:
            stacks.setdefault(f"{m.group(1)}.{m.group(3)}.weight", {})[int(m.group(2))] = state.pop(hf)
    for hf, parts in stacks.items():
        state[hf] = np.stack([parts[e] for e in range(len(parts))])
    for hf in sorted(state):
        t = np.asarray(state[hf], dtype=np.float32)
        if mt in MAMBA1 | MAMBA2 and SSM_PARAM.search(hf):
            t = mamba_tensor(mt, cfg, hf, t)
            gname = hf[: -len(".dt_bias")] + ".dt_proj.bias" if hf.endswith(".dt_bias") else hf
            name = tmap.get_name(gname, try_suffixes=(".weight", ".bias"))
            assert name is not None, f"{mt}: TensorNameMap has no GGUF name for {hf}"
            out.append((name, hf, t.copy()))
            continue
        if mt == "gpt_oss" and ".mlp.experts." in hf:
            out.extend(gpt_oss_experts(hf, t, tmap))
            continue
        if mt in DENSE3 and (got := dense3_tensor(mt, cfg, hf, t, tmap)) is not None:
            out.extend(got)
            continue
        if mt in DEEPSEEK2 and hf.endswith(".kv_b_proj.weight"):  # DeepseekV2Model.modify_tensors
            nope, v = cfg["qk_nope_head_dim"], cfg["v_head_dim"]
            kv_b = t.reshape(heads, nope + v, t.shape[-1])
            k_b, v_b = kv_b[:, :nope], kv_b[:, nope:]
            i = hf.split(".")[2]
            out.append((f"blk.{i}.attn_k_b.weight", hf, k_b.swapaxes(1, 2).copy()))
            out.append((f"blk.{i}.attn_v_b.weight", hf, v_b.copy()))
            continue
        if mt in GRANITE_MOE and hf.endswith(".block_sparse_moe.input_linear.weight"):  # GraniteMoeModel.modify_tensors
            i, half = hf.split(".")[2], t.shape[1] // 2
            out.append((f"blk.{i}.ffn_gate_exps.weight", hf, t[:, :half].copy()))
            out.append((f"blk.{i}.ffn_up_exps.weight", hf, t[:, half:].copy()))
            continue
        if mt in GRANITE_MOE and hf.endswith(".shared_mlp.input_linear.weight"):  # GraniteMoeModel.modify_tensors
            i, half = hf.split(".")[2], t.shape[0] // 2
            sh = "_shexp" if cfg.get("num_local_experts") else ""  # without experts: the dense MLP's names
            out.append((f"blk.{i}.ffn_gate{sh}.weight", hf, t[:half].copy()))
            out.append((f"blk.{i}.ffn_up{sh}.weight", hf, t[half:].copy()))
            continue
        if mt in GRANITE_MOE and not cfg.get("num_local_experts") and hf.endswith(".shared_mlp.output_linear.weight"):
            out.append((f"blk.{hf.split('.')[2]}.ffn_down.weight", hf, t))
            continue
        if mt == "gpt_oss" and hf.endswith(".sinks"):
            out.append((tmap.get_name(hf) + ".weight", hf, t))  # GptOssModel.filter_tensors
            continue
        if mt == "apertus" and ".act_fn." in hf:  # ApertusModel.modify_tensors: per-layer metadata arrays (xielu.*)
            continue
        if mt in NEMOTRON_H:
            out.append(nemotron_h_tensor(cfg, hf, t, tmap))
            continue
        if mt in FALCON_H1:
            out.append(falcon_h1_tensor(cfg, hf, t, tmap))
            continue
        if mt in QWEN_GDN:
            if hf not in unconverted(cfg, state):
                out.extend(qwen_gdn_tensors(cfg, hf, t, tmap, llama_map))
            continue
        if mt in LFM2 and hf.endswith(".conv.conv.weight"):  # LFM2Model.modify_tensors: [C, 1, K] → [C, K]
            t = t.squeeze(1)
        if mt == "step3p5" and hf.endswith(".moe.router_bias"):  # Step35Model.filter_tensors: router_bias.bias
            out.append((tmap.get_name(hf + ".bias", try_suffixes=(".bias",)), hf, t))
            continue
        if mt in ("lfm2_moe", "bailing_moe_v2") and hf.endswith(".expert_bias"):  # LFM2MoeModel, BailingMoeV2Model.filter_tensors: expert_bias.bias
            out.append((tmap.get_name(hf + ".bias", try_suffixes=(".bias",)), hf, t))
            continue
        if mt == "lfm2_moe" and STACKED.match(hf):  # LFM2MoeModel.moe_experts: layers.{bid}.feed_forward.experts.{w}
            out.append((tmap.get_name(hf.removeprefix("model."), try_suffixes=(".weight",)), hf, t))
            continue
        if hf.endswith(".e_score_correction_bias"):  # DeepseekV2Model.modify_tensors: e_score_correction.bias
            hf_as = hf[: -len("_bias")] + ".bias"
            out.append((tmap.get_name(hf_as, try_suffixes=(".bias",)), hf, t))
            continue
        if hf in unconverted(cfg, state):
            continue
        if mt == "falcon" and ".query_key_value." in hf:
            t = falcon_qkv(t, cfg)
        if mt == "openelm" and hf.endswith(".ffn.proj_1.weight"):  # OpenELMModel.modify_tensors: [gate | up]
            i, n = hf.split(".")[2], openelm_ffn_dims(cfg)[int(hf.split(".")[2])]
            out.extend([(f"blk.{i}.ffn_gate.weight", hf, t[:n].copy()), (f"blk.{i}.ffn_up.weight", hf, t[n:].copy())])
            continue
        if mt == "bailing_moe" and BAILING_QKV.search(hf):
            i, q_size, kv_size = hf.split(".")[2], heads * (t.shape[0] // (heads + 2 * kv_heads)), kv_heads * (t.shape[0] // (heads + 2 * kv_heads))
            q, k, v = t[:q_size], t[q_size:q_size + kv_size], t[q_size + kv_size:]
            out.extend([(f"blk.{i}.attn_q.weight", hf, permute(q, heads)), (f"blk.{i}.attn_k.weight", hf, permute(k, kv_heads)),
                        (f"blk.{i}.attn_v.weight", hf, v.copy())])
            continue
        if mt == "internlm2" and INTERNLM2_QKV.search(hf):
            i = hf.split(".")[2]
            q, k, v = internlm2_qkv(t, cfg)
            out.extend([(f"blk.{i}.attn_q.weight", hf, permute(q, heads)), (f"blk.{i}.attn_k.weight", hf, permute(k, kv_heads)),
                        (f"blk.{i}.attn_v.weight", hf, v)])
            continue
        if mt == "bloom":  # BloomModel.modify_tensors: transformer. dropped, query_key_value (and its bias) as all q, k, v
            if ".query_key_value." in hf:
                t = neox_qkv(t, heads)
            name = tmap.get_name(hf.removeprefix("transformer."), try_suffixes=(".weight", ".bias"))
            assert name is not None, f"bloom: TensorNameMap has no GGUF name for {hf}"
            out.append((name, hf, t))
            continue
        if mt in QWEN3VL_MOE and ".mlp.experts." in hf:
            out.extend(qwen3vl_moe_experts(hf, t))
            continue
        # Ministral3Model.modify_tensors: a Mistral3 checkpoint's language_model.* as the text model's;
        # ModelBase.filter_tensors drops "language_model." from Qwen3-VL's names
        lm = hf.removeprefix("language_model.") if mt in ("ministral3", "mistral3") else hf.replace("language_model.", "") if mt in QWEN3VL else hf
        name = tmap.get_name(lm, try_suffixes=(".weight", ".bias"))
        if name is None and mt in DENSE_LAYERS_MOE:  # EXTENSION: a dense layer's MLP, under llama's names
            name = llama_map.get_name(lm, try_suffixes=(".weight", ".bias"))
        assert name is not None, f"{mt}: TensorNameMap has no GGUF name for {hf}"
        if mt == "nemotron-nas" and (".q_proj." in hf or ".k_proj." in hf):  # DeciModel.modify_tensors: the layer's heads
            lh, lkv, _ = deci_layers(cfg)
            t = permute(t, (lh if ".q_proj." in hf else lkv)[int(hf.split(".")[2])])
        if mt in PERMUTE_QK and (".q_proj." in hf or ".k_proj." in hf):
            t = permute(t, heads if ".q_proj." in hf else kv_heads)
        if mt in NORM_PLUS_ONE and hf.endswith("norm.weight"):
            t = t + 1
        if mt == "gpt2" and CONV1D.search(hf):  # GPT2Model.modify_tensors: Conv1D [in, out] → [out, in]
            t = t.T.copy()
        if mt == "gpt_neox" and ".attention.query_key_value." in hf:
            t = neox_qkv(t, heads)  # GPTNeoXModel.modify_tensors: per-head [q | k | v] → [q | k | v]
        out.append((name, hf, t))
        if mt == "gpt2" and name == "token_embd.weight":  # GPT2Model writes token_embd again as output (tied)
            out.append(("output.weight", None, t))
    full = rope_params(cfg)
    if mt in ("phi3", "minicpm3", "phimoe") and full.get("rope_type") == "longrope":
        out.append(("rope_factors_long.weight", None, np.array(full["long_factor"], dtype=np.float32)))
        out.append(("rope_factors_short.weight", None, np.array(full["short_factor"], dtype=np.float32)))
    if mt in ROPE_FREQS and full.get("rope_type") == "llama3":
        dim = cfg.get("head_dim") or cfg["hidden_size"] // heads
        out.append(("rope_freqs.weight", None, llama3_rope_factors(full, dim)))
    if mt == "gemma4_text":
        out.append(("rope_freqs.weight", None, gemma4_rope_freqs(cfg)))
    if mt == "step3p5" and (cfg.get("rope_scaling") or {}).get("rope_type") == "llama3":
        out.append(("rope_freqs.weight", None, step35_rope_freqs(cfg)))
    if mt == "glm4_moe":
        out.extend(mtp_layers(cfg, out))
    if mt in QWEN_GDN:
        out.extend(qwen_mtp_layers(cfg, out))
    return out


# issue 30: RWKV-7 and PLaMo 2 (mlx-lm oracles).

RWKV7_LERP = ("r", "w", "k", "v", "a", "g")  # Rwkv7Model's stacking order of x_r ... x_g
# Plamo2Model: the offset added (+=, float32) to a norm's weight, by name ending
PLAMO2_NORM_OFFSET = ((".pre_mixer_norm.weight", 1.0), (".post_mixer_norm.weight", 1.0 / 5), (".pre_mlp_norm.weight", 1.0),
                      (".post_mlp_norm.weight", 1.0 / (5**1.5)), (".norm.weight", 1.0))


def rwkv7_tensors(state, tmap):
    """Rwkv7Model.filter_tensors and modify_tensors (fla-hub layout): the
    mixes stacked (HF name: the tuple of six), layer 0's a0-a2 copied as
    v0-v2 (HF name None)."""
    out, lerp = [], {}
    for hf in sorted(state):
        t = np.asarray(state[hf], dtype=np.float32)
        name = hf.replace("blocks", "layers").replace("ffn", "feed_forward")
        name = name.replace("self_attn", "attention").replace("attn", "attention").replace("time_mixer.", "")
        name = name.replace("feed_forward_norm", "ln2").replace("g_norm", "ln_x")
        name = name.replace("_lora.lora.0.weight", "1.weight").replace("_lora.lora.2.weight", "2.weight").replace("_lora.lora.2.bias", "0.weight")
        bid = next((int(p) for p in name.split(".") if p.isdecimal()), None)
        if "attention.v" in name and "value" not in (tmap.get_name(name, try_suffixes=(".weight", ".bias")) or "") and bid == 0:
            continue
        if bid is not None and "attention.x_" in name:
            lerp.setdefault(bid, {})[name.rsplit("x_", 1)[1]] = (hf, t)
            if all(k in lerp[bid] for k in RWKV7_LERP):
                parts = [lerp[bid][k] for k in RWKV7_LERP]
                out.append((f"blk.{bid}.time_mix_lerp_fused.weight", tuple(h for h, _ in parts), np.stack([a for _, a in parts])))
            continue
        t = t.squeeze()
        new = tmap.get_name(name, try_suffixes=(".weight", ".bias"))
        assert new is not None, f"rwkv7: no GGUF name for {hf}"
        new += "" if new.endswith((".weight", ".bias")) else ".weight"
        if "r_k" in new:
            t = t.flatten()
        if bid == 0 and "time_mix_a" in new:
            out.append((new.replace("time_mix_a", "time_mix_v"), None, t))
        out.append((new, hf, t))
    return out


PLAMO2_RENAME = {".dt_bias": ".dt_proj.bias", ".dt_norm_weight": ".dt_norm.weight", ".B_norm_weight": ".B_norm.weight",
                 ".C_norm_weight": ".C_norm.weight", ".k_weight": ".k.weight", ".q_weight": ".q.weight"}


def plamo2_tensors(state, tmap):
    """Plamo2Model.modify_tensors: A as -exp(A_log), the renames, conv1d
    squeezed, the norms' offsets added; then TextModel's name map."""
    out = []
    for hf in sorted(state):
        t, name = np.asarray(state[hf], dtype=np.float32), hf
        sfx = next((k for k in PLAMO2_RENAME if hf.endswith(k)), None)
        if hf.endswith(".A_log"):
            t = neg_exp(t)
        elif sfx:
            name = hf[: -len(sfx)] + PLAMO2_RENAME[sfx]
        elif hf.endswith(".conv1d.weight"):
            t = t.squeeze()
        elif (c := plamo2_offset(hf)) is not None:
            t = t + np.float32(c)
        new = tmap.get_name(name, try_suffixes=(".weight", ".bias"))
        assert new is not None, f"plamo2: no GGUF name for {hf}"
        out.append((new, hf, t))
    return out


def plamo2_offset(hf):
    return next((c for sfx, c in PLAMO2_NORM_OFFSET if hf.endswith(sfx)), None)


def rwkv7_plamo2_back(mt, hf, data, shapes):
    """{HF name: array} of one rwkv7 / plamo2 GGUF tensor, transforms undone."""
    if isinstance(hf, tuple):  # time_mix_lerp_fused
        return {h: np.ascontiguousarray(data[k].reshape(shapes[h])) for k, h in enumerate(hf)}
    if mt == "plamo2" and (c := plamo2_offset(hf)) is not None:
        data = data - np.float32(c)
    if hf.endswith(".A_log"):
        data = np.log(-data.astype(np.float64)).astype(np.float32)
    return {hf: np.ascontiguousarray(data.reshape(shapes[hf]))}


def write_rwkv7_metadata(w, cfg, ftype):
    """Rwkv7Model.set_gguf_parameters (fla-hub config); config.json's special tokens."""
    hidden = cfg["hidden_size"]

    def rank(key, exponent, multiplier):  # Rwkv7Model.calc_lora_rank for None
        return cfg[key] if cfg.get(key) is not None else max(1, round(hidden ** exponent * multiplier / 32)) * 32

    w.add_context_length(1048576)
    w.add_embedding_length(hidden)
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_layer_norm_eps(cfg["norm_eps"])
    w.add_wkv_head_size(cfg["head_dim"])
    w.add_decay_lora_rank(rank("decay_low_rank_dim", 0.5, 1.8))
    w.add_iclr_lora_rank(rank("a_low_rank_dim", 0.5, 1.8))
    w.add_value_residual_mix_lora_rank(rank("v_low_rank_dim", 0.5, 1.3))
    w.add_gate_lora_rank(rank("gate_low_rank_dim", 0.8, 0.6))
    w.add_feed_forward_length(cfg["intermediate_size"] if cfg.get("intermediate_size") is not None else 4 * hidden)
    w.add_file_type(ftype)
    w.add_head_count(0)
    write_special_tokens(w, cfg)


def write_plamo2_metadata(w, cfg, ftype):
    """Plamo2Model.set_gguf_parameters (head counts 0 on is_mamba layers), EXTENSION keys."""
    arch, n, step = GGUF_ARCH["plamo2"], cfg["num_hidden_layers"], cfg.get("mamba_step", 2)
    w.add_vocab_size(cfg["vocab_size"])
    if cfg.get("mamba_enabled", True):
        mamba = [(i != n - 1) if n <= step // 2 else (i % step) != (step // 2) for i in range(n)]
        w.add_head_count_kv([0 if m else cfg.get("num_key_value_heads", 4) for m in mamba])
        w.add_head_count([0 if m else cfg.get("num_attention_heads", 32) for m in mamba])
    w.add_context_length(cfg.get("max_position_embeddings", 2048))
    w.add_embedding_length(cfg.get("hidden_size", 4096))
    w.add_key_length(cfg.get("hidden_size_per_head", 128))
    w.add_value_length(cfg.get("hidden_size_per_head", 128))
    w.add_block_count(n)
    w.add_layer_norm_rms_eps(cfg.get("rms_norm_eps", 1e-06))
    w.add_rope_freq_base(rope_params(cfg).get("rope_theta", 10000))
    w.add_ssm_state_size(cfg.get("mamba_d_state", 64))
    w.add_ssm_conv_kernel(cfg.get("mamba_d_conv", 4))
    w.add_ssm_time_step_rank(cfg.get("mamba_num_heads", 64))
    w.add_ssm_inner_size(cfg.get("mamba_num_heads", 64) * cfg.get("hidden_size_per_head", 128))
    w.add_ssm_group_count(0)
    w.add_feed_forward_length(cfg.get("intermediate_size", 13312))
    w.add_file_type(ftype)
    write_special_tokens(w, cfg)
    # EXTENSION: llama.cpp's scan is not chunked, its attention not windowed.
    if cfg.get("mamba_chunk_size", 256) != 256:
        w.add_uint32(f"{arch}.mamba_chunk_size", cfg["mamba_chunk_size"])
    if cfg.get("attention_window_size", 2048) != 2048:
        w.add_sliding_window(cfg["attention_window_size"])
    if cfg.get("full_attention_idx"):
        w.add_array(f"{arch}.full_attention_idx", list(cfg["full_attention_idx"]))


def mtp_layers(cfg, out):
    """The multi-token-prediction layers a real GLM-4.5 checkpoint has
    after its num_hidden_layers decoder layers (transformers does not load
    them, so the fixture has none), as Glm4MoeModel writes them: extra
    blocks blk.L, ... with a decoder layer's tensors and the nextn.*
    tensors. Here the last layer's tensors again and deterministic random
    nextn tensors, with no HF name: archc must read the file without them
    (driver.Plan.Unread)."""
    layers, hidden = cfg["num_hidden_layers"], cfg["hidden_size"]
    last = f"blk.{layers - 1}."
    extra = []
    for k in range(cfg.get("num_nextn_predict_layers") or 0):
        extra += nextn_block(out, last, f"blk.{layers + k}.", hidden, 4242, k)
    return extra


def nextn_block(out, src, blk, hidden, seed, k):
    """The tensors of one MTP (nextn) block blk: those of the layer whose
    names start with src, renamed, and the nextn projection (random,
    nextn_eh_proj(seed, k)) and norms (ones)."""
    return ([(blk + name[len(src):], None, data) for name, _, data in out if name.startswith(src)] +
            [(blk + "nextn.eh_proj.weight", None, nextn_eh_proj(seed, k, (hidden, 2 * hidden))),
             (blk + "nextn.enorm.weight", None, np.ones(hidden, dtype=np.float32)),
             (blk + "nextn.hnorm.weight", None, np.ones(hidden, dtype=np.float32)),
             (blk + "nextn.shared_head_norm.weight", None, np.ones(hidden, dtype=np.float32))])


# issue 18 (h-gguf2): the gated DeltaNet families (Qwen3NextModel,
# Qwen3_5TextModel, Qwen3_5MoeTextModel).

def text_config(cfg):
    """A copy of cfg; for a multimodal wrapper whose converter reads its
    text_config (Qwen3_5TextModel: ModelBase.load_hparams merges it in),
    the text config's fields over the wrapper's."""
    cfg = dict(cfg)
    if cfg.get("model_type") in QWEN_GDN and isinstance(cfg.get("text_config"), dict):
        cfg.update(cfg["text_config"])
    if cfg.get("model_type") in ("qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe") and isinstance(cfg.get("text_config"), dict):
        cfg.update(cfg["text_config"])  # TextModel.__init__: text_config at the root (model_type qwen2_vl_text, qwen2_5_vl_text)
    if cfg.get("model_type") == "mistral3" and isinstance(cfg.get("text_config"), dict):
        # Mistral3Model's Ministral3Model: hparams merged with text_config;
        # its ministral3 keys only for a ministral3 text model ("mistral3" here
        # stands for a mistral one: LlamaModel's keys under mistral3)
        text = cfg["text_config"]
        cfg.update(text)
        cfg["model_type"] = "ministral3" if text.get("model_type") == "ministral3" else "mistral3"
    return cfg


def unconverted(cfg, state):
    """The checkpoint tensors the converter writes to no text-model file:
    a Qwen3.5 wrapper's vision tower (its mmproj file)."""
    if cfg.get("model_type") in QWEN_GDN:
        return {hf for hf in state if hf.startswith("model.visual.")}
    if cfg.get("model_type") in {"qwen2_vl", "qwen2_5_vl", "qwen2_vl_text", "qwen2_5_vl_text"} | QWEN3VL:  # TextModel.filter_tensors skips "visual." (the mmproj's)
        return {hf for hf in state if hf.startswith(("visual.", "model.visual."))}
    if isinstance(cfg.get("vision_config"), dict) and text_config(cfg)["model_type"] in ("ministral3", "mistral3"):
        return {hf for hf in state if hf.startswith(("vision_tower.", "multi_modal_projector."))}  # Ministral3Model skips them
    return set()


def qwen_gdn_sizes(cfg):
    """(key heads, value heads per key head, d_k, d_v)."""
    k, v = cfg["linear_num_key_heads"], cfg["linear_num_value_heads"]
    return k, v // k, cfg["linear_key_head_dim"], cfg["linear_value_head_dim"]


def tile_v_heads(t, dim, k, r, hd):
    """_LinearAttentionVReorderBase._reorder_v_heads: value heads grouped by
    key head [k, r, hd] along dim put in tiled order [r, k, hd]."""
    shape = list(t.shape)
    t = t.reshape(*shape[:dim], k, r, hd, *shape[dim + 1:])
    return t.swapaxes(dim, dim + 1).copy().reshape(shape)


def untile_v_heads(a, dim, k, r, hd):
    """The inverse of tile_v_heads, on a numpy array."""
    shape = list(a.shape)
    a = a.reshape(*shape[:dim], r, k, hd, *shape[dim + 1:])
    return np.ascontiguousarray(np.swapaxes(a, dim, dim + 1).reshape(shape))


def write_qwen_gdn_metadata(w, cfg):
    """Qwen3NextModel.set_gguf_parameters after Qwen2MoeModel's keys (and
    _QwenMtpMixin's): the gated DeltaNet's sizes under ssm.* (state_size
    d_k, group_count the key heads, time_step_rank the value heads,
    inner_size d_v · value heads), the recurrent layers (the MTP blocks
    not), the full-attention interval, the rotary width, the MTP block
    count; Qwen3.5's M-RoPE sections (_Qwen35MRopeMixin)."""
    mt, arch = cfg["model_type"], GGUF_ARCH[cfg["model_type"]]
    layers, mtp = cfg["num_hidden_layers"], qwen_mtp_count(cfg)
    w.add_ssm_conv_kernel(cfg["linear_conv_kernel_dim"])
    w.add_ssm_state_size(cfg["linear_key_head_dim"])
    w.add_ssm_group_count(cfg["linear_num_key_heads"])
    w.add_ssm_time_step_rank(cfg["linear_num_value_heads"])
    w.add_ssm_inner_size(cfg["linear_value_head_dim"] * cfg["linear_num_value_heads"])
    if cfg.get("layer_types") is not None:
        w.add_array(f"{arch}.attention.recurrent_layers", [t == "linear_attention" for t in cfg["layer_types"]] + [False] * mtp)
    w.add_full_attention_interval(cfg.get("full_attention_interval", 4))
    rp = rope_params(cfg)
    w.add_rope_dimension_count(int((cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]) * rp.get("partial_rotary_factor", 0.25)))
    w.add_block_count(layers + mtp)  # the MTP layers are extra blocks
    if mtp > 0:
        w.add_nextn_predict_layers(mtp)
    if mt in QWEN35 and "mrope_section" not in rp:
        w.add_rope_dimension_sections([11, 11, 10, 0])


def qwen_mtp_count(cfg):
    """The multi-token-prediction layers a published checkpoint has
    (mtp_num_hidden_layers; Qwen3-Next's config has no such key, its
    checkpoint one layer); transformers loads none, so the fixture has none.
    An explicit 0 (a checkpoint without MTP) is none, as the converter's
    --no-mtp writes it: no extra block, no nextn_predict_layers."""
    n = cfg.get("mtp_num_hidden_layers")
    return 1 if n is None else n


def qwen_gdn_tensors(cfg, hf, t, tmap, llama_map):
    """Qwen3NextModel.modify_tensors (after Qwen3.5's value-head reorder,
    _LinearAttentionVReorderBase.modify_tensors) on one checkpoint tensor:
    [(GGUF name, HF name, array)]. A_log as -exp(A_log), dt_bias as
    dt_proj.bias, conv1d squeezed, RMSNorm weights as 1 + w (not the gated
    norm's), in_proj_qkvz split into attn_qkv (all q, all k, all v) and
    attn_gate (all z); Qwen3.5: value heads in tiled order in in_proj_qkv's
    v rows, in_proj_z, in_proj_b/a, A_log, dt_bias, conv1d's v channels and
    out_proj's columns. A wrapper's model.language_model is model."""
    mt = cfg["model_type"]
    name = hf.replace("model.language_model.", "model.", 1)
    k, r, dk, dv = qwen_gdn_sizes(cfg)
    if mt in QWEN35 and r > 1 and ".linear_attn." in name:
        if ".in_proj_qkv." in name:
            t = np.concatenate([t[:2 * k * dk], tile_v_heads(t[2 * k * dk:], 0, k, r, dv)])
        elif ".in_proj_z." in name:
            t = tile_v_heads(t, 0, k, r, dv)
        elif ".in_proj_b." in name or ".in_proj_a." in name or name.endswith((".A_log", ".dt_bias")):
            t = tile_v_heads(t, 0, k, r, 1)
        elif ".conv1d." in name:
            t = t.squeeze()
            t = np.concatenate([t[:2 * k * dk], tile_v_heads(t[2 * k * dk:], 0, k, r, dv)])
        elif ".out_proj." in name:
            t = tile_v_heads(t, 1, k, r, dv)
    if name.endswith(".A_log"):
        t = neg_exp(t)
    elif name.endswith(".dt_bias"):
        name = name[: -len(".dt_bias")] + ".dt_proj.bias"
    elif ".conv1d." in name:
        t = t.squeeze()
    elif name.endswith("norm.weight") and not name.endswith("linear_attn.norm.weight"):
        t = t + 1
    i = name.split(".")[2] if name.startswith("model.layers.") else None
    if name.endswith(".in_proj_qkvz.weight"):
        rv = r * dv
        x = t.T.reshape(-1, k, 2 * dk + 2 * rv)
        q, kk, v, z = np.split(x, np.cumsum([dk, dk, rv]), axis=-1)
        h = x.shape[0]
        qkv = np.concatenate([q.reshape(h, -1), kk.reshape(h, -1), v.reshape(h, -1)], axis=-1).T
        return [(f"blk.{i}.attn_qkv.weight", hf, qkv.copy()),
                (f"blk.{i}.attn_gate.weight", hf, z.reshape(h, -1).T.copy())]
    gname = tmap.get_name(name, try_suffixes=(".weight", ".bias"))
    if gname is None:  # EXTENSION: a dense layer's MLP (mlp_only_layers), under llama's names
        gname = llama_map.get_name(name, try_suffixes=(".weight", ".bias"))
    assert gname is not None, f"{mt}: TensorNameMap has no GGUF name for {hf}"
    return [(gname, hf, t.copy())]


def qwen_gdn_back(cfg, hf, data, shape):
    """The inverse of qwen_gdn_tensors for one GGUF tensor (not
    in_proj_qkvz: qwen_qkvz_back), on a numpy array in HF shape."""
    mt = cfg["model_type"]
    k, r, dk, dv = qwen_gdn_sizes(cfg)
    if hf.endswith(".A_log"):
        data = np.log(-data.astype(np.float64)).astype(np.float32)
    elif hf.endswith("norm.weight") and not hf.endswith("linear_attn.norm.weight"):
        data = data - np.float32(1)
    data = data.reshape(shape)
    if mt in QWEN35 and r > 1 and ".linear_attn." in hf:
        if ".in_proj_qkv." in hf or ".conv1d." in hf:
            data = np.concatenate([data[:2 * k * dk], untile_v_heads(data[2 * k * dk:], 0, k, r, dv)])
        elif ".in_proj_z." in hf:
            data = untile_v_heads(data, 0, k, r, dv)
        elif ".in_proj_b." in hf or ".in_proj_a." in hf or hf.endswith((".A_log", ".dt_bias")):
            data = untile_v_heads(data, 0, k, r, 1)
        elif ".out_proj." in hf:
            data = untile_v_heads(data, 1, k, r, dv)
    return np.ascontiguousarray(data)


def qwen_qkvz_back(cfg, parts):
    """in_proj_qkvz from attn_qkv and attn_gate: per key head [q | k | v | z]."""
    k, r, dk, dv = qwen_gdn_sizes(cfg)
    by = {n.split(".")[2]: a for n, a in parts.items()}
    qkv, z = by["attn_qkv"], by["attn_gate"]
    h = qkv.shape[-1]
    q, kk, v = qkv[:k * dk], qkv[k * dk:2 * k * dk], qkv[2 * k * dk:]
    heads = [np.concatenate([q[j * dk:(j + 1) * dk], kk[j * dk:(j + 1) * dk], v[j * r * dv:(j + 1) * r * dv], z[j * r * dv:(j + 1) * r * dv]]) for j in range(k)]
    return np.ascontiguousarray(np.concatenate(heads).reshape(-1, h))


def qwen_mtp_layers(cfg, out):
    """The multi-token-prediction layers a published Qwen3-Next / Qwen3.5
    checkpoint has (mtp.*; transformers does not load them, so the fixture
    has none), as _QwenMtpMixin writes them: extra blocks blk.L, ... with a
    full-attention decoder layer's tensors and the nextn.* tensors
    (mtp.fc as eh_proj, its norms). Here the last full-attention layer's
    tensors again and deterministic random nextn tensors, with no HF name:
    archc must read the file without them (driver.Plan.Unread)."""
    layers, hidden = cfg["num_hidden_layers"], cfg["hidden_size"]
    types = cfg.get("layer_types") or ["full_attention" if (i + 1) % cfg.get("full_attention_interval", 4) == 0 else "linear_attention" for i in range(layers)]
    full = f"blk.{max(i for i, t in enumerate(types) if t == 'full_attention')}."
    extra = []
    for j in range(qwen_mtp_count(cfg)):
        extra += nextn_block(out, full, f"blk.{layers + j}.", hidden, 4243, j)
    return extra


# issue 18 (h-gguf2): Nemotron-H (NemotronHModel).

def nemotron_h_kinds(cfg):
    """Each layer's kind (M Mamba2, * attention, - MLP, E MoE) from
    hybrid_override_pattern or layers_block_type, as NemotronHModel reads
    them."""
    pattern = cfg.get("hybrid_override_pattern") or cfg.get("layers_block_type")
    if isinstance(pattern, str):
        return list(pattern)
    names = {"mamba": "M", "linear_attention": "M", "attention": "*", "full_attention": "*", "mlp": "-", "moe": "E"}
    return [names[k] for k in pattern]


def write_nemotron_h_metadata(w, cfg, ftype):
    """NemotronHModel.set_gguf_parameters (for nemotron_h_moe) over
    GraniteHybridModel's and its parents' keys, as they stand after the
    overrides: TextModel's (layer_norm_epsilon as the LayerNorm eps, the
    expert groups), LlamaModel's vocab size and rotary width, the Mamba2
    sizes under ssm.* (inner size mamba_num_heads · mamba_head_dim,
    time_step_rank the head count), the attention layers as the nonzero
    entries of head_count_kv, no RoPE (rope.scaling.finetuned false, context
    2**20), feed_forward_length per layer (moe_intermediate_size on the MoE
    layers, 0 elsewhere), the expert keys, the latent size; then the
    EXTENSION keys."""
    arch = GGUF_ARCH[cfg["model_type"]]
    kinds = nemotron_h_kinds(cfg)
    layers = len(kinds)
    w.add_block_count(layers)
    w.add_context_length(2**20)
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length([cfg["moe_intermediate_size"] if k == "E" else 0 for k in kinds])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv([cfg["num_key_value_heads"] if k == "*" else 0 for k in kinds])
    w.add_layer_norm_eps(cfg["layer_norm_epsilon"])
    w.add_expert_count(cfg["n_routed_experts"])
    w.add_expert_used_count(cfg["num_experts_per_tok"])
    w.add_expert_group_count(cfg["n_group"])
    w.add_expert_group_used_count(cfg["topk_group"])
    w.add_key_length(cfg["head_dim"])
    w.add_value_length(cfg["head_dim"])
    w.add_file_type(ftype)
    w.add_vocab_size(cfg["vocab_size"])
    w.add_rope_dimension_count(cfg["head_dim"])
    w.add_ssm_conv_kernel(cfg["conv_kernel"])
    w.add_ssm_state_size(cfg["ssm_state_size"])
    w.add_ssm_group_count(cfg["n_groups"])
    w.add_ssm_inner_size(cfg["mamba_num_heads"] * cfg["mamba_head_dim"])
    w.add_ssm_time_step_rank(cfg["mamba_num_heads"])
    w.add_rope_scaling_finetuned(False)
    w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
    w.add_expert_shared_feed_forward_length(cfg["moe_shared_expert_intermediate_size"])
    w.add_expert_shared_count(cfg["n_shared_experts"])
    w.add_expert_weights_norm(cfg["norm_topk_prob"])
    w.add_expert_weights_scale(cfg["routed_scaling_factor"])
    if cfg.get("moe_latent_size") is not None:
        w.add_moe_latent_size(cfg["moe_latent_size"])
    write_special_tokens(w, cfg)

    # EXTENSION: what llama.cpp's format does not carry for this fixture.
    # HF's chunk size (as for mamba2) and the config's
    # max_position_embeddings (llama.cpp replaces it).
    w.add_uint32(f"{arch}.chunk_size", cfg.get("chunk_size", 128))
    w.add_uint32(f"{arch}.max_position_embeddings", cfg["max_position_embeddings"])
    if cfg.get("time_step_min", 0.001) != 0.001:  # HF clamps dt below in prefill; llama.cpp does not
        w.add_float32(f"{arch}.time_step_min", cfg["time_step_min"])
    if "-" in kinds:
        # llama.cpp's nemotron_h_moe has no dense MLP layers (an MLP layer
        # there is a MoE layer; with feed_forward_length 0 it reads as
        # Mamba2): which layers are, and their width.
        w.add_array(f"{arch}.mlp_layers", [i for i, k in enumerate(kinds) if k == "-"])
        w.add_uint32(f"{arch}.intermediate_size", cfg["intermediate_size"])


def nemotron_h_tensor(cfg, hf, t, tmap):
    """NemotronHModel.modify_tensors on one checkpoint tensor (experts
    stacked): (GGUF name, HF name, array). Mamba2's A as -exp(A_log) and A,
    D [H, 1], the gated norm [groups, d/groups], conv1d squeezed, dt_bias
    as ssm_dt.bias, e_score_correction_bias as exp_probs_b.bias, q/k rows
    permuted (LlamaModel.modify_tensors, through GraniteMoeModel)."""
    i = hf.split(".")[2] if hf.startswith("backbone.layers.") else None
    if SSM_PARAM.search(hf):
        if hf.endswith(".conv1d.weight"):
            t = t.squeeze()
        if hf.endswith((".A_log", ".D")):
            t = t.reshape(-1, 1)
        if hf.endswith(".norm.weight"):
            t = t.reshape(cfg["n_groups"], -1)
        if hf.endswith(".A_log"):
            t = neg_exp(t)
    if hf.endswith(".dt_bias"):
        return (f"blk.{i}.ssm_dt.bias", hf, t)
    if hf.endswith(".gate.e_score_correction_bias"):
        return (f"blk.{i}.exp_probs_b.bias", hf, t)
    m = STACKED.match(hf)
    if m and t.ndim == 3:
        return (f"blk.{i}.ffn_{m.group(2).removesuffix('_proj')}_exps.weight", hf, t)
    if ".q_proj." in hf or ".k_proj." in hf:
        t = permute(t, cfg["num_attention_heads"] if ".q_proj." in hf else cfg["num_key_value_heads"])
    name = tmap.get_name(hf, try_suffixes=(".weight", ".bias"))
    assert name is not None, f"nemotron_h: TensorNameMap has no GGUF name for {hf}"
    return (name, hf, t.copy())


# issue 18 (h-gguf2): Falcon-H1 (FalconH1Model).

def write_falcon_h1_metadata(w, cfg, ftype):
    """FalconH1Model.set_gguf_parameters over Mamba2Model's, as they stand
    after the overrides: the Mamba2 sizes under ssm.* (inner size
    mamba_d_ssm, time_step_rank mamba_d_ssm / mamba_d_head), the RMS eps,
    vocab size, context length, feed-forward length, head counts, head_dim
    as key/value length, rope base; no multiplier (folded into the
    weights, falcon_h1_tensor); then the EXTENSION keys."""
    arch = GGUF_ARCH[cfg["model_type"]]
    d_ssm = cfg["mamba_d_ssm"]
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_ssm_conv_kernel(cfg["mamba_d_conv"])
    w.add_ssm_inner_size(d_ssm)
    w.add_ssm_state_size(cfg["mamba_d_state"])
    w.add_ssm_time_step_rank(d_ssm // cfg["mamba_d_head"])
    w.add_ssm_group_count(cfg["mamba_n_groups"])
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_file_type(ftype)
    w.add_vocab_size(cfg["vocab_size"])
    w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_key_length(cfg["head_dim"])
    w.add_value_length(cfg["head_dim"])
    w.add_rope_freq_base(rope_params(cfg)["rope_theta"])
    write_special_tokens(w, cfg)

    # EXTENSION: HF's chunk size and dt clamp (as for mamba2, under the
    # keys granitehybrid's use); the gated norm before the gate (llama.cpp
    # always normalizes after it).
    w.add_uint32(f"{arch}.mamba_chunk_size", cfg.get("mamba_chunk_size", 256))
    limit = [float(x["__float__"]) if isinstance(x, dict) else float(x) for x in cfg.get("time_step_limit") or []]
    if limit:
        w.add_array(f"{arch}.time_step_limit", limit)
    if cfg.get("mamba_rms_norm") and cfg.get("mamba_norm_before_gate", True):
        w.add_bool(f"{arch}.mamba_norm_before_gate", True)


def falcon_h1_scale(cfg, hf):
    """The multiplier FalconH1Model.modify_tensors folds into checkpoint
    tensor hf (tested on its name in this order, weights and biases alike):
    a number, in_proj's per-row vector, or None."""
    m = cfg
    if "down_proj" in hf:
        return m["mlp_multipliers"][1]
    if "gate_proj" in hf:
        return m["mlp_multipliers"][0]
    if "k_proj" in hf:
        return m["key_multiplier"] * m["attention_in_multiplier"]
    if "q_proj" in hf or "v_proj" in hf:
        return m["attention_in_multiplier"]
    if "o_proj" in hf:
        return m["attention_out_multiplier"]
    if "out_proj" in hf:
        return m["ssm_out_multiplier"]
    if "in_proj" in hf:  # ssm_in, then each segment of [z | x | B | C | dt]
        d, gs = m["mamba_d_ssm"], m["mamba_n_groups"] * m["mamba_d_state"]
        z, x, b, c, dt = m["ssm_multipliers"]
        return ("in_proj", d, gs, [z, x, b, c, dt])
    if "lm_head" in hf:
        return m["lm_head_multiplier"]
    if "embed_tokens" in hf:
        return m["embedding_multiplier"]
    return None


def falcon_h1_tensor(cfg, hf, t, tmap):
    """FalconH1Model.modify_tensors on one checkpoint tensor: Mamba2Model's
    changes (conv1d squeezed, A and D [H, 1], A as -exp(A_log), dt_bias as
    ssm_dt.bias), the gated norm [groups, d/groups], and every multiplier
    folded in (in float32, as torch multiplies them there: numpy 2 casts a
    Python float to the array's float32 too)."""
    if SSM_PARAM.search(hf):
        if hf.endswith(".conv1d.weight"):
            t = t.squeeze()
        if hf.endswith((".A_log", ".D")):
            t = t.reshape(*t.shape, 1)
        if hf.endswith(".norm.weight"):
            t = t.reshape(cfg["mamba_n_groups"], -1)
        if hf.endswith(".A_log"):
            t = neg_exp(t)
    scale = falcon_h1_scale(cfg, hf)
    if isinstance(scale, tuple):
        _, d, gs, (z, x, b, c, dt) = scale
        assert t.ndim == 2, "FalconH1Model scales in_proj's rows as tensor[:d, :]: a 1-D in_proj bias does not convert"
        t = t * cfg["ssm_in_multiplier"]
        t[:d, :] *= z
        t[d:2 * d, :] *= x
        t[2 * d:2 * d + gs, :] *= b
        t[2 * d + gs:2 * d + 2 * gs, :] *= c
        t[2 * d + 2 * gs:, :] *= dt
    elif scale is not None:
        t = t * scale
    name = tmap.get_name(hf[: -len(".dt_bias")] + ".dt_proj.bias" if hf.endswith(".dt_bias") else hf, try_suffixes=(".weight", ".bias"))
    assert name is not None, f"falcon_h1: TensorNameMap has no GGUF name for {hf}"
    return (name, hf, t.copy())


def falcon_h1_back(cfg, hf, data, shape):
    """The HF values a folded tensor stands for: its multiplier divided out
    (float32; what the Q8_0 oracle computes with)."""
    scale = falcon_h1_scale(cfg, hf)
    if isinstance(scale, tuple):
        _, d, gs, (z, x, b, c, dt) = scale
        rows = np.concatenate([np.full(d, z), np.full(d, x), np.full(gs, b), np.full(gs, c), np.full(data.shape[0] - 2 * d - 2 * gs, dt)])
        return (data / np.float32(cfg["ssm_in_multiplier"]) / rows.astype(np.float32)[:, None]).astype(np.float32)
    if scale is not None:
        return (data / np.float32(scale)).astype(np.float32)
    return data


def neox_qkv(t, heads):
    """GPTNeoXModel.modify_tensors: query_key_value's rows, per head
    [heads, 3, head_dim], regrouped as [3, heads, head_dim]."""
    return t.reshape(heads, 3, -1, *t.shape[1:]).swapaxes(0, 1).reshape(t.shape).copy()


def neox_qkv_back(a, heads):
    """The inverse of neox_qkv, on a numpy array."""
    return np.ascontiguousarray(a.reshape(3, heads, -1, *a.shape[1:]).swapaxes(0, 1).reshape(a.shape))


def gpt_oss_experts(hf, t, tmap):
    """GptOssModel.modify_tensors on the stacked experts (gguf-py 0.19: gate
    and up as separate tensors): gate_up_proj [E, H, 2I] transposed and split
    into its even (gate) and odd (up) rows, ffn_gate_exps / ffn_up_exps
    [E, I, H]; their bias likewise; down_proj [E, I, H] transposed,
    ffn_down_exps [E, H, I]. Every part keeps the HF name it comes from."""
    prefix = hf[: hf.index(".mlp.experts.")]
    base = lambda proj: tmap.get_name(prefix + ".mlp.experts." + proj, try_suffixes=(".weight",))
    if hf.endswith(".gate_up_proj"):
        t = t.swapaxes(-1, -2)
        return [(base("gate_proj") + ".weight", hf, t[:, ::2, :].copy()),
                (base("up_proj") + ".weight", hf, t[:, 1::2, :].copy())]
    if hf.endswith(".gate_up_proj_bias"):
        return [(base("gate_proj") + ".bias", hf, t[..., ::2].copy()),
                (base("up_proj") + ".bias", hf, t[..., 1::2].copy())]
    if hf.endswith(".down_proj"):
        return [(base("down_proj") + ".weight", hf, t.swapaxes(-1, -2).copy())]
    assert hf.endswith(".down_proj_bias"), hf
    return [(base("down_proj") + ".bias", hf, t)]


def gpt_oss_experts_back(parts):
    """The inverse of gpt_oss_experts: {GGUF name: array} of one HF tensor's
    parts → the HF array."""
    by = {n.split(".")[2] + "." + n.split(".")[3]: a for n, a in parts.items()}
    if "ffn_down_exps.weight" in by:
        return by["ffn_down_exps.weight"].swapaxes(-1, -2)
    if "ffn_down_exps.bias" in by:
        return by["ffn_down_exps.bias"]
    kind = "weight" if "ffn_gate_exps.weight" in by else "bias"
    g, u = by["ffn_gate_exps." + kind], by["ffn_up_exps." + kind]
    out = np.empty(g.shape[:-1] + (2 * g.shape[-1],) if kind == "bias" else (g.shape[0], 2 * g.shape[1], g.shape[2]), np.float32)
    if kind == "bias":
        out[..., ::2], out[..., 1::2] = g, u
        return out
    out[:, ::2, :], out[:, 1::2, :] = g, u
    return out.swapaxes(-1, -2)


def dense3_hparams(cfg):
    """The hparams the DENSE3 families' converters rewrite before
    TextModel reads them (Llama4Model.__init__: intermediate_size is the
    dense MLP's intermediate_size_mlp, the experts' width moves to
    intermediate_size_moe)."""
    cfg = dict(cfg)
    if cfg["model_type"] == "llama4_text":
        cfg["intermediate_size_moe"], cfg["intermediate_size"] = cfg["intermediate_size"], cfg["intermediate_size_mlp"]
    return cfg


def write_dense3_metadata(w, cfg, arch):
    """The keys the converters of the DENSE3 families write beyond
    TextModel's, then their EXTENSION keys."""
    mt, layers = cfg["model_type"], cfg["num_hidden_layers"]
    if mt == "llama4_text":  # Llama4Model
        w.add_interleave_moe_layer_step(cfg["interleave_moe_layer_step"])
        w.add_expert_feed_forward_length(cfg["intermediate_size_moe"])
        chunked = "chunked_attention" in cfg["layer_types"]
        if not chunked:
            w.add_sliding_window(0)  # llama.cpp: no chunks (and RoPE on every layer but the last)
        assert cfg.get("attn_temperature_tuning", True), "llama.cpp always tunes the NoPE layers' temperature"
        # EXTENSION: llama.cpp fixes the chunk size (8192), every 4th layer
        # NoPE and full, the temperature's floor (8192) and scale (0.1) and
        # q/k norm unless 128 experts; the fixture's values where not those.
        if chunked and cfg["attention_chunk_size"] != 8192:
            w.add_sliding_window(cfg["attention_chunk_size"])
        step = 4 if chunked else layers
        if cfg["no_rope_layers"] != [int((i + 1) % step != 0) for i in range(layers)]:
            w.add_array(f"{arch}.no_rope_layers", [int(x) for x in cfg["no_rope_layers"]])
        derived = ["chunked_attention" if chunked and cfg["no_rope_layers"][i] else "full_attention" for i in range(layers)]
        if cfg["layer_types"] != derived:  # Llama4TextConfig's default: the RoPE layers are the chunked ones
            w.add_sliding_window_pattern([t == "chunked_attention" for t in cfg["layer_types"]])
        if cfg.get("floor_scale", 8192) != 8192:
            w.add_attn_temperature_length(int(cfg["floor_scale"]))
        if cfg.get("attn_scale", 0.1) != 0.1:
            w.add_attn_temperature_scale(cfg["attn_scale"])
        if cfg.get("use_qk_norm", True) != (cfg["num_local_experts"] != 128):
            w.add_bool(f"{arch}.use_qk_norm", cfg.get("use_qk_norm", True))


def falcon_kv(cfg):
    """The kv groups FalconModel reads (num_kv_heads, else n_head_kv, else 1)."""
    return cfg.get("num_kv_heads") or cfg.get("n_head_kv") or 1


def write_falcon_metadata(w, cfg, ftype):
    """FalconModel.set_gguf_parameters (not TextModel's): context length
    fixed at 2048, 4·hidden_size as the feed-forward length, the kv groups,
    the LayerNorm eps and the "jploski" qkv layout; then the EXTENSION keys."""
    assert not cfg.get("alibi"), "archc's falcon reads RoPE configs"
    assert cfg.get("parallel_attn", True), "llama.cpp's falcon graph is parallel"
    w.add_context_length(2048)
    w.add_tensor_data_layout("jploski")
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(4 * cfg["hidden_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv(falcon_kv(cfg))
    w.add_layer_norm_eps(cfg["layer_norm_epsilon"])
    w.add_file_type(ftype)
    write_special_tokens(w, cfg)
    # EXTENSION: the config's max_position_embeddings (archc's default KV
    # length), which llama.cpp replaces by 2048, and a RoPE base other than
    # its default 10000.
    if cfg.get("max_position_embeddings", 2048) != 2048:
        w.add_uint32("falcon.max_position_embeddings", cfg["max_position_embeddings"])
    theta = rope_params(cfg).get("rope_theta", 10000.0)
    if theta != 10000.0:
        w.add_rope_freq_base(theta)


def falcon_qkv(t, cfg):
    """FalconModel.modify_tensors: query_key_value's rows per kv group
    [q_1 .. q_r | k | v] as all q, all k, all v (a bias fails its view)."""
    heads, kv = cfg["num_attention_heads"], falcon_kv(cfg)
    d = cfg["hidden_size"] // heads
    assert t.ndim == 2, "FalconModel's qkv view fails on the query_key_value bias"
    qkv = t.reshape(kv, heads // kv + 2, d, t.shape[-1])
    return np.concatenate((qkv[:, :-2].reshape(heads * d, -1), qkv[:, [-2]].reshape(kv * d, -1), qkv[:, [-1]].reshape(kv * d, -1)))


def falcon_qkv_back(a, cfg):
    """The inverse of falcon_qkv."""
    heads, kv = cfg["num_attention_heads"], falcon_kv(cfg)
    d = cfg["hidden_size"] // heads
    r = heads // kv
    q, k, v = a[: heads * d], a[heads * d: (heads + kv) * d], a[(heads + kv) * d:]
    g = np.concatenate([q.reshape(kv, r, d, -1), k.reshape(kv, 1, d, -1), v.reshape(kv, 1, d, -1)], axis=1)
    return g.reshape(a.shape)


def write_llama3_extension(w, arch, full):
    """EXTENSION: llama3 RoPE scaling, of which llama.cpp stores only the
    rope_freqs factors (written as a tensor)."""
    w.add_string(gguf.Keys.Rope.SCALING_TYPE.format(arch=arch), "llama3")
    w.add_rope_scaling_factor(full["factor"])
    w.add_rope_scaling_orig_ctx_len(full["original_max_position_embeddings"])
    w.add_float32(f"{arch}.rope.scaling.low_freq_factor", full["low_freq_factor"])
    w.add_float32(f"{arch}.rope.scaling.high_freq_factor", full["high_freq_factor"])


def deci_layers(cfg):
    """DeciModel.__init__ on a config with block_configs: per layer the
    head count (0 without attention), the key-value head count (0 for the
    linear replacement too) and the feed-forward width (0 without MLP)."""
    heads, kv, widths = [], [], []
    n = cfg["num_attention_heads"]
    for b in cfg["block_configs"]:
        a, f = b["attention"], b["ffn"]
        assert not f.get("replace_with_linear"), "DeciModel: TensorNameMap has no name for mlp.linear_mlp"
        g = None if a.get("no_op") or a.get("replace_with_linear") else a["n_heads_in_group"]
        heads.append(n if g is not None or a.get("replace_with_linear") else 0)
        kv.append(n // g if g is not None else 0)
        mult = None if f.get("no_op") else f["ffn_mult"]
        m = int(2 * (mult or 0.0) * cfg["hidden_size"] / 3)
        widths.append(m if m % 256 == 0 else m + 256 - m % 256)
    return heads, kv, widths


def write_deci_metadata(w, cfg, ftype):
    """DeciModel.set_gguf_parameters for a config with block_configs (not
    TextModel's): per-layer head counts and feed-forward widths, then
    vocab_size and the rope dimension; the llama3 EXTENSION keys."""
    heads, kv, widths = deci_layers(cfg)
    full = rope_params(cfg)
    head_dim = cfg["hidden_size"] // cfg["num_attention_heads"]
    if full.get("rope_theta") is not None:
        w.add_rope_freq_base(full["rope_theta"])
    w.add_head_count_kv(kv)
    w.add_head_count(heads)
    w.add_feed_forward_length(widths)
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_file_type(ftype)
    w.add_vocab_size(cfg["vocab_size"])
    w.add_rope_dimension_count(head_dim)
    write_special_tokens(w, cfg)
    if full.get("rope_type") == "llama3":
        write_llama3_extension(w, "deci", full)


def openelm_ffn_dims(cfg):
    """OpenELMModel._make_divisible(ffn_multipliers[i] · model_dim, ffn_dim_divisor) per layer."""
    div, out = cfg["ffn_dim_divisor"], []
    for m in cfg["ffn_multipliers"]:
        v = m * cfg["model_dim"]
        n = max(div, int(v + div / 2) // div * div)
        out.append(n + div if n < 0.9 * v else n)
    return out


def step35_layer_types(cfg):
    """Step3p5's layer types as Step35Model reads them (mlx-lm's default
    without layer_types: even layers sliding)."""
    n = cfg["num_hidden_layers"]
    return cfg.get("layer_types") or ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(n)]


def write_step35_metadata(w, cfg, ftype):
    """TextModel.set_gguf_parameters, then Step35Model.set_gguf_parameters:
    rope_theta [full, sliding] as freq_base and freq_base_swa, per-layer
    head counts (attention_other_setting's on the sliding layers), the
    sliding pattern, the MoE sizes, leading dense blocks, the per-layer
    SwiGLU clamps. EXTENSION: llama3 scaling's parameters (llama.cpp keeps
    only the rope_freqs tensor)."""
    arch = GGUF_ARCH["step3p5"]
    n, hd = cfg["num_hidden_layers"], cfg["head_dim"]
    types = step35_layer_types(cfg)
    theta = cfg.get("rope_theta", 10000.0)
    full_theta, swa_theta = (theta[0], theta[1]) if isinstance(theta, list) else (theta, None)
    other = cfg.get("attention_other_setting") or {}
    heads, kv = cfg["num_attention_heads"], cfg["num_attention_groups"]
    assert [1.0 if t == "sliding_attention" else 0.5 for t in types] == list(cfg["partial_rotary_factors"]), "Step35Model asserts partial_rotary_factors"
    w.add_block_count(n)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_rope_freq_base(float(full_theta))
    if swa_theta is not None:
        w.add_rope_freq_base_swa(float(swa_theta))
    w.add_key_length(hd)
    w.add_file_type(ftype)
    w.add_head_count([other.get("num_attention_heads", heads) if t == "sliding_attention" else heads for t in types])
    w.add_head_count_kv([other.get("num_attention_groups", kv) if t == "sliding_attention" else kv for t in types])
    w.add_sliding_window(cfg["sliding_window"])
    w.add_sliding_window_pattern([t == "sliding_attention" for t in types])
    w.add_value_length(hd)
    w.add_expert_count(cfg["moe_num_experts"])
    w.add_expert_used_count(cfg["moe_top_k"])
    w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
    w.add_expert_shared_feed_forward_length(cfg["share_expert_dim"])
    if cfg.get("moe_router_scaling_factor") is not None:
        w.add_expert_weights_scale(cfg["moe_router_scaling_factor"])
    if cfg.get("norm_expert_weight") is not None:
        w.add_expert_weights_norm(cfg["norm_expert_weight"])
    moe = sorted(int(i) for i in cfg["moe_layers_enum"].strip().split(",")) if (cfg.get("moe_layers_enum") or "").strip() else []
    w.add_leading_dense_block_count(max(0, moe[0]) if moe else 0)
    w.add_moe_every_n_layers(int(cfg.get("moe_every_n_layer", 1)))
    w.add_layer_norm_rms_eps(cfg.get("rms_norm_eps", 1e-5))
    if cfg.get("swiglu_limits") is not None:
        w.add_swiglu_clamp_exp([0.0 if v is None else float(v) for v in cfg["swiglu_limits"]])
    if cfg.get("swiglu_limits_shared") is not None:
        w.add_swiglu_clamp_shexp([0.0 if v is None else float(v) for v in cfg["swiglu_limits_shared"]])
    write_special_tokens(w, cfg)
    rs = cfg.get("rope_scaling") or {}
    if rs.get("rope_type") == "llama3":  # EXTENSION, as for the ROPE_FREQS families
        w.add_string(gguf.Keys.Rope.SCALING_TYPE.format(arch=arch), "llama3")
        w.add_rope_scaling_factor(rs["factor"])
        w.add_rope_scaling_orig_ctx_len(rs["original_max_position_embeddings"])
        w.add_float32(f"{arch}.rope.scaling.low_freq_factor", rs.get("low_freq_factor", 1.0))
        w.add_float32(f"{arch}.rope.scaling.high_freq_factor", rs.get("high_freq_factor", 4.0))


def step35_rope_freqs(cfg):
    """Step35Model.generate_extra_tensors: llama3's factors on the full
    layers' rotary dimensions (rope_theta[0]), padded with 1 to head_dim / 2."""
    theta = cfg.get("rope_theta", 10000.0)
    base = float(theta[0] if isinstance(theta, list) else theta)
    types = step35_layer_types(cfg)
    f = next(float(x) for t, x in zip(types, cfg["partial_rotary_factors"]) if t == "full_attention")
    hd = cfg["head_dim"]
    out = llama3_rope_factors(dict(cfg["rope_scaling"], rope_theta=base), int(hd * f))
    return np.concatenate([out, np.ones(hd // 2 - len(out), dtype=np.float32)])


def write_openelm_metadata(w, cfg, ftype):
    """OpenELMModel.set_gguf_parameters (not TextModel's): per-layer feed-forward
    widths and head counts, OpenELMRMSNorm's fixed eps 1e-6, full-width rotary."""
    assert cfg.get("ffn_with_glu", True), "OpenELMModel splits proj_1 as a GLU"
    w.add_block_count(cfg["num_transformer_layers"])
    w.add_context_length(cfg["max_context_length"])
    w.add_embedding_length(cfg["model_dim"])
    w.add_feed_forward_length(openelm_ffn_dims(cfg))
    w.add_head_count(cfg["num_query_heads"])
    w.add_head_count_kv(cfg["num_kv_heads"])
    w.add_rope_freq_base(cfg["rope_freq_constant"])
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_dimension_count(cfg["head_dim"])
    w.add_key_length(cfg["head_dim"])
    w.add_value_length(cfg["head_dim"])
    w.add_file_type(ftype)
    write_special_tokens(w, cfg)


def internlm2_qkv(t, cfg):
    """InternLM2Model.modify_tensors: wqkv's rows per kv group [q_1 .. q_r
    | k | v] as (all q, all k, all v), before the q/k permutation."""
    heads, kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads") or cfg["num_attention_heads"]
    d = cfg["hidden_size"] // heads
    assert t.ndim == 2, "InternLM2Model's qkv view fails on a wqkv bias"
    g = t.reshape(kv, heads // kv + 2, d, t.shape[-1])
    return g[:, :-2].reshape(heads * d, -1).copy(), g[:, -2].reshape(kv * d, -1).copy(), g[:, -1].reshape(kv * d, -1).copy()


def internlm2_qkv_back(q, k, v, cfg):
    """The inverse of internlm2_qkv."""
    heads, kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads") or cfg["num_attention_heads"]
    d = cfg["hidden_size"] // heads
    g = np.concatenate([q.reshape(kv, heads // kv, d, -1), k.reshape(kv, 1, d, -1), v.reshape(kv, 1, d, -1)], axis=1)
    return g.reshape(-1, q.shape[-1])


def write_dbrx_metadata(w, cfg, ftype):
    """DbrxModel.set_gguf_parameters (not TextModel's): DbrxConfig's sizes,
    attn_config's kv heads, RoPE base and clip_qkv as clamp_kqv, ffn_config's
    experts, the LayerNorm eps llama.cpp fixes (1e-5); then the EXTENSION
    keys."""
    attn, ffn = cfg["attn_config"], cfg["ffn_config"]
    w.add_block_count(cfg["n_layers"])
    w.add_context_length(cfg["max_seq_len"])
    w.add_embedding_length(cfg["d_model"])
    w.add_feed_forward_length(ffn["ffn_hidden_size"])
    w.add_head_count(cfg["n_heads"])
    w.add_head_count_kv(attn["kv_n_heads"])
    w.add_rope_freq_base(attn["rope_theta"])
    w.add_clamp_kqv(attn["clip_qkv"])
    w.add_expert_count(ffn["moe_num_experts"])
    w.add_expert_used_count(ffn["moe_top_k"])
    w.add_layer_norm_eps(1e-5)
    w.add_file_type(ftype)
    write_special_tokens(w, cfg)
    assert (ffn.get("ffn_act_fn") or {}).get("name", "silu") == "silu", "llama.cpp's dbrx experts are SiLU"
    # EXTENSION: llama.cpp divides the top-k weights by their sum (HF's
    # moe_normalize_expert_weights 1, the default); the fixture's p-norm.
    p = ffn.get("moe_normalize_expert_weights", 1.0)
    assert p is not None, "llama.cpp always normalizes dbrx's expert weights"
    if p != 1.0:
        w.add_float32("dbrx.moe_normalize_expert_weights", p)


def write_gemma4_metadata(w, cfg, ftype):
    """Gemma4Model.set_gguf_parameters over Gemma3Model's and TextModel's:
    the full layers' head_dim (key_length) and RoPE base, the sliding
    layers' (key_length_swa, freq_base_swa), per-layer kv heads and
    sliding pattern, KV sharing, per-layer inputs, the double-wide MLP as
    per-layer feed_forward_length, the experts; then the EXTENSION keys."""
    layers, swa_types = cfg["num_hidden_layers"], [t == "sliding_attention" for t in cfg["layer_types"]]
    full_rope, swa_rope = rope_params(cfg, "full_attention"), rope_params(cfg, "sliding_attention")
    shared = cfg.get("num_kv_shared_layers") or 0
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_block_count(layers)
    if cfg.get("use_double_wide_mlp"):
        n_ff = cfg["intermediate_size"]
        w.add_feed_forward_length([n_ff if il < layers - shared else 2 * n_ff for il in range(layers)])
    else:
        w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(cfg["num_attention_heads"])
    if cfg.get("num_global_key_value_heads") is not None:
        w.add_head_count_kv([cfg["num_key_value_heads"] if s else cfg["num_global_key_value_heads"] for s in swa_types])
    else:
        w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_rope_freq_base(full_rope["rope_theta"])
    w.add_rope_freq_base_swa(swa_rope["rope_theta"])
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    if cfg.get("num_experts") is not None:
        w.add_expert_count(cfg["num_experts"])
        w.add_expert_used_count(cfg["top_k_experts"])
    w.add_file_type(ftype)
    if cfg.get("final_logit_softcapping"):
        w.add_final_logit_softcapping(cfg["final_logit_softcapping"])
    w.add_sliding_window(cfg["sliding_window"])
    w.add_shared_kv_layers(shared)
    w.add_embedding_length_per_layer_input(cfg.get("hidden_size_per_layer_input") or 0)
    w.add_sliding_window_pattern(swa_types)
    w.add_key_length(cfg["global_head_dim"])
    w.add_value_length(cfg["global_head_dim"])
    w.add_key_length_swa(cfg["head_dim"])
    w.add_value_length_swa(cfg["head_dim"])
    if cfg.get("moe_intermediate_size") is not None:
        w.add_expert_feed_forward_length(cfg["moe_intermediate_size"])
    w.add_rope_dimension_count(cfg["global_head_dim"])
    w.add_rope_dimension_count_swa(int(cfg["head_dim"] * swa_rope.get("partial_rotary_factor", 1.0)))
    write_special_tokens(w, cfg)
    assert full_rope["rope_type"] == "proportional" and swa_rope.get("rope_type", "default") == "default"
    assert cfg.get("use_bidirectional_attention") != "all"
    # EXTENSION: llama.cpp keeps the full layers' partial_rotary_factor only
    # in the rope_freqs tensor (1e30 past the rotated frequencies); the
    # fixture's factor where it is not Gemma4TextConfig's 0.25.
    if full_rope["partial_rotary_factor"] != 0.25:
        w.add_float32("gemma4.rope.partial_rotary_factor", full_rope["partial_rotary_factor"])


def write_chatglm_metadata(w, cfg, ftype):
    """ChatGLMModel.set_gguf_parameters (not TextModel's) on a
    GlmForCausalLM config: context_length is seq_length, else hidden_size
    (a GlmConfig has no seq_length), the RMS eps layernorm_epsilon, else
    1e-5, the RoPE base 10000 · rope_ratio, the rotary dimensions
    partial_rotary_factor (top-level, else 0.5) of hidden/heads; then the
    EXTENSION keys."""
    heads, rope = cfg["num_attention_heads"], rope_params(cfg)
    assert cfg.get("head_dim", cfg["hidden_size"] // heads) == cfg["hidden_size"] // heads, "llama.cpp's chatglm has head_dim hidden/heads"
    assert cfg["rms_norm_eps"] == 1e-5 and rope.get("rope_theta", 10000.0) == 10000.0 and rope.get("rope_type", "default") == "default", \
        "ChatGLMModel writes eps 1e-5 and RoPE base 10000 for a GlmForCausalLM"
    w.add_context_length(cfg["hidden_size"])
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_head_count(heads)
    w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(ftype)
    w.add_rope_dimension_count(int(cfg["hidden_size"] // heads * cfg.get("partial_rotary_factor", 0.5)))
    w.add_add_bos_token(False)
    w.add_rope_freq_base(10000)
    write_special_tokens(w, cfg)
    # EXTENSION: the context length llama.cpp's file replaces with the
    # hidden size; the partial_rotary_factor transformers 5 keeps in
    # rope_parameters, which the converter does not read.
    w.add_uint32("chatglm.max_position_embeddings", cfg["max_position_embeddings"])
    if rope.get("partial_rotary_factor", 0.5) != cfg.get("partial_rotary_factor", 0.5):
        w.add_float32("chatglm.partial_rotary_factor", rope["partial_rotary_factor"])


def gemma4_rope_freqs(cfg):
    """Gemma4Model.generate_extra_tensors: the full layers' proportional
    RoPE as freq factors, 1 for the rotated frequencies, 1e30 (no
    rotation) for the rest."""
    dim, part = cfg["global_head_dim"], rope_params(cfg, "full_attention")["partial_rotary_factor"]
    rot = int(dim * part / 2)
    return np.array([1.0] * rot + [1e30] * (dim // 2 - rot), dtype=np.float32)


def dense3_tensor(mt, cfg, hf, t, tmap):
    """The converter's modify_tensors for the DENSE3 families: the GGUF
    tensors (name, HF name, array) one checkpoint tensor becomes, or None
    where the common mapping applies."""
    if mt == "llama4_text" and hf.endswith(".feed_forward.experts.gate_up_proj"):
        # Llama4Model.modify_tensors: [E, H, 2I] transposed, split into gate and up [E, I, H]
        i = hf.split(".")[2]
        gate, up = np.split(t.swapaxes(-1, -2), 2, axis=-2)
        return [(f"blk.{i}.ffn_gate_exps.weight", hf, gate.copy()),
                (f"blk.{i}.ffn_up_exps.weight", hf, up.copy())]
    if mt == "llama4_text" and hf.endswith(".feed_forward.experts.down_proj"):  # [E, I, H] transposed
        return [(f"blk.{hf.split('.')[2]}.ffn_down_exps.weight", hf, t.swapaxes(-1, -2).copy())]
    if mt == "dbrx" and ".ffn.experts.mlp." in hf:
        # DbrxModel.modify_tensors: w1, v1, w2 [E·I, H] viewed as [E, I, H],
        # w2 then as [E, H, I]; named with .weight
        ffn = cfg["ffn_config"]
        t = t.reshape(ffn["moe_num_experts"], ffn["ffn_hidden_size"], cfg["d_model"])
        if hf.endswith(".w2"):
            t = t.transpose(0, 2, 1)
        return [(tmap.get_name(hf + ".weight", try_suffixes=(".weight",)), hf, t.copy())]
    if mt == "gemma4_text":
        # Gemma4Model.filter_tensors / modify_tensors: .weight added to
        # layer_scalar and the experts' parameters; the router's scale and
        # per_expert_scale as .scale tensors of ffn_gate_inp / ffn_down_exps
        i = hf.split(".")[2] if hf.startswith("model.layers.") else None
        if hf.endswith(".router.scale"):
            return [(f"blk.{i}.ffn_gate_inp.scale", hf, t)]
        if hf.endswith(".router.per_expert_scale"):
            return [(f"blk.{i}.ffn_down_exps.scale", hf, t)]
        if hf.endswith(".layer_scalar") or (".experts." in hf and not hf.endswith(".weight")):
            return [(tmap.get_name(hf + ".weight", try_suffixes=(".weight",)), hf, t)]
    return None


def qwen3vl_moe_experts(hf, t):
    """Qwen3VLMoeTextModel.modify_tensors: the published gate_up_proj
    [E, H, 2I] split into gate and up, each transposed to [E, I, H];
    down_proj [E, I, H] transposed to [E, H, I]."""
    i = re.search(r"\.layers\.(\d+)\.", hf).group(1)
    if hf.endswith(".gate_up_proj"):
        gate, up = np.split(t, 2, axis=-1)
        return [(f"blk.{i}.ffn_gate_exps.weight", hf, gate.swapaxes(1, 2).copy()),
                (f"blk.{i}.ffn_up_exps.weight", hf, up.swapaxes(1, 2).copy())]
    assert hf.endswith(".down_proj"), f"qwen3_vl_moe: unexpected expert tensor {hf}"
    return [(f"blk.{i}.ffn_down_exps.weight", hf, t.swapaxes(1, 2).copy())]


def qwen3vl_moe_experts_back(hf, parts):
    """The inverse of qwen3vl_moe_experts: {GGUF name: array} → the
    published HF array."""
    by = {n.split(".")[2]: a for n, a in parts.items()}
    if hf.endswith(".gate_up_proj"):
        return np.concatenate([by["ffn_gate_exps"].swapaxes(1, 2), by["ffn_up_exps"].swapaxes(1, 2)], axis=-1)
    return by["ffn_down_exps"].swapaxes(1, 2)


def dense3_parted(mt, hf):
    """Whether the DENSE3 family's HF tensor hf is made of GGUF tensors
    that read_back must join (dense3_back)."""
    return (mt == "llama4_text" and ".feed_forward.experts." in hf) or (mt == "dbrx" and ".ffn.experts.mlp." in hf)


def dense3_back(mt, cfg, hf, parts):
    """The inverse of dense3_tensor: {GGUF name: array} of one HF tensor's
    parts → the HF array."""
    by = {n.split(".")[2]: a for n, a in parts.items()}
    if mt == "llama4_text" and hf.endswith(".gate_up_proj"):
        return np.concatenate([by["ffn_gate_exps"], by["ffn_up_exps"]], axis=1).swapaxes(1, 2)
    if mt == "llama4_text" and hf.endswith(".down_proj"):
        return by["ffn_down_exps"].swapaxes(1, 2)
    if mt == "dbrx":  # [E, I, H] (w2: [E, H, I]) back to [E·I, H]
        (name, a), = parts.items()
        a = a.swapaxes(1, 2) if name.endswith("ffn_down_exps.weight") else a
        return a.reshape(-1, a.shape[-1])
    raise AssertionError(f"{mt}: no inverse for {hf}")


# Tensors ModelBase.prepare_tensors keeps in F32 whatever the output type:
# the router, the SSM and short convolutions' kernels, the DSA indexer's
# weights_proj.
KEEP_F32 = re.compile(r"\.(ffn_gate_inp|ssm_conv1d|shortconv\.conv|indexer\.proj|time_mix_(w1|w2|lerp_fused|first|decay_w1|decay_w2))\.")

def storage(name, data, ftype, mt=None, recorded=None):
    """The type convert_hf_to_gguf.py stores a tensor in, and its data
    (ModelBase.prepare_tensors: F32 for 1-D tensors, norms, KEEP_F32 unless
    the family is in FORCE_QUANT, and names without .weight such as Mamba's
    ssm_a)."""
    keep = KEEP_F32.search(name) and mt not in FORCE_QUANT
    f32 = data.ndim <= 1 or name.endswith("_norm.weight") or keep or not name.endswith(".weight")
    if recorded is not None:  # the type the oracle's file had (write_gguf)
        f32 = recorded == "F32"
    if ftype == gguf.LlamaFileType.ALL_F32 or f32:
        return gguf.GGMLQuantizationType.F32, data
    try:
        return gguf.GGMLQuantizationType.Q8_0, gguf.quants.quantize(data, gguf.GGMLQuantizationType.Q8_0)
    except gguf.QuantError:  # a row not a multiple of the block: the converter falls back to F16
        return gguf.GGMLQuantizationType.F16, gguf.quants.quantize(data, gguf.GGMLQuantizationType.F16)


def write_gguf(path, name, cfg, tensors, ftype, state, recorded=None):
    """recorded: {GGUF name: type name} to store tensors in (a Q8_0 twin's
    oracle.q8_0.json tensor_types) rather than the rules' types: twins
    whose oracles predate a rule (8a72434 kept routers and non-.weight
    tensors F32; mixtral, olmoe, qwen2_moe, qwen3_moe, gpt_oss have them
    Q8_0) keep the bytes their oracles were computed on."""
    w = gguf.GGUFWriter(path, GGUF_ARCH[model_kind(cfg)])
    write_metadata(w, name, cfg, ftype, state)
    types = {}
    for gname, _, data in tensors:
        qtype, stored = storage(gname, data, ftype, cfg["model_type"], recorded and recorded.get(gname))
        types[gname] = qtype.name
        w.add_tensor(gname, stored, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return types


def read_back(path, cfg, names, shapes):
    """The file's tensors as gguf-py dequantizes them, transforms undone,
    under their HF names (what archc must compute with); shapes: the HF
    shapes, by HF name."""
    mt = model_kind(cfg)
    tc = text_config(cfg)  # a wrapper's text model (Mistral3's)
    heads = tc.get("num_attention_heads") or tc.get("n_head")
    kv_heads = tc.get("num_key_value_heads") or heads
    sd, parts = {}, {}
    reader = gguf.GGUFReader(path)
    if mt == "apertus":  # the xIELU scalars, from their metadata arrays
        for key in ("alpha_p", "alpha_n", "beta", "eps"):
            for i, v in enumerate(reader.fields[f"xielu.{key}"].contents()):
                hf = f"model.layers.{i}.mlp.act_fn.{key}"
                sd[hf] = np.float32(v).reshape(shapes[hf])
    for t in reader.tensors:
        hf = names[t.name]
        if hf is None:  # rope_freqs, rope_factors_long/short
            continue
        data = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        data = data.reshape([int(d) for d in reversed(t.shape)])
        if mt in ("rwkv7", "plamo2"):
            sd.update(rwkv7_plamo2_back(mt, hf, data, shapes))
            continue
        if mt == "openelm" and hf.endswith(".ffn.proj_1.weight"):
            parts.setdefault(hf, {})[t.name.split(".")[2]] = data
            continue
        if mt in ("internlm2", "bailing_moe") and (INTERNLM2_QKV.search(hf) or BAILING_QKV.search(hf)):
            kind = t.name.split(".")[2]
            parts.setdefault(hf, {})[kind] = unpermute(data, heads if kind == "attn_q" else kv_heads) if kind != "attn_v" else data
            continue
        if (mt == "gpt_oss" and ".mlp.experts." in hf) or (mt in GRANITE_MOE and hf.endswith(".input_linear.weight")) or (
                mt in DEEPSEEK2 and hf.endswith(".kv_b_proj.weight")) or (mt in DENSE3 and dense3_parted(mt, hf)) or (
                mt in QWEN_GDN and hf.endswith(".in_proj_qkvz.weight")) or (mt in QWEN3VL_MOE and ".mlp.experts." in hf):
            parts.setdefault(hf, {})[t.name] = data
            continue
        if mt in LFM2 and hf.endswith(".conv.conv.weight"):
            data = data.reshape(shapes[hf])
        if mt == "falcon" and ".query_key_value." in hf:
            data = falcon_qkv_back(data, cfg)
        if mt == "bloom" and ".query_key_value." in hf:
            data = neox_qkv_back(data, heads)
        if mt in QWEN_GDN:
            data = qwen_gdn_back(text_config(cfg), hf, data, shapes.get(hf, data.shape))  # (stacked experts: as stored)
        if mt in FALCON_H1:
            data = falcon_h1_back(cfg, hf, data, shapes[hf])
        if mt in MAMBA1 | MAMBA2 | NEMOTRON_H | FALCON_H1 and SSM_PARAM.search(hf):
            sd[hf] = np.ascontiguousarray(mamba_tensor_back(hf, data, shapes[hf]))
            continue
        if mt == "nemotron-nas" and (".q_proj." in hf or ".k_proj." in hf):
            lh, lkv, _ = deci_layers(cfg)
            data = unpermute(data, (lh if ".q_proj." in hf else lkv)[int(hf.split(".")[2])])
        if mt in PERMUTE_QK | NEMOTRON_H and (".q_proj." in hf or ".k_proj." in hf):
            data = unpermute(data, heads if ".q_proj." in hf else kv_heads)
        if mt in NORM_PLUS_ONE and hf.endswith("norm.weight"):
            data = data - np.float32(1)
        if mt == "gpt2" and CONV1D.search(hf):
            data = data.T
        if mt == "gpt_neox" and ".attention.query_key_value." in hf:
            data = neox_qkv_back(data, heads)
        m = STACKED.match(hf)
        if m and data.ndim == 3:  # ffn_*_exps: back to the checkpoint's per-expert tensors
            for e in range(data.shape[0]):
                sd[f"{m.group(1)}.{e}.{m.group(2)}.weight"] = np.ascontiguousarray(data[e])
            continue
        sd[hf] = np.ascontiguousarray(data)
    for hf, p in parts.items():
        if mt == "openelm":
            sd[hf] = np.ascontiguousarray(np.concatenate([p["ffn_gate"], p["ffn_up"]]))
            continue
        if mt == "internlm2":
            sd[hf] = np.ascontiguousarray(internlm2_qkv_back(p["attn_q"], p["attn_k"], p["attn_v"], cfg))
            continue
        if mt == "bailing_moe":
            sd[hf] = np.ascontiguousarray(np.concatenate([p["attn_q"], p["attn_k"], p["attn_v"]]))
            continue
        if mt in DENSE3:
            sd[hf] = np.ascontiguousarray(dense3_back(mt, cfg, hf, p))
            continue
        if mt in QWEN_GDN:  # attn_qkv and attn_gate back to per-key-head [q | k | v | z]
            sd[hf] = (qwen_qkvz_back(text_config(cfg), p))
            continue
        if mt in QWEN3VL_MOE:
            sd[hf] = np.ascontiguousarray(qwen3vl_moe_experts_back(hf, p))
            continue
        if mt in DEEPSEEK2:  # per head [k_b transposed back | v_b], heads flattened
            by = {n.split(".")[2]: a for n, a in p.items()}
            kv_b = np.concatenate([by["attn_k_b"].swapaxes(1, 2), by["attn_v_b"]], axis=1)
            sd[hf] = np.ascontiguousarray(kv_b.reshape(-1, kv_b.shape[-1]))
            continue
        if mt in GRANITE_MOE and hf.endswith(".block_sparse_moe.input_linear.weight"):  # gate rows, then up rows
            by = {n.split(".")[2]: a for n, a in p.items()}
            sd[hf] = np.ascontiguousarray(np.concatenate([by["ffn_gate_exps"], by["ffn_up_exps"]], axis=1))
            continue
        if mt in GRANITE_MOE and hf.endswith(".shared_mlp.input_linear.weight"):
            by = {n.split(".")[2].removesuffix("_shexp"): a for n, a in p.items()}
            sd[hf] = np.ascontiguousarray(np.concatenate([by["ffn_gate"], by["ffn_up"]], axis=0))
            continue
        sd[hf] = np.ascontiguousarray(gpt_oss_experts_back(p))
    return sd


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def load_fixture(folder):
    """(config.json, the checkpoint as float32 numpy arrays by HF name)."""
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    return cfg, load_checkpoint(os.path.join(folder, "model.safetensors"))


def load_checkpoint(path):
    """A safetensors file's tensors as numpy arrays by name, a bf16 one
    (a fixture with stored_dtype "bfloat16"; numpy has no bfloat16) widened
    to float32, which is exact: llama.cpp's converter does the same
    (convert_hf_to_gguf.py turns every dtype but F16 and F32 into F32
    before it transforms or writes a tensor)."""
    with open(path, "rb") as f:
        header = json.loads(f.read(int.from_bytes(f.read(8), "little")))
        infos = {k: v for k, v in header.items() if k != "__metadata__"}
        if all(v["dtype"] != "BF16" for v in infos.values()):
            return load_file(path)
        data = f.read()
    out = {}
    for name, v in infos.items():
        start, end = v["data_offsets"]
        if v["dtype"] == "BF16":
            bits = np.frombuffer(data, dtype="<u2", count=(end - start) // 2, offset=start).astype(np.uint32) << 16
            out[name] = bits.view(np.float32).reshape(v["shape"])
        else:
            dtype = {"F32": "<f4", "F16": "<f2"}[v["dtype"]]
            out[name] = np.frombuffer(data, dtype=dtype, count=(end - start) // np.dtype(dtype).itemsize, offset=start).reshape(v["shape"]).copy()
    return out


def write_twins(folder, cfg=None, state=None, recorded=None):
    """Writes the folder's model.f32.gguf and model.q8_0.gguf (recorded: as
    write_gguf's, for the Q8_0 file); returns
    (the GGUF tensors [(GGUF name, HF name, array)], the Q8_0 file's
    tensor types by GGUF name)."""
    name = os.path.basename(folder)
    if cfg is None:
        cfg, state = load_fixture(folder)
    tensors = to_gguf(cfg, state)
    write_gguf(os.path.join(folder, TWINS[0]), name, cfg, tensors, gguf.LlamaFileType.ALL_F32, state)
    types = write_gguf(os.path.join(folder, TWINS[1]), name, cfg, tensors, gguf.LlamaFileType.MOSTLY_Q8_0, state, recorded)
    return tensors, types


def twin_folders(only=None):
    """The fixture folders that have GGUF twins: every folder of TESTDATA
    with a config.json but the MLX twins (gen_mlx_fixtures.py) and those
    whose gguf.skip says why not."""
    folders = []
    for cfg_path in sorted(glob.glob(os.path.join(TESTDATA, "*", "config.json"))):
        folder = os.path.dirname(cfg_path)
        with open(cfg_path) as f:
            if "quantization" in json.load(f):  # MLX twins (gen_mlx_fixtures.py)
                continue
        if only and os.path.basename(folder) not in only:
            continue
        if os.path.exists(os.path.join(folder, "gguf.skip")):  # why no twin: the file says
            continue
        folders.append(folder)
    return folders


def recorded_types(folder):
    """The tensor types oracle.q8_0.json records for the Q8_0 twin."""
    with open(os.path.join(folder, "oracle.q8_0.json")) as f:
        return json.load(f)["tensor_types"]


def read_manifest():
    """{path under TESTDATA: sha256}."""
    out = {}
    if os.path.exists(MANIFEST):
        with open(MANIFEST) as f:
            for line in f:
                digest, path = line.split(maxsplit=1)
                out[path.strip()] = digest
    return out


def write_manifest(entries):
    with open(MANIFEST, "w") as f:
        for path in sorted(entries):
            f.write(f"{entries[path]}  {path}\n")


# issue 34 (h-mmproj): the vision fixtures' twins (testdata/vision/): the
# wrapper's text model (to_gguf, plus its tokenizer: the families read the
# image placeholder's id from it) and llama.cpp's mmproj file ("clip":
# clip.vision.* keys, v.*/mm.* tensors), as convert_hf_to_gguf.py --mmproj
# writes it (MmprojModel, SmolVLMModel, Gemma3VisionModel: tensors as HF
# holds them, Gemma 3's mm_input_projection F16 whatever the outtype and
# its mm_soft_emb_norm as 1 + w), for LLaVA-1.5, which that script lacks,
# as the legacy tools/mtmd/legacy-models/convert_image_encoder_to_gguf.py
# does (--use-f32 --projector-type mlp). Qwen2-VL's as Qwen2VLVisionModel
# writes it (qwen2vl_merger): attn.qkv split into attn_q, attn_k, attn_v,
# the Conv3d patch kernel [O, C, 2, p, p] split into two 2-D kernels
# v.patch_embd.weight and v.patch_embd.weight.1, the merger's ln_q as
# v.post_ln and its mlp.0 / mlp.2 as mm.0 / mm.2, every tensor F32;
# clip.vision.feed_forward_length is the vision config's hidden_size (the
# merger's output: the converter renames it intermediate_size), the tower's
# MLP width only in ffn_up's shape. Checked against llama.cpp's
# convert_hf_to_gguf.py run on the fixture (keys, tensor names, order,
# shapes, types, values equal): its TensorNameMap covers blocks below
# `depth` only, so for the fixture's depth 2 it has no name for
# visual.merger.mlp.2, and it was run with the map built for 3 blocks.
# Qwen3.5's as Qwen3VLVisionModel writes it (qwen3vl_merger): attn.qkv kept
# whole, the patch kernel split as Qwen2-VL's with its bias
# v.patch_embd.bias, pos_embed as v.position_embd, the merger's
# linear_fc1 / linear_fc2 / norm as mm.0 / mm.2 / v.post_ln, every tensor
# F32; image_size sqrt(num_position_embeddings) · patch_size,
# clip.use_gelu, clip.vision.spatial_merge_size, the text model's
# rms_norm_eps as the attention layernorm eps and is_deepstack_layers
# (all false for Qwen3.5), written from qwen3vl.py's code as read (not
# run: llama.cpp's converter is not installed here).

VISION_TWINS = ("model.f32.gguf", "mmproj.f32.gguf")
VISION_PREFIXES = ("model.vision_model.", "model.connector.", "vision_tower.", "multi_modal_projector.", "visual.", "model.visual.",
                   "model.vision_tower.", "model.multi_modal_projector.")
# wrapper model_type -> (clip.projector_type, text weight prefix renames)
_LM = (("language_model.model.", "model."), ("model.language_model.", "model."))
MMPROJ = {"idefics3": ("idefics3", (("model.text_model.", "model."),)),
          "smolvlm": ("idefics3", (("model.text_model.", "model."),)),
          "gemma3": ("gemma3", _LM), "llava": ("mlp", _LM), "qwen2_vl": ("qwen2vl_merger", _LM),
          "qwen3_5": ("qwen3vl_merger", _LM), "qwen3_5_moe": ("qwen3vl_merger", _LM),
          "qwen3_vl": ("qwen3vl_merger", _LM), "qwen3_vl_moe": ("qwen3vl_merger", _LM),
          "qwen2_5_vl": ("qwen2.5vl_merger", _LM), "mistral3": ("pixtral", ()), "llava_pixtral": ("pixtral", _LM),
          "lfm2_vl": ("lfm2", _LM)}


def vision_kind(cfg):
    """The mmproj converter a vision fixture takes: its model_type, or
    "llava_pixtral" for LLaVA with a Pixtral tower (LlavaVisionModel's
    pixtral path; LLaVA-1.5's is the legacy script's)."""
    if cfg["model_type"] == "llava" and (cfg.get("vision_config") or {}).get("model_type") == "pixtral":
        return "llava_pixtral"
    return cfg["model_type"]


def to_mmproj_lfm2(cfg, state):
    """LFM2VLModel's tensors (conversion/lfm2.py, read, not run), in HF
    name order: model.vision_tower.* and model.multi_modal_projector.*
    without their model. prefix, named by TensorNameMap (the projector's
    layer_norm as mm.input_norm, linear_1 / linear_2 as mm.1 / mm.2); the
    patch embedding [O, p*p*3] viewed [O, p, p, 3] and permuted to a
    Conv2d kernel [O, 3, p, p] (the converter writes p = 16, LFM2-VL's:
    here the fixture's patch); all F32."""
    vc = cfg["vision_config"]
    p = vc["patch_size"]
    tmap = gguf.get_tensor_name_map(gguf.MODEL_ARCH.MMPROJ, max(vc["num_hidden_layers"], 3))
    out = []
    for hf in sorted(state):
        if not hf.startswith(("model.vision_tower.", "model.multi_modal_projector.")):
            continue
        key = hf.removeprefix("model.")
        t = np.asarray(state[hf], dtype=np.float32)
        if key.endswith("patch_embedding.weight"):
            t = t.reshape(t.shape[0], p, p, -1).transpose(0, 3, 1, 2)
        name = tmap.get_name(key, try_suffixes=(".weight", ".bias"))
        if name is None and key.startswith("vision_tower."):
            name = tmap.get_name("vision_tower.vision_model." + key[len("vision_tower."):], try_suffixes=(".weight", ".bias"))
        assert name is not None, f"TensorNameMap has no mmproj name for {hf}"
        out.append((name, hf, np.ascontiguousarray(t), F32))
    return out


def to_mmproj_pixtral(cfg, state):
    """LlavaVisionModel's tensors for a Pixtral tower (Pixtral-12B's LLaVA,
    Mistral 3), in HF name order: the names by TensorNameMap, q_proj and
    k_proj rows permuted per head as LlamaModel.permute does, then the
    text model's [IMG_BREAK] embedding row as v.token_embd.img_break
    (llama.cpp places it; archc reads the text model's); all F32."""
    vc = cfg["vision_config"]
    heads = vc["num_attention_heads"]
    tmap = gguf.get_tensor_name_map(gguf.MODEL_ARCH.MMPROJ, max(vc["num_hidden_layers"], 3))
    out = []
    for hf in sorted(state):
        if not hf.startswith(("vision_tower.", "multi_modal_projector.")):
            continue
        t = np.asarray(state[hf], dtype=np.float32)
        if hf.endswith(("q_proj.weight", "k_proj.weight")):
            t = permute(t, heads)
        name = tmap.get_name(hf, try_suffixes=(".weight", ".bias"))
        assert name is not None, f"TensorNameMap has no mmproj name for {hf}"
        out.append((name, hf, t.copy(), F32))
    embed = next(k for k in state if k.endswith("embed_tokens.weight"))
    with open(os.path.join(cfg["_folder"], "tokenizer.json")) as f:
        brk = next(a["id"] for a in json.load(f)["added_tokens"] if a["content"] == "[IMG_BREAK]")
    out.append(("v.token_embd.img_break.weight", None, np.asarray(state[embed], dtype=np.float32)[brk].copy(), F32))
    return out
# The legacy script's names (its get_tensor_name: fc1 is ffn_down, fc2
# ffn_up) in its order: the projector, then the tower's modules.
LLAVA_NAMES = (("multi_modal_projector.linear_1", "mm.0"), ("multi_modal_projector.linear_2", "mm.2"),
               ("embeddings.class_embedding", "v.class_embd"), ("embeddings.patch_embedding", "v.patch_embd"),
               ("embeddings.position_embedding", "v.position_embd"), ("pre_layrnorm", "v.pre_ln"))
LLAVA_LAYER = (("self_attn.k_proj", "attn_k"), ("self_attn.v_proj", "attn_v"), ("self_attn.q_proj", "attn_q"),
               ("self_attn.out_proj", "attn_out"), ("layer_norm1", "ln1"), ("mlp.fc1", "ffn_down"),
               ("mlp.fc2", "ffn_up"), ("layer_norm2", "ln2"))
F16, F32 = gguf.GGMLQuantizationType.F16, gguf.GGMLQuantizationType.F32


def llava_feature_layers(cfg):
    """vision_feature_layer as non-negative hidden-state indices."""
    n, k = cfg["vision_config"]["num_hidden_layers"], cfg.get("vision_feature_layer", -2)
    return [x if x >= 0 else n + x + 1 for x in (k if isinstance(k, list) else [k])]


def to_mmproj_llava(cfg, state):
    """The legacy script's tensors: projector (2-D weights F16), tower up to
    the deepest feature layer (post_layernorm dropped), 4-D tensors F16."""
    def tower(name):  # transformers 5's vision_tower.* or llava-hf's vision_tower.vision_model.*
        return next((p + name for p in ("vision_tower.vision_model.", "vision_tower.") if p + name in state), None)
    names = []
    for hf, g in LLAVA_NAMES:
        if g.startswith("mm."):
            names += [(hf + x, g + x) for x in (".bias", ".weight")]
        elif hf.endswith("class_embedding"):
            names.append((tower(hf), g))
        else:
            names += [(tower(hf + x), g + x) for x in (".weight", ".bias") if tower(hf + x)]
    for i in range(max(llava_feature_layers(cfg))):
        names += [(tower(f"encoder.layers.{i}.{hf}{x}"), f"v.blk.{i}.{g}{x}") for hf, g in LLAVA_LAYER for x in (".weight", ".bias")]
    out = []
    for hf, g in names:
        t = np.asarray(state[hf], dtype=np.float32)
        out.append((g, hf, t.copy(), F16 if t.ndim == 4 or (g.startswith("mm.") and t.ndim == 2) else F32))
    return out


def to_mmproj_qwen2vl(cfg, state):
    """Qwen2VLVisionModel's tensors (Qwen2-VL's tower and Qwen2.5-VL's:
    its SwiGLU MLP as ffn_gate / ffn_up / ffn_down), in HF name order
    (visual.*, or transformers' model.visual.*): qkv split in place into
    q, k, v, the patch kernel into its two temporal slices, all F32."""
    tmap = gguf.get_tensor_name_map(gguf.MODEL_ARCH.MMPROJ, max(cfg["vision_config"]["depth"], 3))  # merger.mlp.{2}: see above
    out = []
    for hf in sorted(state):
        if not hf.startswith(("visual.", "model.visual.")):
            continue
        key = hf.removeprefix("model.")
        t = np.asarray(state[hf], dtype=np.float32)
        if key == "visual.patch_embed.proj.weight":
            assert t.shape[2] == 2, "Qwen2VLVisionModel splits a temporal_patch_size of 2 only"
            out += [("v.patch_embd.weight", hf, t[:, :, 0].copy(), F32), ("v.patch_embd.weight.1", hf, t[:, :, 1].copy(), F32)]
            continue
        parts = [(key, t)]
        if ".qkv." in key:
            c = t.shape[0] // 3
            parts = [(key.replace("qkv", x), t[k * c:(k + 1) * c]) for k, x in enumerate("qkv")]
        for k, part in parts:
            name = tmap.get_name(k, try_suffixes=(".weight", ".bias"))
            assert name is not None, f"TensorNameMap has no mmproj name for {k}"
            out.append((name, hf, part.copy(), F32))
    return out


def to_mmproj_qwen3vl(cfg, state):
    """Qwen3VLVisionModel's tensors (Qwen3-VL's tower, and Qwen3.5's,
    without DeepStack mergers), in HF name order: attn.qkv kept whole
    (attn_qkv), the patch kernel split into its two temporal slices (its
    bias v.patch_embd.bias), the merger's linear_fc1 / linear_fc2 as mm.0 /
    mm.2 and its norm as v.post_ln, DeepStack merger k's norm / linear_fc1 /
    linear_fc2 as v.deepstack.{b}.norm / fc1 / fc2 where b is the block it
    follows (deepstack_visual_indexes[k]), the rest by TensorNameMap; all
    F32."""
    tmap = gguf.get_tensor_name_map(gguf.MODEL_ARCH.MMPROJ, max(cfg["vision_config"]["depth"], 3))
    merger = {"linear_fc1": "mm.0", "linear_fc2": "mm.2", "norm": "v.post_ln"}
    deep = {"norm": "norm", "linear_fc1": "fc1", "linear_fc2": "fc2"}
    out = []
    for hf in sorted(state):
        if not hf.startswith(("visual.", "model.visual.")):
            continue
        key = hf.removeprefix("model.")
        t = np.asarray(state[hf], dtype=np.float32)
        if key.startswith("visual.deepstack_merger_list."):  # Qwen3VLVisionModel.modify_tensors
            k, mod, suffix = key.removeprefix("visual.deepstack_merger_list.").split(".", 2)
            b = cfg["vision_config"]["deepstack_visual_indexes"][int(k)]
            out.append((f"v.deepstack.{b}.{deep[mod]}.{suffix}", hf, t.copy(), F32))
            continue
        if key == "visual.patch_embed.proj.weight":
            assert t.shape[2] == 2, "Qwen3VLVisionModel splits a temporal_patch_size of 2 only"
            out += [("v.patch_embd.weight", hf, t[:, :, 0].copy(), F32), ("v.patch_embd.weight.1", hf, t[:, :, 1].copy(), F32)]
            continue
        if key == "visual.patch_embed.proj.bias":
            out.append(("v.patch_embd.bias", hf, t.copy(), F32))
            continue
        if key.startswith("visual.merger."):
            mod, suffix = key.removeprefix("visual.merger.").split(".", 1)
            out.append((merger[mod] + "." + suffix, hf, t.copy(), F32))
            continue
        name = tmap.get_name(key, try_suffixes=(".weight", ".bias"))
        assert name is not None, f"TensorNameMap has no mmproj name for {key}"
        out.append((name, hf, t.copy(), F32))
    return out


def to_mmproj(cfg, state):
    """[(GGUF name, HF name, array, type)] of the mmproj file, sorted by HF name."""
    tmap = gguf.get_tensor_name_map(gguf.MODEL_ARCH.MMPROJ, cfg["vision_config"]["num_hidden_layers"])
    out = []
    for hf in sorted(state):
        if not hf.startswith(VISION_PREFIXES) or "vision_model.head." in hf:
            continue
        key = hf
        if key.startswith("vision_tower.") and not key.startswith("vision_tower.vision_model."):
            key = "vision_tower.vision_model." + key[len("vision_tower."):]  # the names the converter maps
        key = key.replace("_weight", ".weight")
        name = tmap.get_name(key, try_suffixes=(".weight", ".bias"))
        assert name is not None, f"TensorNameMap has no mmproj name for {hf}"
        t = np.asarray(state[hf], dtype=np.float32) + np.float32("soft_emb_norm.weight" in key)
        out.append((name, hf, t.copy(), F16 if "input_projection" in key else F32))
    return out


def mmproj_base(w, name, cfg, proc, image_size, embed, ffn, blocks, heads):
    """The keys MmprojModel.set_gguf_parameters (and the writer's header)
    write before a family's own: type, name, file type F32, the vision
    encoder's flag, the projection (the text model's hidden size), sizes,
    the processor's mean and std."""
    w.add_type(gguf.GGUFType.MMPROJ)
    w.add_name(name)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_clip_has_vision_encoder(True)
    w.add_vision_projection_dim({**cfg, **cfg["text_config"]}["hidden_size"])
    w.add_vision_image_size(image_size)
    w.add_vision_patch_size(cfg["vision_config"]["patch_size"])
    w.add_vision_embedding_length(embed)
    w.add_vision_feed_forward_length(ffn)
    w.add_vision_block_count(blocks)
    w.add_vision_head_count(heads)
    w.add_vision_image_mean(proc["image_mean"])
    w.add_vision_image_std(proc["image_std"])


def write_mmproj(path, name, cfg, proc, tensors):
    """The mmproj file's keys, as the family's converter writes them, and tensors."""
    vc, ptype = cfg["vision_config"], MMPROJ[vision_kind(cfg)][0]
    w = gguf.GGUFWriter(path, "clip")
    if ptype == "mlp":  # the legacy script (--clip-model-is-vision --llava-projector)
        w.add_bool("clip.has_text_encoder", False)
        w.add_bool("clip.has_vision_encoder", True)
        w.add_bool("clip.has_llava_projector", True)
        w.add_file_type(0)
        w.add_name(name)
        w.add_description("image encoder for LLaVA")
        w.add_string("clip.projector_type", "mlp")
        for key, v in (("image_size", vc["image_size"]), ("patch_size", vc["patch_size"]), ("embedding_length", vc["hidden_size"]),
                       ("feed_forward_length", vc["intermediate_size"]), ("projection_dim", vc.get("projection_dim", 512)),
                       ("attention.head_count", vc["num_attention_heads"])):
            w.add_uint32("clip.vision." + key, v)
        w.add_float32("clip.vision.attention.layer_norm_epsilon", vc["layer_norm_eps"])
        layers = llava_feature_layers(cfg)
        w.add_uint32("clip.vision.block_count", max(layers))
        w.add_array("clip.vision.feature_layer", layers)
        w.add_array("clip.vision.image_mean", proc["image_mean"])
        w.add_array("clip.vision.image_std", proc["image_std"])
        w.add_bool("clip.use_gelu", vc.get("hidden_act") == "gelu")
    elif ptype == "qwen2vl_merger":  # MmprojModel.set_gguf_parameters, then Qwen2VLVisionModel's
        # feed_forward_length: hidden_size, renamed intermediate_size by the converter
        mmproj_base(w, name, cfg, proc, vc.get("image_size", 560), vc["embed_dim"], vc["hidden_size"], vc["depth"], vc["num_heads"])
        w.add_clip_projector_type(ptype)
        w.add_vision_attention_layernorm_eps(cfg.get("rms_norm_eps", 1e-6))  # the top-level config's (transformers 5 nests it: the default)
        w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    elif ptype == "pixtral":  # MmprojModel.set_gguf_parameters, then LlavaVisionModel's pixtral path
        mmproj_base(w, name, cfg, proc, vc["image_size"], vc["hidden_size"], vc["intermediate_size"],
                    vc["num_hidden_layers"], vc["num_attention_heads"])
        w.add_clip_projector_type(ptype)
        w.add_vision_attention_layernorm_eps(vc.get("layer_norm_eps", 1e-5))
        assert vc.get("hidden_act", "gelu") in ("silu", "gelu"), vc.get("hidden_act")
        if vc.get("hidden_act", "gelu") == "silu":
            w.add_vision_use_silu(True)
        else:
            w.add_vision_use_gelu(True)
        if "spatial_merge_size" in cfg:  # Mistral 3's (LLaVA's config has none)
            w.add_vision_spatial_merge_size(cfg["spatial_merge_size"])
        w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    elif ptype == "lfm2":  # MmprojModel.set_gguf_parameters, then LFM2VLModel's
        drop = -(cfg.get("vision_feature_layer", -1) + 1)  # the converter's vision_feature_layers_to_drop
        mmproj_base(w, name, cfg, proc, 256, vc["hidden_size"], vc["intermediate_size"],  # image_size: the converter's fixed 256
                    vc["num_hidden_layers"] - drop, vc["num_attention_heads"])
        w.add_clip_projector_type(ptype)
        w.add_vision_attention_layernorm_eps(vc.get("layer_norm_eps", 1e-6))
        w.add_vision_projector_scale_factor(cfg.get("downsample_factor", 2))
        w.add_vision_use_gelu(True)
        w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    elif ptype == "qwen2.5vl_merger":  # MmprojModel.set_gguf_parameters, then Qwen2VLVisionModel's for qwen2_5_vl
        mmproj_base(w, name, cfg, proc, vc.get("image_size", 560), vc["hidden_size"], vc["intermediate_size"], vc["depth"], vc["num_heads"])
        w.add_clip_projector_type(ptype)
        w.add_vision_use_silu(True)
        full = vc["fullatt_block_indexes"]  # evenly spaced, the converter checks: every n_wa_pattern-th block
        assert all(b - a == full[0] + 1 for a, b in zip(full, full[1:])), f"fullatt_block_indexes {full}"
        w.add_vision_n_wa_pattern(full[0] + 1)
        w.add_vision_attention_layernorm_eps(cfg.get("rms_norm_eps", 1e-6))
        if vc.get("window_size", 112) != 112:  # EXTENSION: llama.cpp's window is 112 pixels (Qwen2.5-VL's); the fixture's is smaller
            w.add_uint32(gguf.Keys.ClipVision.WINDOW_SIZE, vc["window_size"])
        w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    elif ptype == "qwen3vl_merger":  # MmprojModel.set_gguf_parameters, then Qwen3VLVisionModel's
        mmproj_base(w, name, cfg, proc, int(vc.get("num_position_embeddings", 2304) ** 0.5 * vc["patch_size"]),
                    vc["hidden_size"], vc["intermediate_size"], vc["depth"], vc["num_heads"])
        w.add_clip_projector_type(ptype)
        w.add_vision_use_gelu(True)
        w.add_vision_spatial_merge_size(vc["spatial_merge_size"])
        w.add_vision_attention_layernorm_eps(cfg["text_config"].get("rms_norm_eps", 1e-6))
        deep = [False] * vc["depth"]  # a list of depth entries: written even when none is a deepstack layer
        for i in vc.get("deepstack_visual_indexes", []):
            deep[i] = True
        if deep:
            w.add_vision_is_deepstack_layers(deep)
        w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    else:  # MmprojModel.set_gguf_parameters, then SmolVLMModel's or Gemma3VisionModel's
        mmproj_base(w, name, cfg, proc, vc["image_size"], vc["hidden_size"], vc["intermediate_size"],
                    vc["num_hidden_layers"], vc["num_attention_heads"])
        w.add_clip_projector_type(ptype)
        w.add_vision_attention_layernorm_eps(vc.get("layer_norm_eps", 1e-5 if ptype == "idefics3" else 1e-6))
        if ptype == "idefics3":
            w.add_vision_projector_scale_factor(cfg.get("scale_factor", 2))
            w.add_vision_use_gelu(True)
            w.add_vision_preproc_image_size(proc.get("size", {}).get("longest_edge", vc["image_size"]))
        else:  # the pooling kernel, written only when not llama.cpp's default 4
            w.add_vision_use_gelu(True)
            scale = (vc["image_size"] // vc["patch_size"]) // int(proc.get("image_seq_length", 256) ** 0.5)
            if scale > 0 and scale != 4:
                w.add_vision_projector_scale_factor(scale)
        w.add_quantization_version(gguf.GGML_QUANT_VERSION)
    for gname, _, data, qtype in tensors:
        w.add_tensor(gname, gguf.quants.quantize(data, qtype) if qtype != F32 else data, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_tokenizer(w, folder, vocab_size):
    """tokenizer.ggml.* of a BPE tokenizer.json as the converter writes it:
    tokens by id padded with [PAD{i}], types, then SpecialVocab's merges,
    special ids and chat template."""
    with open(os.path.join(folder, "tokenizer.json")) as f:
        tok = json.load(f)
    by_id = {i: t for t, i in tok["model"]["vocab"].items()}
    added = {a["id"]: a for a in tok.get("added_tokens", [])}
    tokens, types = [], []
    for i in range(vocab_size):
        a = added.get(i)
        tokens.append(a["content"] if a else by_id.get(i, f"[PAD{i}]"))
        types.append(gguf.TokenType.NORMAL if not a and i in by_id else gguf.TokenType.UNUSED if not a else
                     gguf.TokenType.CONTROL if a.get("special") else gguf.TokenType.USER_DEFINED)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    gguf.SpecialVocab(folder, load_merges=True).add_to_gguf(w)


def write_vision_twins(folder, out=None):
    """Writes a vision fixture's VISION_TWINS (into out, default the folder:
    scripts/bench_vision.sh converts its bench checkpoint so); returns the
    mmproj's tensors."""
    name = os.path.basename(folder)
    out = out or folder
    cfg, state = load_fixture(folder)
    kind = vision_kind(cfg)
    text = {}
    for hf, t in state.items():
        if hf.startswith(VISION_PREFIXES):
            continue
        for old, new in MMPROJ[kind][1]:
            if hf.startswith(old):
                hf = new + hf[len(old):]
                break
        text[hf.removeprefix("language_model.")] = t  # language_model.lm_head
    tcfg = dict(cfg["text_config"])
    if "tie_word_embeddings" in cfg:  # the wrapper's, as the text model reads it
        tcfg["tie_word_embeddings"] = cfg["tie_word_embeddings"]
    if cfg["model_type"] in QWEN3VL:  # Qwen3VLTextModel reads the DeepStack count from the wrapper's vision_config
        tcfg["vision_config"] = cfg["vision_config"]
    vocab = tcfg["vocab_size"]
    if kind == "mistral3":  # Mistral3Model: the wrapper's config, text_config merged in (the text fixture's path)
        tcfg = dict(cfg)
    w = gguf.GGUFWriter(os.path.join(out, VISION_TWINS[0]), GGUF_ARCH[tcfg["model_type"]])
    write_metadata(w, name, tcfg, gguf.LlamaFileType.ALL_F32, text)
    write_tokenizer(w, folder, vocab)
    for gname, _, data in to_gguf(tcfg, text):
        qtype, stored = storage(gname, data, gguf.LlamaFileType.ALL_F32, tcfg["model_type"])
        w.add_tensor(gname, stored, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    proc = {}  # processor configs, image_processor's keys at the top (MmprojModel.__init__)
    for fn in ("preprocessor_config.json", "processor_config.json"):
        if os.path.exists(os.path.join(folder, fn)):
            with open(os.path.join(folder, fn)) as f:
                c = json.load(f)
            proc.update(c)
            proc.update(c.get("image_processor") or {})
    mm = {"llava": to_mmproj_llava, "qwen2_vl": to_mmproj_qwen2vl, "qwen2_5_vl": to_mmproj_qwen2vl, "qwen3_5": to_mmproj_qwen3vl,
          "qwen3_5_moe": to_mmproj_qwen3vl, "qwen3_vl": to_mmproj_qwen3vl,
          "qwen3_vl_moe": to_mmproj_qwen3vl, "mistral3": to_mmproj_pixtral,
          "llava_pixtral": to_mmproj_pixtral, "lfm2_vl": to_mmproj_lfm2}.get(kind, to_mmproj)(dict(cfg, _folder=folder), state)
    write_mmproj(os.path.join(out, VISION_TWINS[1]), name, cfg, proc, mm)
    return mm
