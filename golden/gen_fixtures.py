#!/usr/bin/env python3
"""Generate archc's oracle fixtures (DESIGN.md section 7, oracle tier).

For every entry of FIXTURES this writes golden/testdata/<name>/:

  config.json, generation_config.json, model.safetensors
      a tiny random-weight checkpoint in Hugging Face layout (fp32),
      written by save_pretrained(..., safe_serialization=True);
  oracle.json
      the HF fp32 eager-attention oracle: greedy token ids for a few
      prompts and the logits that produced the first generated token.

Everything is seeded and single-threaded, so a rerun with the same pinned
versions (requirements-oracle.txt) is byte-identical.

Run (from the repository root):
    /work/oracle-venv/bin/python golden/gen_fixtures.py --out golden/testdata

To add a family/config: append one dict to FIXTURES (model class, config
kwargs, seeds). Nothing else needs to change.
"""

import argparse
import hashlib
import json
import math
import os
import shutil
import sys

import torch
import transformers
from transformers import LlamaConfig, LlamaForCausalLM

MAX_NEW_TOKENS = 16
PROMPT_LENGTHS = (1, 7, 29)  # including the leading BOS
MIN_TOKEN_ID = 3  # prompt ids lie in [3, vocab-1]; 0..2 are pad/bos/eos-ish
MAX_FOLDER_BYTES = 1 << 20
# Every greedy step must win by at least this much over the runner-up, so a
# 1e-4-accurate reimplementation cannot flip a token (DESIGN.md section 7).
MIN_TOP2_MARGIN = 1e-3
LOGITS_CHECK_TOL = 1e-6
FULL_FORWARD_TOL = 1e-5

# Shared shape of the tiny Llama-family models.
TINY_LLAMA = dict(
    vocab_size=256,
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=256,
    rms_norm_eps=1e-5,
    hidden_act="silu",
    bos_token_id=1,
    eos_token_id=2,
    initializer_range=0.2,
)

# The fixture table. One entry per fixture; keep names stable, Go tests
# refer to them.
#   name         folder name under --out
#   model_cls    HF model class
#   config_cls   HF config class
#   config       kwargs for config_cls (as a user would pass them)
#   seed         seed for the weights
#   prompt_seed  seed for the prompt ids
#   weight_std   std of the random matrices (embeddings, projections)
#   norm_std     norm weights are 1 + norm_std * N(0, 1)
#   bias_std     biases are bias_std * N(0, 1)
#   check_rope_scaling   print/verify that rope scaling changes inv_freq
FIXTURES = [
    dict(
        name="llama-tied",
        model_cls=LlamaForCausalLM,
        config_cls=LlamaConfig,
        config=dict(
            TINY_LLAMA,
            tie_word_embeddings=True,
            attention_bias=False,
            rope_theta=10000.0,
        ),
        seed=1234,
        prompt_seed=4321,
        weight_std=0.2,
        norm_std=0.1,
        bias_std=0.1,
        check_rope_scaling=False,
    ),
    dict(
        name="llama-untied-llama3",
        model_cls=LlamaForCausalLM,
        config_cls=LlamaConfig,
        config=dict(
            TINY_LLAMA,
            tie_word_embeddings=False,
            attention_bias=True,
            head_dim=16,
            rope_theta=500000.0,
            # original_max_position_embeddings=64 puts the 8 rotary
            # frequencies of head_dim 16 into all three llama3 bands:
            # wavelen < 16 (kept), 16..64 (smoothed), > 64 (divided by 8).
            rope_scaling={
                "rope_type": "llama3",
                "factor": 8.0,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
                "original_max_position_embeddings": 64,
            },
        ),
        seed=5678,
        prompt_seed=8765,
        weight_std=0.2,
        norm_std=0.1,
        bias_std=0.1,
        check_rope_scaling=True,
    ),
]


