package mcpmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// The tasks extension end to end, in process: the wire of each answer,
// the caller binding, the rounds of a task's questions, cancellation,
// failures, capacity, the lease and its reaper, and shutdown. The
// conformance suite's tasks-* scenarios run against examples/conformance
// (scripts/conformance.sh), and the multi-process tests against Redis in
// examples/scaleout.

// taskCaps declares the tasks extension and elicitation.
const taskCaps = `{"extensions":{"io.modelcontextprotocol/tasks":{}},"elicitation":{}}`

// taskEnv is one handler serving tools that may become tasks, with its
// auditor and store.
type taskEnv struct {
	h     *mcpmw.Handler
	rec   *mcpmwtest.Recorder
	store mcpmw.TaskStore
	log   *syncBuffer // the handler's log
}

// taskUsers: alice and bob may "run"; alice-demoted is alice without it.
var taskUsers = mcpmwtest.Tokens{
	"alice":         &mcpmwtest.User{Name: "alice", Permissions: []mcpmw.Permission{"run"}},
	"bob":           &mcpmwtest.User{Name: "bob", Permissions: []mcpmw.Permission{"run"}},
	"alice-demoted": &mcpmwtest.User{Name: "alice"},
	"anonymous":     anonymousRunner{},
}

// anonymousRunner may run, and has no CallerID.
type anonymousRunner struct{}

func (anonymousRunner) Can(mcpmw.Permission) bool { return true }

func newTaskEnv(t *testing.T, opts *mcpmw.Options, tools ...mcpmw.Tool) *taskEnv {
	t.Helper()
	var reg mcpmw.Registry
	reg.AddTools(tools...)
	if opts == nil {
		opts = &mcpmw.Options{}
	}
	if opts.Tasks == nil {
		opts.Tasks = &mcpmw.TaskOptions{}
	}
	if opts.Tasks.Store == nil {
		opts.Tasks.Store = mcpmw.NewMemoryTaskStore()
	}
	if opts.Tasks.PollInterval == 0 {
		opts.Tasks.PollInterval = 20 * time.Millisecond
	}
	log := &syncBuffer{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(log, nil))
	}
	rec := mcpmwtest.NewRecorder()
	h := mcpmw.New(&reg, taskUsers, rec, opts)
	t.Cleanup(h.Close)
	return &taskEnv{h: h, rec: rec, store: opts.Tasks.Store, log: log}
}

// taskReply is a decoded answer.
type taskReply struct {
	Status int
	Result map[string]any
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	Raw string
}

// do sends a 2026-07-28 request of method with params members params and
// the client capabilities caps, as token; the routing headers follow the
// body unless hdr overrides them.
func (e *taskEnv) do(t *testing.T, token, method, params, caps string, hdr ...string) taskReply {
	t.Helper()
	return doTask(t, e.h, token, method, params, caps, hdr...)
}

func doTask(t *testing.T, h http.Handler, token, method, params, caps string, hdr ...string) taskReply {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, taskRequest(token, method, params, caps, hdr...))
	return decodeTaskReply(t, w.Code, w.Body.Bytes())
}

// decodeTaskReply decodes the JSON-RPC answer body, of HTTP status code.
func decodeTaskReply(t *testing.T, code int, body []byte) taskReply {
	t.Helper()
	out := taskReply{Status: code, Raw: string(body)}
	var msg struct {
		Result map[string]any
		Error  json.RawMessage
	}
	require.NoError(t, json.Unmarshal(body, &msg), string(body))
	out.Result = msg.Result
	if msg.Error != nil {
		require.NoError(t, json.Unmarshal(msg.Error, &out.Error))
	}
	return out
}

// taskRequest is the request doTask sends.
func taskRequest(token, method, params, caps string, hdr ...string) *http.Request {
	if params != "" {
		params += ","
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", method)
	var p struct{ Name, TaskID string }
	_ = json.Unmarshal([]byte("{"+strings.TrimSuffix(params, ",")+"}"), &p)
	if name := p.Name + p.TaskID; name != "" {
		r.Header.Set("Mcp-Name", name)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			r.Header.Del(hdr[i])
		} else {
			r.Header.Set(hdr[i], hdr[i+1])
		}
	}
	return r
}

// call calls tool with arguments args, declaring the extension.
func (e *taskEnv) call(t *testing.T, token, tool, args string) taskReply {
	t.Helper()
	if args == "" {
		args = "{}"
	}
	return e.do(t, token, "tools/call", `"name":"`+tool+`","arguments":`+args, taskCaps)
}

// create calls tool and returns the id of the task it became.
func (e *taskEnv) create(t *testing.T, token, tool, args string) string {
	t.Helper()
	r := e.call(t, token, tool, args)
	require.Equal(t, 200, r.Status, r.Raw)
	require.Equal(t, "task", r.Result["resultType"], r.Raw)
	id, _ := r.Result["taskId"].(string)
	require.NotEmpty(t, id, r.Raw)
	return id
}

func (e *taskEnv) get(t *testing.T, token, id string) taskReply {
	t.Helper()
	return e.do(t, token, "tasks/get", `"taskId":`+strconv.Quote(id), taskCaps)
}

