#!/usr/bin/env bash
# Benchmarks archc against two peers on the same GGUF files, the same prompt
# token ids, the same thread count and greedy decoding, in one run:
#   - llama.cpp (llama-cpp-python, CPU build for the host CPU's instruction
#     sets, AMX off: see below), scripts/bench_llamacpp.py
#   - Hugging Face transformers (CPU, fp32, eager attention), scripts/bench_hf.py
# on SmolLM2-135M-Instruct Q4_1 and Gemma-3-270M Q4_K_M, each with a short
# (40-token) and a long (480-token) prompt, and prints one table per model:
# time to first token, prefill and decode tokens/s, peak RSS and load time for
# each engine and the ratios archc/peer; whether the generated ids are the
# same as archc's (reported, never a failure: llama.cpp quantizes activations
# and may pick other tokens); and archc's decode tokens/s at context
# capacities 256 and 4096 (--max-len) with the short prompt. The report
# starts with the CPU (model and flags, as lscpu prints them) and says which
# kernel variant and precision archc ran and which instruction sets
# llama.cpp was built with (llama_print_system_info).
#
# Usage: scripts/bench.sh [MODEL ...]
#   MODEL: smollm2, gemma3, SHAPE:FORMAT or a path to a .gguf file (default:
#   BENCH_MODELS, else "smollm2 gemma3"; the two named models are fetched if
#   missing). SHAPE:FORMAT is a random-weight GGUF of a real model's body
#   (scripts/gen_bench_gguf.py: SHAPE llama-3.2-1b, llama-3.2-3b, qwen3-4b,
#   llama-3.1-8b, qwen3-8b, qwen3.5-2b (the Gated DeltaNet / attention
#   hybrid, GGUF qwen35), qwen3-30b-a3b (the 128-expert MoE, GGUF qwen3moe:
#   17 GB in Q4_0) or olmoe-1b-7b (a 64-expert MoE, GGUF olmoe: 4.0 GB);
#   FORMAT f16, q8_0, q4_0, q4_1, q5_0, q4_k or q6_k) with SmolLM2's
#   tokenizer, written once into .cache/bench-models: the sizes people run,
#   e.g. `scripts/bench.sh llama-3.2-1b:q4_0 qwen3-8b:q4_k qwen3.5-2b:q4_0`.
#   The MoE files need memory beyond their size in llama.cpp: its peak RSS
#   on the 17 GB file is 22 GB (7.6 GB on the 4.0 GB OLMoE file). archc
#   multiplies the experts' stored bytes with its kernels (no f32 copy):
#   its peak RSS on the OLMoE file was 2.5 GB (the weights mapped from the
#   compile cache's packed file, counted as touched).
#
# Each model's table also gives decode as memory traffic: the bytes of
# weights one decode step reads (every tensor but the token embedding, which
# counts only as a tied head; of a MoE's expert stacks, *_exps, the
# expert_used_count / expert_count share that one token routes to) times
# tokens/s, and that as a fraction of this
# machine's streaming read bandwidth with the same threads, measured in the
# same run (scripts/membw/membw.c, built with cc).
#
# Environment:
#   BENCH_MODELS       models when none are given as arguments ("smollm2 gemma3")
#   BENCH_THREADS      threads for every engine (2)
#   BENCH_MAX_TOKENS   new tokens per run (64)
#   BENCH_MAX_LEN      context capacity of the measured runs: archc --max-len,
#                      llama.cpp n_ctx (1024)
#   BENCH_PRECISION    archc --precision (f32: exact, the default; int8: the
#                      opt-in int8-activation kernels, AVX-512 VNNI)
#   BENCH_KERNELS      archc --kernels (auto: the best variant this CPU runs,
#                      amx where it has AMX-BF16: llama.cpp's build below
#                      has no AMX, so on such a host the prefill rows compare
#                      archc's tile unit with llama.cpp's AVX-512 VNNI;
#                      avx512, avx2 or none to compare)
#   BENCH_SKIP_HF=1    skip transformers (slow to load and run)
#   BENCH_SKIP_LLAMACPP=1  skip llama.cpp
#   BENCH_PYTHON       interpreter for the peers; else .venv-bench is built from
#                      scripts/requirements-bench.txt (torch download and a
#                      llama.cpp build from source: 10+ minutes, once)
#   CMAKE_ARGS         llama.cpp's build flags for .venv-bench; by default
#                      GGML_NATIVE=OFF and the x86 instruction sets this CPU
#                      has (/proc/cpuinfo) turned on one by one, with AMX
#                      off: llama-cpp-python 0.3.36's AMX path segfaults in
#                      prefill (batch > 1) on AMX hosts (issue 19)
#   BENCH_OUT          folder for the raw JSON reports (.cache/bench/<time>)
#
# The prompts are raw token ids: archc's tokenizer (`infer tokenize
# --add-special`) encodes a fixed English text, cut to the first 40 and 480
# ids; every engine is given those ids. archc runs first (after an uncounted
# warm-up that fills the compile and weight caches) and the peers then
# generate exactly as many tokens as archc did, so all engines time the same
# number of decode steps. Peak RSS: /usr/bin/time -f %M for archc (the
# largest single process of its tree: bin/infer or its IREE worker), ru_maxrss
# for the Python peers.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

