package mcpmwtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// Steps of a listen script besides the events themselves.
const (
	hold = "\x00hold" // wait until the client goes
	gate = "\x00gate" // wait until the test closes the gate (or the client goes)
)

// Events of a listen stream whose request had id 1, the first request of
// a 2026-07-28 client.
const (
	keepAlive = ": keep-alive\n\n"
	toolsAck  = `data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"notifications":{"toolsListChanged":true}}}` + "\n\n"
	toolsNote = `data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}}}` + "\n\n"
	final     = `data: {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":1}}}` + "\n\n"
)

// ack is the acknowledgement of the listen request with id 1 honouring
// filter, a JSON object.
func ack(filter string) string {
	return `data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"notifications":` +
		filter + "}}\n\n"
}

// note is a notification on the stream of the listen request with id 1.
func note(method, params string) string {
	if params != "" {
		params = "," + params
	}
	return `data: {"jsonrpc":"2.0","method":"` + method + `","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1}` + params + "}}\n\n"
}

// listenHandler answers every request with a 200 event stream that plays
// script: each step written and flushed in turn, hold and gate waiting as
// they say; the stream ends after the last step.
func listenHandler(script []string, open <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for _, step := range script {
			switch step {
			case hold:
				<-r.Context().Done()
				return
			case gate:
				select {
				case <-open:
				case <-r.Context().Done():
					return
				}
			default:
				_, _ = io.WriteString(w, step)
				w.(http.Flusher).Flush()
			}
		}
	}
}

// listenServer serves listenHandler(script, open) and keeps the requests.
func listenServer(t *testing.T, open <-chan struct{}, script ...string) (*mcpmwtest.Server, *capture) {
	c := &capture{h: listenHandler(script, open)}
	return mcpmwtest.NewServer(t, c), c
}

// Listen sends the filter it is given, without its false or empty members,
// with the 2026-07-28 headers and _meta, and exposes the acknowledgement.
func TestListenSends(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		filter mcpmwtest.ListenFilter
		sent   map[string]any
		ack    string
	}{
		{name: "empty", sent: map[string]any{}, ack: `{}`},
		{name: "tools", filter: mcpmwtest.ListenFilter{ToolsListChanged: true}, sent: map[string]any{"toolsListChanged": true},
			ack: `{"toolsListChanged":true}`},
		{name: "everything", filter: mcpmwtest.ListenFilter{ToolsListChanged: true, ResourcesListChanged: true, PromptsListChanged: true,
			ResourceSubscriptions: []string{"file:///a", "file:///b"}},
			sent: map[string]any{"toolsListChanged": true, "resourcesListChanged": true, "promptsListChanged": true,
				"resourceSubscriptions": []any{"file:///a", "file:///b"}},
			ack: `{"resourcesListChanged":true,"resourceSubscriptions":["file:///b"]}`},
		{name: "tasks", filter: mcpmwtest.ListenFilter{TaskIDs: []string{"t1", "t2"}}, sent: map[string]any{"taskIds": []any{"t1", "t2"}},
			ack: `{"taskIds":["t2"]}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, got := listenServer(t, nil, ack(tt.ack), hold)
			l, err := srv.Client(mcpmwtest.Bearer("t")).Listen(t.Context(), tt.filter)
			require.NoError(t, err)
			defer l.Close()

			var want mcpmwtest.ListenFilter
			require.NoError(t, json.Unmarshal([]byte(tt.ack), &want))
			assert.Equal(t, want, l.Acknowledged)
			assert.Equal(t, "1", string(l.ID))
			assert.Equal(t, http.StatusOK, l.Status)
			assert.Equal(t, "text/event-stream", l.Header.Get("Content-Type"))

			reqs := got.requests()
			require.Len(t, reqs, 1)
			checkWire(t, "2026-07-28", reqs, []string{"subscriptions/listen"}, []map[string]any{{"notifications": tt.sent}}, nil)
			assert.Equal(t, 1.0, reqs[0].body["id"])
			assert.Equal(t, "Bearer t", reqs[0].header.Get("Authorization"))
			assert.Equal(t, "application/json, text/event-stream", reqs[0].header.Get("Accept"))
		})
	}
}

// Next returns each notification, skipping keep-alives, then io.EOF for
// good once the endpoint ended the stream with its result.
func TestListenNext(t *testing.T) {
	t.Parallel()
	srv, _ := listenServer(t, nil,
		ack(`{"toolsListChanged":true,"resourceSubscriptions":["file:///a"],"taskIds":["t1"]}`), keepAlive, ":\r\n\r\n",
		toolsNote, keepAlive, note("notifications/resources/updated", `"uri":"file:///a/b"`),
		note("x/custom", ""), note("notifications/tasks", `"taskId":"t1","status":"working"`), final)
	l, err := srv.Client().Listen(t.Context(), mcpmwtest.ListenFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"file:///a"},
		TaskIDs: []string{"t1"}})
	require.NoError(t, err)
	defer l.Close()

	var got []string
	for {
		n, err := l.Next(t.Context())
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		got = append(got, n.Method+" "+string(n.Params))
	}
	assert.Equal(t, []string{
		`notifications/tools/list_changed {"_meta":{"io.modelcontextprotocol/subscriptionId":1}}`,
		`notifications/resources/updated {"_meta":{"io.modelcontextprotocol/subscriptionId":1},"uri":"file:///a/b"}`,
		`x/custom {"_meta":{"io.modelcontextprotocol/subscriptionId":1}}`,
		`notifications/tasks {"_meta":{"io.modelcontextprotocol/subscriptionId":1},"taskId":"t1","status":"working"}`,
	}, got)
	assert.JSONEq(t, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":1}}`, string(l.Final))
	_, err = l.Next(t.Context())
	assert.ErrorIs(t, err, io.EOF, "io.EOF stays")
}

