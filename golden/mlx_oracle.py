#!/usr/bin/env python3
"""The oracle for a model type transformers lacks: mlx-lm's model file in fp32.

DESIGN.md section 7's oracle is HF transformers in fp32. A model type
transformers 5.24 has no class for (a remote-code checkpoint: internlm2,
deepseek, xverse) takes mlx-lm's model file for that type instead, run in
float32 on the CPU, never a forward written here. gen_fixtures.py calls
build_mlx_fixture for a FIXTURES entry with an `mlx_module` key:

  config.json
      the entry's `config`, written as it is (the published checkpoint's
      config.json fields and spellings: the remote-code layout, which
      save_pretrained cannot write without the remote class);
  model.safetensors
      random weights under the published checkpoint's tensor names: the
      shapes come from mlx-lm's model built on that config (its parameter
      names, with the experts mlx-lm stacks at load (`unstack`) written
      per expert again, as the published files hold them), drawn by
      gen_fixtures.randomize_'s rules in sorted-name order from the entry's
      seed, those the entry's `grid` names rounded to its step (a sanitize
      that adds to a bf16 tensor before the float32 cast stays exact);
      bf16 with stored_dtype="bfloat16", except those the entry's
      `float32_params` names (kept float32: a sanitize that rescales a
      tensor in its stored dtype, Baichuan-M1's NormHead lm_head);
  generation_config.json
      only when the entry gives `generation_config` (the published
      checkpoint keeps its eos there, not in config.json: Qwen);
  oracle.json
      the greedy oracle of mlx-lm's Model, loaded from the folder by
      mlx_lm.utils.load_model (its config reader, its sanitize, strict
      weight names: a name the published layout would not have fails
      here) with every parameter cast to float32, on mx.cpu: the prompt
      through the model with mlx-lm's KV cache (make_prompt_cache), then
      one token at a time; each step's token the argmax of the float32
      logits (the lowest id on a tie). Keys as the transformers oracles'
      (prompts, tokens, first_logits, min_top2_margin >= 1e-3, ...) plus
      `oracle` ("mlx-lm <version> <module>"); `prefill_logits_check`
      compares the cached path's logits at every greedy step with a
      forward of the whole sequence without a cache.

The entry's `mlx_module` names the mlx_lm.models module; it must be the
one mlx-lm itself picks for the config's model_type (its MODEL_REMAPPING:
xverse is llama.py), which is checked.

    python golden/mlx_oracle.py llama-tied
runs this oracle on an existing transformers fixture (its folder as it is)
and prints how far it is from the committed HF oracle: the check that this
path gives transformers' answer where both exist.
"""

import json
import math
import os
import re
import sys
from pathlib import Path

import mlx.core as mx
import mlx_lm
import numpy as np
import torch
from mlx.utils import tree_flatten, tree_map
from mlx_lm.models.cache import make_prompt_cache
from mlx_lm.utils import _get_classes, load_model
from safetensors.torch import save_file

import gen_fixtures as gf

# A decode step's logits against the whole sequence recomputed without a
# cache (float32; attention over a longer key row rounds differently).
DECODE_CHECK_TOL = 1e-5


def module_classes(module, unrename=()):
    """get_model_classes for load_model: mlx_lm.models.<module>'s Model and
    ModelArgs, after checking mlx-lm would pick that module itself. With
    unrename ((regex, replacement) pairs: the entry's "unrename"), the Model
    renames the folder's tensors by them before its own sanitize: a
    published name mlx-lm's model file spells otherwise and its sanitize
    does not map (mlx-lm's nemotron-nas names the linear replacements
    self_attn.linear and mlp.linear; the published checkpoints
    self_attn.linear_attn and mlp.linear_mlp)."""
    def get(config):
        model_cls, args_cls = _get_classes(config)
        want = f"mlx_lm.models.{module}"
        assert model_cls.__module__ == want, f"mlx-lm loads model_type {config['model_type']!r} with " \
            f"{model_cls.__module__}, not {want}"
        if not unrename:
            return model_cls, args_cls

        class Renamed(model_cls):
            def sanitize(self, weights):
                for pattern, name in unrename:
                    weights = {re.sub(pattern, name, k): v for k, v in weights.items()}
                return super().sanitize(weights) if hasattr(model_cls, "sanitize") else weights
        return Renamed, args_cls
    return get


def load_fp32(folder, module, model_config=None, unrename=()):
    """mlx-lm's model for the folder, every parameter float32 (unrename: as
    module_classes)."""
    model, _ = load_model(Path(folder), model_config=model_config,
                          get_model_classes=module_classes(module, unrename))
    model.update(tree_map(lambda p: p.astype(mx.float32), model.parameters()))
    mx.eval(model.parameters())
    return model


def last_logits(model, ids, cache=None):
    out = model(mx.array([ids], dtype=mx.int32), cache=cache)[0, -1].astype(mx.float32)
    return np.array(out)


