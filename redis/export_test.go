package mcpredis

import "time"

// ValidInstanceID is for the tests of package mcpredis_test.
var ValidInstanceID = validInstanceID

// SetRelayStartTimeout sets how long NewRelay waits for its subscription,
// until restore is called.
func SetRelayStartTimeout(d time.Duration) (restore func()) {
	old := relayStartTimeout
	relayStartTimeout = d
	return func() { relayStartTimeout = old }
}
