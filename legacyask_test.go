package mcpmw_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// legacyAskServer serves askingTools (and "twice", which asks the same key
// twice, and "roots") on a real listener, with an auditor to read.
func legacyAskServer(t *testing.T, opts *mcpmw.Options) (*httptest.Server, *spy) {
	t.Helper()
	var reg mcpmw.Registry
	reg.AddTools(askingTools()...)
	reg.AddTools(mcpmw.Tool{Name: "twice", Description: "Asks one key twice.", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			a, err := mcpmw.Ask(ctx, "root", mcpmw.ListRoots())
			if err != nil {
				return mcpmw.ToolResult{}, err
			}
			b, err := mcpmw.Ask(ctx, "root", mcpmw.ListRoots())
			if err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult(string(a) + " " + string(b)), nil
		}})
	if opts == nil {
		opts = &mcpmw.Options{}
	}
	if opts.Logger == nil {
		opts.Logger = newTextLogger(&syncBuffer{})
	}
	aud := &spy{}
	srv := httptest.NewServer(mcpmw.New(&reg, tokenAuthn, aud, opts))
	t.Cleanup(srv.Close)
	return srv, aud
}

// legacyPost POSTs body on revision version as token's caller.
func legacyPost(ctx context.Context, t *testing.T, url, token, version, body string, hdr ...string) *http.Response {
	t.Helper()
	resp, err := freshConns.Do(mcpPost(ctx, t, url, token, body, append([]string{"MCP-Protocol-Version", version}, hdr...)...))
	require.NoError(t, err)
	return resp
}

// message is one JSON-RPC message read from an event stream.
type message struct {
	ID     json.RawMessage
	Method string
	Params json.RawMessage
	Result *struct {
		Content []struct{ Text string }
		IsError bool
	}
}

// nextMessage reads the next event's JSON-RPC message.
func nextMessage(t *testing.T, r *bufio.Reader) message {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err, "the stream ended early")
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var m message
			require.NoError(t, json.Unmarshal([]byte(data), &m), data)
			return m
		}
	}
}

// answerBody is a JSON-RPC response to the server's request id.
func answerBody(id json.RawMessage, member string) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,` + member + `}`
}

// postAnswer sends a client's answer and returns the HTTP status.
func postAnswer(t *testing.T, url, token, version, body string) int {
	t.Helper()
	resp := legacyPost(context.Background(), t, url, token, version, body)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Empty(t, b, "a 202 has no body")
	return resp.StatusCode
}

// The legacy path end to end: the call's stream carries elicitation/create
// with a fresh server id, the client's answer POST is accepted with 202 and
// reaches the waiting tool, and both POSTs are audited.
func TestLegacyAskRoundTrip(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2025-11-25", "2025-06-18"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			srv, aud := legacyAskServer(t, nil)
			resp := legacyPost(context.Background(), t, srv.URL, "reader", version,
				`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"delete","arguments":{"id":3}}}`)
			defer resp.Body.Close()
			assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
			stream := bufio.NewReader(resp.Body)

			ask := nextMessage(t, stream)
			assert.Equal(t, "elicitation/create", ask.Method)
			var id string
			require.NoError(t, json.Unmarshal(ask.ID, &id), "the server's ids are strings")
			assert.True(t, strings.HasPrefix(id, "mcpmw-ask-") && len(id) >= len("mcpmw-ask-")+22, id)
			var p map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(ask.Params, &p))
			assert.JSONEq(t, string(confirmForm), string(p["requestedSchema"]))
			assert.JSONEq(t, `"Delete note 3?"`, string(p["message"]))
			if version == "2025-06-18" {
				assert.NotContains(t, p, "mode", "2025-06-18 has no elicitation modes")
			} else {
				assert.JSONEq(t, `"form"`, string(p["mode"]))
			}

			assert.Equal(t, http.StatusAccepted, postAnswer(t, srv.URL, "reader", version,
				answerBody(ask.ID, `"result":{"action":"accept","content":{"confirm":true}}`)))
			final := nextMessage(t, stream)
			assert.JSONEq(t, "7", string(final.ID))
			require.NotNil(t, final.Result)
			assert.False(t, final.Result.IsError)
			assert.Equal(t, "accept ", final.Result.Content[0].Text, "the tool ran once and read the answer")

			answer, call := answerAndCall(t, aud.records())
			assert.Equal(t, mcpmw.OutcomeAccepted, answer.Outcome)
			assert.Equal(t, "client response: delivered", answer.Summary)
			assert.Equal(t, string(ask.ID), answer.RequestID)
			assert.Equal(t, http.StatusAccepted, answer.Status)
			assert.Equal(t, version, answer.ProtocolVersion)
			assert.Equal(t, mcpmw.OutcomeOK, call.Outcome)
		})
	}
}

// The same key asked twice in one call is asked once; the answer is kept.
func TestLegacyAskKeepsAnAnswerForTheCall(t *testing.T) {
	t.Parallel()
	srv, _ := legacyAskServer(t, nil)
	resp := legacyPost(context.Background(), t, srv.URL, "reader", "2025-11-25",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"twice"}}`)
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)
	ask := nextMessage(t, stream)
	assert.Equal(t, "roots/list", ask.Method)
	assert.JSONEq(t, `{}`, string(ask.Params))
	postAnswer(t, srv.URL, "reader", "2025-11-25", answerBody(ask.ID, `"result":{"roots":[]}`))
	final := nextMessage(t, stream)
	require.NotNil(t, final.Result)
	assert.Equal(t, `{"roots":[]} {"roots":[]}`, final.Result.Content[0].Text)
}

