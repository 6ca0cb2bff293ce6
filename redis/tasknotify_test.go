package mcpredis_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/redistest"
	"github.com/mcpmw/mcpmw/mcpmwtest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// TestTaskStatusCrossesInstances: two instances sharing one redis-server
// (the task store and the Notifier), each behind a real server, over
// HTTP/1.1 and HTTP/2 with TLS. A listener on instance 1 hears every
// status change of its own task running on instance 2 (the change made
// on either instance), with the task as tasks/get gives it; another
// caller's listener on instance 1 naming the same task hears nothing.
func TestTaskStatusCrossesInstances(t *testing.T) {
	t.Parallel()
	for _, proto := range []string{"HTTP/1.1", "HTTP/2"} {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			cfg := mcpredis.Config{Client: newClient(t, srv.Addr), Logger: discard, Timeout: 2 * time.Second}
			store := mcpredis.NewTaskStore(cfg)
			gate := make(chan struct{})
			var runs atomic.Int32
			tool := mcpmw.Tool{Name: "confirm", Permission: "run", Task: mcpmw.TaskRequired,
				Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
					if runs.Add(1) == 1 {
						select {
						case <-gate:
						case <-ctx.Done():
							return mcpmw.ToolResult{}, ctx.Err()
						}
					}
					ans, err := mcpmw.Ask(ctx, "ok", mcpmw.ElicitForm("Sure?", json.RawMessage(`{"type":"object"}`)))
					if err != nil {
						return mcpmw.ToolResult{}, err
					}
					return mcpmw.TextResult("confirmed " + string(ans)), nil
				}}
			users := mcpmwtest.Tokens{
				"alice": &mcpmwtest.User{Name: "alice", Permissions: []mcpmw.Permission{"run"}},
				"bob":   &mcpmwtest.User{Name: "bob", Permissions: []mcpmw.Permission{"run"}},
			}
			var instances []*wired
			for range 2 {
				n := mcpredis.NewNotifier(mcpredis.Config{Client: newClient(t, srv.Addr), Logger: discard, Timeout: 2 * time.Second})
				t.Cleanup(func() { _ = n.Close() })
				var reg mcpmw.Registry
				reg.AddTools(tool)
				rec := mcpmwtest.NewRecorder()
				h := mcpmw.New(&reg, users, rec, &mcpmw.Options{Logger: discard, Notifier: n,
					Tasks: &mcpmw.TaskOptions{Store: store, PollInterval: 20 * time.Millisecond}})
				t.Cleanup(h.Close)
				instances = append(instances, serveWired(t, proto, h, rec))
			}
			subscribers(t, cfg.Client, "mcpmw:", 2)
			one, two := instances[0], instances[1]

			created := two.call(t, "alice", "tools/call", `"name":"confirm","arguments":{}`)
			require.Equal(t, "task", created["resultType"], created)
			id := created["taskId"].(string)
			named := `{"taskIds":[` + strconv.Quote(id) + `],"toolsListChanged":true}`
			own := one.listen(t, "alice", "1", named)
			other := one.listen(t, "bob", "2", named)

			close(gate)
			asked := own.task(t)
			assert.Equal(t, "input_required", asked["status"], "told on instance 1, changed on instance 2")
			assert.Equal(t, one.get(t, id), asked, "the task as tasks/get gives it")

			one.call(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{"ok":{"action":"accept","content":{}}}`)
			assert.Equal(t, "working", own.task(t)["status"], "the change made on instance 1, told there")
			done := own.task(t)
			assert.Equal(t, "completed", done["status"], "the end, made on instance 2")
			assert.Equal(t, one.get(t, id), done, "the result inline")

			// The end is recorded after it is published; a change published
			// later on instance 2 reaches instance 1 after it, in order.
			waitEnd(t, two.rec, id)
			require.NoError(t, two.h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "run"}))
			assert.Equal(t, mcpmw.ToolsListChanged, own.next(t)["method"], "nothing more of the task")
			assert.Equal(t, mcpmw.ToolsListChanged, other.next(t)["method"], "bob heard nothing of alice's task, only the change he may see")
			one.h.Close() // each stream writes what it still holds, then its result
			_, isResult := own.next(t)["result"]
			assert.True(t, isResult)
			_, isResult = other.next(t)["result"]
			assert.True(t, isResult, "bob heard nothing of alice's task")
		})
	}
}

// wired is one instance behind a real server, with its audit recorder.
type wired struct {
	h      *mcpmw.Handler
	rec    *mcpmwtest.Recorder
	srv    *httptest.Server
	client *http.Client
}

func serveWired(t *testing.T, proto string, h *mcpmw.Handler, rec *mcpmwtest.Recorder) *wired {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	if proto == "HTTP/2" {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	client := srv.Client()
	t.Cleanup(client.CloseIdleConnections)
	return &wired{h: h, rec: rec, srv: srv, client: client}
}

// post sends a 2026-07-28 request of method with the members params
// (the tasks extension declared) as token, to /mcp.
func (w *wired) post(ctx context.Context, t *testing.T, token, method, params string) *http.Response {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `,` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + taskCaps + `}}}`
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, w.srv.URL+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", method)
	var p struct{ Name, TaskID string }
	require.NoError(t, json.Unmarshal([]byte("{"+params+"}"), &p))
	if p.Name+p.TaskID != "" {
		r.Header.Set("Mcp-Name", p.Name+p.TaskID)
	}
	resp, err := w.client.Do(r)
	require.NoError(t, err)
	return resp
}

// call sends the request and returns its result, failing t on an error.
func (w *wired) call(t *testing.T, token, method, params string) map[string]any {
	t.Helper()
	resp := w.post(t.Context(), t, token, method, params)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		lines := strings.Split(strings.TrimSpace(string(body)), "\n")
		body = []byte(strings.TrimPrefix(lines[len(lines)-1], "data: "))
	}
	var msg struct {
		Result map[string]any
		Error  json.RawMessage
	}
	require.NoError(t, json.Unmarshal(body, &msg), string(body))
	require.Nil(t, msg.Error, string(msg.Error))
	return msg.Result
}

// get is alice's tasks/get of id, as a notification carries the task:
// without resultType and serverInfo.
func (w *wired) get(t *testing.T, id string) map[string]any {
	t.Helper()
	r := w.call(t, "alice", "tasks/get", `"taskId":`+strconv.Quote(id))
	delete(r, "resultType")
	delete(r, "_meta")
	return r
}

// stream is an open listen stream's events.
type stream struct{ events chan map[string]any }

// listen opens a listen stream as token with the request id and the
// filter notifications, and returns it once acknowledged (as asked).
func (w *wired) listen(t *testing.T, token, id, notifications string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	resp := w.post(ctx, t, token, "subscriptions/listen", `"notifications":`+notifications)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	s := &stream{events: make(chan map[string]any, 16)}
	go func() {
		defer close(s.events)
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(data), &m) == nil {
					s.events <- m
				}
			}
		}
	}()
	ack := s.next(t)
	require.Equal(t, "notifications/subscriptions/acknowledged", ack["method"])
	var want map[string]any
	require.NoError(t, json.Unmarshal([]byte(notifications), &want))
	assert.Equal(t, want, ack["params"].(map[string]any)["notifications"], "everything asked is acknowledged")
	return s
}

// next returns the stream's next event, within 10 s.
func (s *stream) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-s.events:
		require.True(t, ok, "the stream ended")
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
		return nil
	}
}

// task returns the params but _meta of the next event, which must be a
// notifications/tasks.
func (s *stream) task(t *testing.T) map[string]any {
	t.Helper()
	m := s.next(t)
	require.Equal(t, mcpmw.TaskStatusChanged, m["method"], m)
	p := m["params"].(map[string]any)
	delete(p, "_meta")
	return p
}

// waitEnd waits until rec holds the record of task id's end.
func waitEnd(t *testing.T, rec *mcpmwtest.Recorder, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, r := range rec.Records() {
			if r.Target == id && r.Method == "tools/call" && strings.HasPrefix(r.Summary, "task completed") {
				return
			}
		}
		require.True(t, time.Now().Before(deadline), "no record of the end of task %s within 10 s", id)
		time.Sleep(10 * time.Millisecond)
	}
}
