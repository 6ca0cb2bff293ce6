package mcpmw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
)

// notifications/tasks on a subscriptions/listen stream, in process, over
// HTTP/1.1 and HTTP/2 with TLS: each status change of a task is told once,
// to the listeners of its own caller that named it; across instances on a
// real redis-server in the redis module (TestTaskStatusCrossesInstances).

// taskListenEnv is a taskEnv served over a real server, its requests and
// listen streams sent to /mcp over the wire.
type taskListenEnv struct {
	*taskEnv
	srv    *httptest.Server
	client *http.Client
}

func newTaskListenEnv(t *testing.T, proto string, opts *mcpmw.Options, tools ...mcpmw.Tool) *taskListenEnv {
	t.Helper()
	e := newTaskEnv(t, opts, tools...)
	srv, client := serveOver(t, proto, e.h)
	return &taskListenEnv{taskEnv: e, srv: srv, client: client}
}

// wire sends what taskEnv.do sends, over the wire, to /mcp.
func (e *taskListenEnv) wire(t *testing.T, token, method, params, caps string) taskReply {
	t.Helper()
	r := taskRequest(token, method, params, caps)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.srv.URL+"/mcp", r.Body)
	require.NoError(t, err)
	req.Header = r.Header
	resp, err := e.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		lines := strings.Split(strings.TrimSpace(string(body)), "\n")
		body = []byte(strings.TrimPrefix(lines[len(lines)-1], "data: "))
	}
	return decodeTaskReply(t, resp.StatusCode, body)
}

// listen opens a listen stream at path as token, with the filter
// notifications and the client capabilities caps, and returns it with
// its acknowledgement read.
func (e *taskListenEnv) listen(t *testing.T, path, token, id, notifications, caps string) (*sse, map[string]any) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{"notifications":` + notifications +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
	s := openSSE(t, e.client, e.srv.URL+path, token, body)
	ack := s.nextEvent(t)
	require.Equal(t, "notifications/subscriptions/acknowledged", ack["method"], ack)
	return s, ack["params"].(map[string]any)["notifications"].(map[string]any)
}

// taskNotice is the next event of s, which must be a notifications/tasks
// of the listen request id; it returns the params but _meta.
func taskNotice(t *testing.T, s *sse, id any) map[string]any {
	t.Helper()
	m := s.nextEvent(t)
	require.Equal(t, mcpmw.TaskStatusChanged, m["method"], m)
	assert.Equal(t, id, subID(t, m), "the stream's subscription id")
	params := m["params"].(map[string]any)
	delete(params, "_meta")
	return params
}

// asGet is what tasks/get answers for the task, as a notification
// carries it: without resultType and serverInfo.
func (e *taskListenEnv) asGet(t *testing.T, id string) map[string]any {
	t.Helper()
	r := e.wire(t, "alice", "tasks/get", `"taskId":`+strconv.Quote(id), taskCaps)
	require.Equal(t, 200, r.Status, r.Raw)
	delete(r.Result, "resultType")
	delete(r.Result, "_meta")
	return r.Result
}

// confirmTool is a TaskRequired tool whose first run waits for gate,
// then asks "ok" and, answered, completes.
func confirmTool(gate <-chan struct{}) mcpmw.Tool {
	var runs atomic.Int32
	return mcpmw.Tool{Name: "confirm", Permission: "run", Task: mcpmw.TaskRequired,
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
}

// untilEndRecord waits for the record of task id's end: its status
// notification has been published by then.
func untilEndRecord(t *testing.T, e *taskEnv, id string) {
	t.Helper()
	waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool { return len(endRecords(rs, id)) == 1 })
}

func TestTaskStatusOnListen(t *testing.T) {
	t.Parallel()
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			gate := make(chan struct{})
			e := newTaskListenEnv(t, proto, nil, confirmTool(gate))
			created := e.wire(t, "alice", "tools/call", `"name":"confirm","arguments":{}`, taskCaps)
			require.Equal(t, "task", created.Result["resultType"], created.Raw)
			id := created.Result["taskId"].(string)
			named := `{"taskIds":[` + strconv.Quote(id) + `]}`

			own, ack := e.listen(t, "/mcp", "alice", "1", `{"taskIds":[`+strconv.Quote(id)+`,"not-a-task"],"toolsListChanged":true}`, taskCaps)
			assert.Equal(t, map[string]any{"toolsListChanged": true, "taskIds": []any{id, "not-a-task"}}, ack,
				"the ids acknowledged as named: whether each is a task of the caller's is not told")
			others := map[string]*sse{}
			for i, l := range []struct{ name, path, token, filter string }{
				{"another caller", "/mcp", "bob", named},
				{"the caller without the tool's permission", "/mcp", "alice-demoted", named},
				{"the caller at another endpoint", "/elsewhere", "alice", named},
				{"the caller not naming the task", "/mcp", "alice", `{"toolsListChanged":true}`},
			} {
				s, ack := e.listen(t, l.path, l.token, strconv.Itoa(i+2), l.filter, taskCaps)
				if l.filter == named {
					assert.Equal(t, map[string]any{"taskIds": []any{id}}, ack, l.name)
				}
				others[l.name] = s
			}

			close(gate)
			asked := taskNotice(t, own, float64(1))
			assert.Equal(t, "input_required", asked["status"])
			assert.Equal(t, e.asGet(t, id), asked, "the notification carries the task exactly as tasks/get shows it, its questions included")
			assert.Contains(t, asked["inputRequests"], "ok")

			r := e.wire(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{"ok":{"action":"accept","content":{}}}`, taskCaps)
			require.Equal(t, 200, r.Status, r.Raw)
			working := taskNotice(t, own, float64(1))
			assert.Equal(t, "working", working["status"], "every question answered: working again")
			assert.NotContains(t, working, "inputRequests")
			done := taskNotice(t, own, float64(1))
			assert.Equal(t, "completed", done["status"])
			assert.Equal(t, e.asGet(t, id), done, "the result inline, as tasks/get gives it")
			assert.Equal(t, `confirmed {"action":"accept","content":{}}`, done["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"])

			untilEndRecord(t, e.taskEnv, id)
			e.h.Close() // every stream writes what it holds, then its result
			assert.Equal(t, []string{"result"}, untilResult(t, own, ""), "each change told once, nothing after the end")
			for name, s := range others {
				assert.Equal(t, []string{"result"}, untilResult(t, s, ""), name+" hears nothing of the task")
			}
		})
	}
}

