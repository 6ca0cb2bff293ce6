package mcpmw_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// faultEnv is a handler on loopback whose hooks a test replaces with faulty
// ones; it counts audit records and keeps the handler's log.
type faultEnv struct {
	t    *testing.T
	srv  *httptest.Server
	h    http.Handler
	logs *syncBuffer

	mu   sync.Mutex
	recs []mcpmw.CallRecord
	// audit, when set, runs inside the counting auditor (after counting).
	audit func(ctx context.Context, rec mcpmw.CallRecord)
}

func newFaultEnv(t *testing.T, authn mcpmw.Authenticator, tools ...mcpmw.Tool) *faultEnv {
	t.Helper()
	e := &faultEnv{t: t, logs: &syncBuffer{}}
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "echo", Description: "Echoes.", Permission: "read",
		Call: func(_ context.Context, _ mcpmw.Caller, a *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult(a.OptString("message", "")), nil
		}})
	reg.AddTools(tools...)
	if authn == nil {
		authn = tokenAuthn
	}
	e.h = mcpmw.New(&reg, authn, mcpmw.AuditFunc(func(ctx context.Context, rec mcpmw.CallRecord) {
		e.mu.Lock()
		e.recs = append(e.recs, rec)
		audit := e.audit
		e.mu.Unlock()
		if audit != nil {
			audit(ctx, rec)
		}
	}), &mcpmw.Options{Logger: slog.New(slog.NewTextHandler(e.logs, nil))})
	e.srv = httptest.NewServer(e.h)
	t.Cleanup(e.srv.Close)
	return e
}

func (e *faultEnv) records() []mcpmw.CallRecord {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]mcpmw.CallRecord(nil), e.recs...)
}

// waitRecords waits (patience at most) until n records are there, then
// checks that no more arrive.
func (e *faultEnv) waitRecords(n int) []mcpmw.CallRecord {
	e.t.Helper()
	for end := time.Now().Add(patience); len(e.records()) < n && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	recs := e.records()
	require.Len(e.t, recs, n, "audit records")
	return recs
}

// call posts a 2026-07-28 tools/call over the network and decodes the answer.
func (e *faultEnv) call(ctx context.Context, tool, args string, hdr ...string) (*http.Response, answer, error) {
	r := modern(`"f-1"`, "tools/call", `"name":"`+tool+`","arguments":`+args, hdr...)
	return e.post(ctx, r)
}

func (e *faultEnv) post(ctx context.Context, r *http.Request) (*http.Response, answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/mcp", r.Body)
	if err != nil {
		return nil, answer{}, err
	}
	req.Header = r.Header
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		return nil, answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp, answer{}, err
	}
	var a answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return resp, a, fmt.Errorf("not JSON (%v): %.200q", err, raw)
	}
	if !utf8.Valid(raw) {
		return resp, a, fmt.Errorf("the answer is not UTF-8: %.200q", raw)
	}
	return resp, a, nil
}

