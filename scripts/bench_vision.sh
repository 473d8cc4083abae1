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
# llama.cpp's multimodal path runs with BENCH_VLM_GGUF=1 (below).
#
# BENCH_VLM_SHAPE=qwen2-vl-2b instead runs a Qwen2-VL-2B-shaped random
# checkpoint (gen_bench_vlm.py qwen2-vl-2b) on square images of 224, 448
# and 896 pixels (256, 1024 and 4096 patches: 64, 256 and 1024 image
# tokens, the three default encoder sizes), archc only: the image encode
# time, time to first token and the encoder's share of it per size (HF's
# Qwen2VLProcessor needs torchvision's video processor, not installed).
# BENCH_VLM_SHAPE=qwen3.5-0.8b runs a Qwen3.5-0.8B-shaped one (gen_bench_vlm.py
# qwen3.5-0.8b: 16-pixel patches) the same way on squares of 256 and 512
# pixels (256 and 1024 patches: 64 and 256 image tokens) and, with
# BENCH_VLM_LARGE=1, 1024 and 2048 (4096 patches, 1024 tokens, in the 5120
# size; 16384 patches, 4096 tokens, in an encoder size of 16384 asked for
# with --image-sizes, and a KV cache of 8192 positions: minutes each).
#
# BENCH_VLM_SHAPE=gemma3-4b, gemma3-4b-tower-1b (the 4B's tower on
# Gemma-3-1B's text shapes: F32 GGUF files small enough for the llama.cpp
# comparison), llava-1.5-tinyllama or lfm2-vl-450m runs that
# random checkpoint (gen_bench_vlm.py: gemma-3-4b-it's shapes; LLaVA-1.5's
# CLIP-L/14-336 tower on a TinyLlama-1.1B-shaped decoder; LFM2-VL-450M's
# shapes) on one square image of the family's default size (896 pixels:
# 4096 patches pooled to 256 tokens; 336: 576 patches and tokens; 512: one
# tile of 1024 patches, 256 tokens), archc beside HF transformers as above
# (one image, the same prompt and threads), and prints one table row:
# tiles, image and prompt tokens (HF's beside archc's), image encode and
# time to first token for both and HF/archc, the encoder's share of each
# time to first token, archc's compile time. Gemma 3 gets a 512-token
# prefill bucket (--prefill-buckets 16,64,512): its image tokens attend to
# each other and must share one prefill chunk.
#
# BENCH_VLM_GGUF=1 instead runs archc beside llama.cpp's multimodal path
# (libmtmd through llama-cpp-python: scripts/bench_vision_mtmd.py, in
# .venv-bench, scripts/requirements-bench.txt) on the same two GGUF files:
# the SmolVLM-256M-shaped checkpoint converted once (into FOLDER-gguf
# beside it) by golden/gguf_convert.py's write_vision_twins, as llama.cpp's
# converter writes SmolVLM (a text GGUF, llama architecture, and an mmproj
# "clip" GGUF, projector idefics3), in F32: both engines then compute in
# fp32 on fp32 weights, as the HF bench above (an F16 file would hand
# llama.cpp half the weight bytes to read while archc widens to f32, and the
# twins' F32 writer is the one checked against llama.cpp's converter). Its
# tokenizer gains one token, "\n\n" (byte-level "ĊĊ", with the merge "Ċ Ċ"),
# at a free id: the bench checkpoint has the fixtures' 271-token
# vocabulary, and llama.cpp's SmolVLM template looks "\n\n" up as one token
# (before the global image) and aborts without it; the real SmolVLM vocabulary
# has it, and with the merge both engines tokenize it so. Same image, prompt
# and threads; prints image encode (decoding, preprocessing and the encoder,
# every tile), time to first token, the image token counts and the ratios,
# and says so when llama.cpp's tiling gives another image token or prompt
# token count than archc's. With BENCH_VLM_SHAPE gemma3-4b, llava-1.5-tinyllama
# or lfm2-vl-450m it converts and runs that checkpoint instead (no added
# token; the family's square image; for Gemma 3 "\n\n" around mtmd's
# marker, as HF's processor writes them).
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
if [[ "${BENCH_VLM_SHAPE:-}" == qwen2-vl-2b || "${BENCH_VLM_SHAPE:-}" == qwen3.5-0.8b ]]; then
  shape="$BENCH_VLM_SHAPE"
  vlm="${BENCH_VLM:-$models/$shape-shape}"
  patch=14 sizes="224 448 896"
  if [[ "$shape" == qwen3.5-0.8b ]]; then
    patch=16 sizes="256 512"
    [[ -z "${BENCH_VLM_LARGE:-}" ]] || sizes="256 512 1024 2048"
  fi
  if [[ ! -f "$oracle/bin/python" ]]; then
    python3 -m venv "$oracle"
    "$oracle/bin/pip" install -q -r golden/requirements-oracle.txt pillow
  fi
  [[ -d "$vlm" ]] || "$oracle/bin/python" scripts/gen_bench_vlm.py "$vlm" "$shape" >/dev/null
  for s in $sizes; do
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
  for s in $sizes; do
    extra=()
    (( (s / patch) * (s / patch) <= 5120 )) || extra=(--image-sizes "$(( (s / patch) * (s / patch) ))" --max-len 8192)
    out=$(ARCHC_VENV="$venv" bin/infer generate --model "$vlm" --chat --image "$models/square_$s.png" --prompt "Describe the image." --max-tokens 1 --threads "$threads" --json -q "${extra[@]}")
    python3 - "$out" "$s" "$patch" <<'PY'
