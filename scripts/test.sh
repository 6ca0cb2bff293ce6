#!/usr/bin/env bash
# Runs every check and test of every Go module in the repository: gofmt, go
# vet, and go test -race. The root's ./... does not reach nested modules
# (interop/, bench/ ...), so each go.mod is visited in turn.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

status=0
for mod in $(find . -name go.mod -not -path '*/node_modules/*' -exec dirname {} \; | sort); do
  echo "== $mod"
  (cd "$mod" && go vet ./... && go test -race -count=1 ./...) || status=1
done
exit $status
