package mcpmw_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpmw/mcpmw"
)

// BenchmarkServeHTTPCompletion completes a prompt argument by prefix (3
// of 10 values), through the whole handler.
func BenchmarkServeHTTPCompletion(b *testing.B) {
	values := []string{"alpha", "beta", "bravo", "brown", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"}
	reg := benchRegistry(100, -1)
	reg.AddPrompts(mcpmw.Prompt{Name: "greet", Description: "Greets.", Permission: "read",
		Arguments: []mcpmw.PromptArgument{{Name: "word"}},
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("hi"))}}, nil
		},
		Complete: map[string]mcpmw.Completer{"word": func(_ context.Context, _ mcpmw.Caller, req mcpmw.CompletionRequest) (mcpmw.Completion, error) {
			var out []string
			for _, v := range values {
				if strings.HasPrefix(v, req.Value) {
					out = append(out, v)
				}
			}
			return mcpmw.Completion{Values: out, Total: len(out)}, nil
		}},
	})
	h := newBenchHandler(reg, benchCaller{})
	c := newBenchCall("completion/complete", "", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"word","value":"b"}`)
	runBench(b, h, c, `"values":["beta","bravo","brown"]`)
}