def greedy(name, model, prompts, eos):
    """gen_fixtures.greedy_oracle's checks on mlx-lm's cached generation:
    (tokens, first_logits, margins, max cached-vs-full diff)."""
    tokens, first_logits, margins = [], [], []
    worst = 0.0
    for prompt in prompts:
        cache = make_prompt_cache(model)
        logits = last_logits(model, prompt, cache)
        seq, new = list(prompt), []
        for step in range(gf.MAX_NEW_TOKENS):
            full = last_logits(model, seq)
            worst = max(worst, float(np.abs(full - logits).max()))
            t = int(np.argmax(logits))  # the first maximum: the lowest id on a tie
            assert int(np.argmax(full)) == t, f"{name}: step {step}: the cached and uncached forwards pick different tokens"
            top2 = np.sort(logits)[-2:]
            margins.append(float(top2[1] - top2[0]))
            if step == 0:
                first_logits.append([gf.fmt_float(x) for x in logits])
            new.append(t)
            seq.append(t)
            if step + 1 < gf.MAX_NEW_TOKENS:
                logits = last_logits(model, [t], cache)
        assert eos not in new, f"{name}: eos in output {new}; change the seed"
        assert len(set(new)) > 1, f"{name}: degenerate output {new}; change the seed"
        tokens.append(new)
        print(f"  prompt len {len(prompt):2d} -> {new}")
    assert worst <= DECODE_CHECK_TOL, f"{name}: cached and uncached logits differ by {worst}"
    return tokens, first_logits, margins, worst


def oracle_name(module):
    return f"mlx-lm {mlx_lm.__version__} mlx_lm.models.{module}"


def hf_tensors(spec, config):
    """{published name: shape} from mlx-lm's model on config: its
    parameters, with each stacked expert tensor (spec["unstack"]: mlx-lm's
    module name, the published one) split back per expert, each name
    spec["rename"] rewrites ((regex, replacement) pairs: a parameter that
    mlx-lm's sanitize renames at load, under its published name), and the
    shapes of spec["published_shapes"] ({name suffix: shape}: a tensor
    published in another shape, which mlx-lm's sanitize reshapes) as
    published."""
    model_cls, args_cls = module_classes(spec["mlx_module"])(config)
    model = model_cls(args_cls.from_dict(config))
    stacked, per_expert = spec.get("unstack", (None, None))
    shapes = {}
    for name, p in tree_flatten(model.parameters()):
        m = stacked and re.match(rf"^(.*)\.{stacked}\.(\w+)\.weight$", name)
        if m:
            for e in range(p.shape[0]):
                shapes[f"{m.group(1)}.{per_expert}.{e}.{m.group(2)}.weight"] = tuple(p.shape[1:])
        else:
            for pattern, published in spec.get("rename", ()):
                name = re.sub(pattern, published, name)
            shapes[name] = tuple(p.shape)
    for suffix, shape in spec.get("published_shapes", {}).items():  # where the checkpoint's shape differs from mlx-lm's
        for name in shapes:
            if name.endswith(suffix):
                shapes[name] = tuple(shape)
    return shapes


class _Tensors:
    """A {name: tensor} dict as gen_fixtures.randomize_ reads a model."""

    def __init__(self, tensors):
        self.tensors = tensors

    def named_parameters(self):
        return iter(self.tensors.items())

    def named_buffers(self):
        return iter(())


