package main

import (
	"context"

	"github.com/mcpmw/mcpmw"
)

// listenTools returns the hook the server-stateless scenario calls while a
// subscriptions/listen stream is open: test_trigger_tool_change adds a
// tool to reg, or removes it if it is there, so that the registry tells
// the open streams the tool list changed.
func listenTools(reg *mcpmw.Registry) []mcpmw.Tool {
	dynamic := mcpmw.Tool{
		Name: "test_dynamic_tool", Description: "Comes and goes with test_trigger_tool_change.", Permission: testCap, ReadOnly: mcpmw.Yes,
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("still here"), nil
		},
	}
	return []mcpmw.Tool{{
		Name: "test_trigger_tool_change", Description: "Adds or removes test_dynamic_tool: listeners are told the tool list changed.", Permission: testCap,
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			if reg.Remove(dynamic.Name) == 0 {
				reg.Add(dynamic)
				return mcpmw.TextResult("added test_dynamic_tool"), nil
			}
			return mcpmw.TextResult("removed test_dynamic_tool"), nil
		},
	}}
}
