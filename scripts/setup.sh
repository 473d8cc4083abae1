#!/usr/bin/env bash
# Creates the venv ($ARCHC_VENV if set, else .venv in the repository root) with the pinned IREE compiler and
# runtime and zig (the C compiler of driver/kernels) from requirements.txt, then prints their versions. Idempotent: when
# the venv already satisfies requirements.txt it only prints the versions.
#
# Usage: scripts/setup.sh            (PYTHON=python3.12 scripts/setup.sh to pick
#                                     the interpreter used to create the venv)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${ARCHC_VENV:-$root/.venv}"
req="$root/requirements.txt"
stamp="$venv/.archc-requirements"
python="${PYTHON:-python3}"

if ! command -v "$python" >/dev/null 2>&1; then
  echo "setup.sh: $python not found: install Python 3.10+ (or set PYTHON=...)" >&2
  exit 1
fi

# Fast path: the venv was set up from this exact requirements.txt and still
# imports the runtime.
if [[ -x "$venv/bin/python" && -f "$stamp" ]] && cmp -s "$req" "$stamp" \
  && "$venv/bin/python" -c "import iree.runtime, iree.compiler, numpy" 2>/dev/null; then
  :
else
  if [[ ! -x "$venv/bin/python" ]]; then
    echo "setup.sh: creating $venv"
    "$python" -m venv "$venv" || {
      echo "setup.sh: '$python -m venv' failed: install the venv module (Debian/Ubuntu: apt-get install python3-venv)" >&2
      exit 1
    }
  fi
  echo "setup.sh: installing $(grep -v '^#' "$req" | xargs)"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
  cp "$req" "$stamp"
fi

"$venv/bin/python" - <<'PY'
import importlib.metadata as md
for p in ("iree-base-compiler", "iree-base-runtime", "numpy", "ziglang"):
    print(f"{p}=={md.version(p)}")
PY
"$venv/bin/iree-compile" --version | sed -n 's/^ *IREE compiler version/iree-compile/p'