def randomize_(model, gen, weight_std, norm_std, bias_std):
    """Overwrite every parameter in a fixed (sorted-name) order."""
    with torch.no_grad():
        params = dict(model.named_parameters())  # tied params appear once
        for name in sorted(params):
            p = params[name]
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float32)
            if name.endswith("norm.weight"):
                p.copy_(1.0 + norm_std * noise)
            elif name.endswith(".bias"):
                p.copy_(bias_std * noise)
            elif name.endswith(".weight"):
                p.copy_(weight_std * noise)
            else:
                raise ValueError(f"unexpected parameter {name}")


def make_prompts(seed, vocab, bos):
    gen = torch.Generator().manual_seed(seed)
    prompts = []
    for n in PROMPT_LENGTHS:
        rest = torch.randint(MIN_TOKEN_ID, vocab, (n - 1,), generator=gen)
        prompts.append([bos] + [int(x) for x in rest])
    return prompts


def rope_report(config):
    """inv_freq with and without the configured scaling; must differ."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    rope_type = config.rope_parameters["rope_type"]
    scaled, _ = ROPE_INIT_FUNCTIONS[rope_type](config)
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    plain, _ = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    print(f"  rope_type={rope_type}")
    print(f"  inv_freq default: {[float(x) for x in plain]}")
    print(f"  inv_freq scaled : {[float(x) for x in scaled]}")
    ratio = (plain / scaled).tolist()
    print(f"  default/scaled  : {ratio}")
    kept = sum(1 for r in ratio if abs(r - 1.0) < 1e-6)
    divided = sum(1 for r in ratio if abs(r - config.rope_parameters["factor"]) < 1e-4)
    smoothed = len(ratio) - kept - divided
    print(f"  kept={kept} smoothed={smoothed} divided={divided}")
    assert kept and smoothed and divided, "llama3 scaling should hit all three bands"


def fmt_float(x):
    # float32 -> python float is exact; repr is the shortest string that
    # round-trips, so the float32 value is recovered exactly.
    v = float(x)
    assert math.isfinite(v)
    return v


def dump_json(obj):
    """Plain JSON, one top-level key per line and one row per line for
    lists of lists, so diffs stay readable. Floats use Python's repr."""
    lines = []
    for i, (k, v) in enumerate(obj.items()):
        sep = "," if i + 1 < len(obj) else ""
        if isinstance(v, list) and v and all(isinstance(r, list) for r in v):
            rows = [json.dumps(r) for r in v]
            body = "[\n  " + ",\n  ".join(rows) + "\n ]"
        else:
            body = json.dumps(v, sort_keys=True)
        lines.append(f" {json.dumps(k)}: {body}{sep}")
    text = "{\n" + "\n".join(lines) + "\n}\n"
    assert json.loads(text) == obj
    return text


