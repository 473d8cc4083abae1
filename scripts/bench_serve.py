#!/usr/bin/env python3
"""Load benchmark for an OpenAI-compatible server (archc's `infer serve`,
llama-cpp-python's server, ...): for each concurrency level C, C clients
stream completions back to back for SECONDS seconds (greedy, a fixed
~PROMPT-token prompt, MAX_TOKENS new tokens each), and the script prints
aggregate generated tokens/s and time to first token p50/p95.

Usage: bench_serve.py URL [--levels 1,2,4,8] [--seconds 30] [--max-tokens 64]
                          [--model NAME] [--api-key KEY] [--json OUT]
Standard library only.
"""
import argparse
import json
import statistics
import threading
import time
import urllib.request

PROMPT = ("The history of the printing press begins in the fifteenth century, when "
          "a goldsmith in Mainz combined movable metal type, oil-based ink and a "
          "wooden screw press into a system that could produce books far faster "
          "than scribes. Within fifty years presses had spread across Europe, and ")


def stream_once(url, body, key):
    """Streams one completion; returns (ttft seconds, tokens, total seconds)."""
    req = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", "Authorization": "Bearer " + key})
    t0 = time.perf_counter()
    ttft, chunks = None, 0
    with urllib.request.urlopen(req, timeout=600) as resp:
        for raw in resp:
            line = raw.decode().strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            chunk = json.loads(data)
            for c in chunk.get("choices", []):
                if c.get("text"):
                    chunks += 1
                    if ttft is None:
                        ttft = time.perf_counter() - t0
            if chunk.get("usage"):
                chunks = chunk["usage"]["completion_tokens"]
    return ttft if ttft is not None else time.perf_counter() - t0, chunks, time.perf_counter() - t0


def level(url, c, seconds, body, key):
    ttfts, tokens = [], [0]
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def client():
        while time.perf_counter() < stop:
            ttft, n, _ = stream_once(url, body, key)
            with lock:
                ttfts.append(ttft)
                tokens[0] += n

    t0 = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(c)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    q = statistics.quantiles(ttfts, n=20) if len(ttfts) >= 2 else [ttfts[0]] * 19
    return {"concurrency": c, "requests": len(ttfts), "tokens": tokens[0], "seconds": wall,
            "tokens_per_s": tokens[0] / wall, "ttft_p50_s": statistics.median(ttfts), "ttft_p95_s": q[18]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url")
    ap.add_argument("--levels", default="1,2,4,8")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--model", default="model")
    ap.add_argument("--api-key", default="none")
    ap.add_argument("--json")
    a = ap.parse_args()
    body = {"model": a.model, "prompt": PROMPT, "max_tokens": a.max_tokens, "temperature": 0, "stream": True,
            "stream_options": {"include_usage": True}}
    stream_once(a.url, body, a.api_key)  # warm-up
    rows = []
    print(f"{'clients':>7} {'requests':>8} {'tokens/s':>9} {'TTFT p50':>9} {'TTFT p95':>9}")
    for c in [int(x) for x in a.levels.split(",")]:
        r = level(a.url, c, a.seconds, body, a.api_key)
        rows.append(r)
        print(f"{c:7d} {r['requests']:8d} {r['tokens_per_s']:9.1f} {r['ttft_p50_s']:8.3f}s {r['ttft_p95_s']:8.3f}s", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
