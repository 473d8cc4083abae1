#!/usr/bin/env bash
# Benchmarks images in: one image through a vision-language model, archc
# (`infer generate --image --json`) beside Hugging Face transformers (CPU,
# fp32, eager; scripts/bench_vision_hf.py) with the same threads: the image
# encoder's time (every tile), time to first token with the image, the tile
# and prompt token counts. The model is a random-weight SmolVLM-256M-shaped
# checkpoint (scripts/gen_bench_vlm.py, written once into
# .cache/bench-models; speed depends on shapes, not values) unless
# BENCH_VLM names a folder; the image a generated 1024×768 photo-like PNG
# (13 tiles at SmolVLM's longest edge 2048) unless BENCH_IMAGE names one.
# llama.cpp's multimodal path is not run: it needs the model's mmproj GGUF,
# which only llama.cpp's converter (not on PyPI) writes.
#
# Usage: scripts/bench_vision.sh        (BENCH_THREADS, default 2)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
threads="${BENCH_THREADS:-2}"
venv="${ARCHC_VENV:-$root/.venv}"
oracle="${BENCH_ORACLE_VENV:-$root/.venv-oracle}"
models="$root/.cache/bench-models"
mkdir -p "$models"
vlm="${BENCH_VLM:-$models/smolvlm-256m-shape}"
image="${BENCH_IMAGE:-$models/photo_1024x768.png}"
if [[ ! -f "$oracle/bin/python" ]]; then
  python3 -m venv "$oracle"
  "$oracle/bin/pip" install -q -r golden/requirements-oracle.txt pillow
fi
[[ -d "$vlm" ]] || "$oracle/bin/python" scripts/gen_bench_vlm.py "$vlm" >/dev/null
if [[ ! -f "$image" ]]; then
  "$oracle/bin/python" - "$image" <<'PY'
import sys
import numpy as np
from PIL import Image
y, x = np.mgrid[0:768, 0:1024]
img = np.stack([(x / 4) % 256, (y / 3) % 256, ((x + y) / 5) % 256], -1).astype(np.uint8)
img[200:400, 300:700] = np.random.default_rng(0).integers(0, 255, (200, 400, 3))
Image.fromarray(img).save(sys.argv[1])
PY
fi
echo "CPU: $(lscpu 2>/dev/null | grep -E 'Model name' | sed 's/.*: *//'), $(nproc) CPUs; threads $threads"
echo "flags: $(lscpu 2>/dev/null | grep -o -E 'avx[a-z0-9_]*|amx[a-z0-9_]*|fma' | sort -u | tr '\n' ' ')"
go build -o bin/infer ./cmd/infer
prompt="Describe the image."
archc=$(ARCHC_VENV="$venv" bin/infer generate --model "$vlm" --chat --image "$image" --prompt "$prompt" --max-tokens 2 --threads "$threads" --json -q)
hf=$("$oracle/bin/python" scripts/bench_vision_hf.py "$vlm" "$image" "$prompt" "$threads")
python3 - "$archc" "$hf" <<'PY'
import json, sys
a, h = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"image: {a['image_tiles']} tiles (HF {h['image_tiles']}), prompt {len(a['prompt_tokens'])} tokens (HF {h['prompt_tokens']})")
print(f"{'':28}{'archc':>10}{'HF fp32':>10}{'archc/HF':>10}")
for k, name in [("image_encode_s", "image encode (s)"), ("time_to_first_token_s", "time to first token (s)")]:
    print(f"{name:28}{a[k]:10.2f}{h[k]:10.2f}{h[k] / a[k]:9.2f}x")
print(f"encoder share of archc's time to first token: {a['image_encode_s'] / a['time_to_first_token_s']:.0%}")
PY
