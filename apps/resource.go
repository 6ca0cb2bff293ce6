package apps

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpmw/mcpmw"
)

// CSP lists the origins an app may reach beyond its own document, from
// which the host builds the iframe's Content-Security-Policy; a host
// allows nothing that is not declared. An app with everything inline
// declares empty lists.
type CSP struct {
	// ConnectDomains are origins for fetch, XHR and WebSocket (connect-src).
	// Always sent, empty when nil: no connections.
	ConnectDomains []string
	// ResourceDomains are origins of scripts, images, styles, fonts and
	// media ("https://*.example.com" allowed). Always sent, empty when nil.
	ResourceDomains []string
	// FrameDomains are origins of nested iframes (frame-src); nil leaves
	// the member off: frame-src 'none'.
	FrameDomains []string
	// BaseURIDomains are the origins of the document's base URI
	// (base-uri); nil leaves the member off: base-uri 'self'.
	BaseURIDomains []string
}

// Permissions are the browser features an app asks for, which a host may
// grant (Permission-Policy) or not; an app must work without them.
type Permissions struct {
	Camera, Microphone, Geolocation, ClipboardWrite bool
}

// ResourceMeta is what a UI resource tells the host about rendering it:
// its _meta.ui, sent on its contents item.
type ResourceMeta struct {
	// CSP is the origins the app reaches; nil leaves it off, and the host
	// applies its restrictive default.
	CSP *CSP
	// Permissions are the browser features the app asks for.
	Permissions Permissions
	// Domain is a dedicated sandbox origin for the app, in the form a
	// given host documents; empty leaves it to the host.
	Domain string
	// PrefersBorder asks the host for a visible border and background
	// (HintYes) or none (HintNo); unset leaves it to the host.
	PrefersBorder mcpmw.Hint
}

// The encoded forms of ResourceMeta, in the extension's member names.
type (
	resourceUI struct {
		CSP           *cspJSON            `json:"csp,omitempty"`
		Permissions   map[string]struct{} `json:"permissions,omitempty"`
		Domain        string              `json:"domain,omitempty"`
		PrefersBorder *bool               `json:"prefersBorder,omitempty"`
	}
	cspJSON struct {
		ConnectDomains  []string `json:"connectDomains"`
		ResourceDomains []string `json:"resourceDomains"`
		FrameDomains    []string `json:"frameDomains,omitempty"`
		BaseURIDomains  []string `json:"baseUriDomains,omitempty"`
	}
)

// Meta returns m as a contents item's _meta: {"ui": {...}}.
func (m ResourceMeta) Meta() map[string]any {
	var ui resourceUI
	if c := m.CSP; c != nil {
		ui.CSP = &cspJSON{ConnectDomains: orEmpty(c.ConnectDomains), ResourceDomains: orEmpty(c.ResourceDomains),
			FrameDomains: c.FrameDomains, BaseURIDomains: c.BaseURIDomains}
	}
	for name, asked := range map[string]bool{"camera": m.Permissions.Camera, "microphone": m.Permissions.Microphone,
		"geolocation": m.Permissions.Geolocation, "clipboardWrite": m.Permissions.ClipboardWrite} {
		if asked {
			if ui.Permissions == nil {
				ui.Permissions = map[string]struct{}{}
			}
			ui.Permissions[name] = struct{}{}
		}
	}
	ui.Domain = m.Domain
	if m.PrefersBorder != mcpmw.HintUnset {
		b := m.PrefersBorder == mcpmw.HintYes
		ui.PrefersBorder = &b
	}
	return map[string]any{"ui": ui}
}

// orEmpty returns s, or an empty list for nil: encoded [] rather than null.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return append([]string(nil), s...)
}

// Contents returns the contents item of the UI at uri: html, of MIMEType,
// with m as its _meta. For a Read of your own (a UI whose document you
// build per read); Resource uses it.
func Contents(uri, html string, m ResourceMeta) mcpmw.ResourceContents {
	return mcpmw.ResourceContents{URI: uri, MimeType: MIMEType, Text: html, Meta: m.Meta()}
}

// Resource returns the UI resource at uri, a ui:// URI: a caller holding
// perm reads html, one HTML5 document of MIMEType, with m on its contents
// item. The resource belongs to the extension (Resource.Extension), so a
// handler over a registry holding it declares the extension. Set Title
// and Description on what it returns as you would on any resource.
//
// Resource panics on a uri that is not a ui:// URI. Keep html static: a
// host may fetch it once and cache it. Put the data in tool results.
func Resource(uri, name string, perm mcpmw.Permission, html string, m ResourceMeta) mcpmw.Resource {
	if !strings.HasPrefix(uri, Scheme) {
		panic(fmt.Sprintf("apps: resource %q: the URI of a UI must start with %s", uri, Scheme))
	}
	contents := Contents(uri, html, m)
	return mcpmw.Resource{
		URI: uri, Name: name, MimeType: MIMEType, Permission: perm, Extension: ExtensionID,
		Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{contents}, nil
		},
	}
}