import json, sys
a, s, patch = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
p = (s // patch) ** 2
print(f"{s}x{s:<6} {p:8d} {p // 4:8d} {a['image_encode_s']:12.2f} {a['time_to_first_token_s']:10.2f} {a['image_encode_s'] / a['time_to_first_token_s']:8.0%}   (compile {a['compile_s']:.0f} s, cached {a['compile_cached']})")
PY
  done
  exit 0
fi
case "${BENCH_VLM_SHAPE:-}" in gemma3-4b | gemma3-4b-tower-1b) size=896 ;; llava-1.5-tinyllama) size=336 ;; lfm2-vl-450m) size=512 ;; *) size= ;; esac
if [[ -n "$size" && -z "${BENCH_VLM_GGUF:-}" ]]; then
  shape="$BENCH_VLM_SHAPE"
  vlm="${BENCH_VLM:-$models/$shape-shape}"
  image="${BENCH_IMAGE:-$models/square_$size.png}"
  if [[ ! -f "$oracle/bin/python" ]]; then
    python3 -m venv "$oracle"
    "$oracle/bin/pip" install -q -r golden/requirements-oracle.txt pillow
  fi
  [[ -d "$vlm" ]] || "$oracle/bin/python" scripts/gen_bench_vlm.py "$vlm" "$shape" >/dev/null
  [[ -f "$image" ]] || "$oracle/bin/python" - "$image" "$size" <<'PY'