// until polls tasks/get until the task's status is one of want (or
// terminal), for at most 5 s.
func (e *taskEnv) until(t *testing.T, id string, want ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(mcpmw.Patience)
	for {
		r := e.get(t, "alice", id)
		require.Equal(t, 200, r.Status, r.Raw)
		s, _ := r.Result["status"].(string)
		for _, w := range want {
			if s == w {
				return r.Result
			}
		}
		if s == "completed" || s == "failed" || s == "cancelled" || time.Now().After(deadline) {
			t.Fatalf("task %s is %q, want %v: %s", id, s, want, r.Raw)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gatedTool is an optional task tool that waits for release (or its
// context) and answers "done".
func gatedTool(name string, release <-chan struct{}, mode mcpmw.TaskMode, ran *atomic.Int32) mcpmw.Tool {
	return mcpmw.Tool{Name: name, Permission: "run", Task: mode,
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			if ran != nil {
				ran.Add(1)
			}
			select {
			case <-release:
				return mcpmw.TextResult("done"), nil
			case <-ctx.Done():
				return mcpmw.ToolResult{}, ctx.Err()
			}
		}}
}

// waitRecords waits (at most 5 s) until pred holds of rec's records.
func waitRecords(t *testing.T, rec *mcpmwtest.Recorder, pred func([]mcpmw.CallRecord) bool) []mcpmw.CallRecord {
	t.Helper()
	deadline := time.Now().Add(mcpmw.Patience)
	for !pred(rec.Records()) {
		if time.Now().After(deadline) {
			rs := rec.Records()
			t.Fatalf("records never got there: %d records, the last: %+v", len(rs), rs[max(len(rs)-3, 0):])
		}
		time.Sleep(5 * time.Millisecond)
	}
	return rec.Records()
}

var isoMillis = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func TestTaskLifecycleOnTheWire(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{TTL: 30 * time.Minute, PollInterval: 250 * time.Millisecond}},
		gatedTool("export", release, mcpmw.TaskOptional, nil))

	created := e.call(t, "alice", "export", "")
	require.Equal(t, 200, created.Status, created.Raw)
	res := created.Result
	assert.Equal(t, "task", res["resultType"])
	id, _ := res["taskId"].(string)
	assert.Regexp(t, `^[A-Za-z0-9_-]{22}$`, id, "128 random bits, base64url")
	assert.Equal(t, "working", res["status"])
	assert.Regexp(t, isoMillis, res["createdAt"])
	assert.Regexp(t, isoMillis, res["lastUpdatedAt"])
	assert.EqualValues(t, 1_800_000, res["ttlMs"])
	assert.EqualValues(t, 250, res["pollIntervalMs"])
	for _, absent := range []string{"result", "error", "inputRequests", "requestState", "task", "ttl", "pollInterval", "content"} {
		assert.NotContains(t, res, absent, "a CreateTaskResult is flat and carries no %s", absent)
	}

	got := e.get(t, "alice", id)
	require.Equal(t, 200, got.Status, got.Raw)
	assert.Equal(t, "complete", got.Result["resultType"])
	assert.Equal(t, id, got.Result["taskId"])
	assert.Equal(t, "working", got.Result["status"])
	assert.NotContains(t, got.Result, "result")

	close(release)
	done := e.until(t, id, "completed")
	assert.Equal(t, "complete", done["resultType"])
	inner, _ := done["result"].(map[string]any)
	require.NotNil(t, inner, "a completed task inlines its result")
	assert.Equal(t, []any{map[string]any{"type": "text", "text": "done"}}, inner["content"])
	assert.NotContains(t, done, "error")

	recs := waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool {
		for _, r := range rs {
			if r.Target == id && strings.HasPrefix(r.Summary, "task completed") {
				return true
			}
		}
		return false
	})
	var creation, terminal, gets int
	for _, r := range recs {
		switch {
		case r.Method == "tools/call" && r.Summary == "task created":
			creation++
			assert.Equal(t, id, r.Target)
			assert.Equal(t, "export", r.Tool)
			assert.Equal(t, "7", r.RequestID)
		case r.Method == "tools/call" && strings.HasPrefix(r.Summary, "task completed"):
			terminal++
			assert.Equal(t, id, r.Target)
			assert.Equal(t, "export", r.Tool)
			assert.Equal(t, mcpmw.OutcomeOK, r.Outcome)
			assert.Equal(t, "alice", r.Caller.(*mcpmwtest.User).Name)
		case r.Method == "tasks/get":
			gets++
			assert.Equal(t, id, r.Target)
		}
	}
	assert.Equal(t, 1, creation, "one record of the creation")
	assert.Equal(t, 1, terminal, "one record of the end")
	assert.GreaterOrEqual(t, gets, 2, "one record per tasks/get")
}

func TestTaskIsServerDirected(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	close(release)
	var ran atomic.Int32
	e := newTaskEnv(t, nil, gatedTool("export", release, mcpmw.TaskOptional, &ran),
		gatedTool("sync", release, mcpmw.TaskNever, nil))

	plain := e.do(t, "alice", "tools/call", `"name":"export","arguments":{}`, `{}`)
	assert.Equal(t, "complete", plain.Result["resultType"], "without the extension a TaskOptional tool answers when done: %s", plain.Raw)
	assert.NotContains(t, plain.Result, "taskId")

	never := e.call(t, "alice", "sync", "")
	assert.Equal(t, "complete", never.Result["resultType"], "a TaskNever tool never becomes a task: %s", never.Raw)

	hinted := e.do(t, "alice", "tools/call", `"name":"sync","arguments":{},"task":{"ttl":60000,"pollInterval":100}`, taskCaps)
	assert.Equal(t, "complete", hinted.Result["resultType"], "a legacy task hint does not make a task: %s", hinted.Raw)

	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"export","arguments":{}}}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer alice")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	e.h.ServeHTTP(w, r)
	assert.Contains(t, w.Body.String(), `"text":"done"`, "on a legacy revision the tool runs as a plain call")
	assert.NotContains(t, w.Body.String(), "taskId")
	assert.EqualValues(t, 2, ran.Load())
}

func TestTaskRequiredNeedsTheExtension(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	release := make(chan struct{})
	close(release)
	e := newTaskEnv(t, nil, gatedTool("report", release, mcpmw.TaskRequired, &ran))
	r := e.do(t, "alice", "tools/call", `"name":"report","arguments":{}`, `{"elicitation":{}}`)
	assert.Equal(t, 400, r.Status, r.Raw)
	require.NotNil(t, r.Error, r.Raw)
	assert.Equal(t, mcpmw.CodeMissingRequiredClientCapability, r.Error.Code)
	assert.JSONEq(t, `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`, string(r.Error.Data))
	assert.Contains(t, r.Error.Message, "io.modelcontextprotocol/tasks")
	assert.Zero(t, ran.Load(), "refused before the tool runs")
	rs := e.rec.Records()
	require.NotEmpty(t, rs)
	assert.Equal(t, "client lacks the extension io.modelcontextprotocol/tasks", rs[len(rs)-1].Summary, "the record names the extension")

	anon := e.call(t, "anonymous", "report", "")
	require.NotNil(t, anon.Error, "a task needs a caller it can be bound to: %s", anon.Raw)
	assert.Equal(t, mcpmw.CodeInvalidRequest, anon.Error.Code)
	assert.Zero(t, ran.Load())

	id := e.create(t, "alice", "report", "")
	e.until(t, id, "completed")
}

func TestTaskWithoutCallerIDRunsPlain(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	close(release)
	e := newTaskEnv(t, nil, gatedTool("export", release, mcpmw.TaskOptional, nil))
	r := e.call(t, "anonymous", "export", "")
	assert.Equal(t, "complete", r.Result["resultType"], "a caller without a CallerID cannot hold a task: %s", r.Raw)
}

