#!/usr/bin/env bash
# Drives the example app (examples/chi-app) with the official TypeScript MCP
# client, @modelcontextprotocol/client, at 2026-07-28 and 2025-11-25:
# interop/ts/client.test.mjs under node:test, which starts the app on a free
# loopback port and stops it afterwards; and the OAuth example
# (examples/oauth) with the client's ClientCredentialsProvider against an
# authorization server the test plays: interop/ts/oauth.test.mjs.
#
#   bash scripts/interop-ts.sh
#
# Needs Go and npm. On first use, Node 22 (scripts/node22.sh, the same
# install scripts/conformance.sh uses) and the client (scripts/npmci.sh:
# npm ci from interop/ts/package-lock.json) are installed into caches
# outside the repository; a changed lockfile gets a fresh install.
#
#   MCPMW_INTEROP_CACHE      cache folder for the client (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcpmw-interop)
#   MCPMW_CONFORMANCE_CACHE  its node/ folder holds Node (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcpmw-conformance)
#   MCPMW_NODE               a Node 22 or newer binary to use instead of installing one
#   MCPMW_INTEROP_DUMP       when set, print every HTTP exchange
set -euo pipefail
cd "$(dirname "$0")/.."

NODE="$(bash scripts/node22.sh)"
MODULES="$(bash scripts/npmci.sh interop/ts)"

# --- the app and the test ------------------------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/mcpmw-interop-ts.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
go -C examples build -o "$WORK/chi-app" ./chi-app
go -C examples/oauth build -o "$WORK/oauth-app" .
# The test runs from $WORK, next to a link to the cached node_modules, so
# that imports resolve there and the repository stays untouched.
cp interop/ts/*.mjs "$WORK/"
ln -s "$MODULES" "$WORK/node_modules"

BOUND=""
command -v timeout >/dev/null && BOUND="timeout 300"
echo "interop-ts: $("$NODE" --version), @modelcontextprotocol/client $("$NODE" -p "require('$MODULES/@modelcontextprotocol/client/package.json').version")" >&2
MCPMW_CHI_APP="$WORK/chi-app" MCPMW_OAUTH_APP="$WORK/oauth-app" $BOUND "$NODE" --test --test-reporter=spec --test-timeout=120000 "$WORK/client.test.mjs" "$WORK/skills.test.mjs" "$WORK/oauth.test.mjs"
