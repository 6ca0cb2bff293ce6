package mcpmwtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// The callers of the test endpoint, by bearer token.
var testTokens = mcpmwtest.Tokens{
	"reader-token": &mcpmwtest.User{Name: "reader", Permissions: []mcpmw.Permission{"read"}},
	"writer-token": &mcpmwtest.User{Name: "writer", Permissions: []mcpmw.Permission{"read", "write"}},
}

// testTools are the tools of the test endpoint: plain text, structured
// content, an isError result, a tool only writers may call, one that
// reports progress and logs, and one with an argument mirrored in a header.
func testTools() []mcpmw.Tool {
	echo := func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
		msg := args.String("message")
		if err := args.Err(); err != nil {
			return mcpmw.ToolResult{}, err
		}
		return mcpmw.TextResult(msg), nil
	}
	return []mcpmw.Tool{
		{Name: "echo", Description: "Echoes.", Permission: "read", ReadOnly: mcpmw.HintYes,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`), Call: echo},
		{Name: "add", Description: "Adds.", Permission: "read",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"}}}`),
			Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				a, b := args.Float("a"), args.Float("b")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.StructuredResult(map[string]float64{"sum": a + b}), nil
			}},
		{Name: "fails", Description: "Fails for the model.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ErrorResult("the upstream is down"), nil
			}},
		{Name: "note_delete", Description: "Deletes a note.", Permission: "write", Destructive: mcpmw.HintYes, Call: echo},
		{Name: "count", Description: "Counts to three, reporting progress.", Permission: "read",
			Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				for i := 1; i <= 3; i++ {
					if err := mcpmw.Progress(ctx, float64(i), 3, "step"); err != nil {
						return mcpmw.ToolResult{}, err
					}
				}
				if err := mcpmw.Log(ctx, mcpmw.LogInfo, "count", "done"); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult("3"), nil
			}},
		{Name: "weather", Description: "Weather in a region.", Permission: "read",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`),
			Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult("sunny in " + args.String("region")), nil
			}},
	}
}

// newTestServer serves testTools with a Recorder as its auditor.
func newTestServer(t *testing.T, opts *mcpmw.Options) (*mcpmwtest.Server, *mcpmwtest.Recorder) {
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	rec := mcpmwtest.NewRecorder()
	return mcpmwtest.NewServer(t, mcpmw.New(&reg, testTokens, rec, opts)), rec
}

// revisions are the wires every test runs on.
var revisions = []string{mcpmw.LatestVersion, mcpmw.Version20251125, mcpmw.Version20250618}

func TestListTools(t *testing.T) {
	t.Parallel()
	for _, v := range revisions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			srv, _ := newTestServer(t, &mcpmw.Options{PageSize: 2}) // three pages for the reader
			tools, err := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision(v)).ListTools(t.Context())
			require.NoError(t, err)
			var names []string
			for _, tool := range tools {
				names = append(names, tool.Name)
			}
			assert.Equal(t, []string{"echo", "add", "fails", "count", "weather"}, names, "note_delete needs write")
			require.NotNil(t, tools[0].Annotations.ReadOnlyHint)
			assert.True(t, *tools[0].Annotations.ReadOnlyHint)
			assert.JSONEq(t, `{"type":"object","properties":{"sum":{"type":"number"}}}`, string(tools[1].OutputSchema))
		})
	}
}

func TestCallTool(t *testing.T) {
	t.Parallel()
	for _, v := range revisions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			srv, rec := newTestServer(t, nil)
			c := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision(v))

			res, err := c.CallTool(t.Context(), "echo", map[string]any{"message": "hi"})
			require.NoError(t, err)
			assert.Equal(t, "hi", res.Text)
			assert.False(t, res.IsError)
			assert.Equal(t, http.StatusOK, res.Status)
			assert.False(t, res.Stream)
			last := rec.Last()
			assert.Equal(t, mcpmw.OutcomeOK, last.Outcome)
			assert.Equal(t, "echo", last.Tool)
			assert.Equal(t, "reader", last.Caller.(*mcpmwtest.User).Name)
			assert.Equal(t, v, last.ProtocolVersion)
			if v == mcpmw.LatestVersion {
				assert.Equal(t, "mcpmwtest", last.ClientName)
			} else {
				assert.Empty(t, last.ClientName, "legacy clients name themselves in initialize only")
			}
			assert.Equal(t, v, c.Version())

			res, err = c.CallTool(t.Context(), "add", map[string]any{"a": 2, "b": 3})
			require.NoError(t, err)
			var sum struct{ Sum float64 }
			require.NoError(t, res.Decode(&sum))
			assert.Equal(t, 5.0, sum.Sum)
			assert.JSONEq(t, `{"sum":5}`, res.Text, "structured content is also sent as text")

			res, err = c.CallTool(t.Context(), "fails", nil)
			require.NoError(t, err, "isError is a result, not an error")
			assert.True(t, res.IsError)
			assert.Equal(t, "the upstream is down", res.Text)
			assert.Equal(t, mcpmw.OutcomeError, rec.Last().Outcome)

			res, err = c.CallTool(t.Context(), "echo", map[string]any{"message": 5})
			require.NoError(t, err)
			assert.True(t, res.IsError, "a bad argument is an isError result")
			assert.Contains(t, res.Text, "message")
		})
	}
}

func TestCallToolErrors(t *testing.T) {
	t.Parallel()
	for _, v := range revisions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			srv, rec := newTestServer(t, nil)
			reader := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision(v))

			_, err := reader.CallTool(t.Context(), "nope", nil)
			var e *mcpmwtest.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, mcpmw.CodeInvalidParams, e.Code)
			assert.Contains(t, e.Message, "nope")
			assert.Equal(t, mcpmw.OutcomeError, rec.Last().Outcome)

			_, err = reader.CallTool(t.Context(), "note_delete", map[string]any{"message": "x"})
			require.ErrorAs(t, err, &e)
			assert.Equal(t, http.StatusForbidden, e.Status)
			assert.Equal(t, `Bearer error="insufficient_scope", scope="write"`, e.Header.Get("WWW-Authenticate"))
			last := rec.Last()
			assert.Equal(t, mcpmw.OutcomeDenied, last.Outcome)
			assert.Equal(t, "note_delete", last.Tool)

			writer := srv.Client(mcpmwtest.Bearer("writer-token"), mcpmwtest.Revision(v))
			res, err := writer.CallTool(t.Context(), "note_delete", map[string]any{"message": "x"})
			require.NoError(t, err)
			assert.Equal(t, "x", res.Text)
		})
	}
}

func TestUnauthenticated(t *testing.T) {
	t.Parallel()
	for _, v := range revisions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			srv, rec := newTestServer(t, nil)
			_, err := srv.Client(mcpmwtest.Revision(v)).ListTools(t.Context())
			var e *mcpmwtest.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, http.StatusUnauthorized, e.Status)
			assert.Equal(t, "Bearer", e.Header.Get("WWW-Authenticate"))
			assert.Equal(t, mcpmw.OutcomeDenied, rec.Last().Outcome)
			assert.ErrorIs(t, rec.Last().AuthError, mcpmw.ErrUnauthorized)
		})
	}
}

func TestProgressStream(t *testing.T) {
	t.Parallel()
	for _, v := range revisions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			srv, rec := newTestServer(t, &mcpmw.Options{ClientLogLevel: mcpmw.LogInfo}) // legacy clients cannot ask
			c := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision(v),
				mcpmwtest.RequestProgress(), mcpmwtest.LogLevel(mcpmw.LogInfo))
			res, err := c.CallTool(t.Context(), "count", nil)
			require.NoError(t, err)
			assert.True(t, res.Stream)
			assert.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
			assert.Equal(t, "3", res.Text)
			progress := res.Progress()
			require.Len(t, progress, 3)
			for i, p := range progress {
				assert.Equal(t, float64(i+1), p.Progress)
				assert.Equal(t, 3.0, p.Total)
				assert.Equal(t, "step", p.Message)
			}
			require.Len(t, res.Logs(), 1)
			assert.Equal(t, mcpmwtest.LogMessage{Level: "info", Logger: "count", Data: json.RawMessage(`"done"`)}, res.Logs()[0])
			assert.Equal(t, mcpmw.OutcomeOK, rec.Last().Outcome)

			plain, err := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision(v)).CallTool(t.Context(), "count", nil)
			require.NoError(t, err)
			if v == mcpmw.LatestVersion {
				assert.False(t, plain.Stream, "no progressToken, no logLevel: a JSON answer")
			}
			assert.Empty(t, plain.Progress())
		})
	}
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	for _, v := range revisions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			srv, rec := newTestServer(t, &mcpmw.Options{Server: mcpmw.Implementation{Name: "kit", Version: "1.0.0"}, Instructions: "Be brief."})
			d, err := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision(v)).Discover(t.Context())
			require.NoError(t, err)
			assert.Equal(t, v, d.ProtocolVersion)
			assert.Equal(t, "kit", d.ServerInfo.Name)
			assert.Equal(t, "Be brief.", d.Instructions)
			assert.Contains(t, d.Capabilities, "tools")
			if v == mcpmw.LatestVersion {
				assert.Equal(t, revisions, d.SupportedVersions)
				assert.Equal(t, 1, rec.Len())
			} else {
				assert.Equal(t, 2, rec.Len(), "initialize and notifications/initialized")
				assert.Equal(t, mcpmw.OutcomeAccepted, rec.Last().Outcome)
			}
		})
	}
}

// A legacy client negotiates once and then sends the version it got.
func TestLegacyHandshake(t *testing.T) {
	t.Parallel()
	srv, rec := newTestServer(t, nil)
	c := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision(mcpmw.Version20251125))
	_, err := c.ListTools(t.Context())
	require.NoError(t, err)
	_, err = c.ListTools(t.Context())
	require.NoError(t, err)
	var methods []string
	for _, r := range rec.Records() {
		methods = append(methods, r.Method)
	}
	assert.Equal(t, []string{"initialize", "notifications/initialized", "tools/list", "tools/list"}, methods)

	// A version the server does not serve is negotiated to one it does,
	// which a client that asked for another refuses to use silently.
	old := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision("2024-11-05"))
	_, err = old.ListTools(t.Context())
	assert.EqualError(t, err, "mcpmwtest: the client asked for 2024-11-05, the server chose 2025-11-25")
	d, err := old.Discover(t.Context())
	require.NoError(t, err)
	assert.Equal(t, mcpmw.Version20251125, d.ProtocolVersion)
	assert.Equal(t, mcpmw.Version20251125, old.Version())
}

// Call reaches any method, and the client's _meta can be overridden to
// test the endpoint's checks.
func TestCall(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t, nil)
	c := srv.Client(mcpmwtest.Bearer("reader-token"))

	resp, err := c.Call(t.Context(), "tools/list", nil)
	require.NoError(t, err)
	var page struct{ CacheScope string }
	require.NoError(t, resp.Decode(&page))
	assert.Equal(t, "private", page.CacheScope)

	_, err = c.Call(t.Context(), "resources/list", nil)
	var e *mcpmwtest.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, mcpmw.CodeMethodNotFound, e.Code)
	assert.Equal(t, http.StatusNotFound, e.Status)

	_, err = c.Call(t.Context(), "tools/list", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2099-01-01"}})
	require.ErrorAs(t, err, &e)
	assert.Equal(t, mcpmw.CodeHeaderMismatch, e.Code, "_meta and MCP-Protocol-Version differ")

	_, err = srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision("2099-01-01")).Call(t.Context(), "tools/list", nil)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, mcpmw.CodeUnsupportedProtocolVersion, e.Code)
	assert.JSONEq(t, `{"supported":["2026-07-28","2025-11-25","2025-06-18"],"requested":"2099-01-01"}`, string(e.Data))
}

// On 2026-07-28 an argument annotated with x-mcp-header is mirrored in its
// Mcp-Param-* header once the client has listed the tool.
func TestParamHeaders(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t, nil)
	c := srv.Client(mcpmwtest.Bearer("reader-token"))
	args := map[string]any{"region": "Zürich"}

	_, err := c.CallTool(t.Context(), "weather", args)
	var e *mcpmwtest.Error
	require.ErrorAs(t, err, &e, "not listed yet: no Mcp-Param-Region")
	assert.Equal(t, mcpmw.CodeHeaderMismatch, e.Code)
	assert.Equal(t, http.StatusBadRequest, e.Status)

	_, err = c.ListTools(t.Context())
	require.NoError(t, err)
	res, err := c.CallTool(t.Context(), "weather", args)
	require.NoError(t, err)
	assert.Equal(t, "sunny in Zürich", res.Text)
}

// A router in front of the endpoint is reached through Path; an answer
// that is not JSON-RPC comes back as an *Error with code 0.
func TestPathAndPlainHTTP(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpmw.New(&reg, testTokens, mcpmwtest.NewRecorder(), nil))
	srv := mcpmwtest.NewServer(t, mux)

	res, err := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Path("/mcp")).CallTool(t.Context(), "echo", map[string]any{"message": "hi"})
	require.NoError(t, err)
	assert.Equal(t, "hi", res.Text)

	_, err = srv.Client(mcpmwtest.Bearer("reader-token")).CallTool(t.Context(), "echo", map[string]any{"message": "hi"})
	var e *mcpmwtest.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 0, e.Code)
	assert.Equal(t, http.StatusNotFound, e.Status)
	assert.Equal(t, "404 page not found", e.Message)
}

func TestNotify(t *testing.T) {
	t.Parallel()
	srv, rec := newTestServer(t, nil)
	ex, err := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision(mcpmw.Version20251125)).
		Notify(t.Context(), "notifications/cancelled", map[string]any{"requestId": 99})
	require.NoError(t, err)
	assert.Equal(t, http.StatusAccepted, ex.Status)
	assert.Equal(t, mcpmw.OutcomeAccepted, rec.Last().Outcome)

	_, err = srv.Client().Notify(t.Context(), "notifications/cancelled", nil)
	var e *mcpmwtest.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, http.StatusUnauthorized, e.Status)
}

func TestRecorderWaitFor(t *testing.T) {
	t.Parallel()
	rec := mcpmwtest.NewRecorder()
	go rec.Audit(context.Background(), mcpmw.CallRecord{Method: "ping"})
	recs, err := rec.WaitFor(t.Context(), 1)
	require.NoError(t, err)
	assert.Equal(t, "ping", recs[0].Method)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	recs, err = rec.WaitFor(ctx, 2)
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Len(t, recs, 1)

	rec.Reset()
	assert.Equal(t, 0, rec.Len())
	assert.Equal(t, mcpmw.CallRecord{}, rec.Last())
}
