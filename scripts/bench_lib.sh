# Shared by scripts/bench.sh and scripts/bench_spec.sh: sourced, not run.
# The caller sets root (the repository root, its working directory) and
# defines die MESSAGE and note MESSAGE.
#
#   bench_resolve_models MODEL...   models to GGUF paths (bench_paths), and
#                                   the random-weight files still to write
#                                   (bench_synth)
#   bench_python MODULE... -- PIP_ARGS...
#                                   the peers' interpreter (bench_py)
#   bench_peers SKIP_LLAMA          bench_python for the random-weight
#                                   writer and (unless SKIP_LLAMA is 1)
#                                   llama.cpp, at the bench files' pins
#   bench_pins NAME...              NAME==VERSION pins from the bench files
#   bench_write_synth               writes bench_synth's files with $bench_py
#   bench_llama_cmake_args          llama.cpp's CMake flags for this host

# bench_resolve_models MODEL...: sets bench_paths to each MODEL's GGUF file,
# in order, and bench_synth to the SHAPE FORMAT PATH triples of the
# random-weight files among them that are not written yet. MODEL: smollm2
# or gemma3 (fetched into $ARCHC_MODELS if missing), SHAPE:FORMAT (a
# random-weight GGUF of a real model's body, scripts/gen_bench_gguf.py,
# kept in .cache/bench-models), or a path to a .gguf file.
bench_resolve_models() {
  local modeldir="${ARCHC_MODELS:-$root/.cache/models}" m p shape format
  bench_paths=()
  bench_synth=()
  for m in "$@"; do
    case "$m" in
      smollm2)
        scripts/fetch-models.sh >/dev/null || die "scripts/fetch-models.sh failed"
        p="$(ls "$modeldir"/smollm2/*.gguf 2>/dev/null | head -n 1)"
        [[ -n "$p" ]] || die "no GGUF in $modeldir/smollm2 after scripts/fetch-models.sh"
        ;;
      gemma3)
        scripts/fetch-gemma3.sh >/dev/null || die "scripts/fetch-gemma3.sh failed"
        p="$modeldir/gemma3/gemma-3-270m-q4_k_m.gguf"
        ;;
      *:*)
        if [[ -f "$m" ]]; then
          bench_paths+=("$m")
          continue
        fi
        shape="${m%%:*}" format="${m#*:}"
        p="$root/.cache/bench-models/$shape-$format.gguf"
        [[ -f "$p" ]] || bench_synth+=("$shape" "$format" "$p")
        bench_paths+=("$p")
        continue
        ;;
      *) p="$m" ;;
    esac
    [[ -f "$p" && "$p" == *.gguf ]] || die "model '$m': not smollm2, gemma3, SHAPE:FORMAT or an existing .gguf file"
    bench_paths+=("$p")
  done
}

# bench_llama_cmake_args: llama.cpp's CMake flags for a CPU-only build for
# this host. On x86-64 GGML_NATIVE=OFF with each instruction set the CPU has
# (/proc/cpuinfo) on, and AMX off: GGML_NATIVE=ON would turn AMX on on an
# AMX host, where llama.cpp's AMX path segfaults in prefill (issue 19). On
# other CPUs GGML_NATIVE=ON (set explicitly: llama.cpp turns its default off
# when SOURCE_DATE_EPOCH is set).
bench_llama_cmake_args() {
  local base="-DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF -DGGML_HIP=OFF -DGGML_SYCL=OFF -DGGML_BLAS=OFF"
  if [[ "$(uname -m)" != x86_64 ]]; then
    echo "-DGGML_NATIVE=ON $base"
    return
  fi
  local flags args="-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
  flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  local pair
  for pair in avx:AVX avx2:AVX2 fma:FMA f16c:F16C bmi2:BMI2 avx_vnni:AVX_VNNI avx512f:AVX512 \
    avx512vbmi:AVX512_VBMI avx512_vnni:AVX512_VNNI avx512_bf16:AVX512_BF16; do
    if [[ "$flags" == *" ${pair%%:*} "* ]]; then
      args+=" -DGGML_${pair#*:}=ON"
    else
      args+=" -DGGML_${pair#*:}=OFF"
    fi
  done
  echo "$args $base"
}

# bench_pins NAME...: the NAME==VERSION lines of scripts/requirements-bench.txt
# and golden/requirements-oracle.txt (the bench venv's pins), one per NAME,
# for a bench that needs only part of that venv.
bench_pins() {
  local n line
  for n in "$@"; do
    line="$(grep -h -i -m1 -E "^${n}==" scripts/requirements-bench.txt golden/requirements-oracle.txt | head -n 1)"
    [[ -n "$line" ]] || die "no pin for $n in scripts/requirements-bench.txt or golden/requirements-oracle.txt"
    echo "$line"
  done
}

