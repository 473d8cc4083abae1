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
if shape != "smolvlm-256m":
    sys.exit(f"unknown shape {shape!r}: smolvlm-256m, qwen2-vl-2b or qwen3.5-0.8b")
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
