// Package mcpmw turns an existing Go web service into a Model Context
// Protocol (MCP) server: one http.Handler, mounted at any path.
package mcpmw
