package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/mcpmw/mcpmw"
)

// The resources, template and prompts the suite's resources-*, prompts-*,
// completion-complete, caching and input-required-result-non-tool-request
// scenarios read, answering exactly what each scenario's text specifies.

// resources returns the fixture's direct resources.
func resources() []mcpmw.Resource {
	text := func(uri, mime, body string) func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
		return func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, mime, body)}, nil
		}
	}
	return []mcpmw.Resource{
		{URI: "test://static-text", Name: "static-text", Description: "A static text resource", MimeType: "text/plain", Permission: testCap,
			Read: text("test://static-text", "text/plain", "This is the content of the static text resource.")},
		{URI: "test://static-binary", Name: "static-binary", Description: "A static binary resource (a PNG image)", MimeType: "image/png", Permission: testCap,
			Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
				return []mcpmw.ResourceContents{mcpmw.BlobContents("test://static-binary", "image/png", redPixelPNG)}, nil
			}},
		{URI: "test://watched-resource", Name: "watched-resource", Description: "A resource clients subscribe to", MimeType: "text/plain", Permission: testCap,
			Read: text("test://watched-resource", "text/plain", "Watched resource content.")},
	}
}

// templates returns the fixture's resource template.
func templates() []mcpmw.ResourceTemplate {
	return []mcpmw.ResourceTemplate{{
		URITemplate: "test://template/{id}/data",
		Name:        "template-data",
		Description: "Data for an id, from a URI template",
		MimeType:    "application/json",
		Permission:  "use",
		Read: func(_ context.Context, _ mcpmw.Caller, uri string, vars map[string]string) ([]mcpmw.ResourceContents, error) {
			body, err := json.Marshal(map[string]any{"id": vars["id"], "templateTest": true, "data": "Data for ID: " + vars["id"]})
			if err != nil {
				return nil, err
			}
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "application/json", string(body))}, nil
		},
		Complete: map[string]mcpmw.Completer{"id": prefixCompleter("1", "12", "123")},
	}}
}

// prefixCompleter completes from a fixed list of values by prefix.
func prefixCompleter(values ...string) mcpmw.Completer {
	return func(_ context.Context, _ mcpmw.Caller, req mcpmw.CompletionRequest) (mcpmw.Completion, error) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, req.Value) {
				out = append(out, v)
			}
		}
		return mcpmw.Completion{Values: out, Total: len(out)}, nil
	}
}

// contextSchema is what test_input_required_result_prompt asks the user.
var contextSchema = json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)

// prompts returns the fixture's prompts.
func prompts() []mcpmw.Prompt {
	text := func(s string) mcpmw.PromptResult {
		return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent(s))}}
	}
	return []mcpmw.Prompt{
		{Name: "test_simple_prompt", Description: "A simple prompt without arguments", Permission: testCap,
			Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
				return text("This is a simple prompt for testing."), nil
			}},
		{Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments", Permission: testCap,
			Arguments: []mcpmw.PromptArgument{{Name: "arg1", Description: "First test argument", Required: true}, {Name: "arg2", Description: "Second test argument", Required: true}},
			Get: func(_ context.Context, _ mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
				return text("Prompt with arguments: arg1='" + args["arg1"] + "', arg2='" + args["arg2"] + "'"), nil
			},
			Complete: map[string]mcpmw.Completer{"arg1": prefixCompleter("test", "testing", "tested", "other")}},
		{Name: "test_prompt_with_embedded_resource", Description: "A prompt embedding a resource", Permission: testCap,
			Arguments: []mcpmw.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
			Get: func(_ context.Context, _ mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
				return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{
					mcpmw.UserMessage(mcpmw.EmbeddedResource(args["resourceUri"], "text/plain", "Embedded resource content for testing.", nil)),
					mcpmw.UserMessage(mcpmw.TextContent("Please process the embedded resource above.")),
				}}, nil
			}},
		{Name: "test_prompt_with_image", Description: "A prompt with an image", Permission: testCap,
			Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
				return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{
					mcpmw.UserMessage(mcpmw.ImageContent(redPixelPNG, "image/png")),
					mcpmw.UserMessage(mcpmw.TextContent("Please analyze the image above.")),
				}}, nil
			}},
		{Name: "test_input_required_result_prompt", Description: "A prompt that asks the user for context first", Permission: testCap,
			Get: func(ctx context.Context, _ mcpmw.Caller, _ map[string]string) (mcpmw.PromptResult, error) {
				ans, err := mcpmw.Ask(ctx, "user_context", mcpmw.ElicitForm("What context should the prompt use?", contextSchema))
				if err != nil {
					return mcpmw.PromptResult{}, err
				}
				var r struct {
					Action  string `json:"action"`
					Content struct {
						Context string `json:"context"`
					} `json:"content"`
				}
				if err := json.Unmarshal(ans, &r); err != nil {
					return mcpmw.PromptResult{}, errors.New("the elicitation answer is not an ElicitResult")
				}
				if r.Action != "accept" {
					return text("The user gave no context (" + r.Action + ")."), nil
				}
				return text("Use this context: " + r.Content.Context), nil
			}},
	}
}
