// Package interop holds round-trip tests that drive mcpmw with real MCP
// clients: the official Go SDK's client against an in-process handler at
// every revision mcpmw serves, and both the official Go SDK's client and
// mcp-go's against the example app (examples/chi-app) run as its own
// process, for its tools, resources, resource template, prompts,
// completions and resources/list_changed notifications. The official
// TypeScript client's test is in ts/ and runs under Node
// (scripts/interop-ts.sh). It is a separate module so that peer SDKs never
// enter the root module's dependencies.
package interop
