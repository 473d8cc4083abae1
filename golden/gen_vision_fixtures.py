#!/usr/bin/env python3
"""Generate archc's vision oracle fixtures: SmolVLM's, LLaVA's, Gemma 3's, Qwen2-VL's and Qwen2.5-VL's image paths.

For each entry of FIXTURES this writes golden/testdata/vision/<name>/:

  config.json, generation_config.json, model.safetensors
      a tiny random-weight Idefics3ForConditionalGeneration /
      SmolVLMForConditionalGeneration (Llama text model, SigLIP-style vision
      tower, pixel-shuffle connector) or LlavaForConditionalGeneration
      (Llama text model, CLIP vision tower read at vision_feature_layer -2,
      MLP projector) or Gemma3ForConditionalGeneration (Gemma 3 text model,
      SigLIP tower, average-pool projector; build_gemma3) or
      Qwen2VLForConditionalGeneration (Qwen2 text model under M-RoPE, the
      Qwen2-VL vision tower and PatchMerger, images of any size;
      build_qwen2_vl, stored bf16) or Qwen2_5_VLForConditionalGeneration
      (the same text model; Qwen2.5-VL's tower: RMSNorm, SwiGLU, window
      attention in all but fullatt_block_indexes; build_qwen2_vl) or
      Qwen3_5ForConditionalGeneration (Qwen3.5's hybrid DeltaNet/attention
      text model under interleaved M-RoPE; its tower: a biased Conv3d,
      learned positions resampled to each image's grid, GELU-tanh MLPs, a
      LayerNorm-GELU merger; build_qwen2_vl, stored bf16),
      save_pretrained, fp32;
  tokenizer.json, tokenizer_config.json, chat_template.jinja,
  preprocessor_config.json, processor_config.json
      a small byte-level BPE with the family's added tokens, its chat
      template and its image processor settings scaled down, as
      <Processor>.save_pretrained writes them (PIL backend image processor);
  images/*.png
      three small seeded test images;
  pixel_values.<case>.f32, image_features.<case>.f32
      raw little-endian float32: the processor's pixel_values and the
      connector's output (what replaces the <image> token embeddings);
  oracle.json
      the HF fp32 eager oracle per case (golden/README.md, "Vision fixtures").

Everything is seeded and single-threaded; a rerun with the pinned versions
(requirements-oracle.txt) is byte-identical.

    .venv-oracle/bin/python golden/gen_vision_fixtures.py --out golden/testdata/vision
    .venv-oracle/bin/python golden/gen_vision_fixtures.py --only idefics3

SmolVLMProcessor needs a video processor (SmolVLMVideoProcessor, which
needs torchvision) and num2words (video prompts only); neither is in the
oracle venv. The generator builds it with video_processor=None when
torchvision is missing; the image path never touches either (the video
path is not exercised). Qwen2VLProcessor's video processor
(Qwen2VLVideoProcessor) needs torchvision too: the same stand-in.
"""

import argparse
import hashlib
import json
import math
import os
import shutil
import sys

import numpy as np
import torch
import transformers
from PIL import Image
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (
    CLIPImageProcessorPil,
    Gemma3Config,
    Gemma3ForConditionalGeneration,
    Gemma3ImageProcessorPil,
    Gemma3Processor,
    Idefics3Config,
    Idefics3ForConditionalGeneration,
    Idefics3ImageProcessorPil,
    Idefics3Processor,
    AutoTokenizer,
    LlavaConfig,
    LlavaForConditionalGeneration,
    LlavaProcessor,
    PreTrainedTokenizerFast,
    Qwen2_5_VLConfig,
    Qwen2_5_VLForConditionalGeneration,
    Qwen2_5_VLProcessor,
    Qwen2VLConfig,
    Qwen2VLForConditionalGeneration,
    Qwen2VLImageProcessorPil,
    Qwen2VLProcessor,
    Qwen3_5Config,
    Qwen3_5ForConditionalGeneration,
    Qwen3_5MoeConfig,
    Qwen3_5MoeForConditionalGeneration,
    Qwen3VLProcessor,
    Mistral3Config,
    Mistral3ForConditionalGeneration,
    PixtralImageProcessorPil,
    Qwen3VLConfig,
    Qwen3VLForConditionalGeneration,
    Qwen3VLMoeConfig,
    Qwen3VLMoeForConditionalGeneration,
    SmolVLMConfig,
    SmolVLMForConditionalGeneration,
    SmolVLMImageProcessorPil,
    SmolVLMProcessor,
)

MAX_NEW_TOKENS = 16
MIN_TOP2_MARGIN = 1e-3
# Real vs zeroed pixel_values must move some first-step logit this much.
IMAGE_MIN_DIFF = 1e-2
# The repository is near its size cap (the tracked tree travels to the GPU
# machines, 64 MiB): each vision fixture folder stays under 250 KB.
MAX_FOLDER_BYTES = 250_000
# The files this script writes besides images/ and the *.f32 arrays.
GENERATED_FILES = ("config.json", "generation_config.json", "model.safetensors", "oracle.json",
                   "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja",
                   "chat_template.json", "preprocessor_config.json", "processor_config.json")

# SmolVLM-Instruct's chat template (HuggingFaceTB/SmolVLM-Instruct
# chat_template.json; the same string is SmolVLM-256M/500M-Instruct's and
# transformers' tests/models/idefics3/test_processing_idefics3.py's
# prepare_processor_dict; processing_smolvlm.py's DEFAULT_CHAT_TEMPLATE is it
# plus a video branch). Roles capitalized, ':' without a space when the
# first content item is an image, images as <image>.
CHAT_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{message['role'] | capitalize}}"
    "{% if message['content'][0]['type'] == 'image' %}{{':'}}{% else %}{{': '}}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{line['text']}}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}<end_of_utterance>\n"
    "{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)

# Byte-level BPE: 3 leading specials (SmolLM2's ids 0, 1, 2), 256 byte
# tokens, NUM_MERGES merges learned from BPE_TEXT, then SmolVLM's added
# tokens in SmolVLM-256M's order (<global-img>, the 36 <row_R_col_C>,
# <fake_token_around_image>, <image>; <end_of_utterance> last, as 49279 is).
LEAD_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
NUM_MERGES = 12
BPE_TEXT = [
    "The quick brown fox jumps over the lazy dog.",
    "Can you describe this image? What is in the picture?",
    "There is a red square and a blue line on the left of the image.",
    "The image shows the sky, the sea and the sand.",
]
ADDED_SPECIALS = (["<global-img>"]
                  + [f"<row_{r}_col_{c}>" for r in range(1, 7) for c in range(1, 7)]
                  + ["<fake_token_around_image>", "<image>", "<end_of_utterance>"])

# SmolVLM-256M-Instruct's preprocessor_config.json with the sizes scaled
# down: size 2048 -> 48, max_image_size 512 -> 16 (tiles of 16x16 pixels,
# 4x4 patches of 4: 16 patches, 4 tokens a tile after scale_factor 2).
IMAGE_PROCESSOR = dict(
    do_convert_rgb=True,
    do_image_splitting=True,
    do_normalize=True,
    do_pad=True,
    do_rescale=True,
    do_resize=True,
    image_mean=[0.5, 0.5, 0.5],
    image_std=[0.5, 0.5, 0.5],
    max_image_size={"longest_edge": 16},
    resample=1,  # PIL.Image.LANCZOS
    rescale_factor=1 / 255,
    size={"longest_edge": 48},
)
IMAGE_SEQ_LEN = 4  # (16 / 4)**2 / 2**2

VISION = dict(
    hidden_size=32,
    intermediate_size=48,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_channels=3,
    image_size=16,
    patch_size=4,
    hidden_act="gelu_pytorch_tanh",
    layer_norm_eps=1e-6,  # SmolVLM's (SigLIP's)
)
TEXT = dict(
    model_type="llama",
    hidden_size=16,
    intermediate_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=4,
    max_position_embeddings=256,
    rms_norm_eps=1e-5,
    hidden_act="silu",
    rope_parameters={"rope_type": "default", "rope_theta": 100000.0},  # SmolLM2's theta
    tie_word_embeddings=False,  # SmolVLM-256M: lm_head.weight separate
    bos_token_id=1,
    eos_token_id=2,
    pad_token_id=2,
    initializer_range=0.2,
)

# LLaVA: llava-hf/llava-1.5-7b-hf's chat template without its {% generation %}
# markers (they only mark assistant text for training masks): roles upper
# case, a message's images first as "<image>\n", then its texts each with a
# trailing space, "ASSISTANT:" to prompt.
LLAVA_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() + ': '}}{% endif %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}{{ '<image>\n' }}{% endfor %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}{{ content['text'] + ' '}}{% endfor %}"
    "{% endfor %}{% if add_generation_prompt %}{{ 'ASSISTANT:' }}{% endif %}"
)
# Llama's specials first (<unk> 0, <s> 1, </s> 2), llava-1.5's added tokens
# after the merges (<image> then <pad>, as 32000 and 32001).
LLAVA_LEAD_SPECIALS = ["<unk>", "<s>", "</s>"]
LLAVA_ADDED_SPECIALS = ["<image>", "<pad>"]
# llava-1.5's preprocessor_config.json (CLIPImageProcessor) with 336 -> 16:
# the shortest edge resized to 16 (bicubic), a 16x16 center crop, CLIP's
# mean and std.
LLAVA_IMAGE_PROCESSOR = dict(
    crop_size={"height": 16, "width": 16},
    do_center_crop=True,
    do_convert_rgb=True,
    do_normalize=True,
    do_rescale=True,
    do_resize=True,
    image_mean=[0.48145466, 0.4578275, 0.40821073],
    image_std=[0.26862954, 0.26130258, 0.27577711],
    resample=3,  # PIL.Image.BICUBIC
    rescale_factor=1 / 255,
    size={"shortest_edge": 16},
)
LLAVA_PATCH = 4
LLAVA_IMAGE_TOKENS = (16 // LLAVA_PATCH) ** 2  # + 1 CLS - 1 ("default" drops it)
# CLIPVisionConfig's settings (quick_gelu, eps 1e-5) at llava's scale down:
# 3 layers, of which vision_feature_layer -2 reads the first two.
LLAVA_VISION = dict(
    model_type="clip_vision_model",
    hidden_size=32,
    intermediate_size=48,
    num_hidden_layers=3,
    num_attention_heads=4,
    num_channels=3,
    image_size=16,
    patch_size=LLAVA_PATCH,
    hidden_act="quick_gelu",
    layer_norm_eps=1e-5,
    projection_dim=16,
)


def make_images(out, seed):
    """Three seeded PNGs: a 40x60 RGB with gradients and blocks, a 96x20
    extreme aspect RGB, a 17x9 grayscale (odd sizes: the resize's odd-edge
    rounding)."""
    rng = np.random.default_rng(seed)
    d = os.path.join(out, "images")
    os.makedirs(d, exist_ok=True)
    imgs = {}
    y, x = np.mgrid[0:60, 0:40]
    a = np.stack([x * 6, y * 4, (x + y) * 2], -1).astype(np.float64)
    a[10:25, 5:20] = [250, 30, 30]
    a[35:55, 22:36] = [20, 40, 230]
    a += rng.normal(0, 2, a.shape)
    imgs["rgb_40x60.png"] = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8), "RGB")
    y, x = np.mgrid[0:20, 0:96]
    b = np.stack([255 - x * 2.5, 128 + 100 * np.sin(x / 7.0) * np.cos(y / 4.0), y * 12], -1)
    b += rng.normal(0, 1, b.shape)
    imgs["wide_96x20.png"] = Image.fromarray(np.clip(b, 0, 255).astype(np.uint8), "RGB")
    y, x = np.mgrid[0:9, 0:17]
    g = 128 + 90 * np.sin(x / 2.0) + 30 * (y - 4) + rng.normal(0, 10, x.shape)
    imgs["gray_17x9.png"] = Image.fromarray(np.clip(g, 0, 255).astype(np.uint8), "L")
    for name, im in imgs.items():
        im.save(os.path.join(d, name), format="PNG", optimize=False)
    # Read back what archc reads.
    return {name: Image.open(os.path.join(d, name)) for name in imgs}


def make_tokenizer(spec):
    """SmolVLM's specials (no BOS added: its template starts with
    <|im_start|>), or for llava Llama's, with the <s> BOS the Llama
    tokenizer adds."""
    llava = spec["family"] == "llava"
    lead = LLAVA_LEAD_SPECIALS if llava else LEAD_SPECIALS
    added = LLAVA_ADDED_SPECIALS if llava else ADDED_SPECIALS
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=len(lead) + 256 + NUM_MERGES,
        min_frequency=2,
        special_tokens=lead,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(BPE_TEXT, trainer=trainer)
    assert tok.get_vocab_size() == len(lead) + 256 + NUM_MERGES, tok.get_vocab_size()
    tok.add_special_tokens(added)  # in order, after the merges
    first = len(lead) + 256 + NUM_MERGES
    assert [tok.token_to_id(t) for t in added] == list(range(first, first + len(added)))
    if llava:
        tok.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)]),
        ])
        fast = PreTrainedTokenizerFast(
            tokenizer_object=tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>",
            additional_special_tokens=["<image>"], clean_up_tokenization_spaces=False, model_max_length=256)
        fast.chat_template = LLAVA_CHAT_TEMPLATE
    else:
        fast = PreTrainedTokenizerFast(
            tokenizer_object=tok,
            bos_token="<|im_start|>",
            eos_token="<end_of_utterance>",
            pad_token="<|im_end|>",
            unk_token="<|endoftext|>",
            additional_special_tokens=added,
            clean_up_tokenization_spaces=False,
            model_max_length=256,
        )
        fast.chat_template = CHAT_TEMPLATE
    assert len(fast) == len(lead) + 256 + NUM_MERGES + len(added), len(fast)
    assert [fast.convert_tokens_to_ids(t) for t in added] == [tok.token_to_id(t) for t in added]
    return fast


class _NoVideo:
    """Stands for the video processor: nothing to save, no frame defaults."""
    _auto_class = None
    num_frames = None
    fps = None


class _SmolVLMProcessorNoVideo(SmolVLMProcessor):
    """SmolVLMProcessor without its video processor (torchvision is not in
    the oracle venv): the class check skips video_processor, everything
    else (image expansion, chat template, save_pretrained's files) is
    SmolVLMProcessor's own code. Saved under SmolVLMProcessor's name."""

    def check_argument_for_proper_class(self, argument_name, argument):
        if argument_name == "video_processor" and isinstance(argument, _NoVideo):
            return None
        return super().check_argument_for_proper_class(argument_name, argument)

    def to_dict(self):
        d = super().to_dict()
        d.pop("video_processor", None)
        d["processor_class"] = "SmolVLMProcessor"
        return d


# save_pretrained writes the class name into tokenizer_config.json
_SmolVLMProcessorNoVideo.__name__ = _SmolVLMProcessorNoVideo.__qualname__ = "SmolVLMProcessor"


def make_processor(spec, tokenizer):
    if spec["family"] == "llava":
        # llava-1.5's processor_config: patch_size, the CLS row counted and
        # dropped again ("default"): 16 <image> tokens an image.
        return LlavaProcessor(CLIPImageProcessorPil(**LLAVA_IMAGE_PROCESSOR), tokenizer, patch_size=LLAVA_PATCH,
                              vision_feature_select_strategy="default", num_additional_image_tokens=1,
                              chat_template=LLAVA_CHAT_TEMPLATE)
    ip = spec["image_processor_cls"](**IMAGE_PROCESSOR)
    if spec["processor_cls"] is SmolVLMProcessor:
        from transformers.models.smolvlm import processing_smolvlm
        if processing_smolvlm.num2words is None:  # used by video prompts only
            processing_smolvlm.num2words = lambda n: str(n)
        try:
            from transformers import SmolVLMVideoProcessor
            video = SmolVLMVideoProcessor()
        except ImportError:  # needs torchvision; the image path never uses it
            video = None
        if video is None:
            return _SmolVLMProcessorNoVideo(ip, tokenizer, _NoVideo(), image_seq_len=IMAGE_SEQ_LEN,
                                            chat_template=CHAT_TEMPLATE)
        return SmolVLMProcessor(ip, tokenizer, video, image_seq_len=IMAGE_SEQ_LEN, chat_template=CHAT_TEMPLATE)
    return Idefics3Processor(ip, tokenizer, image_seq_len=IMAGE_SEQ_LEN, chat_template=CHAT_TEMPLATE)


