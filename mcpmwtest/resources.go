package mcpmwtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// A Resource is a resource as resources/list sent it.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	MimeType    string `json:"mimeType"`
	Size        int64  `json:"size"` // 0 when the endpoint sent none
	// Raw is the whole definition, for what the fields above leave out
	// (icons, annotations, _meta…).
	Raw json.RawMessage `json:"-"`
}

// A ResourceTemplate is a resource template as resources/templates/list
// sent it.
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"` // an RFC 6570 URI template
	Name        string `json:"name"`
	Title       string `json:"title"`
	Description string `json:"description"`
	MimeType    string `json:"mimeType"`
	// Raw is the whole definition, for what the fields above leave out.
	Raw json.RawMessage `json:"-"`
}

// ListResources lists every resource the caller may see, following
// nextCursor through all the pages, so a test asserts the whole list
// whatever the endpoint's page size. For one page and its ttlMs or
// cacheScope, use Call with "resources/list".
func (c *Client) ListResources(ctx context.Context) ([]Resource, error) {
	return listAll(ctx, c, "resources/list", "resources", func(r *Resource) *json.RawMessage { return &r.Raw })
}

// ListResourceTemplates lists every resource template the caller may see,
// following nextCursor through all the pages, as ListResources does.
func (c *Client) ListResourceTemplates(ctx context.Context) ([]ResourceTemplate, error) {
	return listAll(ctx, c, "resources/templates/list", "resourceTemplates",
		func(r *ResourceTemplate) *json.RawMessage { return &r.Raw })
}

// A ResourceResult is the result of a resources/read.
type ResourceResult struct {
	Exchange
	// Contents are the contents as sent, text or blob; a blob is decoded
	// from base64.
	Contents []ResourceContents
	// Result is the whole result, as sent (ttlMs, cacheScope, _meta…).
	Result json.RawMessage
}

// Text returns the text of the text contents (those without a blob), joined
// by newlines: what a test of a text resource usually asserts.
func (r *ResourceResult) Text() string {
	var text []string
	for _, c := range r.Contents {
		if c.Blob == nil {
			text = append(text, c.Text)
		}
	}
	return strings.Join(text, "\n")
}

// ReadResource reads the resource at uri (on 2026-07-28 the client sends it
// in Mcp-Name too). An unknown resource is an *Error: -32602 on 2026-07-28,
// -32002 on the legacy revisions. A result without a contents member is an
// error, since the endpoint must send one.
func (c *Client) ReadResource(ctx context.Context, uri string) (*ResourceResult, error) {
	resp, err := c.Call(ctx, "resources/read", map[string]string{"uri": uri})
	if err != nil {
		return nil, err
	}
	var r struct {
		Contents *[]ResourceContents `json:"contents"`
	}
	if err := resp.Decode(&r); err != nil {
		return nil, err
	}
	if r.Contents == nil {
		return nil, fmt.Errorf("mcpmwtest: the resources/read result has no contents: %s", resp.Result)
	}
	return &ResourceResult{Exchange: resp.Exchange, Contents: *r.Contents, Result: resp.Result}, nil
}

// listAll calls a list method page by page, following nextCursor (at most
// maxPages, and failing on a cursor seen before), and decodes the items of
// member on every page into Ts, keeping each item's JSON in the field raw
// points to.
func listAll[T any](ctx context.Context, c *Client, method, member string, raw func(*T) *json.RawMessage) ([]T, error) {
	var out []T
	seen := map[string]bool{}
	var cursor *string
	for range maxPages {
		var params any
		if cursor != nil {
			params = map[string]string{"cursor": *cursor}
		}
		resp, err := c.Call(ctx, method, params)
		if err != nil {
			return nil, err
		}
		var page map[string]json.RawMessage
		if err := resp.Decode(&page); err != nil {
			return nil, err
		}
		var items []json.RawMessage
		if page[member] == nil || json.Unmarshal(page[member], &items) != nil {
			return nil, fmt.Errorf("mcpmwtest: the %s result has no %s array: %s", method, member, resp.Result)
		}
		for _, item := range items {
			var v T
			if err := json.Unmarshal(item, &v); err != nil {
				return nil, fmt.Errorf("mcpmwtest: an item of %s: %w: %s", member, err, item)
			}
			*raw(&v) = item
			out = append(out, v)
		}
		var next *string
		if err := json.Unmarshal(page["nextCursor"], &next); page["nextCursor"] != nil && err != nil {
			return nil, fmt.Errorf("mcpmwtest: the %s nextCursor is not a string: %s", method, page["nextCursor"])
		}
		if next == nil {
			return out, nil
		}
		if seen[*next] {
			return nil, fmt.Errorf("mcpmwtest: %s returned cursor %q twice", method, *next)
		}
		seen[*next] = true
		cursor = next
	}
	return nil, fmt.Errorf("mcpmwtest: %s did not end within %d pages", method, maxPages)
}
