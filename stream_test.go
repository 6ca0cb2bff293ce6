package mcpmw_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// flushRecorder is a ResponseRecorder that records what had been written at
// each Flush.
type flushRecorder struct {
	*httptest.ResponseRecorder
	mu      sync.Mutex
	flushes []string
}

func newFlushRecorder() *flushRecorder {
	return &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
}

func (f *flushRecorder) Flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flushes = append(f.flushes, f.Body.String())
	f.ResponseRecorder.Flush()
}

// events splits an SSE body into the JSON of its data lines.
func events(t *testing.T, body string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(data), &m), data)
			out = append(out, m)
		}
	}
	return out
}

// notifier is a tool that reports progress and logs, then answers.
func notifier(calls func(ctx context.Context) error) mcpmw.Tool {
	return mcpmw.Tool{Name: "work", Description: "Works.", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			if err := calls(ctx); err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult("done"), nil
		}}
}

func progressHandler(t *testing.T, tool mcpmw.Tool, opts *mcpmw.Options) (http.Handler, *spy) {
	t.Helper()
	var reg mcpmw.Registry
	reg.AddTools(tool)
	a := &spy{}
	return mcpmw.New(&reg, tokenAuthn, a, opts), a
}

func TestProgressStream(t *testing.T) {
	t.Parallel()
	var errs []error
	h, audit := progressHandler(t, notifier(func(ctx context.Context) error {
		errs = append(errs,
			mcpmw.Progress(ctx, 0, 100, "starting"),
			mcpmw.Progress(ctx, 50, 100, ""),
			mcpmw.Progress(ctx, 50, 100, "again"), // not an increase: dropped
			mcpmw.Progress(ctx, 100, 0, ""),
		)
		return nil
	}), nil)
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"work","arguments":{},"_meta":{"progressToken":42,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	w := newFlushRecorder()
	h.ServeHTTP(w, req(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "work"))

	assert.Equal(t, 200, w.Code)
	assert.Equal(t, "text/event-stream", w.Header().Get("Content-Type"))
	assert.Equal(t, "no-cache", w.Header().Get("Cache-Control"))
	assert.Equal(t, "no", w.Header().Get("X-Accel-Buffering"))
	assert.NoError(t, errs[0])
	assert.NoError(t, errs[1])
	assert.Error(t, errs[2])
	assert.NoError(t, errs[3])

	ev := events(t, w.Body.String())
	require.Len(t, ev, 4)
	for i, want := range []map[string]any{
		{"progressToken": 42.0, "progress": 0.0, "total": 100.0, "message": "starting"},
		{"progressToken": 42.0, "progress": 50.0, "total": 100.0},
		{"progressToken": 42.0, "progress": 100.0},
	} {
		assert.Equal(t, "notifications/progress", ev[i]["method"])
		assert.Equal(t, want, ev[i]["params"])
		assert.NotContains(t, ev[i], "id")
	}
	assert.EqualValues(t, 7, ev[3]["id"])
	assert.Equal(t, "complete", ev[3]["result"].(map[string]any)["resultType"])
	assert.Contains(t, w.Body.String(), `"progressToken":42,`, "the token keeps its JSON type")
	assert.Len(t, w.flushes, 4, "each event is flushed as it is written")
	assert.True(t, strings.HasPrefix(w.flushes[0], "event: message\ndata: "))

	require.Len(t, audit.records(), 1)
	assert.Equal(t, 200, audit.records()[0].Status)
}

func TestProgressFallsBackToJSON(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		accept string
		token  string
	}{
		{"no token", "application/json, text/event-stream", ""},
		{"json only", "application/json", `"progressToken":"p",`},
		{"no accept", "", `"progressToken":"p",`},
		{"bad token type", "application/json, text/event-stream", `"progressToken":{"x":1},`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var err error
			h, _ := progressHandler(t, notifier(func(ctx context.Context) error {
				err = mcpmw.Progress(ctx, 1, 2, "")
				return nil
			}), nil)
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","_meta":{` + tt.token + `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "work", "Accept", tt.accept))
			assert.Equal(t, 200, w.Code)
			assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
			assert.NoError(t, err, "dropping progress is not an error")
			assert.NotContains(t, w.Body.String(), "notifications/progress")
		})
	}
}

