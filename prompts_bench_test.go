package mcpmw_test

import (
	"context"
	"testing"

	"github.com/mcpmw/mcpmw"
)

// BenchmarkServeHTTPPromptGet is a prompts/get of a prompt with one
// argument returning one text message, through the whole handler: compare
// with BenchmarkServeHTTPToolsCall/msg=50.
func BenchmarkServeHTTPPromptGet(b *testing.B) {
	reg := benchRegistry(100, -1)
	reg.AddPrompts(mcpmw.Prompt{
		Name: "summarise", Description: "Asks for a summary of a topic.", Permission: "read",
		Arguments: []mcpmw.PromptArgument{{Name: "topic", Description: "What to summarise.", Required: true}},
		Get: func(_ context.Context, _ mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{
				mcpmw.UserMessage(mcpmw.TextContent("Summarise " + args["topic"] + " in three sentences.")),
			}}, nil
		},
	})
	h := newBenchHandler(reg, benchCaller{})
	c := newBenchCall("prompts/get", "summarise", `"name":"summarise","arguments":{"topic":"abcdefghijabcdefghijabcdefghijabcdefghijabcdefghij"}`)
	runBench(b, h, c, `"text":"Summarise abcdefghij`)
}

// BenchmarkServeHTTPPromptsList lists 100 prompts on one page.
func BenchmarkServeHTTPPromptsList(b *testing.B) {
	var reg mcpmw.Registry
	for i := range 100 {
		reg.AddPrompts(mcpmw.Prompt{
			Name: "prompt_" + string(rune('a'+i/26)) + string(rune('a'+i%26)), Description: "A stand-in prompt.", Permission: "read",
			Arguments: []mcpmw.PromptArgument{{Name: "topic", Required: true}},
			Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
				return mcpmw.PromptResult{}, nil
			},
		})
	}
	runBench(b, newBenchHandler(&reg, benchCaller{}), newBenchCall("prompts/list", "", ""), `"name":"prompt_dv"`)
}