// send writes a 2026-07-28 tools/call on a raw connection (Accept allows an
// event stream) and returns the connection, for tests that hang up or read
// the stream themselves. meta is prepended to the _meta members.
func (e *faultEnv) send(t *testing.T, tool, args, meta string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	require.NoError(t, err)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args +
		`,"_meta":{` + meta + `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	_, err = fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Authorization: Bearer reader\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: %s\r\nContent-Length: %d\r\n\r\n%s",
		tool, len(body), body)
	require.NoError(t, err)
	return conn
}

// stillServes checks the process and the handler live on after a fault.
func (e *faultEnv) stillServes() {
	e.t.Helper()
	before := len(e.records())
	resp, a, err := e.call(context.Background(), "echo", `{"message":"still here"}`)
	require.NoError(e.t, err)
	assert.Equal(e.t, 200, resp.StatusCode)
	assert.Equal(e.t, "still here", a.Result["content"].([]any)[0].(map[string]any)["text"])
	e.waitRecords(before + 1)
}

func wantError(t *testing.T, resp *http.Response, a answer, status, code int) {
	t.Helper()
	require.NotNil(t, resp)
	assert.Equal(t, status, resp.StatusCode)
	if assert.NotNil(t, a.Error, "want error %d", code) {
		assert.Equal(t, code, a.Error.Code)
		assert.NotEmpty(t, a.Error.Message)
	}
	assert.Equal(t, "2.0", a.JSONRPC)
}

// TestFaults injects faults into every hook and checks, each time, what the
// client gets, that the audit trail has exactly the right records, and that
// the handler goes on serving. It runs its cases one after the other so that
// goleak can check, at the end, that no fault left a goroutine behind.
func TestFaults(t *testing.T) {
	noLeaks(t)
	ctx := context.Background()

	t.Run("auditor panics", func(t *testing.T) {
		e := newFaultEnv(t, nil, mcpmw.Tool{Name: "boom", Description: "Panics.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) { panic("tool exploded") }})
		e.audit = func(context.Context, mcpmw.CallRecord) { panic("audit store down") }
		resp, a, err := e.call(ctx, "echo", `{"message":"hi"}`)
		require.NoError(t, err)
		assert.Equal(t, 200, resp.StatusCode, "the client still gets its answer")
		assert.Nil(t, a.Error)
		resp, a, err = e.call(ctx, "echo", `{}`, "Authorization", "Bearer wrong")
		require.NoError(t, err)
		wantError(t, resp, a, 401, -32600)
		resp, a, err = e.call(ctx, "boom", `{}`)
		require.NoError(t, err)
		wantError(t, resp, a, 500, -32603)
		recs := e.waitRecords(3) // once each, never a second call after the panic
		assert.Equal(t, []int{200, 401, 500}, []int{recs[0].Status, recs[1].Status, recs[2].Status})
		logs := e.logs.String()
		assert.Equal(t, 3, strings.Count(logs, "auditor panicked; the audit record was lost"), "each lost record is logged")
		assert.Contains(t, logs, "audit store down")
		assert.Contains(t, logs, "tool=boom", "the log line carries the lost record")
		e.audit = nil
		e.stillServes()
	})

	t.Run("auditor blocks", func(t *testing.T) {
		e := newFaultEnv(t, nil)
		release := make(chan struct{})
		auditCtxErrs := make(chan error, 2)
		e.audit = func(ctx context.Context, _ mcpmw.CallRecord) {
			select {
			case <-release:
			case <-time.After(patience):
			}
			auditCtxErrs <- ctx.Err()
		}
		// The answer waits for its record.
		done := make(chan *http.Response, 1)
		go func() {
			resp, _, _ := e.call(ctx, "echo", `{"message":"hi"}`)
			done <- resp
		}()
		select {
		case <-done:
			t.Fatal("answered before the audit record was made")
		case <-time.After(100 * time.Millisecond):
		}
		close(release)
		select {
		case resp := <-done:
			require.NotNil(t, resp)
			assert.Equal(t, 200, resp.StatusCode)
		case <-time.After(patience):
			t.Fatal("no answer after the auditor returned")
		}
		e.waitRecords(1)

		// A client that gives up while the auditor blocks: one record, made
		// with a context that outlives the client.
		release = make(chan struct{})
		cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, _, err := e.call(cctx, "echo", `{"message":"gone"}`)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		close(release)
		recs := e.waitRecords(2)
		assert.Equal(t, 200, recs[1].Status)
		assert.NoError(t, <-auditCtxErrs)
		assert.NoError(t, <-auditCtxErrs, "the audit context is not cancelled when the client leaves")
		e.audit = nil
		e.stillServes()
	})

	t.Run("auditor is slow", func(t *testing.T) {
		e := newFaultEnv(t, nil)
		e.audit = func(context.Context, mcpmw.CallRecord) { time.Sleep(20 * time.Millisecond) }
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for c := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range 4 {
					msg := fmt.Sprintf("%d-%d", c, n)
					resp, a, err := e.call(ctx, "echo", `{"message":"`+msg+`"}`)
					switch {
					case err != nil:
						errs <- err
					case resp.StatusCode != 200 || a.Result["content"].([]any)[0].(map[string]any)["text"] != msg:
						errs <- fmt.Errorf("%s: got %d %+v", msg, resp.StatusCode, a)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		e.waitRecords(64)
		e.audit = nil
		e.stillServes()
	})

	t.Run("authenticator errors", func(t *testing.T) {
		const secret = "token 7f3a is revoked"
		for _, tt := range []struct {
			err    error
			status int
		}{
			{errors.New(secret), 401},
			{fmt.Errorf("%s: %w", secret, mcpmw.ErrForbidden), 403},
			{fmt.Errorf("%s: %w", secret, mcpmw.ErrTooManyRequests), 429},
			{fmt.Errorf("%s: %w", secret, faultStatus(503)), 503},
		} {
			e := newFaultEnv(t, mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return nil, tt.err }))
			resp, a, err := e.call(ctx, "echo", `{}`)
			require.NoError(t, err)
			wantError(t, resp, a, tt.status, -32600)
			assert.NotContains(t, a.Error.Message, "7f3a", "the authenticator's error is audited, never sent")
			recs := e.waitRecords(1)
			assert.Equal(t, tt.err, recs[0].AuthError)
			assert.Equal(t, mcpmw.OutcomeDenied, recs[0].Outcome)
			assert.Nil(t, recs[0].Caller)
		}
	})

	t.Run("authenticator panics", func(t *testing.T) {
		panicking := true
		var mu sync.Mutex
		e := newFaultEnv(t, mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
			mu.Lock()
			p := panicking
			mu.Unlock()
			if p {
				if r.Header.Get("X-Nil-Panic") != "" {
					panic(nil) // recovered as a *runtime.PanicNilError since Go 1.21
				}
				panic("authenticator exploded")
			}
			return reader, nil
		}))
		for _, hdr := range [][]string{nil, {"X-Nil-Panic", "1"}} {
			resp, a, err := e.call(ctx, "echo", `{}`, hdr...)
			require.NoError(t, err)
			wantError(t, resp, a, 500, -32603)
		}
		recs := e.waitRecords(2)
		for _, rec := range recs {
			assert.Equal(t, 500, rec.Status)
			assert.Nil(t, rec.Caller)
			assert.Contains(t, rec.Summary, "panic: ")
		}
		assert.Contains(t, e.logs.String(), "authenticator exploded")
		mu.Lock()
		panicking = false
		mu.Unlock()
		e.stillServes()
	})

	t.Run("tool panics", func(t *testing.T) {
		e := newFaultEnv(t, nil,
			mcpmw.Tool{Name: "boom", Description: "Panics.", Permission: "read",
				Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
					panic(fmt.Errorf("nil map in %s", "orders"))
				}},
			mcpmw.Tool{Name: "abort", Description: "Aborts the response.", Permission: "read",
				Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
					panic(http.ErrAbortHandler)
				}})
		resp, a, err := e.call(ctx, "boom", `{}`)
		require.NoError(t, err)
		wantError(t, resp, a, 500, -32603)
		assert.NotContains(t, a.Error.Message, "orders", "the panic value is logged, not sent")
		recs := e.waitRecords(1)
		assert.Equal(t, "boom", recs[0].Tool)
		assert.Contains(t, e.logs.String(), "nil map in orders")

		// http.ErrAbortHandler is the one panic net/http expects: the
		// handler records the request, then lets it abort the connection.
		_, _, err = e.call(ctx, "abort", `{}`)
		assert.Error(t, err, "an aborted response reaches the client as a broken connection")
		recs = e.waitRecords(2)
		assert.Equal(t, "abort", recs[1].Tool)
		assert.Equal(t, mcpmw.OutcomeError, recs[1].Outcome)
		e.stillServes()
	})

	t.Run("tool returns invalid UTF-8", func(t *testing.T) {
		bad := "caf\xe9 \xff\xfe ok"
		e := newFaultEnv(t, nil,
			mcpmw.Tool{Name: "text", Description: "Invalid UTF-8 text.", Permission: "read",
				Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
					return mcpmw.ToolResult{Content: []mcpmw.Content{mcpmw.TextContent(bad), mcpmw.ResourceLink("https://x.example/"+bad, bad)}}, nil
				}},
			mcpmw.Tool{Name: "is_error", Description: "Invalid UTF-8 in an isError result.", Permission: "read",
				Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
					return mcpmw.ErrorResult("upstream said %s", bad), nil
				}},
			mcpmw.Tool{Name: "structured", Description: "Invalid UTF-8 in structured content.", Permission: "read",
				Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
					return mcpmw.StructuredResult(map[string]string{bad: bad}), nil
				}},
			mcpmw.Tool{Name: "raw", Description: "Invalid UTF-8 inside raw JSON.", Permission: "read",
				Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
					return mcpmw.StructuredResult(json.RawMessage(`{"v":"` + bad + `"}`)), nil
				}},
			mcpmw.Tool{Name: "rpc_error", Description: "Invalid UTF-8 in a JSON-RPC error.", Permission: "read",
				Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
					return mcpmw.ToolResult{}, &mcpmw.Error{Code: mcpmw.CodeInvalidParams, Message: bad}
				}})
		for _, tt := range []struct {
			tool   string
			status int
			code   int
		}{{"text", 200, 0}, {"is_error", 200, 0}, {"structured", 200, 0}, {"rpc_error", 200, -32602}, {"raw", 200, 0}} {
			resp, a, err := e.call(ctx, tt.tool, `{}`)
			require.NoError(t, err, tt.tool)
			assert.Equal(t, tt.status, resp.StatusCode, tt.tool)
			if tt.code != 0 {
				wantError(t, resp, a, tt.status, tt.code)
				assert.Contains(t, a.Error.Message, "\uFFFD", "invalid bytes become U+FFFD")
				continue
			}
			require.NotNil(t, a.Result, tt.tool)
			text := fmt.Sprint(a.Result["content"], a.Result["structuredContent"])
			assert.Contains(t, text, "caf\uFFFD", tt.tool)
		}
		e.waitRecords(5)
	})

	t.Run("tool returns 8 MiB", func(t *testing.T) {
		huge := strings.Repeat("0123456789abcdef", 8<<20/16)
		e := newFaultEnv(t, nil, mcpmw.Tool{Name: "huge", Description: "Returns 8 MiB.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult(huge), nil
			}})
		resp, a, err := e.call(ctx, "huge", `{}`)
		require.NoError(t, err)
		assert.Equal(t, 200, resp.StatusCode)
		assert.Equal(t, huge, a.Result["content"].([]any)[0].(map[string]any)["text"], "all of it, intact")
		recs := e.waitRecords(1)
		assert.Equal(t, mcpmw.OutcomeOK, recs[0].Outcome)
		e.stillServes()
	})

	t.Run("tool answers after the client left", func(t *testing.T) {
		started, finished := make(chan struct{}, 1), make(chan error, 1)
		e := newFaultEnv(t, nil, mcpmw.Tool{Name: "late", Description: "Answers after its client left.", Permission: "read",
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				started <- struct{}{}
				select {
				case <-ctx.Done():
				case <-time.After(patience):
					finished <- errors.New("the tool's context was not cancelled when its client left")
					return mcpmw.ToolResult{}, nil
				}
				finished <- nil
				// The tool chose to answer anyway, and at length.
				return mcpmw.TextResult(strings.Repeat("late ", 200_000)), nil
			}})
		conn := e.send(t, "late", `{}`, "")
		select {
		case <-started:
		case <-time.After(patience):
			t.Fatal("the tool never started")
		}
		require.NoError(t, conn.Close())
		require.NoError(t, <-finished)
		recs := e.waitRecords(1)
		// Row 34 of docs/status.md: nobody reads it, but the record says why.
		assert.Equal(t, 500, recs[0].Status)
		assert.Equal(t, mcpmw.CodeInternalError, recs[0].ErrorCode)
		assert.Equal(t, mcpmw.OutcomeError, recs[0].Outcome)
		assert.Contains(t, recs[0].Summary, "client went away")
		e.stillServes()
	})

	t.Run("progress stream cut mid-way", func(t *testing.T) {
		toolErr := make(chan error, 1)
		e := newFaultEnv(t, nil, mcpmw.Tool{Name: "progress", Description: "Reports progress until stopped.", Permission: "read",
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				start := time.Now()
				for i := 1; time.Since(start) < patience; i++ { // bounded in time, not in count: under load each round takes longer
					if err := mcpmw.Progress(ctx, float64(i), 0, "working"); err != nil {
						toolErr <- err
						return mcpmw.ToolResult{}, err
					}
					time.Sleep(time.Millisecond)
				}
				toolErr <- nil
				return mcpmw.TextResult("done"), nil
			}})
		conn := e.send(t, "progress", `{}`, `"progressToken":"p-1",`)
		br := bufio.NewReader(conn)
		status, err := br.ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "HTTP/1.1 200 OK\r\n", status)
		for line := ""; !strings.HasPrefix(line, "data: "); {
			line, err = br.ReadString('\n')
			require.NoError(t, err, "reading up to the first event")
		}
		require.NoError(t, conn.Close()) // mid-stream
		select {
		case err := <-toolErr:
			assert.Error(t, err, "Progress reports the broken stream to the tool")
		case <-time.After(2 * patience): // past the tool's own bound, which would report nil
			t.Fatal("the tool went on after its client left")
		}
		recs := e.waitRecords(1)
		// Row 35: the stream began with 200; the answer's code and outcome.
		assert.Equal(t, 200, recs[0].Status)
		assert.Equal(t, mcpmw.CodeInternalError, recs[0].ErrorCode)
		assert.Equal(t, mcpmw.OutcomeError, recs[0].Outcome)
		e.stillServes()
	})

	t.Run("tool notifies after its answer is decided", func(t *testing.T) {
		// A tool leaves a goroutine behind that reports progress once the
		// handler has its answer: while the record is being made, and
		// after the response is written. Neither may change what was sent.
		late := make(chan chan error, 2)
		e := newFaultEnv(t, nil, mcpmw.Tool{Name: "leaky", Description: "Leaves a goroutine behind.", Permission: "read",
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				go func() {
					for reply := range late {
						reply <- mcpmw.Progress(ctx, 1, 0, "too late")
					}
				}()
				return mcpmw.ToolResult{}, errors.New("failed")
			}})
		defer close(late)
		var duringAudit error
		e.audit = func(context.Context, mcpmw.CallRecord) {
			reply := make(chan error)
			late <- reply
			duringAudit = <-reply
		}
		conn := e.send(t, "leaky", `{}`, `"progressToken":"p-2",`)
		defer conn.Close()
		_ = conn.SetReadDeadline(time.Now().Add(patience))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		raw, _ := io.ReadAll(resp.Body)
		recs := e.waitRecords(1)
		require.Equal(t, resp.StatusCode, recs[0].Status, "the record says what was sent (Progress during the audit returned %v): %q", duringAudit, raw)
		assert.Equal(t, 500, resp.StatusCode)
		assert.Error(t, duringAudit, "no notification once the answer is decided")
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		e.audit = nil
		reply := make(chan error)
		late <- reply
		assert.ErrorIs(t, <-reply, mcpmw.ErrStreamClosed, "after the response, Progress reports the stream closed")
	})

	t.Run("response writer fails mid-write", func(t *testing.T) {
		progressErr := make(chan error, 1)
		e := newFaultEnv(t, nil, mcpmw.Tool{Name: "big", Description: "A big answer.", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult(strings.Repeat("x", 64<<10)), nil
			}}, mcpmw.Tool{Name: "progress", Description: "Streams.", Permission: "read",
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				for i := 1; i <= 3; i++ {
					if err := mcpmw.Progress(ctx, float64(i), 3, ""); err != nil {
						progressErr <- err
						return mcpmw.ToolResult{}, err
					}
				}
				progressErr <- nil
				return mcpmw.TextResult("done"), nil
			}})
		for _, tt := range []struct {
			name   string
			r      *http.Request
			status int
		}{
			{"result", modern("1", "tools/call", `"name":"big"`), 200},
			{"error", modern("2", "tools/call", `"name":"nope"`), 200},
			{"refusal", modern("3", "tools/call", `"name":"big"`, "Authorization", "Bearer wrong"), 401},
		} {
			w := &failingWriter{ResponseRecorder: httptest.NewRecorder(), failAfter: 16}
			assert.NotPanics(t, func() { e.h.ServeHTTP(w, tt.r) }, tt.name)
			assert.Equal(t, tt.status, w.Code, tt.name)
			assert.Equal(t, 16, w.Body.Len(), "%s: what the connection took before it broke", tt.name)
		}
		// Mid-stream: the first event's write fails; the tool hears of it
		// and nothing more is written.
		w := &failingWriter{ResponseRecorder: httptest.NewRecorder(), failAfter: 16}
		r := modern("4", "tools/call", `"name":"progress"`)
		r.Body = io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":7,` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
		r.ContentLength = -1
		assert.NotPanics(t, func() { e.h.ServeHTTP(w, r) })
		assert.Error(t, <-progressErr, "Progress reports the failed write")
		assert.Equal(t, 200, w.Code)
		assert.Equal(t, "text/event-stream", w.Header().Get("Content-Type"))
		assert.Equal(t, 1, w.writes, "nothing is written after the failure")

		recs := e.waitRecords(4)
		assert.Equal(t, []int{200, 200, 401, 200}, []int{recs[0].Status, recs[1].Status, recs[2].Status, recs[3].Status})
		assert.Equal(t, mcpmw.CodeInternalError, recs[3].ErrorCode, "the stream's answer is the tool's error")
		e.stillServes()
	})

	t.Run("middleware panics", func(t *testing.T) {
		a := &spy{}
		h := mcpmw.New(nil, tokenAuthn, a, &mcpmw.Options{Logger: slog.New(slog.DiscardHandler),
			Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{func(mcpmw.Dispatcher) mcpmw.Dispatcher {
				return mcpmw.DispatcherFunc(func(context.Context, *mcpmw.Request) *mcpmw.Response { panic("middleware exploded") })
			}}})
		w := httptest.NewRecorder()
		h.ServeHTTP(w, modern("1", "server/discover", ""))
		assert.Equal(t, 500, w.Code)
		assert.Equal(t, mcpmw.CodeInternalError, decode(t, w).Error.Code)
		assert.Len(t, a.records(), 1)
	})
}

