#!/usr/bin/env bash
# The main job on the bundled default model: set up the IREE venv, build
# archc's commands and generate 16 tokens greedily from the tiny random-weight
# Llama fixture (golden/testdata/llama-tied), printing the JSON report.
# The first run compiles the model with iree-compile (about 10 s); later runs
# hit the compile cache (~/.cache/archc).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup.sh >/dev/null
mkdir -p bin
go build -o bin/ ./cmd/archc ./cmd/infer
model="${MODEL:-golden/testdata/llama-tied}"
echo "== bin/archc list" >&2
bin/archc list >&2
echo "== bin/infer generate --model $model --prompt-ids 1,184,106,66,98,250,217 --max-tokens 16 --json" >&2
bin/infer generate --model "$model" --prompt-ids 1,184,106,66,98,250,217 --max-tokens 16 --json