// Only the caller asked may answer: another caller's answer with the right
// id is accepted (202) but reaches nothing; the right caller's still does.
func TestLegacyAskAnswerIsBoundToTheCaller(t *testing.T) {
	t.Parallel()
	srv, aud := legacyAskServer(t, nil)
	resp := legacyPost(context.Background(), t, srv.URL, "reader", "2025-11-25",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","arguments":{"id":3}}}`)
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)
	ask := nextMessage(t, stream)

	assert.Equal(t, http.StatusAccepted, postAnswer(t, srv.URL, "writer", "2025-11-25",
		answerBody(ask.ID, `"result":{"action":"accept","content":{"confirm":true}}`)))
	assert.Equal(t, http.StatusAccepted, postAnswer(t, srv.URL, "reader", "2025-11-25",
		answerBody(json.RawMessage(`"mcpmw-ask-guessed"`), `"result":{"action":"accept"}`)))
	assert.Equal(t, http.StatusAccepted, postAnswer(t, srv.URL, "reader", "2025-11-25",
		answerBody(ask.ID, `"result":{"action":"decline"}`)))
	final := nextMessage(t, stream)
	require.NotNil(t, final.Result)
	assert.Equal(t, "decline ", final.Result.Content[0].Text)

	// Delivered once: a second answer to the same id reaches nothing.
	assert.Equal(t, http.StatusAccepted, postAnswer(t, srv.URL, "reader", "2025-11-25",
		answerBody(ask.ID, `"result":{"action":"accept"}`)))
	var summaries []string
	for _, r := range aud.records() {
		if r.Method == "" {
			summaries = append(summaries, r.Summary)
		}
	}
	notHere := "client response: no request of this caller is waiting for it here (answered late, or sent to another instance)"
	assert.Equal(t, []string{notHere, notHere, "client response: delivered", notHere}, summaries)
}

// answerAndCall returns the two records of a legacy call that asked once:
// the answer POST's (a response has no method) and the call's. They come
// in either order: the answer POST wakes the call before it is recorded
// itself, and the call may end and be recorded first.
func answerAndCall(t *testing.T, recs []mcpmw.CallRecord) (answer, call mcpmw.CallRecord) {
	t.Helper()
	require.Len(t, recs, 2, "the answer POST and the call")
	if recs[0].Method != "" {
		recs[0], recs[1] = recs[1], recs[0]
	}
	require.Empty(t, recs[0].Method, "one record is the answer POST's: %+v", recs)
	require.Equal(t, "tools/call", recs[1].Method, "the other is the call's: %+v", recs)
	return recs[0], recs[1]
}