// failingWriter is a ResponseWriter whose connection breaks after failAfter
// bytes of body.
type failingWriter struct {
	*httptest.ResponseRecorder
	failAfter int
	writes    int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	room := w.failAfter - w.Body.Len()
	if room >= len(p) {
		return w.ResponseRecorder.Write(p)
	}
	n, _ := w.ResponseRecorder.Write(p[:max(room, 0)])
	return n, errors.New("write tcp 127.0.0.1:8080->127.0.0.1:50000: write: broken pipe")
}

// faultStatus is an authentication error that carries its own HTTP status.
type faultStatus int

func (e faultStatus) Error() string   { return fmt.Sprintf("status %d", int(e)) }
func (e faultStatus) HTTPStatus() int { return int(e) }

// panickingWriter is a ResponseWriter that panics instead of writing, as a
// broken wrapper around the connection might: in WriteHeader when
// headerPanics, and in Write once writesBefore writes have gone through.
type panickingWriter struct {
	*httptest.ResponseRecorder
	headerPanics bool
	writesBefore int
	writes       int
	panics       int
}

func (w *panickingWriter) WriteHeader(code int) {
	if w.headerPanics {
		w.panics++
		panic("WriteHeader: connection wrapper broke")
	}
	w.ResponseRecorder.WriteHeader(code)
}

