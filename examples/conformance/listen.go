package main

import (
	"context"

	"github.com/mcpmw/mcpmw"
)

// newDynamics returns the entries the test_trigger_* tools flip in reg,
// on this instance only (rdb nil) or, through rdb, on every instance.
func newDynamics(reg *mcpmw.Registry) *dynamics {
	return &dynamics{
		reg: reg,
		tool: mcpmw.Tool{
			Name: "test_dynamic_tool", Description: "Comes and goes with test_trigger_tool_change.", Permission: testCap, ReadOnly: mcpmw.HintYes,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult("still here"), nil
			},
		},
		prompt: mcpmw.Prompt{
			Name: "test_dynamic_prompt", Description: "Comes and goes with test_trigger_prompt_change.", Permission: testCap,
			Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
				return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("still here"))}}, nil
			},
		},
		present: map[string]bool{}, applied: map[string]int64{},
	}
}

// listenTools returns the hooks the server-stateless scenario calls while a
// subscriptions/listen stream is open: test_trigger_tool_change adds
// test_dynamic_tool, or removes it if it is there, so that the registry
// tells the open streams the tool list changed; test_trigger_prompt_change
// does the same with test_dynamic_prompt. d makes the change on every
// instance that shares its Redis.
func listenTools(d *dynamics) []mcpmw.Tool {
	trigger := func(name string) func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			present, err := d.flip(ctx, name)
			switch {
			case err != nil:
				return mcpmw.ToolResult{}, err
			case present:
				return mcpmw.TextResult("added " + name), nil
			}
			return mcpmw.TextResult("removed " + name), nil
		}
	}
	return []mcpmw.Tool{{
		Name: "test_trigger_tool_change", Description: "Adds or removes test_dynamic_tool: listeners are told the tool list changed.", Permission: testCap,
		Call: trigger(d.tool.Name),
	}, {
		Name: "test_trigger_prompt_change", Description: "Adds or removes test_dynamic_prompt: listeners are told the prompt list changed.", Permission: testCap,
		Call: trigger(d.prompt.Name),
	}, {
		Name: "test_trigger_skill_change", Description: "Adds or removes the skill dynamic-skill: listeners are told the resource list changed.", Permission: testCap,
		Call: trigger(dynamicSkill),
	}}
}
