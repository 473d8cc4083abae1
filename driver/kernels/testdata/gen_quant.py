"""Writes the storage-format test vectors in this folder: for each GGUF
type archc stores, random stored rows (<type>.raw, [ROWS, row bytes]) and
their dequantization by gguf-py (<type>.f32, [ROWS, COLS] little-endian f32),
the reference that archc's in-graph decoders must equal bit for bit
(driver/kernels/dequant_test.go).

Random bytes everywhere, except that every f16 scale field is a random
finite f16 (both signs, magnitudes 2^-14 .. 2^2), as real files hold.

Usage (gguf==0.19.0, numpy==2.4.6): python gen_quant.py
"""
import os

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants

ROWS, COLS = 4, 512
# type -> (block elements, block bytes, byte offsets of f16 fields)
TYPES = {
    T.Q8_0: (32, 34, [0]),
    T.Q4_0: (32, 18, [0]),
    T.Q4_1: (32, 20, [0, 2]),
    T.Q5_0: (32, 22, [0]),
    T.Q5_1: (32, 24, [0, 2]),
    T.Q4_K: (256, 144, [0, 2]),
    T.Q5_K: (256, 176, [0, 2]),
    T.Q6_K: (256, 210, [208]),
    T.F16: (1, 2, []),
    T.BF16: (1, 2, []),
}


def main():
    rng = np.random.default_rng(20261201)
    here = os.path.dirname(os.path.abspath(__file__))
    for t, (be, bb, f16s) in TYPES.items():
        nb = ROWS * COLS // be
        raw = rng.integers(0, 256, (nb, bb), dtype=np.uint8)
        for off in f16s:
            mag = np.exp2(rng.uniform(-14, 2, nb)) * rng.choice([-1.0, 1.0], nb)
            raw[:, off:off + 2] = mag.astype(np.float16).view(np.uint8).reshape(nb, 2)
        if t == T.F16:
            vals = (rng.standard_normal(ROWS * COLS) * 4).astype(np.float16)
            raw = vals.view(np.uint8).reshape(nb, bb)
        if t == T.BF16:
            vals = (rng.standard_normal(ROWS * COLS) * 4).astype(np.float32)
            raw = (vals.view(np.uint32) >> 16).astype(np.uint16).view(np.uint8).reshape(nb, bb)
        raw = raw.reshape(ROWS, -1)
        want = quants.dequantize(raw, t).astype("<f4").reshape(ROWS, COLS)
        assert np.isfinite(want).all(), t.name
        name = t.name.lower()
        raw.tofile(os.path.join(here, f"{name}.raw"))
        want.tofile(os.path.join(here, f"{name}.f32"))
        print(name, raw.shape, want.shape)


if __name__ == "__main__":
    main()