func TestTaskBelongsToItsCaller(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	e := newTaskEnv(t, nil, gatedTool("export", release, mcpmw.TaskOptional, nil))
	id := e.create(t, "alice", "export", "")

	unknown := e.get(t, "alice", "no-such-task-aaaaaaaaaa")
	require.NotNil(t, unknown.Error, unknown.Raw)
	assert.Equal(t, mcpmw.CodeInvalidParams, unknown.Error.Code)
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		params := `"taskId":` + strconv.Quote(id)
		if method == "tasks/update" {
			params += `,"inputResponses":{}`
		}
		other := e.do(t, "bob", method, params, taskCaps)
		require.NotNil(t, other.Error, "%s by another caller: %s", method, other.Raw)
		assert.Equal(t, mcpmw.CodeInvalidParams, other.Error.Code, method)
		assert.Equal(t, unknown.Error.Message, other.Error.Message, "%s: another caller's task reads exactly as an unknown one", method)
		assert.NotContains(t, other.Raw, "export", "%s: nothing of the task leaks", method)

		demoted := e.do(t, "alice-demoted", method, params, taskCaps)
		assert.Equal(t, http.StatusForbidden, demoted.Status, "%s: the caller must still hold the tool's permission: %s", method, demoted.Raw)

		undeclared := e.do(t, "alice", method, params, `{}`)
		require.NotNil(t, undeclared.Error, undeclared.Raw)
		assert.Equal(t, mcpmw.CodeMissingRequiredClientCapability, undeclared.Error.Code, "%s without the extension", method)
		assert.JSONEq(t, `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`, string(undeclared.Error.Data))
	}
	assert.Equal(t, "working", e.get(t, "alice", id).Result["status"], "bob's cancel did nothing")
	for _, r := range e.rec.Records() {
		if r.Caller != nil && r.Caller.(interface{ CallerID() string }).CallerID() == "bob" {
			assert.Equal(t, id, r.Target, "the record says which task bob named")
			assert.Equal(t, "another caller's task", r.Summary)
		}
	}
}

func TestTaskRoutingHeaderNamesTheTask(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	e := newTaskEnv(t, nil, gatedTool("export", release, mcpmw.TaskOptional, nil))
	id := e.create(t, "alice", "export", "")
	for _, tc := range []struct {
		name string
		hdr  []string
	}{{"mismatched", []string{"Mcp-Name", "some-other-task"}}, {"missing", []string{"Mcp-Name", ""}}} {
		r := e.do(t, "alice", "tasks/get", `"taskId":`+strconv.Quote(id), taskCaps, tc.hdr...)
		assert.Equal(t, 400, r.Status, "%s Mcp-Name: %s", tc.name, r.Raw)
		require.NotNil(t, r.Error, r.Raw)
		assert.Equal(t, mcpmw.CodeHeaderMismatch, r.Error.Code, tc.name)
	}
	spaced := e.do(t, "alice", "tasks/get", `"taskId":`+strconv.Quote(id), taskCaps, "Mcp-Name", "  "+id+"  ")
	assert.Equal(t, 200, spaced.Status, spaced.Raw)
	for _, gone := range []string{"tasks/list", "tasks/result"} {
		r := e.do(t, "alice", gone, `"taskId":`+strconv.Quote(id), taskCaps)
		require.NotNil(t, r.Error, r.Raw)
		assert.Equal(t, mcpmw.CodeMethodNotFound, r.Error.Code, gone)
	}
	bad := e.do(t, "alice", "tasks/get", `"taskId":12`, taskCaps)
	require.NotNil(t, bad.Error, bad.Raw)
	assert.Equal(t, mcpmw.CodeInvalidParams, bad.Error.Code, "a taskId that is not a string")
}

