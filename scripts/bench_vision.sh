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
# BENCH_VLM_SHAPE=qwen2-vl-2b instead runs a Qwen2-VL-2B-shaped random
# checkpoint (gen_bench_vlm.py qwen2-vl-2b) on square images of 224, 448
# and 896 pixels (256, 1024 and 4096 patches: 64, 256 and 1024 image
# tokens, the three default encoder sizes), archc only: the image encode
# time, time to first token and the encoder's share of it per size (HF's
# Qwen2VLProcessor needs torchvision's video processor, not installed).
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
if [[ "${BENCH_VLM_SHAPE:-}" == qwen2-vl-2b ]]; then
  vlm="${BENCH_VLM:-$models/qwen2-vl-2b-shape}"
  if [[ ! -f "$oracle/bin/python" ]]; then
    python3 -m venv "$oracle"
    "$oracle/bin/pip" install -q -r golden/requirements-oracle.txt pillow
  fi
  [[ -d "$vlm" ]] || "$oracle/bin/python" scripts/gen_bench_vlm.py "$vlm" qwen2-vl-2b >/dev/null
  for s in 224 448 896; do
    [[ -f "$models/square_$s.png" ]] || "$oracle/bin/python" - "$models/square_$s.png" "$s" <<'PY'
import sys
import numpy as np
from PIL import Image
s = int(sys.argv[2])
y, x = np.mgrid[0:s, 0:s]
Image.fromarray(np.stack([(x * 255 // s) % 256, (y * 255 // s) % 256, ((x + y) // 3) % 256], -1).astype(np.uint8)).save(sys.argv[1])
PY
  done
  echo "CPU: $(lscpu 2>/dev/null | grep -E 'Model name' | sed 's/.*: *//'), $(nproc) CPUs; threads $threads"
  echo "flags: $(lscpu 2>/dev/null | grep -o -E 'avx[a-z0-9_]*|amx[a-z0-9_]*|fma' | sort -u | tr '\n' ' ')"
  go build -o bin/infer ./cmd/infer
  printf '%-10s %8s %8s %12s %10s %8s\n' image patches tokens "encode (s)" "TTFT (s)" share
  for s in 224 448 896; do
    out=$(ARCHC_VENV="$venv" bin/infer generate --model "$vlm" --chat --image "$models/square_$s.png" --prompt "Describe the image." --max-tokens 1 --threads "$threads" --json -q)
    python3 - "$out" "$s" <<'PY'
import json, sys
a, s = json.loads(sys.argv[1]), int(sys.argv[2])
p = (s // 14) ** 2
print(f"{s}x{s:<6} {p:8d} {p // 4:8d} {a['image_encode_s']:12.2f} {a['time_to_first_token_s']:10.2f} {a['image_encode_s'] / a['time_to_first_token_s']:8.0%}   (compile {a['compile_s']:.0f} s, cached {a['compile_cached']})")
PY
  done
  exit 0
fi
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