// A task that fails, one cancelled, and one whose instance died and was
// reaped: each end is told with its error, once.
func TestTaskStatusOnListenEveryEnd(t *testing.T) {
	t.Parallel()
	store := sharedStore{mcpmw.NewMemoryTaskStore()}
	gate := make(chan struct{})
	boom := mcpmw.Tool{Name: "boom", Permission: "run", Task: mcpmw.TaskRequired,
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			<-gate
			return mcpmw.ToolResult{}, &mcpmw.Error{Code: -32000, Message: "the printer is on fire"}
		}}
	e := newTaskListenEnv(t, "HTTP/2", &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: store, Lease: 300 * time.Millisecond}},
		boom, gatedTool("wait", make(chan struct{}), mcpmw.TaskRequired, nil))
	failing, waiting := e.create(t, "alice", "boom", ""), e.create(t, "alice", "wait", "")
	s, _ := e.listen(t, "/mcp", "alice", `"s"`, `{"taskIds":[`+strconv.Quote(failing)+`,`+strconv.Quote(waiting)+`,"orphan-aaaaaaaaaaaaaaa"]}`, taskCaps)

	close(gate)
	failed := taskNotice(t, s, "s")
	assert.Equal(t, "failed", failed["status"])
	assert.Equal(t, map[string]any{"code": float64(-32000), "message": "the printer is on fire"}, failed["error"])
	assert.Equal(t, e.asGet(t, failing), failed)

	require.Equal(t, 200, e.do(t, "alice", "tasks/cancel", `"taskId":`+strconv.Quote(waiting), taskCaps).Status)
	cancelled := taskNotice(t, s, "s")
	assert.Equal(t, "cancelled", cancelled["status"])
	assert.Equal(t, e.asGet(t, waiting), cancelled)

	now := time.Now()
	require.NoError(t, store.Create(t.Context(), &mcpmw.Task{Endpoint: "/mcp", ID: "orphan-aaaaaaaaaaaaaaa", CallerID: "alice", Tool: "wait", Permission: "run",
		Status: mcpmw.TaskWorking, Created: now, Updated: now, TTL: time.Hour, Owner: "a-dead-instance", LeaseUntil: now.Add(-time.Second)}))
	reaped := taskNotice(t, s, "s")
	assert.Equal(t, "failed", reaped["status"], "failed by the reaper, which tells it")
	assert.Contains(t, reaped["error"].(map[string]any)["message"], "stopped before it finished")
	assert.Equal(t, e.asGet(t, "orphan-aaaaaaaaaaaaaaa"), reaped)

	untilEndRecord(t, e.taskEnv, "orphan-aaaaaaaaaaaaaaa")
	e.h.Close()
	assert.Equal(t, []string{"result"}, untilResult(t, s, ""), "each end told once")
}

