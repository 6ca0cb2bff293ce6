// Package testproc is what the tests that start processes of their own
// (a redis-server, the example app) share: child processes that die with
// the test process, so that a test binary killed before its cleanup (a
// timeout, an interrupt, a closed pipe) leaves none behind.
package testproc
