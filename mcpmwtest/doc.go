// Package mcpmwtest tests an MCP endpoint over real HTTP: it starts the
// endpoint in-process, talks to it as one caller on one revision of the
// protocol, and records what the endpoint audited.
//
// A whole test of an endpoint, where tools.Echo stands for one of the
// application's tools and require and assert are
// github.com/stretchr/testify's (any assertions do; this package needs
// none):
//
//	func TestEcho(t *testing.T) {
//		var reg mcpmw.Registry
//		reg.AddTools(tools.Echo)
//		authn := mcpmwtest.Tokens{"reader-token": &mcpmwtest.User{Name: "reader", Permissions: []mcpmw.Permission{"read"}}}
//		rec := mcpmwtest.NewRecorder()
//		srv := mcpmwtest.NewServer(t, mcpmw.New(&reg, authn, rec, nil))
//
//		c := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision("2025-11-25"))
//		res, err := c.CallTool(t.Context(), "echo", map[string]any{"message": "hi"})
//		require.NoError(t, err)
//		assert.Equal(t, "hi", res.Text)
//		assert.Equal(t, mcpmw.OutcomeOK, rec.Last().Outcome)
//	}
//
// NewServer wraps any http.Handler (the application's own router, with its
// own authenticator and auditor, works as well) and closes it when the test
// ends. Where no testing.TB is at hand, in TestMain or an Example, start an
// httptest.Server and use NewClient with its URL.
//
// # The client
//
// A Client speaks the wire as a real client does: every request is a POST
// with Content-Type application/json and Accept "application/json,
// text/event-stream". On 2026-07-28 (the default) each request carries
// params._meta (protocol version, client capabilities, clientInfo) and the
// MCP-Protocol-Version, Mcp-Method and Mcp-Name headers; on a legacy
// revision the client first does the initialize handshake, which a
// stateless endpoint answers without a session, and then sends the
// negotiated MCP-Protocol-Version. ListTools follows every page;
// CallTool returns the content, the text, the structured content (with
// Decode) and isError; Discover describes the server on either wire. For
// resources and prompts, ListResources, ListResourceTemplates and
// ListPrompts follow every page too, ReadResource returns the contents
// (blobs decoded) and their text, GetPrompt the messages, and Complete the
// completion values for a PromptRef or a TemplateRef. On 2026-07-28,
// Listen opens a subscriptions/listen stream and returns once the endpoint
// acknowledged it; its Listener's Next returns each change notification
// (checked against what was acknowledged) until the stream ends. Call
// reaches any other method.
//
// An answer that is not a result is an *Error carrying the JSON-RPC code,
// message and data and the HTTP status and headers, so a test asserts a
// -32602 or a 403 with its WWW-Authenticate challenge. Every answer embeds
// an Exchange with the status, the headers and, when the endpoint answered
// with an event stream, the notifications that came before the answer
// (Progress, Logs).
//
// It is a test client, not a general MCP client: it answers no request
// from the server, keeps no session, never retries, and treats anything
// the endpoint must not send (an event after the answer, an answer with
// another id) as an error.
package mcpmwtest