def randomize_(model, gen, weight_std, norm_std, bias_std, pos_std, norm_suffixes=(), norm_center=1.0, plain_norms=()):
    """Overwrite every parameter in sorted-name order: norm/LayerNorm gains
    (and those ending in norm_suffixes) 1 + norm_std N(0,1) (norm_center +
    norm_std N(0,1) for the "norm.weight" gains not in norm_suffixes nor
    plain_norms: 0 where a model applies (1 + w), as Qwen3.5's text
    RMSNorms), biases bias_std N(0,1), the vision position table pos_std
    N(0,1), other weights weight_std N(0,1)."""
    with torch.no_grad():
        params = dict(model.named_parameters())
        for name in sorted(params):
            p = params[name]
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            if name.endswith(tuple(norm_suffixes) + tuple(plain_norms)):
                p.copy_(1.0 + norm_std * noise)
            elif name.endswith(("norm.weight", "layernorm.weight", "layer_norm1.weight", "layer_norm2.weight")):
                p.copy_(norm_center + norm_std * noise)
            elif name.endswith(".bias"):
                p.copy_(bias_std * noise)
            elif name.endswith("position_embedding.weight"):
                p.copy_(pos_std * noise)
            else:
                p.copy_(weight_std * noise)


def fmt_float(x):
    """The float32 value as the shortest decimal that float32 parsing gives
    back (numpy's float32 repr, ~9 digits), checked to come back exactly
    both parsed as float32 and parsed as float64 then rounded to float32."""
    x = np.float32(x)
    assert math.isfinite(float(x))
    v = float(str(x))
    assert np.float32(v) == x and np.float32(np.float64(repr(v))) == x
    return v


def dump_json(obj):
    """One top-level key per line; a case one line per key; floats repr."""
    def enc(v, indent):
        if isinstance(v, list) and v and all(isinstance(r, dict) for r in v):
            pad = " " * indent
            items = []
            for r in v:
                keys = list(r)
                body = (",\n" + pad + "  ").join(f"{json.dumps(k)}: {json.dumps(r[k], sort_keys=True)}" for k in keys)
                items.append("{\n" + pad + "  " + body + "\n" + pad + "}")
            return "[\n" + pad + ("," + "\n" + pad).join(items) + "\n" + pad[:-1] + "]"
        return json.dumps(v, sort_keys=True)

    lines = []
    for i, (k, v) in enumerate(obj.items()):
        sep = "," if i + 1 < len(obj) else ""
        lines.append(f" {json.dumps(k)}: {enc(v, 2)}{sep}")
    text = "{\n" + "\n".join(lines) + "\n}\n"
    assert json.loads(text) == obj
    return text


def write_f32(path, t):
    a = t.detach().to(torch.float32).contiguous().numpy().astype("<f4")
    with open(path, "wb") as f:
        f.write(a.tobytes())


CASES = [
    # name, content items (None = image), image files in order
    ("image_text", [None, "Can you describe this image?"], ["rgb_40x60.png"]),
    ("text_image_text", ["Look at", None, "and tell me what you see."], ["gray_17x9.png"]),
    ("two_images", [None, None, "Compare the two images."], ["wide_96x20.png", "rgb_40x60.png"]),
    ("text_only", ["What is the capital of France?"], []),
]


def build_fixture(spec, out_root):
    name = spec["name"]
    print(f"== {name}")
    out = os.path.join(out_root, name)
    # Remove only what this script writes (an emit.summary stays).
    os.makedirs(out, exist_ok=True)
    for fn in sorted(os.listdir(out)):
        if fn in GENERATED_FILES or fn.endswith(".f32"):
            os.remove(os.path.join(out, fn))
    if os.path.isdir(os.path.join(out, "images")):
        shutil.rmtree(os.path.join(out, "images"))

    llava = spec["family"] == "llava"
    images = make_images(out, spec["image_seed"])
    tokenizer = make_tokenizer(spec)
    processor = make_processor(spec, tokenizer)
    tok = processor.tokenizer
    vocab = len(tok)
    image_token_id = tok.convert_tokens_to_ids("<image>")
    eou = tok.convert_tokens_to_ids("</s>" if llava else "<end_of_utterance>")

    if llava:
        # llava-1.5's config: image_token_index at the top level,
        # vision_feature_layer -2, "default" selection, gelu projector with
        # biases; the text model as SmolVLM's fixtures', Llama's specials.
        config = LlavaConfig(
            text_config=dict(TEXT, vocab_size=vocab, bos_token_id=tok.bos_token_id, eos_token_id=eou,
                             pad_token_id=tok.pad_token_id),
            vision_config=dict(LLAVA_VISION),
            image_token_index=image_token_id,
            image_seq_length=LLAVA_IMAGE_TOKENS,
            projector_hidden_act="gelu",
            vision_feature_layer=-2,
            vision_feature_select_strategy="default",
            multimodal_projector_bias=True,
            tie_word_embeddings=False,
            pad_token_id=tok.pad_token_id,
        )
    else:
        config = spec["config_cls"](
            text_config=dict(TEXT, vocab_size=vocab),
            vision_config=dict(VISION),
            scale_factor=2,
            image_token_id=image_token_id,
            tie_word_embeddings=False,
            pad_token_id=tok.pad_token_id,
        )
    torch.manual_seed(spec["seed"])
    model = spec["model_cls"](config)
    gen = torch.Generator().manual_seed(spec["seed"])
    randomize_(model, gen, spec["weight_std"], spec["norm_std"], spec["bias_std"], spec["pos_std"])
    model = model.to(torch.float32).eval()
    # SmolVLM-256M's generation_config: bos 1, eos <end_of_utterance>, pad 2.
    model.generation_config = transformers.GenerationConfig(
        bos_token_id=tok.bos_token_id, eos_token_id=eou, pad_token_id=tok.pad_token_id)
    model.save_pretrained(out)
    processor.save_pretrained(out)

    # Reload everything from disk: the oracle is what we ship.
    model = spec["model_cls"].from_pretrained(out, dtype=torch.float32, attn_implementation="eager").eval()
    # The processor from the saved files, with the PIL backend image
    # processor whatever from_pretrained would pick (torchvision's when
    # installed): archc's preprocessing is compared with PIL's.
    with open(os.path.join(out, "processor_config.json")) as f:
        saved = json.load(f)
    ip_kwargs = {k: v for k, v in saved["image_processor"].items() if k != "image_processor_type"}
    if llava:
        assert ip_kwargs == LLAVA_IMAGE_PROCESSOR, ip_kwargs
        assert (saved["patch_size"], saved["num_additional_image_tokens"], saved["vision_feature_select_strategy"]) == (
            LLAVA_PATCH, 1, "default"), saved
    else:
        assert ip_kwargs == IMAGE_PROCESSOR, ip_kwargs
        assert saved["image_seq_len"] == IMAGE_SEQ_LEN
    with open(os.path.join(out, "chat_template.jinja")) as f:
        assert f.read() == (LLAVA_CHAT_TEMPLATE if llava else CHAT_TEMPLATE)
    processor = make_processor(spec, AutoTokenizer.from_pretrained(out))
    assert type(processor.image_processor) is spec["image_processor_cls"], type(processor.image_processor)
    tok = processor.tokenizer
    assert len(tok) == vocab and tok.convert_tokens_to_ids("<image>") == image_token_id

    cases = []
    margins_all = []
    for cname, items, files in CASES:
        content = [{"type": "image"} if it is None else {"type": "text", "text": it} for it in items]
        messages = [{"role": "user", "content": content}]
        prompt = processor.apply_chat_template(messages, add_generation_prompt=True)
        ims = [images[f] for f in files]
        if ims:
            inputs = processor(text=prompt, images=ims if llava else [ims], return_tensors="pt")
        else:
            inputs = processor(text=prompt, return_tensors="pt")
        ids = inputs["input_ids"]
        assert "pixel_values" in inputs or not ims
        case = {"name": cname, "messages": messages, "images": files, "prompt": prompt,
                "input_ids": [int(t) for t in ids[0]]}
        gen_kwargs = dict(input_ids=ids, attention_mask=inputs["attention_mask"])
        with torch.no_grad():
            if ims and llava:
                # One [3, 16, 16] crop an image: pixel_values [images, 3, 16, 16].
                pv = inputs["pixel_values"]
                case["pixel_values_shape"] = list(pv.shape)
                feats = torch.cat(list(model.model.get_image_features(pixel_values=pv).pooler_output), 0)
                case["image_features_shape"] = list(feats.shape)
                n_img = int((ids == image_token_id).sum())
                assert n_img == feats.shape[0] == LLAVA_IMAGE_TOKENS * len(ims), (n_img, feats.shape)
                case["pixel_values_files"] = [f"pixel_values.{os.path.splitext(f)[0]}.f32" for f in files]
                parts = []
                for f, pvf in zip(files, case["pixel_values_files"]):
                    one = processor.image_processor(images=[images[f]], return_tensors="pt")["pixel_values"]
                    parts.append(one)
                    path = os.path.join(out, pvf)
                    if os.path.exists(path):
                        with open(path, "rb") as fh:
                            assert fh.read() == one.numpy().astype("<f4").tobytes()
                    write_f32(path, one)
                assert torch.equal(torch.cat(parts, 0), pv)
                write_f32(os.path.join(out, f"image_features.{cname}.f32"), torch.cat([feats] + ds, -1))
                gen_kwargs.update(pixel_values=pv)
            elif ims:
                pv = inputs["pixel_values"]
                pam = inputs["pixel_attention_mask"]
                # rows/cols as the processor computes them (its image processor)
                rc = processor.image_processor(images=[ims], return_row_col_info=True, return_tensors="pt")
                assert torch.equal(rc["pixel_values"], pv)
                case["rows"] = [int(r) for r in rc["rows"][0]]
                case["cols"] = [int(c) for c in rc["cols"][0]]
                case["pixel_values_shape"] = list(pv.shape)
                padded = int(((pv == 0).flatten(2).all(-1)).sum())
                case["padded_tiles"] = padded
                case["pixel_attention_mask_all_ones"] = bool(pam.all())
                feats = model.model.get_image_features(pv, pam).pooler_output
                feats = torch.cat(list(feats), 0)
                case["image_features_shape"] = list(feats.shape)
                n_img = int((ids == image_token_id).sum())
                assert n_img == feats.shape[0], (n_img, feats.shape)
                # pixel_values per image (the case's is their concatenation
                # along the tile axis, checked): a case file would repeat them.
                case["pixel_values_files"] = [f"pixel_values.{os.path.splitext(f)[0]}.f32" for f in files]
                parts = []
                for f, pvf in zip(files, case["pixel_values_files"]):
                    one = processor.image_processor(images=[[images[f]]], return_tensors="pt")["pixel_values"]
                    parts.append(one)
                    path = os.path.join(out, pvf)
                    if os.path.exists(path):
                        with open(path, "rb") as fh:
                            assert fh.read() == one.numpy().astype("<f4").tobytes()
                    write_f32(path, one)
                assert torch.equal(torch.cat(parts, 1), pv)
                write_f32(os.path.join(out, f"image_features.{cname}.f32"), torch.cat([feats] + ds, -1))
                gen_kwargs.update(pixel_values=pv, pixel_attention_mask=pam)
            res = model.generate(**gen_kwargs, do_sample=False, max_new_tokens=MAX_NEW_TOKENS,
                                 output_logits=True, return_dict_in_generate=True)
            new = [int(t) for t in res.sequences[0, ids.shape[1]:]]
            steps = [l[0].to(torch.float32) for l in res.logits]
            assert len(new) == MAX_NEW_TOKENS, f"{name}/{cname}: stopped after {len(new)}: {new}"
            assert eou not in new, f"{name}/{cname}: eos {eou} in {new}; change the seed"
            assert len(set(new)) >= 4, f"{name}/{cname}: degenerate {new}; change the seed"
            margins = []
            for t, l in zip(new, steps):
                top2 = torch.topk(l, 2).values
                assert int(torch.argmax(l)) == t
                margins.append(float(top2[0] - top2[1]))
            margins_all += margins
            # plain forward agrees with generate's first step
            fw = dict(gen_kwargs)
            last = model(**fw, logits_to_keep=1).logits[0, -1]
            d = float((last - steps[0]).abs().max())
            assert d <= 1e-6, f"{name}/{cname}: prefill logits differ by {d}"
            if ims:
                # image_features.<case>.f32 is what replaces the <image>
                # embeddings: merged by hand, the text model gives the oracle.
                emb = model.get_input_embeddings()(ids)
                emb = emb.masked_scatter((ids == image_token_id).unsqueeze(-1), feats)
                fl = model(inputs_embeds=emb, attention_mask=fw["attention_mask"], logits_to_keep=1).logits[0, -1]
                d = float((fl - steps[0]).abs().max())
                assert d <= 1e-6, f"{name}/{cname}: merging image_features by hand moves the logits by {d}"
                case["image_features_check_max_abs_diff"] = d
                # all-zero tiles are "padding" to get_image_features and would
                # be dropped: zero the real pixels through the merge instead.
                if llava:  # no padding rule: zeros go through get_image_features
                    zfeat = torch.cat(list(model.model.get_image_features(
                        pixel_values=torch.zeros_like(pv)).pooler_output), 0)
                else:
                    zfeat = model.model.connector(model.model.vision_model(
                        pixel_values=torch.zeros_like(pv[0]),
                        patch_attention_mask=None).last_hidden_state).reshape(-1, feats.shape[-1])
                emb = model.get_input_embeddings()(ids)
                emb = emb.masked_scatter((ids == image_token_id).unsqueeze(-1), zfeat)
                zl = model(inputs_embeds=emb, attention_mask=fw["attention_mask"], logits_to_keep=1).logits[0, -1]
                diff = float((zl - steps[0]).abs().max())
                assert diff >= IMAGE_MIN_DIFF, f"{name}/{cname}: the image does not matter ({diff})"
                # greedy on, without a cache (informative: not an oracle)
                zt = []
                for _ in range(MAX_NEW_TOKENS):
                    l = model(inputs_embeds=emb, attention_mask=torch.ones(emb.shape[:2], dtype=torch.long),
                              logits_to_keep=1).logits[0, -1]
                    zt.append(int(torch.argmax(l)))
                    emb = torch.cat([emb, model.get_input_embeddings()(torch.tensor([[zt[-1]]]))], 1)
                assert zt != new, f"{name}/{cname}: zeroed pixels generate the same tokens {new}"
                case["image_check"] = {"max_abs_first_logit_diff": diff, "zeroed_pixels_tokens": zt}
        case["tokens"] = new
        case["min_top2_margin"] = min(margins)
        case["first_logits"] = [fmt_float(x) for x in steps[0]]
        print(f"  {cname}: {len(case['input_ids'])} ids, {files} -> {new} (margin {min(margins):.4g})")
        cases.append(case)

    min_margin = min(margins_all)
    assert min_margin >= MIN_TOP2_MARGIN, f"{name}: near-tie on the greedy path; change the seed"
    oracle = {
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "model_class": spec["model_cls"].__name__,
        "processor_class": spec["processor_cls"].__name__,
        "image_processor_class": spec["image_processor_cls"].__name__,
        "dtype": "float32",
        "attn_implementation": "eager",
        "seed": spec["seed"],
        "image_seed": spec["image_seed"],
        "image_token_id": image_token_id,
        "eos_token_id": eou,
        "max_new_tokens": MAX_NEW_TOKENS,
    }
    if llava:
        oracle.update({
            "image_seq_len": LLAVA_IMAGE_TOKENS,
            "pixel_values_layout": "[images of the prompt in order, 3, H, W]: one center crop an image, raw "
                                   "little-endian float32, C order. Written per image: pixel_values.<image>.f32 is "
                                   "[1, 3, H, W] and a case's pixel_values are its pixel_values_files concatenated "
                                   "along the image axis",
            "image_features_layout": "[image tokens, text hidden]: the projector's output for every image in "
                                     "pixel_values order, 16 rows an image (the CLS row dropped); row i replaces "
                                     "the i-th <image> token",
            "image_check_method": "first-step logits with the real pixel_values vs with pixel_values zeroed "
                                  "(through get_image_features): max abs diff (>= 1e-2 enforced), and the 16 "
                                  "greedy tokens with the zeroed pixels (no cache; they differ from tokens, "
                                  "enforced)",
        })
    else:
        oracle.update({
            "image_seq_len": IMAGE_SEQ_LEN,
            "pixel_values_layout": "[batch 1, tiles of all the prompt's images in order (each image's rows x cols "
                                   "crops row-major, then its global resize), 3, H, W], raw little-endian float32, "
                                   "C order; no padded (all-zero) tile with one prompt (padded_tiles 0). Written per image: "
                                   "pixel_values.<image>.f32 is [1, that image's tiles, 3, H, W] and a case's "
                                   "pixel_values are its pixel_values_files concatenated along the tile axis",
            "image_features_layout": "[image tokens, text hidden]: the connector's output for every tile in "
                                     "pixel_values order, 4 rows a tile; row i replaces the i-th <image> token",
            "image_check_method": "first-step logits with the real pixel_values vs with pixel_values zeroed: "
                                  "max abs diff (>= 1e-2 enforced), and the 16 greedy tokens with the zeroed "
                                  "pixels (no cache; they differ from tokens, enforced). The zero tiles run "
                                  "through the tower and connector directly (get_image_features drops all-zero "
                                  "tiles as padding)",
        })
    oracle.update({
        "image_features_check_method": "embed_tokens(input_ids) with the <image> rows replaced in order by "
                                       "image_features, through the text model and lm_head, vs first_logits: "
                                       "max abs diff (<= 1e-6 enforced)",
        "min_top2_margin": min_margin,
        "cases": cases,
    })
    with open(os.path.join(out, "oracle.json"), "w") as f:
        f.write(dump_json(oracle))

    total = report_folder(out)
    if not spec.get("share_with"):  # a sharing folder is checked once shared (share)
        assert total <= MAX_FOLDER_BYTES, f"{name}: {total} bytes > {MAX_FOLDER_BYTES}"

