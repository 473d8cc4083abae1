#!/usr/bin/env bash
# Profiles one archc entry point with IREE's own tools: compiles the model
# (archc compile, cached) with its weights written as an IREE parameter
# archive (--irpa), times the function with iree-benchmark-module, then
# records a HAL profile of one more run (--device_profiling_mode=
# host-execution) and prints iree-profile's statistics summed per executable
# function: which dispatches the time goes to.
#
# Usage: scripts/profile.sh MODEL [FUNCTION] [POS]
#   MODEL     a model folder or .gguf (e.g. .cache/models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf)
#   FUNCTION  decode_1 (default), or prefill_<S>
#   POS       tokens already held in the KV cache (decode) or the start
#             position (prefill); default 40
# Environment:
#   PROFILE_THREADS  task workers (2); PROFILE_OUT folder (.cache/profile/<time>);
#   PROFILE_MAX_LEN  --max-len (1024); PROFILE_REPS benchmark repetitions (50)
#   PROFILE_KERNELS  archc compile --kernels (auto: the best this CPU runs but
#                    amx, which IREE's tools cannot run; avx512, avx2 or none)
#   PROFILE_PRECISION archc compile --precision (f32; int8)
# It prints the CPU (lscpu's model and flags) and the load average first:
# the figures mean little without them.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model="${1:?usage: scripts/profile.sh MODEL [FUNCTION] [POS]}"
fn="${2:-decode_1}"
pos="${3:-40}"
threads="${PROFILE_THREADS:-2}"
maxlen="${PROFILE_MAX_LEN:-1024}"
reps="${PROFILE_REPS:-50}"
kernels="${PROFILE_KERNELS:-auto}"
precision="${PROFILE_PRECISION:-f32}"
# IREE's tools cannot run the amx kernels: Linux grants a process AMX tile
# state only when it asks (arch_prctl), and clears the grant at exec, so
# iree-benchmark-module would die of SIGILL at the first tile instruction.
# On an AMX host auto means the AVX-512 kernels here (prefill then runs the
# f32 GEMM, not the tile path archc's own runtime takes).
if [ "$kernels" = amx ]; then
  echo "profile.sh: iree-benchmark-module cannot run the amx kernels (no AMX permission in a process it execs); give PROFILE_KERNELS=avx512" >&2
  exit 2
fi
if [ "$kernels" = auto ] && grep -qw amx_bf16 /proc/cpuinfo 2>/dev/null; then
  kernels=avx512
fi
out="${PROFILE_OUT:-$root/.cache/profile/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
"$root/scripts/setup.sh" >/dev/null
(cd "$root" && go build -o bin/ ./cmd/archc)
venv="${ARCHC_VENV:-$root/.venv}"

"$root/bin/archc" compile "$model" --max-len "$maxlen" --kernels "$kernels" --precision "$precision" -o "$out/model.vmfb" --irpa "$out/model.irpa"
echo "== CPU ($(nproc) cores; $(uptime | sed 's/.*load/load/')); archc kernels: $kernels, precision $precision"
lscpu 2>/dev/null | grep -E 'Model name|Flags' | sed 's/  */ /g' || true

case "$fn" in
decode_*)
  b="${fn#decode_}"
  ids=$(printf '1%.0s,' $(seq "$b")); ids="${ids%,}"; ids="${ids//,/ }"
  ps=$(printf "$pos%.0s " $(seq "$b")); sl=$(seq -s ' ' 0 $((b - 1)))
  inputs=(--input="${b}xi32=${ids}" --input="${b}xi32=${ps% }" --input="${b}xi32=${sl}")
  ;;
prefill_*)
  s="${fn#prefill_}"
  # formats/abi.PrefillName: tokens, slot, start, real tokens, total length.
  inputs=(--input="1x${s}xi32=1" --input="i32=0" --input="i32=${pos}" --input="i32=${s}" --input="i32=$((pos + s))")
  ;;
*)
  echo "profile.sh: unknown function $fn (decode_<B> or prefill_<S>)" >&2
  exit 2
  ;;
esac
common=(--module="$out/model.vmfb" --parameters=model="$out/model.irpa" --device=local-task
  --task_topology_group_count="$threads" --function="$fn" "${inputs[@]}")

echo "== iree-benchmark-module $fn (pos $pos, $threads threads)"
"$venv/bin/iree-benchmark-module" "${common[@]}" --benchmark_repetitions="$reps" \
  --benchmark_report_aggregates_only=true 2>&1 | grep -E "^BM_|Benchmark|---" || true

echo "== iree-profile statistics: time per executable function (one run, local-task host execution)"
# local-task records host-execution events (dispatch-events is not
# implemented by the local HAL in IREE 3.13).
"$venv/bin/iree-benchmark-module" "${common[@]}" --benchmark_min_time=1x \
  --device_profiling_mode=host-execution,executable-metadata,queue-events \
  --device_profiling_output="$out/profile.ireeprof" >/dev/null 2>&1
"$venv/bin/iree-profile" statistics "$out/profile.ireeprof" >"$out/statistics.txt"
"$venv/bin/python" - "$out/statistics.txt" <<'PY'
import re, sys
rows = []
for line in open(sys.argv[1]):
    m = re.search(r"host_execute (\S+)\s+count=(\d+) total=([\d.]+) (ns|us|ms|s)\b", line)
    if m:
        ms = float(m.group(3)) * {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(4)]
        rows.append((ms, m.group(1), int(m.group(2))))
rows.sort(reverse=True)
total = sum(r[0] for r in rows)
print(f"{total:9.3f} ms in {len(rows)} executable functions")
for ms, name, n in rows[:15]:
    print(f"{ms:9.3f} ms {100 * ms / total:5.1f}%  x{n:<5d} {name}")
kinds = {}
for ms, name, _ in rows:
    k = "archc kernels (mm_*)" if name.startswith("mm") else "attention (matmul_like, softmax)" if ("matmul_like" in name or "softmax" in name) else "other IREE dispatches"
    kinds[k] = kinds.get(k, 0) + ms
for k, ms in sorted(kinds.items(), key=lambda x: -x[1]):
    print(f"{ms:9.3f} ms {100 * ms / total:5.1f}%  {k}")
PY
echo "profile: $out/profile.ireeprof (iree-profile statistics|executable|queue ...)"