// A client that cannot answer replies with a JSON-RPC error, and a client
// may send a result that is not an object: the tool gets an *AskError,
// which becomes an isError result the model can read.
func TestLegacyAskClientErrors(t *testing.T) {
	t.Parallel()
	srv, _ := legacyAskServer(t, nil)
	for _, tc := range []struct{ member, want string }{
		{`"error":{"code":-32601,"message":"Method not found"}`, "the client refused elicitation/create (error -32601): Method not found"},
		{`"error":{"message":"no code"}`, "not a JSON-RPC error object"},
		{`"error":"broken"`, "not a JSON-RPC error object"},
		{`"result":[1,2]`, "elicitation/create: its result is not a JSON object"},
		{`"result":{"action":"decline","content":{"confirm":false,"confirm":true}}`, "its result has the member '/content/confirm' more than once"},
		{`"error":{"code":-32000,"message":"` + strings.Repeat("x", 5000) + `"}`, "(error -32000): xxx"},
	} {
		resp := legacyPost(context.Background(), t, srv.URL, "reader", "2025-11-25",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","arguments":{"id":3}}}`)
		stream := bufio.NewReader(resp.Body)
		ask := nextMessage(t, stream)
		assert.Equal(t, http.StatusAccepted, postAnswer(t, srv.URL, "reader", "2025-11-25", answerBody(ask.ID, tc.member)))
		final := nextMessage(t, stream)
		resp.Body.Close()
		require.NotNil(t, final.Result, tc.member)
		assert.True(t, final.Result.IsError, tc.member)
		assert.Contains(t, final.Result.Content[0].Text, tc.want)
		assert.Less(t, len(final.Result.Content[0].Text), 1200, "the client's words are capped")
	}
}

// A call that cannot be asked on says why: no event stream accepted, no
// CallerID to bind the answer to, a mode 2025-06-18 does not know.
func TestLegacyAskCannotAsk(t *testing.T) {
	t.Parallel()
	srv, _ := legacyAskServer(t, nil)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","arguments":{"id":3}}}`
	resp := legacyPost(context.Background(), t, srv.URL, "reader", "2025-11-25", call, "Accept", "application/json")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(b), `"isError":true`)
	assert.Contains(t, string(b), "did not accept an event stream")

	var reg mcpmw.Registry
	reg.AddTools(askingTools()...)
	reg.AddTools(mcpmw.Tool{Name: "url", Description: "Asks for a URL visit.", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			_, err := mcpmw.Ask(ctx, "visit", mcpmw.ElicitURL("Sign in", "https://example.com/login", "e1"))
			return mcpmw.ToolResult{}, err
		}})
	anon := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		if r.Header.Get("Authorization") == "Bearer reader" {
			return reader, nil
		}
		return &struct{ jwtCaller }{}, nil
	})
	h := mcpmw.New(&reg, anon, &spy{}, &mcpmw.Options{Logger: newTextLogger(&syncBuffer{})})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, legacy("2025-11-25", "1", "tools/call", `"name":"delete","arguments":{"id":3}`, "Authorization", "Bearer anonymous"))
	assert.Contains(t, w.Body.String(), "the caller has no CallerID")

	w = httptest.NewRecorder()
	h.ServeHTTP(w, legacy("2025-06-18", "1", "tools/call", `"name":"url"`))
	assert.Contains(t, w.Body.String(), `2025-06-18 clients know form elicitation only, not \"url\"`)
}

// A 2026-07-28 client never POSTs a response; a legacy one that answers
// nothing in particular still gets 202.
func TestClientResponsePosts(t *testing.T) {
	t.Parallel()
	srv, _ := legacyAskServer(t, nil)
	resp := legacyPost(context.Background(), t, srv.URL, "reader", "2026-07-28", `{"jsonrpc":"2.0","id":"x","result":{}}`)
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, http.StatusAccepted, postAnswer(t, srv.URL, "reader", "2025-06-18", `{"jsonrpc":"2.0","id":12,"result":{}}`))
	assert.Equal(t, http.StatusAccepted, postAnswer(t, srv.URL, "reader", "2025-06-18", `{"jsonrpc":"2.0","id":"y","error":{"code":1,"message":"m"}}`))
}

