#!/usr/bin/env python
"""Generate rt/vision test data from PIL and transformers (PIL backend).

Run from this directory with a Python that has transformers 5.x and Pillow
(the oracle venv: /tmp/oracle/bin/python gen_vision_testdata.py). Seeded and
deterministic. Writes:
  images/*              encoded inputs built with PIL
  manifest.json         per case: file, PIL mode, load_image size, processor
                        grid and tile shape, offsets into blob
  blob.bin.gz           gzip of concatenated sections (offsets in manifest):
                        load_image RGB uint8 HWC; processor pixel_values as
                        uint8 (the exact pre-rescale values; the generator
                        asserts that rescale+normalize of them reproduces
                        transformers' float32 bit for bit); a few raw float32
                        pixel_values; PIL resize outputs per filter
  extra.json            small expectations kept out of the blob
  proc_v5/, proc_legacy/  processor folders for LoadProcessor
"""
import gzip, io, json, os, shutil, struct, types, zlib
import numpy as np
from PIL import Image
import transformers
from transformers.image_utils import load_image
from transformers.models.idefics3.image_processing_pil_idefics3 import Idefics3ImageProcessorPil
from transformers.models.idefics3.processing_idefics3 import Idefics3Processor

rng = np.random.RandomState(20260601)
os.makedirs("images", exist_ok=True)
blob = bytearray()
manifest = {"transformers": transformers.__version__, "pillow": Image.__version__, "cases": [], "resize": [], "expand": [], "prompts": []}

def put(b):
    off = len(blob)
    blob.extend(b)
    return [off, len(b)]

def natural(w, h, seed):
    r = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    a = np.stack([
        128 + 100 * np.sin(xx / max(w, 1) * 5 + seed),
        128 + 100 * np.cos(yy / max(h, 1) * 4 - seed),
        (xx * 3 + yy * 5) % 256,
    ], -1)
    a[(xx - w / 3) ** 2 + (yy - h / 2) ** 2 < (min(w, h) / 3) ** 2] = [250, 30, 40]
    a += r.normal(0, 3, a.shape)
    return np.clip(a, 0, 255).astype(np.uint8)

def png_raw(path, w, h, color_type, depth, rows, extra=b""):
    """Minimal PNG writer for the 16-bit colour types PIL cannot save."""
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    raw = b"".join(b"\x00" + r for r in rows)
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, color_type, 0, 0, 0))
    data += extra + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    open(path, "wb").write(data)

def exif_bytes(o):
    e = Image.Exif()
    e[0x0112] = o
    return e.tobytes()

files = []  # (name, note)
def save(im, name, **kw):
    im.save("images/" + name, **kw)
    files.append(name)

