#!/usr/bin/env python
"""Expected Gemma 3 pan and scan from transformers' PIL backend.

Run from this directory with the oracle venv (transformers 5.x, Pillow):
  /tmp/oracle/bin/python gen_pan_and_scan.py
It processes images computed from a formula (pattern() here and in
panscan_test.go: no image files) with the Gemma 3 vision fixture's
Gemma3Processor (golden/testdata/vision/gemma3: 16x16 tiles, 4 soft tokens)
and do_pan_and_scan=True, and writes pan_and_scan.json: per case the
number of crops, the tiles' shape, the sha256 of pixel_values as float32
little-endian bytes, and the processor's input_ids decoded (the prompt
with its image expanded).
"""
import hashlib, json
import numpy as np
from PIL import Image
import transformers
from transformers import AutoProcessor

FIXTURE = "../../../golden/testdata/vision/gemma3"

def pattern(w, h):
    y, x = np.mgrid[0:h, 0:w].astype(np.int64)
    return np.stack([(x * 7 + y * 3) % 256, (x * y + 5 * x) % 256, (x + 2 * y * y) % 256], -1).astype(np.uint8)

CASES = [  # name, width, height, pan-and-scan parameters (None: the defaults)
    ("wide_4", 1200, 300, {}),
    ("tall_3", 300, 1000, {}),          # the last crop is cut at the edge (334, 334, 332 rows)
    ("below_ratio", 500, 450, {}),      # 1.11 < 1.2: no crops
    ("crops_too_small", 520, 200, {}),  # 2 crops of 260x200: under 256, none
    ("custom", 900, 200, {"pan_and_scan_min_crop_size": 64, "pan_and_scan_max_num_crops": 2, "pan_and_scan_min_ratio_to_activate": 1.5}),
    ("odd_7", 1001, 143, {"pan_and_scan_min_crop_size": 100, "pan_and_scan_max_num_crops": 8}),
]

proc = AutoProcessor.from_pretrained(FIXTURE)
out = {"transformers": transformers.__version__, "prompt": "<bos>Look: <start_of_image> now", "cases": []}
for name, w, h, kw in CASES:
    img = Image.fromarray(pattern(w, h))
    r = proc(images=[img], text=out["prompt"], do_pan_and_scan=True, return_tensors="np", **kw)
    pv = np.asarray(r["pixel_values"], dtype=np.float32)
    crops = pv.shape[0] - 1  # the whole image, then its crops
    out["cases"].append({
        "name": name, "width": w, "height": h, "params": kw, "crops": crops,
        "shape": list(pv.shape), "sha256": hashlib.sha256(pv.astype("<f4").tobytes()).hexdigest(),
        "first": [float(v) for v in pv.reshape(-1)[:4]],
        "text": proc.tokenizer.decode(r["input_ids"][0]),
    })
json.dump(out, open("pan_and_scan.json", "w"), indent=1)
print("\n".join(f"{c['name']}: {c['crops']} crops, {c['shape']}" for c in out["cases"]))