// TestProgressWithoutATokenSendsNothing checks that a request which opened
// an event stream for log messages but sent no progressToken gets no
// progress notification (there is no token to put in one), while its log
// messages still go out and every event stays valid JSON.
func TestProgressWithoutATokenSendsNothing(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		r    *http.Request
	}{
		{"2026 with logLevel", req(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","_meta":{"io.modelcontextprotocol/logLevel":"info",`+
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "work")},
		{"legacy with ClientLogLevel", legacy("2025-11-25", "1", "tools/call", `"name":"work"`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var progressErrs []error
			h, audit := progressHandler(t, notifier(func(ctx context.Context) error {
				progressErrs = append(progressErrs, mcpmw.Progress(ctx, 1, 2, "before"))
				if err := mcpmw.Log(ctx, mcpmw.LogInfo, "worker", "working"); err != nil {
					return err
				}
				progressErrs = append(progressErrs, mcpmw.Progress(ctx, 2, 2, "after"))
				return nil
			}), &mcpmw.Options{ClientLogLevel: mcpmw.LogInfo})
			w := newFlushRecorder()
			h.ServeHTTP(w, tt.r)

			require.Equal(t, 200, w.Code, w.Body.String())
			assert.Equal(t, "text/event-stream", w.Header().Get("Content-Type"), "the log message opened the stream")
			assert.Equal(t, []error{nil, nil}, progressErrs, "dropping progress is not an error")
			assert.NotContains(t, w.Body.String(), "progress")
			ev := events(t, w.Body.String()) // fails on an event that is not JSON
			require.Len(t, ev, 2, w.Body.String())
			assert.Equal(t, "notifications/message", ev[0]["method"])
			assert.EqualValues(t, 1, ev[1]["id"])
			assert.Contains(t, ev[1], "result")
			require.Len(t, audit.records(), 1)
			assert.Equal(t, mcpmw.OutcomeOK, audit.records()[0].Outcome)
		})
	}
}

func TestErrorsBeforeTheStreamKeepTheirStatus(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "needs_sampling", Description: "d", Permission: "read", RequiredClientCapabilities: []mcpmw.ClientCapability{mcpmw.Capability("sampling")},
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			_ = mcpmw.Progress(ctx, 1, 0, "")
			return mcpmw.TextResult("ran"), nil
		}},
		mcpmw.Tool{Name: "admin_only", Description: "d", Permission: "admin", Call: noop},
		mcpmw.Tool{Name: "late_error", Description: "d", Permission: "read", Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			_ = mcpmw.Progress(ctx, 1, 0, "")
			return mcpmw.ToolResult{}, errors.New("boom after progress")
		}})
	a := &spy{}
	h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{Logger: newTextLogger(&syncBuffer{})})
	call := func(name string) *httptest.ResponseRecorder {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", name))
		return w
	}
	w := call("needs_sampling")
	assert.Equal(t, 400, w.Code)
	a1 := decode(t, w)
	assert.Equal(t, mcpmw.CodeMissingRequiredClientCapability, a1.Error.Code)
	assert.JSONEq(t, `{"requiredCapabilities":{"sampling":{}}}`, string(a1.Error.Data))

	w = call("admin_only")
	assert.Equal(t, 403, w.Code)

	w = call("late_error")
	assert.Equal(t, 200, w.Code, "the status went out with the first event")
	ev := events(t, w.Body.String())
	require.Len(t, ev, 2)
	assert.EqualValues(t, -32603, ev[1]["error"].(map[string]any)["code"])

	recs := a.records()
	require.Len(t, recs, 3)
	assert.Equal(t, []int{400, 403, 200}, []int{recs[0].Status, recs[1].Status, recs[2].Status})
	assert.Equal(t, -32603, recs[2].ErrorCode)
}