func TestTaskAsksThroughTasksGetAndUpdate(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	form := json.RawMessage(`{"type":"object","properties":{"v":{"type":"string"}}}`)
	e := newTaskEnv(t, nil, mcpmw.Tool{Name: "survey", Permission: "run", Task: mcpmw.TaskOptional,
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			n := runs.Add(1)
			a, err1 := mcpmw.Ask(ctx, "first", mcpmw.ElicitForm("First?", form))
			b, err2 := mcpmw.Ask(ctx, "second", mcpmw.ElicitForm("Second?", form))
			if err := errors.Join(err1, err2); err != nil {
				mcpmw.SetRoundState(ctx, []byte("run-"+strconv.Itoa(int(n))))
				return mcpmw.ToolResult{}, err
			}
			c, err := mcpmw.Ask(ctx, "third", mcpmw.ElicitForm("Third?", form))
			if err != nil {
				mcpmw.SetRoundState(ctx, append(mcpmw.RoundState(ctx), "+third"...))
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult(string(a) + "|" + string(b) + "|" + string(c) + "|" + string(mcpmw.RoundState(ctx))), nil
		}})
	id := e.create(t, "alice", "survey", "")
	asked := e.until(t, id, "input_required")
	reqs, _ := asked["inputRequests"].(map[string]any)
	require.Len(t, reqs, 2, "both questions of one run are outstanding at once: %v", asked)
	first, _ := reqs["first"].(map[string]any)
	assert.Equal(t, "elicitation/create", first["method"])
	assert.Equal(t, "First?", first["params"].(map[string]any)["message"])
	assert.Equal(t, `waiting for the client's answer to "first" and 1 more`, asked["statusMessage"])

	update := func(answers string) taskReply {
		r := e.do(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":`+answers, taskCaps)
		require.Equal(t, 200, r.Status, r.Raw)
		assert.Equal(t, map[string]any{"resultType": "complete", "_meta": r.Result["_meta"]}, r.Result, "an empty ack")
		return r
	}
	update(`{"first":{"action":"accept","content":{"v":"A"}},"never-asked":{"x":1}}`)
	still := e.get(t, "alice", id).Result
	assert.Equal(t, "input_required", still["status"], "one question is still outstanding")
	left, _ := still["inputRequests"].(map[string]any)
	assert.Equal(t, []string{"second"}, keysOf(left), "the answered key is gone, the other stays")

	notObject := e.do(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{"second":"yes"}`, taskCaps)
	require.NotNil(t, notObject.Error, notObject.Raw)
	assert.Equal(t, mcpmw.CodeInvalidParams, notObject.Error.Code)
	missing := e.do(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id), taskCaps)
	require.NotNil(t, missing.Error, missing.Raw)
	assert.Equal(t, mcpmw.CodeInvalidParams, missing.Error.Code)

	update(`{"second":{"action":"accept","content":{"v":"B"}},"first":{"action":"accept","content":{"v":"changed"}}}`)
	third := e.until(t, id, "input_required")
	assert.Equal(t, []string{"third"}, keysOf(third["inputRequests"].(map[string]any)), "the second run asks what it still needs, once")
	update(`{"third":{"action":"accept","content":{"v":"C"}}}`)
	done := e.until(t, id, "completed")
	text := done["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	assert.Equal(t, `{"action":"accept","content":{"v":"A"}}|{"action":"accept","content":{"v":"B"}}|{"action":"accept","content":{"v":"C"}}|run-1+third`, text,
		"each key answered once (a second answer to it is ignored), and the round state carried from run to run")
	assert.EqualValues(t, 3, runs.Load(), "the tool runs again after each answered round, as a retried call would")
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestTaskPrepareAsksBeforeTheTaskExists(t *testing.T) {
	t.Parallel()
	form := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)
	var prepared, called atomic.Int32
	ring, err := mcpmw.NewKeyRing(make([]byte, 32))
	require.NoError(t, err)
	e := newTaskEnv(t, &mcpmw.Options{StateKeys: ring}, mcpmw.Tool{Name: "greet", Permission: "run", Task: mcpmw.TaskRequired,
		Prepare: func(ctx context.Context, _ mcpmw.Caller, args *mcpmw.Args) error {
			prepared.Add(1)
			if args.OptString("bad", "") != "" {
				return &mcpmw.ArgError{Field: "bad", Problem: "must be empty"}
			}
			_, err := mcpmw.Ask(ctx, "name", mcpmw.ElicitForm("Name?", form))
			return err
		},
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			called.Add(1)
			ans, err := mcpmw.Ask(ctx, "name", mcpmw.ElicitForm("Name?", form))
			if err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult("Hello " + string(ans)), nil
		}})
	round1 := e.call(t, "alice", "greet", "")
	assert.Equal(t, "input_required", round1.Result["resultType"], round1.Raw)
	assert.NotContains(t, round1.Result, "taskId", "no task before Prepare has what it needs")
	state, _ := round1.Result["requestState"].(string)

	bad := e.call(t, "alice", "greet", `{"bad":"x"}`)
	assert.Equal(t, true, bad.Result["isError"], "Prepare's argument error answers as Call's would: %s", bad.Raw)
	assert.Zero(t, called.Load())

	params := `"name":"greet","arguments":{},"inputResponses":{"name":{"action":"accept","content":{"name":"Ada"}}}`
	if state != "" {
		params += `,"requestState":` + strconv.Quote(state)
	}
	round2 := e.do(t, "alice", "tools/call", params, taskCaps)
	require.Equal(t, "task", round2.Result["resultType"], round2.Raw)
	assert.NotContains(t, round2.Result, "requestState")
	assert.NotContains(t, round2.Result, "inputRequests")
	done := e.until(t, round2.Result["taskId"].(string), "completed")
	text := done["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	assert.Equal(t, `Hello {"action":"accept","content":{"name":"Ada"}}`, text, "the task's run finds the answer given before it existed")
	assert.EqualValues(t, 3, prepared.Load())
}

func TestTaskCancel(t *testing.T) {
	t.Parallel()
	stopped := make(chan error, 1)
	e := newTaskEnv(t, nil, mcpmw.Tool{Name: "long", Permission: "run", Task: mcpmw.TaskOptional,
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			<-ctx.Done()
			stopped <- ctx.Err()
			return mcpmw.ToolResult{}, ctx.Err()
		}})
	id := e.create(t, "alice", "long", "")
	ack := e.do(t, "alice", "tasks/cancel", `"taskId":`+strconv.Quote(id), taskCaps)
	require.Equal(t, 200, ack.Status, ack.Raw)
	for _, absent := range []string{"taskId", "status", "result", "error", "inputRequests"} {
		assert.NotContains(t, ack.Result, absent)
	}
	assert.Equal(t, "complete", ack.Result["resultType"])
	select {
	case err := <-stopped:
		assert.ErrorIs(t, err, context.Canceled, "the tool's context is cancelled")
	case <-time.After(mcpmw.Patience):
		t.Fatal("tasks/cancel did not reach the running tool")
	}
	final := e.until(t, id, "cancelled")
	assert.NotContains(t, final, "result")
	again := e.do(t, "alice", "tasks/cancel", `"taskId":`+strconv.Quote(id), taskCaps)
	assert.Equal(t, 200, again.Status, "cancelling an ended task is acknowledged the same: %s", again.Raw)
	recs := waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool {
		for _, r := range rs {
			if r.Target == id && r.Summary == "task cancelled by the client" {
				return true
			}
		}
		return false
	})
	n := 0
	for _, r := range recs {
		if r.Target == id && strings.HasPrefix(r.Summary, "task cancelled") {
			n++
		}
	}
	assert.Equal(t, 1, n, "one record of the end")
}

func TestTaskCancelledHereReadsCancelledAtOnce(t *testing.T) {
	t.Parallel()
	never := make(chan struct{})
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{MaxRunning: 64, MaxPerCaller: 64}}, gatedTool("long", never, mcpmw.TaskRequired, nil))
	for range 20 { // the run stops on its own goroutine: the answer waits for it
		id := e.create(t, "alice", "long", "")
		ack := e.do(t, "alice", "tasks/cancel", `"taskId":`+strconv.Quote(id), taskCaps)
		require.Nil(t, ack.Error, ack.Raw)
		assert.Equal(t, "cancelled", e.get(t, "alice", id).Result["status"], "the first tasks/get after the acknowledgement")
	}
}

func TestTaskCancelWhileItWaitsForAnswers(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, nil, mcpmw.Tool{Name: "ask", Permission: "run", Task: mcpmw.TaskOptional,
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			_, err := mcpmw.Ask(ctx, "q", mcpmw.ElicitForm("?", json.RawMessage(`{"type":"object"}`)))
			return mcpmw.ToolResult{}, err
		}})
	id := e.create(t, "alice", "ask", "")
	asked := e.until(t, id, "input_required")
	assert.Equal(t, `waiting for the client's answer to "q"`, asked["statusMessage"])
	e.do(t, "alice", "tasks/cancel", `"taskId":`+strconv.Quote(id), taskCaps)
	e.until(t, id, "cancelled")
	late := e.do(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{"q":{"action":"accept"}}`, taskCaps)
	assert.Equal(t, 200, late.Status, "an answer to an ended task is acknowledged and ignored: %s", late.Raw)
	assert.Equal(t, "cancelled", e.get(t, "alice", id).Result["status"])
}

func TestTaskEnds(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, nil,
		mcpmw.Tool{Name: "tool-error", Permission: "run", Task: mcpmw.TaskOptional,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ErrorResult("the source is down"), nil
			}},
		mcpmw.Tool{Name: "arg-error", Permission: "run", Task: mcpmw.TaskOptional,
			Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				_ = args.Int("n")
				return mcpmw.ToolResult{}, args.Err()
			}},
		mcpmw.Tool{Name: "rpc-error", Permission: "run", Task: mcpmw.TaskOptional,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{}, &mcpmw.Error{Code: -32050, Message: "quota exhausted", Data: map[string]int{"retryAfter": 5}}
			}},
		mcpmw.Tool{Name: "go-error", Permission: "run", Task: mcpmw.TaskOptional,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{}, errors.New("database password is hunter2")
			}},
		mcpmw.Tool{Name: "panics", Permission: "run", Task: mcpmw.TaskOptional,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				panic("boom")
			}},
		mcpmw.Tool{Name: "slow", Permission: "run", Task: mcpmw.TaskOptional, Timeout: 20 * time.Millisecond,
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				<-ctx.Done()
				return mcpmw.ToolResult{}, ctx.Err()
			}},
	)
	for _, tc := range []struct {
		tool, status string
		check        func(t *testing.T, task map[string]any)
	}{
		{"tool-error", "completed", func(t *testing.T, task map[string]any) {
			assert.Equal(t, true, task["result"].(map[string]any)["isError"], "a tool's own error is a completed task")
			assert.Equal(t, "the tool reported an error", task["statusMessage"])
			waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool {
				for _, r := range rs {
					if r.Tool == "tool-error" && r.Summary == "task completed: tool reported an error: the source is down" {
						assert.Equal(t, mcpmw.OutcomeError, r.Outcome, "the record carries the tool's outcome")
						return true
					}
				}
				return false
			})
		}},
		{"arg-error", "completed", func(t *testing.T, task map[string]any) {
			assert.Equal(t, true, task["result"].(map[string]any)["isError"])
			assert.Contains(t, task["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"], "Invalid arguments")
		}},
		{"rpc-error", "failed", func(t *testing.T, task map[string]any) {
			assert.Equal(t, map[string]any{"code": float64(-32050), "message": "quota exhausted", "data": map[string]any{"retryAfter": float64(5)}}, task["error"])
			assert.NotContains(t, task, "result")
			assert.Equal(t, "quota exhausted", task["statusMessage"])
		}},
		{"go-error", "failed", func(t *testing.T, task map[string]any) {
			assert.Equal(t, map[string]any{"code": float64(-32603), "message": "Internal error"}, task["error"])
			assert.NotContains(t, task["statusMessage"], "hunter2", "an error's text stays in the log")
			assert.Contains(t, e.log.String(), "hunter2", "where it is")
			waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool {
				for _, r := range rs {
					if r.Tool == "go-error" && strings.HasPrefix(r.Summary, "task failed: tool failed: ") {
						return true
					}
				}
				return false
			})
		}},
		{"panics", "failed", func(t *testing.T, task map[string]any) {
			assert.Equal(t, float64(-32603), task["error"].(map[string]any)["code"], "a panic fails the task, not the process")
		}},
		{"slow", "completed", func(t *testing.T, task map[string]any) {
			assert.Contains(t, task["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"], "did not finish within 20ms")
		}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			id := e.create(t, "alice", tc.tool, `{"n":"x"}`)
			tc.check(t, e.until(t, id, tc.status))
			waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool {
				for _, r := range rs {
					if r.Target == id && r.Summary != "task created" && r.Method == "tools/call" {
						if tc.status == "failed" {
							assert.Equal(t, mcpmw.OutcomeError, r.Outcome)
							assert.NotZero(t, r.ErrorCode)
						}
						return true
					}
				}
				return false
			})
		})
	}
}

func TestTaskCapacity(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var ran atomic.Int32
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{MaxRunning: 1}},
		gatedTool("opt", release, mcpmw.TaskOptional, &ran), gatedTool("req", release, mcpmw.TaskRequired, &ran))
	id := e.create(t, "alice", "opt", "")
	busy := e.call(t, "alice", "req", "")
	require.NotNil(t, busy.Error, "a TaskRequired call beyond the bound is refused: %s", busy.Raw)
	assert.Equal(t, mcpmw.CodeInternalError, busy.Error.Code)
	assert.Contains(t, busy.Error.Message, "as many tasks as it can")

	plain := make(chan taskReply, 1)
	go func() { plain <- e.call(t, "alice", "opt", "") }()
	require.Eventually(t, func() bool { return ran.Load() == 2 }, mcpmw.Patience, time.Millisecond, "a TaskOptional call beyond the bound runs as a plain call")
	close(release)
	r := <-plain
	assert.Equal(t, "complete", r.Result["resultType"], r.Raw)
	e.until(t, id, "completed")
	require.Eventually(t, func() bool {
		return e.call(t, "alice", "req", "").Result["resultType"] == "task"
	}, mcpmw.Patience, 5*time.Millisecond, "the slot is given back when the task ends")
}

func TestTaskTTLEndsItAndTheStoreForgetsIt(t *testing.T) {
	t.Parallel()
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{TTL: 150 * time.Millisecond}}, mcpmw.Tool{Name: "forever", Permission: "run", Task: mcpmw.TaskOptional,
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			<-ctx.Done()
			return mcpmw.ToolResult{}, ctx.Err()
		}})
	id := e.create(t, "alice", "forever", "")
	waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool {
		for _, r := range rs {
			if r.Target == id && r.Summary == "task failed: the task outlived its TTL" {
				assert.Equal(t, mcpmw.CodeInternalError, r.ErrorCode)
				return true
			}
		}
		return false
	})
	require.Eventually(t, func() bool {
		r := e.get(t, "alice", id)
		return r.Error != nil && r.Error.Code == mcpmw.CodeInvalidParams
	}, mcpmw.Patience, 10*time.Millisecond, "past its TTL the task is gone")
}

// sharedStore is a MemoryTaskStore the handler takes for a shared one (it
// is not a *MemoryTaskStore), so that it runs the reaper.
type sharedStore struct{ *mcpmw.MemoryTaskStore }

func TestTaskOfADeadInstanceIsReaped(t *testing.T) {
	t.Parallel()
	store := sharedStore{mcpmw.NewMemoryTaskStore()}
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: store, Lease: time.Second}},
		gatedTool("export", make(chan struct{}), mcpmw.TaskOptional, nil))
	now := time.Now()
	require.NoError(t, store.Create(context.Background(), &mcpmw.Task{Endpoint: "/mcp",
		ID: "orphan-aaaaaaaaaaaaaaa", CallerID: "alice", Tool: "export", Permission: "run", Status: mcpmw.TaskWorking,
		Created: now, Updated: now, TTL: time.Hour, Owner: "a-dead-instance", LeaseUntil: now.Add(50 * time.Millisecond),
	}))
	start := time.Now()
	failed := e.until(t, "orphan-aaaaaaaaaaaaaaa", "failed")
	assert.Less(t, time.Since(start), 3*time.Second, "its lease ended at once: reaped within half a lease (the reaper's period), and a busy machine's slack")
	assert.Equal(t, float64(-32603), failed["error"].(map[string]any)["code"])
	assert.Contains(t, failed["error"].(map[string]any)["message"], "stopped before it finished")
	waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool {
		for _, r := range rs {
			if r.Target == "orphan-aaaaaaaaaaaaaaa" && strings.Contains(r.Summary, "a-dead-instance") {
				return true
			}
		}
		return false
	})

	id := e.create(t, "alice", "export", "")
	time.Sleep(2 * time.Second) // two leases: a running task's lease is renewed
	assert.Equal(t, "working", e.get(t, "alice", id).Result["status"], "a task whose instance is alive is not reaped")
	assert.Len(t, endRecords(e.rec.Records(), "orphan-aaaaaaaaaaaaaaa"), 1, "and the reaped one was recorded once, over four passes of the reaper")
}

func TestTaskAcrossInstancesSharingAStoreAndARelay(t *testing.T) {
	t.Parallel()
	for _, relayed := range []bool{true, false} {
		t.Run("relay="+strconv.FormatBool(relayed), func(t *testing.T) {
			t.Parallel()
			store := sharedStore{mcpmw.NewMemoryTaskStore()}
			var b bus
			started := make(chan struct{}, 1)
			stopped := make(chan struct{}, 1)
			tool := mcpmw.Tool{Name: "ask", Permission: "run", Task: mcpmw.TaskOptional,
				Call: func(ctx context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
					if args.OptBool("wait", false) {
						started <- struct{}{}
						<-ctx.Done()
						stopped <- struct{}{}
						return mcpmw.ToolResult{}, ctx.Err()
					}
					ans, err := mcpmw.Ask(ctx, "q", mcpmw.ElicitForm("?", json.RawMessage(`{"type":"object"}`)))
					if err != nil {
						return mcpmw.ToolResult{}, err
					}
					return mcpmw.TextResult(string(ans)), nil
				}}
			instance := func() *taskEnv {
				o := &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: store, PollInterval: 2 * time.Second, Lease: 3 * time.Second}}
				if relayed {
					o.Relay = b.join()
					o.Tasks.PollInterval = time.Hour // the wake-up must come through the relay
					o.Tasks.Lease = time.Hour
				} else {
					o.Tasks.PollInterval = 20 * time.Millisecond
					o.Tasks.Lease = 600 * time.Millisecond // a cancel reaches the owner at its next renewal
				}
				return newTaskEnv(t, o, tool)
			}
			one, two := instance(), instance()
			id := one.create(t, "alice", "ask", "")
			two.until(t, id, "input_required")
			r := two.do(t, "alice", "tasks/update", `"taskId":`+strconv.Quote(id)+`,"inputResponses":{"q":{"action":"accept","content":{"x":1}}}`, taskCaps)
			require.Equal(t, 200, r.Status, r.Raw)
			done := two.until(t, id, "completed")
			assert.Equal(t, `{"action":"accept","content":{"x":1}}`, done["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"],
				"an answer given to instance 2 reaches the run on instance 1")
			assert.Equal(t, "bob", func() string {
				other := two.get(t, "bob", id)
				if other.Error != nil && other.Error.Code == mcpmw.CodeInvalidParams {
					return "bob"
				}
				return other.Raw
			}(), "the binding holds on every instance")

			waiting := one.create(t, "alice", "ask", `{"wait":true}`)
			<-started
			two.do(t, "alice", "tasks/cancel", `"taskId":`+strconv.Quote(waiting), taskCaps)
			select {
			case <-stopped:
			case <-time.After(mcpmw.Patience):
				t.Fatal("a cancel sent to instance 2 did not stop the run on instance 1")
			}
			two.until(t, waiting, "cancelled")
		})
	}
}

func TestTaskCloseFailsWhatIsStillRunning(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Shutdown: 2 * time.Second}},
		gatedTool("stuck", make(chan struct{}), mcpmw.TaskOptional, nil), gatedTool("quick", release, mcpmw.TaskOptional, nil))
	stuck := e.create(t, "alice", "stuck", "")
	quick := e.create(t, "alice", "quick", "")
	closed := make(chan struct{})
	go func() { e.h.Close(); close(closed) }()
	time.Sleep(20 * time.Millisecond)
	close(release) // finishes within the grace
	select {
	case <-closed:
	case <-time.After(mcpmw.Patience):
		t.Fatal("Close did not return")
	}
	q, _ := e.store.Get(context.Background(), quick)
	assert.Equal(t, mcpmw.TaskCompleted, q.Status, "a task that ends within the grace ends as it would")
	s, _ := e.store.Get(context.Background(), stuck)
	assert.Equal(t, mcpmw.TaskFailed, s.Status)
	assert.Contains(t, string(s.Error), "shut down")
	plain := e.call(t, "alice", "quick", "")
	assert.Equal(t, "complete", plain.Result["resultType"], "after Close a TaskOptional call runs as a plain call: %s", plain.Raw)
}

// Not parallel: it counts the process's goroutines.
func TestTaskManyAtOnceEndOnceEachAndLeaveNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	store := mcpmw.NewMemoryTaskStore()
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: store, MaxRunning: 200, MaxPerCaller: 200, TTL: 3 * time.Second}},
		mcpmw.Tool{Name: "work", Permission: "run", Task: mcpmw.TaskOptional,
			Call: func(ctx context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				time.Sleep(time.Duration(args.OptInt("ms", 0)) * time.Millisecond)
				return mcpmw.TextResult("ok"), nil
			}})
	const n = 200
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = e.create(t, "alice", "work", `{"ms":`+strconv.Itoa(i%20)+`}`)
		}()
	}
	wg.Wait()
	waitRecords(t, e.rec, func(rs []mcpmw.CallRecord) bool {
		ends := 0
		for _, r := range rs {
			if strings.HasPrefix(r.Summary, "task completed") {
				ends++
			}
		}
		return ends >= n
	})
	ends := map[string]int{}
	for _, r := range e.rec.Records() {
		if strings.HasPrefix(r.Summary, "task ") && r.Summary != "task created" {
			ends[r.Target]++
		}
	}
	for _, id := range ids {
		assert.Equal(t, 1, ends[id], "task %s: one record of its end", id)
	}
	deadline := time.Now().Add(mcpmw.Patience)
	for {
		_ = store.Create(context.Background(), &mcpmw.Task{ID: "sweeper-" + strconv.FormatInt(time.Now().UnixNano(), 10), TTL: time.Millisecond, Created: time.Now()})
		tasks, goroutines := store.Len(), runtime.NumGoroutine()
		if tasks <= 1 && goroutines <= before+2 {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("once expired, nothing stays: %d tasks, %d goroutines (%d before)\n%s", tasks, goroutines, before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestTaskExtensionIsAdvertisedWhenServed(t *testing.T) {
	t.Parallel()
	discover := func(h http.Handler) string {
		return doTask(t, h, "alice", "server/discover", "", `{}`).Raw
	}
	var plain mcpmw.Registry
	plain.AddTools(mcpmw.Tool{Name: "x", Permission: "run", Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.TextResult(""), nil
	}})
	h := mcpmw.New(&plain, taskUsers, mcpmwtest.NewRecorder(), nil)
	assert.NotContains(t, discover(h), "io.modelcontextprotocol/tasks", "no task tool, no Options.Tasks: no extension")
	r := doTask(t, h, "alice", "tasks/get", `"taskId":"x"`, taskCaps)
	assert.Equal(t, mcpmw.CodeMethodNotFound, r.Error.Code)

	e := newTaskEnv(t, nil, gatedTool("export", nil, mcpmw.TaskOptional, nil))
	assert.Contains(t, discover(e.h), `"extensions":{"io.modelcontextprotocol/tasks":{}}`)
	assert.NotContains(t, discover(e.h), `"tasks":{`, "no capabilities.tasks of the 2025-11-25 draft")
}

// panickyObserver panics in every hook a task calls.
type panickyObserver struct{}

func (panickyObserver) Serve(ctx context.Context, _ *mcpmw.Request, _ time.Time) context.Context {
	return ctx
}
func (panickyObserver) Done(context.Context, *http.Request, *mcpmw.Request, mcpmw.CallRecord) {}
func (panickyObserver) StartTask(context.Context, context.Context, *mcpmw.Task, time.Time) context.Context {
	panic("observer start")
}
func (panickyObserver) EndTask(context.Context, mcpmw.CallRecord) { panic("observer end") }

func TestTaskHooksThatPanicDoNotReachTheProcess(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	close(release)
	var audited atomic.Int32
	var reg mcpmw.Registry
	reg.AddTools(gatedTool("export", release, mcpmw.TaskOptional, nil))
	log := &syncBuffer{}
	audit := mcpmw.AuditFunc(func(_ context.Context, rec mcpmw.CallRecord) {
		if strings.HasPrefix(rec.Summary, "task completed") {
			audited.Add(1)
			panic("auditor")
		}
	})
	h := mcpmw.New(&reg, taskUsers, audit, &mcpmw.Options{Observer: panickyObserver{}, Logger: slog.New(slog.NewTextHandler(log, nil))})
	t.Cleanup(h.Close)
	e := &taskEnv{h: h}
	id := e.create(t, "alice", "export", "")
	e.until(t, id, "completed")
	require.Eventually(t, func() bool {
		return audited.Load() == 1 && strings.Contains(log.String(), "observer panicked on a task's end")
	}, mcpmw.Patience, 5*time.Millisecond, "the end is still recorded and observed, each panic logged: %s", log)
	assert.Contains(t, log.String(), "auditor panicked on a task's end")
	assert.Contains(t, log.String(), "observer panicked as a task started")
}

// brokenStore panics on updates after the first n, and reads nothing.
type brokenStore struct {
	mcpmw.TaskStore
	mode string
}

func (b brokenStore) Update(ctx context.Context, id string, u mcpmw.TaskUpdate) (*mcpmw.Task, bool, error) {
	if b.mode == "panic" {
		panic("the store broke")
	}
	return nil, false, nil
}

func (b brokenStore) Get(ctx context.Context, id string) (*mcpmw.Task, error) {
	if b.mode == "panic" {
		panic("the store broke")
	}
	return nil, nil
}

func TestTaskStoreThatFailsItsContract(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"panic", "nil"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			stop := sync.OnceFunc(func() { close(release) })
			defer stop() // the run waits, renewing its lease against the broken store
			e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: brokenStore{mcpmw.NewMemoryTaskStore(), mode}, Lease: 30 * time.Millisecond, Shutdown: time.Millisecond}},
				gatedTool("export", release, mcpmw.TaskOptional, nil))
			id := e.create(t, "alice", "export", "") // Create works
			r := e.get(t, "alice", id)
			require.NotNil(t, r.Error, r.Raw)
			assert.Equal(t, mcpmw.CodeInternalError, r.Error.Code, "a store that breaks its contract is the server's fault")
			logged := func(s string) func() bool { return func() bool { return strings.Contains(e.log.String(), s) } }
			// the lease is renewed and the reaper runs, against the broken store
			require.Eventually(t, logged("the TaskStore"), mcpmw.Patience, 5*time.Millisecond, "and the log says which")
			if mode == "panic" {
				require.Eventually(t, logged("a task's lease could not be renewed"), mcpmw.Patience, 5*time.Millisecond)
				stop()
				require.Eventually(t, func() bool { return strings.Contains(e.log.String(), "a task's end could not be stored") }, mcpmw.Patience, 5*time.Millisecond)
			}
		})
	}
}

func TestTaskOptionsDefaults(t *testing.T) {
	t.Parallel()
	h := mcpmw.New(nil, taskUsers, mcpmwtest.NewRecorder(), &mcpmw.Options{Tasks: &mcpmw.TaskOptions{}})
	ttl, poll, lease, shutdown, slots := mcpmw.TaskBounds(h)
	assert.Equal(t, []any{time.Hour, time.Second, 10 * time.Second, 10 * time.Second, 64}, []any{ttl, poll, lease, shutdown, slots}, "the documented defaults")
	h = mcpmw.New(nil, taskUsers, mcpmwtest.NewRecorder(), &mcpmw.Options{Tasks: &mcpmw.TaskOptions{TTL: time.Minute, PollInterval: 2 * time.Second, Lease: 3 * time.Second, Shutdown: 4 * time.Second, MaxRunning: 5}})
	ttl, poll, lease, shutdown, slots = mcpmw.TaskBounds(h)
	assert.Equal(t, []any{time.Minute, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5}, []any{ttl, poll, lease, shutdown, slots})
}

// A task an application's store holds with no TTL, no poll interval and a
// status of its own reads as such.
func TestTaskAsAStoreOfYourOwnHoldsIt(t *testing.T) {
	t.Parallel()
	store := mcpmw.NewMemoryTaskStore()
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: store}}, gatedTool("export", nil, mcpmw.TaskOptional, nil))
	now := time.Now()
	require.NoError(t, store.Create(context.Background(), &mcpmw.Task{ID: "own-task", CallerID: "alice", Endpoint: "/mcp", Tool: "export", Permission: "run",
		Status: "paused", Created: now, Updated: now, Owner: "elsewhere", LeaseUntil: now.Add(time.Hour)}))
	r := e.get(t, "alice", "own-task")
	require.Equal(t, 200, r.Status, r.Raw)
	assert.Nil(t, r.Result["ttlMs"], "no TTL: ttlMs null")
	assert.Contains(t, r.Raw, `"ttlMs":null`)
	assert.NotContains(t, r.Result, "pollIntervalMs", "no interval suggested")
	assert.Equal(t, "paused", r.Result["status"])
	assert.Equal(t, "status paused", e.rec.Last().Summary)
}

func TestTaskWhoseToolMisusesAsk(t *testing.T) {
	t.Parallel()
	form := json.RawMessage(`{"type":"object"}`)
	e := newTaskEnv(t, nil,
		mcpmw.Tool{Name: "no-ask", Permission: "run", Task: mcpmw.TaskOptional,
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{}, mcpmw.ErrInputRequired // asked nothing: the tool's mistake
			}},
		mcpmw.Tool{Name: "ask-then-fail", Permission: "run", Task: mcpmw.TaskOptional,
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				_, err := mcpmw.Ask(ctx, "q", mcpmw.ElicitForm("?", form))
				return mcpmw.ToolResult{}, errors.Join(err, &mcpmw.Error{Code: -32050, Message: "gave up"})
			}})
	for tool, code := range map[string]float64{"no-ask": -32603, "ask-then-fail": -32050} {
		id := e.create(t, "alice", tool, "")
		failed := e.until(t, id, "failed")
		assert.Equal(t, code, failed["error"].(map[string]any)["code"], "%s: the task fails, it does not wait for answers", tool)
	}
}

func TestTaskPrepareErrorsAnswerAsCallsWould(t *testing.T) {
	t.Parallel()
	prepared := make(chan struct{}, 1)
	e := newTaskEnv(t, nil,
		mcpmw.Tool{Name: "pin", Permission: "run", Task: mcpmw.TaskOptional, Sensitive: []string{"/pin"},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"pin":{"type":"integer"}}}`),
			Prepare: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) error {
				_ = args.Int("pin")
				return args.Err()
			},
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult("ok"), nil
			}},
		mcpmw.Tool{Name: "waits", Permission: "run", Task: mcpmw.TaskOptional,
			Prepare: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) error {
				prepared <- struct{}{}
				<-ctx.Done()
				return ctx.Err()
			},
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult("ok"), nil
			}})

	r := e.call(t, "alice", "pin", `{"pin":1234.5678}`)
	assert.Equal(t, true, r.Result["isError"], r.Raw)
	assert.NotContains(t, r.Raw, "1234.5678", "a sensitive argument's value is not quoted back")
	assert.Contains(t, r.Raw, "[redacted]")

	ctx, cancel := context.WithCancel(context.Background())
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"waits","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + taskCaps + `}}}`
	req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body)).WithContext(ctx)
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer alice",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "waits"} {
		req.Header.Set(k, v)
	}
	done := make(chan struct{})
	go func() { e.h.ServeHTTP(httptest.NewRecorder(), req); close(done) }()
	<-prepared
	cancel()
	<-done
	last := e.rec.Last()
	assert.Equal(t, "waits", last.Tool)
	assert.Contains(t, last.Summary, "client went away", "a client gone during Prepare is recorded as gone, not as the tool's failure")
}

