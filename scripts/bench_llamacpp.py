"""Peer for scripts/bench.sh: llama.cpp (through llama-cpp-python, CPU) on the
same GGUF file and the same prompt token ids that archc runs, greedy.

The prompt is evaluated in one llama_decode call per n_batch (512) tokens,
timed as prefill; each new token is the argmax of the last logits (lowest id
on ties, as archc and torch.argmax) and is fed back one token at a time, timed
as decode. Prints one JSON object with the fields `infer generate --json`
prints (prompt_tokens, tokens, load_s, time_to_first_token_s,
prefill_tokens_per_s, decode_tokens_per_s) plus peak_rss_mib (ru_maxrss of
this process: the mmapped GGUF pages it touched count too).

Usage:
  python scripts/bench_llamacpp.py MODEL.gguf --prompt-ids 1,2,3
         [--max-tokens 64] [--threads 2] [--n-ctx 1024] [--ignore-eos]

--ignore-eos generates exactly --max-tokens tokens (bench.sh gives every
engine the number of tokens archc generated, so all run the same number of
decode steps); without it generation also stops after an end-of-generation
token.
"""
import argparse
import json
import resource
import sys
import time

import numpy as np

import llama_cpp
from llama_cpp import Llama


def parse_ids(s):
    try:
        ids = [int(x) for x in s.split(",") if x.strip()]
    except ValueError:
        sys.exit(f"bench_llamacpp.py: --prompt-ids {s!r}: want comma-separated token ids")
    if not ids:
        sys.exit("bench_llamacpp.py: --prompt-ids: no token ids given")
    return ids


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="GGUF file")
    ap.add_argument("--prompt-ids", required=True, help="prompt token ids, comma-separated")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-ctx", type=int, default=1024, help="context (KV cache) capacity in tokens")
    ap.add_argument("--n-batch", type=int, default=512)
    ap.add_argument("--ignore-eos", action="store_true", help="generate exactly --max-tokens tokens")
    a = ap.parse_args()
    ids = parse_ids(a.prompt_ids)
    if len(ids) + a.max_tokens > a.n_ctx:
        sys.exit(f"bench_llamacpp.py: {len(ids)} prompt + {a.max_tokens} new tokens do not fit --n-ctx {a.n_ctx}")

    t0 = time.perf_counter()
    llm = Llama(
        model_path=a.model, n_ctx=a.n_ctx, n_batch=a.n_batch, n_ubatch=a.n_batch,
        n_threads=a.threads, n_threads_batch=a.threads, logits_all=False, verbose=False,
    )
    load_s = time.perf_counter() - t0
    n_vocab = llm.n_vocab()
    vocab = llm._model.vocab

    def next_token():
        # Logits of the last evaluated token (logits_all=False keeps only those).
        logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(n_vocab,))
        return int(np.argmax(logits))

    t1 = time.perf_counter()
    llm.eval(ids)
    tok = next_token()
    prefill_s = time.perf_counter() - t1
    tokens = [tok]
    t2 = time.perf_counter()
    while len(tokens) < a.max_tokens and (a.ignore_eos or not llama_cpp.llama_vocab_is_eog(vocab, tok)):
        llm.eval([tok])
        tok = next_token()
        tokens.append(tok)
    decode_s = time.perf_counter() - t2
    print(json.dumps({
        "peer": "llama.cpp",
        "llama_cpp_python": llama_cpp.__version__,
        "system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip(),
        "threads": a.threads,
        "n_ctx": a.n_ctx,
        "prompt_tokens": ids,
        "tokens": tokens,
        "load_s": load_s,
        "time_to_first_token_s": prefill_s,
        "prefill_tokens_per_s": len(ids) / prefill_s,
        "decode_tokens_per_s": (len(tokens) - 1) / decode_s if len(tokens) > 1 else 0,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


if __name__ == "__main__":
    main()