def build_mlx_fixture(spec, out):
    """Writes config.json, model.safetensors and oracle.json of the entry
    into the folder out (the other files there are kept)."""
    name, config = spec["name"], spec["config"]
    mx.set_default_device(mx.cpu)
    with open(os.path.join(out, "config.json"), "w") as f:
        f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")
    gen_config = spec.get("generation_config")
    if gen_config is not None:  # where the published checkpoint keeps its eos (Qwen's)
        with open(os.path.join(out, "generation_config.json"), "w") as f:
            f.write(json.dumps(gen_config, indent=2, sort_keys=True) + "\n")

    tensors = {n: torch.zeros(s, dtype=torch.float32) for n, s in hf_tensors(spec, config).items()}
    gen = torch.Generator().manual_seed(spec["seed"])
    gf.randomize_(_Tensors(tensors), gen, spec["weight_std"], spec["norm_std"], spec["bias_std"],
                  spec.get("norm_center", 1.0), spec.get("embed_std"), norm_suffixes=("norm.weight",),
                  extra_params=spec.get("extra_params"))
    for suffix, step in spec.get("grid", {}).items():  # arithmetic mlx-lm's sanitize does in the stored dtype
        for n, t in tensors.items():
            if n.endswith(suffix):
                t.copy_(torch.round(t / step) * step)
    dtype = {None: torch.float32, "bfloat16": torch.bfloat16}[spec.get("stored_dtype")]
    keep = tuple(spec.get("float32_params", ()))  # rescaled by mlx-lm's sanitize in the stored dtype
    save_file({n: (t if keep and n.endswith(keep) else t.to(dtype)).contiguous() for n, t in sorted(tensors.items())},
              os.path.join(out, "model.safetensors"), metadata={"format": "pt"})

    model = load_fp32(out, spec["mlx_module"], unrename=spec.get("unrename", ()))
    # eos from config.json, else generation_config.json (as archc's driver
    # reads it); a config without bos_token_id (Qwen has no BOS) still gets
    # prompts that start with id 1, as every fixture's
    eos = config.get("eos_token_id", (gen_config or {}).get("eos_token_id"))
    vocab, bos = config["vocab_size"], config.get("bos_token_id", 1)
    prompts = gf.make_prompts(spec["prompt_seed"], vocab, bos, spec.get("prompt_lengths", gf.PROMPT_LENGTHS))
    tokens, first_logits, margins, worst = greedy(name, model, prompts, eos)
    min_margin = min(margins)
    print(f"  min top1-top2 margin over all greedy steps: {min_margin:.6g}")
    assert min_margin >= gf.MIN_TOP2_MARGIN, f"{name}: near-tie in greedy path; change the seed"
    switch_checks = check_switches(spec, out, prompts, first_logits)

    oracle = {
        "oracle": oracle_name(spec["mlx_module"]),
        "mlx_version": mx.__version__,
        "mlx_lm_version": mlx_lm.__version__,
        "model_class": f"mlx_lm.models.{spec['mlx_module']}.Model",
        "device": "cpu",
        "dtype": "float32",
        "seed": spec["seed"],
        "prompt_seed": spec["prompt_seed"],
        "eos_token_id": eos,
        "max_new_tokens": gf.MAX_NEW_TOKENS,
        "prompts": prompts,
        "tokens": tokens,
        "min_top2_margin": min_margin,
        "prefill_logits_check": {
            "reference": "the cached path: the prompt through model(ids, cache) (make_prompt_cache), then each token",
            "method": "model(whole sequence)[0,-1] without a cache, at every greedy step (same argmax checked)",
            "tolerance": DECODE_CHECK_TOL,
            "max_abs_diff": worst,
            "ok": True,
        },
    }
    for key in switch_checks:
        oracle[key] = True
    if switch_checks:
        oracle["switch_checks"] = switch_checks
    oracle["first_logits"] = first_logits
    with open(os.path.join(out, "oracle.json"), "w") as f:
        f.write(gf.dump_json(oracle))


def check_switches(spec, out, prompts, reference):
    """gen_fixtures.check_switches for an mlx-lm model: each switch's
    config overrides (a dict) passed to load_model; the first-step logits
    must move by SWITCH_MIN_DIFF for some prompt."""
    result = {}
    for key, what, overrides in spec.get("switches", []):
        alt = load_fp32(out, spec["mlx_module"], model_config=dict(overrides), unrename=spec.get("unrename", ()))
        diffs = [float(np.abs(last_logits(alt, p) - np.array(r, dtype=np.float32)).max())
                 for p, r in zip(prompts, reference)]
        print(f"  switch {key}: off = {what}; max |dlogit| per prompt {diffs}")
        assert max(diffs) >= gf.SWITCH_MIN_DIFF, f"{spec['name']}: {key} does not matter ({diffs})"
        result[key] = {"disabled_by": what, "max_abs_first_logit_diff_per_prompt": diffs}
    return result


# Existing transformers fixtures this oracle can read as they are: the
# mlx-lm module and the config.json keys it needs in transformers 4's
# spelling (mlx-lm's llama reads rope_theta and rope_scaling at the top
# level, transformers 5 writes them inside rope_parameters).
VALIDATE = {
    "llama-tied": ("llama", {}),
    "llama-untied-llama3": ("llama", {"rope_theta": 500000.0, "rope_scaling": {
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 64}}),
}


def validate(name):
    """The mlx-lm oracle on a transformers fixture: greedy tokens equal and
    the largest first-step logit difference; returns that difference."""
    mx.set_default_device(mx.cpu)
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "testdata", name)
    module, overrides = VALIDATE[name]
    with open(os.path.join(folder, "config.json")) as f:
        rp = json.load(f).get("rope_parameters", {})
    if overrides.get("rope_scaling"):  # the fixture's own values, checked
        assert all(rp[k] == v for k, v in overrides["rope_scaling"].items()), rp
    with open(os.path.join(folder, "oracle.json")) as f:
        hf = json.load(f)
    model = load_fp32(folder, module, model_config=overrides)
    tokens, first_logits, margins, worst = greedy(name, model, hf["prompts"], hf["eos_token_id"])
    diff = max(float(np.abs(np.array(a, np.float32) - np.array(b, np.float32)).max())
               for a, b in zip(first_logits, hf["first_logits"]))
    same = tokens == hf["tokens"]
    print(f"{name}: {oracle_name(module)} vs transformers {hf['transformers_version']}: tokens "
          f"{'equal' if same else 'DIFFER'}, max |first_logits diff| {diff:.3g} (cached vs uncached {worst:.3g})")
    assert same, f"{name}: mlx-lm tokens {tokens} != transformers {hf['tokens']}"
    return diff


if __name__ == "__main__":
    sys.exit(max(validate(n) for n in (sys.argv[1:] or sorted(VALIDATE))) > 1e-5)