nat = lambda w, h, s: Image.fromarray(natural(w, h, s), "RGB")
save(nat(37, 23, 1), "rgb_37x23.png")
save(nat(1, 37, 2), "rgb_1x37.png")
save(nat(300, 7, 3), "rgb_300x7.png")
save(nat(30, 70, 41), "rgb_tall_30x70.png")  # its longest-edge resize runs PIL's vertical pass first
save(nat(1, 1, 4), "rgb_1x1.png")
save(nat(40, 30, 5).convert("L"), "gray_L.png")
p = nat(33, 20, 6).quantize(16)
save(p, "pal_P.png")
pt = p.copy()
pal = pt.getpalette()[:48]
pal[9:12] = pal[3:6]  # entry 3 has the colour of entry 1: PIL keys by colour
pt.putpalette(pal)
save(pt, "pal_P_trns.png", transparency=1)
alphas = bytes([255, 0, 128, 64] + [255] * 12)
save(p, "pal_P_alpha.png", transparency=alphas)
rgba = np.dstack([natural(31, 27, 7), rng.randint(0, 256, (27, 31)).astype(np.uint8)])
save(Image.fromarray(rgba, "RGBA"), "rgba.png")
la = np.dstack([natural(26, 19, 8)[..., 0], rng.randint(0, 256, (19, 26)).astype(np.uint8)])
save(Image.fromarray(la, "LA"), "la.png")
g16 = (np.arange(21 * 17).reshape(17, 21) * 7).astype(np.uint16)  # 0..2492, crosses 255
Image.fromarray(g16).save("images/gray16.png"); files.append("gray16.png")
rgb16 = (natural(23, 15, 9).astype(np.uint16) * 257 + rng.randint(0, 256, (15, 23, 3))).astype(">u2")
png_raw("images/rgb16.png", 23, 15, 2, 16, [rgb16[y].tobytes() for y in range(15)]); files.append("rgb16.png")
rgba16 = np.dstack([rgb16, (rng.randint(0, 65536, (15, 23))).astype(">u2")]).astype(">u2")
png_raw("images/rgba16.png", 23, 15, 6, 16, [rgba16[y].tobytes() for y in range(15)]); files.append("rgba16.png")
lt = nat(24, 18, 10).convert("L")
lt_arr = np.array(lt); lt_arr[:4, :4] = 77
save(Image.fromarray(lt_arr, "L"), "gray_trns.png", transparency=77)
rt = natural(24, 18, 11); rt[5:9, 5:9] = [12, 34, 56]
save(Image.fromarray(rt, "RGB"), "rgb_trns.png", transparency=(12, 34, 56))
save(nat(27, 21, 12), "rgb_exif5.png", exif=exif_bytes(5))
# JPEG
save(nat(45, 33, 13), "jpeg420.jpg", quality=90)
save(nat(45, 33, 14), "jpeg444.jpg", quality=90, subsampling=0)
save(nat(45, 33, 15), "jpeg422.jpg", quality=90, subsampling=1)
save(nat(45, 33, 16), "jpeg_prog.jpg", quality=85, progressive=True)
save(nat(38, 29, 17).convert("L"), "jpeg_gray.jpg", quality=90)
save(nat(30, 22, 18).convert("CMYK"), "jpeg_cmyk.jpg", quality=95)
save(nat(4, 5, 19), "jpeg_tiny.jpg", quality=95)
save(nat(53, 37, 39), "jpeg_rst.jpg", quality=88, restart_marker_blocks=3)
save(nat(53, 37, 40), "jpeg_prog_rst.jpg", quality=93, progressive=True, restart_marker_rows=1)
for o in (3, 6, 8):
    save(nat(41, 25, 20 + o), "jpeg_exif%d.jpg" % o, quality=90, exif=exif_bytes(o))
# GIF: two frames, transparency; first frame is what load_image sees
g0 = nat(35, 24, 30).quantize(32)
g1 = nat(35, 24, 31).quantize(32)
g0.save("images/anim.gif", save_all=True, append_images=[g1], transparency=5, duration=100); files.append("anim.gif")
save(nat(29, 17, 32), "rgb24.bmp")
save(nat(29, 17, 33).quantize(20), "pal8.bmp")
save(nat(33, 25, 34), "lossless.webp", lossless=True)
save(nat(33, 25, 35), "lossy.webp", quality=80)
save(Image.fromarray(np.dstack([natural(33, 25, 36), rng.randint(0, 256, (25, 33)).astype(np.uint8)]), "RGBA"), "lossy_alpha.webp", quality=80)
save(nat(21, 34, 37), "webp_exif2.webp", lossless=True, exif=exif_bytes(2))
save(nat(96, 64, 38), "jpeg_big.jpg", quality=92)