func (w *panickingWriter) Write(p []byte) (int, error) {
	if w.writes >= w.writesBefore {
		w.panics++
		panic("Write: connection wrapper broke")
	}
	w.writes++
	return w.ResponseRecorder.Write(p)
}

// TestAuditOnceWhenTheResponseWriterPanics checks that a panic in the final
// write, which comes after the audit record, is recovered without a second
// record (the record says what was being sent) and without touching the
// writer again.
func TestAuditOnceWhenTheResponseWriterPanics(t *testing.T) {
	t.Parallel()
	progress := mcpmw.Tool{Name: "progress", Description: "Streams.", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			if err := mcpmw.Progress(ctx, 1, 2, ""); err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult("done"), nil
		}}
	streamed := func() *http.Request {
		return req(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":7,`+
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "progress")
	}
	for _, tt := range []struct {
		name    string
		w       *panickingWriter
		r       *http.Request
		status  int
		outcome mcpmw.Outcome
		tool    string // "" when the body was never read
	}{
		{"WriteHeader, result", &panickingWriter{headerPanics: true}, modern("1", "tools/call", `"name":"echo","arguments":{"message":"hi"}`), 200, mcpmw.OutcomeOK, "echo"},
		{"Write, result", &panickingWriter{}, modern("2", "tools/call", `"name":"echo","arguments":{"message":"hi"}`), 200, mcpmw.OutcomeOK, "echo"},
		{"Write, refusal", &panickingWriter{}, modern("3", "tools/call", `"name":"echo"`, "Authorization", "Bearer wrong"), 401, mcpmw.OutcomeDenied, ""},
		{"Write, last event of a stream", &panickingWriter{writesBefore: 1}, streamed(), 200, mcpmw.OutcomeOK, "progress"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var reg mcpmw.Registry
			reg.AddTools(append(testTools(), progress)...)
			logs := &syncBuffer{}
			a := &spy{}
			h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{Logger: newTextLogger(logs)})
			tt.w.ResponseRecorder = httptest.NewRecorder()
			assert.NotPanics(t, func() { h.ServeHTTP(tt.w, tt.r) }, "the panic is recovered, and nothing writes again")
			assert.Equal(t, 1, tt.w.panics, "the writer is not called again after it panicked")

			recs := a.records()
			require.Len(t, recs, 1, "exactly one audit record, made before the write")
			assert.Equal(t, tt.status, recs[0].Status, "the record says what was being sent")
			assert.Equal(t, tt.outcome, recs[0].Outcome)
			assert.Equal(t, tt.tool, recs[0].Tool)
			if tt.tool != "" {
				assert.Equal(t, "tools/call", recs[0].Method)
			}
			assert.NotContains(t, recs[0].Summary, "panic", "the record is not the panic's")
			assert.Contains(t, logs.String(), "mcpmw: panic while serving a request", "the panic is logged")
			assert.Contains(t, logs.String(), "connection wrapper broke")
		})
	}
}

