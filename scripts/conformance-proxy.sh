#!/usr/bin/env bash
# Runs the official MCP conformance suite exactly as scripts/conformance.sh
# does, but through a round-robin proxy (scripts/rrproxy: net/http/httputil,
# strict rotation, no stickiness) in front of 3 instances of
# examples/conformance that share one MCP_STATE_KEY and one redis-server
# (started by scripts/conformance.sh), so that consecutive requests of
# every scenario land on different instances.
#
#   bash scripts/conformance-proxy.sh
#
# MCPMW_CONFORMANCE_INSTANCES sets another number of instances; the other
# MCPMW_CONFORMANCE_* variables are scripts/conformance.sh's. The expected
# failures are one instance's (scripts/conformance-expected-failures.yml,
# empty): through the proxy every scenario must pass exactly as against one
# process. scripts/test.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
export MCPMW_CONFORMANCE_INSTANCES="${MCPMW_CONFORMANCE_INSTANCES:-3}"
exec bash scripts/conformance.sh
