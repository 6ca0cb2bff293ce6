package mcpmwtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// sent is one request as the endpoint received it.
type sent struct {
	header http.Header
	body   map[string]any
}

// capture wraps h and keeps every request it receives.
type capture struct {
	h    http.Handler
	mu   sync.Mutex
	reqs []sent
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	c.mu.Lock()
	c.reqs = append(c.reqs, sent{header: r.Header.Clone(), body: body})
	c.mu.Unlock()
	r.Body = io.NopCloser(strings.NewReader(string(raw)))
	c.h.ServeHTTP(w, r)
}

func (c *capture) requests() []sent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sent(nil), c.reqs...)
}

func newCapture(t *testing.T) (*mcpmwtest.Server, *capture) {
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	c := &capture{h: mcpmw.New(&reg, testTokens, mcpmwtest.NewRecorder(), nil)}
	return mcpmwtest.NewServer(t, c), c
}

// The client sends what a 2026-07-28 client must: the media types, the
// routing headers and the per-request _meta.
func TestWireModern(t *testing.T) {
	t.Parallel()
	srv, got := newCapture(t)
	c := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.ClientInfo("suite", "2.0"),
		mcpmwtest.Capabilities(map[string]any{"sampling": map[string]any{}}))
	_, err := c.CallTool(t.Context(), "echo", map[string]any{"message": "hi"})
	require.NoError(t, err)

	reqs := got.requests()
	require.Len(t, reqs, 1)
	h, body := reqs[0].header, reqs[0].body
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	assert.Equal(t, "application/json, text/event-stream", h.Get("Accept"))
	assert.Equal(t, "Bearer reader-token", h.Get("Authorization"))
	assert.Equal(t, "2026-07-28", h.Get("MCP-Protocol-Version"))
	assert.Equal(t, "tools/call", h.Get("Mcp-Method"))
	assert.Equal(t, "echo", h.Get("Mcp-Name"))
	assert.Equal(t, "2.0", body["jsonrpc"])
	assert.Equal(t, 1.0, body["id"])
	assert.Equal(t, map[string]any{
		"name":      "echo",
		"arguments": map[string]any{"message": "hi"},
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"sampling": map[string]any{}},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "suite", "version": "2.0"},
		},
	}, body["params"])
}

// A legacy client initializes without a version header, then sends the
// negotiated version and no 2026-07-28 headers or _meta.
func TestWireLegacy(t *testing.T) {
	t.Parallel()
	srv, got := newCapture(t)
	c := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision(mcpmw.Version20251125))
	_, err := c.CallTool(t.Context(), "echo", map[string]any{"message": "hi"})
	require.NoError(t, err)

	reqs := got.requests()
	require.Len(t, reqs, 3)
	initReq, initialized, call := reqs[0], reqs[1], reqs[2]
	assert.Equal(t, "initialize", initReq.body["method"])
	assert.Empty(t, initReq.header.Values("MCP-Protocol-Version"))
	assert.Equal(t, map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mcpmwtest", "version": "0"},
	}, initReq.body["params"])

	assert.Equal(t, "notifications/initialized", initialized.body["method"])
	assert.NotContains(t, initialized.body, "id")
	assert.Equal(t, "2025-11-25", initialized.header.Get("MCP-Protocol-Version"))

	for _, r := range reqs {
		assert.Equal(t, "application/json", r.header.Get("Content-Type"))
		assert.Equal(t, "application/json, text/event-stream", r.header.Get("Accept"))
		assert.Empty(t, r.header.Values("Mcp-Method"))
		assert.Empty(t, r.header.Values("Mcp-Name"))
	}
	assert.Equal(t, "2025-11-25", call.header.Get("MCP-Protocol-Version"))
	assert.Equal(t, map[string]any{"name": "echo", "arguments": map[string]any{"message": "hi"}}, call.body["params"])
}

// Mcp-Name and Mcp-Param-* values that are not plain visible ASCII are sent
// in the =?base64?…?= form.
func TestWireHeaderEncoding(t *testing.T) {
	t.Parallel()
	srv, got := newCapture(t)
	c := srv.Client(mcpmwtest.Bearer("reader-token"))
	_, err := c.ListTools(t.Context())
	require.NoError(t, err)
	_, err = c.CallTool(t.Context(), "weather", map[string]any{"region": "Zürich"})
	require.NoError(t, err)
	_, err = c.CallTool(t.Context(), "weather", map[string]any{"region": "eu-west"})
	require.NoError(t, err)
	reqs := got.requests()
	assert.Equal(t, "=?base64?WsO8cmljaA==?=", reqs[1].header.Get("Mcp-Param-Region"))
	assert.Equal(t, "eu-west", reqs[2].header.Get("Mcp-Param-Region"))
}

// streamServer answers every request with the given raw event stream.
func streamServer(t *testing.T, stream string) *mcpmwtest.Client {
	srv := mcpmwtest.NewServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, stream)
	}))
	return srv.Client()
}

func TestEventStream(t *testing.T) {
	t.Parallel()
	const progress = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`
	const answer = `{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`
	for _, tt := range []struct {
		name, stream, err string
		notifications     int
	}{
		{name: "notification then answer", stream: "event: message\ndata: " + progress + "\n\nevent: message\ndata: " + answer + "\n\n", notifications: 1},
		{name: "CRLF, comments and split data", stream: ":\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":1,\"result\":{}}\r\n\r\n"},
		{name: "no answer", stream: "data: " + progress + "\n\n", err: "mcpmwtest: the event stream ended without an answer to request 1"},
		{name: "event after the answer", stream: "data: " + answer + "\n\ndata: " + progress + "\n\n", err: "mcpmwtest: an event after the answer: " + progress},
		{name: "request from the server", stream: `data: {"jsonrpc":"2.0","id":7,"method":"sampling/createMessage"}` + "\n\n",
			err: "mcpmwtest: the server sent a request (sampling/createMessage) on the stream; this client answers none"},
		{name: "unterminated event", stream: "data: " + answer, err: `mcpmwtest: the event stream ended inside an event (no blank line after "` + strings.ReplaceAll(answer, `"`, `\"`) + `")`},
		{name: "wrong id", stream: `data: {"jsonrpc":"2.0","id":2,"result":{}}` + "\n\n", err: "mcpmwtest: the answer has id 2, the request had 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := streamServer(t, tt.stream).Call(t.Context(), "tools/list", nil)
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.True(t, resp.Stream)
			assert.Len(t, resp.Notifications, tt.notifications)
		})
	}
}

// A tasks/get, tasks/update or tasks/cancel names its task in Mcp-Name, as
// the tasks extension requires on 2026-07-28.
func TestWireTaskRequestsNameTheTask(t *testing.T) {
	t.Parallel()
	srv, got := newCapture(t)
	c := srv.Client(mcpmwtest.Bearer("reader-token"))
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		_, _ = c.Call(t.Context(), method, map[string]any{"taskId": "t-1", "inputResponses": map[string]any{}})
	}
	reqs := got.requests()
	require.Len(t, reqs, 3)
	for _, r := range reqs {
		assert.Equal(t, "t-1", r.header.Get("Mcp-Name"), r.header.Get("Mcp-Method"))
	}
}
