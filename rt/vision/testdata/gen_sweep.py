#!/usr/bin/env python
"""Write a large, uncommitted comparison set for TestSweepAgainstPIL.

Usage: python gen_sweep.py OUTDIR   (then VISION_SWEEP_DIR=OUTDIR go test -run Sweep -v ./rt/vision)

OUTDIR gets (about 60 MB, seeded):
  resize.bin      300 random PIL Image.resize cases, all five filters
                  (header <5i: w h ow oh filter>, source RGB, PIL output)
  img/            150 random JPEG (baseline, progressive, grey, CMYK, restart
                  markers, random quality/subsampling) and lossy WebP files,
                  with load_image's RGB (.rgb) and list.txt
  big/            6 photo-sized images (up to 3024x4032) with the default
                  Idefics3ImageProcessorPil's pixel_values (.f32) and list.txt
"""
import os, struct, sys
import numpy as np
from PIL import Image
from transformers.image_utils import load_image
from transformers.models.idefics3.image_processing_pil_idefics3 import Idefics3ImageProcessorPil

out_dir = sys.argv[1]
os.makedirs(os.path.join(out_dir, "img"), exist_ok=True)
os.makedirs(os.path.join(out_dir, "big"), exist_ok=True)
rng = np.random.RandomState(7)

def natural(w, h, seed, noise=None):
    r = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = np.stack([128 + 100 * np.sin(xx / max(w, 1) * r.uniform(2, 20) + seed),
                  128 + 100 * np.cos(yy / max(h, 1) * r.uniform(2, 20) - seed),
                  (xx * r.randint(1, 9) + yy * r.randint(1, 9)) % 256], -1)
    a += r.normal(0, r.uniform(0, 30) if noise is None else noise, a.shape).astype(np.float32)
    return np.clip(a, 0, 255).astype(np.uint8)

with open(os.path.join(out_dir, "resize.bin"), "wb") as f:
    for i in range(300):
        w, h = rng.randint(1, 400), rng.randint(1, 300)
        ow, oh = rng.randint(1, 300), rng.randint(1, 300)
        if i % 3 == 0:
            ow, oh = max(1, w // rng.randint(2, 40)), max(1, h // rng.randint(2, 40))
        a = natural(w, h, i) if i % 2 else rng.randint(0, 256, (h, w, 3)).astype(np.uint8)
        flt = [1, 2, 3, 4, 5][i % 5]
        r = np.array(Image.fromarray(a).resize((ow, oh), resample=flt))
        f.write(struct.pack("<5i", w, h, ow, oh, flt)); f.write(a.tobytes()); f.write(r.tobytes())

with open(os.path.join(out_dir, "img", "list.txt"), "w") as lst:
    for i in range(150):
        w, h = rng.randint(1, 320), rng.randint(1, 240)
        im = Image.fromarray(natural(w, h, 1000 + i))
        q = int(rng.randint(20, 101))
        kind = i % 6
        if kind == 0:
            name, kw = "a%d.jpg" % i, dict(quality=q, subsampling=int(rng.randint(0, 3)))
        elif kind == 1:
            name, kw = "b%d.jpg" % i, dict(quality=q, progressive=True, subsampling=int(rng.randint(0, 3)))
        elif kind == 2:
            name, kw = "c%d.jpg" % i, dict(quality=q); im = im.convert("L")
        elif kind == 3:
            name, kw = "d%d.webp" % i, dict(quality=q)
        elif kind == 4:
            name, kw = "e%d.jpg" % i, dict(quality=max(q, 50)); im = im.convert("CMYK")
        else:
            name, kw = "f%d.jpg" % i, dict(quality=q, optimize=True, restart_marker_blocks=int(rng.randint(1, 9)))
        path = os.path.join(out_dir, "img", name)
        im.save(path, **kw)
        arr = np.array(load_image(path))
        arr.tofile(path + ".rgb")
        lst.write("%s %d %d\n" % (name, arr.shape[1], arr.shape[0]))

ip = Idefics3ImageProcessorPil()
with open(os.path.join(out_dir, "big", "list.txt"), "w") as lst:
    for i, (w, h, ext) in enumerate([(1920, 1080, "jpg"), (1000, 3000, "jpg"), (3024, 4032, "jpg"),
                                     (800, 600, "png"), (333, 2000, "webp"), (4000, 300, "jpg")]):
        name = "big%d.%s" % (i, ext)
        path = os.path.join(out_dir, "big", name)
        Image.fromarray(natural(w, h, i, noise=8)).save(path, **({"quality": 90} if ext != "png" else {}))
        res = ip(images=[load_image(path)], return_tensors="np", return_row_col_info=True)
        pv = res["pixel_values"][0].astype("<f4")
        pv.tofile(path + ".f32")
        lst.write("%s %d %d %d\n" % (name, res["rows"][0][0], res["cols"][0][0], pv.shape[0]))