CONFIGS = {
    "small": dict(size={"longest_edge": 32}, max_image_size={"longest_edge": 16}),
    "bicubic_clip": dict(size={"longest_edge": 40}, max_image_size={"longest_edge": 16}, resample=3,
                         image_mean=[0.48145466, 0.4578275, 0.40821073], image_std=[0.26862954, 0.26130258, 0.27577711]),
    "nosplit": dict(size={"longest_edge": 40}, max_image_size={"longest_edge": 24}, do_image_splitting=False, resample=2),
    "smolvlm_like": dict(size={"longest_edge": 96}, max_image_size={"longest_edge": 32}),
}
manifest["configs"] = {}
procs = {}
for name, kw in CONFIGS.items():
    ip = Idefics3ImageProcessorPil(**kw)
    procs[name] = ip
    d = ip.to_dict()
    manifest["configs"][name] = {k: d[k] for k in ("do_convert_rgb", "do_resize", "size", "resample", "do_image_splitting",
                                                   "max_image_size", "do_rescale", "rescale_factor", "do_normalize",
                                                   "image_mean", "image_std", "do_pad")}

def to_u8(pv, ip):
    """Recover the uint8 tile values and check transformers' floats follow from them exactly."""
    mean = np.array(ip.image_mean, np.float32)[:, None, None]
    std = np.array(ip.image_std, np.float32)[:, None, None]
    u = np.rint((pv.astype(np.float64) * std + mean) * 255).clip(0, 255).astype(np.uint8)
    f = (u.astype(np.float64) * ip.rescale_factor).astype(np.float32)
    f = ((f.transpose(0, 2, 3, 1) - mean[:, 0, 0]) / std[:, 0, 0]).transpose(0, 3, 1, 2)
    assert np.array_equal(f.view(np.uint32), pv.view(np.uint32)), "uint8 recovery is not exact"
    return u

for name in files:
    pil = Image.open("images/" + name)
    mode = pil.mode
    im = load_image("images/" + name)
    arr = np.array(im)
    case = {"file": name, "pil_mode": mode, "w": im.width, "h": im.height, "rgb": put(arr.tobytes()),
            "transparency": list(im.info["transparency"]) if isinstance(im.info.get("transparency"), tuple) else None,
            "proc": {}}
    cfgs = ["small", "bicubic_clip", "nosplit"] if name in ("rgb_37x23.png", "jpeg420.jpg", "pal_P_trns.png") else ["small"]
    if name == "jpeg_big.jpg":
        cfgs.append("smolvlm_like")
    for cn in cfgs:
        ip = procs[cn]
        out = ip(images=[im], return_tensors="np", return_row_col_info=True)
        pv = out["pixel_values"][0]
        entry = {"rows": int(out["rows"][0][0]), "cols": int(out["cols"][0][0]), "shape": list(pv.shape),
                 "u8": put(to_u8(pv, ip).tobytes())}
        if name == "rgb_37x23.png" and cn == "nosplit":
            entry["f32"] = put(pv.astype("<f4").tobytes())
        case["proc"][cn] = entry
    manifest["cases"].append(case)

