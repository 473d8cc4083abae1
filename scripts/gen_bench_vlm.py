#!/usr/bin/env python3
"""Writes a random-weight SmolVLM-256M-shaped checkpoint for benchmarks
(scripts/bench_vision.sh): Idefics3ForConditionalGeneration with
SmolVLM-256M-Instruct's published shapes (SmolLM2-135M text model; a
SigLIP tower of 12 layers, hidden 768, 512-pixel tiles of 16-pixel
patches; pixel shuffle by 4: 64 image tokens a tile; image_seq_len 64,
longest edge 2048), bf16 weights, with the tokenizer, chat template and
processor config of the tiny idefics3 fixture (its ids all fall inside
the vocabulary). Speed depends on the shapes, not the values.

    python scripts/gen_bench_vlm.py OUT_DIR   (torch, transformers)
"""
import json
import os
import shutil
import sys

import torch
from transformers import Idefics3Config, Idefics3ForConditionalGeneration

out = sys.argv[1]
torch.manual_seed(0)
cfg = Idefics3Config(
    text_config=dict(model_type="llama", vocab_size=49280, hidden_size=576, intermediate_size=1536,
                     num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3, rms_norm_eps=1e-5,
                     max_position_embeddings=8192, rope_theta=100000.0, tie_word_embeddings=False),
    vision_config=dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12,
                       image_size=512, patch_size=16),
    scale_factor=4, image_token_id=309)
model = Idefics3ForConditionalGeneration(cfg).to(torch.bfloat16)
model.save_pretrained(out)
fix = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden", "testdata", "vision", "idefics3")
for f in ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja"]:
    shutil.copy(os.path.join(fix, f), out)
proc = json.load(open(os.path.join(fix, "processor_config.json")))
proc["image_seq_len"] = 64
proc["image_processor"]["size"] = {"longest_edge": 2048}
proc["image_processor"]["max_image_size"] = {"longest_edge": 512}
json.dump(proc, open(os.path.join(out, "processor_config.json"), "w"), indent=2)
print(out)
