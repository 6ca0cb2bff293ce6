#!/usr/bin/env bash
# Mutation-tests the lines a change touched, with gremlins
# (github.com/go-gremlins/gremlins, installed at the version pinned below
# when missing). Each mutant (a flipped comparison, a changed boundary, a
# negated condition, an arithmetic swap...) on a changed line of a non-test
# .go file is applied on its own and the tests of its package run; a mutant
# that no test notices has LIVED. The root module and each nested module
# (redis/, otel/, examples/, interop/, bench/: a directory with its own
# go.mod) whose files changed get a gremlins run of their own.
#
#   bash scripts/mutate.sh [BASE [GREMLINS_FLAG...]]
#
# The changed lines are those of `git diff --merge-base BASE`: the work tree,
# committed or not, against the point where it forked from BASE. BASE
# defaults to origin/main when that ref exists, else main; on main itself,
# pass the commit before your change (e.g. HEAD~1). Lines only deleted give
# no mutant. MUTATE_WORKERS sets the parallel test runs (default 2). Flags
# after BASE go to `gremlins unleash`, e.g. --invert-logical to also swap
# && and || (off by default in gremlins). MUTATE_MODULES, a space-separated
# list of module directories (. for the root), mutates those alone.
#
# A nested module cannot be mutated in place: gremlins copies the module's
# directory alone to a temporary one for each run, where its relative
# `replace github.com/mcpmw/mcpmw => ../` names nothing, and it reads
# `git diff` with paths from the repository's root, which match none of
# the module's. So each nested module is mutated in a copy of its own
# (under a temporary directory): a git repository holding the module as
# it was at the fork point, then its work tree on top, with every relative
# replace target made absolute (it still names this work tree). The diff
# is the same change, with paths from the module's root. Tests that reach
# outside their module by a relative path cannot find it in the copy, and
# fail there whatever the mutant: examples' TestStatusTable (docs/status.md),
# TestEndToEnd, TestNotesExportBinary and TestQuickStartAsANewUserRunsIt;
# interop's TestMCPGoResources, TestMCPGoRoundTrip, TestSDKElicitation,
# TestSDKResourceListChanged and TestSDKResources (the example app). Leave
# them out with MUTATE_SKIP, a `go test -skip` pattern, and mutate by hand
# the lines only they cover:
#
#   MUTATE_MODULES=examples MUTATE_SKIP='^(TestStatusTable|TestEndToEnd|TestNotesExportBinary|TestQuickStartAsANewUserRunsIt)$' \
#     bash scripts/mutate.sh main --invert-logical
#
# A flaky test fails gremlins' first run (the coverage of the whole
# module) as well: skip it the same way, and say so.
#
# Exit status: 0 when every mutant was killed, or no non-test Go line
# changed; 1 when a mutant lived or a changed line is run by no test (NOT
# COVERED; gremlins also says so of every `case` condition, which Go's
# coverage does not count: check those with -coverprofile): kill each with
# a test, or say in the commit message why it is equivalent (the code
# behaves the same with it); 2 when a run itself failed.
#
# Slow: each mutant compiles and runs its package's tests (10-15 s on two
# cores), and the root module has 845 covered mutants, so CI does not run
# it. Run it before a change to the request path lands and report its
# efficacy (docs/contributing.md).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

gremlins_version=v0.6.0

base=${1:-}
shift || true
if [ -z "$base" ]; then
  if git rev-parse -q --verify origin/main >/dev/null; then base=origin/main; else base=main; fi
fi
fork=$(git merge-base "$base" HEAD) || { echo "mutate: no merge base between $base and HEAD"; exit 2; }