die() {
  echo "bench.sh: $*" >&2
  exit 1
}
note() { echo "bench.sh: $*" >&2; }

threads="${BENCH_THREADS:-2}"
max="${BENCH_MAX_TOKENS:-64}"
maxlen="${BENCH_MAX_LEN:-1024}"
skip_hf="${BENCH_SKIP_HF:-0}"
skip_llama="${BENCH_SKIP_LLAMACPP:-0}"
kernels="${BENCH_KERNELS:-auto}"
precision="${BENCH_PRECISION:-f32}"
short_len=40
long_len=480
capacities=(256 4096)
[[ "$threads" =~ ^[1-9][0-9]*$ ]] || die "BENCH_THREADS='$threads': want a positive integer"
[[ "$max" =~ ^[1-9][0-9]*$ ]] || die "BENCH_MAX_TOKENS='$max': want a positive integer"
[[ "$maxlen" =~ ^[1-9][0-9]*$ ]] || die "BENCH_MAX_LEN='$maxlen': want a positive integer"
((long_len + max <= maxlen)) || die "BENCH_MAX_LEN=$maxlen holds no $long_len-token prompt + $max new tokens: raise it"
((short_len + max <= capacities[0])) || die "BENCH_MAX_TOKENS=$max: the capacity run at --max-len ${capacities[0]} holds at most $((capacities[0] - short_len)) new tokens"
[[ -x /usr/bin/time ]] || die "needs GNU time at /usr/bin/time for archc's peak RSS (apt-get install time)"