// taskIds needs the extension declared (-32021), and is bounded.
func TestTaskStatusOnListenIDs(t *testing.T) {
	t.Parallel()
	e := newTaskListenEnv(t, "HTTP/1.1", nil, confirmTool(nil))
	for _, tc := range []struct{ name, notifications, caps string }{
		{"undeclared", `{"taskIds":["x"]}`, `{}`},
		{"undeclared, even none", `{"taskIds":[]}`, `{"elicitation":{}}`},
	} {
		r := e.wire(t, "alice", "subscriptions/listen", `"notifications":`+tc.notifications, tc.caps)
		require.NotNil(t, r.Error, tc.name+": "+r.Raw)
		assert.Equal(t, mcpmw.CodeMissingRequiredClientCapability, r.Error.Code, tc.name)
		assert.JSONEq(t, `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`, string(r.Error.Data), tc.name)
		assert.Contains(t, r.Error.Message, "taskIds")
	}
	long := strings.Repeat("x", 129)
	many := strings.Repeat(`"x",`, 100) + `"x"`
	for _, tc := range []struct{ notifications, want string }{
		{`{"taskIds":"x"}`, "taskIds must be an array of task id strings, not a string"},
		{`{"taskIds":[1]}`, "taskIds[0] must be a string, not a number"},
		{`{"taskIds":["` + long + `"]}`, "taskIds[0] is longer than 128 bytes"},
		{`{"taskIds":[` + many + `]}`, "taskIds lists more than 100 tasks"},
	} {
		r := e.wire(t, "alice", "subscriptions/listen", `"notifications":`+tc.notifications, taskCaps)
		require.NotNil(t, r.Error, r.Raw)
		assert.Equal(t, mcpmw.CodeInvalidParams, r.Error.Code, tc.want)
		assert.Contains(t, r.Error.Message, tc.want)
	}
	s, ack := e.listen(t, "/mcp", "alice", "1", `{"taskIds":[`+strings.Repeat(`"x",`, 99)+`"`+strings.Repeat("y", 128)+`"]}`, taskCaps)
	assert.Len(t, ack["taskIds"], 100, "at the bounds")
	s.cancel()
	var summaries []string
	for _, r := range e.rec.Records() {
		if r.Method == "subscriptions/listen" && r.Outcome == mcpmw.OutcomeOK {
			summaries = append(summaries, r.Summary)
		}
	}
	assert.Equal(t, []string{"listen: taskIds (100 tasks)"}, summaries)
}

// An endpoint that serves no tasks leaves taskIds out of the
// acknowledgement, as any kind it cannot deliver, declared or not.
func TestTaskStatusOnListenNotServed(t *testing.T) {
	t.Parallel()
	e := newListenEnv(t, nil)
	s := e.listen(t, "reader", "1", `{"taskIds":["x"],"toolsListChanged":true}`)
	assert.Equal(t, `{"toolsListChanged":true}`, gjsonNotifications(t, s.next(t)))
}

func TestPublishRefusesTaskStatus(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, nil, confirmTool(nil))
	err := e.h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.TaskStatusChanged, Permission: "run", Task: &mcpmw.Task{ID: "x", CallerID: "alice"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "published by the Handler itself")
}

