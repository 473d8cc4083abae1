#!/bin/sh
# emit-replay.sh OUTDIR — emit every golden fixture's module (archc emit
# --no-kernels) with loc(...) and #loc lines stripped, one file per model,
# so that two trees can be compared op for op (`diff -r BEFORE AFTER`): a
# refactor of the .arch language or the families must leave it unchanged.
# Three models per fixture where it has them: the Hugging Face folder
# (FIXTURE.mlir), its model.f32.gguf (FIXTURE.gguf.mlir) and, where its
# config.json lists layer_types or no_rope_layers, a copy without them
# (FIXTURE.nolists.mlir), so that the families' defaults for those lists
# are compared too. Needs no IREE compile. Run from the repository root.
set -eu
out=${1:?usage: scripts/emit-replay.sh OUTDIR}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/archc" ./cmd/archc
emit() { # emit NAME MODEL
  if "$tmp/archc" emit "$2" --no-kernels >"$tmp/raw" 2>"$out/$1.err"; then
    rm -f "$out/$1.err"
  fi
  sed -e 's/ loc(.*$//' -e '/^#loc/d' "$tmp/raw" >"$out/$1.mlir"
}
for d in golden/testdata/*/; do
  f=$(basename "$d")
  [ -f "$d/config.json" ] || continue
  emit "$f" "$d"
  [ -f "$d/model.f32.gguf" ] && emit "$f.gguf" "$d/model.f32.gguf"
  if grep -q '"layer_types"\|"no_rope_layers"' "$d/config.json"; then
    mkdir "$tmp/$f"
    for x in "$d"*; do ln -s "$(cd "$(dirname "$x")" && pwd)/$(basename "$x")" "$tmp/$f/"; done
    rm "$tmp/$f/config.json"
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); [c.pop(k, None) for k in ("layer_types", "no_rope_layers")]; json.dump(c, open(sys.argv[2], "w"))' "$d/config.json" "$tmp/$f/config.json"
    emit "$f.nolists" "$tmp/$f"
  fi
done
