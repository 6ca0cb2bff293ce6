package mcpmw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// A ToolResult is what a tool returns: content blocks for the model, an
// optional structured value, and whether the call failed in a way the model
// should see.
type ToolResult struct {
	Content []Content
	// StructuredContent is an optional JSON value (any value encoding/json
	// accepts; a json.RawMessage is used as is). When Content is empty, its
	// JSON text is also sent as a text block for clients that only read
	// text. Legacy revisions only carry an object here: anything else is
	// sent to them as text alone.
	StructuredContent any
	// IsError marks a failure the model should read and act on (bad input,
	// a business rule, an upstream error) rather than a protocol error.
	IsError bool
}

// TextResult returns a successful result holding one text block.
func TextResult(s string) ToolResult { return ToolResult{Content: []Content{TextContent(s)}} }

// ErrorResult returns an isError result whose text is the formatted message, for
// failures the model should see and correct.
func ErrorResult(format string, a ...any) ToolResult {
	return ToolResult{Content: []Content{TextContent(fmt.Sprintf(format, a...))}, IsError: true}
}

// StructuredResult returns a result whose structured content is v; its JSON text
// is sent as a text block too.
func StructuredResult(v any) ToolResult { return ToolResult{StructuredContent: v} }

// AllText returns the text of the result's text blocks, joined by newlines.
func (r ToolResult) AllText() string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// A Content is one content block of a tool result. Build it with
// TextContent, ImageContent, AudioContent, ResourceLink or EmbeddedResource.
type Content struct {
	Type        string // "text", "image", "audio", "resource_link" or "resource"
	Text        string // text; also the text of an embedded text resource
	Data        []byte // image, audio, or an embedded blob resource: raw bytes, sent base64-encoded
	MimeType    string
	URI         string // resource_link and resource
	Name        string // resource_link
	Title       string // resource_link, optional
	Description string // resource_link, optional
	Size        int64  // resource_link, optional (0 = unknown)
	Annotations *ContentAnnotations
}

// ContentAnnotations tell a client how to use a content block.
type ContentAnnotations struct {
	Audience     []string // "user" and/or "assistant"
	Priority     *float64 // 0 (least) to 1 (most important)
	LastModified string   // ISO 8601
}

// TextContent returns a text block.
func TextContent(s string) Content { return Content{Type: "text", Text: s} }

// ImageContent returns an image block of data in the given MIME type.
func ImageContent(data []byte, mimeType string) Content {
	return Content{Type: "image", Data: data, MimeType: mimeType}
}

// AudioContent returns an audio block of data in the given MIME type.
func AudioContent(data []byte, mimeType string) Content {
	return Content{Type: "audio", Data: data, MimeType: mimeType}
}

// ResourceLink returns a link to a resource the client may read or fetch.
func ResourceLink(uri, name string) Content {
	return Content{Type: "resource_link", URI: uri, Name: name}
}

// EmbeddedResource returns a resource embedded in the result: a text
// resource when data is nil, a binary (blob) one otherwise.
func EmbeddedResource(uri, mimeType, text string, data []byte) Content {
	return Content{Type: "resource", URI: uri, MimeType: mimeType, Text: text, Data: data}
}

