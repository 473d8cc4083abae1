#!/usr/bin/env python3
"""Writes a random-weight SmolVLM-256M-shaped checkpoint for benchmarks
(scripts/bench_vision.sh): Idefics3ForConditionalGeneration with
SmolVLM-256M-Instruct's published shapes (SmolLM2-135M text model; a
SigLIP tower of 12 layers, hidden 768, 512-pixel tiles of 16-pixel
patches; pixel shuffle by 4: 64 image tokens a tile; image_seq_len 64,
longest edge 2048), bf16 weights, with the tokenizer, chat template and
processor config of the tiny idefics3 fixture (its ids all fall inside
the vocabulary). Speed depends on the shapes, not the values.

    python scripts/gen_bench_vlm.py OUT_DIR [SHAPE]   (torch, transformers)

SHAPE smolvlm-256m (the default, above) or qwen2-vl-2b: Qwen2-VL-2B-Instruct's
published shapes (Qwen2VLForConditionalGeneration: a 28-layer text model of
hidden 1536, GQA 12/2, SwiGLU 8960, M-RoPE sections [16, 24, 24], tied
head, vocabulary 151936; a 32-layer tower of 1280 wide, 16 heads, MLP
ratio 4, 14-pixel patches, temporal patch 2, 2×2 merger to 1536), bf16
weights drawn from N(0, 0.02) (norms 1, biases 0), with the tokenizer,
chat template and processor config of the tiny qwen2_vl vision fixture
(its ids fall inside the vocabulary) at the published 14-pixel patches
and pixel limits.

SHAPE qwen3.5-0.8b: Qwen3.5-0.8B's text model as its model cards give it
(Qwen3_5ForConditionalGeneration: 24 layers of hidden 1024, three gated
DeltaNet layers to one gated-attention layer, 8 heads on 2 kv heads of 256,
partial rotary 0.25, interleaved M-RoPE [11, 11, 10], SwiGLU 3584, tied,
vocabulary 248320; the DeltaNet heads Qwen3_5TextConfig's defaults: 16 key
heads, 32 value heads, 128 each) with Qwen3_5VisionConfig's default tower
(27 blocks of 1152, 16 heads, intermediate 4304, 16-pixel patches, a 48×48
position table; the 0.8B checkpoint's own tower config was not reachable
here) merging to 1024, bf16 N(0, 0.02) weights, with the tiny qwen3_5
vision fixture's tokenizer and template and Qwen3.5's processor settings
(16-pixel patches, mean and std 0.5, 65536 to 16777216 pixels).

SHAPE gemma3-4b: gemma-3-4b-it's published shapes
(Gemma3ForConditionalGeneration: the 4B text model, 34 layers of hidden
2560, 8 heads on 4 kv heads of 256, GeGLU 10240, five sliding (1024) to one
global layer, linear rope scaling 8 on the global layers, vocabulary
262208, tied; a SigLIP-So400m tower of 27 layers of 1152, 16 heads, MLP
4304, 14-pixel patches at 896 pixels: 4096 patches average-pooled to 256
image tokens), with the tiny gemma3 fixture's tokenizer and template and
Gemma 3's processor settings (896×896, mean and std 0.5, 256 tokens an
image, no pan and scan).

SHAPE gemma3-4b-tower-1b: gemma-3-4b-it's vision side as above (the tower
at 896 pixels, 256 image tokens) on Gemma-3-1B's text shapes (26 layers of
hidden 1152, 4 heads on 1 kv head of 256, GeGLU 6912, sliding window 512,
vocabulary 262144, tied; RoPE 1e6 global, 1e4 sliding, no scaling): a
Gemma 3 pair whose F32 GGUF files fit this disk twice over (llama.cpp's
and archc's packed copy), for the llama.cpp comparison.

SHAPE llava-1.5-tinyllama: LLaVA-1.5's CLIP ViT-L/14-336 tower (24 layers
of 1024, 16 heads, MLP 4096, quick GELU; read at layer -2, the class row
dropped: 576 image tokens) and GELU projector, on a TinyLlama-1.1B-shaped
Llama decoder (22 layers of hidden 2048, 32 heads on 4 kv heads, SwiGLU
5632, vocabulary 32000, untied) instead of LLaVA-1.5's 7B Vicuna, with the
tiny llava fixture's tokenizer and template and LLaVA-1.5's processor
(CLIPImageProcessor: shortest edge 336, center crop 336, bicubic, CLIP mean
and std). (llava-interleave-qwen-0.5b's SigLIP tower and Qwen2 decoder
are not an arch that archc's llava.arch matches.)

SHAPE lfm2-vl-450m: LFM2-VL-450M's published shapes
(Lfm2VlForConditionalGeneration: LFM2-350M, 16 layers of hidden 1024, ten
gated short-convolution layers and six attention layers at 2, 5, 8, 10,
12, 14, 16 heads on 8 kv heads, SwiGLU 6656 auto-adjusted to 4608,
vocabulary 65536, tied; a SigLIP2 NaFlex base tower of 12 layers of 768,
12 heads, MLP 3072, 16-pixel patches, a 16×16 position table; a 2×2 pixel
unshuffle to a 2560-wide projector), with the tiny lfm2_vl fixture's
tokenizer and template and LFM2-VL-450M's processor settings (512-pixel
tiles, 2 to 10 tiles, 64 to 256 image tokens, at most 1024 patches a
tile, pixel tolerance 2.0, no thumbnail).
"""
import json
import os
import shutil
import sys

