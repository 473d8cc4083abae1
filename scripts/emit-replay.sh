#!/bin/sh
# emit-replay.sh OUTDIR — emit every golden fixture's module (archc emit
# --no-kernels) with loc(...) and #loc lines stripped, one file per fixture,
# so that two trees can be compared op for op (`diff -r BEFORE AFTER`): a
# refactor of the .arch language or the families must leave it unchanged.
# Needs no IREE compile. Run from the repository root.
set -eu
out=${1:?usage: scripts/emit-replay.sh OUTDIR}
mkdir -p "$out"
bin=$(mktemp -d)/archc
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/archc
for d in golden/testdata/*/; do
  f=$(basename "$d")
  [ -f "$d/config.json" ] || continue
  if "$bin" emit "$d" --no-kernels >"$out/$f.raw" 2>"$out/$f.err"; then
    rm -f "$out/$f.err"
  fi
  sed -e 's/ loc(.*$//' -e '/^#loc/d' "$out/$f.raw" >"$out/$f.mlir"
  rm -f "$out/$f.raw"
done
