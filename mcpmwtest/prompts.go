package mcpmwtest

import (
	"context"
	"encoding/json"
	"fmt"
)

// A Prompt is a prompt as prompts/list sent it.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title"`
	Description string           `json:"description"`
	Arguments   []PromptArgument `json:"arguments"`
	// Raw is the whole definition, for what the fields above leave out
	// (icons, _meta…).
	Raw json.RawMessage `json:"-"`
}

// A PromptArgument is one argument a prompt takes.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
}

// ListPrompts lists every prompt the caller may see, following nextCursor
// through all the pages, so a test asserts the whole list whatever the
// endpoint's page size. For one page and its ttlMs or cacheScope, use Call
// with "prompts/list".
func (c *Client) ListPrompts(ctx context.Context) ([]Prompt, error) {
	return listAll(ctx, c, "prompts/list", "prompts", func(p *Prompt) *json.RawMessage { return &p.Raw })
}

// A PromptResult is the result of a prompts/get.
type PromptResult struct {
	Exchange
	Description string
	Messages    []PromptMessage
	// Result is the whole result, as sent.
	Result json.RawMessage
}

// A PromptMessage is one message of a prompt: a role ("user" or
// "assistant") and one content block, of any kind a tool result may hold.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// GetPrompt gets the prompt with the arguments (nil sends none); on
// 2026-07-28 the client sends the name in Mcp-Name too. An unknown prompt
// or a missing required argument is an *Error (-32602). A result without a
// messages member is an error, since the endpoint must send one.
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) (*PromptResult, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	resp, err := c.Call(ctx, "prompts/get", params)
	if err != nil {
		return nil, err
	}
	var r struct {
		Description string           `json:"description"`
		Messages    *[]PromptMessage `json:"messages"`
	}
	if err := resp.Decode(&r); err != nil {
		return nil, err
	}
	if r.Messages == nil {
		return nil, fmt.Errorf("mcpmwtest: the prompts/get result has no messages: %s", resp.Result)
	}
	return &PromptResult{Exchange: resp.Exchange, Description: r.Description, Messages: *r.Messages, Result: resp.Result}, nil
}

// A CompletionRef names what completion/complete completes an argument of:
// a prompt (PromptRef) or a resource template (TemplateRef). Its fields
// are exported so that a test can send a reference the endpoint must
// refuse.
type CompletionRef struct {
	Type string `json:"type"`           // "ref/prompt" or "ref/resource"
	Name string `json:"name,omitempty"` // the prompt's name
	URI  string `json:"uri,omitempty"`  // the resource template's URI template
}

// PromptRef refers to the prompt named name, for Complete.
func PromptRef(name string) CompletionRef {
	return CompletionRef{Type: "ref/prompt", Name: name}
}

// TemplateRef refers to the resource template with the URI template
// uriTemplate, for Complete.
func TemplateRef(uriTemplate string) CompletionRef {
	return CompletionRef{Type: "ref/resource", URI: uriTemplate}
}

// A Completion is the result of a completion/complete.
type Completion struct {
	Exchange
	Values  []string // at most 100, by the spec
	Total   int      // 0 when the endpoint sent none
	HasMore bool
	// Result is the whole result, as sent.
	Result json.RawMessage
}

// Complete asks for completions of the argument named argument, whose value
// so far is value, of the prompt or resource template ref; context holds
// the arguments already given (nil sends no context). Without the
// completions capability the endpoint answers -32601, and for an unknown
// prompt -32602, both an *Error.
func (c *Client) Complete(ctx context.Context, ref CompletionRef, argument, value string, context map[string]string) (*Completion, error) {
	params := map[string]any{"ref": ref, "argument": map[string]string{"name": argument, "value": value}}
	if context != nil {
		params["context"] = map[string]any{"arguments": context}
	}
	resp, err := c.Call(ctx, "completion/complete", params)
	if err != nil {
		return nil, err
	}
	var r struct {
		Completion *struct {
			Values  *[]string `json:"values"`
			Total   int       `json:"total"`
			HasMore bool      `json:"hasMore"`
		} `json:"completion"`
	}
	if err := resp.Decode(&r); err != nil {
		return nil, err
	}
	if r.Completion == nil || r.Completion.Values == nil {
		return nil, fmt.Errorf("mcpmwtest: the completion/complete result has no completion.values: %s", resp.Result)
	}
	return &Completion{Exchange: resp.Exchange, Values: *r.Completion.Values, Total: r.Completion.Total,
		HasMore: r.Completion.HasMore, Result: resp.Result}, nil
}
