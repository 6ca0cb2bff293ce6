package apps

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpmw/mcpmw"
)

// A Visibility says who may call a tool that has a UI: the host's model,
// the app, or both (the default).
type Visibility string

// The visibilities the extension defines.
const (
	VisibilityModel Visibility = "model" // the model sees and calls it
	VisibilityApp   Visibility = "app"   // the app calls it, through the host
)

// ToolMeta is what a tool says about its UI: its _meta.ui.
type ToolMeta struct {
	// ResourceURI is the ui:// URI of the resource that renders the
	// tool's results; empty for a tool with no UI of its own (an app-only
	// tool the app calls, say).
	ResourceURI string
	// Visibility lists who may call the tool; nil means both the model
	// and the app, left off the wire. A list without VisibilityModel makes
	// the tool app-only (see the package doc).
	Visibility []Visibility
}

// toolUI is _meta.ui of a tool, as encoded.
type toolUI struct {
	ResourceURI string       `json:"resourceUri,omitempty"`
	Visibility  []Visibility `json:"visibility,omitempty"`
}

// The _meta keys of a tool: the object the extension defines, and the
// flat key that hosts of the extension's 1.x still read (deprecated
// there, emitted beside the object as the official server helper does).
const (
	metaUI          = "ui"
	metaResourceURI = "ui/resourceUri"
)

// Tool returns t with its UI named in its _meta: "ui" {"resourceUri",
// "visibility"} and the deprecated flat "ui/resourceUri". A Visibility
// without VisibilityModel also makes the tool ListedOnlyFor
// ClientCapability(), so that a client that does not render apps never
// sees it. Register the tool with AddTools, which checks that the UI is
// registered.
//
// Tool panics, naming the tool, on a ResourceURI that is not a ui:// URI,
// on a Visibility that is empty or names anything but "model" and "app",
// and on a t whose Meta already has either key.
func Tool(t mcpmw.Tool, m ToolMeta) mcpmw.Tool {
	fail := func(format string, a ...any) {
		panic(fmt.Sprintf("apps: tool %q: ", t.Name) + fmt.Sprintf(format, a...))
	}
	if m.ResourceURI != "" && !strings.HasPrefix(m.ResourceURI, Scheme) {
		fail("ResourceURI %q is not a %s URI", m.ResourceURI, Scheme)
	}
	if m.Visibility != nil && len(m.Visibility) == 0 {
		fail("Visibility is empty: nobody could call the tool (leave it nil for both model and app)")
	}
	for _, v := range m.Visibility {
		if v != VisibilityModel && v != VisibilityApp {
			fail("Visibility %q is neither %q nor %q", v, VisibilityModel, VisibilityApp)
		}
	}
	for _, k := range []string{metaUI, metaResourceURI} {
		if _, ok := t.Meta[k]; ok {
			fail("its Meta already has the key %q, which Tool sets", k)
		}
	}
	meta := maps.Clone(t.Meta)
	if meta == nil {
		meta = make(map[string]any, 2)
	}
	meta[metaUI] = toolUI{ResourceURI: m.ResourceURI, Visibility: slices.Clone(m.Visibility)}
	if m.ResourceURI != "" {
		meta[metaResourceURI] = m.ResourceURI
	}
	t.Meta = meta
	if m.Visibility != nil && !slices.Contains(m.Visibility, VisibilityModel) {
		t.ListedOnlyFor = append(slices.Clone(t.ListedOnlyFor), ClientCapability())
	}
	return t
}

// AddTools registers tools in reg, as reg.AddTools does, after checking
// that the UI each names (in its _meta, set by Tool or by hand) is a UI
// resource registered in reg. It panics, naming the tool, when one is not:
// a host would fail to render it. Add the UI resources first.
func AddTools(reg *mcpmw.Registry, tools ...mcpmw.Tool) {
	for _, t := range tools {
		for _, uri := range resourceURIs(t.Meta) {
			if !strings.HasPrefix(uri, Scheme) {
				panic(fmt.Sprintf("apps: tool %q: its resourceUri %q is not a %s URI", t.Name, uri, Scheme))
			}
			res, ok := reg.LookupResource(uri)
			switch {
			case !ok:
				panic(fmt.Sprintf("apps: tool %q: its resourceUri %q names no registered resource; add the UI (Resource) to the registry first", t.Name, uri))
			case res.MimeType != MIMEType:
				panic(fmt.Sprintf("apps: tool %q: its resourceUri %q names a resource of MIME type %q, not %q", t.Name, uri, res.MimeType, MIMEType))
			}
		}
	}
	reg.AddTools(tools...)
}

// resourceURIs returns the UI URIs a tool's _meta names: _meta.ui's
// resourceUri (as Tool sets it, or a map written by hand) and the flat key.
func resourceURIs(meta map[string]any) []string {
	var out []string
	switch ui := meta[metaUI].(type) {
	case toolUI:
		out = append(out, ui.ResourceURI)
	case map[string]any:
		s, _ := ui["resourceUri"].(string)
		out = append(out, s)
	}
	if s, ok := meta[metaResourceURI].(string); ok {
		out = append(out, s)
	}
	return slices.DeleteFunc(out, func(s string) bool { return s == "" })
}
