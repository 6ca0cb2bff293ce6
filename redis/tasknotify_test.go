package mcpredis_test

import (
	"context"
	"encoding/json"
	"io"
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
			named := mcpmwtest.ListenFilter{TaskIDs: []string{id}, ToolsListChanged: true}
			own := one.listen(t, "alice", named)
			other := one.listen(t, "bob", named)

			close(gate)
			asked := task(t, own)
			assert.Equal(t, "input_required", asked["status"], "told on instance 1, changed on instance 2")
			assert.Equal(t, one.get(t, id), asked, "the task as tasks/get gives it")

			one.call(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{"ok":{"action":"accept","content":{}}}`)
			assert.Equal(t, "working", task(t, own)["status"], "the change made on instance 1, told there")
			done := task(t, own)
			assert.Equal(t, "completed", done["status"], "the end, made on instance 2")
			assert.Equal(t, one.get(t, id), done, "the result inline")

			// The end is recorded after it is published; a change published
			// later on instance 2 reaches instance 1 after it, in order.
			waitEnd(t, two.rec, id)
			require.NoError(t, two.h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "run"}))
			for _, l := range []*mcpmwtest.Listener{own, other} {
				n, err := next(t, l)
				require.NoError(t, err)
				assert.Equal(t, mcpmw.ToolsListChanged, n.Method, "nothing more of the task; bob heard nothing of alice's task, only the change he may see")
			}
			one.h.Close() // each stream writes what it still holds, then its result
			for _, l := range []*mcpmwtest.Listener{own, other} {
				_, err := next(t, l)
				assert.ErrorIs(t, err, io.EOF, "nothing more; bob heard nothing of alice's task")
			}
		})
	}
}

// wired is one instance behind a real server, with its audit recorder.
type wired struct {
	h   *mcpmw.Handler
	rec *mcpmwtest.Recorder
	srv *httptest.Server
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
	t.Cleanup(srv.Client().CloseIdleConnections)
	return &wired{h: h, rec: rec, srv: srv}
}

// client is a 2026-07-28 client of w as token, declaring the tasks
// extension.
func (w *wired) client(token string) *mcpmwtest.Client {
	return mcpmwtest.NewClient(w.srv.URL+"/mcp", mcpmwtest.Bearer(token), mcpmwtest.HTTPClient(w.srv.Client()),
		mcpmwtest.Capabilities(json.RawMessage(taskCaps)))
}

// call sends the request with the members params as token and returns its
// result, failing t on an error.
func (w *wired) call(t *testing.T, token, method, params string) map[string]any {
	t.Helper()
	resp, err := w.client(token).Call(t.Context(), method, json.RawMessage("{"+params+"}"))
	require.NoError(t, err)
	var result map[string]any
	require.NoError(t, resp.Decode(&result))
	return result
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

// listen opens a listen stream as token with filter, and returns it once
// acknowledged (everything asked).
func (w *wired) listen(t *testing.T, token string, filter mcpmwtest.ListenFilter) *mcpmwtest.Listener {
	t.Helper()
	l, err := w.client(token).Listen(t.Context(), filter)
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	assert.Equal(t, filter, l.Acknowledged, "everything asked is acknowledged")
	return l
}

// next returns l's next notification, within 10 s; io.EOF once the stream
// ended with its result.
func next(t *testing.T, l *mcpmwtest.Listener) (mcpmwtest.Notification, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return l.Next(ctx)
}

// task returns the params but _meta of l's next notification, which must
// be a notifications/tasks.
func task(t *testing.T, l *mcpmwtest.Listener) map[string]any {
	t.Helper()
	n, err := next(t, l)
	require.NoError(t, err)
	require.Equal(t, mcpmw.TaskStatusChanged, n.Method)
	var p map[string]any
	require.NoError(t, json.Unmarshal(n.Params, &p))
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
