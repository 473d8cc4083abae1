#!/usr/bin/env bash
# Two `infer serve` replicas of SmolLM2 behind sglang-router or vllm-router
# on loopback: multi-turn conversations (cache-aware routing, cached_tokens
# per turn), then 16 streaming clients with one replica killed half-way
# (scripts/router_test.py says what is checked; the checks are the same for
# both routers). Not part of scripts/test.sh: it needs a quiet machine for a
# minute or two after the first compile.
#
#   [ROUTER=sglang|vllm] scripts/router-test.sh [MODEL.gguf]
#       (ROUTER_SECONDS=40 ROUTER_CLIENTS=16; both routers are pinned in
#        scripts/requirements-router.txt and live in one venv)
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-${ARCHC_MODELS:-.cache/models}/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf}
[ -f "$model" ] || { echo "no $model: run scripts/fetch-models.sh" >&2; exit 1; }
router=${ROUTER:-sglang}
case $router in
  sglang|vllm) ;;
  *) echo "ROUTER=$router: want sglang or vllm" >&2; exit 2 ;;
esac
venv=${ROUTER_VENV:-.venv-router}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sglang_router, vllm_router, openai' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r scripts/requirements-router.txt
fi
[ -n "${ARCHC_VENV:-}" ] || [ -x .venv/bin/python ] || scripts/setup.sh
go build -o bin/ ./cmd/infer
exec "$venv/bin/python" scripts/router_test.py --infer bin/infer --model "$model" --router "$router" \
  --seconds "${ROUTER_SECONDS:-40}" --clients "${ROUTER_CLIENTS:-16}"