import torch
from transformers import Idefics3Config, Idefics3ForConditionalGeneration

out = sys.argv[1]
shape = sys.argv[2] if len(sys.argv) > 2 else "smolvlm-256m"
torch.manual_seed(0)
here = os.path.dirname(os.path.abspath(__file__))
if shape == "qwen2-vl-2b":
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration
    fix = os.path.join(here, "..", "golden", "testdata", "vision", "qwen2_vl")
    tiny = json.load(open(os.path.join(fix, "config.json")))
    cfg = Qwen2VLConfig(
        text_config=dict(vocab_size=151936, hidden_size=1536, intermediate_size=8960, num_hidden_layers=28,
                         num_attention_heads=12, num_key_value_heads=2, rms_norm_eps=1e-6, max_position_embeddings=32768,
                         rope_parameters=dict(rope_type="default", rope_theta=1000000.0, mrope_section=[16, 24, 24]),
                         bos_token_id=tiny["text_config"]["bos_token_id"], eos_token_id=tiny["text_config"]["eos_token_id"]),
        vision_config=dict(depth=32, embed_dim=1280, hidden_size=1536, num_heads=16, mlp_ratio=4, patch_size=14,
                           temporal_patch_size=2, spatial_merge_size=2, in_channels=3),
        image_token_id=tiny["image_token_id"], video_token_id=tiny["video_token_id"],
        vision_start_token_id=tiny["vision_start_token_id"], vision_end_token_id=tiny["vision_end_token_id"],
        tie_word_embeddings=True)
    with torch.device("meta"):
        model = Qwen2VLForConditionalGeneration(cfg)
    model = model.to_empty(device="cpu").to(torch.bfloat16)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.02)
            elif name.endswith("bias"):
                p.zero_()
            else:
                p.fill_(1.0)
    model.save_pretrained(out)
    for f in ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja"]:
        shutil.copy(os.path.join(fix, f), out)
    proc = json.load(open(os.path.join(fix, "processor_config.json")))
    proc["image_processor"].update(patch_size=14, size={"shortest_edge": 56 * 56, "longest_edge": 28 * 28 * 1280})
    json.dump(proc, open(os.path.join(out, "processor_config.json"), "w"), indent=2)
    print(out)
    sys.exit(0)
if shape == "qwen3.5-0.8b":
    from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration
    fix = os.path.join(here, "..", "golden", "testdata", "vision", "qwen3_5")
    tiny = json.load(open(os.path.join(fix, "config.json")))
    cfg = Qwen3_5Config(
        text_config=dict(vocab_size=248320, hidden_size=1024, intermediate_size=3584, num_hidden_layers=24,
                         num_attention_heads=8, num_key_value_heads=2, head_dim=256, rms_norm_eps=1e-6,
                         max_position_embeddings=262144, mtp_num_hidden_layers=0,
                         rope_parameters=dict(rope_type="default", rope_theta=10000000.0, partial_rotary_factor=0.25,
                                              mrope_section=[11, 11, 10], mrope_interleaved=True),
                         bos_token_id=tiny["text_config"]["bos_token_id"], eos_token_id=tiny["text_config"]["eos_token_id"]),
        vision_config=dict(out_hidden_size=1024),
        image_token_id=tiny["image_token_id"], video_token_id=tiny["video_token_id"],
        vision_start_token_id=tiny["vision_start_token_id"], vision_end_token_id=tiny["vision_end_token_id"],
        tie_word_embeddings=True)
    with torch.device("meta"):
        model = Qwen3_5ForConditionalGeneration(cfg)
    model = model.to_empty(device="cpu").to(torch.bfloat16)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.02)
            elif name.endswith("bias"):
                p.zero_()
            elif name.endswith(("A_log", "dt_bias")) or "language_model" in name and name.endswith("norm.weight") and "linear_attn" not in name:
                p.zero_()  # A = 1, dt bias 0; (1 + w) RMSNorms at 1
            else:
                p.fill_(1.0)
    model.save_pretrained(out)
    for f in ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja"]:
        shutil.copy(os.path.join(fix, f), out)
    proc = json.load(open(os.path.join(fix, "processor_config.json")))
    proc["image_processor"].update(patch_size=16, image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5],
                                   size={"shortest_edge": 65536, "longest_edge": 16777216})
    json.dump(proc, open(os.path.join(out, "processor_config.json"), "w"), indent=2)
    print(out)
    sys.exit(0)