func appendContent(dst []byte, c *Content) ([]byte, error) {
	dst = append(dst, `{"type":`...)
	dst = jsonwire.AppendString(dst, c.Type)
	switch c.Type {
	case "text":
		dst = append(dst, `,"text":`...)
		dst = jsonwire.AppendString(dst, c.Text)
	case "image", "audio":
		dst = append(dst, `,"data":`...)
		dst = jsonwire.AppendBase64(dst, c.Data)
		dst = append(dst, `,"mimeType":`...)
		dst = jsonwire.AppendString(dst, c.MimeType)
	case "resource_link":
		dst = append(dst, `,"uri":`...)
		dst = jsonwire.AppendString(dst, c.URI)
		dst = append(dst, `,"name":`...)
		dst = jsonwire.AppendString(dst, c.Name)
		for _, f := range [...]struct{ k, v string }{{"title", c.Title}, {"description", c.Description}, {"mimeType", c.MimeType}} {
			if f.v != "" {
				dst = append(dst, ',')
				dst = jsonwire.AppendString(dst, f.k)
				dst = append(dst, ':')
				dst = jsonwire.AppendString(dst, f.v)
			}
		}
		if c.Size > 0 {
			dst = append(dst, `,"size":`...)
			dst = strconv.AppendInt(dst, c.Size, 10)
		}
	case "resource":
		dst = append(dst, `,"resource":{"uri":`...)
		dst = jsonwire.AppendString(dst, c.URI)
		if c.MimeType != "" {
			dst = append(dst, `,"mimeType":`...)
			dst = jsonwire.AppendString(dst, c.MimeType)
		}
		if c.Data != nil {
			dst = append(dst, `,"blob":`...)
			dst = jsonwire.AppendBase64(dst, c.Data)
		} else {
			dst = append(dst, `,"text":`...)
			dst = jsonwire.AppendString(dst, c.Text)
		}
		dst = append(dst, '}')
	default:
		return dst, fmt.Errorf("content block type %q is not one of text, image, audio, resource_link, resource", c.Type)
	}
	dst, err := appendAnnotations(dst, c.Annotations)
	return append(dst, '}'), err
}

// appendAnnotations appends a content block's annotations member, if any.
func appendAnnotations(dst []byte, a *ContentAnnotations) ([]byte, error) {
	if a == nil {
		return dst, nil
	}
	raw, err := json.Marshal(struct {
		Audience     []string `json:"audience,omitempty"`
		Priority     *float64 `json:"priority,omitempty"`
		LastModified string   `json:"lastModified,omitempty"`
	}{a.Audience, a.Priority, a.LastModified})
	if err != nil {
		return dst, err
	}
	dst = append(dst, `,"annotations":`...)
	return append(dst, raw...), nil
}

// encodeToolResult encodes r as a CallToolResult for revision v, with the
// 2026-07-28 envelope fields when v is the latest revision.
func encodeToolResult(r *ToolResult, v revision, serverMeta []byte) ([]byte, error) {
	structured, err := encodeStructured(r.StructuredContent)
	if err != nil {
		return nil, err
	}
	// The legacy revisions carry only an object as structuredContent.
	carried := structured != nil && (v.anyStructuredContent() || jsonwire.KindOf(structured) == jsonwire.KindObject)
	content := r.Content
	if structured != nil && (len(content) == 0 || !carried) {
		// The text form, for clients that read only text, and the only form
		// of a value a revision cannot carry as structured content.
		content = append(content[:len(content):len(content)], TextContent(string(structured)))
	}
	dst := append(openResult(make([]byte, 0, resultSize(content, structured, serverMeta)), v), `"content":[`...)
	for i := range content {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = appendContent(dst, &content[i]); err != nil {
			return nil, err
		}
	}
	dst = append(dst, ']')
	if carried {
		dst = append(dst, `,"structuredContent":`...)
		dst = append(dst, structured...)
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return closeResult(dst, v, serverMeta), nil
}

// encodeStructured encodes a result's structured content as valid UTF-8
// JSON (a json.RawMessage is passed through, its bad bytes replaced), or
// returns nil when there is none.
func encodeStructured(v any) ([]byte, error) {
	if v == nil {
		return nil, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("StructuredContent: %w", err)
	}
	if !utf8.Valid(raw) {
		raw = bytes.ToValidUTF8(raw, []byte("\uFFFD"))
	}
	return raw, nil
}

// resultSize estimates the encoded size of a result, so that it is built
// in one allocation.
func resultSize(content []Content, structured, serverMeta []byte) int {
	size := 64 + len(structured)*2 + len(serverMeta)
	for i := range content {
		size += 48 + len(content[i].Text) + len(content[i].URI) + len(content[i].Data)*4/3
	}
	return size
}
