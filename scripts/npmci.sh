#!/usr/bin/env bash
# Prints the path of a node_modules folder holding the packages that
# FOLDER's package-lock.json pins, installed on first use (npm ci, under the
# Node 22 of scripts/node22.sh, no install scripts run) into a cache outside
# the repository, one folder per package.json and lockfile: a changed
# lockfile gets a fresh install, and the repository stays untouched.
#
#   MODULES=$(bash scripts/npmci.sh interop/ts)
#
# Progress goes to stderr, the path alone to stdout. Shared by
# scripts/interop-ts.sh (interop/ts) and scripts/interop-apps.sh
# (interop/apps).
#
#   MCPMW_INTEROP_CACHE  the cache (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcpmw-interop)
#   and scripts/node22.sh's variables
set -euo pipefail
cd "$(dirname "$0")/.."

FOLDER=${1:?usage: npmci.sh FOLDER}
CACHE="${MCPMW_INTEROP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpmw-interop}"
NODE="$(bash scripts/node22.sh)"

lock_hash() {
  if command -v sha256sum >/dev/null; then sha256sum "$@"; else shasum -a 256 "$@"; fi | cut -c1-16
}
DEPS="$CACHE/$(basename "$FOLDER")-$(cat "$FOLDER/package.json" "$FOLDER/package-lock.json" | lock_hash)"
if [ ! -f "$DEPS/.installed" ]; then
  echo "npmci: installing $FOLDER's dependencies (npm ci) into $DEPS" >&2
  rm -rf "$DEPS"
  mkdir -p "$DEPS"
  cp "$FOLDER/package.json" "$FOLDER/package-lock.json" "$DEPS/"
  # No install scripts are needed, so none run (esbuild's binary comes in
  # its platform package, @esbuild/linux-x64 and the like).
  (cd "$DEPS" && PATH="$(dirname "$NODE"):$PATH" npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
  touch "$DEPS/.installed"
fi
echo "$DEPS/node_modules"
