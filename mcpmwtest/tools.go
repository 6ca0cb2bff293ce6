package mcpmwtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// A Tool is a tool definition as tools/list sent it.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  ToolAnnotations `json:"annotations"`
	// Raw is the whole definition, for what the fields above leave out
	// (icons, _meta…).
	Raw json.RawMessage `json:"-"`
}

// ToolAnnotations are a tool's hints; a nil hint was not sent.
type ToolAnnotations struct {
	Title           string `json:"title"`
	ReadOnlyHint    *bool  `json:"readOnlyHint"`
	DestructiveHint *bool  `json:"destructiveHint"`
	IdempotentHint  *bool  `json:"idempotentHint"`
	OpenWorldHint   *bool  `json:"openWorldHint"`
}

// maxPages bounds ListTools against an endpoint whose cursors never end.
const maxPages = 1000

// ListTools lists every tool the caller may see, following nextCursor
// through all the pages. On 2026-07-28 it also remembers the tools'
// x-mcp-header annotations, so that CallTool sends the Mcp-Param-* headers
// a client must send: list before calling a tool that has them, as a real
// client does. For one page and its ttlMs or cacheScope, use Call with
// "tools/list".
func (c *Client) ListTools(ctx context.Context) ([]Tool, error) {
	var tools []Tool
	seen := map[string]bool{}
	var cursor *string
	for range maxPages {
		var params any
		if cursor != nil {
			params = map[string]string{"cursor": *cursor}
		}
		resp, err := c.Call(ctx, "tools/list", params)
		if err != nil {
			return nil, err
		}
		var page struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor *string           `json:"nextCursor"`
		}
		if err := resp.Decode(&page); err != nil {
			return nil, err
		}
		for _, raw := range page.Tools {
			var t Tool
			if err := json.Unmarshal(raw, &t); err != nil {
				return nil, fmt.Errorf("mcpmwtest: a tool definition: %w: %s", err, raw)
			}
			t.Raw = raw
			tools = append(tools, t)
		}
		if page.NextCursor == nil {
			c.rememberParams(tools)
			return tools, nil
		}
		if seen[*page.NextCursor] {
			return nil, fmt.Errorf("mcpmwtest: tools/list returned cursor %q twice", *page.NextCursor)
		}
		seen[*page.NextCursor] = true
		cursor = page.NextCursor
	}
	return nil, fmt.Errorf("mcpmwtest: tools/list did not end within %d pages", maxPages)
}

// A ToolResult is the result of a tools/call.
type ToolResult struct {
	Exchange
	Content []Content
	// StructuredContent is the structuredContent member as sent, nil when
	// absent; Decode decodes it.
	StructuredContent json.RawMessage
	// IsError reports a failure the tool wants the model to see.
	IsError bool
	// Text is the text of the text blocks, joined by newlines.
	Text string
	// Result is the whole result, as sent.
	Result json.RawMessage
}

// Decode decodes the structured content into v with encoding/json. It
// fails when the result has none.
func (r *ToolResult) Decode(v any) error {
	if r.StructuredContent == nil {
		return errors.New("mcpmwtest: the tool result has no structuredContent")
	}
	if err := json.Unmarshal(r.StructuredContent, v); err != nil {
		return fmt.Errorf("mcpmwtest: decoding structuredContent: %w", err)
	}
	return nil
}

// A Content is one content block of a tool result or a prompt message.
type Content struct {
	Type     string            `json:"type"` // "text", "image", "audio", "resource_link", "resource"
	Text     string            `json:"text"`
	Data     []byte            `json:"data"` // image and audio, decoded from base64
	MimeType string            `json:"mimeType"`
	URI      string            `json:"uri"`  // resource_link
	Name     string            `json:"name"` // resource_link
	Resource *ResourceContents `json:"resource"`
}

// ResourceContents are the contents of an embedded resource block.
type ResourceContents struct {
	URI      string `json:"uri"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
	Blob     []byte `json:"blob"` // decoded from base64
}

// CallTool calls the tool with args (any value encoding/json encodes to an
// object, or nil for none). A result with isError is a result, not an
// error; an unknown tool (-32602) or a refusal (403) is an *Error.
func (c *Client) CallTool(ctx context.Context, name string, args any) (*ToolResult, error) {
	params := map[string]any{"name": name}
	if args != nil {
		params["arguments"] = args
	}
	resp, err := c.Call(ctx, "tools/call", params)
	if err != nil {
		return nil, err
	}
	var r struct {
		Content           []Content       `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := resp.Decode(&r); err != nil {
		return nil, err
	}
	var text []string
	for _, b := range r.Content {
		if b.Type == "text" {
			text = append(text, b.Text)
		}
	}
	return &ToolResult{Exchange: resp.Exchange, Content: r.Content, StructuredContent: r.StructuredContent,
		IsError: r.IsError, Text: strings.Join(text, "\n"), Result: resp.Result}, nil
}

// A paramHeader is a tool argument a 2026-07-28 client mirrors in an
// Mcp-Param-* header, as its input schema's x-mcp-header annotation asks.
type paramHeader struct {
	path   []string // property names from the root of the arguments
	header string   // "Mcp-Param-" + the annotation, canonical
	typ    string   // "string", "integer" or "boolean"
}

// rememberParams records the x-mcp-header annotations of tools.
func (c *Client) rememberParams(tools []Tool) {
	params := map[string][]paramHeader{}
	for _, t := range tools {
		var schema any
		if json.Unmarshal(t.InputSchema, &schema) == nil {
			params[t.Name] = findParams(schema, nil, nil)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.headerParams = params
}

// findParams walks a schema's properties, from the root down, for
// x-mcp-header annotations.
func findParams(node any, path []string, out []paramHeader) []paramHeader {
	obj, _ := node.(map[string]any)
	if name, ok := obj["x-mcp-header"].(string); ok && len(path) > 0 {
		typ, _ := obj["type"].(string)
		out = append(out, paramHeader{path: path, header: http.CanonicalHeaderKey("Mcp-Param-" + name), typ: typ})
	}
	props, _ := obj["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		out = findParams(props[name], append(path[:len(path):len(path)], name), out)
	}
	return out
}

// value returns the header value for the argument p mirrors, and false
// when the arguments do not hold it (or hold null).
func (p paramHeader) value(args json.RawMessage) (string, bool) {
	val := args
	for _, name := range p.path {
		var obj map[string]json.RawMessage
		if json.Unmarshal(val, &obj) != nil {
			return "", false
		}
		if val = obj[name]; val == nil {
			return "", false
		}
	}
	if string(val) == "null" {
		return "", false
	}
	var s string
	if p.typ == "string" && json.Unmarshal(val, &s) == nil {
		return headerValue(s), true
	}
	return string(val), true // an integer or boolean: its JSON text
}
