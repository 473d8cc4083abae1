#!/usr/bin/env python
"""Generate the Qwen2-VL test data of rt/vision from transformers (PIL backend).

Run from this directory with the oracle venv:
    /tmp/oracle/bin/python gen_qwen2vl.py
Deterministic (the images are a formula of (x, y, channel, seed) that
qwen2vl_test.go evaluates the same way). Writes qwen2vl/:

  expected.json      per config: the configuration as transformers resolved
                     it; per image case: the input size and seed,
                     image_grid_thw, pixel_values' shape, the SHA-256 of
                     pixel_values (float32, little-endian, HF's row order) and
                     of the same rows before rescale/normalize (uint8), and
                     the offset of those uint8 rows in patches.bin.gz;
                     get_vision_position_ids (the tower's rot_pos_emb ids)
                     for several grids; prompts run through Qwen2VLProcessor
                     (expanded text, input_ids, image_grid_thw) and their
                     get_rope_index (position_ids [3, n], rope_deltas) from
                     Qwen2VLModel, checked equal to Qwen2_5_VLModel's and
                     Qwen3VLModel's for the same input; smart_resize's
                     refusal message for an extreme aspect ratio.
  patches.bin.gz     the uint8 patch rows (pixel_values with do_rescale and
                     do_normalize off) of every case, concatenated. The
                     generator asserts that numpy's rescale (float64 then
                     float32) and normalize (float32) of them reproduce
                     transformers' float32 pixel_values bit for bit, so the
                     uint8 rows and the SHA-256 together pin pixel_values.
  proc_v5/           processor_config.json as Qwen2VLProcessor.save_pretrained
                     (transformers 5.x) writes it (its to_json_file)
  proc_hub/          preprocessor_config.json in the Hub's layout (Qwen2-VL-2B:
                     min_pixels / max_pixels at the top, processor_class inside)
"""
import gzip, hashlib, json, os, shutil
import numpy as np
import torch
from PIL import Image
import transformers
from transformers import PreTrainedTokenizerFast
from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil, smart_resize
from transformers.models.qwen2_vl.processing_qwen2_vl import Qwen2VLProcessor
from transformers.models.qwen2_vl import modeling_qwen2_vl as mq2
from transformers.models.qwen2_5_vl import modeling_qwen2_5_vl as mq25
from transformers.models.qwen3_vl import modeling_qwen3_vl as mq3
from transformers.vision_utils import get_vision_position_ids
from tokenizers import Tokenizer, models, pre_tokenizers

OUT = "qwen2vl"
shutil.rmtree(OUT, ignore_errors=True)
os.makedirs(OUT)


def image(w, h, seed):
    """The test image: per channel a gradient plus a hashed 0..15 texture,
    wrapped to a byte (qwen2vl_test.go's testImage)."""
    y, x = np.mgrid[0:h, 0:w].astype(np.int64)
    out = np.zeros((h, w, 3), np.uint8)
    for c in range(3):
        hsh = (x * 73856093 ^ y * 19349663 ^ (c + 1) * 83492791 ^ seed * 2654435761) & 0xFFFFFFFF
        hsh = (hsh * 2246822519) & 0xFFFFFFFF
        grad = [x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), (x + y) * 255 // max(w + h - 2, 1)][c]
        out[..., c] = ((grad + (hsh >> 28)) & 255).astype(np.uint8)
    return Image.fromarray(out, "RGB")


