#!/usr/bin/env bash
# Renders the example app's MCP App (ui://notes/board) in headless Chromium,
# inside a test host built on the official AppBridge from
# @modelcontextprotocol/ext-apps, and drives it as a writer and a reader over
# HTTP/1.1 and over HTTP/2 with TLS (the app serving HTTPS itself):
# interop/apps/board.test.mjs under
# node:test, which starts the app on a free loopback port and stops it
# afterwards. The screenshots' folder is printed ("screenshots: ...").
#
#   bash scripts/interop-apps.sh
#
# Needs Go, npm and Debian's chromium (.ci/run installs it; no browser is
# ever downloaded: playwright-core drives the system one). On first use,
# Node 22 (scripts/node22.sh, shared with scripts/interop-ts.sh and
# scripts/conformance.sh) and the test's packages (scripts/npmci.sh: npm ci
# from interop/apps/package-lock.json) are installed into caches outside the
# repository; a changed lockfile gets a fresh install.
#
#   MCPMW_INTEROP_CACHE      cache folder for the packages (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcpmw-interop)
#   MCPMW_CONFORMANCE_CACHE  its node/ folder holds Node (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcpmw-conformance)
#   MCPMW_NODE               a Node 22 or newer binary to use instead of installing one
#   MCPMW_CHROMIUM           the browser (default: chromium on PATH)
#   MCPMW_APPS_SHOTS         where the screenshots go (default: a new folder under TMPDIR, kept)
set -euo pipefail
cd "$(dirname "$0")/.."

NODE="$(bash scripts/node22.sh)"

CHROMIUM="${MCPMW_CHROMIUM:-$(command -v chromium || true)}"
if [ -z "$CHROMIUM" ]; then
  echo "interop-apps: no chromium on PATH (apt-get install chromium), nor MCPMW_CHROMIUM" >&2
  exit 1
fi

MODULES="$(bash scripts/npmci.sh interop/apps)"

# --- the app, a certificate, and the test ----------------------------------------
WORK="$(mktemp -d "${TMPDIR:-/tmp}/mcpmw-interop-apps.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
go -C examples build -o "$WORK/chi-app" ./chi-app
# A certificate for 127.0.0.1, which the HTTP/2 run's app serves HTTPS
# with (TLS_CERT, TLS_KEY): the standard library's generator, so nothing
# else is needed.
(cd "$WORK" && go run "$(go env GOROOT)/src/crypto/tls/generate_cert.go" --host 127.0.0.1 --duration 24h 2>/dev/null)
# The test runs from $WORK/apps, as in the repository beside ts/ (it
# imports ../ts/app.mjs, the helper that starts the app), under a link to
# the cached node_modules, so that imports (and esbuild's bundling of
# host.js) resolve there and the repository stays untouched.
mkdir "$WORK/apps" "$WORK/ts"
cp interop/apps/*.js interop/apps/*.mjs "$WORK/apps/"
cp interop/ts/app.mjs "$WORK/ts/"
ln -s "$MODULES" "$WORK/node_modules"

BOUND=""
command -v timeout >/dev/null && BOUND="timeout 600"
echo "interop-apps: $("$NODE" --version), $("$CHROMIUM" --version 2>/dev/null), @modelcontextprotocol/ext-apps $("$NODE" -p "require('$MODULES/@modelcontextprotocol/ext-apps/package.json').version"), playwright-core $("$NODE" -p "require('$MODULES/playwright-core/package.json').version")" >&2
MCPMW_CHI_APP="$WORK/chi-app" MCPMW_CHROMIUM="$CHROMIUM" MCPMW_TLS_CERT="$WORK/cert.pem" MCPMW_TLS_KEY="$WORK/key.pem" \
  $BOUND "$NODE" --test --test-reporter=spec --test-timeout=300000 "$WORK/apps/board.test.mjs"