def build_fixture(spec, out_root):
    name = spec["name"]
    print(f"== {name}")
    out = os.path.join(out_root, name)
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)

    config = spec["config_cls"](**spec["config"])
    torch.manual_seed(spec["seed"])  # for whatever HF's own init draws
    model = spec["model_cls"](config)
    gen = torch.Generator().manual_seed(spec["seed"])
    randomize_(model, gen, spec["weight_std"], spec["norm_std"], spec["bias_std"])
    model = model.to(torch.float32).eval()

    if spec["check_rope_scaling"]:
        rope_report(model.config)

    model.save_pretrained(out, safe_serialization=True)

    # Reload from disk so the oracle is computed from exactly what we ship.
    model = spec["model_cls"].from_pretrained(
        out, dtype=torch.float32, attn_implementation="eager"
    ).eval()
    cfg = model.config
    eos = cfg.eos_token_id
    prompts = make_prompts(spec["prompt_seed"], cfg.vocab_size, cfg.bos_token_id)

    tokens, first_logits, margins = [], [], []
    max_check_diff = max_full_diff = 0.0
    with torch.no_grad():
        for prompt in prompts:
            ids = torch.tensor([prompt], dtype=torch.long)
            res = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                do_sample=False,
                max_new_tokens=MAX_NEW_TOKENS,
                eos_token_id=eos,
                pad_token_id=eos,
                output_logits=True,
                return_dict_in_generate=True,
            )
            new = [int(t) for t in res.sequences[0, len(prompt):]]
            step_logits = [l[0].to(torch.float32) for l in res.logits]
            assert len(new) == MAX_NEW_TOKENS, (
                f"{name}: prompt {prompt} stopped after {len(new)} tokens "
                f"(eos {eos}); change the seed"
            )
            assert eos not in new, f"{name}: eos in output {new}; change the seed"
            assert len(set(new)) > 1, f"{name}: degenerate output {new}; change the seed"
            for t, l in zip(new, step_logits):
                top2 = torch.topk(l, 2).values
                assert int(torch.argmax(l)) == t
                margins.append(float(top2[0] - top2[1]))

            # Same logits by a plain forward. With logits_to_keep=1 (what
            # generate does) lm_head runs on the last row only and the
            # result is bit-identical; the full-sequence forward runs
            # lm_head as a [len, hidden] matmul, whose BLAS blocking rounds
            # differently by a few float32 ulps (~1e-6 at |logit| ~ 6).
            last = model(ids, logits_to_keep=1).logits[0, -1].to(torch.float32)
            full = model(ids).logits[0, -1].to(torch.float32)
            d_last = float((last - step_logits[0]).abs().max())
            d_full = float((full - step_logits[0]).abs().max())
            assert d_last <= LOGITS_CHECK_TOL, f"{name}: prefill logits differ by {d_last}"
            assert d_full <= FULL_FORWARD_TOL, f"{name}: full-forward logits differ by {d_full}"
            max_check_diff = max(max_check_diff, d_last)
            max_full_diff = max(max_full_diff, d_full)

            tokens.append(new)
            first_logits.append([fmt_float(x) for x in step_logits[0]])
            print(f"  prompt len {len(prompt):2d} -> {new}")

    min_margin = min(margins)
    print(f"  min top1-top2 margin over all greedy steps: {min_margin:.6g}")
    assert min_margin >= MIN_TOP2_MARGIN, f"{name}: near-tie in greedy path; change the seed"

    oracle = {
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "model_class": spec["model_cls"].__name__,
        "attn_implementation": "eager",
        "dtype": "float32",
        "seed": spec["seed"],
        "prompt_seed": spec["prompt_seed"],
        "eos_token_id": eos,
        "max_new_tokens": MAX_NEW_TOKENS,
        "prompts": prompts,
        "tokens": tokens,
        "min_top2_margin": min_margin,
        "prefill_logits_check": {
            "reference": "generate(output_logits=True).logits[0] (= first_logits)",
            "method": "model(input_ids, logits_to_keep=1).logits[0,-1]",
            "tolerance": LOGITS_CHECK_TOL,
            "max_abs_diff": max_check_diff,
            "full_forward_method": "model(input_ids).logits[0,-1]",
            "full_forward_tolerance": FULL_FORWARD_TOL,
            "full_forward_max_abs_diff": max_full_diff,
            "ok": True,
        },
        "first_logits": first_logits,
    }
    with open(os.path.join(out, "oracle.json"), "w") as f:
        f.write(dump_json(oracle))

    total = 0
    for fn in sorted(os.listdir(out)):
        p = os.path.join(out, fn)
        size = os.path.getsize(p)
        total += size
        with open(p, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        print(f"  {fn:24s} {size:8d}  {digest}")
    assert total <= MAX_FOLDER_BYTES, f"{name}: folder is {total} bytes"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata"))
    ap.add_argument("--only", action="append", help="fixture name (repeatable)")
    args = ap.parse_args()

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    transformers.logging.set_verbosity_error()
    print(f"torch {torch.__version__}, transformers {transformers.__version__}")

    names = [s["name"] for s in FIXTURES]
    assert len(set(names)) == len(names)
    for spec in FIXTURES:
        if args.only and spec["name"] not in args.only:
            continue
        build_fixture(spec, args.out)


if __name__ == "__main__":
    sys.exit(main())
