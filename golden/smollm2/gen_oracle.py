#!/usr/bin/env python3
"""HF fp32 oracle for a real GGUF checkpoint (DESIGN.md §7, real-checkpoint tier).

Loads the GGUF with transformers' GGUF loader (which dequantizes every tensor
to fp32 with gguf-py), runs greedy generation with eager attention, and writes
oracle.json next to this script (or --out). Run by hand; CI only reads the
JSON. Never commit the model.

    /path/to/venv/bin/python golden/smollm2/gen_oracle.py \
        [--gguf .cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf]

Needs (besides golden/requirements-oracle.txt): gguf==0.19.0.

oracle.json keys:
  transformers_version, torch_version, gguf_version, gguf_file (base name),
  gguf_size (bytes), attn_implementation ("eager"), dtype ("float32"),
  config            transformers' config for the GGUF (PretrainedConfig.to_dict()).
  chat_template     "gguf" (the template in the GGUF metadata, applied with
                    add_generation_prompt=True) or the name of a hand-written
                    format when the GGUF has none (see --chat).
  messages          one chat (list of {"role","content"}) per prompt.
  prompt_texts      the rendered prompts.
  prompts           their token ids (what generation starts from).
  eos_token_id      the id(s) generation stops on (HF EOS handling: the EOS
                    token is emitted, then generation stops).
  max_new_tokens    32.
  tokens            generated ids only, one list per prompt (<= 32; ends with
                    an EOS id when generation stopped early).
  first_logits_top  per prompt, the top 20 of the logits at the last prompt
                    position (the step that produced tokens[i][0]):
                    {"ids": [...], "logits": [...]} (float32 values written as
                    the shortest repr that round-trips).
  step_top2_margin  per prompt, top1 - top2 raw logit gap at every greedy step
                    (small gaps mark steps where tiny numeric drift may flip).
  weights           per HF tensor name of model.state_dict() (lm_head.weight
                    omitted when tied): {"shape", "sha256" (of the float32
                    little-endian row-major bytes), "sum", "sum_abs" (float64
                    sums)}. A bit-exact dequantizer reproduces every sha256.
"""
import argparse
import hashlib
import json
import os
import sys

import numpy as np
import torch

DEFAULT_MESSAGES = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "user", "content": "Write a haiku about compilers."}],
    [{"role": "user", "content": "Explain KV caching in one sentence."}],
]


def f32(x):
    # shortest repr that round-trips through float32
    return float(np.format_float_positional(np.float32(x), unique=True, trim="-")) if np.isfinite(x) else None


def render_gemma(messages):
    # Gemma 2/3 chat format (the GGUF carries no template): <bos> then
    # <start_of_turn>{user|model}\n{content}<end_of_turn>\n per turn, then the
    # generation prompt. System messages are prepended to the first user turn.
    out, system = "<bos>", ""
    for m in messages:
        if m["role"] == "system":
            system = m["content"] + "\n\n"
            continue
        role = "model" if m["role"] == "assistant" else m["role"]
        out += f"<start_of_turn>{role}\n{system}{m['content']}<end_of_turn>\n"
        system = ""
    return out + "<start_of_turn>model\n"


def main(argv=None, defaults=None):
    defaults = defaults or {}
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", default=defaults.get("gguf", os.path.join(root, ".cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf")))
    ap.add_argument("--out", default=defaults.get("out", os.path.join(here, "oracle.json")))
    ap.add_argument("--chat", default=defaults.get("chat", "gguf"), choices=["gguf", "gemma"])
    ap.add_argument("--eos", default=defaults.get("eos", ""), help="comma-separated EOS ids overriding the config's")
    ap.add_argument("--max-new-tokens", type=int, default=32)
    args = ap.parse_args(argv)

    import gguf
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    d, name = os.path.dirname(os.path.abspath(args.gguf)), os.path.basename(args.gguf)
    tok = AutoTokenizer.from_pretrained(d, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=name, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    cfg = model.config

    eos = [int(x) for x in args.eos.split(",") if x] or cfg.eos_token_id
    if isinstance(eos, int):
        eos = [eos]

    prompt_texts, prompts, tokens, tops, margins = [], [], [], [], []
    for msgs in DEFAULT_MESSAGES:
        if args.chat == "gguf":
            text = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
        else:
            text = render_gemma(msgs)
        ids = tok(text, add_special_tokens=False)["input_ids"]
        prompt_texts.append(text)
        prompts.append([int(i) for i in ids])
        inp = torch.tensor([ids], dtype=torch.long)
        with torch.no_grad():
            out = model.generate(
                inp,
                attention_mask=torch.ones_like(inp),
                do_sample=False,
                max_new_tokens=args.max_new_tokens,
                eos_token_id=eos,
                pad_token_id=eos[0],
                output_logits=True,
                return_dict_in_generate=True,
                temperature=None,
                top_p=None,
                top_k=None,
            )
        new = out.sequences[0, len(ids):].tolist()
        tokens.append([int(t) for t in new])
        first = out.logits[0][0].float()
        v, i = torch.topk(first, 20)
        tops.append({"ids": [int(x) for x in i], "logits": [f32(x) for x in v.tolist()]})
        m = []
        for step in out.logits:
            t2 = torch.topk(step[0].float(), 2).values.tolist()
            m.append(f32(t2[0] - t2[1]))
        margins.append(m)
        print(repr(text), "->", repr(tok.decode(new)), file=sys.stderr)

    wts = {}
    sd = model.state_dict()
    for k in sorted(sd):
        if k == "lm_head.weight" and getattr(cfg, "tie_word_embeddings", False):
            continue
        a = sd[k].detach().to(torch.float32).contiguous().numpy()
        wts[k] = {
            "shape": list(a.shape),
            "sha256": hashlib.sha256(a.astype("<f4").tobytes()).hexdigest(),
            "sum": float(a.astype(np.float64).sum()),
            "sum_abs": float(np.abs(a.astype(np.float64)).sum()),
        }

    doc = {
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "gguf_version": getattr(gguf, "__version__", None) or __import__("importlib.metadata").metadata.version("gguf"),
        "gguf_file": name,
        "gguf_size": os.path.getsize(args.gguf),
        "attn_implementation": "eager",
        "dtype": "float32",
        "config": json.loads(cfg.to_json_string(use_diff=False)),
        "chat_template": args.chat,
        "messages": DEFAULT_MESSAGES,
        "prompt_texts": prompt_texts,
        "prompts": prompts,
        "eos_token_id": eos,
        "max_new_tokens": args.max_new_tokens,
        "tokens": tokens,
        "first_logits_top": tops,
        "step_top2_margin": margins,
        "weights": wts,
    }
    with open(args.out, "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
        fh.write("\n")
    print("wrote", args.out, file=sys.stderr)


if __name__ == "__main__":
    main()
