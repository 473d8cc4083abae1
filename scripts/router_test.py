"""Two `infer serve` replicas behind sglang-router or vllm-router (PyPI) on loopback.

Run by scripts/router-test.sh, which builds bin/infer and the venv:

  python scripts/router_test.py --infer bin/infer --model MODEL.gguf [--router sglang|vllm] [--seconds 40] [--clients 16]

1. starts two replicas and the router with `--policy cache_aware` in front
   of them (`python -m sglang_router.launch_router` or
   `python -m vllm_router.launch_router`: the same options, vllm-router is a
   fork of sglang-router), and waits until all three answer;
2. multi-turn: 4 conversations of 3 turns each through the router, one
   request at a time; for each turn it reports the replica that served it
   (from the replicas' archc_requests_total) and usage.prompt_tokens_details
   .cached_tokens (the prompt tokens the replica found in its KV cache);
3. load: --clients streaming chat clients for --seconds; half-way, one
   replica is killed (SIGKILL). Each request ends as: completed (a finish
   reason, then [DONE]), cut (the stream had started on the killed replica
   and broke) or lost (no chunk at all: an error before the stream started).
   Completed streams ask for usage (stream_options.include_usage): their
   completion tokens over the load phase's wall time are the tokens/s.

It prints one JSON summary and exits non-zero when a request was lost, a
request failed before the kill, or no later turn of a conversation found
its prefix cached.
"""

import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import openai


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, timeout, proc=None, ok=(200,)):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"{proc.args[0]} exited with {proc.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                if r.status in ok:
                    return
        except Exception:
            pass
        time.sleep(1)
    raise SystemExit(f"{url} did not answer within {timeout} s")


def requests_served(url):
    """The replica's API requests so far (archc_requests_total, all endpoints)."""
    with urllib.request.urlopen(url + "/metrics", timeout=5) as r:
        text = r.read().decode()
    return sum(float(m) for m in re.findall(r'^archc_requests_total\{[^}]*\} (\S+)$', text, re.M))


# The router's module (run as `python -m MODULE`) and its spelling of the
# warning log level; the other options are the same in both.
ROUTERS = {
    "sglang": ("sglang_router.launch_router", "warn"),
    "vllm": ("vllm_router.launch_router", "warning"),
}


def router_version(name):
    from importlib.metadata import version
    return version(f"{name}-router")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--infer", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--router", choices=sorted(ROUTERS), default="sglang")
    ap.add_argument("--logs", default=tempfile.mkdtemp(prefix="archc-router-"))
    a = ap.parse_args()

    procs = []

    def start(name, args):
        log = open(os.path.join(a.logs, name + ".log"), "w")
        p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        procs.append(p)
        return p

    try:
        reps = []
        for i in range(2):
            port = free_port()
            p = start(f"replica{i}", [a.infer, "serve", "--model", a.model, "--addr", f"127.0.0.1:{port}",
                                      "--max-batch", "4", "--max-len", "1024", "--name", "smollm2", "--log-format", "json", "-q"])
            reps.append((f"http://127.0.0.1:{port}", p))
        for url, p in reps:
            wait_http(url + "/health", 1800, p)
        rport = free_port()
        module, warn = ROUTERS[a.router]
        # Both routers export their own metrics on 0.0.0.0:29000 by default:
        # keep that on loopback, on a free port.
        router = start("router", [sys.executable, "-m", module, "--worker-urls", *[u for u, _ in reps],
                                  "--policy", "cache_aware", "--host", "127.0.0.1", "--port", str(rport),
                                  "--prometheus-host", "127.0.0.1", "--prometheus-port", str(free_port()),
                                  "--log-level", warn])
        rurl = f"http://127.0.0.1:{rport}"
        wait_http(rurl + "/v1/models", 120, router)
        client = openai.OpenAI(base_url=rurl + "/v1", api_key="none", max_retries=0, timeout=120)

        # Multi-turn conversations: does each later turn land where its prefix is cached?
        turns = []
        topics = ["the sea", "mountains", "bread", "trains"]
        for c, topic in enumerate(topics):
            msgs = [{"role": "user", "content": f"Tell me one short fact about {topic}."}]
            for t in range(3):
                before = [requests_served(u) for u, _ in reps]
                r = client.chat.completions.create(model="smollm2", messages=msgs, max_tokens=24, temperature=0)
                after = [requests_served(u) for u, _ in reps]
                served = [i for i in range(2) if after[i] > before[i]]
                cached = (r.usage.prompt_tokens_details.cached_tokens or 0) if r.usage.prompt_tokens_details else 0
                turns.append({"conversation": c, "turn": t, "replica": served, "prompt_tokens": r.usage.prompt_tokens, "cached_tokens": cached})
                msgs += [{"role": "assistant", "content": r.choices[0].message.content}, {"role": "user", "content": "Tell me another."}]

        # Load with a killed replica.
        stop_at = time.time() + a.seconds
        kill_at = time.time() + a.seconds / 2
        lock = threading.Lock()
        counts = {"completed": 0, "cut": 0, "lost": 0, "failed_before_kill": 0}
        tokens = [0]
        errors = []
        killed = threading.Event()

        def worker(k):
            i = 0
            while time.time() < stop_at:
                i += 1
                started = False
                t0 = time.time()
                try:
                    s = client.chat.completions.create(model="smollm2", stream=True, max_tokens=8 + (k + i) % 24, temperature=0.7,
                                                       stream_options={"include_usage": True},
                                                       messages=[{"role": "user", "content": f"Count to {3 + (k * 7 + i) % 20}, client {k}."}])
                    finish, generated = None, 0
                    for chunk in s:
                        started = True
                        for ch in chunk.choices:
                            finish = ch.finish_reason or finish
                        if chunk.usage:
                            generated = chunk.usage.completion_tokens
                    outcome = "completed" if finish else "cut"
                    if finish:
                        with lock:
                            tokens[0] += generated
                except Exception as e:  # noqa: BLE001: every failure is counted and reported
                    outcome = "cut" if started else "lost"
                    with lock:
                        errors.append(f"client {k} request {i}: {type(e).__name__}: {e}"[:300])
                with lock:
                    counts[outcome] += 1
                    if outcome != "completed" and not killed.is_set() and t0 < kill_at:
                        counts["failed_before_kill"] += 1

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(a.clients)]
        load_start = time.time()
        for th in threads:
            th.start()
        time.sleep(max(0, kill_at - time.time()))
        reps[1][1].send_signal(signal.SIGKILL)
        killed.set()
        for th in threads:
            th.join()
        load_seconds = time.time() - load_start

        later = [t for t in turns if t["turn"] > 0]
        summary = {
            "router": f"{a.router}-router {router_version(a.router)} cache_aware", "replicas": 2, "clients": a.clients, "seconds": a.seconds,
            "multi_turn": turns,
            "later_turns_with_cached_prefix": sum(1 for t in later if t["cached_tokens"] > 0),
            "later_turns": len(later),
            "load": counts,
            "completed_tokens": tokens[0], "load_seconds": round(load_seconds, 1),
            "tokens_per_s": round(tokens[0] / load_seconds, 1),
            "errors": errors[:10], "logs": a.logs,
        }
        print(json.dumps(summary, indent=1))
        bad = counts["lost"] > 0 or counts["failed_before_kill"] > 0 or summary["later_turns_with_cached_prefix"] == 0 or counts["completed"] == 0
        sys.exit(1 if bad else 0)
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main()
