// Package interop holds round-trip tests that drive mcpmw with real MCP
// clients: the official Go SDK's client against an in-process handler at
// every revision mcpmw serves, and mcp-go's client against the example app
// (examples/chi-app) run as its own process. The official TypeScript
// client's test is in ts/ and runs under Node (scripts/interop-ts.sh). It
// is a separate module so that peer SDKs never enter the root module's
// dependencies.
package interop
