// Package interop holds round-trip tests that drive an mcpmw handler with
// the official MCP Go SDK client, at every protocol revision mcpmw serves.
// It is a separate module so that the peer SDK never enters the root
// module's dependencies.
package interop