// failingWrites is a store whose Create (and, once set, Update) fail as
// an unreachable Redis would, while Get works.
type failingWrites struct {
	*mcpmw.MemoryTaskStore
	failUpdates *atomic.Bool
}

var errStoreDown = errors.New("the store is not answering")

func (f failingWrites) Create(context.Context, *mcpmw.Task) error { return errStoreDown }

func (f failingWrites) Update(ctx context.Context, id string, u mcpmw.TaskUpdate) (*mcpmw.Task, bool, error) {
	if f.failUpdates.Load() {
		return nil, false, errStoreDown
	}
	return f.MemoryTaskStore.Update(ctx, id, u)
}

func TestTaskStoreFailingWrites(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	close(release)
	var ran atomic.Int32
	var failUpdates atomic.Bool
	mem := mcpmw.NewMemoryTaskStore()
	e := newTaskEnv(t, &mcpmw.Options{Tasks: &mcpmw.TaskOptions{Store: failingWrites{mem, &failUpdates}}},
		gatedTool("opt", release, mcpmw.TaskOptional, &ran), gatedTool("req", release, mcpmw.TaskRequired, &ran))

	plain := e.call(t, "alice", "opt", "")
	assert.Equal(t, "complete", plain.Result["resultType"], "a TaskOptional call whose task cannot be stored runs as a plain call: %s", plain.Raw)
	assert.Contains(t, e.log.String(), "the task store failed; the call runs without a task")
	refused := e.call(t, "alice", "req", "")
	require.NotNil(t, refused.Error, refused.Raw)
	assert.Equal(t, mcpmw.CodeInternalError, refused.Error.Code, "a TaskRequired call whose task cannot be stored is refused")
	assert.NotContains(t, refused.Raw, errStoreDown.Error(), "the store's error stays in the log")
	assert.EqualValues(t, 1, ran.Load(), "the refused call did not run")

	now := time.Now()
	require.NoError(t, mem.Create(context.Background(), &mcpmw.Task{ID: "stored-task", CallerID: "alice", Endpoint: "/mcp", Tool: "opt", Permission: "run",
		Status: mcpmw.TaskInputRequired, Created: now, Updated: now, TTL: time.Hour, Owner: "elsewhere", LeaseUntil: now.Add(time.Hour),
		InputRequests: map[string]json.RawMessage{"q": json.RawMessage(`{"method":"elicitation/create","params":{}}`)}}))
	failUpdates.Store(true)
	e.rec.Reset()
	for _, method := range []string{"tasks/update", "tasks/cancel"} {
		params := `"taskId":"stored-task"`
		if method == "tasks/update" {
			params += `,"inputResponses":{"q":{"action":"accept"}}`
		}
		r := e.do(t, "alice", method, params, taskCaps)
		require.NotNil(t, r.Error, "%s: %s", method, r.Raw)
		assert.Equal(t, mcpmw.CodeInternalError, r.Error.Code, method)
	}
	recs := e.rec.Records()
	require.Len(t, recs, 2, "one record per request, failures included")
	for _, r := range recs {
		assert.Equal(t, "stored-task", r.Target)
		assert.Equal(t, mcpmw.OutcomeError, r.Outcome)
		assert.Contains(t, r.Summary, "the task store failed")
	}
}
