#!/usr/bin/env python3
"""The GPU half of scripts/gpu-check.sh (run it through that script, which
sets up the carried runtime): drives `infer serve --device cuda` over HTTP.

1. Every golden fixture (and the Q8_0 GGUF twin of llama-tied): each
   oracle prompt's greedy tokens equal the HF fp32 oracle's.
2. Batched == single: the --batched fixtures, all oracle prompts at once,
   each equal to its oracle (single) tokens.
3. Benchmark on random-weight f16 Llama-3.2-1B- and Qwen3-8B-shaped
   models: prefill tok/s for a 512-token prompt (one chunk), decode tok/s
   at batch 1, 16 and 64 (that many concurrent streams), and each as a
   fraction of the GPU's memory roofline: bytes read per step (f16
   weights, the embedding table only when it is also the LM head, plus
   the KV cache read) over the step time, against the bandwidth of the
   GPU nvidia-smi names (roofline()).
Every server runs `infer serve --device cuda` without shape flags: the
default GPU plan (64 slots, decode batches 1, 4, 16, 64, prefill chunks of
16, 128 and 512 tokens), the module golden TestGPUCompile compiles.
Stdlib only (the GPU machine has no network).
"""
import argparse
import concurrent.futures as cf
import glob
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

ROOF = 4.8e12  # H200 HBM3e bytes/s; roofline() sets it from nvidia-smi
READY_S = 300  # a server's load (its module carried: no compile)
DEVICE = "cuda"  # --device (another one tries the script on a CPU)
BUDGET_S = 7.5 * 60  # stop starting new work past this


def roofline():
    """The memory bandwidth (bytes/s) of the first GPU nvidia-smi names:
    H100 SXM 3.35 TB/s, H100 PCIe 2.0 TB/s, H200 4.8 TB/s; 4.8 TB/s when
    it names none of them."""
    try:
        name = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=30).stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return 4.8e12, "unknown GPU"
    if "H200" in name:
        return 4.8e12, name
    if "H100" in name and "PCIe" in name:
        return 2.0e12, name
    if "H100" in name:
        return 3.35e12, name
    return 4.8e12, name


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """infer serve on a model, started and stopped by with."""

    def __init__(self, infer, model, flags, log):
        self.port = free_port()
        self.args = [infer, "serve", "--model", model, "--device", DEVICE, "--addr", f"127.0.0.1:{self.port}", "-q"] + flags
        self.log = log

    def __enter__(self):
        self.proc = subprocess.Popen(self.args, stdout=self.log, stderr=self.log)
        try:
            return self._wait()
        except BaseException:
            self.__exit__()  # with does not call __exit__ when __enter__ fails
            raise

    def _wait(self):
        deadline = time.time() + READY_S
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"infer serve exited {self.proc.returncode} (see the log)")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"infer serve did not become ready in {READY_S} s")

    def __exit__(self, *exc):
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def complete(self, prompt, max_tokens, stream=False):
        """(token ids, seconds to the first token, seconds in all)."""
        body = {"model": "m", "prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": stream}
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}/v1/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        t0 = time.perf_counter()
        first = None
        ids = []
        with urllib.request.urlopen(req, timeout=600) as r:
            if not stream:
                out = json.load(r)
                return out["choices"][0]["token_ids"], None, time.perf_counter() - t0
            for line in r:
                line = line.strip()
                if not line.startswith(b"data: ") or line == b"data: [DONE]":
                    continue
                ev = json.loads(line[6:])
                got = ev["choices"][0].get("token_ids") or [] if ev.get("choices") else []
                if got and first is None:
                    first = time.perf_counter() - t0
                ids += got
        return ids, first, time.perf_counter() - t0


def oracle_cases():
    """(name, model path, oracle json path) of every fixture."""
    out = []
    for o in sorted(glob.glob("golden/testdata/*/oracle.json")):
        d = os.path.dirname(o)
        out.append((os.path.basename(d), d, o))
    q8 = "golden/testdata/llama-tied/model.q8_0.gguf"
    if os.path.exists(q8):
        out.append(("llama-tied/q8_0.gguf", q8, "golden/testdata/llama-tied/oracle.q8_0.json"))
    return out


def check_tokens(srv, oracle, concurrent):
    """Mismatching prompts' indices (all at once when concurrent)."""
    want = oracle["tokens"]
    n = oracle["max_new_tokens"]
    if concurrent:
        with cf.ThreadPoolExecutor(len(oracle["prompts"])) as ex:
            got = list(ex.map(lambda p: srv.complete(p, n)[0], oracle["prompts"]))
    else:
        got = [srv.complete(p, n)[0] for p in oracle["prompts"]]
    return [i for i, (w, g) in enumerate(zip(want, got)) if w != g], got


