// Package scaleout holds the multi-process tests of the example app and
// the conformance fixture scaled out: real processes (the binaries of
// examples/chi-app and examples/conformance, built once per run), three at
// a time on free ports of 127.0.0.1, sharing one real redis-server
// (internal/redistest) and one MCP_STATE_KEY, some behind the round-robin
// proxy of internal/roundrobin, some addressed one by one. They check the
// contract of REDIS_URL, REDIS_FAIL and RATE_LIMIT from outside, as an
// operator would see it:
//
//   - notes written through one instance are read through another, per
//     team (TestNotesAcrossInstances);
//   - an input_required round sealed by one instance is resumed by another
//     (TestNotesAcrossInstances, TestConformanceFixtureAcrossInstances);
//   - a listen stream on one instance hears a change made on another, its
//     team's only (TestNotesAcrossInstances);
//   - RATE_LIMIT=N admits between N and N+3 requests across three
//     instances under 64 concurrent clients, and one more for each
//     refill while they send (TestRateLimitAcrossInstances);
//   - an instance killed with SIGKILL under load loses no audit record of
//     a request that was answered, and the others keep serving
//     (TestInstanceKilledUnderLoad);
//   - Redis stopped, then started again: REDIS_FAIL's policy holds, every
//     request is answered within its deadline, each transition is logged
//     once, and everything recovers without a restart
//     (TestRedisStoppedThenStarted).
//
// Every wait for something that must happen is bounded by patience (30
// s), generous for a busy machine; the instances get REDIS_TIMEOUT=2s,
// since mcpredis's 50ms is missed now and then on one (500ms in
// TestRedisStoppedThenStarted, which is about that deadline and counts
// the transitions each instance logs).
//
// Without redis-server the tests skip, saying how to install it, unless
// MCPMW_REQUIRE_REDIS is set (as .ci/run sets it): then they fail.
package scaleout
