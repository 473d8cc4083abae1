"""Peer for scripts/bench.sh: Hugging Face transformers, CPU, fp32, on the
same GGUF and chat prompt that archc runs. Prints one JSON object with the
fields `infer generate --json` prints (prompt_tokens, tokens,
time_to_first_token_s, prefill_tokens_per_s, decode_tokens_per_s) plus
load_s and peak_rss_mib.

Usage: python scripts/bench_hf.py MODEL.gguf "prompt" MAX_TOKENS
"""
import json
import os
import resource
import sys
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def main():
    path, prompt, max_tokens = sys.argv[1], sys.argv[2], int(sys.argv[3])
    folder, name = os.path.split(os.path.abspath(path))
    t0 = time.perf_counter()
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32, attn_implementation="eager")
    model.eval()
    load_s = time.perf_counter() - t0
    ids = tok.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True, return_tensors="pt")
    if isinstance(ids, dict) or hasattr(ids, "input_ids"):
        ids = ids["input_ids"]
    eos = model.generation_config.eos_token_id
    eos = set(eos if isinstance(eos, list) else [eos])
    with torch.inference_mode():
        t1 = time.perf_counter()
        out = model(ids, use_cache=True)
        prefill_s = time.perf_counter() - t1
        past, logits = out.past_key_values, out.logits[:, -1]
        tokens = []
        t2 = time.perf_counter()
        while True:
            nxt = int(torch.argmax(logits, dim=-1))
            tokens.append(nxt)
            if len(tokens) == max_tokens or nxt in eos:
                break
            out = model(torch.tensor([[nxt]]), past_key_values=past, use_cache=True)
            past, logits = out.past_key_values, out.logits[:, -1]
        decode_s = time.perf_counter() - t2
    print(json.dumps({
        "peer": "transformers-fp32",
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
