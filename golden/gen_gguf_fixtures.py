#!/usr/bin/env python3
"""Write the GGUF twins of archc's oracle fixtures and their oracles.

For every fixture folder golden/testdata/<name>/ made by gen_fixtures.py
(the MLX twins are left out) this writes, next to model.safetensors, with
the converter gguf_convert.py (numpy and gguf-py; make_gguf_twins.py,
which CI runs, writes the twins with the same code):

  model.f32.gguf
      the checkpoint as llama.cpp's converter (convert_hf_to_gguf.py) writes
      it with --outtype f32: its general.architecture, its metadata keys and
      its tensor names (gguf-py's GGUFWriter, constants and TensorNameMap),
      Q/K rows permuted for the llama-style families (LlamaModel.permute),
      Gemma's RMSNorm weights stored as 1 + w, llama 3's rope_freqs tensor;
  model.q8_0.gguf
      the same with --outtype q8_0: 2-D weights Q8_0 (F16 where a row is
      not a multiple of 32, as the converter falls back), 1-D tensors and
      norms F32;
  oracle.q8_0.json
      the HF fp32 eager-attention oracle on the Q8_0 file's values as
      gguf-py dequantizes them (transforms undone), on the fixture's
      prompts: greedy tokens, first-step logits and the top1-top2 margins
      (>= 1e-3 enforced, as gen_fixtures.py does).
      For a fixture whose oracle is mlx-lm's model file (an mlx_module
      entry: a model type transformers lacks), that oracle instead
      (mlx_oracle.py, mlx_q8_oracle).

archc must run model.f32.gguf exactly as the safetensors folder (same
config, same compiled graph, same weights: Gemma's norms up to the
rounding of (1 + w) - 1 in float32) and model.q8_0.gguf token-exact against
oracle.q8_0.json (golden/gguf_test.go).

The twins are not committed (.gitignore): this records their sha256 in
golden/testdata/gguf.sha256, which make_gguf_twins.py checks them against.
It also computes with torch what the converter cannot with numpy
(gguf_convert.TORCH_VALUES, committed).

Where a fixture's config uses a value llama.cpp's format cannot carry
(llama.cpp fixes it per architecture, or writes it only for other
architectures), the value is written under a key the family's .arch gguf
section reads, marked EXTENSION below: a standard gguf-py key where one
exists (sliding_window, sliding_window_pattern, rope.scaling.*), else an
archc key named after the Hugging Face field (query_pre_attn_scalar,
no_rope_layers, rope.scaling.low_freq_factor / high_freq_factor). Without
them a twin would be a different model from its safetensors folder.

Run after gen_fixtures.py, from the repository root, with the venv that
has torch, transformers and gguf (the bench venv):
    .venv-bench/bin/python golden/gen_gguf_fixtures.py [--only NAME]
Everything is deterministic: a rerun writes the same bytes.
"""

import argparse
import importlib.metadata
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch
import transformers
from safetensors.torch import save_file as save_torch_file  # (gguf_convert's star import brings numpy's save_file)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_fixtures  # noqa: E402  (greedy_oracle, dump_json, MIN_TOP2_MARGIN)
import gguf_convert  # noqa: E402
from gguf_convert import *  # noqa: E402,F403  (the converter: GGUF_ARCH, write_twins, read_back, ...)
from gguf_convert import TESTDATA, TWINS, read_manifest, write_manifest, twin_folders, load_fixture, write_twins, sha256, read_back, recorded_types  # noqa: E402

GGUF_VERSION = importlib.metadata.version("gguf")
# Prompt seeds tried (the fixture's, then the next ones) for a Q8_0 greedy
# path without near-ties (or EOS).
MAX_PROMPT_SEEDS = 20


def torch_randn(seed, draw, shape):
    """0.1 · torch.randn(*shape), the draw-th draw of a generator seeded
    seed (gguf_convert.nextn_eh_proj)."""
    gen = torch.Generator().manual_seed(seed)
    for _ in range(draw + 1):
        x = 0.1 * torch.randn(*shape, generator=gen)
    return x.numpy()