# The configurations (image processor kwargs) the cases run under.
CONFIGS = {
    # The published Qwen2-VL values with a small max_pixels (keeps the data small).
    "qwen2vl_small": dict(min_pixels=56 * 56, max_pixels=28 * 28 * 6, patch_size=14, temporal_patch_size=2, merge_size=2),
    # A tiny tower's: patch 4, merge 2 (factor 8), BILINEAR, ImageNet-0.5 stats, size dict only
    # (20x36: both sides round half to even, 2.5 -> 2 and 4.5 -> 4).
    "tiny": dict(size={"shortest_edge": 8 * 8 * 4, "longest_edge": 8 * 8 * 40}, patch_size=4, temporal_patch_size=2,
                 merge_size=2, resample=2, image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5]),
    # temporal_patch_size 1 (the golden qwen2_vl fixture's tower), merge 2, patch 2, no rescale.
    "t1": dict(min_pixels=16, max_pixels=16 * 40, patch_size=2, temporal_patch_size=1, merge_size=2, do_rescale=False),
    # Qwen3-VL's published stats and patch 16, with size's keys and a small longest_edge.
    "qwen3vl_small": dict(size={"shortest_edge": 32 * 32 * 2, "longest_edge": 32 * 32 * 4}, patch_size=16,
                          temporal_patch_size=2, merge_size=2, image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5]),
}
CASES = {
    "qwen2vl_small": [(20, 13, 1), (90, 40, 2), (41, 97, 3), (300, 220, 4)],
    "tiny": [(5, 3, 6), (91, 17, 7), (17, 61, 8), (200, 150, 9), (33, 27, 10), (1, 30, 11), (20, 36, 16)],
    "t1": [(9, 5, 12), (40, 7, 13)],
    "qwen3vl_small": [(70, 50, 14), (150, 31, 15)],
}

blob = bytearray()
expected = {"transformers": transformers.__version__, "configs": {}, "cases": []}
for name, kw in CONFIGS.items():
    proc = Qwen2VLImageProcessorPil(**kw)
    raw = Qwen2VLImageProcessorPil(**dict(kw, do_rescale=False, do_normalize=False))
    expected["configs"][name] = dict(
        kwargs=kw, min_pixels=proc.size["shortest_edge"], max_pixels=proc.size["longest_edge"],
        patch_size=proc.patch_size, temporal_patch_size=proc.temporal_patch_size, merge_size=proc.merge_size,
        resample=int(proc.resample), image_mean=list(proc.image_mean), image_std=list(proc.image_std),
        rescale_factor=proc.rescale_factor, do_rescale=proc.do_rescale, do_normalize=proc.do_normalize)
    for w, h, seed in CASES[name]:
        im = image(w, h, seed)
        out = proc(images=[im], return_tensors="np")
        pv = out["pixel_values"]
        assert pv.dtype == np.float32
        grid = out["image_grid_thw"][0].tolist()
        u = raw(images=[im], return_tensors="np")["pixel_values"]
        assert np.array_equal(u, np.round(u)) and u.min() >= 0 and u.max() <= 255
        u8 = u.astype(np.uint8)
        # rescale (float64 then float32) and normalize (float32) of the uint8 rows give pixel_values
        f = u8.astype(np.float32)
        if proc.do_rescale:
            f = (u8.astype(np.float64) * proc.rescale_factor).astype(np.float32)
        if proc.do_normalize:
            p, T = proc.patch_size, proc.temporal_patch_size
            ch = np.repeat(np.arange(3), T * p * p)
            mean = np.array(proc.image_mean, np.float32)[ch]
            std = np.array(proc.image_std, np.float32)[ch]
            f = (f - mean) / std
        assert f.tobytes() == pv.tobytes(), (name, w, h)
        rh, rw = smart_resize(h, w, proc.patch_size * proc.merge_size, proc.size["shortest_edge"], proc.size["longest_edge"])
        off = len(blob)
        blob.extend(u8.tobytes())
        expected["cases"].append(dict(
            config=name, w=w, h=h, seed=seed, grid_thw=grid, resized=[rh, rw], shape=list(pv.shape),
            f32_sha256=hashlib.sha256(pv.astype("<f4").tobytes()).hexdigest(),
            u8_sha256=hashlib.sha256(u8.tobytes()).hexdigest(), u8=[off, len(u8.tobytes())]))

