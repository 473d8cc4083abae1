#!/usr/bin/env bash
# Decode speed by the tokens held in the KV cache (issue 35's attention
# curve): for each count N of BENCH_HELD, archc and llama.cpp each take a
# prompt of N token ids and then generate BENCH_MAX_TOKENS tokens greedily
# with one context capacity (the largest N plus the new tokens), the same
# GGUF and threads. A decode step's attention reads the N (and more) keys
# and values held, the rest of the step does not grow with N: the table
# gives each engine's decode tokens/s and ms per token, and the ms per token
# above the smallest N's — the part of a step that grows with the tokens
# held (attention), with that part per 1000 tokens held.
#
# The prompt ids are a fixed English text (the one scripts/bench.sh uses)
# repeated to the longest N as archc's tokenizer encodes it
# (`infer tokenize --add-special`), cut to each N.
#
# Usage: scripts/bench_attention.sh [MODEL]
#   MODEL: smollm2, gemma3, SHAPE:FORMAT (a random-weight GGUF of a real
#   model's body, scripts/gen_bench_gguf.py) or a .gguf path, resolved as
#   scripts/bench.sh does (scripts/bench_lib.sh). Default llama-3.2-1b:q4_0.
#
# Environment:
#   BENCH_HELD         tokens held, comma-separated (256,1024,2048,4096,8000:
#                      8k held with 32 new tokens within a capacity of 8192,
#                      the 1B shape's max_position_embeddings)
#   BENCH_THREADS      threads for both engines (2)
#   BENCH_MAX_TOKENS   new tokens per run (32)
#   BENCH_SKIP_LLAMACPP=1  archc only
#   BENCH_PYTHON       interpreter for llama.cpp (else .venv-bench, as bench.sh)
#   BENCH_OUT          folder for the raw JSON reports (.cache/bench/held-<time>)
# Prefill of the longest prompt takes a minute or more per engine on 2 cores
# at 1B. Run it on a quiet machine; it prints the CPU and the load average.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

die() {
  echo "bench_attention.sh: $*" >&2
  exit 1
}
note() { echo "bench_attention.sh: $*" >&2; }