if (($# > 0)); then
  models=("$@")
else
  read -r -a models <<<"${BENCH_MODELS:-smollm2 gemma3}"
fi
((${#models[@]} > 0)) || die "no models: give smollm2, gemma3 or .gguf paths"
# Models, the peers' interpreter (BENCH_PYTHON, else .venv-bench built from
# scripts/requirements-bench.txt) and the random-weight files: bench_lib.sh.
source scripts/bench_lib.sh
bench_resolve_models "${models[@]}"
paths=("${bench_paths[@]}")
need=()
((${#bench_synth[@]} == 0)) || need+=(gguf numpy)
[[ "$skip_llama" == 1 ]] || need+=(llama_cpp numpy)
[[ "$skip_hf" == 1 ]] || need+=(torch transformers gguf)
bench_python "${need[@]}" -- -r scripts/requirements-bench.txt
py="$bench_py"
bench_write_synth

# This machine's streaming read bandwidth with the bench's threads.
membw="$root/.cache/bench/membw"
mkdir -p "$root/.cache/bench"
if cc -O3 -march=native -pthread scripts/membw/membw.c -o "$membw" 2>/dev/null; then
  bandwidth="$("$membw" "$threads" 2>/dev/null || echo 0)"
else
  note "no C compiler (cc): decode is not reported as a fraction of the memory bandwidth"
  bandwidth=0
fi

scripts/setup.sh >/dev/null || die "scripts/setup.sh failed"
mkdir -p bin
go build -o bin/ ./cmd/infer || die "go build ./cmd/infer failed"
# The help text is read whole first: `--help | grep -q` under pipefail
# fails at random (grep exits early, infer gets SIGPIPE).
help="$(bin/infer generate --help 2>/dev/null || true)"
archc_threads=()
if grep -q -- --threads <<<"$help"; then
  archc_threads=(--threads "$threads")
else
  note "this bin/infer has no --threads flag: archc runs with IREE's default thread count"
fi

archc_kernels=()
if grep -q -- --kernels <<<"$help"; then
  archc_kernels=(--kernels "$kernels")
elif [[ "$kernels" != auto ]]; then
  die "BENCH_KERNELS=$kernels: this bin/infer has no --kernels flag"
fi
if grep -q -- --precision <<<"$help"; then
  archc_kernels+=(--precision "$precision")
elif [[ "$precision" != f32 ]]; then
  die "BENCH_PRECISION=$precision: this bin/infer has no --precision flag"
fi

load_start="$(cut -d' ' -f1 /proc/loadavg)"
if awk -v l="$load_start" -v n="$(nproc)" 'BEGIN { exit !(l > n / 2) }'; then
  note "the machine is busy (load average $load_start on $(nproc) cores): the figures, llama.cpp's multithreaded ones most, will be noisy"
fi
out="${BENCH_OUT:-$root/.cache/bench/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"

# A fixed English paragraph, repeated; the prompts are its first 40 and 480 ids.
para="The lighthouse stood on a rock at the mouth of the harbour, and for more than a hundred years its keepers had climbed the spiral stair each evening to light the lamp. The work was simple but it never ended: the glass had to be cleaned of salt and soot, the wicks trimmed, the oil carried up in heavy cans, and the clockwork that turned the lens wound every few hours through the night. In the log book each keeper wrote the weather, the ships that passed, and anything unusual he had seen on the water. Most entries were short, because most nights were the same, but in winter storms the pages filled with careful notes about broken windows, failing lamps and boats that came too close to the reef. When the light was finally automated, the last keeper left the log book on the table in the watch room, open at a page that described a calm night, a full moon and a single fishing boat heading home."
text="$para $para $para $para"

run_archc() { # run_archc NAME IDS MAX_TOKENS MAX_LEN: archc JSON in $out/NAME.json, peak RSS in KiB in $out/NAME.rss
  /usr/bin/time -f '%M' -o "$out/$1.rss" \
    bin/infer generate --model "$model" --prompt-ids "$2" --max-tokens "$3" --max-len "$4" "${archc_threads[@]}" "${archc_kernels[@]}" --json -q \
    >"$out/$1.json" 2>"$out/$1.log" || {
    tail -n 20 "$out/$1.log" >&2
    die "archc run $1 failed (log: $out/$1.log)"
  }
}
measure_archc() { # as run_archc, again if the run compiled (the compile cache was emptied meanwhile):
  # a measured run must load from the caches, or its peak RSS is iree-compile's
  run_archc "$@"
  if [[ "$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["compile_cached"])' "$out/$1.json")" != True ]]; then
    note "$1 compiled (compile cache emptied by someone else?): running it again"
    run_archc "$@"
  fi
}
run_peer() { # run_peer NAME SCRIPT ARGS...: JSON in $out/NAME.json
  local name="$1" script="$2"
  shift 2
  "$py" "$script" "$@" >"$out/$name.json" 2>"$out/$name.log" || {
    tail -n 20 "$out/$name.log" >&2
    die "$script failed (log: $out/$name.log)"
  }
}
ntokens() { "$py" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["tokens"]))' "$1"; }

tables=()
for model in "${paths[@]}"; do
  tag="$(basename "$model" .gguf)"
  rm -f "$out/$tag".*.json "$out/$tag".*.rss "$out/$tag".*.log # a reused BENCH_OUT: no stale reports
  note "$tag: tokenizing the prompts"
  bin/infer tokenize --model "$model" --text "$text" --json --add-special >"$out/$tag.tok.json" ||
    die "bin/infer tokenize --model $model failed"
  read -r short long < <("$py" -c '
import json, sys
ids = json.load(open(sys.argv[1]))["ids"]
n, m = int(sys.argv[2]), int(sys.argv[3])
if len(ids) < m:
    sys.exit(f"bench.sh: the prompt text is only {len(ids)} tokens, want {m}")
print(",".join(map(str, ids[:n])), ",".join(map(str, ids[:m])))' "$out/$tag.tok.json" "$short_len" "$long_len") ||
    die "$tag: could not build the prompt ids"

  for len in "$maxlen" "${capacities[@]}"; do
    note "$tag: archc warm-up at --max-len $len (compiles on the first run: 10 to 30 s)"
    run_archc "$tag.warmup$len" "$short" 1 "$len"
  done
  for p in short long; do
    ids="${!p}"
    note "$tag: $p prompt: archc"
    measure_archc "$tag.$p.archc" "$ids" "$max" "$maxlen"
    n="$(ntokens "$out/$tag.$p.archc.json")"
    ((n > 0)) || die "$tag: archc generated no tokens"
    if [[ "$skip_llama" != 1 ]]; then
      note "$tag: $p prompt: llama.cpp"
      run_peer "$tag.$p.llamacpp" scripts/bench_llamacpp.py "$model" --prompt-ids "$ids" --max-tokens "$n" \
        --threads "$threads" --n-ctx "$maxlen" --ignore-eos
    fi
    if [[ "$skip_hf" != 1 ]]; then
      note "$tag: $p prompt: transformers"
      run_peer "$tag.$p.hf" scripts/bench_hf.py "$model" --prompt-ids "$ids" --max-tokens "$n" \
        --threads "$threads" --ignore-eos
    fi
  done
  for len in "${capacities[@]}"; do
    note "$tag: archc decode at --max-len $len"
    measure_archc "$tag.cap$len" "$short" "$max" "$len"
  done
  tables+=("$tag")
done

loadavg="load average $load_start at the start, $(cut -d' ' -f1 /proc/loadavg) at the end, $(nproc) cores"
cpu="$(lscpu 2>/dev/null | grep -E 'Model name|Flags' || grep -m2 -E '^(model name|flags)' /proc/cpuinfo)"
"$py" - "$out" "$threads" "$max" "$maxlen" "${#archc_threads[@]}" "$loadavg" "$cpu" "$bandwidth" "${paths[@]}" <<'PY'
import json, os, sys

out, threads, max_tokens, maxlen, archc_threads, loadavg, cpu, bandwidth = sys.argv[1:9]
models = sys.argv[9:]
tags = [os.path.basename(m)[:-len(".gguf")] for m in models]
bandwidth = float(bandwidth)


def decode_bytes(path):
    """Bytes of weights one decode step reads: every tensor but the token
    embedding, which is read whole only as a tied head (one row otherwise);
    of a MoE's expert stacks (*_exps) only the experts a token is routed to,
    expert_used_count of expert_count."""
    try:
        import gguf
    except ImportError:
        return None
    r = gguf.GGUFReader(path)
    sizes = {t.name: int(t.n_bytes) for t in r.tensors}
    arch = r.fields["general.architecture"].contents()
    count = r.fields.get(f"{arch}.expert_count")
    used = r.fields.get(f"{arch}.expert_used_count")
    share = used.contents() / count.contents() if count is not None and used is not None and count.contents() else 1
    n = sum(v * (share if "_exps." in k else 1) for k, v in sizes.items() if k != "token_embd.weight")
    if "output.weight" not in sizes:
        n += sizes.get("token_embd.weight", 0)
    return n
caps = (256, 4096)


def load(name):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        return None
    r = json.load(open(path))
    rss = os.path.join(out, name + ".rss")
    if os.path.exists(rss):
        r["peak_rss_mib"] = int(open(rss).read().split()[-1]) / 1024
    return r


def fmt(v, nd):
    return "-" if v is None else f"{v:.{nd}f}"


def ratio(a, b):
    return None if a is None or not b else a / b


def same(a, b):
    if b is None:
        return "-"
    if a["tokens"] == b["tokens"]:
        return "yes"
    i = next((i for i, (x, y) in enumerate(zip(a["tokens"], b["tokens"])) if x != y), min(len(a["tokens"]), len(b["tokens"])))
    return f"no, at {i}"  # index of the first differing token


metrics = [  # key, label, digits
    ("time_to_first_token_s", "time to first token s (lower better)", 3),
    ("prefill_tokens_per_s", "prefill tok/s (higher better)", 1),
    ("decode_tokens_per_s", "decode tok/s (higher better)", 2),
    ("peak_rss_mib", "peak RSS MiB (lower better)", 0),
    ("load_s", "load s (lower better)", 2),
]
w0, w = 40, 13
th = f"threads {threads}" if archc_threads != "0" else f"threads {threads} (archc: IREE default, no --threads flag)"
print()
print(f"archc vs llama.cpp vs transformers fp32 eager | greedy, same prompt ids, {th}, "
      f"{max_tokens} new tokens at most, context capacity {maxlen}")
print(loadavg)
if bandwidth > 0:
    print(f"streaming read bandwidth, {threads} threads (scripts/membw): {bandwidth:.2f} GB/s")
for line in cpu.splitlines():
    print(" ".join(line.split()))
for tag in tags:
    print()
    print(f"== {tag}")
    a = load(f"{tag}.short.archc")
    print(f"archc: kernels {a.get('kernels', '? (this bin/infer does not report them)')}, precision {a.get('precision', 'f32')}")
    l = load(f"{tag}.short.llamacpp")
    if l:
        print(f"llama.cpp: llama-cpp-python {l.get('llama_cpp_python')}, built with: {l.get('system_info')}")
    print(f"{'':{w0}}{'archc':>{w}}{'llama.cpp':>{w}}{'transformers':>{w}}{'archc/llama':>{w}}{'archc/hf':>{w}}")
    for p in ("short", "long"):
        a, l, h = (load(f"{tag}.{p}.{e}") for e in ("archc", "llamacpp", "hf"))
        print(f"{p} prompt: {len(a['prompt_tokens'])} tokens, {len(a['tokens'])} generated")
        for k, label, nd in metrics:
            av = a.get(k)
            lv = l.get(k) if l else None
            hv = h.get(k) if h else None
            print(f"  {label:{w0 - 2}}{fmt(av, nd):>{w}}{fmt(lv, nd):>{w}}{fmt(hv, nd):>{w}}"
                  f"{fmt(ratio(av, lv), 2):>{w}}{fmt(ratio(av, hv), 2):>{w}}")
        print(f"  {'same generated ids as archc':{w0 - 2}}{'':>{w}}{same(a, l):>{w}}{same(a, h):>{w}}")
    nbytes = decode_bytes(models[tags.index(tag)])
    if nbytes:
        line = f"decode reads {nbytes / 1e9:.3f} GB of weights per token"
        for p in ("short", "long"):
            for e, label in (("archc", "archc"), ("llamacpp", "llama.cpp")):
                r = load(f"{tag}.{p}.{e}")
                if r and r.get("decode_tokens_per_s"):
                    gbs = nbytes * r["decode_tokens_per_s"] / 1e9
                    frac = f" = {100 * gbs / bandwidth:.0f}% of {bandwidth:.1f} GB/s" if bandwidth > 0 else ""
                    line += f"; {p} {label} {gbs:.1f} GB/s{frac}"
        print(line)
    c = [load(f"{tag}.cap{n}") for n in caps]
    d = [r["decode_tokens_per_s"] for r in c]
    print(f"archc decode tok/s by context capacity ({len(c[0]['prompt_tokens'])}-token prompt, {len(c[0]['tokens'])} generated): "
          f"--max-len {caps[0]}: {d[0]:.2f}, --max-len {caps[1]}: {d[1]:.2f}, "
          f"{caps[0]}/{caps[1]}: {fmt(ratio(d[0], d[1]), 2)}")
print()
print(f"raw reports: {out}")
PY