# The nested modules, deepest first, so that a file belongs to the first
# that holds it.
nested=()
while IFS= read -r mod; do
  dir=${mod#./}
  nested+=("${dir%/go.mod}")
done < <(find . -mindepth 2 -name go.mod -not -path '*/node_modules/*' | awk -F/ '{ print NF "\t" $0 }' | sort -rn | cut -f2-)

# moduleOf prints the module directory (. for the root) that holds path.
moduleOf() {
  local n
  for n in "${nested[@]}"; do
    if [[ $1 == "$n/"* ]]; then
      echo "$n"
      return
    fi
  done
  echo .
}

# The changed non-test Go files, by module.
declare -A changed=()
while IFS= read -r f; do
  [ -f "$f" ] || continue
  m=$(moduleOf "$f")
  changed[$m]+="${changed[$m]:+ }$f"
done < <(git diff --merge-base "$base" --name-only --diff-filter=d -- '*.go' ':(exclude)*_test.go')

if [ -n "${MUTATE_MODULES:-}" ]; then
  declare -A chosen=()
  for m in $MUTATE_MODULES; do
    m=${m#./}; m=${m%/}
    chosen[${m:-.}]=1
  done
  for m in "${!changed[@]}"; do
    [ -n "${chosen[$m]:-}" ] || unset "changed[$m]"
  done
fi
if [ ${#changed[@]} -eq 0 ]; then
  # An empty diff would make gremlins mutate the whole module.
  echo "mutate: no non-test Go file${MUTATE_MODULES:+ of $MUTATE_MODULES} changed since $base (${fork:0:12}): nothing to mutate"
  exit 0
fi

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
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-count=1${MUTATE_SKIP:+ -skip=$MUTATE_SKIP}"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/mcpmw-mutate.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

status=0 # the worst so far: 0, 1 (lived or not covered), 2 (a run failed)
worse() { [ "$1" -le "$status" ] || status=$1; }
summaries=()

# unleash LABEL DIR GREMLINS_ARG...: runs gremlins in DIR against the
# diff base in DIR's repository ($diffbase) and reports what it found.
unleash() {
  local label=$1 dir=$2
  shift 2
  local log=$scratch/$RANDOM.log
  echo
  echo "mutate: $label: ${changed[$label]}"
  set +e
  (cd "$dir" && "$gremlins" unleash --diff "$diffbase" --workers "${MUTATE_WORKERS:-2}" --timeout-coefficient 5 \
    --output-statuses lctkv "$@" .) 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  set -e
  if [ "$rc" != 0 ]; then
    echo "mutate: $label: gremlins failed (exit $rc)"
    summaries+=("$label: gremlins failed (exit $rc)")
    worse 2
    return
  fi
  local summary
  summary=$(grep -E 'Killed: [0-9]+, Lived: [0-9]+' "$log" | tail -1 || true)
  if [ -z "$summary" ]; then
    echo "mutate: $label: gremlins reported no results"
    summaries+=("$label: gremlins reported no results")
    worse 2
    return
  fi
  local lived uncovered
  lived=$(sed -E 's/.*Lived: ([0-9]+).*/\1/' <<<"$summary")
  uncovered=$(sed -E 's/.*Not covered: ([0-9]+).*/\1/' <<<"$summary")
  summaries+=("$label: $(sed -E 's/^ *//' <<<"$summary"); $(grep -E 'Timed out: ' "$log" | tail -1 | sed -E 's/^ *//'); $(grep -E 'Test efficacy: ' "$log" | tail -1 | sed -E 's/^ *//')")
  if [ "$lived" != 0 ] || [ "$uncovered" != 0 ]; then
    summaries+=("$label: $lived lived, $uncovered not covered:")
    while IFS= read -r line; do summaries+=("  $line"); done < <(grep -E '^ *(LIVED|NOT COVERED) ' "$log" || true)
    worse 1
  fi
}

# absoluteReplaces rewrites each replace of the go.mod in copy whose
# target is a relative path to that path's absolute form, as seen from
# the module's directory src in this work tree.
absoluteReplaces() {
  local copy=$1 src=$2 old target
  while IFS=$'\t' read -r old target; do
    [ -n "$old" ] || continue
    (cd "$copy" && go mod edit -replace="$old=$(cd "$src" && cd "$target" && pwd)")
  done < <(awk '
    /^replace[ \t]*\($/ { block = 1; next }
    block && /^\)/ { block = 0; next }
    (block || /^replace[ \t]/) && /=>/ {
      line = $0; sub(/^replace[ \t]+/, "", line); sub(/\/\/.*/, "", line)
      split(line, side, /[ \t]*=>[ \t]*/)
      nl = split(side[1], l, /[ \t]+/); nr = split(side[2], r, /[ \t]+/)
      old = l[1] == "" ? l[2] : l[1]; ver = l[1] == "" ? l[3] : l[2]
      if (r[1] ~ /^\.\.?(\/|$)/) print old (ver != "" ? "@" ver : "") "\t" r[1]
    }' "$copy/go.mod")
}

# copyModule copies the files of module dir that git knows (tracked, or
# untracked and not ignored) from the work tree into dst, leaving out its
# own nested modules.
copyModule() {
  local dir=$1 dst=$2 f m
  while IFS= read -r f; do
    [ -f "$f" ] || continue
    m=$(moduleOf "$f")
    [ "$m" = "$dir" ] || continue
    mkdir -p "$dst/$(dirname "${f#"$dir"/}")"
    cp -p "$f" "$dst/${f#"$dir"/}"
  done < <(git ls-files -co --exclude-standard -- "$dir")
}

for mod in $(printf '%s\n' "${!changed[@]}" | sort); do
  if [ "$mod" = . ]; then
    diffbase=$base
    exclude=()
    for n in "${nested[@]}"; do exclude+=(-E "^${n}/"); done
    unleash . "$repo" "${exclude[@]}" "$@"
    continue
  fi
  # The copy: a repository whose one commit is the module at the fork
  # point, and whose work tree is the module now.
  copy=$scratch/$(tr / _ <<<"$mod")
  mkdir -p "$copy"
  git archive --format=tar "$fork" "$mod" 2>/dev/null | tar -x -C "$scratch" --transform "s|^$mod|$(basename "$copy")|" 2>/dev/null ||
    { rm -rf "$copy"; mkdir -p "$copy"; } # new since the fork: an empty base
  # Drop what belongs to the module's own nested modules.
  for n in "${nested[@]}"; do
    [[ $n == "$mod/"* ]] && rm -rf "${copy:?}/${n#"$mod"/}"
  done
  [ ! -f "$copy/go.mod" ] || absoluteReplaces "$copy" "$repo/$mod"
  (
    cd "$copy"
    git init -q
    git add -A
    git -c user.name=mutate -c user.email=mutate@localhost -c commit.gpgsign=false commit -q --allow-empty -m "$mod at ${fork:0:12}"
    git ls-files -z | xargs -0 rm -f
  )
  copyModule "$mod" "$copy"
  absoluteReplaces "$copy" "$repo/$mod"
  # Files new since the fork are untracked in the copy, and `git diff HEAD`
  # leaves untracked files out: marked as intended, they are all added lines.
  git -C "$copy" add --intent-to-add .
  diffbase=HEAD
  unleash "$mod" "$copy" "$@"
done

echo
for s in "${summaries[@]}"; do echo "mutate: $s"; done
case $status in
1) echo "mutate: kill each with a test, or say in the commit message why it is equivalent" ;;
2) echo "mutate: a run failed" ;;
esac
exit "$status"
