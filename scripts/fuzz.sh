#!/usr/bin/env bash
# Runs every fuzz target of every package of the root module (the root,
# internal/jsonwire, internal/uritemplate, typed, ...) for a bounded time on
# top of its checked-in corpus (<package>/testdata/fuzz/<Target>/), which
# plain `go test` already replays. FUZZ_BUDGET is the total fuzzing time in
# seconds (default 120, split evenly between the targets); the build and
# each target's corpus replay come on top. A target that fails leaves its
# crasher in <package>/testdata/fuzz/<Target>/: check it in with the fix, as
# a regression case.
#
# Go up to 1.26 sometimes fails a target with a bare "context deadline
# exceeded" exactly as -fuzztime runs out: a race in the fuzzing
# coordinator itself (go.dev/issue/75804, fixed in Go 1.27), with no
# failing input. That signature, and only when no input was written, is
# reported and not counted as a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

budget=${FUZZ_BUDGET:-120}
# One "<package dir> <target>" line per target, the directory relative to
# the module root (. for the root package).
targets=$(for dir in $(go list -f '{{.Dir}}' ./...); do
  rel=.${dir#"$PWD"}
  grep -qs '^func Fuzz' "$dir"/*_test.go || continue # compile only the packages that fuzz
  go test -list '^Fuzz' "$rel" | grep '^Fuzz' | sed "s|^|$rel |" || true
done)
count=$(echo "$targets" | grep -c . || true)
if [ "$count" -eq 0 ]; then
  echo "fuzz: no fuzz targets found"; exit 1
fi
per=$(( budget / count ))
[ "$per" -ge 5 ] || per=5
echo "fuzz: $count targets, ${per}s each"

status=0
while read -r pkg t; do
  name="$pkg $t"
  [ "$pkg" = . ] && name=$t
  corpus="$pkg/testdata/fuzz/$t"
  log=$(mktemp)
  before=$(ls "$corpus" 2>/dev/null | sort || true)
  # -fuzzminimizetime keeps minimising a new input from eating the budget.
  if go test -run '^$' -fuzz "^${t}\$" -fuzztime "${per}s" -fuzzminimizetime 2s "$pkg" >"$log" 2>&1; then
    execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 || true)
    echo "fuzz: $name ok (${execs:-execs: ?})"
  elif after=$(ls "$corpus" 2>/dev/null | sort || true) && [ "$before" = "$after" ] &&
    grep -q '^    context deadline exceeded$' "$log" && ! grep -q 'Failing input written' "$log"; then
    execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 || true)
    echo "fuzz: $name ok (${execs:-execs: ?}; stopped by go.dev/issue/75804, the coordinator's deadline race: no failing input)"
  else
    echo "fuzz: $name FAILED"; cat "$log"; status=1
  fi
  rm -f "$log"
done <<<"$targets"
exit $status
