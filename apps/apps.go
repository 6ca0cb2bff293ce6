package apps

import "github.com/mcpmw/mcpmw"

// The extension's names on the wire.
const (
	// ExtensionID is the extension's identifier, under which a client
	// declares it in its capabilities' extensions, and the server in its.
	ExtensionID = "io.modelcontextprotocol/ui"
	// MIMEType is the MIME type of a UI's contents, and the one a client
	// lists in its declaration's mimeTypes when it renders them.
	MIMEType = "text/html;profile=mcp-app"
	// Scheme is how every UI resource's URI starts.
	Scheme = "ui://"
)

// ClientCapability is what a client declares when it renders apps: the
// extension, with MIMEType among its mimeTypes. A tool ListedOnlyFor it
// is offered only to such clients.
func ClientCapability() mcpmw.ClientCapability {
	return mcpmw.ClientCapability{Path: []string{"extensions", ExtensionID, "mimeTypes"}, Contains: MIMEType}
}

// Extension is the extension's declaration, for Options.Extensions. A
// handler over a registry holding a resource built by Resource declares
// it without being told; give it here to declare it regardless.
func Extension() mcpmw.Extension { return mcpmw.Extension{ID: ExtensionID} }
