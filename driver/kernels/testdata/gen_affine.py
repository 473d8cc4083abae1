"""Writes the MLX affine test vectors in this folder: for each case, random
weights quantized by mlx.core.quantize, laid out as archc packs them
(driver/weights PackAffine: per group, scale and bias in their dtype then the
group's packed bytes) in mlx_affine<bits>_g<gs>_<dtype>.raw ([ROWS, row
bytes]), and mlx.core.dequantize's values in the .f32 file ([ROWS, COLS]
little-endian f32): the reference archc's in-graph decoder must equal bit
for bit (driver/kernels/kernels_test.go).

Usage (mlx[cpu]==0.32.4, numpy==2.4.6): python gen_affine.py
"""
import os

import mlx.core as mx
import numpy as np

ROWS, COLS = 4, 512
CASES = [(4, 64, "bf16"), (4, 32, "f16"), (8, 64, "f32"), (3, 32, "bf16"), (2, 128, "f16"), (5, 64, "f32"), (6, 32, "bf16")]
DTYPES = {"bf16": mx.bfloat16, "f16": mx.float16, "f32": mx.float32}


def main():
    mx.random.seed(20261201)
    here = os.path.dirname(os.path.abspath(__file__))
    for bits, gs, dt in CASES:
        w = (mx.random.normal((ROWS, COLS)) * 0.05).astype(DTYPES[dt])
        q, s, b = mx.quantize(w, group_size=gs, bits=bits)
        want = np.array(mx.dequantize(q, s, b, group_size=gs, bits=bits).astype(mx.float32))
        ng = COLS // gs
        qb = np.array(q).view(np.uint8).reshape(ROWS, ng, gs * bits // 8)
        sb = np.array(s.view(mx.uint8) if dt != "f32" else s.view(mx.uint8)).reshape(ROWS, ng, -1)
        bb = np.array(b.view(mx.uint8)).reshape(ROWS, ng, -1)
        raw = np.concatenate([sb, bb, qb], axis=2).reshape(ROWS, -1)
        name = f"mlx_affine{bits}_g{gs}_{dt}"
        raw.tofile(os.path.join(here, name + ".raw"))
        want.astype("<f4").tofile(os.path.join(here, name + ".f32"))
        print(name, raw.shape, want.shape)


if __name__ == "__main__":
    main()
