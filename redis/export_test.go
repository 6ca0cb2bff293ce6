package mcpredis

import "time"

// The relay is unexported until the core can use it; its tests are in
// package mcpredis_test with the rest, through these names.
type Relay = relay

var (
	NewRelay        = newRelay
	ValidInstanceID = validInstanceID
)

// SetRelayStartTimeout sets how long NewRelay waits for its subscription,
// until restore is called.
func SetRelayStartTimeout(d time.Duration) (restore func()) {
	old := relayStartTimeout
	relayStartTimeout = d
	return func() { relayStartTimeout = old }
}