// An answer that opens no stream, or a stream whose start breaks the
// protocol, makes Listen fail.
func TestListenRefused(t *testing.T) {
	t.Parallel()
	jsonAnswer := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}
	}
	for _, tt := range []struct {
		name    string
		h       http.Handler
		code    int
		status  int
		err     string
		errData string
	}{
		{name: "method not found", h: jsonAnswer(http.StatusNotFound, `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`),
			code: -32601, status: http.StatusNotFound},
		{name: "an error with data", h: jsonAnswer(http.StatusBadRequest, `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"Missing capability","data":{"requiredCapabilities":{}}}}`),
			code: -32021, status: http.StatusBadRequest, errData: `{"requiredCapabilities":{}}`},
		{name: "no JSON-RPC", h: http.NotFoundHandler(), status: http.StatusNotFound},
		{name: "a JSON result", h: jsonAnswer(http.StatusOK, `{"jsonrpc":"2.0","id":1,"result":{}}`),
			err: "mcpmwtest: subscriptions/listen answered HTTP 200, application/json, with a result instead of an open event stream"},
		{name: "an error on the stream", h: listenHandler([]string{`data: {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"down"}}` + "\n\n"}, nil),
			code: -32603, status: http.StatusOK},
		{name: "no acknowledgement", h: listenHandler([]string{toolsNote, hold}, nil),
			err: "mcpmwtest: the listen stream's first event is not notifications/subscriptions/acknowledged: " + strings.TrimSpace(toolsNote[len("data: "):])},
		{name: "ended before the acknowledgement", h: listenHandler([]string{keepAlive}, nil),
			err: "mcpmwtest: the listen stream ended before it was acknowledged"},
		{name: "acknowledgement without a filter", h: listenHandler([]string{note("notifications/subscriptions/acknowledged", ""), hold}, nil),
			err: "mcpmwtest: the acknowledgement has no notifications filter: " + strings.TrimSpace(note("notifications/subscriptions/acknowledged", "")[len("data: "):])},
		{name: "acknowledgement with another id", h: listenHandler([]string{strings.Replace(toolsAck, `Id":1`, `Id":2`, 1), hold}, nil),
			err: "mcpmwtest: the acknowledgement's subscription id is 2, the listen request's id 1"},
		{name: "acknowledgement honouring more", h: listenHandler([]string{ack(`{"toolsListChanged":true,"promptsListChanged":true}`), hold}, nil),
			err: "mcpmwtest: the acknowledgement honours more than was asked: " + strings.TrimSpace(ack(`{"toolsListChanged":true,"promptsListChanged":true}`)[len("data: "):])},
		{name: "acknowledgement honouring resources too", h: listenHandler([]string{ack(`{"toolsListChanged":true,"resourcesListChanged":true}`), hold}, nil),
			err: "mcpmwtest: the acknowledgement honours more than was asked: " + strings.TrimSpace(ack(`{"toolsListChanged":true,"resourcesListChanged":true}`)[len("data: "):])},
		{name: "acknowledgement honouring a task not asked for", h: listenHandler([]string{ack(`{"toolsListChanged":true,"taskIds":["t9"]}`), hold}, nil),
			err: "mcpmwtest: the acknowledgement honours more than was asked: " + strings.TrimSpace(ack(`{"toolsListChanged":true,"taskIds":["t9"]}`)[len("data: "):])},
		{name: "acknowledgement honouring a URI not asked for", h: listenHandler([]string{ack(`{"toolsListChanged":true,"resourceSubscriptions":["x://y"]}`), hold}, nil),
			err: "mcpmwtest: the acknowledgement honours more than was asked: " + strings.TrimSpace(ack(`{"toolsListChanged":true,"resourceSubscriptions":["x://y"]}`)[len("data: "):])},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := mcpmwtest.NewServer(t, tt.h)
			l, err := srv.Client().Listen(t.Context(), mcpmwtest.ListenFilter{ToolsListChanged: true})
			assert.Nil(t, l)
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				return
			}
			var e *mcpmwtest.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.code, e.Code)
			assert.Equal(t, tt.status, e.Status)
			if tt.errData != "" {
				assert.JSONEq(t, tt.errData, string(e.Data))
			}
		})
	}
}