def build(folder):
    name = os.path.basename(folder)
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(folder, "oracle.json")) as f:
        fixture_oracle = json.load(f)
    print(f"== {name} ({cfg['model_type']} -> {GGUF_ARCH[model_kind(cfg)]})")
    _, state = load_fixture(folder)
    # A regenerated fixture's Q8_0 twin keeps the tensor types its oracle
    # recorded (make_gguf_twins.py writes them so: mixtral's, olmoe's, ...
    # routers Q8_0, from before the rule that keeps them F32).
    recorded = recorded_types(folder) if os.path.exists(os.path.join(folder, "oracle.q8_0.json")) else None
    tensors, types = write_twins(folder, cfg, state, recorded)
    names = {g: hf for g, hf, _ in tensors}
    f32 = os.path.join(folder, "model.f32.gguf")
    shapes = {hf: tuple(t.shape) for hf, t in state.items()}
    back = {hf: torch.from_numpy(np.ascontiguousarray(t)) for hf, t in read_back(f32, cfg, names, shapes).items()}
    state = {hf: torch.from_numpy(t) for hf, t in state.items()}
    back.update({hf: t for hf, t in state.items() if hf in unconverted(cfg, state)})
    assert sorted(back) == sorted(state), f"{name}: F32 twin tensors {sorted(back)} != {sorted(state)}"
    worst = 0.0
    for hf, t in back.items():
        d = float((t - state[hf].to(torch.float32)).abs().max())
        inexact = (cfg["model_type"] in NORM_PLUS_ONE | QWEN_GDN and hf.endswith("norm.weight")) or hf.endswith(".A_log") or (
            cfg["model_type"] in FALCON_H1 and falcon_h1_scale(cfg, hf) is not None) or (
            cfg["model_type"] == "plamo2" and plamo2_offset(hf) is not None)
        assert d == 0.0 or inexact, f"{name}: F32 twin changes {hf} by {d}"
        worst = max(worst, d)
    print(f"  model.f32.gguf  {os.path.getsize(f32):8d}  {sha256(f32)}  (max |w - safetensors| {worst:g}: (1 + w) - 1, (w + c) - c, log(-(-exp(A_log))) in f32)")

    q8 = os.path.join(folder, "model.q8_0.gguf")
    counts = {t: list(types.values()).count(t) for t in sorted(set(types.values()))}
    print(f"  model.q8_0.gguf {os.path.getsize(q8):8d}  {sha256(q8)}  {counts}")

    # The fixture's own oracle model (gen_fixtures.load_oracle_model: for a
    # family transformers lacks, its stand-in class and hooks).
    spec = next(s for s in gen_fixtures.FIXTURES if s["name"] == name)
    back = {hf: torch.from_numpy(np.ascontiguousarray(t)) for hf, t in read_back(q8, cfg, names, shapes).items()}
    back.update({hf: t for hf, t in state.items() if hf in unconverted(cfg, state)})
    if spec.get("mlx_module"):  # a model type transformers lacks: mlx-lm's model file, as for oracle.json
        mlx_q8_oracle(name, spec, folder, cfg, back, fixture_oracle, q8, types)
        return
    model = gen_fixtures.load_oracle_model(spec, folder)
    params = model.state_dict()
    if set(back) - set(params) or any(t.shape != params[hf].shape for hf, t in back.items() if hf in params):
        # Checkpoint names transformers renames on load (EXAONE's GPT-2-style
        # names), or layouts it converts (Qwen3-VL-MoE's published experts,
        # transposed): load the dequantized tensors through from_pretrained.
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(os.path.join(folder, "config.json"), tmp)
            save_torch_file(back, os.path.join(tmp, "model.safetensors"), metadata={"format": "pt"})
            model = gen_fixtures.load_oracle_model(spec, tmp)
        for hf, t in back.items():
            if EXPERT.match(hf):  # fused into [experts, ...] parameters on load
                continue
            loaded = model.state_dict().values()
            assert any(torch.equal(t, p) or (t.dim() == 3 and torch.equal(t.transpose(1, 2), p)) for p in loaded), f"{name}: {hf} not loaded"
    else:
        missing, unexpected = model.load_state_dict(back, strict=False)
        assert not unexpected and set(missing) <= ({"lm_head.weight"} if cfg.get("tie_word_embeddings") else set()), (missing, unexpected)
    # The fixture's prompts, unless the Q8_0 model nearly ties somewhere on
    # their greedy path: then the next prompt seeds, same lengths.
    eos = model.config.get_text_config().eos_token_id
    prompts, seed = fixture_oracle["prompts"], None
    lengths = [len(p) for p in prompts]
    for attempt in range(MAX_PROMPT_SEEDS):
        try:
            tokens, first_logits, margins, _, _ = gen_fixtures.greedy_oracle(name + " q8_0", model, prompts, eos)
        except AssertionError as e:  # EOS or a degenerate path: as a near-tie, the next seed
            print(f"  {e}")
            margins = [0.0]
        min_margin = min(margins)
        print(f"  min top1-top2 margin over all greedy steps: {min_margin:.6g}")
        if min_margin >= gen_fixtures.MIN_TOP2_MARGIN:
            break
        seed = fixture_oracle["prompt_seed"] + 1 + attempt
        if attempt == MAX_PROMPT_SEEDS // 4 and 1 in lengths:
            # A one-token prompt is BOS whatever the seed: a near-tie on its
            # path never goes away; from here on it gets a second token.
            lengths = [max(2, n) for n in lengths]
            print(f"  one-token prompt: now {lengths}")
        prompts = gen_fixtures.make_prompts(seed, text_config(cfg)["vocab_size"], text_config(cfg)["bos_token_id"], lengths)
        print(f"  near-tie: prompts from seed {seed}")
    else:
        raise AssertionError(f"{name}: Q8_0 near-tie in the greedy path for {MAX_PROMPT_SEEDS} prompt seeds")
    oracle = {
        "gguf_file": "model.q8_0.gguf",
        "gguf_sha256": sha256(q8),
        "tensor_types": types,
        "dequantized_by": f"gguf {GGUF_VERSION} gguf.quants.dequantize, then the transforms undone",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "model_class": type(model).__name__,
        "attn_implementation": "eager",
        "dtype": "float32",
        "eos_token_id": eos,
        "max_new_tokens": gen_fixtures.MAX_NEW_TOKENS,
        "prompt_seed": seed if seed is not None else fixture_oracle["prompt_seed"],
        "prompts": prompts,
        "tokens": tokens,
        "min_top2_margin": min_margin,
        "same_tokens_as_safetensors": seed is None and tokens == fixture_oracle["tokens"],
        "first_logits": first_logits,
    }
    with open(os.path.join(folder, "oracle.q8_0.json"), "w") as f:
        f.write(gen_fixtures.dump_json(oracle))
    print(f"  oracle.q8_0.json: tokens {'equal' if oracle['same_tokens_as_safetensors'] else 'differ from'} the safetensors oracle's")


