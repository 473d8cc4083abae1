#!/usr/bin/env python3
"""Generate archc's MLX affine-quantized oracle fixtures.

Each entry of FIXTURES takes a float fixture written by gen_fixtures.py,
quantizes it with mlx-lm's own converter functions (load_model,
quantize_model, save_model, save_config: what `mlx_lm convert -q` runs,
minus the tokenizer, which the fixtures do not have) and writes
golden/testdata/<name>/:

  config.json, model.safetensors, model.safetensors.index.json
      the folder as mlx-lm writes it: `quantization` (and its copy
      `quantization_config`) in config.json, each quantized weight as packed
      U32 `.weight` with `.scales` and `.biases` per group;
  generation_config.json
      copied from the source fixture;
  oracle.json
      the HF fp32 eager oracle (gen_fixtures.greedy_oracle) run on the
      values mlx.core.dequantize gives for every quantized tensor (and the
      stored values, widened to f32, for the others), on the source
      fixture's prompts.

Run (from the repository root, in a venv with golden/requirements-oracle.txt
, which lists mlx and mlx-lm too):
    python golden/gen_mlx_fixtures.py
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import mlx.core as mx
import numpy as np
import torch
import transformers
from mlx_lm.utils import load_model, quantize_model, save_config, save_model

import gen_fixtures as gf

HERE = os.path.dirname(os.path.abspath(__file__))

# name, source fixture, bits, group_size, dtype of the unquantized tensors
# (and so of the scales and biases), optional mlx-lm mixed-bit recipe.
FIXTURES = [
    # 4-bit, bf16 scales (the common mlx-community upload), untied lm_head.
    dict(name="llama-mlx-q4", source="llama-untied-llama3", bits=4, group_size=32, dtype="bfloat16"),
    # 8-bit, f16 scales, tied embeddings: the quantized embedding is lm_head.
    dict(name="qwen3-mlx-q8", source="qwen3-tied", bits=8, group_size=64, dtype="float16"),
    # mlx-lm's mixed 3/4-bit recipe: per-layer entries in `quantization`.
    dict(name="gemma3-mlx-mixed", source="gemma3-text-sliding", bits=4, group_size=32, dtype="float32",
         recipe="mixed_3_4"),
]

WRITTEN = ("config.json", "model.safetensors", "model.safetensors.index.json", "generation_config.json", "oracle.json")
KEPT = ("emit.summary",)


def quant_params(quant, module):
    """The (group_size, bits) mlx-lm recorded for a module path, or None if
    the module is not quantized."""
    p = quant.get(module, quant)
    if p is False:
        return None
    return p["group_size"], p["bits"]


def dequantized_state(folder, quant):
    """Every tensor of the mlx folder as float32 torch tensors; quantized
    weights by mx.dequantize."""
    arrays = {}
    for fn in sorted(os.listdir(folder)):
        if fn.endswith(".safetensors"):
            arrays.update(mx.load(os.path.join(folder, fn)))
    out = {}
    for name, a in arrays.items():
        if name.endswith(".scales") or name.endswith(".biases"):
            continue
        base = name[: -len(".weight")] if name.endswith(".weight") else None
        if base is not None and base + ".scales" in arrays:
            gs, bits = quant_params(quant, base)
            a = mx.dequantize(a, arrays[base + ".scales"], arrays[base + ".biases"], group_size=gs, bits=bits)
        out[name] = torch.from_numpy(np.array(a.astype(mx.float32)))
    return out


def build(spec, root):
    name = spec["name"]
    print(f"== {name}")
    src = os.path.join(root, spec["source"])
    out = os.path.join(root, name)
    os.makedirs(out, exist_ok=True)
    for fn in os.listdir(out):
        if fn not in KEPT:
            os.remove(os.path.join(out, fn))

    with tempfile.TemporaryDirectory() as tmp:
        # load_model reads config.json and *.safetensors from the folder.
        for fn in ("config.json", "model.safetensors"):
            shutil.copy(os.path.join(src, fn), tmp)
        model, config = load_model(Path(tmp))
    dtype = getattr(mx, spec["dtype"])
    model.update(
        _map_floats(model.parameters(), lambda v: v.astype(dtype))
    )
    predicate = None
    if spec.get("recipe"):
        from mlx_lm.convert import mixed_quant_predicate_builder

        predicate = mixed_quant_predicate_builder(spec["recipe"], model, spec["group_size"])
    model, config = quantize_model(
        model, config, spec["group_size"], spec["bits"], mode="affine", quant_predicate=predicate
    )
    save_model(out, model)
    save_config(config, os.path.join(out, "config.json"))
    shutil.copy(os.path.join(src, "generation_config.json"), out)

    # The oracle: the source fixture's HF class and config on the
    # dequantized values.
    source_oracle = json.load(open(os.path.join(src, "oracle.json")))
    cls = getattr(transformers, source_oracle["model_class"])
    hf_config = transformers.AutoConfig.from_pretrained(src)
    torch.manual_seed(0)
    model = cls(hf_config).to(torch.float32).eval()
    state = dequantized_state(out, config["quantization"])
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [m for m in missing if not (m == "lm_head.weight" and hf_config.tie_word_embeddings)]
    assert not missing and not unexpected, f"{name}: missing {missing}, unexpected {unexpected}"
    model.tie_weights()
    model.config._attn_implementation = "eager"

    prompts = source_oracle["prompts"]
    eos = hf_config.eos_token_id
    tokens, first_logits, margins, d_check, d_full = gf.greedy_oracle(name, model, prompts, eos)
    min_margin = min(margins)
    print(f"  min top1-top2 margin over all greedy steps: {min_margin:.6g}")
    assert min_margin >= gf.MIN_TOP2_MARGIN, f"{name}: near-tie in greedy path; change the spec"
    quantized = sorted(k[: -len(".scales")] for k in mx.load(os.path.join(out, "model.safetensors")) if k.endswith(".scales"))
    oracle = {
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "mlx_version": mx.__version__,
        "model_class": cls.__name__,
        "attn_implementation": "eager",
        "dtype": "float32",
        "source_fixture": spec["source"],
        "quantization": config["quantization"],
        "quantized_modules": quantized,
        "weights": "mlx.core.dequantize of each quantized tensor, others widened to float32",
        "eos_token_id": eos,
        "max_new_tokens": gf.MAX_NEW_TOKENS,
        "prompts": prompts,
        "tokens": tokens,
        "min_top2_margin": min_margin,
        "prefill_logits_check": {"max_abs_diff": d_check, "full_forward_max_abs_diff": d_full, "ok": True},
        "first_logits": first_logits,
    }
    with open(os.path.join(out, "oracle.json"), "w") as f:
        f.write(gf.dump_json(oracle))
    total = sum(os.path.getsize(os.path.join(out, fn)) for fn in os.listdir(out))
    print(f"  {len(quantized)} quantized modules, folder {total} bytes")
    assert total <= gf.MAX_FOLDER_BYTES


def _map_floats(tree, f):
    """f applied to every floating-point array of a nested parameter tree."""
    if isinstance(tree, dict):
        return {k: _map_floats(v, f) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_map_floats(v, f) for v in tree]
    if isinstance(tree, mx.array) and mx.issubdtype(tree.dtype, mx.floating):
        return f(tree)
    return tree


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(HERE, "testdata"))
    ap.add_argument("--only", action="append", help="fixture name (repeatable)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    transformers.logging.set_verbosity_error()
    mx.random.seed(0)
    print(f"mlx {mx.__version__}, torch {torch.__version__}, transformers {transformers.__version__}")
    for spec in FIXTURES:
        if args.only and spec["name"] not in args.only:
            continue
        build(spec, args.out)


if __name__ == "__main__":
    sys.exit(main())