// What a listen stream must not carry makes Next fail, for good.
func TestListenBroken(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		script []string
		err    string
		is     error
		code   int
	}{
		{name: "no subscription id", script: []string{`data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n\n"},
			err: `mcpmwtest: a notification without the subscription id 1: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`},
		{name: "not acknowledged", script: []string{note("notifications/prompts/list_changed", "")},
			err: "mcpmwtest: notifications/prompts/list_changed was not acknowledged: " + strings.TrimSpace(note("notifications/prompts/list_changed", "")[len("data: "):])},
		{name: "no resource subscription", script: []string{note("notifications/resources/updated", `"uri":"x"`)},
			err: "mcpmwtest: notifications/resources/updated was not acknowledged: " + strings.TrimSpace(note("notifications/resources/updated", `"uri":"x"`)[len("data: "):])},
		{name: "a task not acknowledged", script: []string{note("notifications/tasks", `"taskId":"t2","status":"working"`)},
			err: "mcpmwtest: notifications/tasks was not acknowledged: " + strings.TrimSpace(note("notifications/tasks", `"taskId":"t2","status":"working"`)[len("data: "):])},
		{name: "progress", script: []string{note("notifications/progress", `"progressToken":1,"progress":1`)},
			err: "mcpmwtest: notifications/progress does not belong on a listen stream: " + strings.TrimSpace(note("notifications/progress", `"progressToken":1,"progress":1`)[len("data: "):])},
		{name: "a request", script: []string{`data: {"jsonrpc":"2.0","id":9,"method":"roots/list"}` + "\n\n"},
			err: "mcpmwtest: the server sent a request (roots/list) on the listen stream"},
		{name: "not JSON-RPC", script: []string{"data: hello\n\n"},
			err: "mcpmwtest: an event is not a JSON-RPC message: invalid character 'h' looking for beginning of value: hello"},
		{name: "ended without a result", script: nil, is: io.ErrUnexpectedEOF,
			err: "mcpmwtest: the listen stream ended without a result: unexpected EOF"},
		{name: "ended inside an event", script: []string{"data: {"},
			err: `mcpmwtest: the event stream ended inside an event (no blank line after "{")`},
		{name: "an event after the result", script: []string{final, toolsNote},
			err: "mcpmwtest: an event after the listen stream's result"},
		{name: "a result for another id", script: []string{`data: {"jsonrpc":"2.0","id":5,"result":{}}` + "\n\n"},
			err: "mcpmwtest: the listen stream's answer has id 5, the request had 1"},
		{name: "a result without the subscription id", script: []string{`data: {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete"}}` + "\n\n"},
			err: `mcpmwtest: the listen stream's result lacks _meta "io.modelcontextprotocol/subscriptionId": {"resultType":"complete"}`},
		{name: "an error at the end", script: []string{`data: {"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"shutting down"}}` + "\n\n"},
			code: -32603},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := listenServer(t, nil, append([]string{toolsAck, toolsNote}, tt.script...)...)
			l, err := srv.Client().Listen(t.Context(), mcpmwtest.ListenFilter{ToolsListChanged: true})
			require.NoError(t, err)
			defer l.Close()
			n, err := l.Next(t.Context())
			require.NoError(t, err)
			assert.Equal(t, "notifications/tools/list_changed", n.Method)

			_, err = l.Next(t.Context())
			if tt.code != 0 {
				var e *mcpmwtest.Error
				require.ErrorAs(t, err, &e)
				assert.Equal(t, tt.code, e.Code)
			} else {
				assert.EqualError(t, err, tt.err)
			}
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			_, again := l.Next(t.Context())
			assert.Equal(t, err, again, "the error stays")
			assert.Nil(t, l.Final)
		})
	}
}

