#!/usr/bin/env bash
# Two `infer serve` replicas of SmolLM2 behind sglang-router on loopback:
# multi-turn conversations (cache-aware routing, cached_tokens per turn),
# then 16 streaming clients with one replica killed half-way
# (scripts/router_test.py says what is checked). Not part of scripts/test.sh:
# it needs a quiet machine for a minute or two after the first compile.
#
#   scripts/router-test.sh [MODEL.gguf]    (ROUTER_SECONDS=40 ROUTER_CLIENTS=16)
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-${ARCHC_MODELS:-.cache/models}/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf}
[ -f "$model" ] || { echo "no $model: run scripts/fetch-models.sh" >&2; exit 1; }
venv=${ROUTER_VENV:-.venv-router}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sglang_router, openai' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r scripts/requirements-router.txt
fi
[ -n "${ARCHC_VENV:-}" ] || [ -x .venv/bin/python ] || scripts/setup.sh
go build -o bin/ ./cmd/infer
exec "$venv/bin/python" scripts/router_test.py --infer bin/infer --model "$model" \
  --seconds "${ROUTER_SECONDS:-40}" --clients "${ROUTER_CLIENTS:-16}"