def random_bf16(model_cls, cfg, zero=lambda name: False):
    """model_cls(cfg) in bf16 with N(0, 0.02) matrices, biases 0, other
    vectors 1 (0 where zero(name): (1 + w) norms)."""
    with torch.device("meta"):
        model = model_cls(cfg)
    model = model.to_empty(device="cpu").to(torch.bfloat16)
    model.tie_weights()  # to_empty unties a tied head
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                p.normal_(0.0, 0.02)
            elif name.endswith("bias") or zero(name):
                p.zero_()
            else:
                p.fill_(1.0)
    return model


def save_with_fixture(model, fixture, update):
    """Saves model into out with the fixture's tokenizer and template and
    its processor config updated by update(proc)."""
    model.save_pretrained(out)
    fix = os.path.join(here, "..", "golden", "testdata", "vision", fixture)
    for f in ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja"]:
        shutil.copy(os.path.join(fix, f), out)
    proc = json.load(open(os.path.join(fix, "processor_config.json")))
    update(proc)
    json.dump(proc, open(os.path.join(out, "processor_config.json"), "w"), indent=2)
    print(out)
    sys.exit(0)


def fixture_config(fixture):
    return json.load(open(os.path.join(here, "..", "golden", "testdata", "vision", fixture, "config.json")))


if shape in ("gemma3-4b", "gemma3-4b-tower-1b"):
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration
    tiny = fixture_config("gemma3")
    if shape == "gemma3-4b":
        text = dict(vocab_size=262208, hidden_size=2560, intermediate_size=10240, num_hidden_layers=34,
                    num_attention_heads=8, num_key_value_heads=4, sliding_window=1024,
                    rope_parameters=dict(full_attention=dict(rope_type="linear", factor=8.0, rope_theta=1000000.0),
                                         sliding_attention=dict(rope_type="default", rope_theta=10000.0)))
    else:
        text = dict(vocab_size=262144, hidden_size=1152, intermediate_size=6912, num_hidden_layers=26,
                    num_attention_heads=4, num_key_value_heads=1, sliding_window=512,
                    rope_parameters=dict(full_attention=dict(rope_type="default", rope_theta=1000000.0),
                                         sliding_attention=dict(rope_type="default", rope_theta=10000.0)))
    cfg = Gemma3Config(
        text_config=dict(text, head_dim=256, query_pre_attn_scalar=256, rms_norm_eps=1e-6, max_position_embeddings=131072,
                         bos_token_id=tiny["text_config"]["bos_token_id"], eos_token_id=tiny["text_config"]["eos_token_id"],
                         pad_token_id=tiny["text_config"]["pad_token_id"]),
        vision_config=dict(hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, num_attention_heads=16,
                           image_size=896, patch_size=14, vision_use_head=False),
        mm_tokens_per_image=256, boi_token_index=tiny["boi_token_index"], eoi_token_index=tiny["eoi_token_index"],
        image_token_index=tiny["image_token_index"], tie_word_embeddings=True)
    # Gemma3RMSNorm scales by (1 + w): the text model's norms and the projector's at 0.
    model = random_bf16(Gemma3ForConditionalGeneration, cfg,
                        zero=lambda n: "norm" in n and "vision_tower" not in n and n.endswith("weight"))

    def gemma3_proc(proc):
        proc["image_seq_length"] = 256
        proc["image_processor"].update(size={"height": 896, "width": 896})
    save_with_fixture(model, "gemma3", gemma3_proc)
