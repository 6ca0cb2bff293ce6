package mcpmw_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// protocols are the two ways an event stream reaches its client: HTTP/1.1,
// and HTTP/2 over TLS, which is what Go serves on every TLS listener. They
// differ where it matters here: over HTTP/1.1 a write deadline touches only
// the writes made before it passes, while over HTTP/2 it is a timer on the
// stream that resets it when it fires, written to or not.
var protocols = []string{"HTTP/1.1", "HTTP/2"}

// serveOver serves h on 127.0.0.1 over proto (one of protocols) and
// returns the server and a client that speaks proto to it. configure, if
// given, sets up the http.Server first.
func serveOver(t *testing.T, proto string, h http.Handler, configure ...func(*http.Server)) (*httptest.Server, *http.Client) {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	for _, c := range configure {
		c(srv.Config)
	}
	if proto == "HTTP/2" {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	client := srv.Client()
	t.Cleanup(client.CloseIdleConnections)
	return srv, client
}

// mcpPost is a POST of body to url as token's caller, accepting JSON or
// an event stream, with hdr given as alternating names and values.
func mcpPost(ctx context.Context, t *testing.T, url, token, body string, hdr ...string) *http.Request {
	t.Helper()
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	return r
}

// freshConns is a client for tests that run in parallel with others: it
// keeps no idle connection, so an httptest.Server closing elsewhere (which
// closes http.DefaultTransport's idle connections) cannot break a request
// of its that had just picked one ("CloseIdleConnections called").
var freshConns = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// postOver sends mcpPost's request with client and checks that the answer
// came over the protocol the client was meant to speak.
func postOver(ctx context.Context, t *testing.T, client *http.Client, proto, url, token, body string, hdr ...string) *http.Response {
	t.Helper()
	resp, err := client.Do(mcpPost(ctx, t, url, token, body, hdr...))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, proto, map[int]string{1: "HTTP/1.1", 2: "HTTP/2"}[resp.ProtoMajor], "the client speaks the protocol under test")
	return resp
}

// Event deadlines in these tests (set per Handler by withShortEvents):
// short, so that a stream can stay quiet for well over one (quietFor) in a
// few seconds, yet far longer than the write of one small event takes,
// however busy the machine: a write that outlasted it would end the stream
// and fail the test.
const (
	eventDeadline = time.Second
	quietFor      = 5 * eventDeadline / 2
)

// withShortEvents is a serveOver configure: it shortens the event deadline
// of the *mcpmw.Handler the server serves to eventDeadline, before the
// server starts.
func withShortEvents(srv *http.Server) {
	mcpmw.SetEventWriteTimeout(srv.Handler.(*mcpmw.Handler), eventDeadline)
}

// quietly waits quietFor, as a method working without a word; it returns
// the context's error if the request ends first.
func quietly(ctx context.Context) error {
	select {
	case <-time.After(quietFor):
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// eachProtocol runs test once per protocol, the two at once. Its callers
// check with noLeaks, on the test that runs them all, that nothing they
// started is left running.
func eachProtocol(t *testing.T, test func(t *testing.T, proto string)) {
	t.Helper()
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			test(t, proto)
		})
	}
}

// readMessages reads an event stream to its end and returns each event's
// JSON-RPC message, failing the test if the stream breaks off.
func readMessages(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(data), &m), data)
			out = append(out, m)
		}
	}
	require.NoError(t, sc.Err(), "the stream broke off after %d events", len(out))
	return out
}

