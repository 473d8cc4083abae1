"""Peer for scripts/bench_spec.sh: llama.cpp's prompt-lookup decoding as
llama-cpp-python ships it (llama_cpp.llama_speculative.LlamaPromptLookupDecoding
as the Llama object's draft_model, driven by Llama.generate), on the same
GGUF file and prompt token ids that archc runs, greedy (temp 0: llama.cpp's
greedy sampler; no penalties).

llama-cpp-python turns logits_all on for a draft model (every evaluated
position's logits are computed and copied into Llama.scores), so the
prompt's evaluation is slower than bench_llamacpp.py's; that is part of
what this peer costs and is reported as its time to first token. Each
generate step evaluates the last token plus the draft (at most
--num-pred-tokens tokens that followed the earliest earlier occurrence of
the sequence's last --max-ngram-size..1 tokens) in one llama_decode and
keeps the draft tokens up to the first that differs from the model's
choice.

Prints one JSON object with the fields of bench_llamacpp.py (prompt_tokens,
tokens, load_s, time_to_first_token_s, prefill_tokens_per_s,
decode_tokens_per_s, peak_rss_mib) plus archc's speculation counters:
spec_drafts (steps run with a non-empty draft), spec_draft_tokens (tokens
drafted) and spec_accepted_tokens (drafted tokens equal to the tokens
generated at their positions, counted up to the first difference; a draft
reaching past the last generated token is counted as drafted in full).

Usage:
  python scripts/bench_llamacpp_lookup.py MODEL.gguf --prompt-ids 1,2,3
         [--max-tokens 64] [--threads 2] [--n-ctx 4096]
         [--num-pred-tokens 8] [--max-ngram-size 2]

Always generates exactly --max-tokens tokens (Llama.generate does not stop
at an end token; bench_spec.sh gives it the number archc generated).
"""
import argparse
import json
import resource
import sys
import time

import llama_cpp
from llama_cpp import Llama
from llama_cpp.llama_speculative import LlamaPromptLookupDecoding


class CountingLookup(LlamaPromptLookupDecoding):
    """LlamaPromptLookupDecoding that records each draft and the position of
    its first token."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.drafts = []  # (position of the draft's first token, draft ids)

    def __call__(self, input_ids, /, **kwargs):
        d = super().__call__(input_ids, **kwargs)
        if len(d):
            self.drafts.append((int(input_ids.shape[0]), [int(x) for x in d]))
        return d


def parse_ids(s):
    try:
        ids = [int(x) for x in s.split(",") if x.strip()]
    except ValueError:
        sys.exit(f"bench_llamacpp_lookup.py: --prompt-ids {s!r}: want comma-separated token ids")
    if not ids:
        sys.exit("bench_llamacpp_lookup.py: --prompt-ids: no token ids given")
    return ids


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="GGUF file")
    ap.add_argument("--prompt-ids", required=True, help="prompt token ids, comma-separated")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-ctx", type=int, default=4096, help="context (KV cache) capacity in tokens")
    ap.add_argument("--n-batch", type=int, default=512)
    ap.add_argument("--num-pred-tokens", type=int, default=8, help="draft length at most")
    ap.add_argument("--max-ngram-size", type=int, default=2, help="longest n-gram looked up (LlamaPromptLookupDecoding's default: 2)")
    a = ap.parse_args()
    ids = parse_ids(a.prompt_ids)
    if a.max_tokens < 1:
        sys.exit("bench_llamacpp_lookup.py: --max-tokens: want 1 or more")
    if len(ids) + a.max_tokens + a.num_pred_tokens > a.n_ctx:
        sys.exit(f"bench_llamacpp_lookup.py: {len(ids)} prompt + {a.max_tokens} new + {a.num_pred_tokens} draft tokens do not fit --n-ctx {a.n_ctx}")

    draft = CountingLookup(max_ngram_size=a.max_ngram_size, num_pred_tokens=a.num_pred_tokens)
    t0 = time.perf_counter()
    llm = Llama(
        model_path=a.model, n_ctx=a.n_ctx, n_batch=a.n_batch, n_ubatch=a.n_batch,
        n_threads=a.threads, n_threads_batch=a.threads, draft_model=draft, verbose=False,
        # A draft model turns logits_all on, but Llama sizes its scores array by
        # the logits_all argument: without it a prompt longer than n_batch
        # fails (ValueError: could not broadcast ... into shape (0,)).
        logits_all=True,
    )
    load_s = time.perf_counter() - t0

    gen = llm.generate(ids, temp=0.0, top_k=1, top_p=1.0, min_p=0.0, repeat_penalty=1.0, reset=True)
    t1 = time.perf_counter()
    tokens = [next(gen)]
    prefill_s = time.perf_counter() - t1
    t2 = time.perf_counter()
    while len(tokens) < a.max_tokens:
        tokens.append(next(gen))
    decode_s = time.perf_counter() - t2
    gen.close()

    seq = ids + tokens
    drafted = accepted = 0
    for pos, d in draft.drafts:
        drafted += len(d)
        for i, t in enumerate(d):
            if pos + i >= len(seq) or seq[pos + i] != t:
                break
            accepted += 1
    print(json.dumps({
        "peer": "llama.cpp prompt lookup",
        "llama_cpp_python": llama_cpp.__version__,
        "system_info": llama_cpp.llama_print_system_info().decode(errors="replace").strip(),
        "threads": a.threads,
        "n_ctx": a.n_ctx,
        "num_pred_tokens": a.num_pred_tokens,
        "max_ngram_size": a.max_ngram_size,
        "prompt_tokens": ids,
        "tokens": tokens,
        "load_s": load_s,
        "time_to_first_token_s": prefill_s,
        "prefill_tokens_per_s": len(ids) / prefill_s,
        "decode_tokens_per_s": (len(tokens) - 1) / decode_s if len(tokens) > 1 else 0,
        "spec_drafts": len(draft.drafts),
        "spec_draft_tokens": drafted,
        "spec_accepted_tokens": accepted,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


if __name__ == "__main__":
    main()