# bench_python MODULE... -- PIP_ARGS...: sets bench_py to an interpreter that
# imports every MODULE: BENCH_PYTHON as given (checked), else .venv-bench,
# created when missing and given `pip install PIP_ARGS` (with llama.cpp's
# CMAKE_ARGS for this host, bench_llama_cmake_args, unless CMAKE_ARGS is
# set) when it lacks a MODULE. No MODULE: bench_py is python3.
bench_python() {
  local need=() pip=()
  while (($# > 0)) && [[ "$1" != -- ]]; do
    need+=("$1")
    shift
  done
  (($# > 0)) && shift
  pip=("$@")
  bench_py="${BENCH_PYTHON:-}"
  if [[ -n "$bench_py" ]]; then
    command -v "$bench_py" >/dev/null || die "BENCH_PYTHON=$bench_py: no such interpreter"
    _bench_has_modules "$bench_py" "${need[@]}" ||
      die "BENCH_PYTHON=$bench_py lacks one of: ${need[*]} (install scripts/requirements-bench.txt into it, or unset BENCH_PYTHON to build .venv-bench)"
    return
  fi
  if ((${#need[@]} == 0)); then
    bench_py=python3 # no peer: only the report needs Python
    return
  fi
  bench_py="$root/.venv-bench/bin/python"
  if [[ ! -x "$bench_py" ]] || ! _bench_has_modules "$bench_py" "${need[@]}"; then
    note "installing into .venv-bench: ${pip[*]} (llama.cpp compiled from source: 10 to 30 minutes on 2 cores, once)"
    [[ -x "$bench_py" ]] || python3 -m venv "$root/.venv-bench" || die "python3 -m venv .venv-bench failed (install python3-venv)"
    # CPU only, for this CPU's instruction sets (bench_llama_cmake_args).
    CMAKE_ARGS="${CMAKE_ARGS:-$(bench_llama_cmake_args)}" \
      CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" \
      nice -n 10 "$bench_py" -m pip install --quiet "${pip[@]}" ||
      die "pip install ${pip[*]} into .venv-bench failed (see above)"
    _bench_has_modules "$bench_py" "${need[@]}" || die ".venv-bench still lacks one of: ${need[*]}"
  fi
}

_bench_has_modules() { # _bench_has_modules PYTHON MODULE...: it imports every MODULE
  local py="$1" IFS=,
  shift
  (($# == 0)) || "$py" -c "import $*" >/dev/null 2>&1
}

# bench_write_synth: writes each file of bench_synth (bench_resolve_models)
# with scripts/gen_bench_gguf.py under $bench_py, SmolLM2's tokenizer in it.
bench_write_synth() {
  local i tok modeldir="${ARCHC_MODELS:-$root/.cache/models}"
  for ((i = 0; i < ${#bench_synth[@]}; i += 3)); do
    scripts/fetch-models.sh >/dev/null || die "scripts/fetch-models.sh failed (SmolLM2's tokenizer for the random-weight files)"
    tok="$(ls "$modeldir"/smollm2/*.gguf 2>/dev/null | head -n 1)"
    mkdir -p "$root/.cache/bench-models"
    note "writing ${bench_synth[i + 2]} (random weights; a minute or two)"
    "$bench_py" scripts/gen_bench_gguf.py "${bench_synth[i]}" "${bench_synth[i + 1]}" "${bench_synth[i + 2]}.tmp" --tokenizer "$tok" >&2 ||
      die "scripts/gen_bench_gguf.py ${bench_synth[i]} ${bench_synth[i + 1]} failed"
    mv "${bench_synth[i + 2]}.tmp" "${bench_synth[i + 2]}"
  done
}

# bench_peers SKIP_LLAMA: bench_python with what the random-weight files
# still to write need (gguf, numpy; after bench_resolve_models) and, unless
# SKIP_LLAMA is 1, llama-cpp-python, installed at the pins of the bench
# files when missing; sets bench_py.
bench_peers() {
  local need=() pins=() pipargs=()
  if ((${#bench_synth[@]} > 0)); then
    need+=(gguf numpy)
    pins+=(numpy gguf)
  fi
  if [[ "$1" != 1 ]]; then
    need+=(llama_cpp numpy)
    pins+=(llama-cpp-python numpy)
  fi
  ((${#pins[@]} == 0)) || mapfile -t pipargs < <(bench_pins $(printf '%s\n' "${pins[@]}" | sort -u))
  bench_python "${need[@]}" -- "${pipargs[@]}"
}