def bench(infer, name, d, flags, log, lines):
    cfg = json.load(open(os.path.join(d, "config.json")))
    hdr_len = int.from_bytes(open(os.path.join(d, "model.safetensors"), "rb").read(8), "little")
    meta = json.loads(open(os.path.join(d, "model.safetensors"), "rb").read(8 + hdr_len)[8:])
    weights = sum(v["data_offsets"][1] - v["data_offsets"][0] for k, v in meta.items() if k != "__metadata__")
    emb = meta["model.embed_tokens.weight"]["data_offsets"]
    if not cfg.get("tie_word_embeddings"):
        weights -= emb[1] - emb[0]  # gathered rows only; lm_head is read whole
    kv_per_token = cfg["num_hidden_layers"] * 2 * cfg["num_key_value_heads"] * cfg["head_dim"] * 4  # f32 cache
    with Server(infer, d, flags, log) as srv:
        prompt = [(i * 7919) % 1000 + 10 for i in range(512)]
        srv.complete(prompt[:32], 2)  # warm up (PTX JIT, first calls)
        ts = []
        for _ in range(3):
            _, first, _ = srv.complete(prompt, 1, stream=True)
            ts.append(first)
        t = min(ts)
        rate = 512 / t
        # One 512-token chunk reads the weights once and writes the KV.
        lines.append(f"{name:14s} prefill 512   {rate:10.0f} tok/s   {t * 1e3:8.2f} ms/chunk  {weights / t / ROOF:6.1%} of roofline")
        print(lines[-1], flush=True)
        for b in (1, 16, 64):
            gen = 64
            prompts = [[(i * 31 + j * 7) % 1000 + 10 for i in range(16)] for j in range(b)]
            with cf.ThreadPoolExecutor(b) as ex:
                res = list(ex.map(lambda p: srv.complete(p, gen, stream=True), prompts))
            # Steady state: tokens after the first over the time after the
            # last stream's first token (all b streams decoding together).
            step_s = max(r[2] - r[1] for r in res) / (gen - 1)
            ctx = 16 + gen / 2
            step_bytes = weights + b * ctx * kv_per_token
            lines.append(f"{name:14s} decode b={b:<3d}  {b / step_s:10.0f} tok/s   {step_s * 1e3:8.2f} ms/step   {step_bytes / step_s / ROOF:6.1%} of roofline")
            print(lines[-1], flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--infer", required=True)
    ap.add_argument("--bench-dir", required=True)
    ap.add_argument("--batched", default="")
    ap.add_argument("--bench-flags", default="", help="extra infer serve flags for the benchmark models")
    ap.add_argument("--report", required=True)
    ap.add_argument("--device", default="cuda", help="infer's device (local-task tries the script without a GPU)")
    ap.add_argument("--only", default="", help="only the fixtures named, comma-separated")
    ap.add_argument("--no-bench", action="store_true")
    a = ap.parse_args()
    global DEVICE, ROOF
    DEVICE = a.device
    ROOF, gpu = roofline()
    start = time.time()
    log = open(os.path.join(os.path.dirname(a.report) or ".", "gpu-check-serve.log"), "w")
    lines, failed = [], 0

    def out(s):
        lines.append(s)
        print(s, flush=True)

    out(f"== token-exact against the HF oracle, --device {DEVICE} (the default plan)")
    for name, model, orc in oracle_cases():
        if a.only and name not in a.only.split(","):
            continue
        if time.time() - start > BUDGET_S / 2:
            out(f"{name:28s} SKIPPED (time)")
            continue
        t0 = time.time()
        try:
            oracle = json.load(open(orc))
            with Server(a.infer, model, [], log) as srv:
                bad, _ = check_tokens(srv, oracle, False)
            res = "ok" if not bad else f"MISMATCH prompts {bad}"
            failed += bool(bad)
        except Exception as e:  # a fixture that does not compile or load is a result too
            res = f"ERROR {' '.join(str(e).split())[:160]}"
            failed += 1
        out(f"{name:28s} {res} ({time.time() - t0:.1f} s)")

    out("== batched == single (all prompts at once)")
    for name in filter(None, a.batched.split(",")):
        d = os.path.join("golden/testdata", name)
        try:
            oracle = json.load(open(os.path.join(d, "oracle.json")))
            with Server(a.infer, d, [], log) as srv:
                bad, _ = check_tokens(srv, oracle, True)
            res = "ok" if not bad else f"MISMATCH prompts {bad}"
            failed += bool(bad)
        except Exception as e:
            res = f"ERROR {' '.join(str(e).split())[:160]}"
            failed += 1
        out(f"{name:28s} {res}")

    out(f"== benchmark (random f16 weights; {gpu}, roofline {ROOF / 1e12:.2f} TB/s)")
    for name in ("llama-3.2-1b", "qwen3-8b"):
        if a.no_bench:
            break
        if time.time() - start > BUDGET_S - 150:
            out(f"{name}: SKIPPED (time)")
            continue
        d = os.path.join(a.bench_dir, name)
        t0 = time.time()
        subprocess.run([sys.executable, "scripts/gpu_bench_model.py", name, d], check=True)
        out(f"{name}: weights written in {time.time() - t0:.0f} s")
        try:
            bench(a.infer, name, d, a.bench_flags.split(), log, lines)
        except Exception as e:
            out(f"{name}: ERROR {' '.join(str(e).split())[:200]}")
            failed += 1
        finally:
            for f in glob.glob(os.path.join(d, "*")):
                os.remove(f)  # 2.5 and 16 GB
    out(f"== done in {time.time() - start:.0f} s, {failed} failures")
    with open(a.report, "w") as f:
        f.write("\n".join(lines) + "\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
