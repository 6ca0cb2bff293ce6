# The counting behind the one line scripts/test.sh ends with,
#
#   total: N passed, N failed
#
# sourced by it (and by verdict_test.go, on saved outputs). Each part adds
# what it passed and failed: a Go package's ok or FAIL line (every module),
# each test of the TypeScript client (node:test's "pass" and "fail" and
# "cancelled"), each scored conformance scenario (scripts/conformance.sh's
# own closing line). A check without a count of its own (gofmt, go vet,
# staticcheck), or a part whose command failed without reporting a failure
# (a crash, an install that did not finish), counts as one failure. The
# per-part lines say "passed" and "failed" without the comma, so that the
# last line alone has the plain form.

VERDICT_PASSED=0
VERDICT_FAILED=0
VERDICT_LINES=()

# verdict_add LABEL PASSED FAILED
verdict_add() {
  VERDICT_PASSED=$((VERDICT_PASSED + $2))
  VERDICT_FAILED=$((VERDICT_FAILED + $3))
  VERDICT_LINES+=("$(printf '%-40s %5d passed %5d failed' "$1" "$2" "$3")")
}

# verdict_failed_unless_counted RC FAILED: the failures to count for a
# command that exited RC having reported FAILED of them.
verdict_failed_unless_counted() {
  if [ "$1" != 0 ] && [ "$2" = 0 ]; then echo 1; else echo "$2"; fi
}

# verdict_go LABEL LOG RC: the packages of one `go test ./...` run.
verdict_go() {
  local p f
  p=$(grep -cE '^ok[[:space:]]' "$2" || true)
  f=$(grep -cE '^FAIL[[:space:]]' "$2" || true)
  verdict_add "$1" "$p" "$(verdict_failed_unless_counted "$3" "$f")"
}

# verdict_ts LABEL LOG RC: the tests of one node --test run.
verdict_ts() {
  local p f c
  p=$(sed -n 's/^ℹ pass \([0-9][0-9]*\)$/\1/p' "$2" | tail -n 1)
  f=$(sed -n 's/^ℹ fail \([0-9][0-9]*\)$/\1/p' "$2" | tail -n 1)
  c=$(sed -n 's/^ℹ cancelled \([0-9][0-9]*\)$/\1/p' "$2" | tail -n 1)
  verdict_add "$1" "${p:-0}" "$(verdict_failed_unless_counted "$3" $((${f:-0} + ${c:-0})))"
}

# verdict_conformance LABEL LOG RC: the scored scenarios of one
# scripts/conformance.sh run, from its closing line.
verdict_conformance() {
  local last p=0 f=0
  last=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$2" | tail -n 1 || true)
  if [ -n "$last" ]; then
    p=${last%% *}
    f=${last#*, }
    f=${f%% *}
  fi
  verdict_add "$1" "$p" "$(verdict_failed_unless_counted "$3" "$f")"
}

# verdict_check LABEL RC: a check that passes or fails as a whole.
verdict_check() {
  [ "$2" = 0 ] || verdict_add "$1" 0 1
}

# verdict_print: the parts, then the closing line (also written to
# $MCPMW_VERDICT_FILE when set, for .ci/run to repeat last); returns 1
# when anything failed.
verdict_print() {
  local total
  echo "== verdict"
  printf '%s\n' "${VERDICT_LINES[@]}"
  total="total: $VERDICT_PASSED passed, $VERDICT_FAILED failed"
  echo "$total"
  if [ -n "${MCPMW_VERDICT_FILE:-}" ]; then echo "$total" >"$MCPMW_VERDICT_FILE"; fi
  [ "$VERDICT_FAILED" = 0 ]
}
