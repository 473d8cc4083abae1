"""Peer for scripts/bench.sh: Hugging Face transformers, CPU, fp32, eager
attention, on the same GGUF file (dequantized to f32 by transformers) and the
same prompt token ids that archc runs, greedy.

The prompt is one forward pass (last-position logits only, as generate()
does), timed as prefill; each new token is the
argmax of the last logits (lowest id on ties, as archc) and is fed back with
the KV cache one token at a time, timed as decode. Prints one JSON object with
the fields `infer generate --json` prints (prompt_tokens, tokens, load_s,
time_to_first_token_s, prefill_tokens_per_s, decode_tokens_per_s) plus
peak_rss_mib (ru_maxrss of this process).

Usage:
  python scripts/bench_hf.py MODEL.gguf --prompt-ids 1,2,3
         [--max-tokens 64] [--threads 2] [--ignore-eos]
  python scripts/bench_hf.py MODEL.gguf --prompt "text"     # chat template, as before

--ignore-eos generates exactly --max-tokens tokens (bench.sh gives every
engine the number of tokens archc generated, so all run the same number of
decode steps); without it generation also stops after an EOS token
(generation_config.eos_token_id).
"""
import argparse
import json
import os
import resource
import sys
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def parse_ids(s):
    try:
        ids = [int(x) for x in s.split(",") if x.strip()]
    except ValueError:
        sys.exit(f"bench_hf.py: --prompt-ids {s!r}: want comma-separated token ids")
    if not ids:
        sys.exit("bench_hf.py: --prompt-ids: no token ids given")
    return ids


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="GGUF file")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--prompt-ids", help="prompt token ids, comma-separated")
    g.add_argument("--prompt", help="prompt text, wrapped as a user turn with the chat template")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2, help="torch intra-op threads")
    ap.add_argument("--ignore-eos", action="store_true", help="generate exactly --max-tokens tokens")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)

    folder, name = os.path.split(os.path.abspath(a.model))
    t0 = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    load_s = time.perf_counter() - t0
    if a.prompt_ids is not None:
        ids = torch.tensor([parse_ids(a.prompt_ids)])
    else:
        tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        ids = tok.apply_chat_template([{"role": "user", "content": a.prompt}], add_generation_prompt=True, return_tensors="pt")
        if isinstance(ids, dict) or hasattr(ids, "input_ids"):
            ids = ids["input_ids"]
    eos = model.generation_config.eos_token_id
    eos = set(eos if isinstance(eos, list) else [eos])
    with torch.inference_mode():
        t1 = time.perf_counter()
        # logits_to_keep=1: only the last position's logits, as generate() does.
        out = model(ids, use_cache=True, logits_to_keep=1)
        cache, logits = out.cache, out.logits[:, -1]
        nxt = int(torch.argmax(logits, dim=-1))
        prefill_s = time.perf_counter() - t1
        tokens = [nxt]
        t2 = time.perf_counter()
        while len(tokens) < a.max_tokens and (a.ignore_eos or nxt not in eos):
            out = model(torch.tensor([[nxt]]), cache=cache, use_cache=True)
            cache, logits = out.cache, out.logits[:, -1]
            nxt = int(torch.argmax(logits, dim=-1))
            tokens.append(nxt)
        decode_s = time.perf_counter() - t2
    print(json.dumps({
        "peer": "transformers-fp32-eager",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "prompt_tokens": ids[0].tolist(),
        "tokens": tokens,
        "load_s": load_s,
        "time_to_first_token_s": prefill_s,
        "prefill_tokens_per_s": ids.shape[1] / prefill_s,
        "decode_tokens_per_s": (len(tokens) - 1) / decode_s if len(tokens) > 1 else 0,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


if __name__ == "__main__":
    main()
