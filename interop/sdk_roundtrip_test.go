package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testToken is the bearer token the test authenticator accepts.
const testToken = "t0ken"

// serverName is the name the handler under test gives itself.
const serverName = "interop-server"

// readerCaller is the caller every authenticated request gets: it may use
// tools that need "read" and nothing else.
type readerCaller struct{}

// Can reports whether the caller has capability c; only "read" is granted.
func (readerCaller) Can(c mcpmw.Permission) bool { return c == "read" }

// String names the caller in audit records without exposing credentials.
func (readerCaller) String() string { return "reader" }

// auditSpy is an Auditor that keeps every record it is given.
type auditSpy struct {
	mu   sync.Mutex
	recs []mcpmw.CallRecord
}

// Audit stores rec.
func (s *auditSpy) Audit(_ context.Context, rec mcpmw.CallRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs = append(s.recs, rec)
}

// records returns a copy of the records collected so far.
func (s *auditSpy) records() []mcpmw.CallRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]mcpmw.CallRecord(nil), s.recs...)
}

// exchange is one HTTP request the SDK made and the answer it got, kept so a
// failing test can show the raw wire traffic.
type exchange struct {
	method     string
	reqHeader  http.Header
	reqBody    []byte
	status     int
	respHeader http.Header
	respBody   []byte
	err        error
}

// wireRecorder is an http.RoundTripper that adds the bearer token (when
// token is set), counts requests per HTTP method and records every exchange.
type wireRecorder struct {
	next http.RoundTripper

	mu       sync.Mutex
	token    string
	counts   map[string]int
	exchange []exchange
}

// newWireRecorder returns a recorder sending through next with the given
// bearer token ("" sends no Authorization header).
func newWireRecorder(next http.RoundTripper, token string) *wireRecorder {
	return &wireRecorder{next: next, token: token, counts: map[string]int{}}
}

// setToken changes the bearer token sent on later requests.
func (w *wireRecorder) setToken(token string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.token = token
}

// count returns how many requests with the given HTTP method were sent.
func (w *wireRecorder) count(method string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.counts[method]
}

// RoundTrip sends req with the Authorization header set, and records the
// request and response bodies. Event streams are passed through unread so
// that a streaming answer is never blocked on.
func (w *wireRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	w.mu.Lock()
	token := w.token
	w.counts[req.Method]++
	w.mu.Unlock()

	req = req.Clone(req.Context())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	ex := exchange{method: req.Method, reqHeader: req.Header.Clone()}
	if req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		ex.reqBody = body
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}

	resp, err := w.next.RoundTrip(req)
	if err != nil {
		ex.err = err
		w.add(ex)
		return nil, err
	}
	ex.status = resp.StatusCode
	ex.respHeader = resp.Header.Clone()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body, rerr := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		ex.respBody = body
		ex.err = rerr
		resp.Body = io.NopCloser(bytes.NewReader(body))
	} else {
		ex.respBody = []byte("<event stream, not captured>")
	}
	w.add(ex)
	return resp, nil
}

// add appends ex to the log.
func (w *wireRecorder) add(ex exchange) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.exchange = append(w.exchange, ex)
}

// dump renders every recorded exchange as text.
func (w *wireRecorder) dump() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b strings.Builder
	for i, ex := range w.exchange {
		fmt.Fprintf(&b, "--- #%d %s", i+1, ex.method)
		for _, h := range []string{"Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Mcp-Session-Id", "Accept", "Content-Type"} {
			if v := ex.reqHeader.Values(h); len(v) > 0 {
				fmt.Fprintf(&b, " %s=%q", h, v)
			}
		}
		fmt.Fprintf(&b, "\n>>> %s\n<<< %d", ex.reqBody, ex.status)
		for _, h := range []string{"Content-Type", "Www-Authenticate", "Allow", "Mcp-Session-Id"} {
			if v := ex.respHeader.Values(h); len(v) > 0 {
				fmt.Fprintf(&b, " %s=%q", h, v)
			}
		}
		fmt.Fprintf(&b, "\n<<< %s\n", ex.respBody)
		if ex.err != nil {
			fmt.Fprintf(&b, "!!! %v\n", ex.err)
		}
	}
	return b.String()
}