def short_float32(x):
    """A float32 value as the float whose repr is the float32's shortest
    decimal (numpy's): about half the digits of the float64 repr, and still
    the same float32 when parsed and rounded (checked), which is how
    golden_test.go compares logits. Used for the mlx oracles' Q8_0 logits,
    which the tracked tree's size limit makes count."""
    v = float(str(np.float32(x)))
    assert np.float32(v) == np.float32(x), (x, v)
    return v


def mlx_q8_oracle(name, spec, folder, cfg, back, fixture_oracle, q8, types):
    """oracle.q8_0.json of an mlx_module fixture: mlx_oracle.py's greedy
    oracle (mlx-lm's model file, float32, CPU) on the Q8_0 twin's
    dequantized values, saved in a scratch folder with the fixture's
    config.json; keys as build's, the oracle named as in oracle.json."""
    import mlx.core as mx
    import mlx_oracle

    mx.set_default_device(mx.cpu)
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(os.path.join(folder, "config.json"), tmp)
        save_torch_file({hf: t.contiguous() for hf, t in sorted(back.items())}, os.path.join(tmp, "model.safetensors"),
                        metadata={"format": "pt"})
        model = mlx_oracle.load_fp32(tmp, spec["mlx_module"], unrename=spec.get("unrename", ()))
    eos, prompts = fixture_oracle["eos_token_id"], fixture_oracle["prompts"]  # (Qwen's is in generation_config.json)
    tokens, first_logits, margins, _ = mlx_oracle.greedy(name + " q8_0", model, prompts, eos)
    first_logits = [[short_float32(x) for x in row] for row in first_logits]
    min_margin = min(margins)
    print(f"  min top1-top2 margin over all greedy steps: {min_margin:.6g}")
    assert min_margin >= gen_fixtures.MIN_TOP2_MARGIN, f"{name}: Q8_0 near-tie in the greedy path (give it build's prompt-seed retries)"
    oracle = {
        "gguf_file": "model.q8_0.gguf",
        "gguf_sha256": sha256(q8),
        "tensor_types": types,
        "dequantized_by": f"gguf {GGUF_VERSION} gguf.quants.dequantize, then the transforms undone",
        "oracle": mlx_oracle.oracle_name(spec["mlx_module"]),
        "model_class": f"mlx_lm.models.{spec['mlx_module']}.Model",
        "device": "cpu",
        "dtype": "float32",
        "eos_token_id": eos,
        "max_new_tokens": gen_fixtures.MAX_NEW_TOKENS,
        "prompt_seed": fixture_oracle["prompt_seed"],
        "prompts": prompts,
        "tokens": tokens,
        "min_top2_margin": min_margin,
        "same_tokens_as_safetensors": tokens == fixture_oracle["tokens"],
        "first_logits": first_logits,
    }
    with open(os.path.join(folder, "oracle.q8_0.json"), "w") as f:
        f.write(gen_fixtures.dump_json(oracle))
    print(f"  oracle.q8_0.json: tokens {'equal' if oracle['same_tokens_as_safetensors'] else 'differ from'} the safetensors oracle's")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", action="append", help="fixture name (repeatable)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    gguf_convert.torch_randn = torch_randn
    gguf_convert.torch_neg_exp = lambda a: (-torch.exp(torch.from_numpy(a))).numpy()
    torch.use_deterministic_algorithms(True)
    transformers.logging.set_verbosity_error()
    folders = twin_folders(args.only)
    manifest = read_manifest()
    for folder in folders:
        build(folder)
        for twin in TWINS:
            path = os.path.join(folder, twin)
            manifest[os.path.relpath(path, TESTDATA)] = sha256(path)
        write_manifest(manifest)


if __name__ == "__main__":
    sys.exit(main())