// A notifications/tasks is for a task the acknowledgement named, and no
// other.
func TestListenTaskNotAcknowledged(t *testing.T) {
	t.Parallel()
	other := note("notifications/tasks", `"taskId":"t2","status":"working"`)
	srv, _ := listenServer(t, nil, ack(`{"taskIds":["t1"]}`), other)
	l, err := srv.Client().Listen(t.Context(), mcpmwtest.ListenFilter{TaskIDs: []string{"t1", "t2"}})
	require.NoError(t, err)
	defer l.Close()
	_, err = l.Next(t.Context())
	assert.EqualError(t, err, "mcpmwtest: notifications/tasks was not acknowledged: "+strings.TrimSpace(other[len("data: "):]))
}

// A legacy client has no subscriptions/listen, and says so without sending
// anything.
func TestListenLegacy(t *testing.T) {
	t.Parallel()
	srv, got := listenServer(t, nil, toolsAck, hold)
	l, err := srv.Client(mcpmwtest.Revision("2025-11-25")).Listen(t.Context(), mcpmwtest.ListenFilter{ToolsListChanged: true})
	assert.Nil(t, l)
	assert.EqualError(t, err, "mcpmwtest: subscriptions/listen is a 2026-07-28 method; the client speaks 2025-11-25")
	assert.Empty(t, got.requests())
}

// Neither Listen nor Next waits past its context; Next's leaves the stream
// open, Listen's ends it.
func TestListenContext(t *testing.T) {
	t.Parallel()
	t.Run("Next", func(t *testing.T) {
		t.Parallel()
		open := make(chan struct{})
		srv, _ := listenServer(t, open, toolsAck, keepAlive, gate, toolsNote, hold)
		l, err := srv.Client().Listen(t.Context(), mcpmwtest.ListenFilter{ToolsListChanged: true})
		require.NoError(t, err)
		defer l.Close()

		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err = l.Next(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 5*time.Second)

		close(open)
		n, err := l.Next(t.Context())
		require.NoError(t, err, "the stream outlives Next's context")
		assert.Equal(t, "notifications/tools/list_changed", n.Method)
	})
	t.Run("Listen", func(t *testing.T) {
		t.Parallel()
		srv, _ := listenServer(t, nil, keepAlive, hold)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		l, err := srv.Client().Listen(ctx, mcpmwtest.ListenFilter{ToolsListChanged: true})
		assert.Nil(t, l)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), 5*time.Second)
	})
	t.Run("Listen's context ends the stream", func(t *testing.T) {
		t.Parallel()
		srv, _ := listenServer(t, nil, toolsAck, hold)
		ctx, cancel := context.WithCancel(t.Context())
		l, err := srv.Client().Listen(ctx, mcpmwtest.ListenFilter{ToolsListChanged: true})
		require.NoError(t, err)
		defer l.Close()
		cancel()
		_, err = l.Next(t.Context())
		assert.ErrorIs(t, err, context.Canceled)
	})
}