// A waiter is released, and its goroutines end, when the client goes away
// and when the answer does not come in time.
func TestLegacyAskReleasesItsWaiter(t *testing.T) {
	noLeaks(t)

	t.Run("timeout", func(t *testing.T) {
		srv, aud := legacyAskServer(t, &mcpmw.Options{AskTimeout: 50 * time.Millisecond})
		defer http.DefaultClient.CloseIdleConnections()
		resp := legacyPost(context.Background(), t, srv.URL, "reader", "2025-11-25",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","arguments":{"id":3}}}`)
		defer resp.Body.Close()
		stream := bufio.NewReader(resp.Body)
		ask := nextMessage(t, stream)
		final := nextMessage(t, stream)
		require.NotNil(t, final.Result)
		assert.True(t, final.Result.IsError)
		assert.Equal(t, "the client gave no answer to elicitation/create: no answer within 50ms", final.Result.Content[0].Text)
		// The late answer reaches nothing.
		assert.Equal(t, http.StatusAccepted, postAnswer(t, srv.URL, "reader", "2025-11-25", answerBody(ask.ID, `"result":{"action":"accept"}`)))
		recs := aud.records()
		require.Len(t, recs, 2)
		assert.Equal(t, mcpmw.OutcomeError, recs[0].Outcome)
		assert.Contains(t, recs[1].Summary, "no request of this caller is waiting")
		srv.Close()
	})
	t.Run("client goes away", func(t *testing.T) {
		srv, aud := legacyAskServer(t, nil)
		defer http.DefaultClient.CloseIdleConnections()
		ctx, cancel := context.WithCancel(context.Background())
		resp := legacyPost(ctx, t, srv.URL, "reader", "2025-11-25",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","arguments":{"id":3}}}`)
		stream := bufio.NewReader(resp.Body)
		ask := nextMessage(t, stream)
		cancel()
		resp.Body.Close()
		// The call is audited once it has let go of its waiter.
		deadline := time.Now().Add(patience)
		for len(aud.records()) == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		recs := aud.records()
		require.Len(t, recs, 1, "the call ended when its client left")
		assert.Contains(t, recs[0].Summary, "client went away")
		assert.Equal(t, http.StatusAccepted, postAnswer(t, srv.URL, "reader", "2025-11-25", answerBody(ask.ID, `"result":{"action":"accept"}`)))
		assert.Contains(t, aud.records()[1].Summary, "no request of this caller is waiting", "the waiter is gone")
		srv.Close()
	})
}

// Ask's errors are ordinary errors: a tool can tell a refusal apart.
func TestAskErrorIsAnError(t *testing.T) {
	t.Parallel()
	var err error = &mcpmw.AskError{Method: "roots/list", Code: -32601, Message: "nope"}
	var ke *mcpmw.AskError
	require.True(t, errors.As(err, &ke))
	assert.Equal(t, "the client refused roots/list (error -32601): nope", err.Error())
	assert.Equal(t, "the client gave no answer to roots/list: gone", (&mcpmw.AskError{Method: "roots/list", Message: "gone"}).Error())
}

// A middleware that dispatches with a context of its own cuts the call off
// from its event stream: Ask says so instead of failing obscurely.
func TestLegacyAskWithAReplacedContext(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(askingTools()...)
	detach := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(_ context.Context, req *mcpmw.Request) *mcpmw.Response {
			return next.Dispatch(context.Background(), req)
		})
	}
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{Logger: newTextLogger(&syncBuffer{}), Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{detach}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, legacy("2025-11-25", "1", "tools/call", `"name":"delete","arguments":{"id":3}`))
	assert.Contains(t, w.Body.String(), "the tools/call's context was replaced")
	assert.Contains(t, w.Body.String(), `"isError":true`)
}

// A client response carrying both a result and an error is no JSON-RPC
// response, and used to be taken as a result. It is refused with 400 and
// -32600, and the waiting tool gets an *AskError at once (an isError
// result the model can read) instead of acting on half of it.
func TestLegacyAskRefusesAnAnswerWithResultAndError(t *testing.T) {
	t.Parallel()
	for _, proto := range protocols {
		for _, errMember := range []string{`"error":{"code":-32000,"message":"declined"}`, `"error":null`} {
			t.Run(proto+" "+errMember, func(t *testing.T) {
				t.Parallel()
				var reg mcpmw.Registry
				reg.AddTools(askingTools()...)
				aud := &spy{}
				srv, client := serveOver(t, proto, mcpmw.New(&reg, tokenAuthn, aud, nil))
				url := srv.URL
				resp := postWith(context.Background(), t, client, url,
					`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","arguments":{"id":3}}}`)
				defer resp.Body.Close()
				stream := bufio.NewReader(resp.Body)
				ask := nextMessage(t, stream)
				both := answerBody(ask.ID, `"result":{"action":"accept","content":{"confirm":true}},`+errMember)
				answer := postWith(context.Background(), t, client, url, both)
				body, _ := io.ReadAll(answer.Body)
				answer.Body.Close()
				assert.Equal(t, http.StatusBadRequest, answer.StatusCode)
				assert.Contains(t, string(body), `"code":-32600`)
				final := nextMessage(t, stream)
				require.NotNil(t, final.Result)
				assert.True(t, final.Result.IsError, "the tool got an AskError, not the result")
				assert.Equal(t, "the client gave no answer to elicitation/create: its answer carries both a result and an error, which JSON-RPC forbids",
					final.Result.Content[0].Text)
				rec := recordOf(t, aud, "", string(ask.ID))
				assert.Equal(t, http.StatusBadRequest, rec.Status)
				assert.Equal(t, mcpmw.CodeInvalidRequest, rec.ErrorCode)
				assert.Equal(t, mcpmw.OutcomeError, rec.Outcome)
				assert.Equal(t, "client response with both result and error: refused, and the waiting request was told", rec.Summary)

				// Nobody waiting: refused all the same.
				late := postWith(context.Background(), t, client, url, both)
				late.Body.Close()
				assert.Equal(t, http.StatusBadRequest, late.StatusCode)
				recs := aud.records()
				assert.Equal(t, "client response with both result and error: refused, and no request of this caller was waiting for it here", recs[len(recs)-1].Summary)
			})
		}
	}
}
