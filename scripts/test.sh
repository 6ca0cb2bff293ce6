#!/usr/bin/env bash
# Runs every check and test of the repository: gofmt, go vet, staticcheck
# (pinned, from the Go module proxy) and go test -race in every Go module (the root's ./... does not reach nested modules
# such as interop/ and bench/, so each go.mod is visited in turn), then the
# official TypeScript client against the example app
# (scripts/interop-ts.sh; it installs Node 22 and the client into caches
# on first use), then the example app's MCP App rendered in headless
# Chromium by a host built on the official AppBridge
# (scripts/interop-apps.sh; it needs Debian's chromium, which .ci/run
# installs), then the official MCP conformance suite against
# examples/conformance (scripts/conformance.sh) against one process and
# through a round-robin proxy in front of three instances sharing one
# redis-server (scripts/conformance-proxy.sh). MCPMW_SKIP_INTEROP_TS=1
# skips the TypeScript client, MCPMW_SKIP_INTEROP_APPS=1 the browser test,
# MCPMW_SKIP_CONFORMANCE=1 the conformance runs.
#
# Every part runs, whatever the one before it found, and the run ends with
# one line for all of them (scripts/verdict.sh):
#
#   total: N passed, N failed
#
# counting Go packages, TypeScript client tests, browser tests and scored
# conformance scenarios. The exit status is non-zero when anything failed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/verdict.sh

LOGS="$(mktemp -d "${TMPDIR:-/tmp}/mcpmw-test.XXXXXX")"
trap 'rm -rf "$LOGS"' EXIT

# run LOG CMD...: runs CMD, its output shown and kept in LOG; sets RC.
run() {
  local log=$1
  shift
  set +e
  "$@" 2>&1 | tee "$log"
  RC=${PIPESTATUS[0]}
  set -e
}

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"
fi
verdict_check gofmt "$([ -z "$unformatted" ] && echo 0 || echo 1)"

staticcheck=honnef.co/go/tools/cmd/staticcheck@v0.8.2
for mod in $(find . -name go.mod -not -path '*/node_modules/*' -exec dirname {} \; | sort); do
  echo "== $mod"
  run "$LOGS/vet" bash -c "cd '$mod' && go vet ./..."
  verdict_check "go vet $mod" "$RC"
  run "$LOGS/staticcheck" bash -c "cd '$mod' && go run '$staticcheck' ./..."
  verdict_check "staticcheck $mod" "$RC"
  run "$LOGS/go" bash -c "cd '$mod' && go test -race -count=1 ./..."
  verdict_go "go packages $mod" "$LOGS/go" "$RC"
done

if [ -z "${MCPMW_SKIP_INTEROP_TS:-}" ]; then
  echo "== interop: TypeScript client"
  run "$LOGS/ts" bash scripts/interop-ts.sh
  verdict_ts "TypeScript client tests" "$LOGS/ts" "$RC"
fi

if [ -z "${MCPMW_SKIP_INTEROP_APPS:-}" ]; then
  echo "== interop: MCP Apps in headless Chromium"
  run "$LOGS/apps" bash scripts/interop-apps.sh
  verdict_ts "MCP Apps browser tests" "$LOGS/apps" "$RC"
fi

if [ -z "${MCPMW_SKIP_CONFORMANCE:-}" ]; then
  echo "== conformance"
  run "$LOGS/conformance" bash scripts/conformance.sh
  verdict_conformance "conformance scenarios (scored)" "$LOGS/conformance" "$RC"
  echo "== conformance through a round-robin proxy (3 instances, one Redis)"
  run "$LOGS/conformance-proxy" bash scripts/conformance-proxy.sh
  verdict_conformance "conformance scenarios through the proxy (scored)" "$LOGS/conformance-proxy" "$RC"
fi

verdict_print
