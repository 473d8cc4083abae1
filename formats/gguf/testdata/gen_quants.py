#!/usr/bin/env python3
"""Writes quants.json: random ggml blocks and their gguf-py dequantization.

For each type, raw bytes of a few blocks (random, with the float16 scale
fields set to finite values) and the float32 bit patterns that
gguf.quants.dequantize returns for them. TestDequantizeMatchesGGUFPy checks
Dequantize against them bit for bit. Run by hand (needs numpy and
gguf==0.19.0); the output is committed.

    python formats/gguf/testdata/gen_quants.py
"""
import json
import os

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf.quants import dequantize

rng = np.random.default_rng(20240607)

# type -> (block elements, block bytes, byte offsets of float16 scale fields)
LAYOUT = {
    "Q4_0": (32, 18, [0]),
    "Q4_1": (32, 20, [0, 2]),
    "Q5_0": (32, 22, [0]),
    "Q5_1": (32, 24, [0, 2]),
    "Q8_0": (32, 34, [0]),
    "Q4_K": (256, 144, [0, 2]),
    "Q5_K": (256, 176, [0, 2]),
    "Q6_K": (256, 210, [208]),
}


def f16_bytes(v):
    return np.array([v], dtype="<f2").tobytes()


cases = []
for name, (be, bb, fields) in LAYOUT.items():
    nblocks = 3
    raw = bytearray(rng.integers(0, 256, size=nblocks * bb, dtype=np.uint8).tobytes())
    for b in range(nblocks):
        for off in fields:
            # a mix of magnitudes, including a subnormal scale in one block
            v = rng.normal() * (1e-6 if b == 2 else 0.05)
            raw[b * bb + off : b * bb + off + 2] = f16_bytes(v)
    arr = np.frombuffer(bytes(raw), dtype=np.uint8)
    out = dequantize(arr, getattr(T, name)).astype("<f4")
    assert out.size == nblocks * be
    cases.append({"type": name, "raw": bytes(raw).hex(), "want": out.view("<u4").tolist()})

# Plain float types: random finite values plus edge cases.
f16 = np.concatenate([rng.normal(size=29).astype("<f2"), np.array([np.inf, -np.inf, 6e-8, -0.0, 65504.0, 1e-5], dtype="<f2")])
cases.append({"type": "F16", "raw": f16.tobytes().hex(), "want": dequantize(f16.view(np.uint8), T.F16).astype("<f4").view("<u4").tolist()})
bf = (rng.normal(size=32).astype("<f4").view("<u4") >> 16).astype("<u2")
cases.append({"type": "BF16", "raw": bf.tobytes().hex(), "want": dequantize(bf.view(np.uint8), T.BF16).astype("<f4").view("<u4").tolist()})
f32 = rng.normal(size=16).astype("<f4")
cases.append({"type": "F32", "raw": f32.tobytes().hex(), "want": dequantize(f32.view(np.uint8), T.F32).astype("<f4").view("<u4").tolist()})

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "quants.json"), "w") as fh:
    json.dump(cases, fh, separators=(",", ":"))
    fh.write("\n")
