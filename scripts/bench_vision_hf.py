#!/usr/bin/env python3
"""The HF transformers peer of scripts/bench_vision.sh: one image through a
vision-language model folder in fp32 on the CPU (eager attention), with the
folder's processor (its PIL backend), greedy. Prints one JSON object: the
processor's time, the image encoder's (get_image_features: tower and
projector, every tile; given the processor outputs its signature names),
time to first token (processor + encoder + the prompt's forward), the tile
count and the image token count (the image placeholder's id in the prompt).

    python scripts/bench_vision_hf.py MODEL_DIR IMAGE PROMPT THREADS
"""
import inspect
import json
import sys
import time

import torch
from PIL import Image
from transformers import AutoModelForImageTextToText, AutoProcessor

model_dir, image, prompt, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
torch.set_num_threads(threads)
model = AutoModelForImageTextToText.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager").eval()
proc = AutoProcessor.from_pretrained(model_dir)
messages = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": prompt}]}]
text = proc.apply_chat_template(messages, add_generation_prompt=True)
img = Image.open(image).convert("RGB")
with torch.inference_mode():
    t0 = time.perf_counter()
    inputs = proc(text=text, images=[img], return_tensors="pt")
    t1 = time.perf_counter()
    named = inspect.signature(model.model.get_image_features).parameters
    feats = model.model.get_image_features(**{k: v for k, v in inputs.items() if k in named and k not in ("input_ids", "attention_mask")})
    t2 = time.perf_counter()
    model(**inputs, logits_to_keep=1)
    t3 = time.perf_counter()
image_id = getattr(model.config, "image_token_id", None)
image_id = image_id if image_id is not None else model.config.image_token_index
tiles = int(inputs["pixel_values"].shape[1]) if inputs["pixel_values"].dim() == 5 else int(inputs["pixel_values"].shape[0])
print(json.dumps({"processor_s": t1 - t0, "image_encode_s": t2 - t1, "time_to_first_token_s": (t1 - t0) + (t3 - t2),
                  "image_tiles": tiles, "image_tokens": int((inputs["input_ids"] == image_id).sum()), "prompt_tokens": int(inputs["input_ids"].shape[1]), "threads": threads}))