// newRegistry returns a fresh Registry holding echo, add and secret.
func newRegistry() *mcpmw.Registry {
	var reg mcpmw.Registry
	reg.AddTools(
		mcpmw.Tool{
			Name:        "echo",
			Description: "Returns the message it is given.",
			Permission:  "read",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`),
			ReadOnly:    mcpmw.HintYes,
			Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				msg := args.String("message")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult(msg), nil
			},
		},
		mcpmw.Tool{
			Name:         "add",
			Description:  "Adds two numbers.",
			Permission:   "read",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`),
			ReadOnly:     mcpmw.HintYes,
			Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				a, b := args.Float("a"), args.Float("b")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				sum := a + b
				return mcpmw.ToolResult{
					Content:           []mcpmw.Content{mcpmw.TextContent(strconv.FormatFloat(sum, 'f', -1, 64))},
					StructuredContent: map[string]any{"sum": sum},
				}, nil
			},
		},
		mcpmw.Tool{
			Name:        "secret",
			Description: "Only administrators may call this.",
			Permission:  "admin",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult("the secret"), nil
			},
		},
	)
	return &reg
}

// bearerAuth admits requests carrying "Authorization: Bearer t0ken" as a
// readerCaller and refuses everything else.
var bearerAuth = mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
	if r.Header.Get("Authorization") != "Bearer "+testToken {
		return nil, fmt.Errorf("missing or wrong bearer token: %w", mcpmw.ErrUnauthorized)
	}
	return readerCaller{}, nil
})

// textOf returns the text of the result's text content blocks, joined by
// newlines.
func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// requireRPCError asserts that err carries a JSON-RPC error with the given
// code whose message contains substr, and returns it.
func requireRPCError(t *testing.T, err error, code int64, substr string) *jsonrpc.Error {
	t.Helper()
	require.Error(t, err)
	var rpcErr *jsonrpc.Error
	require.Truef(t, errors.As(err, &rpcErr), "want a JSON-RPC error, got %T: %v", err, err)
	assert.Equal(t, code, rpcErr.Code, "JSON-RPC error code: %v", err)
	assert.Contains(t, rpcErr.Message, substr)
	return rpcErr
}

// TestSDKRoundTrip drives an mcpmw handler with the official Go SDK client
// at each protocol revision mcpmw serves: connect, list tools, call tools
// (success, structured output, bad arguments, unknown tool, denied tool),
// close, and then check the audit trail against the HTTP traffic.
func TestSDKRoundTrip(t *testing.T) {
	t.Parallel()
	for _, rev := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			testRoundTrip(t, rev)
		})
	}
}