def report_folder(out):
    """Prints each file of a fixture folder with its size and sha256 and
    returns the bytes of what this script writes (emit.summary, the Go
    tests' structural golden, is kept and not counted)."""
    total = 0
    for root, _, fns in sorted(os.walk(out)):
        for fn in sorted(fns):
            p = os.path.join(root, fn)
            size = os.path.getsize(p)
            if fn != "emit.summary":
                total += size
            with open(p, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            print(f"  {os.path.relpath(p, out):36s} {size:8d}  {digest}")
    print(f"  total {total} bytes")
    return total


# ---- Gemma 3 (Gemma3ForConditionalGeneration) ----

# google/gemma-3-4b-it's chat template (chat_template.json), written from
# its released text: <bos>, a system message folded into the first user
# turn, roles user/model, images as <start_of_image>, texts trimmed.
GEMMA3_CHAT_TEMPLATE = (
    "{{ bos_token }}\n"
    "{%- if messages[0]['role'] == 'system' -%}\n"
    "    {%- if messages[0]['content'] is string -%}\n"
    "        {%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}\n"
    "    {%- else -%}\n"
    "        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\\n\\n' -%}\n"
    "    {%- endif -%}\n"
    "    {%- set loop_messages = messages[1:] -%}\n"
    "{%- else -%}\n"
    "    {%- set first_user_prefix = \"\" -%}\n"
    "    {%- set loop_messages = messages -%}\n"
    "{%- endif -%}\n"
    "{%- for message in loop_messages -%}\n"
    "    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}\n"
    "        {{ raise_exception(\"Conversation roles must alternate user/assistant/user/assistant/...\") }}\n"
    "    {%- endif -%}\n"
    "    {%- if (message['role'] == 'assistant') -%}\n"
    "        {%- set role = \"model\" -%}\n"
    "    {%- else -%}\n"
    "        {%- set role = message['role'] -%}\n"
    "    {%- endif -%}\n"
    "    {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else \"\") }}\n"
    "    {%- if message['content'] is string -%}\n"
    "        {{ message['content'] | trim }}\n"
    "    {%- elif message['content'] is iterable -%}\n"
    "        {%- for item in message['content'] -%}\n"
    "            {%- if item['type'] == 'image' -%}\n"
    "                {{ '<start_of_image>' }}\n"
    "            {%- elif item['type'] == 'text' -%}\n"
    "                {{ item['text'] | trim }}\n"
    "            {%- endif -%}\n"
    "        {%- endfor -%}\n"
    "    {%- else -%}\n"
    "        {{ raise_exception(\"Invalid content type\") }}\n"
    "    {%- endif -%}\n"
    "    {{ '<end_of_turn>\\n' }}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "    {{'<start_of_turn>model\\n'}}\n"
    "{%- endif -%}\n"
)
# Gemma's leading specials (<pad> 0, <eos> 1, <bos> 2, <unk> 3), then the
# bytes and merges, then Gemma 3's turn and image tokens.
GEMMA3_LEAD_SPECIALS = ["<pad>", "<eos>", "<bos>", "<unk>"]
GEMMA3_ADDED_SPECIALS = ["<start_of_turn>", "<end_of_turn>", "<start_of_image>", "<end_of_image>", "<image_soft_token>"]
# gemma-3-4b-it's preprocessor_config.json (Gemma3ImageProcessor) with
# 896 -> 16: a bilinear resize to 16x16, mean and std 0.5, no pan and scan.
GEMMA3_IMAGE_PROCESSOR = dict(
    do_convert_rgb=True,  # gemma-3 has null, Gemma3Processor passes True
    do_normalize=True,
    do_pan_and_scan=None,
    do_rescale=True,
    do_resize=True,
    image_mean=[0.5, 0.5, 0.5],
    image_std=[0.5, 0.5, 0.5],
    pan_and_scan_max_num_crops=None,
    pan_and_scan_min_crop_size=None,
    pan_and_scan_min_ratio_to_activate=None,
    resample=2,  # PIL.Image.BILINEAR
    rescale_factor=1 / 255,
    size={"height": 16, "width": 16},
)
GEMMA3_MM_TOKENS = 4  # a 4x4 patch grid average-pooled 2x2
GEMMA3_VISION = dict(
    model_type="siglip_vision_model",
    hidden_size=16,
    intermediate_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_channels=3,
    image_size=16,
    patch_size=4,
    hidden_act="gelu_pytorch_tanh",
    layer_norm_eps=1e-6,
    vision_use_head=False,  # gemma-3's
)
# Gemma3TextConfig at a tiny scale: layer 0 sliding (window 12, smaller
# than the prompts), then global, sliding, global; queries scaled by
# 2^-0.5 (sharper than head_dim^-0.5), so that the image's bidirectional
# mask moves the logits by >= 1e-2 in every image case.
GEMMA3_TEXT = dict(
    model_type="gemma3_text",
    hidden_size=32,
    intermediate_size=24,
    num_hidden_layers=4,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=8,
    query_pre_attn_scalar=2,
    sliding_window=12,
    layer_types=["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
    max_position_embeddings=256,
    rms_norm_eps=1e-6,
    hidden_activation="gelu_pytorch_tanh",
    rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
                     "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
    final_logit_softcapping=None,
    attn_logit_softcapping=None,
    initializer_range=0.2,
)
GEMMA3_CASES = CASES + [
    # The image's soft tokens straddle position 32, the golden tests'
    # prefill bucket: archc keeps the run in one chunk.
    ("long_text_image", ["Please look at the pic:", None],
     ["rgb_40x60.png"]),
    # Pan and scan (the processor call's kwargs, 4th item): the 96x20 image
    # and its 4 crops of 24x20, five tiles, each its own soft-token run.
    ("pan_and_scan", ["Read this wide picture:", None], ["wide_96x20.png"],
     {"do_pan_and_scan": True, "pan_and_scan_min_crop_size": 8, "pan_and_scan_max_num_crops": 4,
      "pan_and_scan_min_ratio_to_activate": 1.2}),
]
GEMMA3_STRADDLE = 32


def make_gemma3_tokenizer():
    lead, added = GEMMA3_LEAD_SPECIALS, GEMMA3_ADDED_SPECIALS
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=len(lead) + 256 + NUM_MERGES, min_frequency=2, special_tokens=lead,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(BPE_TEXT, trainer=trainer)
    assert tok.get_vocab_size() == len(lead) + 256 + NUM_MERGES, tok.get_vocab_size()
    tok.add_special_tokens(added)
    first = len(lead) + 256 + NUM_MERGES
    assert [tok.token_to_id(t) for t in added] == list(range(first, first + len(added)))
    # The template writes <bos>: the tokenizer adds none (no post-processor template).
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>", unk_token="<unk>",
        additional_special_tokens=added, clean_up_tokenization_spaces=False, model_max_length=256,
        extra_special_tokens={"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                              "image_token": "<image_soft_token>"})
    fast.chat_template = GEMMA3_CHAT_TEMPLATE
    return fast


def make_gemma3_processor(tokenizer):
    return Gemma3Processor(Gemma3ImageProcessorPil(**GEMMA3_IMAGE_PROCESSOR), tokenizer,
                           chat_template=GEMMA3_CHAT_TEMPLATE, image_seq_length=GEMMA3_MM_TOKENS)


def build_gemma3(spec, out_root):
    name = spec["name"]
    print(f"== {name}")
    out = os.path.join(out_root, name)
    os.makedirs(out, exist_ok=True)
    for fn in sorted(os.listdir(out)):
        if fn in GENERATED_FILES or fn.endswith(".f32"):
            os.remove(os.path.join(out, fn))
    if os.path.isdir(os.path.join(out, "images")):
        shutil.rmtree(os.path.join(out, "images"))
    images = make_images(out, spec["image_seed"])
    processor = make_gemma3_processor(make_gemma3_tokenizer())
    tok = processor.tokenizer
    vocab = len(tok)
    image_token_id = tok.convert_tokens_to_ids("<image_soft_token>")
    assert tok.image_token_id == image_token_id
    boi, eoi = tok.convert_tokens_to_ids("<start_of_image>"), tok.convert_tokens_to_ids("<end_of_image>")
    eos = [tok.convert_tokens_to_ids("<eos>"), tok.convert_tokens_to_ids("<end_of_turn>")]
    config = Gemma3Config(
        text_config=dict(GEMMA3_TEXT, vocab_size=vocab, bos_token_id=tok.bos_token_id, eos_token_id=eos,
                         pad_token_id=tok.pad_token_id),
        vision_config=dict(GEMMA3_VISION),
        mm_tokens_per_image=GEMMA3_MM_TOKENS,
        boi_token_index=boi, eoi_token_index=eoi, image_token_index=image_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(spec["seed"])
    model = Gemma3ForConditionalGeneration(config)
    gen = torch.Generator().manual_seed(spec["seed"])
    randomize_(model, gen, spec["weight_std"], spec["norm_std"], spec["bias_std"], spec["pos_std"])
    with torch.no_grad():  # Gemma3RMSNorm scales by 1 + weight: gains near 1 are weights near 0
        for pname, p in model.named_parameters():
            if pname.endswith("norm.weight") and not pname.startswith("model.vision_tower."):
                p.sub_(1.0)
        # Tied embeddings, scaled by sqrt(hidden): smaller, so that the
        # layers, not the last token's own embedding, choose the next token.
        model.model.language_model.embed_tokens.weight.mul_(spec["embed_scale"])
    model = model.to(torch.float32).eval()
    model.generation_config = transformers.GenerationConfig(
        bos_token_id=tok.bos_token_id, eos_token_id=eos, pad_token_id=tok.pad_token_id)
    model.save_pretrained(out)
    processor.save_pretrained(out)

    model = Gemma3ForConditionalGeneration.from_pretrained(out, dtype=torch.float32, attn_implementation="eager").eval()
    with open(os.path.join(out, "processor_config.json")) as f:
        saved = json.load(f)
    ip_kwargs = {k: v for k, v in saved["image_processor"].items() if k != "image_processor_type"}
    assert saved["image_seq_length"] == GEMMA3_MM_TOKENS, saved
    with open(os.path.join(out, "chat_template.jinja")) as f:
        assert f.read() == GEMMA3_CHAT_TEMPLATE
    processor = Gemma3Processor(Gemma3ImageProcessorPil(**ip_kwargs), AutoTokenizer.from_pretrained(out),
                                chat_template=GEMMA3_CHAT_TEMPLATE, image_seq_length=GEMMA3_MM_TOKENS)
    tok = processor.tokenizer
    assert len(tok) == vocab and tok.image_token_id == image_token_id

    cases, margins_all, straddles = [], [], False
    for cname, items, files, *extra in GEMMA3_CASES:
        pkw = extra[0] if extra else {}  # image processor kwargs of the call (pan and scan)
        content = [{"type": "image"} if it is None else {"type": "text", "text": it} for it in items]
        messages = [{"role": "user", "content": content}]
        prompt = processor.apply_chat_template(messages, add_generation_prompt=True)
        ims = [images[f] for f in files]
        if ims:
            inputs = processor(text=prompt, images=[ims], return_tensors="pt", **pkw)
        else:
            inputs = processor(text=prompt, return_tensors="pt")
        ids = inputs["input_ids"]
        tti = inputs["token_type_ids"]
        assert torch.equal(tti, (ids == image_token_id).long()), "token_type_ids are not the soft-token mask"
        case = {"name": cname, "messages": messages, "images": files, "prompt": prompt,
                "input_ids": [int(t) for t in ids[0]]}
        if pkw:
            case["image_processor_kwargs"] = pkw
        img_pos = [i for i, t in enumerate(case["input_ids"]) if t == image_token_id]
        if img_pos and min(img_pos) < GEMMA3_STRADDLE <= max(img_pos):
            straddles = True
            case["image_straddles_position"] = GEMMA3_STRADDLE
        gen_kwargs = dict(input_ids=ids, attention_mask=inputs["attention_mask"], token_type_ids=tti)
        with torch.no_grad():
            if ims:
                pv = inputs["pixel_values"]
                case["pixel_values_shape"] = list(pv.shape)
                feats = torch.cat(list(model.model.get_image_features(pixel_values=pv).pooler_output), 0)
                case["image_features_shape"] = list(feats.shape)
                assert len(img_pos) == feats.shape[0] == GEMMA3_MM_TOKENS * pv.shape[0]
                assert pv.shape[0] > len(ims) if pkw.get("do_pan_and_scan") else pv.shape[0] == len(ims)
                suffix = ".pan_and_scan" if pkw else ""  # the image and its crops, [1 + crops, 3, H, W]
                case["pixel_values_files"] = [f"pixel_values.{os.path.splitext(f)[0]}{suffix}.f32" for f in files]
                parts = []
                for f, pvf in zip(files, case["pixel_values_files"]):
                    one = processor.image_processor(images=[images[f]], return_tensors="pt", **pkw)["pixel_values"]
                    parts.append(one)
                    path = os.path.join(out, pvf)
                    if os.path.exists(path):
                        with open(path, "rb") as fh:
                            assert fh.read() == one.numpy().astype("<f4").tobytes()
                    write_f32(path, one)
                assert torch.equal(torch.cat(parts, 0), pv)
                write_f32(os.path.join(out, f"image_features.{cname}.f32"), torch.cat([feats] + ds, -1))
                gen_kwargs.update(pixel_values=pv)
            res = model.generate(**gen_kwargs, do_sample=False, max_new_tokens=MAX_NEW_TOKENS,
                                 output_logits=True, return_dict_in_generate=True)
            new = [int(t) for t in res.sequences[0, ids.shape[1]:]]
            steps = [l[0].to(torch.float32) for l in res.logits]
            assert len(new) == MAX_NEW_TOKENS, f"{name}/{cname}: stopped after {len(new)}: {new}"
            assert not set(eos) & set(new), f"{name}/{cname}: eos in {new}; change the seed"
            assert len(set(new)) >= 4, f"{name}/{cname}: degenerate {new}; change the seed"
            margins = []
            for t, l in zip(new, steps):
                top2 = torch.topk(l, 2).values
                assert int(torch.argmax(l)) == t
                margins.append(float(top2[0] - top2[1]))
            margins_all += margins
            fw = dict(gen_kwargs)
            last = model(**fw, logits_to_keep=1).logits[0, -1]
            d = float((last - steps[0]).abs().max())
            assert d <= 1e-6, f"{name}/{cname}: prefill logits differ by {d}"
            if ims:
                emb = model.get_input_embeddings()(ids)  # Gemma3TextScaledWordEmbedding: scaled
                emb = emb.masked_scatter((ids == image_token_id).unsqueeze(-1), feats)
                fl = model(inputs_embeds=emb, attention_mask=fw["attention_mask"], token_type_ids=tti,
                           logits_to_keep=1).logits[0, -1]
                d = float((fl - steps[0]).abs().max())
                assert d <= 1e-6, f"{name}/{cname}: merging image_features by hand moves the logits by {d}"
                case["image_features_check_max_abs_diff"] = d
                # The bidirectional mask among an image's tokens matters:
                # the same merge without token_type_ids (causal only).
                cl = model(inputs_embeds=emb, attention_mask=fw["attention_mask"], logits_to_keep=1).logits[0, -1]
                bd = float((cl - steps[0]).abs().max())
                assert bd >= IMAGE_MIN_DIFF, f"{name}/{cname}: the bidirectional image mask does not matter ({bd})"
                case["bidirectional_check"] = {"max_abs_first_logit_diff_causal_only": bd}
                zfeat = torch.cat(list(model.model.get_image_features(
                    pixel_values=torch.zeros_like(pv)).pooler_output), 0)
                emb = model.get_input_embeddings()(ids)
                emb = emb.masked_scatter((ids == image_token_id).unsqueeze(-1), zfeat)
                zl = model(inputs_embeds=emb, attention_mask=fw["attention_mask"], token_type_ids=tti,
                           logits_to_keep=1).logits[0, -1]
                diff = float((zl - steps[0]).abs().max())
                assert diff >= IMAGE_MIN_DIFF, f"{name}/{cname}: the image does not matter ({diff})"
                res0 = model.generate(**dict(gen_kwargs, pixel_values=torch.zeros_like(pv)), do_sample=False,
                                      max_new_tokens=MAX_NEW_TOKENS)
                zt = [int(t) for t in res0[0, -MAX_NEW_TOKENS:]]
                assert zt != new, f"{name}/{cname}: zeroed pixels generate the same tokens {new}"
                case["image_check"] = {"max_abs_first_logit_diff": diff, "zeroed_pixels_tokens": zt}
        case["tokens"] = new
        case["min_top2_margin"] = min(margins)
        case["first_logits"] = [fmt_float(x) for x in steps[0]]
        print(f"  {cname}: {len(case['input_ids'])} ids, {files} -> {new} (margin {min(margins):.4g})")
        cases.append(case)
    assert straddles, f"{name}: no case's image crosses position {GEMMA3_STRADDLE}"
    min_margin = min(margins_all)
    assert min_margin >= MIN_TOP2_MARGIN, f"{name}: near-tie on the greedy path; change the seed"
    oracle = {
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "model_class": "Gemma3ForConditionalGeneration",
        "processor_class": "Gemma3Processor",
        "image_processor_class": "Gemma3ImageProcessorPil",
        "dtype": "float32",
        "attn_implementation": "eager",
        "seed": spec["seed"],
        "image_seed": spec["image_seed"],
        "image_token_id": image_token_id,
        "eos_token_id": eos,
        "max_new_tokens": MAX_NEW_TOKENS,
        "image_seq_len": GEMMA3_MM_TOKENS,
        "pixel_values_layout": "[images of the prompt in order, 3, H, W]: one resized image each, raw little-endian "
                               "float32, C order. Written per image: pixel_values.<image>.f32 is [1, 3, H, W] and a "
                               "case's pixel_values are its pixel_values_files concatenated along the image axis",
        "image_features_layout": "[image tokens, text hidden]: Gemma3MultiModalProjector's output for every image in "
                                 "pixel_values order, mm_tokens_per_image rows an image; row i replaces the i-th "
                                 "<image_soft_token>",
        "image_check_method": "first-step logits with the real pixel_values vs with pixel_values zeroed (through "
                              "get_image_features): max abs diff (>= 1e-2 enforced), and the 16 greedy tokens with "
                              "the zeroed pixels (they differ from tokens, enforced)",
        "bidirectional_check_method": "first-step logits with the image rows merged by hand, without token_type_ids "
                                      "(a causal mask only) vs first_logits: max abs diff (>= 1e-2 enforced)",
        "image_features_check_method": "embed_tokens(input_ids) (scaled) with the <image_soft_token> rows replaced "
                                       "in order by image_features, through the text model with token_type_ids and "
                                       "lm_head, vs first_logits: max abs diff (<= 1e-6 enforced)",
        "min_top2_margin": min_margin,
        "cases": cases,
    }
    with open(os.path.join(out, "oracle.json"), "w") as f:
        f.write(dump_json(oracle))
    total = report_folder(out)
    assert total <= MAX_FOLDER_BYTES, f"{name}: {total} bytes > {MAX_FOLDER_BYTES}"


# ---- Qwen2-VL (Qwen2VLForConditionalGeneration) ----

# Qwen2-VL-2B/7B-Instruct's chat template (chat_template.json), written from
# its released text: a default system message when the first message is
# not one, <|im_start|>role\n … <|im_end|>\n, each image as
# <|vision_start|><|image_pad|><|vision_end|> (Qwen2VLProcessor expands
# <|image_pad|> to the image's merged patch count), optional
# "Picture N: " labels (add_vision_id, off).
QWEN2VL_CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "{% if add_vision_id %}Picture {{ image_count.value }}: {% endif %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}"
    "{% if add_vision_id %}Video {{ video_count.value }}: {% endif %}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# Qwen2's pre-tokenizer (Qwen2-VL's tokenizer.json): this split, then
# byte-level without its own regex; NFC normalizer.
QWEN2_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
# The 256 bytes and the merges first (Qwen2's BPE vocab), then Qwen's added
# tokens in their order (151643 <|endoftext|>, 151644 <|im_start|>,
# 151645 <|im_end|>, 151652 <|vision_start|>, 151653 <|vision_end|>,
# 151655 <|image_pad|>, 151656 <|video_pad|>; the ids between, object_ref
# and box tokens and <|vision_pad|>, left out).
QWEN2VL_ADDED_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
                          "<|image_pad|>", "<|video_pad|>"]
# Qwen2-VL's preprocessor_config.json (Qwen2VLImageProcessor: BICUBIC,
# CLIP's mean and std, patch 14, merge 2, temporal patch 2, min_pixels
# 56*56, max_pixels 28*28*1280) scaled down: patch 4 (a resized side is a
# multiple of 8), min_pixels 256 (8*8*4), max_pixels 512 (8*8*8). The 40x60
# image (2560 pixels after rounding) and the 96x20 one (1536) are
# downscaled, the 17x9 gray one (128) upscaled: grids (t, h, w) of patches
# (1, 6, 4), (1, 2, 12) and (1, 4, 6), 24 patches and 6 merged tokens each,
# three different (h, w) shapes ((3, 2), (1, 6), (2, 3) after the 2x2 merge).
QWEN2VL_PATCH = 4
QWEN2VL_IMAGE_PROCESSOR = dict(
    do_convert_rgb=True,
    do_normalize=True,
    do_rescale=True,
    do_resize=True,
    image_mean=[0.48145466, 0.4578275, 0.40821073],
    image_std=[0.26862954, 0.26130258, 0.27577711],
    merge_size=2,
    patch_size=QWEN2VL_PATCH,
    resample=3,  # PIL.Image.BICUBIC
    rescale_factor=1 / 255,
    size={"longest_edge": 512, "shortest_edge": 256},
    temporal_patch_size=2,
)
# Qwen2VLVisionConfig at a tiny scale (Qwen2-VL's: depth 32, embed_dim
# 1280, 16 heads, mlp_ratio 4, quick_gelu, patch 14): 2 blocks of 16 wide,
# 2 heads of 8 (the 2-D RoPE: 2 frequencies for rows, 2 for columns),
# mlp_ratio 2; the merger's output is the text hidden size.
QWEN2VL_VISION = dict(
    depth=2,
    embed_dim=16,
    num_heads=2,
    mlp_ratio=2,
    hidden_act="quick_gelu",
    in_channels=3,
    patch_size=QWEN2VL_PATCH,
    temporal_patch_size=2,
    spatial_merge_size=2,
)
# Qwen2_5_VLVisionConfig at a tiny scale (Qwen2.5-VL-7B's: depth 32,
# hidden 1280, 16 heads, intermediate 3420, silu, patch 14, window 112,
# full attention in blocks 7, 15, 23, 31): 2 blocks of 16 wide, 2 heads of
# 8, intermediate 24; window_size 16 pixels is 2 merge units of 8 (4
# patches), so every image has several windows (grids of 3×2, 2×3 and 1×6
# merge units: 2, 2 and 3 windows); block 0 attends within windows, block
# 1 over the image (fullatt_block_indexes [1]).
QWEN25VL_VISION = dict(
    depth=2,
    hidden_size=16,
    intermediate_size=24,
    num_heads=2,
    hidden_act="silu",
    in_channels=3,
    patch_size=QWEN2VL_PATCH,
    temporal_patch_size=2,
    spatial_merge_size=2,
    window_size=16,
    fullatt_block_indexes=[1],
)
# Qwen3_5VisionConfig at a tiny scale (Qwen3.5's: depth 27, hidden 1152,
# 16 heads, intermediate 4304, gelu_pytorch_tanh, patch 16, a 48×48
# position table): 2 blocks of 16 wide, 2 heads of 8, intermediate 24,
# patch 4 (the processor's); a 3×3 position table (num_position_embeddings
# 9), which every image's grid resamples (none is 3×3).
QWEN35_VISION = dict(
    depth=2,
    hidden_size=16,
    intermediate_size=24,
    num_heads=2,
    hidden_act="gelu_pytorch_tanh",
    in_channels=3,
    patch_size=QWEN2VL_PATCH,
    temporal_patch_size=2,
    spatial_merge_size=2,
    num_position_embeddings=9,
)
# Qwen3_5TextConfig at a tiny scale: hidden 64, a gated DeltaNet layer
# (2 key heads of 8, 4 value heads of 12) then a gated-attention layer (2
# heads of 32 on 1 kv head, partial rotary 0.5: 16 rotary dimensions, 8
# frequencies, M-RoPE sections [2, 3, 3] interleaved, theta 100 so that
# the low frequencies the sections move turn), intermediate 32.
QWEN35_TEXT = dict(
    hidden_size=64,
    intermediate_size=32,
    num_hidden_layers=2,
    layer_types=["linear_attention", "full_attention"],
    num_attention_heads=2,
    num_key_value_heads=1,
    head_dim=32,
    linear_conv_kernel_dim=4,
    linear_num_key_heads=2,
    linear_num_value_heads=4,
    linear_key_head_dim=8,
    linear_value_head_dim=12,
    max_position_embeddings=256,
    rms_norm_eps=1e-6,
    hidden_act="silu",
    rope_parameters={"rope_type": "default", "rope_theta": 100.0, "partial_rotary_factor": 0.5,
                     "mrope_section": [2, 3, 3], "mrope_interleaved": True},
    mtp_num_hidden_layers=0,
    initializer_range=0.2,
)
# Qwen3_5MoeTextConfig as QWEN35_TEXT with Qwen3-Next's experts in place
# of the dense MLP: 4 experts of 8, top 2, a shared expert of 8 (and
# value heads of 8: the folder's size limit).
QWEN35_MOE_TEXT = {k: v for k, v in QWEN35_TEXT.items() if k != "intermediate_size"}
QWEN35_MOE_TEXT.update(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=8, shared_expert_intermediate_size=8,
                       linear_value_head_dim=8)
# Qwen3VLVisionConfig at QWEN35_VISION's scale with two DeepStack mergers,
# after blocks 0 and 1 (Qwen3-VL's: after 8, 16 and 24 of 27): their rows
# are added after the text model's layers 0 and 1.
QWEN3VL_VISION = dict(QWEN35_VISION, deepstack_visual_indexes=[0, 1])
# Qwen3VLTextConfig at a tiny scale: hidden 64, 4 heads of 16 on 2 kv
# heads, intermediate 32, 2 layers (each takes a DeepStack merger's rows);
# interleaved M-RoPE sections [2, 3, 3] over 8 frequencies, theta 100 so
# that the low frequencies the sections move turn.
QWEN3VL_TEXT = dict(
    hidden_size=64,
    intermediate_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    max_position_embeddings=256,
    rms_norm_eps=1e-6,
    hidden_act="silu",
    rope_parameters={"rope_type": "default", "rope_theta": 100.0, "mrope_section": [2, 3, 3],
                     "mrope_interleaved": True},
    initializer_range=0.2,
)
# Qwen3VLMoeTextConfig as QWEN3VL_TEXT with layer 1 a MoE of 4 experts of 8,
# top 2 (always renormalised).
QWEN3VL_MOE_TEXT = dict(QWEN3VL_TEXT, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=8,
                        decoder_sparse_step=1, mlp_only_layers=[0])
# Qwen2VLTextConfig at the text fixture qwen2_vl's scale: hidden 64, 4
# heads on 2 kv heads of 16 (head_dim = hidden / heads: the config has no
# head_dim), intermediate 32; M-RoPE with mrope_section [2, 3, 3] (t, h, w
# over head_dim/2 = 8 frequencies, unequal so the sections matter) and
# theta 10000 (Qwen2-VL's is 1e6: at these positions the low frequencies
# would barely turn).
QWEN2VL_TEXT = dict(
    hidden_size=64,
    intermediate_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=256,
    rms_norm_eps=1e-6,
    hidden_act="silu",
    rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
    initializer_range=0.2,
)
QWEN2VL_MROPE_SECTION_SWAPPED = [3, 3, 2]  # the section check's other split
QWEN2VL_CASES = [
    # name, messages as (role, content items: None = image), image files in order
    ("image_text", [("user", [None, "Can you describe this image?"])], ["rgb_40x60.png"]),
    ("text_image_text", [("user", ["Look at", None, "and tell me what you see."])], ["gray_17x9.png"]),
    ("two_images", [("user", [None, None, "Compare the two images."])], ["wide_96x20.png", "rgb_40x60.png"]),
    # The wide image in the first turn, the gray one in the second, after an
    # assistant reply: the text between them and after them is shifted by
    # both images' position deltas.
    ("two_turns", [("user", [None, "What is this?"]), ("assistant", ["A wide picture."]),
                   ("user", ["And this one?", None])], ["wide_96x20.png", "gray_17x9.png"]),
    ("text_only", [("user", ["What is the capital of France?"])], []),
]


def make_qwen2vl_tokenizer():
    """A byte-level BPE with Qwen2's pre-tokenizer (split, then bytes),
    Qwen's added tokens after the merges; no BOS (Qwen adds none), eos
    <|im_end|>, pad <|endoftext|>."""
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(vocab_size=256 + NUM_MERGES, min_frequency=2, special_tokens=[],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(BPE_TEXT, trainer=trainer)
    assert tok.get_vocab_size() == 256 + NUM_MERGES, tok.get_vocab_size()
    added = QWEN2VL_ADDED_SPECIALS
    tok.add_special_tokens(added)
    first = 256 + NUM_MERGES
    assert [tok.token_to_id(t) for t in added] == list(range(first, first + len(added)))
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=None, eos_token="<|im_end|>", pad_token="<|endoftext|>", unk_token=None,
        additional_special_tokens=added, clean_up_tokenization_spaces=False, model_max_length=256)
    fast.chat_template = QWEN2VL_CHAT_TEMPLATE
    assert len(fast) == first + len(added), len(fast)
    return fast


class _Qwen2VLProcessorNoVideo(Qwen2VLProcessor):
    """Qwen2VLProcessor without its video processor (Qwen2VLVideoProcessor
    needs torchvision, not in the oracle venv), as _SmolVLMProcessorNoVideo:
    image expansion, chat template and save_pretrained's files are
    Qwen2VLProcessor's own code; saved under its name."""

    def check_argument_for_proper_class(self, argument_name, argument):
        if argument_name == "video_processor" and isinstance(argument, _NoVideo):
            return None
        return super().check_argument_for_proper_class(argument_name, argument)

    def to_dict(self):
        d = super().to_dict()
        d.pop("video_processor", None)
        d["processor_class"] = "Qwen2VLProcessor"
        return d


_Qwen2VLProcessorNoVideo.__name__ = _Qwen2VLProcessorNoVideo.__qualname__ = "Qwen2VLProcessor"


class _Qwen2_5_VLProcessorNoVideo(Qwen2_5_VLProcessor):
    """Qwen2_5_VLProcessor without its video processor, as
    _Qwen2VLProcessorNoVideo; saved under its name."""

    def check_argument_for_proper_class(self, argument_name, argument):
        if argument_name == "video_processor" and isinstance(argument, _NoVideo):
            return None
        return super().check_argument_for_proper_class(argument_name, argument)

    def to_dict(self):
        d = super().to_dict()
        d.pop("video_processor", None)
        d["processor_class"] = "Qwen2_5_VLProcessor"
        return d


_Qwen2_5_VLProcessorNoVideo.__name__ = _Qwen2_5_VLProcessorNoVideo.__qualname__ = "Qwen2_5_VLProcessor"


class _Qwen3VLProcessorNoVideo(Qwen3VLProcessor):
    """Qwen3VLProcessor (Qwen3-VL's and Qwen3.5's) without its video
    processor, as _Qwen2VLProcessorNoVideo; saved under its name."""

    def check_argument_for_proper_class(self, argument_name, argument):
        if argument_name == "video_processor" and isinstance(argument, _NoVideo):
            return None
        return super().check_argument_for_proper_class(argument_name, argument)

    def to_dict(self):
        d = super().to_dict()
        d.pop("video_processor", None)
        d["processor_class"] = "Qwen3VLProcessor"
        return d


_Qwen3VLProcessorNoVideo.__name__ = _Qwen3VLProcessorNoVideo.__qualname__ = "Qwen3VLProcessor"


def make_qwen2vl_processor(image_processor, tokenizer, cls=Qwen2VLProcessor):
    stand_in = {Qwen2VLProcessor: _Qwen2VLProcessorNoVideo, Qwen2_5_VLProcessor: _Qwen2_5_VLProcessorNoVideo,
                Qwen3VLProcessor: _Qwen3VLProcessorNoVideo}[cls]
    try:
        from transformers import Qwen2VLVideoProcessor
        video = Qwen2VLVideoProcessor()
    except ImportError:  # needs torchvision; the image path never uses it
        video = None
    if video is None:
        return stand_in(image_processor, tokenizer, _NoVideo(), chat_template=QWEN2VL_CHAT_TEMPLATE)
    return cls(image_processor, tokenizer, video, chat_template=QWEN2VL_CHAT_TEMPLATE)


def qwen3_vl_moe_published_experts(out):
    """The stacked experts as the published Qwen3-VL-MoE checkpoints store
    them, gate_up_proj [E, hidden, 2I] and down_proj [E, I, hidden]
    (transformers transposes them on load and saves its own layout), as
    gen_fixtures.py's qwen3_vl_moe text fixture stores them."""
    from safetensors.torch import load_file, save_file
    path = os.path.join(out, "model.safetensors")
    state = dict(load_file(path))
    for k in list(state):
        if k.endswith(("mlp.experts.gate_up_proj", "mlp.experts.down_proj")):
            state[k] = state[k].transpose(1, 2).contiguous()
    save_file(state, path, metadata={"format": "pt"})


def qwen2vl_first_logits(model, emb, pos, mask, deepstack=None):
    """First-step logits of the text model on merged embeddings at the given
    [3, 1, n] M-RoPE positions (explicit: forward would otherwise reuse
    the rope_deltas a previous call cached on model.model). deepstack, for
    Qwen3-VL: (the image-token mask [1, n], the DeepStack features [rows,
    hidden] per merger), added after the first decoder layers as
    Qwen3VLModel.forward passes them to its text model."""
    model.model.rope_deltas = None
    if deepstack:
        vmask, feats = deepstack
        h = model.model.language_model(inputs_embeds=emb, position_ids=pos, attention_mask=mask,
                                       visual_pos_masks=vmask, deepstack_visual_embeds=feats).last_hidden_state
        return model.lm_head(h[:, -1])[0]
    return model(inputs_embeds=emb, position_ids=pos, attention_mask=mask, logits_to_keep=1).logits[0, -1]


def deepstack_features(out_feats):
    """Qwen3-VL's DeepStack features of get_image_features' output, each
    merger's per-image splits concatenated ([rows, hidden] per merger); []
    for a tower without them."""
    return [torch.cat(list(f), 0) for f in (getattr(out_feats, "deepstack_features", None) or [])]


def build_qwen2_vl(spec, out_root):
    name = spec["name"]
    print(f"== {name}")
    out = os.path.join(out_root, name)
    os.makedirs(out, exist_ok=True)
    for fn in sorted(os.listdir(out)):
        if fn in GENERATED_FILES or fn.endswith(".f32"):
            os.remove(os.path.join(out, fn))
    if os.path.isdir(os.path.join(out, "images")):
        shutil.rmtree(os.path.join(out, "images"))
    images = make_images(out, spec["image_seed"])
    # Qwen2-VL's classes, or those the spec names (Qwen2.5-VL's).
    model_cls = spec.get("model_cls", Qwen2VLForConditionalGeneration)
    config_cls = spec.get("config_cls", Qwen2VLConfig)
    processor_cls = spec.get("processor_cls", Qwen2VLProcessor)
    vision = spec.get("vision", QWEN2VL_VISION)
    text = spec.get("text", QWEN2VL_TEXT)
    sections = text["rope_parameters"]["mrope_section"]
    swapped = spec.get("mrope_swapped", QWEN2VL_MROPE_SECTION_SWAPPED)
    section_min = spec.get("mrope_section_min_diff", IMAGE_MIN_DIFF)
    processor = make_qwen2vl_processor(Qwen2VLImageProcessorPil(**QWEN2VL_IMAGE_PROCESSOR), make_qwen2vl_tokenizer(),
                                       processor_cls)
    tok = processor.tokenizer
    vocab = len(tok)
    ids_of = {t: tok.convert_tokens_to_ids(t) for t in QWEN2VL_ADDED_SPECIALS}
    image_token_id = ids_of["<|image_pad|>"]
    assert processor.image_token_id == image_token_id
    # Qwen2-VL-Instruct's generation_config: eos [<|im_end|>, <|endoftext|>], pad <|endoftext|>.
    eos = [ids_of["<|im_end|>"], ids_of["<|endoftext|>"]]
    out_key = "hidden_size" if "embed_dim" in vision else "out_hidden_size"  # the merger's output (Qwen2-VL's: hidden_size)
    config = config_cls(
        text_config=dict(text, vocab_size=vocab, bos_token_id=ids_of["<|endoftext|>"],
                         eos_token_id=ids_of["<|im_end|>"], pad_token_id=ids_of["<|endoftext|>"]),
        vision_config=dict(vision, **{out_key: text["hidden_size"]}),
        image_token_id=image_token_id, video_token_id=ids_of["<|video_pad|>"],
        vision_start_token_id=ids_of["<|vision_start|>"], vision_end_token_id=ids_of["<|vision_end|>"],
        tie_word_embeddings=True,  # Qwen2-VL-2B's
    )
    torch.manual_seed(spec["seed"])
    model = model_cls(config)
    gen = torch.Generator().manual_seed(spec["seed"])
    randomize_(model, gen, spec["weight_std"], spec["norm_std"], spec["bias_std"], spec["pos_std"],
               norm_suffixes=("norm1.weight", "norm2.weight", "ln_q.weight"), norm_center=spec.get("norm_center", 1.0),
               plain_norms=spec.get("plain_norms", ()))
    model = model.to(torch.float32).eval()
    # The checkpoint stored in bfloat16 (half the bytes: the tracked tree's
    # limit); the oracle loads it in float32, which widens it exactly.
    model = model.to(torch.bfloat16)
    model.generation_config = transformers.GenerationConfig(
        bos_token_id=ids_of["<|endoftext|>"], eos_token_id=eos, pad_token_id=ids_of["<|endoftext|>"])
    model.save_pretrained(out)
    if spec.get("post_save"):
        spec["post_save"](out)
    processor.save_pretrained(out)

    model = model_cls.from_pretrained(out, dtype=torch.float32, attn_implementation="eager").eval()
    assert model.model.language_model.rotary_emb.mrope_section == sections
    with open(os.path.join(out, "processor_config.json")) as f:
        saved = json.load(f)
    ip_kwargs = {k: v for k, v in saved["image_processor"].items() if k != "image_processor_type"}
    assert ip_kwargs == QWEN2VL_IMAGE_PROCESSOR, ip_kwargs
    with open(os.path.join(out, "chat_template.jinja")) as f:
        assert f.read() == QWEN2VL_CHAT_TEMPLATE
    processor = make_qwen2vl_processor(Qwen2VLImageProcessorPil(**ip_kwargs), AutoTokenizer.from_pretrained(out),
                                       processor_cls)
    tok = processor.tokenizer
    assert len(tok) == vocab and tok.convert_tokens_to_ids("<|image_pad|>") == image_token_id
    merge = vision["spatial_merge_size"]

    cases, margins_all = [], []
    for cname, turns, files in QWEN2VL_CASES:
        messages = [{"role": role, "content": [{"type": "image"} if it is None else {"type": "text", "text": it}
                                                for it in items]} for role, items in turns]
        prompt = processor.apply_chat_template(messages, add_generation_prompt=True)
        ims = [images[f] for f in files]
        if ims:
            inputs = processor(text=prompt, images=ims, return_tensors="pt")
        else:
            inputs = processor(text=prompt, return_tensors="pt")
        ids = inputs["input_ids"]
        mm = inputs["mm_token_type_ids"]
        assert torch.equal(mm, (ids == image_token_id).to(mm.dtype)), "mm_token_type_ids are not the image mask"
        case = {"name": cname, "messages": messages, "images": files, "prompt": prompt,
                "input_ids": [int(t) for t in ids[0]]}
        img_pos = [i for i, t in enumerate(case["input_ids"]) if t == image_token_id]
        gen_kwargs = dict(input_ids=ids, attention_mask=inputs["attention_mask"], mm_token_type_ids=mm)
        with torch.no_grad():
            # HF's M-RoPE positions: get_rope_index, as forward and generate
            # call it (text-only: no grid, every row 0..n-1 and delta 0).
            thw = inputs.get("image_grid_thw")
            pos, deltas = model.model.get_rope_index(ids, mm_token_type_ids=mm, image_grid_thw=thw,
                                                     attention_mask=inputs["attention_mask"])
            assert pos.shape == (3, 1, ids.shape[1]) and deltas.shape == (1, 1), (pos.shape, deltas.shape)
            case["position_ids"] = [[int(p) for p in row[0]] for row in pos]
            case["rope_deltas"] = int(deltas[0, 0])
            assert case["rope_deltas"] == max(max(r) for r in case["position_ids"]) + 1 - ids.shape[1]
            if not ims:
                assert all(r == list(range(ids.shape[1])) for r in case["position_ids"]) and case["rope_deltas"] == 0
            if ims:
                pv = inputs["pixel_values"]
                case["image_grid_thw"] = [[int(v) for v in g] for g in thw]
                assert thw.shape[0] == len(ims)
                case["pixel_values_shape"] = list(pv.shape)
                out_feats = model.model.get_image_features(pixel_values=pv, image_grid_thw=thw)
                per_image = list(out_feats.pooler_output)
                feats = torch.cat(per_image, 0)
                ds = deepstack_features(out_feats)
                assert len(ds) == len(vision.get("deepstack_visual_indexes", []))
                deep = ((ids == image_token_id), ds) if ds else None
                case["image_features_shape"] = list(torch.cat([feats] + ds, -1).shape)
                case["image_tokens"] = [int(f.shape[0]) for f in per_image]
                assert case["image_tokens"] == [int(g.prod()) // merge ** 2 for g in thw]
                assert len(img_pos) == feats.shape[0] == sum(case["image_tokens"])
                case["pixel_values_files"] = [f"pixel_values.{os.path.splitext(f)[0]}.f32" for f in files]
                parts = []
                for f, pvf, g in zip(files, case["pixel_values_files"], case["image_grid_thw"]):
                    one = processor.image_processor(images=[images[f]], return_tensors="pt")
                    assert [int(v) for v in one["image_grid_thw"][0]] == g
                    one = one["pixel_values"]
                    parts.append(one)
                    path = os.path.join(out, pvf)
                    if os.path.exists(path):
                        with open(path, "rb") as fh:
                            assert fh.read() == one.numpy().astype("<f4").tobytes()
                    write_f32(path, one)
                assert torch.equal(torch.cat(parts, 0), pv)
                write_f32(os.path.join(out, f"image_features.{cname}.f32"), torch.cat([feats] + ds, -1))
                gen_kwargs.update(pixel_values=pv, image_grid_thw=thw)
            model.model.rope_deltas = None
            res = model.generate(**gen_kwargs, do_sample=False, max_new_tokens=MAX_NEW_TOKENS,
                                 output_logits=True, return_dict_in_generate=True)
            new = [int(t) for t in res.sequences[0, ids.shape[1]:]]
            steps = [l[0].to(torch.float32) for l in res.logits]
            assert len(new) == MAX_NEW_TOKENS, f"{name}/{cname}: stopped after {len(new)}: {new}"
            assert not set(eos) & set(new), f"{name}/{cname}: eos in {new}; change the seed"
            assert len(set(new)) >= 4, f"{name}/{cname}: degenerate {new}; change the seed"
            margins = []
            for t, l in zip(new, steps):
                top2 = torch.topk(l, 2).values
                assert int(torch.argmax(l)) == t
                margins.append(float(top2[0] - top2[1]))
            margins_all += margins
            model.model.rope_deltas = None
            last = model(**gen_kwargs, logits_to_keep=1).logits[0, -1]
            d = float((last - steps[0]).abs().max())
            assert d <= 1e-6, f"{name}/{cname}: prefill logits differ by {d}"
            # The recorded position_ids are the ones forward uses.
            model.model.rope_deltas = None
            fp = model(**gen_kwargs, position_ids=pos, logits_to_keep=1).logits[0, -1]
            d = float((fp - steps[0]).abs().max())
            assert d <= 1e-6, f"{name}/{cname}: forward with the recorded position_ids moves the logits by {d}"
            # Decode: position of the k-th generated token (k = 0 first) is
            # n + k + rope_deltas on all three rows. Check it on the greedy
            # sequence: one forward over prompt + 15 tokens, at the positions
            # get_rope_index gives the longer sequence, reproduces the steps.
            full = res.sequences[:, :-1]
            fmm = torch.cat([mm, torch.zeros(1, full.shape[1] - ids.shape[1], dtype=mm.dtype)], 1)
            fpos, fdel = model.model.get_rope_index(full, mm_token_type_ids=fmm, image_grid_thw=thw)
            assert int(fdel[0, 0]) == case["rope_deltas"]
            tail = fpos[:, 0, ids.shape[1]:]
            want_tail = torch.arange(ids.shape[1], full.shape[1]) + case["rope_deltas"]
            assert all(torch.equal(r, want_tail) for r in tail), f"{name}/{cname}: decode positions"
            fkw = dict(gen_kwargs, input_ids=full, mm_token_type_ids=fmm, attention_mask=torch.ones_like(full))
            model.model.rope_deltas = None
            fl_all = model(**fkw, position_ids=fpos).logits[0, ids.shape[1] - 1:]
            d = float(max((fl_all[k] - steps[k]).abs().max() for k in range(MAX_NEW_TOKENS)))
            assert d <= 1e-4, f"{name}/{cname}: teacher-forced logits differ from generate's by {d}"
            case["decode_positions_check_max_abs_diff"] = d
            emb = model.get_input_embeddings()(ids)
            mask = inputs["attention_mask"]
            if ims:
                emb = emb.masked_scatter((ids == image_token_id).unsqueeze(-1), feats)
                fl = qwen2vl_first_logits(model, emb, pos, mask, deep)
                d = float((fl - steps[0]).abs().max())
                assert d <= 1e-6, f"{name}/{cname}: merging image_features by hand moves the logits by {d}"
                case["image_features_check_max_abs_diff"] = d
                if deep:
                    # DeepStack matters: the same embeddings without its features.
                    nd = float((qwen2vl_first_logits(model, emb, pos, mask) - steps[0]).abs().max())
                    assert nd >= IMAGE_MIN_DIFF, f"{name}/{cname}: the DeepStack features do not matter ({nd})"
                    case["deepstack_check"] = {"max_abs_first_logit_diff_without_deepstack": nd}
                # M-RoPE matters: the same merged embeddings at plain 1-D
                # positions 0..n-1 (what a text-only RoPE would use).
                plain = torch.arange(ids.shape[1]).view(1, 1, -1).expand(3, 1, -1)
                pl = qwen2vl_first_logits(model, emb, plain, mask, deep)
                md = float((pl - steps[0]).abs().max())
                assert md >= IMAGE_MIN_DIFF, f"{name}/{cname}: 1-D positions give the same logits ({md})"
                # The sections matter: the same positions split [3, 3, 2].
                rot = model.model.language_model.rotary_emb
                rot.mrope_section = swapped
                try:
                    sl = qwen2vl_first_logits(model, emb, pos, mask, deep)
                finally:
                    rot.mrope_section = sections
                sd = float((sl - steps[0]).abs().max())
                assert sd >= section_min, f"{name}/{cname}: mrope_section {swapped} gives the same logits ({sd})"
                case["mrope_check"] = {"max_abs_first_logit_diff_1d_positions": md,
                                       f"max_abs_first_logit_diff_mrope_section_{swapped}": sd}
                # The image matters: pixel_values zeroed.
                zout = model.model.get_image_features(pixel_values=torch.zeros_like(pv), image_grid_thw=thw)
                zfeat = torch.cat(list(zout.pooler_output), 0)
                zds = deepstack_features(zout)
                zemb = model.get_input_embeddings()(ids).masked_scatter((ids == image_token_id).unsqueeze(-1), zfeat)
                zl = qwen2vl_first_logits(model, zemb, pos, mask, ((ids == image_token_id), zds) if zds else None)
                diff = float((zl - steps[0]).abs().max())
                assert diff >= IMAGE_MIN_DIFF, f"{name}/{cname}: the image does not matter ({diff})"
                model.model.rope_deltas = None
                res0 = model.generate(**dict(gen_kwargs, pixel_values=torch.zeros_like(pv)), do_sample=False,
                                      max_new_tokens=MAX_NEW_TOKENS)
                zt = [int(t) for t in res0[0, ids.shape[1]:]]
                assert zt != new, f"{name}/{cname}: zeroed pixels generate the same tokens {new}"
                case["image_check"] = {"max_abs_first_logit_diff": diff, "zeroed_pixels_tokens": zt}
                if "window_size" in vision:
                    # Window attention matters: every block over the whole image.
                    visual = model.model.visual
                    keep = visual.fullatt_block_indexes
                    visual.fullatt_block_indexes = list(range(vision["depth"]))
                    try:
                        ffeat = torch.cat(list(model.model.get_image_features(
                            pixel_values=pv, image_grid_thw=thw).pooler_output), 0)
                    finally:
                        visual.fullatt_block_indexes = keep
                    femb = model.get_input_embeddings()(ids).masked_scatter((ids == image_token_id).unsqueeze(-1), ffeat)
                    wd = float((qwen2vl_first_logits(model, femb, pos, mask) - steps[0]).abs().max())
                    assert wd >= IMAGE_MIN_DIFF, f"{name}/{cname}: full attention in every block gives the same logits ({wd})"
                    case["window_check"] = {"max_abs_first_logit_diff_full_attention": wd}
            else:
                # Text only: M-RoPE with equal rows is plain RoPE.
                fl = qwen2vl_first_logits(model, emb, pos, mask)
                d = float((fl - steps[0]).abs().max())
                assert d <= 1e-6, f"{name}/{cname}: embeddings at the recorded positions move the logits by {d}"
        model.model.rope_deltas = None
        case["tokens"] = new
        case["min_top2_margin"] = min(margins)
        case["first_logits"] = [fmt_float(x) for x in steps[0]]
        print(f"  {cname}: {len(case['input_ids'])} ids, {files} grids {case.get('image_grid_thw')} "
              f"delta {case['rope_deltas']} image tokens at {img_pos[:1]}..{img_pos[-1:]} -> {new} "
              f"(margin {min(margins):.4g})")
        cases.append(case)
    min_margin = min(margins_all)
    assert min_margin >= MIN_TOP2_MARGIN, f"{name}: near-tie on the greedy path; change the seed"
    patch_dim = vision["in_channels"] * vision["temporal_patch_size"] * QWEN2VL_PATCH ** 2
    oracle = {
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "model_class": model_cls.__name__,
        "processor_class": processor_cls.__name__,
        "image_processor_class": "Qwen2VLImageProcessorPil",
        "dtype": "float32",
        "stored_dtype": "bfloat16",
        "attn_implementation": "eager",
        "seed": spec["seed"],
        "image_seed": spec["image_seed"],
        "image_token_id": image_token_id,
        "vision_start_token_id": ids_of["<|vision_start|>"],
        "vision_end_token_id": ids_of["<|vision_end|>"],
        "eos_token_id": eos,
        "max_new_tokens": MAX_NEW_TOKENS,
        "pixel_values_layout": f"[patches of all the prompt's images in order, {patch_dim}]: raw little-endian "
                               "float32, C order, as Qwen2VLImageProcessor flattens them: each image resized "
                               "(smart_resize: sides multiples of patch_size * merge_size = "
                               f"{QWEN2VL_PATCH * 2}, pixels within size.shortest_edge..longest_edge), "
                               "patches in 2x2 merge-window order (window row, window column, row in window, "
                               "column in window), each patch C, T, p, p with the image repeated over "
                               "T = temporal_patch_size. Written per image: pixel_values.<image>.f32 is "
                               f"[that image's t*h*w patches, {patch_dim}] and a case's pixel_values are its "
                               "pixel_values_files concatenated along the patch axis; image_grid_thw gives "
                               "each image's (t, h, w) in patches",
        "image_features_layout": "[image tokens, text hidden]: the vision tower and PatchMerger's output "
                                 "(model.model.get_image_features(pixel_values, image_grid_thw).pooler_output, "
                                 "concatenated) for every image in order, t*h*w/4 rows an image in merge-window "
                                 "order; row i replaces the i-th <|image_pad|>",
        "position_ids_layout": "[3, prompt tokens]: rows t, h, w of HF's M-RoPE positions, "
                               "model.model.get_rope_index(input_ids, mm_token_type_ids, image_grid_thw, "
                               "attention_mask)[0][:, 0]; text advances all three by 1, an image's tokens take "
                               "(start, start + row, start + column) (t = start for an image), and the text after "
                               "it starts at start + max(h, w) / merge_size. rope_deltas = max(position) + 1 - "
                               "prompt tokens: generated token k (0 first) sits at prompt tokens + k + rope_deltas "
                               "on all three rows (checked: one teacher-forced forward over the prompt and the "
                               "tokens at get_rope_index's positions gives generate's 16 logits, within 1e-4)",
        "image_check_method": "first-step logits with the real pixel_values vs with pixel_values zeroed (through "
                              "get_image_features): max abs diff (>= 1e-2 enforced), and the 16 greedy tokens with "
                              "the zeroed pixels (they differ from tokens, enforced)",
        "mrope_check_method": "first-step logits of the hand-merged embeddings at plain 1-D positions 0..n-1 on all "
                              f"three rows, and at position_ids with mrope_section {swapped}, "
                              + ("vs first_logits: max abs diffs (>= 1e-2 enforced)" if section_min == IMAGE_MIN_DIFF else
                                 f"vs first_logits: max abs diffs (>= 1e-2 and >= {section_min} enforced)"),
        "image_features_check_method": "embed_tokens(input_ids) with the <|image_pad|> rows replaced in order by "
                                       "image_features, through the text model at position_ids and lm_head, vs "
                                       "first_logits: max abs diff (<= 1e-6 enforced)",
        "min_top2_margin": min_margin,
        "cases": cases,
    }
    if "window_size" in vision:
        oracle["window_check_method"] = ("first-step logits of the embeddings merged with image features computed "
                                         "with every block in fullatt_block_indexes (no window attention) vs "
                                         "first_logits: max abs diff (>= 1e-2 enforced)")
    with open(os.path.join(out, "oracle.json"), "w") as f:
        f.write(dump_json(oracle))
    total = report_folder(out)
    # A folder that shares files with another is measured by share, after.
    assert spec.get("share_with") or total <= MAX_FOLDER_BYTES, f"{name}: {total} bytes > {MAX_FOLDER_BYTES}"


# issue 32: Mistral 3 (Mistral3ForConditionalGeneration: the Pixtral tower
# and its patch merger over a Mistral text model). Mistral's specials
# first (<unk> 0, <s> 1, </s> 2), then [INST], [/INST] and Pixtral's
# image tokens after the merges; a template in Mistral's [INST] form that
# writes [IMG] per image part.
MISTRAL3_LEAD_SPECIALS = ["<unk>", "<s>", "</s>"]
MISTRAL3_ADDED_SPECIALS = ["[INST]", "[/INST]", "[IMG]", "[IMG_BREAK]", "[IMG_END]"]
MISTRAL3_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if message['role'] == 'user' %}[INST]"
    "{% for content in message['content'] %}{% if content['type'] == 'image' %}[IMG]"
    "{% else %}{{ content['text'] }}{% endif %}{% endfor %}[/INST]"
    "{% else %}{% for content in message['content'] %}{{ content['text'] }}{% endfor %}{{ eos_token }}{% endif %}"
    "{% endfor %}"
)
# PixtralProcessor over PixtralImageProcessorPil at Mistral 3's settings
# (BICUBIC, CLIP's mean and std) scaled down: patch 4, spatial merge 2 (a
# resized side is a multiple of 8), longest edge 24: the 40x60 image is
# halved and more (24x16: 6x4 patches, 3x2 tokens), the 17x9 one padded
# up (16x24: 4x6 patches, 2x3 tokens: as many as the first, which the
# engine test swaps), the 96x20 one quartered (8x24: 2x6 patches, 1x3
# tokens).
MISTRAL3_PATCH, MISTRAL3_MERGE = 4, 2
MISTRAL3_IMAGE_PROCESSOR = dict(
    do_convert_rgb=True, do_normalize=True, do_rescale=True, do_resize=True,
    image_mean=[0.48145466, 0.4578275, 0.40821073], image_std=[0.26862954, 0.26130258, 0.27577711],
    resample=3, rescale_factor=1 / 255, size={"longest_edge": 24}, patch_size={"height": MISTRAL3_PATCH, "width": MISTRAL3_PATCH},
)
# PixtralVisionConfig scaled down (Mistral Small 3.1's: 24 layers of 1024,
# 16 heads of 64, SwiGLU 4096 with silu, patch 14): 2 layers of 16, 2 heads
# of 8 (2-D RoPE over 2 frequencies a side), SwiGLU 24.
MISTRAL3_VISION = dict(model_type="pixtral", hidden_size=16, intermediate_size=24, num_hidden_layers=2,
                       num_attention_heads=2, head_dim=8, image_size=24, patch_size=MISTRAL3_PATCH, hidden_act="silu")
MISTRAL3_TEXT = dict(model_type="mistral", hidden_size=64, intermediate_size=32, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=256,
                     rms_norm_eps=1e-5, hidden_act="silu", sliding_window=None,
                     rope_parameters={"rope_type": "default", "rope_theta": 1000.0}, initializer_range=0.2)


def pixtral_processor_cls():
    """transformers' PixtralProcessor. Its module imports torchvision (for
    the torchvision image processor, unused here: the PIL backend does the
    math), which the oracle venv installs without dependencies
    (golden/README.md: torchvision==0.29.2 --no-deps; torch stays pinned)."""
    from transformers.models.pixtral.processing_pixtral import PixtralProcessor
    return PixtralProcessor


def make_mistral3_tokenizer():
    """A byte-level BPE with Mistral's specials and the <s> BOS its
    template writes (the tokenizer adds none)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    lead = MISTRAL3_LEAD_SPECIALS
    trainer = trainers.BpeTrainer(vocab_size=len(lead) + 256 + NUM_MERGES, min_frequency=2, special_tokens=lead,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(BPE_TEXT, trainer=trainer)
    assert tok.get_vocab_size() == len(lead) + 256 + NUM_MERGES, tok.get_vocab_size()
    tok.add_special_tokens(MISTRAL3_ADDED_SPECIALS)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<unk>",
        additional_special_tokens=MISTRAL3_ADDED_SPECIALS, clean_up_tokenization_spaces=False, model_max_length=256)
    fast.chat_template = MISTRAL3_CHAT_TEMPLATE
    return fast


def pixtral_rows(pv, size, patch, merge):
    """One image's pixel_values [3, H', W'] (padded) cut to its size and
    laid out as archc's patch rows: [h*w, 3*patch*patch], the rows in
    merge-window order (each merge x merge window's patches consecutive,
    windows row-major), each row channel then pixel row-major."""
    H, W = size
    img = pv[:, :H, :W]
    gh, gw = H // patch, W // patch
    x = img.reshape(3, gh // merge, merge, patch, gw // merge, merge, patch)
    x = x.permute(1, 4, 2, 5, 0, 3, 6)  # window row, window col, row in window, col in window, C, y, x
    return x.reshape(gh * gw, 3 * patch * patch).contiguous()


# LLaVA with a Pixtral tower (Pixtral-12B's LlavaForConditionalGeneration:
# vision_feature_layer -1, select strategy "full", the projector with
# biases): the same tokenizer and tower, no patch merger, so patch 4 and
# longest edge 18 (a resized side a multiple of 4): grids of 5x3, 3x5 and
# 1x5 patches, one [IMG] each (15, 15 and 5).
PIXTRAL_LONGEST_EDGE = 18


def build_mistral3(spec, out_root):
    """Mistral 3 (spec family mistral3), or LLaVA with a Pixtral tower
    (family pixtral): the tower, its processor and the checks are one."""
    name = spec["name"]
    llava = spec["family"] == "pixtral"
    merge = 1 if llava else MISTRAL3_MERGE
    model_cls = LlavaForConditionalGeneration if llava else Mistral3ForConditionalGeneration
    print(f"== {name}")
    out = os.path.join(out_root, name)
    os.makedirs(out, exist_ok=True)
    for fn in sorted(os.listdir(out)):
        if fn in GENERATED_FILES or fn.endswith(".f32"):
            os.remove(os.path.join(out, fn))
    if os.path.isdir(os.path.join(out, "images")):
        shutil.rmtree(os.path.join(out, "images"))
    images = make_images(out, spec["image_seed"])
    tok = make_mistral3_tokenizer()
    PixtralProcessor = pixtral_processor_cls()
    ip = dict(MISTRAL3_IMAGE_PROCESSOR, size={"longest_edge": PIXTRAL_LONGEST_EDGE}) if llava else MISTRAL3_IMAGE_PROCESSOR
    processor = PixtralProcessor(PixtralImageProcessorPil(**ip), tok, patch_size=MISTRAL3_PATCH,
                                 spatial_merge_size=merge, chat_template=MISTRAL3_CHAT_TEMPLATE)
    vocab = len(tok)
    image_token_id = tok.convert_tokens_to_ids("[IMG]")
    bos, eos = tok.convert_tokens_to_ids("<s>"), tok.convert_tokens_to_ids("</s>")
    text = dict(MISTRAL3_TEXT, vocab_size=vocab, bos_token_id=bos, eos_token_id=eos, pad_token_id=0,
                tie_word_embeddings=False)
    if llava:
        config = LlavaConfig(text_config=text, vision_config=dict(MISTRAL3_VISION, image_size=PIXTRAL_LONGEST_EDGE),
                             image_token_index=image_token_id, projector_hidden_act="gelu",
                             vision_feature_layer=-1, vision_feature_select_strategy="full",
                             multimodal_projector_bias=True, tie_word_embeddings=False)
    else:
        config = Mistral3Config(text_config=text, vision_config=dict(MISTRAL3_VISION), image_token_index=image_token_id,
                                spatial_merge_size=MISTRAL3_MERGE, projector_hidden_act="gelu",
                                multimodal_projector_bias=False, vision_feature_layer=-1, tie_word_embeddings=False)
    torch.manual_seed(spec["seed"])
    model = model_cls(config)
    gen = torch.Generator().manual_seed(spec["seed"])
    randomize_(model, gen, spec["weight_std"], spec["norm_std"], spec["bias_std"], spec["pos_std"],
               norm_suffixes=("attention_norm.weight", "ffn_norm.weight", "ln_pre.weight"))
    # Stored bfloat16 (the tracked tree's limit); the oracle widens it to float32 exactly.
    model = model.to(torch.float32).eval().to(torch.bfloat16)
    model.generation_config = transformers.GenerationConfig(bos_token_id=bos, eos_token_id=eos, pad_token_id=0)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    model = model_cls.from_pretrained(out, dtype=torch.float32, attn_implementation="eager").eval()
    processor = PixtralProcessor.from_pretrained(out)
    assert processor.image_token_id == image_token_id

    cases, margins_all = [], []
    for cname, turns, files in QWEN2VL_CASES:
        messages = [{"role": role, "content": [{"type": "image"} if it is None else {"type": "text", "text": it}
                                                for it in items]} for role, items in turns]
        prompt = processor.apply_chat_template(messages, add_generation_prompt=True)
        ims = [images[f] for f in files]
        inputs = processor(text=prompt, images=ims or None, return_tensors="pt")
        ids = inputs["input_ids"]
        case = {"name": cname, "messages": messages, "images": files, "prompt": prompt,
                "input_ids": [int(t) for t in ids[0]]}
        img_pos = [i for i, t in enumerate(case["input_ids"]) if t == image_token_id]
        gen_kwargs = dict(input_ids=ids, attention_mask=inputs["attention_mask"])
        with torch.no_grad():
            deep = None
            if ims:
                pv, sizes = inputs["pixel_values"], inputs["image_sizes"]
                grids = [[1, int(h) // MISTRAL3_PATCH, int(w) // MISTRAL3_PATCH] for h, w in sizes]
                case["image_grid_thw"] = grids
                out_feats = model.model.get_image_features(pixel_values=pv, image_sizes=sizes)
                per_image = list(out_feats.pooler_output)
                feats = torch.cat(per_image, 0)
                case["image_features_shape"] = list(feats.shape)
                case["image_tokens"] = [int(f.shape[0]) for f in per_image]
                assert case["image_tokens"] == [g[1] * g[2] // merge ** 2 for g in grids]
                assert len(img_pos) == feats.shape[0]
                case["pixel_values_files"] = [f"pixel_values.{os.path.splitext(f)[0]}.f32" for f in files]
                for k, (f, pvf) in enumerate(zip(files, case["pixel_values_files"])):
                    rows = pixtral_rows(pv[k], [int(v) for v in sizes[k]], MISTRAL3_PATCH, merge)
                    one = processor.image_processor(images=[images[f]], patch_size={"height": MISTRAL3_PATCH * merge, "width": MISTRAL3_PATCH * merge}, return_tensors="pt")
                    assert [int(v) for v in one["image_sizes"][0]] == [int(v) for v in sizes[k]]
                    assert torch.equal(pixtral_rows(one["pixel_values"][0], [int(v) for v in sizes[k]], MISTRAL3_PATCH, merge), rows)
                    path = os.path.join(out, pvf)
                    if os.path.exists(path):
                        with open(path, "rb") as fh:
                            assert fh.read() == rows.numpy().astype("<f4").tobytes()
                    write_f32(path, rows)
                write_f32(os.path.join(out, f"image_features.{cname}.f32"), feats)
                gen_kwargs.update(pixel_values=pv, image_sizes=sizes)
            res = model.generate(**gen_kwargs, do_sample=False, max_new_tokens=MAX_NEW_TOKENS,
                                 output_logits=True, return_dict_in_generate=True)
            new = [int(t) for t in res.sequences[0, ids.shape[1]:]]
            steps = [l[0].to(torch.float32) for l in res.logits]
            assert len(new) == MAX_NEW_TOKENS, f"{name}/{cname}: stopped after {len(new)}: {new}"
            assert eos not in new, f"{name}/{cname}: eos in {new}; change the seed"
            assert len(set(new)) >= 4, f"{name}/{cname}: degenerate {new}; change the seed"
            margins = []
            for t, l in zip(new, steps):
                top2 = torch.topk(l, 2).values
                assert int(torch.argmax(l)) == t
                margins.append(float(top2[0] - top2[1]))
            margins_all += margins
            last = model(**gen_kwargs, logits_to_keep=1).logits[0, -1]
            d = float((last - steps[0]).abs().max())
            assert d <= 1e-6, f"{name}/{cname}: prefill logits differ by {d}"
            if ims:
                emb = model.get_input_embeddings()(ids).masked_scatter((ids == image_token_id).unsqueeze(-1), feats)
                fl = model(inputs_embeds=emb, attention_mask=inputs["attention_mask"], logits_to_keep=1).logits[0, -1]
                d = float((fl - steps[0]).abs().max())
                assert d <= 1e-6, f"{name}/{cname}: merging image_features by hand moves the logits by {d}"
                case["image_features_check_max_abs_diff"] = d
                zfeat = torch.cat(list(model.model.get_image_features(pixel_values=torch.zeros_like(pv), image_sizes=sizes).pooler_output), 0)
                zemb = model.get_input_embeddings()(ids).masked_scatter((ids == image_token_id).unsqueeze(-1), zfeat)
                zl = model(inputs_embeds=zemb, attention_mask=inputs["attention_mask"], logits_to_keep=1).logits[0, -1]
                diff = float((zl - steps[0]).abs().max())
                assert diff >= IMAGE_MIN_DIFF, f"{name}/{cname}: the image does not matter ({diff})"
                res0 = model.generate(**dict(gen_kwargs, pixel_values=torch.zeros_like(pv)), do_sample=False,
                                      max_new_tokens=MAX_NEW_TOKENS)
                zt = [int(t) for t in res0[0, ids.shape[1]:]]
                assert zt != new, f"{name}/{cname}: zeroed pixels generate the same tokens {new}"
                case["image_check"] = {"max_abs_first_logit_diff": diff, "zeroed_pixels_tokens": zt}
                # The 2-D RoPE matters: every patch at the image's first row.
                rot = model.model.vision_tower.patch_positional_embedding
                keep = rot.forward
                rot.forward = lambda x, position_ids: keep(x, position_ids * torch.tensor([0, 1]))
                try:
                    rfeat = torch.cat(list(model.model.get_image_features(pixel_values=pv, image_sizes=sizes).pooler_output), 0)
                finally:
                    rot.forward = keep
                remb = model.get_input_embeddings()(ids).masked_scatter((ids == image_token_id).unsqueeze(-1), rfeat)
                rl = model(inputs_embeds=remb, attention_mask=inputs["attention_mask"], logits_to_keep=1).logits[0, -1]
                rd = float((rl - steps[0]).abs().max())
                assert rd >= IMAGE_MIN_DIFF, f"{name}/{cname}: the rows' RoPE does not matter ({rd})"
                case["rope_check"] = {"max_abs_first_logit_diff_row_positions_zeroed": rd}
        case["tokens"] = new
        case["min_top2_margin"] = min(margins)
        case["first_logits"] = [fmt_float(x) for x in steps[0]]
        print(f"  {cname}: {len(case['input_ids'])} ids, {files} grids {case.get('image_grid_thw')} -> {new} "
              f"(margin {min(margins):.4g})")
        cases.append(case)
    assert min(margins_all) >= MIN_TOP2_MARGIN, f"{name}: near-tie on the greedy path; change the seed"
    oracle = {
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "model_class": model_cls.__name__,
        "processor_class": "PixtralProcessor",
        "image_processor_class": "PixtralImageProcessorPil",
        "dtype": "float32",
        "stored_dtype": "bfloat16",
        "attn_implementation": "eager",
        "seed": spec["seed"],
        "image_seed": spec["image_seed"],
        "image_token_id": image_token_id,
        "eos_token_id": [eos],
        "max_new_tokens": MAX_NEW_TOKENS,
        "pixel_values_layout": f"per image [h*w patches, {3 * MISTRAL3_PATCH ** 2}]: raw little-endian float32, "
                               "the processor's pixel_values of that image (PixtralImageProcessorPil: resized to fit "
                               "size.longest_edge, sides rounded up to patch_size * spatial_merge_size) cut to its "
                               f"image_sizes and laid out as archc's patch rows: each {merge}x{merge} merge window's "
                               "patches consecutive, windows row-major, each patch channel then pixel row-major; "
                               "image_grid_thw is (1, h, w) in patches (image_sizes / patch_size)",
        "image_features_layout": "[image tokens, text hidden]: get_image_features(pixel_values, image_sizes)."
                                 "pooler_output concatenated, row i replacing the i-th [IMG]",
        "image_check_method": "first-step logits with the real pixel_values vs zeroed (>= 1e-2 enforced), and the "
                              "greedy tokens with zeroed pixels (they differ, enforced)",
        "rope_check_method": "first-step logits with the tower's 2-D RoPE given every patch row 0 vs first_logits "
                             "(>= 1e-2 enforced)",
        "min_top2_margin": min(margins_all),
        "cases": cases,
    }
    with open(os.path.join(out, "oracle.json"), "w") as f:
        f.write(dump_json(oracle))
    report_folder(out)


# LFM2-VL (Lfm2VlForConditionalGeneration, transformers 5.24): LFM2's
# hybrid text model, a SigLIP2 NaFlex tower (Siglip2VisionModel: patches as
# rows, learned 3x3 positions resized per image with antialiased
# bilinear), Lfm2VlMultiModalProjector (2x2 pixel unshuffle, LayerNorm,
# Linear-GELU-Linear). Lfm2VlImageProcessor exists with a torchvision
# backend only: the fixture is compared with that one (the oracle venv's
# torchvision, golden/README.md). Its settings are LFM2-VL-1.6B's (BILINEAR,
# mean and std 0.5, downsample 2, tiles 2..10 with a thumbnail, tolerance
# 2; do_convert_rgb, as a grayscale image needs it there) scaled down: patch 4, tile 16 (4x4 patches, 4 tokens), 6..16 image
# tokens. The 96x20 image shrinks to 8x64 (2x16 patches, 8 tokens), the
# 17x9 one grows to 16x32 (4x8, 8 tokens: as many, for the engine's swap),
# the 40x60 one is too large: 2x3 tiles of 16x16 and a 32x24 thumbnail.
LFM2VL_PATCH, LFM2VL_FACTOR = 4, 2
LFM2VL_IMAGE_PROCESSOR = dict(
    do_convert_rgb=True, do_image_splitting=True, min_tiles=2, max_tiles=10, use_thumbnail=True, min_image_tokens=6,
    max_image_tokens=16, encoder_patch_size=LFM2VL_PATCH, tile_size=16, max_pixels_tolerance=2.0,
    downsample_factor=LFM2VL_FACTOR, resample=2, do_rescale=True, rescale_factor=1 / 255, do_normalize=True,
    image_mean=[0.5, 0.5, 0.5], image_std=[0.5, 0.5, 0.5], do_pad=True,
)
# Siglip2VisionConfig scaled down (LFM2-VL-1.6B's SigLIP2 NaFlex shape-
# optimized 400M: 27 layers of 1152, a 16x16 position grid, no head): 2
# layers of 16, 2 heads, a 3x3 grid (every image's grid is resized from it).
LFM2VL_VISION = dict(model_type="siglip2_vision_model", hidden_size=16, intermediate_size=24, num_hidden_layers=2,
                     num_attention_heads=2, num_channels=3, patch_size=LFM2VL_PATCH, num_patches=9,
                     hidden_act="gelu_pytorch_tanh", layer_norm_eps=1e-6, vision_use_head=False)
LFM2VL_TEXT = dict(model_type="lfm2", hidden_size=32, intermediate_size=64, block_multiple_of=16, num_hidden_layers=2,
                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, norm_eps=1e-5,
                   conv_L_cache=3, layer_types=["conv", "full_attention"], rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
LFM2VL_LEAD_SPECIALS = ["<|pad|>", "<|startoftext|>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
LFM2VL_ADDED_SPECIALS = (["<image>", "<|image_start|>", "<|image_end|>", "<|img_thumbnail|>"]
                         + [f"<|img_row_{r}_col_{c}|>" for r in range(1, 4) for c in range(1, 4)])
# LFM2-VL-1.6B's chat template, less its system-prompt and tool branches.
LFM2VL_CHAT_TEMPLATE = (
    "{{- bos_token -}}{%- for message in messages -%}{{- '<|im_start|>' + message['role'] + '\n' -}}"
    "{%- for content in message['content'] -%}{%- if content['type'] == 'image' -%}{{- '<image>' -}}"
    "{%- else -%}{{- content['text'] -}}{%- endif -%}{%- endfor -%}{{- '<|im_end|>\n' -}}{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}"
)
LFM2VL_CASES = [
    ("image_text", [("user", [None, "Can you describe this image?"])], ["wide_96x20.png"]),
    ("text_image_text", [("user", ["Look at", None, "and tell me what you see."])], ["gray_17x9.png"]),
    ("two_images", [("user", [None, None, "Compare the two images."])], ["rgb_40x60.png", "gray_17x9.png"]),
    ("two_turns", [("user", [None, "What is this?"]), ("assistant", ["A wide picture."]),
                   ("user", ["And this one?", None])], ["wide_96x20.png", "rgb_40x60.png"]),
    ("text_only", [("user", ["What is the capital of France?"])], []),
]


def make_lfm2vl_tokenizer():
    """A byte-level BPE with LFM2's specials and LFM2-VL's image tokens;
    the template writes the BOS (the processor adds no special tokens)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    lead = LFM2VL_LEAD_SPECIALS
    trainer = trainers.BpeTrainer(vocab_size=len(lead) + 256 + NUM_MERGES, min_frequency=2, special_tokens=lead,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(BPE_TEXT, trainer=trainer)
    assert tok.get_vocab_size() == len(lead) + 256 + NUM_MERGES, tok.get_vocab_size()
    tok.add_special_tokens(LFM2VL_ADDED_SPECIALS)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|startoftext|>", eos_token="<|im_end|>", pad_token="<|pad|>",
        additional_special_tokens=LFM2VL_ADDED_SPECIALS, clean_up_tokenization_spaces=False, model_max_length=512)
    fast.chat_template = LFM2VL_CHAT_TEMPLATE
    return fast


def lfm2vl_rows(pv, shape, merge):
    """One tile's pixel_values [max_num_patches, p*p*3] (row-major patches,
    each pixel row-major then channel, padded) cut to its h*w patches and
    laid out as archc's patch rows: each merge x merge window's patches
    consecutive, windows row-major (the values of a row untouched)."""
    h, w = shape
    x = pv[:h * w].reshape(h // merge, merge, w // merge, merge, -1).permute(0, 2, 1, 3, 4)
    return x.reshape(h * w, -1).contiguous()


def build_lfm2_vl(spec, out_root):
    from transformers import Lfm2VlConfig, Lfm2VlForConditionalGeneration
    from transformers.models.lfm2_vl.image_processing_lfm2_vl import Lfm2VlImageProcessor
    from transformers.models.lfm2_vl.processing_lfm2_vl import Lfm2VlProcessor
    name, merge = spec["name"], LFM2VL_FACTOR
    print(f"== {name}")
    out = os.path.join(out_root, name)
    os.makedirs(out, exist_ok=True)
    for fn in sorted(os.listdir(out)):
        if fn in GENERATED_FILES or fn.endswith(".f32"):
            os.remove(os.path.join(out, fn))
    if os.path.isdir(os.path.join(out, "images")):
        shutil.rmtree(os.path.join(out, "images"))
    images = make_images(out, spec["image_seed"])
    tok = make_lfm2vl_tokenizer()
    processor = Lfm2VlProcessor(Lfm2VlImageProcessor(**LFM2VL_IMAGE_PROCESSOR), tok, chat_template=LFM2VL_CHAT_TEMPLATE)
    vocab = len(tok)
    image_token_id = tok.convert_tokens_to_ids("<image>")
    bos, eos = tok.convert_tokens_to_ids("<|startoftext|>"), tok.convert_tokens_to_ids("<|im_end|>")
    text = dict(LFM2VL_TEXT, vocab_size=vocab, bos_token_id=bos, eos_token_id=eos, pad_token_id=0)
    config = Lfm2VlConfig(text_config=text, vision_config=dict(LFM2VL_VISION), image_token_id=image_token_id,
                          projector_hidden_act="gelu", projector_hidden_size=24, projector_bias=True,
                          projector_use_layernorm=True, downsample_factor=LFM2VL_FACTOR, tie_word_embeddings=True)
    torch.manual_seed(spec["seed"])
    model = Lfm2VlForConditionalGeneration(config)
    gen = torch.Generator().manual_seed(spec["seed"])
    randomize_(model, gen, spec["weight_std"], spec["norm_std"], spec["bias_std"], spec["pos_std"],
               norm_suffixes=("operator_norm.weight", "ffn_norm.weight", "q_layernorm.weight", "k_layernorm.weight",
                              "embedding_norm.weight"))
    # Stored bfloat16 (the tracked tree's limit); the oracle widens it to float32 exactly.
    model = model.to(torch.float32).eval().to(torch.bfloat16)
    model.generation_config = transformers.GenerationConfig(bos_token_id=bos, eos_token_id=eos, pad_token_id=0)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    model = Lfm2VlForConditionalGeneration.from_pretrained(out, dtype=torch.float32, attn_implementation="eager").eval()
    processor = Lfm2VlProcessor.from_pretrained(out)
    assert processor.image_token_id == image_token_id
    max_patches = processor.image_processor.max_num_patches

    cases, margins_all = [], []
    for cname, turns, files in LFM2VL_CASES:
        messages = [{"role": role, "content": [{"type": "image"} if it is None else {"type": "text", "text": it}
                                                for it in items]} for role, items in turns]
        prompt = processor.apply_chat_template(messages, add_generation_prompt=True)
        ims = [images[f] for f in files]
        inputs = processor(text=prompt, images=ims or None, return_tensors="pt")
        ids = inputs["input_ids"]
        case = {"name": cname, "messages": messages, "images": files, "prompt": prompt,
                "input_ids": [int(t) for t in ids[0]]}
        img_pos = [i for i, t in enumerate(case["input_ids"]) if t == image_token_id]
        gen_kwargs = dict(input_ids=ids, attention_mask=inputs["attention_mask"])
        with torch.no_grad():
            if ims:
                pv, mask, shapes = inputs["pixel_values"], inputs["pixel_attention_mask"], inputs["spatial_shapes"]
                assert pv.shape[1] == max_patches and mask.shape == pv.shape[:2]
                # The mask is the real patches then padding, as archc's sized encoder takes them.
                for k in range(pv.shape[0]):
                    n = int(shapes[k].prod())
                    assert int(mask[k].sum()) == n and bool(mask[k, :n].all()), (cname, k)
                grids = [[1, int(h), int(w)] for h, w in shapes]
                case["image_grid_thw"] = grids  # one per tile, in order: each image's tiles row-major, then its thumbnail
                # Which tiles are whose: the processor's image-by-image result.
                tiles, per_image = [], []
                for f in files:
                    one = processor.image_processor(images=[images[f]], return_tensors="pt", return_row_col_info=True)
                    per_image.append({"tiles": int(one["pixel_values"].shape[0]), "rows": int(one["image_rows"][0]),
                                      "cols": int(one["image_cols"][0]), "size": [int(v) for v in one["image_sizes"][0]]})
                    for k in range(one["pixel_values"].shape[0]):
                        sh = [int(v) for v in one["spatial_shapes"][k]]
                        tag = "thumb" if k == one["pixel_values"].shape[0] - 1 and k > 0 else f"t{k}"
                        tiles.append((f, tag, one["pixel_values"][k], sh))
                case["image_tiles"] = per_image
                assert len(tiles) == pv.shape[0]
                case["pixel_values_files"] = []
                for k, (f, tag, one_pv, sh) in enumerate(tiles):
                    assert sh == grids[k][1:] and torch.equal(one_pv, pv[k])
                    pvf = f"pixel_values.{os.path.splitext(f)[0]}.{tag}.f32"
                    case["pixel_values_files"].append(pvf)
                    rows = lfm2vl_rows(pv[k], sh, merge)
                    path = os.path.join(out, pvf)
                    if os.path.exists(path):
                        with open(path, "rb") as fh:
                            assert fh.read() == rows.numpy().astype("<f4").tobytes()
                    write_f32(path, rows)
                out_feats = model.model.get_image_features(pixel_values=pv, spatial_shapes=shapes,
                                                           pixel_attention_mask=mask)
                feats = torch.cat(list(out_feats.pooler_output), 0)
                case["image_features_shape"] = list(feats.shape)
                assert len(img_pos) == feats.shape[0], (len(img_pos), feats.shape)
                write_f32(os.path.join(out, f"image_features.{cname}.f32"), feats)
                gen_kwargs.update(pixel_values=pv, pixel_attention_mask=mask, spatial_shapes=shapes)
            res = model.generate(**gen_kwargs, do_sample=False, max_new_tokens=MAX_NEW_TOKENS,
                                 output_logits=True, return_dict_in_generate=True)
            new = [int(t) for t in res.sequences[0, ids.shape[1]:]]
            steps = [l[0].to(torch.float32) for l in res.logits]
            assert len(new) == MAX_NEW_TOKENS, f"{name}/{cname}: stopped after {len(new)}: {new}"
            assert eos not in new, f"{name}/{cname}: eos in {new}; change the seed"
            assert len(set(new)) >= 4, f"{name}/{cname}: degenerate {new}; change the seed"
            margins = []
            for t, l in zip(new, steps):
                top2 = torch.topk(l, 2).values
                assert int(torch.argmax(l)) == t
                margins.append(float(top2[0] - top2[1]))
            margins_all += margins
            last = model(**gen_kwargs, logits_to_keep=1).logits[0, -1]
            d = float((last - steps[0]).abs().max())
            assert d <= 1e-6, f"{name}/{cname}: prefill logits differ by {d}"
            if ims:
                emb = model.get_input_embeddings()(ids).masked_scatter((ids == image_token_id).unsqueeze(-1), feats)
                fl = model(inputs_embeds=emb, attention_mask=inputs["attention_mask"], logits_to_keep=1).logits[0, -1]
                d = float((fl - steps[0]).abs().max())
                assert d <= 1e-6, f"{name}/{cname}: merging image_features by hand moves the logits by {d}"
                case["image_features_check_max_abs_diff"] = d
                zl = model(**dict(gen_kwargs, pixel_values=torch.zeros_like(pv)), logits_to_keep=1).logits[0, -1]
                diff = float((zl - steps[0]).abs().max())
                assert diff >= IMAGE_MIN_DIFF, f"{name}/{cname}: the image does not matter ({diff})"
                res0 = model.generate(**dict(gen_kwargs, pixel_values=torch.zeros_like(pv)), do_sample=False,
                                      max_new_tokens=MAX_NEW_TOKENS)
                zt = [int(t) for t in res0[0, ids.shape[1]:]]
                assert zt != new, f"{name}/{cname}: zeroed pixels generate the same tokens {new}"
                case["image_check"] = {"max_abs_first_logit_diff": diff, "zeroed_pixels_tokens": zt}
                # The resized positions matter: the table's first cell everywhere.
                table = model.model.vision_tower.embeddings.position_embedding.weight
                keep = table.data.clone()
                table.data[:] = keep[0]
                try:
                    pl = model(**gen_kwargs, logits_to_keep=1).logits[0, -1]
                finally:
                    table.data[:] = keep
                pd = float((pl - steps[0]).abs().max())
                assert pd >= IMAGE_MIN_DIFF, f"{name}/{cname}: the tower's positions do not matter ({pd})"
                case["position_check"] = {"max_abs_first_logit_diff_one_position": pd}
        case["tokens"] = new
        case["min_top2_margin"] = min(margins)
        case["first_logits"] = [fmt_float(x) for x in steps[0]]
        print(f"  {cname}: {len(case['input_ids'])} ids, {files} grids {case.get('image_grid_thw')} -> {new} "
              f"(margin {min(margins):.4g})")
        cases.append(case)
    assert min(margins_all) >= MIN_TOP2_MARGIN, f"{name}: near-tie on the greedy path; change the seed"
    oracle = {
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "model_class": "Lfm2VlForConditionalGeneration",
        "processor_class": "Lfm2VlProcessor",
        "image_processor_class": "Lfm2VlImageProcessor (torchvision backend: the only one transformers has)",
        "dtype": "float32",
        "stored_dtype": "bfloat16",
        "attn_implementation": "eager",
        "seed": spec["seed"],
        "image_seed": spec["image_seed"],
        "image_token_id": image_token_id,
        "eos_token_id": [eos],
        "max_new_tokens": MAX_NEW_TOKENS,
        "pixel_values_layout": f"per tile [h*w patches, {3 * LFM2VL_PATCH ** 2}]: raw little-endian float32, the "
                               "processor's pixel_values row of that tile (each image's tiles row-major, then its "
                               "thumbnail; an unsplit image one tile) cut to its spatial_shapes (the "
                               "pixel_attention_mask's ones: always the first h*w patches) and laid out as archc's "
                               f"patch rows: each {merge}x{merge} window's patches consecutive, windows row-major, "
                               "each row as the processor wrote it (pixel row-major, then channel); image_grid_thw "
                               "is (1, h, w) per tile (spatial_shapes)",
        "image_features_layout": "[image tokens, text hidden]: get_image_features(pixel_values, spatial_shapes, "
                                 "pixel_attention_mask).pooler_output concatenated, row i replacing the i-th <image>",
        "image_check_method": "first-step logits with the real pixel_values vs zeroed (>= 1e-2 enforced), and the "
                              "greedy tokens with zeroed pixels (they differ, enforced)",
        "position_check_method": "first-step logits with every cell of the tower's position table set to its first "
                                 "vs first_logits (>= 1e-2 enforced)",
        "min_top2_margin": min(margins_all),
        "cases": cases,
    }
    with open(os.path.join(out, "oracle.json"), "w") as f:
        f.write(dump_json(oracle))
    report_folder(out)



FIXTURES = [
    dict(name="idefics3", family="idefics3", model_cls=Idefics3ForConditionalGeneration, config_cls=Idefics3Config,
         processor_cls=Idefics3Processor, image_processor_cls=Idefics3ImageProcessorPil,
         seed=1, image_seed=7, weight_std=0.3, norm_std=0.1, bias_std=0.1, pos_std=0.5),
    dict(name="smolvlm", family="idefics3", model_cls=SmolVLMForConditionalGeneration, config_cls=SmolVLMConfig,
         processor_cls=SmolVLMProcessor, image_processor_cls=SmolVLMImageProcessorPil,
         seed=1, image_seed=7, weight_std=0.3, norm_std=0.1, bias_std=0.1, pos_std=0.5, share_with="idefics3"),
    dict(name="llava", family="llava", model_cls=LlavaForConditionalGeneration, config_cls=LlavaConfig,
         processor_cls=LlavaProcessor, image_processor_cls=CLIPImageProcessorPil,
         seed=5, image_seed=7, weight_std=0.3, norm_std=0.1, bias_std=0.1, pos_std=0.5),
    dict(name="gemma3", family="gemma3", seed=31, embed_scale=0.1, image_seed=7, weight_std=0.5, norm_std=0.1, bias_std=0.1,
         pos_std=0.5),
    # issue 32: Qwen2-VL (M-RoPE, images of any size); its images are
    # idefics3's (same image_seed), kept once (share).
    dict(name="qwen2_vl", family="qwen2_vl", seed=44, image_seed=7, weight_std=0.3, norm_std=0.1, bias_std=0.1,
         pos_std=0.5, share_with="idefics3"),
    # issue 32: Qwen2.5-VL (its tower's window attention); the processor
    # and images are Qwen2-VL's, their files kept once (share).
    dict(name="qwen2_5_vl", family="qwen2_vl", model_cls=Qwen2_5_VLForConditionalGeneration,
         config_cls=Qwen2_5_VLConfig, processor_cls=Qwen2_5_VLProcessor, vision=QWEN25VL_VISION, seed=45,
         image_seed=7, weight_std=0.3, norm_std=0.1, bias_std=0.1, pos_std=0.5, share_with="qwen2_vl"),
    # issue 32: Qwen3.5 (the hybrid text model under interleaved M-RoPE;
    # its tower's resampled learned positions); Qwen3VLProcessor over
    # Qwen2-VL's image processor and images (share). Its (1 + w) text
    # RMSNorms stored near 0; the gated DeltaNet norm and the tower's
    # LayerNorms are plain gains.
    dict(name="qwen3_5", family="qwen2_vl", model_cls=Qwen3_5ForConditionalGeneration, config_cls=Qwen3_5Config,
         processor_cls=Qwen3VLProcessor, vision=QWEN35_VISION, text=QWEN35_TEXT, seed=56, image_seed=7,
         weight_std=0.3, norm_std=0.1, bias_std=0.1, pos_std=0.5, norm_center=0.0,
         plain_norms=("linear_attn.norm.weight", "merger.norm.weight"), share_with="qwen2_vl",
         # Interleaved sections only cut h's and w's runs: [6, 1, 1] moves
         # frequencies 4 and 7 (the low ones) to t, which moves the first
         # logits by under 1e-2 at these few positions; 2e-3 is 20 times
         # the logits' tolerance.
         mrope_swapped=[6, 1, 1], mrope_section_min_diff=2e-3),
    # issue 32: Qwen3.5-MoE, the same tower and images over the MoE text
    # model (archc: qwen3_5_moe with qwen3_5_vision mixed in).
    dict(name="qwen3_5_moe", family="qwen2_vl", model_cls=Qwen3_5MoeForConditionalGeneration,
         config_cls=Qwen3_5MoeConfig, processor_cls=Qwen3VLProcessor, vision=QWEN35_VISION, text=QWEN35_MOE_TEXT,
         seed=65, image_seed=7, weight_std=0.3, norm_std=0.1, bias_std=0.1, pos_std=0.5, norm_center=0.0,
         plain_norms=("linear_attn.norm.weight", "merger.norm.weight"), share_with="qwen2_vl",
         mrope_swapped=[6, 1, 1], mrope_section_min_diff=2e-3),
    # issue 32: Qwen3-VL (Qwen3.5's tower with DeepStack mergers, their
    # rows added after the first decoder layers; Qwen3's text model under
    # interleaved M-RoPE), and Qwen3-VL-MoE (its experts as the published
    # checkpoints store them); Qwen2-VL's processor and images (share).
    dict(name="qwen3_vl", family="qwen2_vl", model_cls=Qwen3VLForConditionalGeneration, config_cls=Qwen3VLConfig,
         processor_cls=Qwen3VLProcessor, vision=QWEN3VL_VISION, text=QWEN3VL_TEXT, seed=71, image_seed=7,
         weight_std=0.3, norm_std=0.1, bias_std=0.1, pos_std=0.5, share_with="qwen2_vl",
         mrope_swapped=[6, 1, 1], mrope_section_min_diff=2e-3),
    dict(name="qwen3_vl_moe", family="qwen2_vl", model_cls=Qwen3VLMoeForConditionalGeneration,
         config_cls=Qwen3VLMoeConfig, processor_cls=Qwen3VLProcessor, vision=QWEN3VL_VISION, text=QWEN3VL_MOE_TEXT,
         seed=73, image_seed=7, weight_std=0.3, norm_std=0.1, bias_std=0.1, pos_std=0.5, share_with="qwen2_vl",
         post_save=qwen3_vl_moe_published_experts, mrope_swapped=[6, 1, 1], mrope_section_min_diff=2e-3),
    # issue 32: Mistral 3 (the Pixtral tower, its 2-D RoPE and patch merger);
    # idefics3's images (share).
    dict(name="mistral3", family="mistral3", seed=81, image_seed=7, weight_std=0.3, norm_std=0.1, bias_std=0.1,
         pos_std=0.5, share_with="idefics3"),
    # issue 32: LLaVA with a Pixtral tower (Pixtral-12B's layout); mistral3's
    # tokenizer and template, idefics3's images (share).
    dict(name="pixtral", family="pixtral", seed=84, image_seed=7, weight_std=0.3, norm_std=0.1, bias_std=0.1,
         pos_std=0.5, share_with="mistral3"),
    # issue 34: LFM2-VL (the SigLIP2 NaFlex tower, tiles and a thumbnail,
    # the pixel-unshuffle projector); idefics3's images (share).
    dict(name="lfm2_vl", family="lfm2_vl", seed=92, image_seed=7, weight_std=0.3, norm_std=0.1, bias_std=0.1,
         pos_std=0.5, share_with="idefics3"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata", "vision"))
    ap.add_argument("--only", action="append")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    transformers.logging.set_verbosity_error()
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")
    for spec in FIXTURES:
        if args.only and spec["name"] not in args.only:
            continue
        build = {"gemma3": build_gemma3, "qwen2_vl": build_qwen2_vl, "mistral3": build_mistral3,
                 "pixtral": build_mistral3, "lfm2_vl": build_lfm2_vl}.get(spec["family"], build_fixture)
        build(spec, args.out)
        if spec.get("share_with"):
            share(os.path.join(args.out, spec["name"]), os.path.join(args.out, spec["share_with"]))


def share(folder, other):
    """Replaces each file of folder whose bytes equal the file at the same
    path in other by a relative symlink to it: SmolVLM's classes compute
    Idefics3's math with the same weights (seed 1 both), so their weights,
    images, arrays and oracle outputs are the same bytes, kept once (the
    tracked tree travels to the GPU machines, 64 MiB)."""
    for root, _, files in os.walk(folder):
        for name in files:
            p = os.path.join(root, name)
            q = os.path.join(other, os.path.relpath(p, folder))
            if os.path.islink(p) or not os.path.isfile(q):
                continue
            with open(p, "rb") as a, open(q, "rb") as b:
                if a.read() != b.read():
                    continue
            os.remove(p)
            target = os.path.relpath(os.path.realpath(q), os.path.realpath(root))  # the file itself, not a link to it
            os.symlink(target, p)
            print(f"  {os.path.relpath(p, folder)} -> {target}")
    total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(folder) for f in fs
                if not os.path.islink(os.path.join(r, f)) and f != "emit.summary")
    print(f"  {folder}: {total} bytes of its own")
    assert total <= MAX_FOLDER_BYTES, f"{folder}: {total} bytes > {MAX_FOLDER_BYTES}"


if __name__ == "__main__":
    sys.exit(main())
