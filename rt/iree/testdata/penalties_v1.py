# The reference for TestPenaltiesMatchFullContext: archc's protocol-1
# sampling (worker.py before protocol 2), which recomputed every penalty
# from the whole context sent with each step. Kept verbatim from that
# version (penalize, dry_penalty, warp_row, softmax, draw) so the
# per-sequence state of protocol 2 is checked against it token by token.
#
# stdin: {"cases": [{"row": options as protocol 1's sampling row,
#                    "prompt": [ids], "steps": [{"logits": [...], "u": u}]}]}
# stdout: [[chosen ids of case 0], ...], each chosen token appended to the
# context (as generated) before the next step.

import json
import sys

import numpy as np


def penalize(logits, row):
    """Scores [vocab] f64 after the row's penalties, in this order, over
    row["context"] (the sequence so far, prompt then generated; its last
    row["generated"] tokens were generated):
    repetition_penalty as transformers' RepetitionPenaltyLogitsProcessor
    (each token present anywhere in the context: divided when positive,
    multiplied when negative); frequency_penalty and presence_penalty as
    OpenAI defines them (minus count x frequency, minus presence once,
    over the generated tokens only); DRY (p-e-w's reference, as
    text-generation-webui's DRYLogitsProcessor: for each token t that
    followed an earlier occurrence of the context's last token, the length
    n of the longest context suffix repeated just before that occurrence,
    stopping at sequence breakers and looking back at most dry_range
    tokens (0: all); if n >= dry_allowed_length, t loses dry_multiplier x
    dry_base ^ (n - dry_allowed_length)). Returns the logits themselves
    when the row has no penalty."""
    rep = float(row.get("repetition_penalty") or 1)
    freq = float(row.get("frequency_penalty") or 0)
    pres = float(row.get("presence_penalty") or 0)
    dry = float(row.get("dry_multiplier") or 0)
    if rep == 1 and freq == 0 and pres == 0 and dry == 0:
        return logits
    ctx = np.asarray(row.get("context") or [], dtype=np.int64)
    scores = logits.astype(np.float64)
    if rep != 1 and len(ctx):
        seen = np.unique(ctx)
        s = scores[seen]
        scores[seen] = np.where(s > 0, s / rep, s * rep)
    gen = int(row.get("generated") or 0)
    if (freq or pres) and gen > 0:
        toks, counts = np.unique(ctx[len(ctx) - gen:], return_counts=True)
        scores[toks] -= counts * freq + pres
    if dry:
        dry_penalty(scores, ctx, row)
    return scores


def dry_penalty(scores, ctx, row):
    base = float(row.get("dry_base") or 1.75)
    allowed = int(row.get("dry_allowed_length") or 2)
    last_n = int(row.get("dry_range") or 0)
    breakers = set(int(t) for t in row.get("dry_breakers") or [])
    if last_n > 0:
        ctx = ctx[-last_n:]
    n = len(ctx)
    if n < 2 or int(ctx[-1]) in breakers:
        return
    best = {}
    for i in np.flatnonzero(ctx[:-1] == ctx[-1]):
        nxt = int(ctx[i + 1])
        if nxt in breakers:
            continue
        length = 1
        while True:
            j = i - length
            if j < 0 or ctx[j] != ctx[n - 1 - length] or int(ctx[j]) in breakers:
                break
            length += 1
        best[nxt] = max(best.get(nxt, 0), length)
    mult = float(row["dry_multiplier"])
    for tok, length in best.items():
        if length >= allowed:
            scores[tok] -= mult * base ** (length - allowed)


def warp_row(logits, row):
    """Probabilities [vocab] f64 after Hugging Face generate's warpers, in
    its order (transformers generation/logits_process.py):
    TemperatureLogitsWarper, TopKLogitsWarper (keep scores >= the k-th
    largest), TopPLogitsWarper (sort ascending, drop the prefix whose
    cumulative probability is <= 1 - top_p, always keep the top token),
    MinPLogitsWarper (drop probability < min_p x the top probability),
    then softmax."""
    scores = logits.astype(np.float64) / row["temperature"]
    n = scores.shape[0]
    k = int(row.get("top_k") or 0)
    if 0 < k < n:
        kth = np.partition(scores, n - k)[n - k]
        scores[scores < kth] = -np.inf
    p = float(row.get("top_p") or 0)
    if 0 < p < 1:
        order = np.argsort(scores, kind="stable")
        cum = np.cumsum(softmax(scores)[order])
        drop = cum <= 1 - p
        drop[-1] = False
        scores[order[drop]] = -np.inf
    m = float(row.get("min_p") or 0)
    if m > 0:
        probs = softmax(scores)
        scores[probs < m * probs.max()] = -np.inf
    return softmax(scores)


def softmax(x):
    e = np.exp(x - x.max())
    return e / e.sum()


def draw(probs, u):
    """The token whose cumulative-probability interval holds u (inverse
    CDF over probs in index order); never a token of probability 0."""
    # The first i with cum[i] > u has probs[i] > 0; past the end (u above
    # the rounded total) the last possible token is taken.
    i = int(np.searchsorted(np.cumsum(probs), u, side="right"))
    if i >= len(probs):
        i = int(np.flatnonzero(probs)[-1])
    return i


def run(case):
    ctx = list(case["prompt"] or [])
    out = []
    for gen, step in enumerate(case["steps"]):
        x = np.asarray(step["logits"], dtype=np.float32)
        row = dict(case["row"], context=ctx, generated=gen, u=step["u"])
        scores = penalize(x, row)
        if row.get("temperature", 0) > 0:
            tok = draw(warp_row(scores, row), row["u"])
        else:
            tok = int(np.argmax(scores))
        out.append(tok)
        ctx = ctx + [tok]
    return out


if __name__ == "__main__":
    print(json.dumps([run(c) for c in json.load(sys.stdin)["cases"]]))