// testRoundTrip runs the whole scenario at one protocol revision.
func testRoundTrip(t *testing.T, rev string) {
	spy := &auditSpy{}
	h := mcpmw.New(newRegistry(), bearerAuth, spy, &mcpmw.Options{
		Server: mcpmw.Implementation{Name: serverName, Version: "1.2.3"},
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	wire := newWireRecorder(srv.Client().Transport, testToken)
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("MCPMW_INTEROP_DUMP") != "" {
			t.Logf("wire traffic at %s:\n%s", rev, wire.dump())
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	client := mcp.NewClient(&mcp.Implementation{Name: "interop-test", Version: "0.1.0"}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:   srv.URL,
		HTTPClient: &http.Client{Transport: wire},
		MaxRetries: -1,
	}
	cs, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: rev})
	require.NoError(t, err, "connect")

	ir := cs.InitializeResult()
	require.NotNil(t, ir)
	assert.Equal(t, rev, ir.ProtocolVersion, "negotiated protocol version")
	if assert.NotNil(t, ir.ServerInfo, "server info") {
		assert.Equal(t, serverName, ir.ServerInfo.Name)
		assert.Equal(t, "1.2.3", ir.ServerInfo.Version)
	}
	if assert.NotNil(t, ir.Capabilities) {
		assert.NotNil(t, ir.Capabilities.Tools, "tools capability")
	}
	assert.Empty(t, cs.ID(), "a stateless server issues no session id")

	// tools/list shows what the caller may use, and nothing else.
	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err, "tools/list")
	tools := map[string]*mcp.Tool{}
	var names []string
	for _, tool := range list.Tools {
		tools[tool.Name] = tool
		names = append(names, tool.Name)
	}
	assert.Equal(t, []string{"echo", "add"}, names, "listed tools, in registration order")
	if add := tools["add"]; assert.NotNil(t, add) {
		assert.NotNil(t, add.InputSchema, "add input schema")
		assert.NotNil(t, add.OutputSchema, "add output schema")
		if assert.NotNil(t, add.Annotations) {
			assert.True(t, add.Annotations.ReadOnlyHint, "add readOnlyHint")
		}
	}

	// echo returns its message as text.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello, world"}})
	require.NoError(t, err, "call echo")
	assert.False(t, res.IsError)
	assert.Equal(t, "hello, world", textOf(res))

	// add returns the sum as text and as structured content.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
	require.NoError(t, err, "call add")
	assert.False(t, res.IsError)
	assert.Equal(t, "5", textOf(res))
	assert.Equal(t, map[string]any{"sum": float64(5)}, res.StructuredContent, "structured content")

	// A wrong argument type is an isError result naming the field.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": 42}})
	require.NoError(t, err, "call echo with a bad argument")
	assert.True(t, res.IsError, "isError")
	assert.Contains(t, textOf(res), "message")

	// An unknown tool is a JSON-RPC error.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "no-such-tool", Arguments: map[string]any{}})
	requireRPCError(t, err, mcpmw.CodeInvalidParams, "no-such-tool")

	// A tool the caller lacks the capability for is refused.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "secret", Arguments: map[string]any{}})
	requireRPCError(t, err, mcpmw.CodeInvalidParams, "secret")

	// The refusal did not break the session.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "still here"}})
	require.NoError(t, err, "call echo after a refusal")
	assert.Equal(t, "still here", textOf(res))

	require.NoError(t, cs.Close(), "close the session")

	// A client without credentials cannot connect, and its attempts are
	// audited without a caller.
	wire.setToken("")
	anon := mcp.NewClient(&mcp.Implementation{Name: "interop-anon", Version: "0.1.0"}, nil)
	anonSession, err := anon.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   srv.URL,
		HTTPClient: &http.Client{Transport: wire},
		MaxRetries: -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
	if !assert.Error(t, err, "connect without credentials") {
		_ = anonSession.Close()
	}

	// Every answer has been written, so every audit record has been made.
	srv.Close()
	checkAudit(t, rev, spy.records(), wire)
}

// checkAudit checks the audit trail against the HTTP traffic: one record per
// POST, a caller on every record except failed authentications, and the
// expected outcome for each tool call.
func checkAudit(t *testing.T, rev string, recs []mcpmw.CallRecord, wire *wireRecorder) {
	t.Helper()
	assert.Equal(t, wire.count(http.MethodPost), len(recs), "one audit record per POST")

	var authFailures int
	type call struct {
		tool    string
		outcome mcpmw.Outcome
	}
	var calls []call
	for i, rec := range recs {
		if rec.Caller == nil {
			assert.Errorf(t, rec.AuthError, "record %d (%s) has no caller but no auth error: %+v", i, rec.Method, rec)
			assert.Equal(t, mcpmw.OutcomeDenied, rec.Outcome, "record %d outcome", i)
			assert.Equal(t, http.StatusUnauthorized, rec.Status, "record %d status", i)
			authFailures++
			continue
		}
		assert.NoError(t, rec.AuthError, "record %d", i)
		assert.Equalf(t, rev, rec.ProtocolVersion, "record %d (%s) protocol version", i, rec.Method)
		if rec.Method == "tools/call" {
			calls = append(calls, call{rec.Tool, rec.Outcome})
		}
	}
	assert.Positive(t, authFailures, "the anonymous connection attempt is audited")
	assert.Equal(t, []call{
		{"echo", mcpmw.OutcomeOK},
		{"add", mcpmw.OutcomeOK},
		{"echo", mcpmw.OutcomeError},
		{"no-such-tool", mcpmw.OutcomeError},
		{"secret", mcpmw.OutcomeDenied},
		{"echo", mcpmw.OutcomeOK},
	}, calls, "audited tool calls")
}