if shape == "llava-1.5-tinyllama":
    from transformers import LlavaConfig, LlavaForConditionalGeneration
    tiny = fixture_config("llava")
    cfg = LlavaConfig(
        text_config=dict(model_type="llama", vocab_size=32000, hidden_size=2048, intermediate_size=5632,
                         num_hidden_layers=22, num_attention_heads=32, num_key_value_heads=4, rms_norm_eps=1e-5,
                         max_position_embeddings=2048, rope_parameters=dict(rope_type="default", rope_theta=10000.0),
                         bos_token_id=tiny["text_config"]["bos_token_id"], eos_token_id=tiny["text_config"]["eos_token_id"],
                         pad_token_id=tiny["pad_token_id"], tie_word_embeddings=False),
        vision_config=dict(model_type="clip_vision_model", hidden_size=1024, intermediate_size=4096,
                           num_hidden_layers=24, num_attention_heads=16, image_size=336, patch_size=14,
                           projection_dim=768, hidden_act="quick_gelu", layer_norm_eps=1e-5),
        vision_feature_layer=-2, vision_feature_select_strategy="default", projector_hidden_act="gelu",
        image_token_index=tiny["image_token_index"], pad_token_id=tiny["pad_token_id"], tie_word_embeddings=False)
    model = random_bf16(LlavaForConditionalGeneration, cfg)

    def llava_proc(proc):
        proc["patch_size"] = 14
        proc["image_processor"].update(size={"shortest_edge": 336}, crop_size={"height": 336, "width": 336})
    save_with_fixture(model, "llava", llava_proc)
if shape == "lfm2-vl-450m":
    from transformers import Lfm2VlConfig, Lfm2VlForConditionalGeneration
    tiny = fixture_config("lfm2_vl")
    attn = {2, 5, 8, 10, 12, 14}
    cfg = Lfm2VlConfig(
        text_config=dict(model_type="lfm2", vocab_size=65536, hidden_size=1024, intermediate_size=6656,
                         num_hidden_layers=16, num_attention_heads=16, num_key_value_heads=8,
                         layer_types=["full_attention" if i in attn else "conv" for i in range(16)],
                         block_auto_adjust_ff_dim=True, block_ffn_dim_multiplier=1.0, block_multiple_of=256,
                         conv_L_cache=3, conv_bias=False, norm_eps=1e-5, max_position_embeddings=128000,
                         rope_parameters=dict(rope_type="default", rope_theta=1000000.0),
                         bos_token_id=tiny["text_config"]["bos_token_id"], eos_token_id=tiny["text_config"]["eos_token_id"],
                         pad_token_id=tiny["text_config"]["pad_token_id"], tie_word_embeddings=True),
        vision_config=dict(model_type="siglip2_vision_model", hidden_size=768, intermediate_size=3072,
                           num_hidden_layers=12, num_attention_heads=12, num_patches=256, patch_size=16,
                           vision_use_head=False),
        downsample_factor=2, projector_hidden_size=2560, projector_hidden_act="gelu", projector_bias=True,
        projector_use_layernorm=True, image_token_id=tiny["image_token_id"], tie_word_embeddings=True)
    model = random_bf16(Lfm2VlForConditionalGeneration, cfg)

    def lfm2_proc(proc):
        proc["image_processor"].update(encoder_patch_size=16, tile_size=512, size={"height": 512, "width": 512},
                                       min_tiles=2, max_tiles=10, min_image_tokens=64, max_image_tokens=256,
                                       max_num_patches=1024, max_pixels_tolerance=2.0, use_thumbnail=False,
                                       do_image_splitting=True, downsample_factor=2)
    save_with_fixture(model, "lfm2_vl", lfm2_proc)
if shape != "smolvlm-256m":
    sys.exit(f"unknown shape {shape!r}: smolvlm-256m, qwen2-vl-2b, qwen3.5-0.8b, gemma3-4b, llava-1.5-tinyllama "
             "or lfm2-vl-450m")
cfg = Idefics3Config(
    text_config=dict(model_type="llama", vocab_size=49280, hidden_size=576, intermediate_size=1536,
                     num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3, rms_norm_eps=1e-5,
                     max_position_embeddings=8192, rope_theta=100000.0, tie_word_embeddings=False),
    vision_config=dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
                       image_size=512, patch_size=16),
    scale_factor=4, image_token_id=309)
model = Idefics3ForConditionalGeneration(cfg).to(torch.bfloat16)
model.save_pretrained(out)
fix = os.path.join(here, "..", "golden", "testdata", "vision", "idefics3")
for f in ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja"]:
    shutil.copy(os.path.join(fix, f), out)
proc = json.load(open(os.path.join(fix, "processor_config.json")))
proc["image_seq_len"] = 64
proc["image_processor"]["size"] = {"longest_edge": 2048}
proc["image_processor"]["max_image_size"] = {"longest_edge": 512}
json.dump(proc, open(os.path.join(out, "processor_config.json"), "w"), indent=2)
print(out)