// A writer that panics on every WriteHeader breaks the first progress event
// inside the tool; the answer to that panic cannot be written either. The
// second panic is contained: one audit record, a log line, and the
// connection aborted (http.ErrAbortHandler, which net/http handles
// quietly), never a panic of the writer's escaping ServeHTTP.
func TestResponseWriterPanickingTwiceAbortsTheConnection(t *testing.T) {
	t.Parallel()
	progress := mcpmw.Tool{Name: "progress", Description: "Streams.", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			_ = mcpmw.Progress(ctx, 1, 2, "")
			return mcpmw.TextResult("done"), nil
		}}
	var reg mcpmw.Registry
	reg.AddTools(progress)
	logs := &syncBuffer{}
	a := &spy{}
	h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{Logger: newTextLogger(logs)})
	w := &panickingWriter{ResponseRecorder: httptest.NewRecorder(), headerPanics: true}
	r := req(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":7,`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "progress")
	assert.PanicsWithValue(t, http.ErrAbortHandler, func() { h.ServeHTTP(w, r) })
	assert.Equal(t, 2, w.panics, "the tool's event, then the answer")
	recs := a.records()
	require.Len(t, recs, 1)
	assert.Contains(t, recs[0].Summary, "panic")
	assert.Contains(t, logs.String(), "panicked again")
}
