package mcpmw

import (
	"slices"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// Implementation describes this server to clients (serverInfo).
type Implementation struct {
	Name        string // required on the wire; defaults to "mcp-server"
	Version     string // defaults to "0.0.0"
	Title       string // optional display name
	Description string // optional; not sent to 2025-06-18 clients
	WebsiteURL  string // optional; not sent to 2025-06-18 clients
	Icons       []Icon // optional; not sent to 2025-06-18 clients
}

// An Icon is an image a client may show for a server or a tool.
type Icon struct {
	Src      string   // an https: or data: URI
	MimeType string   // optional
	Sizes    []string // optional, e.g. "48x48" or "any"
	Theme    string   // optional: "light" or "dark"
}

// cloneIcons returns a copy of icons sharing nothing with it.
func cloneIcons(icons []Icon) []Icon {
	if icons == nil {
		return nil
	}
	out := make([]Icon, len(icons))
	for i, ic := range icons {
		ic.Sizes = slices.Clone(ic.Sizes)
		out[i] = ic
	}
	return out
}

func appendIcons(dst []byte, icons []Icon) []byte {
	dst = append(dst, '[')
	for i, ic := range icons {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"src":`...)
		dst = jsonwire.AppendString(dst, ic.Src)
		if ic.MimeType != "" {
			dst = append(dst, `,"mimeType":`...)
			dst = jsonwire.AppendString(dst, ic.MimeType)
		}
		if len(ic.Sizes) > 0 {
			dst = append(dst, `,"sizes":[`...)
			for j, s := range ic.Sizes {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = jsonwire.AppendString(dst, s)
			}
			dst = append(dst, ']')
		}
		if ic.Theme != "" {
			dst = append(dst, `,"theme":`...)
			dst = jsonwire.AppendString(dst, ic.Theme)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendImplementation encodes impl as the revision v defines it.
func appendImplementation(dst []byte, impl Implementation, v revision) []byte {
	dst = append(dst, `{"name":`...)
	dst = jsonwire.AppendString(dst, impl.Name)
	if impl.Title != "" {
		dst = append(dst, `,"title":`...)
		dst = jsonwire.AppendString(dst, impl.Title)
	}
	dst = append(dst, `,"version":`...)
	dst = jsonwire.AppendString(dst, impl.Version)
	if v.icons() {
		if impl.Description != "" {
			dst = append(dst, `,"description":`...)
			dst = jsonwire.AppendString(dst, impl.Description)
		}
		if impl.WebsiteURL != "" {
			dst = append(dst, `,"websiteUrl":`...)
			dst = jsonwire.AppendString(dst, impl.WebsiteURL)
		}
		if len(impl.Icons) > 0 {
			dst = append(dst, `,"icons":`...)
			dst = appendIcons(dst, impl.Icons)
		}
	}
	return append(dst, '}')
}