// Close ends the stream whatever state it is in, lets a waiting Next go,
// is safe twice, and leaves no goroutine behind, on either side. Not
// parallel, so that goleak sees only this test's goroutines.
func TestListenClose(t *testing.T) {
	for _, tt := range []struct {
		name   string
		script []string
		before func(t *testing.T, l *mcpmwtest.Listener)
	}{
		{name: "idle", script: []string{toolsAck, hold}},
		{name: "a notification unread", script: []string{toolsAck, toolsNote, toolsNote, hold}},
		{name: "after a timed-out Next", script: []string{toolsAck, keepAlive, hold},
			before: func(t *testing.T, l *mcpmwtest.Listener) {
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
				defer cancel()
				_, err := l.Next(ctx)
				assert.ErrorIs(t, err, context.DeadlineExceeded)
			}},
		{name: "after the result", script: []string{toolsAck, final},
			before: func(t *testing.T, l *mcpmwtest.Listener) {
				_, err := l.Next(t.Context())
				assert.ErrorIs(t, err, io.EOF)
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(listenHandler(tt.script, nil))
			defer func() {
				srv.CloseClientConnections() // so that a failure here does not hang Close on a held stream
				srv.Close()
			}()
			ignore := goleak.IgnoreCurrent()

			hc := &http.Client{Transport: &http.Transport{}}
			l, err := mcpmwtest.NewClient(srv.URL, mcpmwtest.HTTPClient(hc)).
				Listen(t.Context(), mcpmwtest.ListenFilter{ToolsListChanged: true})
			require.NoError(t, err)
			if tt.before != nil {
				tt.before(t, l)
			}
			waiting := make(chan error, 1)
			if tt.name == "idle" {
				go func() {
					_, err := l.Next(context.Background())
					waiting <- err
				}()
				time.Sleep(10 * time.Millisecond) // let Next wait
			}
			require.NoError(t, l.Close())
			require.NoError(t, l.Close(), "twice")
			if tt.name == "idle" {
				assert.EqualError(t, <-waiting, "mcpmwtest: the Listener is closed")
			}
			_, err = l.Next(t.Context())
			if tt.name == "after the result" {
				assert.ErrorIs(t, err, io.EOF)
			} else {
				assert.EqualError(t, err, "mcpmwtest: the Listener is closed")
			}
			hc.CloseIdleConnections() // a stream read to its end leaves its connection for reuse, as any answer does
			goleak.VerifyNone(t, ignore)
		})
	}
}

// A test of an endpoint's change notifications opens a stream, changes
// what it lists, and expects the notification. Here a handwritten endpoint
// plays the server: it acknowledges, sends one change, and ends the stream.
func ExampleClient_Listen() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		meta := `"_meta":{"io.modelcontextprotocol/subscriptionId":1}`
		_, _ = io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{`+meta+`,"notifications":{"toolsListChanged":true}}}`+"\n\n"+
			": keep-alive\n\n"+
			`data: {"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{`+meta+`}}`+"\n\n"+
			`data: {"jsonrpc":"2.0","id":1,"result":{"resultType":"complete",`+meta+`}}`+"\n\n")
	}))
	defer srv.Close()

	ctx := context.Background()
	l, err := mcpmwtest.NewClient(srv.URL).Listen(ctx, mcpmwtest.ListenFilter{ToolsListChanged: true, PromptsListChanged: true})
	if err != nil {
		panic(err)
	}
	defer l.Close()
	fmt.Printf("acknowledged %+v, id %s\n", l.Acknowledged, l.ID)
	for {
		n, err := l.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			panic(err)
		}
		fmt.Println(n.Method)
	}
	fmt.Println("final", string(l.Final))
	// Output:
	// acknowledged {ToolsListChanged:true ResourcesListChanged:false PromptsListChanged:false ResourceSubscriptions:[] TaskIDs:[]}, id 1
	// notifications/tools/list_changed
	// final {"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":1}}
}
