#!/usr/bin/env bash
# Benchmarks archc against Hugging Face transformers (CPU, fp32) on the same
# model and chat prompt, in the same run, and prints both reports and the
# ratios (archc / transformers). Default model: SmolLM2-135M-Instruct Q4_1.
#
# Usage: scripts/bench.sh [MODEL.gguf] [prompt] [max tokens]
# The peer needs torch + transformers: BENCH_PYTHON=/path/to/python picks an
# interpreter that has them, else .venv-bench is created from
# golden/requirements-oracle.txt (large download, once).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup.sh >/dev/null
scripts/fetch-models.sh >/dev/null
model="${1:-$(ls "${ARCHC_MODELS:-$root/.cache/models}"/smollm2/*.gguf | head -n 1)}"
prompt="${2:-Explain KV caching in one sentence.}"
max="${3:-64}"
py="${BENCH_PYTHON:-}"
if [[ -z "$py" ]]; then
  py="$root/.venv-bench/bin/python"
  if [[ ! -x "$py" ]]; then
    python3 -m venv "$root/.venv-bench"
    "$py" -m pip install --quiet -r golden/requirements-oracle.txt
  fi
fi
mkdir -p bin
go build -o bin/ ./cmd/infer
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
# Warm-up: dequantize and compile once, so the measured run loads from the caches.
bin/infer generate --model "$model" --chat --prompt "$prompt" --max-tokens 1 -q --json >/dev/null
/usr/bin/time -f '%M' -o "$out/archc.rss" bin/infer generate --model "$model" --chat --prompt "$prompt" --max-tokens "$max" -q --json >"$out/archc.json"
"$py" scripts/bench_hf.py "$model" "$prompt" "$max" 2>/dev/null >"$out/hf.json"
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
a = json.load(open(f"{d}/archc.json")); h = json.load(open(f"{d}/hf.json"))
a["peak_rss_mib"] = int(open(f"{d}/archc.rss").read().split()[-1]) / 1024
print(f"{'':24}{'archc':>12}{'transformers':>14}{'ratio':>9}")
for k, better in [("time_to_first_token_s", "lower"), ("prefill_tokens_per_s", "higher"), ("decode_tokens_per_s", "higher"), ("peak_rss_mib", "lower"), ("load_s", "lower")]:
    print(f"{k:24}{a[k]:12.3f}{h[k]:14.3f}{a[k] / h[k]:9.2f}  ({better} is better)")
print(f"{'compile_s (cached run)':24}{a['compile_s']:12.3f}")
print("prompt tokens", len(a["prompt_tokens"]), "| same generated ids:", a["tokens"] == h["tokens"], f"({len(a['tokens'])} tokens)")
PY