func TestNotificationsAfterTheResponse(t *testing.T) {
	t.Parallel()
	var saved context.Context
	h, _ := progressHandler(t, notifier(func(ctx context.Context) error {
		saved = ctx
		return mcpmw.Progress(ctx, 1, 0, "")
	}), nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "work"))
	before := w.Body.String()
	assert.ErrorIs(t, mcpmw.Progress(saved, 2, 0, ""), mcpmw.ErrStreamClosed)
	assert.Equal(t, before, w.Body.String(), "nothing is written after the response")
}

func TestLogToClient(t *testing.T) {
	t.Parallel()
	logAll := notifier(func(ctx context.Context) error {
		for _, l := range []mcpmw.LogLevel{mcpmw.LogDebug, mcpmw.LogInfo, mcpmw.LogWarning, mcpmw.LogError} {
			if err := mcpmw.Log(ctx, l, "worker", map[string]string{"level": string(l)}); err != nil {
				return err
			}
		}
		return nil
	})
	levels := func(body string) []string {
		var out []string
		for _, ev := range events(t, body) {
			if ev["method"] == "notifications/message" {
				p := ev["params"].(map[string]any)
				assert.Equal(t, "worker", p["logger"])
				out = append(out, p["level"].(string))
			}
		}
		return out
	}
	modernBody := func(level string) string {
		if level != "" {
			level = `"io.modelcontextprotocol/logLevel":"` + level + `",`
		}
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","_meta":{` + level + `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	}
	for _, tt := range []struct {
		name string
		opts *mcpmw.Options
		req  *http.Request
		want []string
	}{
		{"2026 without logLevel sends none", &mcpmw.Options{ClientLogLevel: mcpmw.LogDebug},
			req(modernBody(""), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "work"), nil},
		{"2026 at warning", &mcpmw.Options{ClientLogLevel: mcpmw.LogDebug},
			req(modernBody("warning"), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "work"), []string{"warning", "error"}},
		{"2026 logging not enabled", nil,
			req(modernBody("debug"), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "work"), nil},
		{"legacy at the configured level", &mcpmw.Options{ClientLogLevel: mcpmw.LogInfo},
			legacy("2025-11-25", "1", "tools/call", `"name":"work"`), []string{"info", "warning", "error"}},
		{"legacy 2025-06-18", &mcpmw.Options{ClientLogLevel: mcpmw.LogInfo},
			legacy("2025-06-18", "1", "tools/call", `"name":"work"`), []string{"info", "warning", "error"}},
		{"legacy logging not enabled", nil, legacy("2025-11-25", "1", "tools/call", `"name":"work"`), nil},
		{"legacy client without event streams", &mcpmw.Options{ClientLogLevel: mcpmw.LogDebug},
			legacy("2025-11-25", "1", "tools/call", `"name":"work"`, "Accept", "application/json"), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, _ := progressHandler(t, logAll, tt.opts)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, tt.req)
			require.Equal(t, 200, w.Code, w.Body.String())
			assert.Equal(t, tt.want, levels(w.Body.String()))
			if tt.want == nil {
				assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
			}
		})
	}
	assert.Error(t, mcpmw.Log(context.Background(), "loud", "", "x"), "unknown levels are refused")
	assert.NoError(t, mcpmw.Log(context.Background(), mcpmw.LogInfo, "", "x"), "outside a request Log does nothing")
	assert.Panics(t, func() { mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{ClientLogLevel: "loud"}) })
}

// blocking is a tool that waits for its context and reports why it ended.
func blocking(started chan<- struct{}, ended chan<- error) mcpmw.Tool {
	return mcpmw.Tool{Name: "wait", Description: "Waits.", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				ended <- context.Cause(ctx)
				return mcpmw.ToolResult{}, ctx.Err()
			case <-time.After(patience):
				ended <- nil
				return mcpmw.TextResult("finished"), nil
			}
		}}
}

