#!/usr/bin/env bash
# Mutation-tests the lines a change touched, with gremlins
# (github.com/go-gremlins/gremlins, installed at the version pinned below
# when missing). Each mutant (a flipped comparison, a changed boundary, a
# negated condition, an arithmetic swap...) on a changed line of a non-test
# .go file of the root module is applied on its own and the tests of its
# package run; a mutant that no test notices has LIVED.
#
#   bash scripts/mutate.sh [BASE [GREMLINS_FLAG...]]
#
# The changed lines are those of `git diff --merge-base BASE`: the work tree,
# committed or not, against the point where it forked from BASE. BASE
# defaults to origin/main when that ref exists, else main; on main itself,
# pass the commit before your change (e.g. HEAD~1). Lines only deleted give
# no mutant. MUTATE_WORKERS sets the parallel test runs (default 2). Flags
# after BASE go to `gremlins unleash`, e.g. --invert-logical to also swap
# && and || (off by default in gremlins).
#
# Exit status: 0 when every mutant was killed, or no non-test Go line of
# the root module changed; 1 when a mutant lived or a changed line is run
# by no test (NOT COVERED; gremlins also says so of every `case` condition,
# which Go's coverage does not count: check those with -coverprofile):
# kill each with a test, or say in the commit
# message why it is equivalent (the code behaves the same with it); 2 when
# the run itself failed.
#
# Slow: each mutant compiles and runs its package's tests (10-15 s on two
# cores), and the root module has 845 covered mutants, so CI does not run
# it. Run it before a change to the request path lands and report its
# efficacy (README, "Contributing").
set -euo pipefail
cd "$(dirname "$0")/.."

gremlins_version=v0.6.0

base=${1:-}
shift || true
if [ -z "$base" ]; then
  if git rev-parse -q --verify origin/main >/dev/null; then base=origin/main; else base=main; fi
fi
fork=$(git merge-base "$base" HEAD) || { echo "mutate: no merge base between $base and HEAD"; exit 2; }

# Nested modules (bench/, interop/) are not the root module's: their
# packages get no coverage here, so their mutants are left out.
exclude=()
nested=()
while IFS= read -r mod; do
  dir=${mod#./}; dir=${dir%/go.mod}
  nested+=("$dir/")
  exclude+=(-E "^${dir}/")
done < <(find . -mindepth 2 -name go.mod -not -path '*/node_modules/*' | sort)

changed=()
while IFS= read -r f; do
  for n in "${nested[@]}"; do
    [[ $f == "$n"* ]] && continue 2
  done
  [ -f "$f" ] && changed+=("$f")
done < <(git diff --merge-base "$base" --name-only --diff-filter=d -- '*.go' ':(exclude)*_test.go')
if [ ${#changed[@]} -eq 0 ]; then
  # An empty diff would make gremlins mutate the whole module.
  echo "mutate: no non-test Go file of the root module changed since $base (${fork:0:12}): nothing to mutate"
  exit 0
fi
echo "mutate: changed since $base (${fork:0:12}): ${changed[*]}"

gremlins=$(command -v gremlins || true)
[ -n "$gremlins" ] || gremlins="$(go env GOPATH)/bin/gremlins"
if [ ! -x "$gremlins" ]; then
  echo "mutate: installing gremlins $gremlins_version"
  go install "github.com/go-gremlins/gremlins/cmd/gremlins@$gremlins_version"
fi
have=$(go version -m "$gremlins" 2>/dev/null | awk '$1 == "mod" { print $3 }')
[ "$have" = "$gremlins_version" ] || echo "mutate: note: $gremlins is gremlins ${have:-of unknown version}, not $gremlins_version"

# gremlins reads `git diff` hunks as one run of added lines from the first
# one, which misses lines when a hunk holds several changes split by
# context; without context lines every hunk is one run.
n=${GIT_CONFIG_COUNT:-0}
export "GIT_CONFIG_KEY_$n=diff.context" "GIT_CONFIG_VALUE_$n=0" GIT_CONFIG_COUNT=$((n + 1))

# A mutant's test run may take 5x as long as the coverage run of the whole
# module before it is counted as TIMED OUT (which gremlins counts as caught):
# the runs share the machine, so they are slower than the lone coverage run.
# -count=1 keeps that run out of the test cache: a cached run takes a
# fraction of a second, and every mutant would then time out.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
"$gremlins" unleash --diff "$base" --workers "${MUTATE_WORKERS:-2}" --timeout-coefficient 5 \
  --output-statuses lctkv "${exclude[@]}" "$@" . 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
[ "$status" = 0 ] || { echo "mutate: gremlins failed (exit $status)"; exit 2; }

summary=$(grep -E 'Killed: [0-9]+, Lived: [0-9]+' "$log" | tail -1 || true)
if [ -z "$summary" ]; then
  echo "mutate: gremlins reported no results"; exit 2
fi
lived=$(sed -E 's/.*Lived: ([0-9]+).*/\1/' <<<"$summary")
uncovered=$(sed -E 's/.*Not covered: ([0-9]+).*/\1/' <<<"$summary")
echo
echo "mutate: $base (${fork:0:12})..work tree: $summary; $(grep -E 'Timed out: ' "$log" | tail -1 | sed -E 's/^ *//')"
echo "mutate: $(grep -E 'Test efficacy: ' "$log" | tail -1 | sed -E 's/^ *//')"
if [ "$lived" != 0 ] || [ "$uncovered" != 0 ]; then
  echo "mutate: $lived lived, $uncovered not covered:"
  grep -E '^ *(LIVED|NOT COVERED) ' "$log" || true
  echo "mutate: kill each with a test, or say in the commit message why it is equivalent"
  exit 1
fi