import sys
import numpy as np
from PIL import Image
s = int(sys.argv[2])
y, x = np.mgrid[0:s, 0:s]
Image.fromarray(np.stack([(x * 255 // s) % 256, (y * 255 // s) % 256, ((x + y) // 3) % 256], -1).astype(np.uint8)).save(sys.argv[1])
PY
  echo "CPU: $(lscpu 2>/dev/null | grep -E 'Model name' | sed 's/.*: *//'), $(nproc) CPUs; threads $threads"
  echo "flags: $(lscpu 2>/dev/null | grep -o -E 'avx[a-z0-9_]*|amx[a-z0-9_]*|fma' | sort -u | tr '\n' ' ')"
  echo "load before: $(uptime | sed 's/.*load average: //')"
  go build -o bin/infer ./cmd/infer
  prompt="Describe the image."
  extra=()  # Gemma 3's 256 image tokens attend to each other: one prefill chunk, past the CPU's default buckets (16, 64)
  [[ "$shape" != gemma3-4b ]] || extra=(--prefill-buckets 16,64,512)
  archc=$(ARCHC_VENV="$venv" bin/infer generate --model "$vlm" --chat --image "$image" --prompt "$prompt" --max-tokens 1 --threads "$threads" --json -q "${extra[@]}")
  hf=$("$oracle/bin/python" scripts/bench_vision_hf.py "$vlm" "$image" "$prompt" "$threads")
  python3 - "$archc" "$hf" "$shape" "$size" <<'PY'
import json, sys
a, h, shape, size = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])
ids = a["prompt_tokens"]
a_img = ids.count(max(set(ids), key=ids.count))  # the image placeholder: the id the prompt repeats most
print(f"{'shape':20} {'image':>9} {'tiles':>7} {'img tok':>9} {'prompt':>9} {'encode (s)':>10} {'HF':>7} {'HF/a':>5}"
      f" {'TTFT (s)':>9} {'HF':>7} {'HF/a':>5} {'share':>6} {'HF':>5} {'compile':>8}")
print(f"{shape:20} {f'{size}x{size}':>9} {a['image_tiles']:>3}/{h['image_tiles']:<3} {a_img:>4}/{h['image_tokens']:<4}"
      f" {len(ids):>4}/{h['prompt_tokens']:<4} {a['image_encode_s']:10.2f} {h['image_encode_s']:7.2f}"
      f" {h['image_encode_s'] / a['image_encode_s']:5.2f} {a['time_to_first_token_s']:9.2f} {h['time_to_first_token_s']:7.2f}"
      f" {h['time_to_first_token_s'] / a['time_to_first_token_s']:5.2f} {a['image_encode_s'] / a['time_to_first_token_s']:6.0%}"
      f" {h['image_encode_s'] / h['time_to_first_token_s']:5.0%} {a['compile_s']:7.0f}s   (archc/HF counts; compile cached {a['compile_cached']})")
PY
  echo "load after: $(uptime | sed 's/.*load average: //')"
  exit 0
fi
vlm="${BENCH_VLM:-$models/${BENCH_VLM_SHAPE:-smolvlm-256m}-shape}"
image="${BENCH_IMAGE:-$models/photo_1024x768.png}"
[[ -z "$size" ]] || image="${BENCH_IMAGE:-$models/square_$size.png}"
if [[ -n "${BENCH_VLM_GGUF:-}" ]]; then
  bench_venv="${BENCH_VENV:-$root/.venv-bench}"
  if [[ ! -f "$bench_venv/bin/python" ]]; then
    # llama.cpp built for this CPU with AMX off, as bench.sh builds it
    # (bench_lib.sh's bench_llama_cmake_args: its AMX path segfaults).
    source scripts/bench_lib.sh
    python3 -m venv "$bench_venv"
    CMAKE_ARGS="${CMAKE_ARGS:-$(bench_llama_cmake_args)}" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
      "$bench_venv/bin/pip" install -q -r scripts/requirements-bench.txt
  fi
  if [[ ! -f "$oracle/bin/python" && ( ! -d "$vlm" || ! -f "$image" ) ]]; then
    python3 -m venv "$oracle"
    "$oracle/bin/pip" install -q -r golden/requirements-oracle.txt pillow
  fi
  [[ -d "$vlm" ]] || "$oracle/bin/python" scripts/gen_bench_vlm.py "$vlm" ${BENCH_VLM_SHAPE:-} >/dev/null
  gdir="${vlm%/}-gguf"
  if [[ ! -f "$gdir/model.f32.gguf" || ! -f "$gdir/mmproj.f32.gguf" ]]; then
    mkdir -p "$gdir"
    "$venv/bin/python" - "$vlm" "$gdir" <<'PY'
import json, logging, os, sys, tempfile
logging.basicConfig(level=logging.ERROR)  # gguf-py's notes on keys written twice
sys.path.insert(0, "golden")
import gguf_convert as conv
src, out = sys.argv[1], sys.argv[2]
with tempfile.TemporaryDirectory() as tmp:
    folder = os.path.join(tmp, os.path.basename(os.path.abspath(src)))
    os.mkdir(folder)
    for fn in os.listdir(src):
        os.symlink(os.path.abspath(os.path.join(src, fn)), os.path.join(folder, fn))
    with open(os.path.join(src, "tokenizer.json")) as f:
        tok = json.load(f)
    family = json.load(open(os.path.join(src, "config.json")))["model_type"]
    vocab, merges = tok["model"]["vocab"], tok["model"].get("merges")
    if family in ("idefics3", "smolvlm") and "ĊĊ" not in vocab:  # "\n\n" as one token (see the header)
        used = set(vocab.values()) | {a["id"] for a in tok.get("added_tokens", [])}
        vocab["ĊĊ"] = min(set(range(len(used) + 1)) - used)
        merges.append(["Ċ", "Ċ"] if merges and isinstance(merges[0], list) else "Ċ Ċ")
        os.remove(os.path.join(folder, "tokenizer.json"))
        with open(os.path.join(folder, "tokenizer.json"), "w") as f:
            json.dump(tok, f, ensure_ascii=False)
    conv.write_vision_twins(folder, out)
print(f"converted {src} to {out}/model.f32.gguf and mmproj.f32.gguf (F32)")
PY
  fi
  if [[ -n "$size" && ! -f "$image" ]]; then
    "$oracle/bin/python" - "$image" "$size" <<'PY'
import sys
import numpy as np
from PIL import Image
s = int(sys.argv[2])
y, x = np.mgrid[0:s, 0:s]
Image.fromarray(np.stack([(x * 255 // s) % 256, (y * 255 // s) % 256, ((x + y) // 3) % 256], -1).astype(np.uint8)).save(sys.argv[1])
PY
  fi
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
  echo "load before: $(uptime | sed 's/.*load average: //')"
  go build -o bin/infer ./cmd/infer
  prompt="Describe the image."
  extra=()
  [[ "${BENCH_VLM_SHAPE:-}" != gemma3-4b ]] || extra=(--prefill-buckets 16,64,512)
  archc=$(ARCHC_VENV="$venv" bin/infer generate --model "$gdir/model.f32.gguf" --mmproj "$gdir/mmproj.f32.gguf" --chat --image "$image" --prompt "$prompt" --max-tokens 1 --threads "$threads" --json -q "${extra[@]}")
  mtmd_args=()  # HF's Gemma 3 processor puts "\n\n" around the image; llama.cpp's wrappers do not
  [[ "${BENCH_VLM_SHAPE:-}" != gemma3-4b* ]] || mtmd_args=(--image-text '\n\n{marker}\n\n')
  lcpp=$("$bench_venv/bin/python" scripts/bench_vision_mtmd.py "$gdir/model.f32.gguf" "$gdir/mmproj.f32.gguf" "$image" "$prompt" --threads "$threads" "${mtmd_args[@]}" 2>/dev/null)
  python3 - "$archc" "$lcpp" "$image" <<'PY'
import json, sys
a, l = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"model: {a['family']} GGUF pair, F32; image {sys.argv[3]}; llama-cpp-python {l['llama_cpp_python']}")
print(f"llama.cpp: {l['system_info']}")
print(f"archc: kernels {a['kernels']}, precision {a['precision']}, compile {a['compile_s']:.0f} s (cached {a['compile_cached']}), load {a['load_s']:.1f} s; llama.cpp load {l['load_s']:.1f} s")
# archc's prompt holds every image token; its image tokens are those with the
# image placeholder's id, the one id the prompt repeats most.
ids = a["prompt_tokens"]
img_id = max(set(ids), key=ids.count)
a_img = ids.count(img_id)
print(f"{'':28}{'archc':>10}{'llama.cpp':>11}{'archc/llama.cpp':>17}   (time ratio: above 1, archc is slower)")
for k, name in [("image_encode_s", "image encode (s)"), ("time_to_first_token_s", "time to first token (s)")]:
    print(f"{name:28}{a[k]:10.2f}{l[k]:11.2f}{a[k] / l[k]:16.2f}x")
print(f"{'image tokens':28}{a_img:10d}{l['image_tokens']:11d}")
print(f"{'tiles':28}{a['image_tiles']:10d}{l['image_chunks']:11d}")
print(f"{'prompt tokens':28}{len(ids):10d}{l['prompt_tokens']:11d}")
print(f"llama.cpp's encode: {l['image_preprocess_s']:.2f} s reading, decoding and preprocessing, {l['image_encoder_s']:.2f} s encoder")
if a_img != l["image_tokens"] or len(ids) != l["prompt_tokens"]:
    print(f"NOTE: llama.cpp's preprocessing gives {l['image_tokens']} image tokens and {l['prompt_tokens']} prompt tokens, "
          f"archc's {a_img} and {len(ids)}: the times are not for the same work")
print(f"first token: archc {a['tokens'][0]}, llama.cpp {l['tokens'][0]} (random weights: informative)")
PY
  echo "load after: $(uptime | sed 's/.*load average: //')"
  exit 0
fi
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
