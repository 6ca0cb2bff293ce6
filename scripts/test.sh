#!/usr/bin/env bash
# Runs every check and test of the repository: gofmt, go vet, staticcheck
# (pinned, from the Go module proxy) and go test -race in every Go module (the root's ./... does not reach nested modules
# such as interop/ and bench/, so each go.mod is visited in turn), then the
# official MCP conformance suite against examples/conformance
# (scripts/conformance.sh; it installs Node 22 and the suite into a cache on
# first use). Between the two, the official TypeScript client drives the
# example app (scripts/interop-ts.sh; same Node, the client installed from
# interop/ts/package-lock.json into a cache). MCPMW_SKIP_INTEROP_TS=1 skips
# the TypeScript client, MCPMW_SKIP_CONFORMANCE=1 the conformance suite.
set -euo pipefail
cd "$(dirname "$0")/.."

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

staticcheck=honnef.co/go/tools/cmd/staticcheck@v0.8.2
status=0
for mod in $(find . -name go.mod -not -path '*/node_modules/*' -exec dirname {} \; | sort); do
  echo "== $mod"
  (cd "$mod" && go vet ./... && go run "$staticcheck" ./... && go test -race -count=1 ./...) || status=1
done
[ "$status" = 0 ] || { echo "go tests failed"; exit "$status"; }

if [ -z "${MCPMW_SKIP_INTEROP_TS:-}" ]; then
  echo "== interop: TypeScript client"
  bash scripts/interop-ts.sh
fi

if [ -z "${MCPMW_SKIP_CONFORMANCE:-}" ]; then
  echo "== conformance"
  bash scripts/conformance.sh
fi