threads="${BENCH_THREADS:-2}"
max="${BENCH_MAX_TOKENS:-32}"
skip_llama="${BENCH_SKIP_LLAMACPP:-0}"
IFS=, read -r -a held <<<"${BENCH_HELD:-256,1024,2048,4096,8000}"
[[ "$threads" =~ ^[1-9][0-9]*$ ]] || die "BENCH_THREADS='$threads': want a positive integer"
[[ "$max" =~ ^[1-9][0-9]*$ ]] || die "BENCH_MAX_TOKENS='$max': want a positive integer"
((${#held[@]} > 0)) || die "BENCH_HELD is empty"
longest=0
for n in "${held[@]}"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "BENCH_HELD: '$n' is not a positive token count"
  ((n > longest)) && longest=$n
done
(($# <= 1)) || die "one model at a time (got $#)"
capacity=$(((longest + max + 255) / 256 * 256))

source scripts/bench_lib.sh
bench_resolve_models "${1:-llama-3.2-1b:q4_0}"
model="${bench_paths[0]}"
bench_peers "$skip_llama"
py="$bench_py"
bench_write_synth

scripts/setup.sh >/dev/null || die "scripts/setup.sh failed"
mkdir -p bin
go build -o bin/ ./cmd/infer || die "go build ./cmd/infer failed"

load_start="$(cut -d' ' -f1 /proc/loadavg)"
if awk -v l="$load_start" -v n="$(nproc)" 'BEGIN { exit !(l > n / 2) }'; then
  note "the machine is busy (load average $load_start on $(nproc) cores): the figures will be noisy"
fi
out="${BENCH_OUT:-$root/.cache/bench/held-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
tag="$(basename "$model" .gguf)"

para="The lighthouse stood on a rock at the mouth of the harbour, and for more than a hundred years its keepers had climbed the spiral stair each evening to light the lamp. The work was simple but it never ended: the glass had to be cleaned of salt and soot, the wicks trimmed, the oil carried up in heavy cans, and the clockwork that turned the lens wound every few hours through the night. In the log book each keeper wrote the weather, the ships that passed, and anything unusual he had seen on the water. Most entries were short, because most nights were the same, but in winter storms the pages filled with careful notes about broken windows, failing lamps and boats that came too close to the reef. When the light was finally automated, the last keeper left the log book on the table in the watch room, open at a page that described a calm night, a full moon and a single fishing boat heading home."
# About 190 tokens a paragraph: enough copies for the longest prompt.
text=""
for _ in $(seq $((longest / 150 + 1))); do text+="$para "; done
bin/infer tokenize --model "$model" --text "$text" --json --add-special >"$out/$tag.tok.json" ||
  die "bin/infer tokenize --model $model failed"

note "$tag: archc warm-up at --max-len $capacity (compiles on the first run)"
bin/infer generate --model "$model" --prompt-ids 1 --max-tokens 1 --max-len "$capacity" --threads "$threads" --json -q \
  >"$out/warmup.json" 2>"$out/warmup.log" || die "archc warm-up failed (log: $out/warmup.log)"
for n in "${held[@]}"; do
  ids="$("$py" -c 'import json, sys; ids = json.load(open(sys.argv[1]))["ids"][: int(sys.argv[2])]; print(",".join(map(str, ids)))' "$out/$tag.tok.json" "$n")"
  note "$tag: $n tokens held: archc"
  bin/infer generate --model "$model" --prompt-ids "$ids" --max-tokens "$max" --max-len "$capacity" --threads "$threads" --json -q \
    >"$out/archc.$n.json" 2>"$out/archc.$n.log" || die "archc at $n held failed (log: $out/archc.$n.log)"
  if [[ "$skip_llama" != 1 ]]; then
    note "$tag: $n tokens held: llama.cpp"
    "$py" scripts/bench_llamacpp.py "$model" --prompt-ids "$ids" --max-tokens "$max" --threads "$threads" \
      --n-ctx "$capacity" --ignore-eos >"$out/llamacpp.$n.json" 2>"$out/llamacpp.$n.log" ||
      die "llama.cpp at $n held failed (log: $out/llamacpp.$n.log)"
  fi
done

cpu="$(lscpu 2>/dev/null | grep -E 'Model name|Flags' || grep -m2 -E '^(model name|flags)' /proc/cpuinfo)"
"$py" - "$out" "$tag" "$capacity" "$threads" "$max" "load average $load_start at the start, $(cut -d' ' -f1 /proc/loadavg) at the end, $(nproc) cores" "$cpu" "${held[@]}" <<'PY'
import json, os, sys

out, tag, capacity, threads, max_tokens, load, cpu = sys.argv[1:8]
held = [int(n) for n in sys.argv[8:]]
print(f"decode by tokens held | {tag} | greedy, {max_tokens} new tokens, threads {threads}, context capacity {capacity}")
print(load)
print(cpu)


def rate(engine, n):
    path = os.path.join(out, f"{engine}.{n}.json")
    if not os.path.exists(path):
        return None
    return json.load(open(path))["decode_tokens_per_s"]


engines = [e for e in ("archc", "llamacpp") if rate(e, held[0]) is not None]
names = {"archc": "archc", "llamacpp": "llama.cpp"}
head = f"{'held':>6}"
for e in engines:
    head += f" {names[e] + ' tok/s':>16} {'ms/token':>9} {'+ms vs ' + str(held[0]):>11} {'+ms/1k held':>12}"
if len(engines) == 2:
    head += f" {'archc/llama.cpp':>16}"
print(head)
base = {e: 1000 / rate(e, held[0]) for e in engines}
for n in held:
    row = f"{n:>6}"
    for e in engines:
        ms = 1000 / rate(e, n)
        grow = ms - base[e]
        per = grow / (n - held[0]) * 1000 if n != held[0] else 0.0
        row += f" {rate(e, n):>16.2f} {ms:>9.2f} {grow:>11.2f} {per:>12.3f}"
    if len(engines) == 2:
        row += f" {rate('archc', n) / rate('llamacpp', n):>16.2f}"
    print(row)
print(f"raw reports: {out}")
PY
