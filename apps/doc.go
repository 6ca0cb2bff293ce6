// Package apps serves MCP Apps (the io.modelcontextprotocol/ui extension,
// SEP-1865): interactive user interfaces that a host renders in a
// sandboxed iframe beside a server's tools, and that call those tools back
// through the host.
//
// A UI is a resource with a ui:// URI whose contents are one HTML5
// document of the MIME type "text/html;profile=mcp-app"; a tool names the
// UI that renders its results in its _meta. The package builds the
// mcpmw.Resource and mcpmw.Tool values that say so; the root package
// serves them as it serves any other, gated by the same permissions.
//
// # Example
//
//	var reg mcpmw.Registry
//	reg.AddResources(apps.Resource("ui://notes/board", "notes-board", "read", boardHTML,
//		apps.ResourceMeta{CSP: &apps.CSP{}, PrefersBorder: mcpmw.HintYes}))
//	apps.AddTools(&reg,
//		apps.Tool(notesList, apps.ToolMeta{ResourceURI: "ui://notes/board"}),
//		apps.Tool(boardState, apps.ToolMeta{ResourceURI: "ui://notes/board", Visibility: []apps.Visibility{apps.VisibilityApp}}))
//
// # App-only tools
//
// A tool whose Visibility lacks VisibilityModel is meant for the app
// alone: the host keeps it from its model. A host that does not render
// apps does not know that, so such a tool is listed, and callable, only
// for a request whose client declares the extension with MIMEType: on
// 2026-07-28, each request's clientCapabilities say so, and a call from
// any other is refused with -32021 naming the extension; on the legacy
// revisions, whose requests declare nothing (only initialize does, which a
// stateless server has forgotten), it is never listed and a call of it is
// a call of an unknown tool (-32602). Visibility is not authorisation: a
// call from an app reaches the server exactly as one from the model, with
// the same caller, and the tool's Permission is checked first, as for
// every tool.
package apps
