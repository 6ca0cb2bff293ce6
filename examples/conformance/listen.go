package main

import (
	"context"

	"github.com/mcpmw/mcpmw"
)

// listenTools returns the hooks the server-stateless scenario calls while a
// subscriptions/listen stream is open: test_trigger_tool_change adds a
// tool to reg, or removes it if it is there, so that the registry tells
// the open streams the tool list changed; test_trigger_prompt_change does
// the same with a prompt.
func listenTools(reg *mcpmw.Registry) []mcpmw.Tool {
	dynamic := mcpmw.Tool{
		Name: "test_dynamic_tool", Description: "Comes and goes with test_trigger_tool_change.", Permission: testCap, ReadOnly: mcpmw.HintYes,
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("still here"), nil
		},
	}
	prompt := mcpmw.Prompt{
		Name: "test_dynamic_prompt", Description: "Comes and goes with test_trigger_prompt_change.", Permission: testCap,
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("still here"))}}, nil
		},
	}
	return []mcpmw.Tool{{
		Name: "test_trigger_tool_change", Description: "Adds or removes test_dynamic_tool: listeners are told the tool list changed.", Permission: testCap,
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			if reg.RemoveTools(dynamic.Name) == 0 {
				reg.AddTools(dynamic)
				return mcpmw.TextResult("added test_dynamic_tool"), nil
			}
			return mcpmw.TextResult("removed test_dynamic_tool"), nil
		},
	}, {
		Name: "test_trigger_prompt_change", Description: "Adds or removes test_dynamic_prompt: listeners are told the prompt list changed.", Permission: testCap,
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			if reg.RemovePrompts(prompt.Name) == 0 {
				reg.AddPrompts(prompt)
				return mcpmw.TextResult("added test_dynamic_prompt"), nil
			}
			return mcpmw.TextResult("removed test_dynamic_prompt"), nil
		},
	}}
}