func TestClientDisconnectCancelsTheTool(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		req  func(url string) *http.Request
	}{
		{"2026", func(url string) *http.Request {
			r := modern("1", "tools/call", `"name":"wait"`)
			r.URL, _ = r.URL.Parse(url)
			return r
		}},
		{"legacy", func(url string) *http.Request {
			r := legacy("2025-11-25", "1", "tools/call", `"name":"wait"`)
			r.URL, _ = r.URL.Parse(url)
			return r
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			started, ended := make(chan struct{}, 1), make(chan error, 1)
			var reg mcpmw.Registry
			reg.AddTools(blocking(started, ended))
			a := &spy{}
			srv := httptest.NewServer(mcpmw.New(&reg, tokenAuthn, a, nil))
			defer srv.Close()

			r := tt.req(srv.URL + "/mcp")
			r.RequestURI = ""
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				resp, err := http.DefaultClient.Do(r.WithContext(ctx))
				if err == nil {
					resp.Body.Close()
				}
			}()
			<-started
			cancel()
			select {
			case cause := <-ended:
				assert.ErrorIs(t, cause, context.Canceled)
			case <-time.After(2 * patience): // past the tool's own patience, which would send nil
				t.Fatal("the tool was not cancelled")
			}
			<-done
			require.Eventually(t, func() bool { return len(a.records()) == 1 }, patience, 10*time.Millisecond)
			assert.Contains(t, a.records()[0].Summary, "client went away")
		})
	}
}

func TestLegacyCancelledNotification(t *testing.T) {
	t.Parallel()
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	var reg mcpmw.Registry
	reg.AddTools(blocking(started, ended))
	a := &spy{}
	h := mcpmw.New(&reg, tokenAuthn, a, nil)

	answer := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, legacy("2025-11-25", `"call-1"`, "tools/call", `"name":"wait"`))
		answer <- w
	}()
	<-started
	cancelBody := func(token string) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1","reason":"user"}}`,
			"MCP-Protocol-Version", "2025-11-25", "Authorization", "Bearer "+token))
		assert.Equal(t, 202, w.Code)
	}
	cancelBody("writer") // another caller cannot cancel it
	select {
	case <-ended:
		t.Fatal("a different caller cancelled the call")
	case <-time.After(50 * time.Millisecond):
	}
	cancelBody("reader")
	select {
	case cause := <-ended:
		assert.EqualError(t, cause, "mcpmw: cancelled by the client")
	case <-time.After(2 * patience):
		t.Fatal("the call was not cancelled")
	}
	w := <-answer
	assert.Equal(t, 200, w.Code)
	res := decode(t, w).Result
	assert.Equal(t, true, res["isError"])
	assert.Contains(t, toJSON(t, res), "cancelled by the client")
	// The writer's cancel, then the reader's; the call's record may come
	// before the reader's cancel's: the cancel wakes it before it is
	// recorded itself.
	var cancels []string
	for _, rec := range a.records() {
		if rec.Method == "notifications/cancelled" {
			cancels = append(cancels, rec.Summary)
		}
	}
	require.Len(t, cancels, 2)
	assert.Contains(t, cancels[0], "no such call")
	assert.Equal(t, `cancelled "call-1"`, cancels[1])
	assert.Len(t, a.records(), 3, "and the call's")
}

func TestToolTimeout(t *testing.T) {
	t.Parallel()
	started, ended := make(chan struct{}, 2), make(chan error, 2)
	slow := blocking(started, ended)
	var reg mcpmw.Registry
	reg.AddTools(slow)
	quick := slow
	quick.Name, quick.Timeout = "wait_quick", 20*time.Millisecond
	reg.AddTools(quick)
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{ToolTimeout: 30 * time.Millisecond})
	for _, name := range []string{"wait", "wait_quick"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, modern("1", "tools/call", `"name":"`+name+`"`))
		assert.Equal(t, 200, w.Code)
		res := decode(t, w).Result
		assert.Equal(t, true, res["isError"])
		assert.Contains(t, toJSON(t, res), "did not finish within")
		<-started
		assert.Error(t, <-ended)
	}
}