# PIL resize on LCG-generated sources the Go test regenerates.
def lcg_image(w, h, seed):
    x = seed & 0x7fffffff
    out = bytearray(w * h * 3)
    for i in range(len(out)):
        x = (x * 1103515245 + 12345) & 0x7fffffff
        out[i] = (x >> 16) & 255
    a = np.frombuffer(bytes(out), np.uint8).reshape(h, w, 3).copy()
    # the lower two thirds smooth so both flat and noisy regions are exercised
    yy, xx = np.mgrid[0:h, 0:w]
    sm = np.stack([xx * 255 // max(w - 1, 1), yy * 255 // max(h - 1, 1), (xx * 13 + yy * 7) % 256], -1)
    a[h // 3:] = sm[h // 3:]
    return a
for (w, h), (ow, oh) in [((37, 23), (16, 9)), ((37, 23), (41, 26)), ((1, 1), (5, 3)), ((300, 7), (32, 2)),
                         ((1, 37), (3, 16)), ((64, 48), (24, 20)), ((20, 20), (23, 31)), ((48, 36), (48, 20)),
                         ((24, 60), (30, 20)), ((50, 120), (20, 30)), ((90, 60), (30, 20))]:  # vertical-first, vertical-first, horizontal-first
    seed = w * 1000 + h
    src = Image.fromarray(lcg_image(w, h, seed), "RGB")
    for f in (1, 2, 3, 4, 5):
        r = np.array(src.resize((ow, oh), resample=f))
        manifest["resize"].append({"w": w, "h": h, "seed": seed, "ow": ow, "oh": oh, "filter": f, "out": put(r.tobytes())})

# Prompt expansion: Idefics3Processor.replace_image_token and the full text path.
for rows, cols, n in [(0, 0, 3), (1, 2, 3), (3, 3, 2), (2, 1, 1), (4, 4, 5)]:
    ns = types.SimpleNamespace(fake_image_token="<fake_token_around_image>", image_token="<image>",
                               global_image_tag="<global-img>", image_seq_len=n)
    s = Idefics3Processor.replace_image_token(ns, {"rows": [[rows]], "cols": [[cols]]}, 0)
    manifest["expand"].append({"rows": rows, "cols": cols, "image_seq_len": n, "text": s})

from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
vocab = {"[UNK]": 0, "<fake_token_around_image>": 1, "<image>": 2, "<global-img>": 3, "<end_of_utterance>": 4, "\n": 5}
for i in range(6):
    for j in range(6):
        vocab[f"<row_{i + 1}_col_{j + 1}>"] = len(vocab)
tk = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
tk.pre_tokenizer = pre_tokenizers.Split(pattern="\n", behavior="isolated")
tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="[UNK]")
proc = Idefics3Processor(procs["small"], tok, image_seq_len=4)
for prompt, names in [("User:<image>What is this?", ["rgb_37x23.png"]),
                      ("<image> and <image> differ how?", ["rgb_1x1.png", "rgb_300x7.png"])]:
    imgs = [load_image("images/" + n) for n in names]
    images, text = proc.prepare_inputs_layout(images=imgs, text=[prompt])
    _, repl = proc._process_images(images, **proc._merge_kwargs(tokenizer_init_kwargs=tok.init_kwargs)["images_kwargs"])
    texts, _ = proc.get_text_with_replacements(text, images_replacements=repl)
    manifest["prompts"].append({"text": prompt, "images": names, "image_seq_len": 4, "expanded": texts[0]})

for d in ("proc_v5", "proc_legacy"):
    shutil.rmtree(d, ignore_errors=True)
proc.save_pretrained("proc_v5")
for f in os.listdir("proc_v5"):
    if f.startswith("tokenizer"):
        os.remove(os.path.join("proc_v5", f))
os.makedirs("proc_legacy")
Idefics3ImageProcessorPil(**CONFIGS["bicubic_clip"]).save_pretrained("proc_legacy")
if os.path.exists("proc_legacy/processor_config.json"):  # 5.x image processors write this name
    os.rename("proc_legacy/processor_config.json", "proc_legacy/preprocessor_config.json")
json.dump({"image_seq_len": 64, "processor_class": "Idefics3Processor"}, open("proc_legacy/processor_config.json", "w"), indent=2)

# GIFs whose first frame does not cover the logical screen (kept out of the
# blob: expected pixels go to extra.json).
extra = {"gif_offset": []}
gp = Image.new("P", (3, 2))
gp.putpalette([10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120])
gp.putdata([1, 2, 3, 1, 2, 3])
for trans in (None, 2):
    b = io.BytesIO()
    gp.save(b, "GIF", **({} if trans is None else {"transparency": trans}))
    d = bytearray(b.getvalue())
    d[6:8] = struct.pack("<H", 5); d[8:10] = struct.pack("<H", 4); d[11] = 3  # 5x4 screen, background 3
    i = d.index(b"\x2c")
    d[i + 1:i + 5] = struct.pack("<HH", 1, 1)  # frame at (1, 1)
    name = "gif_offset_%s.gif" % ("trns" if trans is not None else "plain")
    open("images/" + name, "wb").write(bytes(d))
    im = load_image("images/" + name)
    t = im.info.get("transparency")
    extra["gif_offset"].append({"file": name, "w": im.width, "h": im.height, "rgb": np.array(im).reshape(-1).tolist(),
                                "transparency": list(t) if isinstance(t, tuple) else None})
# Small PNG bit depths and tRNS variants (hand-written chunks): load_image
# pixels and what convert_to_rgb makes of them, as hex.
from transformers.image_transforms import convert_to_rgb
def pack_bits(vals, depth):
    bits = "".join(format(int(v), "0%db" % depth) for v in vals)
    bits += "0" * (-len(bits) % 8)
    return bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
vr = np.random.RandomState(5)
variants = []
for depth in (1, 2, 4):
    g = vr.randint(0, 1 << depth, (5, 9))
    for t in (0, 1):
        variants.append(("g%d_trns%d.png" % (depth, t), 9, 5, 0, depth, [pack_bits(r, depth) for r in g], chunk(b"tRNS", struct.pack(">H", t))))
    pal = vr.randint(0, 256, (1 << depth) * 3).astype(np.uint8).tobytes()
    p = vr.randint(0, 1 << depth, (5, 9))
    for tr in (b"\xff\x00", b"\x80\x00\xff"):
        variants.append(("p%d_trns%d.png" % (depth, len(tr)), 9, 5, 3, depth, [pack_bits(r, depth) for r in p], chunk(b"PLTE", pal) + chunk(b"tRNS", tr)))
g16 = np.array([[0, 5, 256, 44, 300, 1000, 0, 255, 7]] * 2, dtype=">u2")
for t in (256, 300):
    variants.append(("g16_trns%d.png" % t, 9, 2, 0, 16, [r.tobytes() for r in g16], chunk(b"tRNS", struct.pack(">H", t))))
c16 = np.array([[[100 * 256, 0, 200 * 256], [256, 0, 512], [0, 0, 0], [100, 0, 200]]], dtype=">u2")
variants.append(("rgb16_trns.png", 4, 1, 2, 16, [c16[0].tobytes()], chunk(b"tRNS", struct.pack(">HHH", 0x0164, 0, 0x02C8))))
extra["png_variants"] = []
for name, w, h, ct, depth, rows, ex in variants:
    png_raw("images/" + name, w, h, ct, depth, rows, ex)
    im = load_image("images/" + name)
    extra["png_variants"].append({"file": name, "pil_mode": Image.open("images/" + name).mode,
                                  "rgb": np.array(im).tobytes().hex(),
                                  "flat": None})
    flat = convert_to_rgb(im, return_numpy=True).tobytes().hex()
    if flat != extra["png_variants"][-1]["rgb"]:
        extra["png_variants"][-1]["flat"] = flat
# Orientation from a JPEG's XMP packet (no EXIF): PIL's getexif falls back
# to tiff:Orientation there. Expected load_image output as a SHA-256.
import hashlib
d = open("images/jpeg420.jpg", "rb").read()
xmp = (b"http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF>"
       b"<rdf:Description tiff:Orientation=\"6\"/></rdf:RDF></x:xmpmeta>")
open("images/jpeg_xmp6.jpg", "wb").write(d[:2] + b"\xff\xe1" + struct.pack(">H", len(xmp) + 2) + xmp + d[2:])
im = load_image("images/jpeg_xmp6.jpg")
extra["sha256"] = [{"file": "jpeg_xmp6.jpg", "w": im.width, "h": im.height,
                    "sha256": hashlib.sha256(np.array(im).tobytes()).hexdigest()}]
json.dump(extra, open("extra.json", "w"))

with gzip.GzipFile("blob.bin.gz", "wb", mtime=0, compresslevel=9) as g:
    g.write(bytes(blob))
json.dump(manifest, open("manifest.json", "w"), separators=(",", ":"))
print("blob", len(blob), "gz", os.path.getsize("blob.bin.gz"))