with open(os.path.join(OUT, "patches.bin.gz"), "wb") as fh:
    fh.write(gzip.compress(bytes(blob), compresslevel=9, mtime=0))

# smart_resize's refusal of an extreme aspect ratio.
try:
    smart_resize(1, 201, 28, 56 * 56, 28 * 28 * 1280)
    raise SystemExit("smart_resize accepted 1x201")
except ValueError as e:
    expected["aspect_error"] = dict(h=1, w=201, message=str(e))
expected["aspect_ok"] = dict(h=1, w=200, resized=list(smart_resize(1, 200, 28, 56 * 56, 28 * 28 * 1280)))

# The tower's rotary position ids (rot_pos_emb): (h, w) per patch.
expected["vision_pos"] = []
for thw, m in [((1, 4, 6), 2), ((1, 2, 2), 2), ((2, 4, 4), 2), ((1, 6, 3), 3), ((1, 3, 5), 1), ((1, 8, 2), 2)]:
    pos = get_vision_position_ids(torch.tensor([list(thw)]), m)
    expected["vision_pos"].append(dict(grid_thw=list(thw), merge=m, pos=pos.reshape(-1).tolist()))

# Prompts through Qwen2VLProcessor (a tiny word-level tokenizer with Qwen's special tokens).
special = ["<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
words = ["<unk>", "user", "assistant", "describe", "this", "and", "that", "compare", "the", "two", "images", "ok", "then", "now", "."]
vocab = {w: i for i, w in enumerate(words)}
tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
tk.pre_tokenizer = pre_tokenizers.Whitespace()
tk.add_special_tokens(special)
tok = PreTrainedTokenizerFast(tokenizer_object=tk, unk_token="<unk>")
pkw = dict(CONFIGS["tiny"])
# The oracle venv has no torchvision, so the video processor class cannot be
# looked up: skip ProcessorMixin's class check (video_processor stays None;
# images only, the code path under test is unchanged).
Qwen2VLProcessor.check_argument_for_proper_class = lambda self, name, arg: None
processor = Qwen2VLProcessor(image_processor=Qwen2VLImageProcessorPil(**pkw), tokenizer=tok)
ids = {s: tok.convert_tokens_to_ids(s) for s in special}
expected["token_ids"] = ids

# Tiny models for get_rope_index (only their configs matter to it).
tiny_text = dict(hidden_size=16, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2,
                 num_key_value_heads=1, vocab_size=32)
m2 = mq2.Qwen2VLModel(transformers.Qwen2VLConfig(
    text_config=dict(tiny_text, rope_parameters=dict(rope_type="default", rope_theta=10000.0, mrope_section=[1, 1, 2])),
    vision_config=dict(depth=1, embed_dim=16, hidden_size=16, num_heads=2, patch_size=4, spatial_merge_size=2),
    image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"]))
m25 = mq25.Qwen2_5_VLModel(transformers.Qwen2_5_VLConfig(
    text_config=dict(tiny_text, rope_parameters=dict(rope_type="default", rope_theta=10000.0, mrope_section=[1, 1, 2])),
    vision_config=dict(depth=1, hidden_size=16, intermediate_size=16, num_heads=2, out_hidden_size=16, patch_size=4,
                       spatial_merge_size=2, fullatt_block_indexes=[0]),
    image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"]))
m3 = mq3.Qwen3VLModel(transformers.Qwen3VLConfig(
    text_config=dict(tiny_text, head_dim=8, rope_parameters=dict(rope_type="default", rope_theta=10000.0, mrope_section=[1, 1, 2])),
    vision_config=dict(depth=1, hidden_size=16, intermediate_size=16, num_heads=2, out_hidden_size=16, patch_size=4,
                       spatial_merge_size=2, deepstack_visual_indexes=[], num_position_embeddings=16),
    image_token_id=ids["<|image_pad|>"], video_token_id=ids["<|video_pad|>"], vision_start_token_id=ids["<|vision_start|>"]))

IMG = "<|vision_start|><|image_pad|><|vision_end|>"
PROMPTS = [
    ("text only", "<|im_start|>user describe this<|im_end|><|im_start|>assistant", []),
    ("one image", "<|im_start|>user " + IMG + "describe this<|im_end|><|im_start|>assistant", [(40, 24, 21)]),
    ("image at the start", IMG + "describe<|im_end|>", [(17, 61, 22)]),
    ("two images", "<|im_start|>user " + IMG + " and " + IMG + " compare the two images<|im_end|><|im_start|>assistant",
     [(91, 17, 23), (30, 30, 24)]),
    ("later turn", "<|im_start|>user describe this<|im_end|><|im_start|>assistant ok<|im_end|><|im_start|>user now "
     + IMG + " then that<|im_end|><|im_start|>assistant", [(200, 150, 25)]),
    ("image at the end", "<|im_start|>user the " + IMG, [(13, 9, 26)]),
]
expected["prompts"] = []
for label, text, imgs in PROMPTS:
    pil = [image(w, h, s) for w, h, s in imgs]
    if pil:
        enc = processor(text=[text], images=pil, return_tensors="pt")
        _, repl = processor._process_images(pil)
        expanded = processor.get_text_with_replacements([text], repl)[0][0]
        grids = enc["image_grid_thw"]
    else:
        enc = processor(text=[text], return_tensors="pt", return_mm_token_type_ids=True)
        expanded, grids = text, None
    input_ids, tt = enc["input_ids"], enc["mm_token_type_ids"]
    assert tok(expanded, return_tensors="pt")["input_ids"].tolist() == input_ids.tolist()
    res = [m.get_rope_index(input_ids, mm_token_type_ids=tt, image_grid_thw=grids) for m in (m2, m25, m3)]
    for p, d in res[1:]:
        assert torch.equal(p, res[0][0]) and torch.equal(d, res[0][1]), label
    pos, delta = res[0]
    expected["prompts"].append(dict(
        label=label, text=text, images=[list(x) for x in imgs], expanded=expanded, input_ids=input_ids[0].tolist(),
        image_grid_thw=grids.tolist() if grids is not None else [], position_ids=pos[:, 0].tolist(),
        rope_delta=int(delta[0, 0])))

# Processor folders for LoadProcessor.
# save_pretrained's last step (it cannot run whole here: video_processor is
# None, see above), which writes processor_config.json.
os.makedirs(os.path.join(OUT, "proc_v5"))
processor.to_json_file(os.path.join(OUT, "proc_v5", "processor_config.json"))
hub = {
    "min_pixels": 3136, "max_pixels": 12845056, "patch_size": 14, "temporal_patch_size": 2, "merge_size": 2,
    "image_mean": [0.48145466, 0.4578275, 0.40821073], "image_std": [0.26862954, 0.26130258, 0.27577711],
    "image_processor_type": "Qwen2VLImageProcessor", "processor_class": "Qwen2VLProcessor",
}
os.makedirs(os.path.join(OUT, "proc_hub"))
with open(os.path.join(OUT, "proc_hub", "preprocessor_config.json"), "w") as fh:
    json.dump(hub, fh, indent=2)
loaded = {}
for sub in ("proc_v5", "proc_hub"):
    ip = Qwen2VLImageProcessorPil.from_pretrained(os.path.join(OUT, sub))
    loaded[sub] = dict(min_pixels=ip.size["shortest_edge"], max_pixels=ip.size["longest_edge"], patch_size=ip.patch_size,
                       temporal_patch_size=ip.temporal_patch_size, merge_size=ip.merge_size, resample=int(ip.resample),
                       image_mean=list(ip.image_mean), image_std=list(ip.image_std))
expected["loaded"] = loaded

with open(os.path.join(OUT, "expected.json"), "w") as fh:
    json.dump(expected, fh, indent=1)
print("wrote", OUT, "blob", len(blob), "bytes")