// A Notifier of the application's that carries Event.Task through JSON
// (spread over lines, as an indenting encoder would) still gives every
// event on one line; one whose task's JSON is broken is dropped.
func TestTaskStatusThroughAForeignNotifier(t *testing.T) {
	t.Parallel()
	n := &indentingNotifier{LocalNotifier: mcpmw.NewLocalNotifier()}
	gate := make(chan struct{})
	e := newTaskListenEnv(t, "HTTP/1.1", &mcpmw.Options{Notifier: n}, confirmTool(gate))
	id := e.create(t, "alice", "confirm", "")
	s, _ := e.listen(t, "/mcp", "alice", "1", `{"taskIds":[`+strconv.Quote(id)+`]}`, taskCaps)
	n.breakNext.Store(true)
	close(gate)
	e.until(t, id, "input_required")
	require.Equal(t, 200, e.do(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{"ok":{"action":"accept","content":{}}}`, taskCaps).Status)
	working := taskNotice(t, s, float64(1))
	assert.Equal(t, "working", working["status"], "the broken input_required was dropped; the next change is told")
	done := taskNotice(t, s, float64(1))
	assert.Equal(t, e.asGet(t, id), done)
}

// indentingNotifier passes each event's task through indented JSON, and
// breaks the raw JSON of the next one when asked.
type indentingNotifier struct {
	*mcpmw.LocalNotifier
	breakNext atomic.Bool
}

func (n *indentingNotifier) Publish(ctx context.Context, ev mcpmw.Event) error {
	if ev.Task != nil {
		b, err := json.MarshalIndent(ev.Task, "", "  ")
		if err != nil {
			return err
		}
		var c mcpmw.Task
		if err := json.Unmarshal(b, &c); err != nil {
			return err
		}
		if c.Status == mcpmw.TaskCompleted && !bytes.Contains(c.Result, []byte("\n")) {
			return io.ErrUnexpectedEOF // the test must exercise what it says
		}
		if n.breakNext.CompareAndSwap(true, false) {
			for k := range c.InputRequests {
				c.InputRequests[k] = json.RawMessage(`{"method":`)
			}
		}
		ev.Task = &c
	}
	return n.LocalNotifier.Publish(ctx, ev)
}

// A Notifier that fails loses the notification, says so in the log, and
// leaves the task alone: tasks/get still reads it.
func TestTaskStatusNotifierFailureIsLogged(t *testing.T) {
	t.Parallel()
	n := &failingNotifier{LocalNotifier: mcpmw.NewLocalNotifier()}
	gate := make(chan struct{})
	e := newTaskEnv(t, &mcpmw.Options{Notifier: n}, confirmTool(gate))
	id := e.create(t, "alice", "confirm", "")
	close(gate)
	e.until(t, id, "input_required")
	waitFor := time.Now().Add(mcpmw.Patience)
	for !strings.Contains(e.log.String(), "a task's status change could not be published to listeners") {
		require.True(t, time.Now().Before(waitFor), "no log line: %s", e.log.String())
		time.Sleep(5 * time.Millisecond)
	}
	assert.Contains(t, e.log.String(), "bus down")
	require.Equal(t, 200, e.do(t, "alice", "tasks/cancel", `"taskId":`+strconv.Quote(id), taskCaps).Status) // Close need not wait for it

	ok := newTaskEnv(t, nil, confirmTool(nil))
	assert.NotContains(t, ok.log.String(), "could not be published")
	okID := ok.create(t, "alice", "confirm", "")
	require.Equal(t, 200, ok.do(t, "alice", "tasks/cancel", `"taskId":`+strconv.Quote(okID), taskCaps).Status)
	ok.until(t, okID, "cancelled")
	untilEndRecord(t, ok, okID)
	assert.NotContains(t, ok.log.String(), "could not be published", "a Notifier that delivers: nothing logged")
}

// failingNotifier fails every task status event.
type failingNotifier struct{ *mcpmw.LocalNotifier }

func (n *failingNotifier) Publish(ctx context.Context, ev mcpmw.Event) error {
	if ev.Method == mcpmw.TaskStatusChanged {
		return errors.New("bus down")
	}
	return n.LocalNotifier.Publish(ctx, ev)
}
