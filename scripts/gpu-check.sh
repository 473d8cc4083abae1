#!/usr/bin/env bash
# archc on an NVIDIA GPU, in two halves (issue 22):
#
#   scripts/gpu-check.sh prepare   on a CPU machine with the repository's venv
#   scripts/gpu-check.sh run       on the GPU machine (no network, no compiler)
#
# prepare writes .gpu/ (git-ignored): bin/infer, the iree-base-runtime wheel
# for the GPU machine's Python (3.12), the compiler's version line, and every
# CUDA module the run needs, compiled here (iree-compile runs on a CPU),
# under .gpu/modules/<sha256 of the MLIR>.vmfb: the golden fixtures' modules
# (decode_1 + prefill_16, the shapes golden TestGPUCompile compiles, whose
# cache prepare reuses), two fixtures' batched modules (decode 1 and 4) and
# the two benchmark models' (decode 1, 8, 64 and a 512-token prefill chunk;
# planned from the safetensors header alone, scripts/gpu_bench_model.py
# --header-only). Carry .gpu to the GPU machine.
#
# run installs the wheel into /tmp, makes a venv whose iree-compile replays
# the carried modules (it fails for any MLIR prepare did not compile), then
# scripts/gpu_check.py: every fixture's greedy tokens through `infer serve
# --device cuda` against its HF oracle, batched == single on two fixtures,
# then the benchmark on random-weight f16 Llama-3.2-1B- and Qwen3-8B-shaped
# models (weights written there): decode tok/s at batch 1, 8, 64, prefill
# tok/s for 512 tokens, as fractions of the H200's ~4.8 TB/s. It prints one
# table and writes it to $OUT/gpu-check.txt when OUT is set. Sized to end
# within 8 minutes on an H200 (the weights take ~1 min to write).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
g=.gpu
# The benchmark modules' shapes; serve adds --max-batch 64 (as many slots
# as the largest batch, what archc compile plans).
bench_shapes=(--decode-batches 1,8,64 --prefill-buckets 512 --max-len 1024)
batched_fixtures=(llama-tied qwen3-tied)

prepare() {
  mkdir -p "$g/bin" "$g/whl" "$g/modules" "$g/bench"
  go build -o "$g/bin/infer" ./cmd/infer
  go build -o "$g/bin/archc" ./cmd/archc
  local venv="${ARCHC_VENV:-$root/.venv}" version
  version="$(grep '^iree-base-runtime==' requirements.txt | cut -d= -f3)"
  "$venv/bin/iree-compile" --version >"$g/compiler-version"
  if ! ls "$g"/whl/iree_base_runtime-"$version"-cp312-*.whl >/dev/null 2>&1; then
    "$venv/bin/python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
      -d "$g/whl" "iree-base-runtime==$version"
  fi
  local fixture_shapes=(--target cuda --decode-batches 1 --prefill-buckets 16)
  local f name
  for f in golden/testdata/*/oracle.json golden/testdata/llama-tied/model.q8_0.gguf; do
    [[ $f == *.gguf ]] && model=$f || model="$(dirname "$f")"
    module "$model" "${fixture_shapes[@]}" || echo "gpu-check: $model does not compile for cuda (golden TestGPUCompile lists the known failures)" >&2
  done
  for name in "${batched_fixtures[@]}"; do
    module "golden/testdata/$name" --target cuda --decode-batches 1,4 --prefill-buckets 16
  done
  for name in llama-3.2-1b qwen3-8b; do
    python3 scripts/gpu_bench_model.py "$name" "$g/bench/$name" --header-only
    module "$g/bench/$name" --target cuda "${bench_shapes[@]}"
    rm "$g/bench/$name/model.safetensors" # 2.5 and 16 GB sparse: written again there, same header
  done
  du -sh "$g"
}

# module MODEL FLAGS...: compiles MODEL's module (archc compile, from the
# compile cache when it is there) into .gpu/modules/<sha256 of its MLIR>.
module() {
  local model=$1 mlir sum
  shift
  mlir="$(mktemp)"
  "$g/bin/archc" emit "$model" "$@" -o "$mlir" 2>/dev/null
  sum="$(sha256sum <"$mlir" | cut -c1-64)"
  rm -f "$mlir"
  if [[ ! -s "$g/modules/$sum.vmfb" ]]; then
    nice -n 10 "$g/bin/archc" compile "$model" "$@" -o "$g/modules/$sum.vmfb.tmp" 2>"$g/modules/last.log" || return 1
    mv "$g/modules/$sum.vmfb.tmp" "$g/modules/$sum.vmfb"
  fi
  echo "gpu-check: $model $* -> $sum.vmfb"
}

run() {
  [[ -x "$g/bin/infer" && -s "$g/compiler-version" ]] || { echo "gpu-check: no $g/ here: run scripts/gpu-check.sh prepare on a CPU machine and carry $g" >&2; exit 1; }
  nvidia-smi -L || true
  local site=/tmp/archc-site venv=/tmp/archc-venv
  python3 -m pip install -q --no-index --no-deps --no-compile --target "$site" "$g"/whl/iree_base_runtime-*.whl
  mkdir -p "$venv/bin"
  # archc starts Python isolated (-I, which ignores PYTHONPATH): the
  # wrapper drops -I so the runtime in $site and the machine's numpy load.
  cat >"$venv/bin/python" <<EOF
#!/usr/bin/env bash
args=(); for a in "\$@"; do [[ \$a == -I ]] || args+=("\$a"); done
PYTHONPATH=$site exec python3 "\${args[@]}"
EOF
  # iree-compile replays the carried modules by the SHA-256 of the MLIR.
  cat >"$venv/bin/iree-compile" <<EOF
#!/usr/bin/env bash
if [[ \${1:-} == --version ]]; then cat "$root/$g/compiler-version"; exit 0; fi
out=""; prev=""; for a in "\$@"; do [[ \$prev == -o ]] && out=\$a; prev=\$a; done
sum=\$(sha256sum | cut -c1-64)
if [[ -s "$root/$g/modules/\$sum.vmfb" ]]; then cp "$root/$g/modules/\$sum.vmfb" "\$out"; exit 0; fi
echo "gpu-check: no carried module for this MLIR (sha256 \$sum): run scripts/gpu-check.sh prepare with the same tree" >&2
exit 1
EOF
  chmod +x "$venv/bin/python" "$venv/bin/iree-compile"
  export ARCHC_VENV=$venv XDG_CACHE_HOME=/tmp/archc-xdg
  local report="${OUT:-/tmp}/gpu-check.txt"
  python3 -u scripts/gpu_check.py --infer "$g/bin/infer" --bench-dir /tmp/archc-bench \
    --batched "$(IFS=,; echo "${batched_fixtures[*]}")" --bench-flags "--max-batch 64 ${bench_shapes[*]}" --report "$report"
}

case "${1:-}" in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: scripts/gpu-check.sh prepare|run" >&2; exit 2 ;;
esac
