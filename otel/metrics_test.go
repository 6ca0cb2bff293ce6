package mcpotel_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
)

// The duration histogram counts every request, with bounded attributes: a
// tool's name only when the tool exists, _OTHER for a method or protocol
// version the server does not serve.
func TestMetrics(t *testing.T) {
	t.Parallel()
	x := newHarness(t)
	for _, r := range []*http.Request{
		call("echo", ""),
		call("echo", ""),
		call("write_it", ""), // denied: the tool exists
		call("nope", ""),     // unknown: its name is the client's
		call("zzz", ""),
		modern("1", "orders/cancel", "", ""),
		post(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "MCP-Protocol-Version", "2024-11-05"), // known, not served
		httptest.NewRequest(http.MethodGet, "/mcp", nil),
	} {
		x.serve(r)
	}
	m, points := x.collect(t)
	assert.Equal(t, "s", m.Unit)

	type point struct {
		count uint64
		attrs map[attribute.Key]string
	}
	var got []point
	var total uint64
	for _, p := range points {
		got = append(got, point{p.Count, attrs(p.Attributes.ToSlice())})
		total += p.Count
		assert.Equal(t, []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}, p.Bounds)
	}
	assert.EqualValues(t, 8, total, "one measurement per request")
	find := func(want map[attribute.Key]string) *point {
		for i, p := range got {
			if assert.ObjectsAreEqual(want, p.attrs) {
				return &got[i]
			}
		}
		return nil
	}
	echo := find(map[attribute.Key]string{"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool",
		"gen_ai.tool.name": "echo", "mcp.protocol.version": "2026-07-28", "http.response.status_code": "200", "mcpmw.outcome": "ok"})
	require.NotNil(t, echo, "%v", got)
	assert.EqualValues(t, 2, echo.count)
	assert.NotNil(t, find(map[attribute.Key]string{"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool",
		"gen_ai.tool.name": "write_it", "mcp.protocol.version": "2026-07-28", "error.type": "-32602", "rpc.response.status_code": "-32602",
		"http.response.status_code": "403", "mcpmw.outcome": "denied"}), "%v", got)
	unknown := find(map[attribute.Key]string{"mcp.method.name": "tools/call", "gen_ai.operation.name": "execute_tool",
		"mcp.protocol.version": "2026-07-28", "error.type": "-32602", "rpc.response.status_code": "-32602",
		"http.response.status_code": "200", "mcpmw.outcome": "error"})
	require.NotNil(t, unknown, "unknown tools share one series, without their names: %v", got)
	assert.EqualValues(t, 2, unknown.count)
	assert.NotNil(t, find(map[attribute.Key]string{"mcp.method.name": "_OTHER", "mcp.protocol.version": "2026-07-28",
		"error.type": "-32601", "rpc.response.status_code": "-32601", "http.response.status_code": "404", "mcpmw.outcome": "error"}), "%v", got)
	assert.NotNil(t, find(map[attribute.Key]string{"mcp.method.name": "tools/list", "mcp.protocol.version": "_OTHER",
		"error.type": "-32022", "rpc.response.status_code": "-32022", "http.response.status_code": "400", "mcpmw.outcome": "error"}), "%v", got)
	assert.NotNil(t, find(map[attribute.Key]string{"error.type": "-32600", "rpc.response.status_code": "-32600",
		"http.response.status_code": "405", "mcpmw.outcome": "denied"}), "%v", got)
	assert.Len(t, got, 6)
}