// A tool, prompt or resource that notifies once and then works quietly for
// longer than the event deadline still gets its answer to the client, on
// every revision and for every kind of notification: the deadline of the
// notification's write must not outlive the write.
func TestStreamsOutliveTheEventDeadline(t *testing.T) {
	noLeaks(t)
	progress := func(ctx context.Context) error { return mcpmw.Progress(ctx, 1, 2, "begun") }
	logged := func(ctx context.Context) error { return mcpmw.Log(ctx, mcpmw.LogInfo, "worker", "begun") }
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "progress_then_quiet", Description: "Reports, then works.", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			if err := progress(ctx); err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult("done"), quietly(ctx)
		}}, mcpmw.Tool{Name: "log_then_quiet", Description: "Logs, then works.", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			if err := logged(ctx); err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult("done"), quietly(ctx)
		}})
	reg.AddPrompts(mcpmw.Prompt{Name: "slow_prompt", Description: "Reports, then builds.", Permission: "read",
		Get: func(ctx context.Context, _ mcpmw.Caller, _ map[string]string) (mcpmw.PromptResult, error) {
			if err := progress(ctx); err != nil {
				return mcpmw.PromptResult{}, err
			}
			return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("done"))}}, quietly(ctx)
		}})
	reg.AddResources(mcpmw.Resource{URI: "test://slow", Name: "slow", Permission: "read",
		Read: func(ctx context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
			if err := logged(ctx); err != nil {
				return nil, err
			}
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "done")}, quietly(ctx)
		}})
	const (
		progressMeta = `"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		logMeta      = `"_meta":{"io.modelcontextprotocol/logLevel":"info","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	)
	for _, tt := range []struct {
		name, method, target, params string
		legacy                       bool
		notification, answer         string
	}{
		{"tools/call progress", "tools/call", "progress_then_quiet", `"name":"progress_then_quiet","arguments":{},` + progressMeta, false, "notifications/progress", `"text":"done"`},
		{"tools/call log", "tools/call", "log_then_quiet", `"name":"log_then_quiet","arguments":{},` + logMeta, false, "notifications/message", `"text":"done"`},
		{"legacy tools/call log", "tools/call", "log_then_quiet", `"name":"log_then_quiet","arguments":{}`, true, "notifications/message", `"text":"done"`},
		{"prompts/get progress", "prompts/get", "slow_prompt", `"name":"slow_prompt",` + progressMeta, false, "notifications/progress", `"text":"done"`},
		{"resources/read log", "resources/read", "test://slow", `"uri":"test://slow",` + logMeta, false, "notifications/message", `"text":"done"`},
		{"legacy resources/read log", "resources/read", "test://slow", `"uri":"test://slow"`, true, "notifications/message", `"text":"done"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachProtocol(t, func(t *testing.T, proto string) {
				a := &spy{}
				srv, client := serveOver(t, proto, mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{ClientLogLevel: mcpmw.LogInfo}), withShortEvents)
				body := `{"jsonrpc":"2.0","id":1,"method":"` + tt.method + `","params":{` + tt.params + `}}`
				hdr := []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", tt.method, "Mcp-Name", tt.target}
				if tt.legacy {
					hdr = []string{"MCP-Protocol-Version", "2025-11-25"}
				}
				resp := postOver(t.Context(), t, client, proto, srv.URL, "reader", body, hdr...)
				require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
				msgs := readMessages(t, resp)
				require.Len(t, msgs, 2, "the notification, then the answer")
				assert.Equal(t, tt.notification, msgs[0]["method"])
				raw, err := json.Marshal(msgs[1]["result"])
				require.NoError(t, err)
				assert.Contains(t, string(raw), tt.answer, "the answer, sent %v after the last notification", quietFor)
				recs := a.records()
				require.Len(t, recs, 1)
				assert.Equal(t, mcpmw.OutcomeOK, recs[0].Outcome, recs[0].Summary)
			})
		})
	}
}

// A legacy elicitation answered after the event deadline has passed
// reaches the tool that asked: Options.AskTimeout (2 minutes), not the
// deadline of the request's write, bounds the wait.
func TestLegacyAskAnsweredAfterTheEventDeadline(t *testing.T) {
	noLeaks(t)
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "confirm", Description: "Asks, then acts.", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			ans, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Go on?", confirmForm))
			if err != nil {
				return mcpmw.ToolResult{}, err
			}
			var r struct{ Action string }
			if err := json.Unmarshal(ans, &r); err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult("answered " + r.Action), nil
		}})
	eachProtocol(t, func(t *testing.T, proto string) {
		a := &spy{}
		srv, client := serveOver(t, proto, mcpmw.New(&reg, tokenAuthn, a, nil), withShortEvents)
		resp := postOver(t.Context(), t, client, proto, srv.URL, "reader",
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"confirm","arguments":{}}}`, "MCP-Protocol-Version", "2025-11-25")
		stream := bufio.NewReader(resp.Body)
		ask := nextMessage(t, stream)
		require.Equal(t, "elicitation/create", ask.Method)

		time.Sleep(quietFor) // the user takes a while to answer
		answer := postOver(t.Context(), t, client, proto, srv.URL, "reader",
			answerBody(ask.ID, `"result":{"action":"accept","content":{"confirm":true}}`), "MCP-Protocol-Version", "2025-11-25")
		assert.Equal(t, http.StatusAccepted, answer.StatusCode)

		final := nextMessage(t, stream)
		require.NotNil(t, final.Result, "the tool's answer, not a broken stream")
		require.Len(t, final.Result.Content, 1)
		assert.Equal(t, "answered accept", final.Result.Content[0].Text)
		answerRec, callRec := answerAndCall(t, a.records())
		assert.Equal(t, "client response: delivered", answerRec.Summary)
		assert.Equal(t, mcpmw.OutcomeOK, callRec.Outcome, callRec.Summary)
	})
}
