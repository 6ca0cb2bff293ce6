package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/examples/internal/redisenv"
	"github.com/mcpmw/mcpmw/internal/redistest"
)

// guestToken is the token of a caller of the team "demo" that holds no
// capability at all, not even read.
const guestToken = "guest-token"

// tasksCaps declares the tasks extension, as a 2026-07-28 client does in
// the clientCapabilities of each request.
const tasksCaps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// exportCall is a 2026-07-28 call of notes_export from a client that
// declares caps.
func exportCall(caps, token, id string) request {
	return elicitingCallWith(caps, token, id, "notes_export", `{}`, "")
}

// taskRequest is a 2026-07-28 tasks/get, tasks/update or tasks/cancel of
// task taskID (in params and in Mcp-Name) from a client that declares the
// tasks extension; more holds further members of params, or "".
func taskRequest(token, id, method, taskID, more string) request {
	meta := strings.Replace(meta26, `"io.modelcontextprotocol/clientCapabilities":{}`, `"io.modelcontextprotocol/clientCapabilities":`+tasksCaps, 1)
	params := `"taskId":` + strconv.Quote(taskID)
	if more != "" {
		params += "," + more
	}
	h := baseHeader(token)
	h.Set("MCP-Protocol-Version", v26)
	h.Set("Mcp-Method", method)
	h.Set("Mcp-Name", taskID)
	return request{header: h, body: jsonrpc(id, method, params+","+meta), id: id}
}

// exportServer is the app served over loopback HTTP with notes_export
// taking delay: a task outlives the request that created it, so it is
// driven through a real server, over HTTP/1.1 or HTTP/2 with TLS.
type exportServer struct {
	url    string
	client *http.Client
	proto  int // the HTTP major version every answer must come in
	audit  *lockedBuffer
	sent   []string // the JSON-RPC ids of the requests sent, in order
}

// serveExport starts the app on 127.0.0.1 with EXPORT_DELAY delay.
func serveExport(t *testing.T, delay time.Duration, http2 bool) *exportServer {
	t.Helper()
	c := testConfig()
	c.exportDelay = delay
	return serveConfig(t, c, http2)
}

// serveConfig starts the app on 127.0.0.1 configured by c; the server, the
// handler (waiting for its tasks) and its backends are closed when the
// test ends.
func serveConfig(t *testing.T, c config, http2 bool) *exportServer {
	t.Helper()
	s := &exportServer{audit: &lockedBuffer{}, proto: 1}
	h, mcp, done := newApp(c, s.audit, &lockedBuffer{})
	srv := httptest.NewUnstartedServer(h)
	if http2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
		s.proto = 2
	} else {
		srv.Start()
	}
	t.Cleanup(func() {
		srv.Close()
		mcp.Close()
		done()
	})
	s.url, s.client = srv.URL+"/mcp", srv.Client()
	return s
}

// eachTransport runs f over HTTP/1.1 and over HTTP/2 with TLS, each with
// a server of its own.
func eachTransport(t *testing.T, delay time.Duration, f func(t *testing.T, s *exportServer)) {
	for _, h2 := range []bool{false, true} {
		name := "HTTP/1.1"
		if h2 {
			name = "HTTP/2"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, serveExport(t, delay, h2))
		})
	}
}

// id returns a JSON-RPC id no request to s had before, and notes it sent.
func (s *exportServer) id() string {
	id := strconv.Quote(fmt.Sprintf("r%d", len(s.sent)+1))
	s.sent = append(s.sent, id)
	return id
}

// send sends r and checks its answer against w (not its audit record).
func (s *exportServer) send(t *testing.T, r request, w expect) reply {
	t.Helper()
	resp, err := s.client.Do(r.clientRequest(t, s.url))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, s.proto, resp.ProtoMajor, "HTTP version")
	return checkAnswer(t, r, w, resp.StatusCode, resp.Header, body)
}

// exchange is send, also checking the one audit record r added; only
// while no task runs, whose end adds a record of its own at any time.
func (s *exportServer) exchange(t *testing.T, r request, w expect) reply {
	t.Helper()
	before := len(auditRecords(t, s.audit.String()))
	rep := s.send(t, r, w)
	checkAudit(t, w, auditRecords(t, s.audit.String())[before:])
	return rep
}

// createNote stores a note of token's team through note_create.
func (s *exportServer) createNote(t *testing.T, token, text string) int {
	t.Helper()
	rep := s.exchange(t, modernCall(token, s.id(), "note_create", `{"text":`+strconv.Quote(text)+`}`),
		expect{status: 200, audit: audited("ok", callerOf(token), "tools/call", "note_create")})
	var created struct{ ID int }
	require.NoError(t, json.Unmarshal(decodeTool(t, rep).StructuredContent, &created))
	return created.ID
}

// callerOf names the session of a token, as the audit records do.
func callerOf(token string) string { return strings.TrimSuffix(token, "-token") }

// createdTask checks a CreateTaskResult and returns its task's id.
func createdTask(t *testing.T, rep reply) string {
	t.Helper()
	assert.Equal(t, "task", str(t, rep.result, "resultType"))
	assert.Contains(t, string(rep.result["_meta"]), `"io.modelcontextprotocol/serverInfo"`)
	assert.Equal(t, "working", str(t, rep.result, "status"))
	isTask(t, rep.result)
	for _, k := range []string{"content", "structuredContent", "isError", "result"} {
		assert.NotContains(t, rep.result, k, "a CreateTaskResult is no tool result")
	}
	return str(t, rep.result, "taskId")
}

// isTask checks the members every answer naming a task carries.
func isTask(t *testing.T, res map[string]json.RawMessage) {
	t.Helper()
	assert.NotEmpty(t, str(t, res, "taskId"))
	for _, k := range []string{"createdAt", "lastUpdatedAt"} {
		_, err := time.Parse(time.RFC3339, str(t, res, k))
		assert.NoError(t, err, "%s is an ISO 8601 time", k)
	}
	var ttl, poll int64
	require.NoError(t, json.Unmarshal(res["ttlMs"], &ttl), "ttlMs: %s", res["ttlMs"])
	assert.Positive(t, ttl)
	require.NoError(t, json.Unmarshal(res["pollIntervalMs"], &poll), "pollIntervalMs: %s", res["pollIntervalMs"])
	assert.Positive(t, poll)
	assert.LessOrEqual(t, poll, int64(1000), "the app's contract: pollIntervalMs at most 1000")
	assert.Equal(t, taskPollInterval.Milliseconds(), poll)
}

// getTask sends tasks/get of taskID as token and returns its status.
func (s *exportServer) getTask(t *testing.T, token, taskID string) (string, reply) {
	t.Helper()
	rep := s.send(t, taskRequest(token, s.id(), "tasks/get", taskID, ""), expect{status: 200})
	isModern(t, rep.result)
	isTask(t, rep.result)
	assert.Equal(t, taskID, str(t, rep.result, "taskId"))
	return str(t, rep.result, "status"), rep
}

// pollTask polls tasks/get of taskID as token, every 10 ms for at most
// within, until the task is no longer working, and returns its answer
// then, and how long that took.
func (s *exportServer) pollTask(t *testing.T, token, taskID string, within time.Duration) (string, reply, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		status, rep := s.getTask(t, token, taskID)
		if status != "working" || time.Since(start) > within {
			return status, rep, time.Since(start)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// taskEnd waits, for at most patience, for the record of the end of task
// taskID (written once the end is stored, so possibly after a tasks/get
// has seen it) and returns it.
func (s *exportServer) taskEnd(t *testing.T, taskID string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(patience); ; {
		for _, rec := range auditRecords(t, s.audit.String()) {
			if rec["target"] == taskID && rec["method"] == "tools/call" && rec["summary"] != "task created" {
				return rec
			}
		}
		require.True(t, time.Now().Before(deadline), "no record of the task's end within %v:\n%s", patience, s.audit.String())
		time.Sleep(10 * time.Millisecond)
	}
}

// checkRecords checks the whole audit output: exactly one record per
// request sent, and one more, the end of the task created by the request
// createdBy, which carries that request's id.
func (s *exportServer) checkRecords(t *testing.T, createdBy string) {
	t.Helper()
	recs := auditRecords(t, s.audit.String())
	require.Len(t, recs, len(s.sent)+1, "one record per request, and the task's end:\n%s", s.audit.String())
	count := map[string]int{}
	for _, rec := range recs {
		id, _ := rec["request_id"].(string)
		count[id]++
	}
	for _, id := range s.sent {
		want := 1
		if id == createdBy {
			want = 2
		}
		assert.Equal(t, want, count[id], "records of request %s", id)
	}
}

// TestNotesExportTask: a 2026-07-28 client that declares the tasks
// extension gets a task at once (tasks/get then reads it working: the
// export has not ended), then completed once the delay has passed, with
// the export of the caller's team only.
func TestNotesExportTask(t *testing.T) {
	t.Parallel()
	const delay = 2 * time.Second // room for the answer and a tasks/get before it, on a busy machine
	eachTransport(t, delay, func(t *testing.T, s *exportServer) {
		first := s.createNote(t, writerToken, "first")
		second := s.createNote(t, writerToken, "second")
		s.createNote(t, otherToken, "another team's")

		start := time.Now()
		createdBy := s.id()
		before := len(auditRecords(t, s.audit.String()))
		taskID := createdTask(t, s.send(t, exportCall(tasksCaps, readerToken, createdBy), expect{status: 200}))
		// The export runs on for delay: no record but the call's yet.
		checkAudit(t, expect{status: 200, audit: &auditWant{outcome: "ok", caller: "reader", method: "tools/call", tool: "notes_export", target: taskID}},
			auditRecords(t, s.audit.String())[before:])

		status, rep := s.getTask(t, readerToken, taskID)
		assert.Equal(t, "working", status, "answered at once, not after the export")
		assert.Equal(t, "complete", str(t, rep.result, "resultType"))
		assert.NotContains(t, rep.result, "result", "no result while working")

		status, rep, _ = s.pollTask(t, readerToken, taskID, delay+patience)
		require.Equal(t, "completed", status, "result: %s", rep.members["result"])
		assert.GreaterOrEqual(t, time.Since(start), delay, "the export took EXPORT_DELAY")
		var res toolResult
		require.NoError(t, json.Unmarshal(rep.result["result"], &res), "result: %s", rep.result["result"])
		assert.False(t, res.IsError)
		assert.JSONEq(t, fmt.Sprintf(`{"notes":[{"id":%d,"text":"first"},{"id":%d,"text":"second"}]}`, first, second), string(res.StructuredContent))
		assert.Equal(t, fmt.Sprintf("2 notes\n#%d by writer: first\n#%d by writer: second", first, second), res.text())

		end := s.taskEnd(t, taskID)
		assert.Equal(t, "ok", end["outcome"])
		assert.Equal(t, "notes_export", end["tool"])
		assert.Equal(t, "reader", end["caller"])
		assert.True(t, strings.HasPrefix(end["summary"].(string), "task completed"), "summary %q", end["summary"])
		s.checkRecords(t, createdBy)
	})
}

// TestNotesExportSync: without the extension, or on a legacy revision
// (which has no tasks, even with the extension in _meta), notes_export
// answers when it is done, after EXPORT_DELAY, with no task.
func TestNotesExportSync(t *testing.T) {
	t.Parallel()
	const delay = 200 * time.Millisecond
	legacyWithExtension := legacyCall(readerToken, v1125, `"l"`, "notes_export",
		`{},"_meta":{"io.modelcontextprotocol/clientCapabilities":`+tasksCaps+`}`)
	for _, tc := range []struct {
		name   string
		req    request
		modern bool
	}{
		{"2026-07-28, no extension", modernCall(readerToken, `"a"`, "notes_export", `{}`), true},
		{"2026-07-28, other extensions", exportCall(`{"elicitation":{},"extensions":{"io.example/other":{}}}`, readerToken, `"b"`), true},
		{"2026-07-28, arguments omitted", modern(readerToken, `"c"`, "tools/call", `"name":"notes_export"`).set("Mcp-Name", "notes_export"), true},
		{"2025-11-25", legacyCall(readerToken, v1125, `"d"`, "notes_export", `{}`), false},
		{"2025-11-25 with the extension in _meta", legacyWithExtension, false},
		{"2025-06-18", legacyCall(readerToken, v0618, `"e"`, "notes_export", `{}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := serveExport(t, delay, false)
			id := s.createNote(t, writerToken, "keep")
			s.createNote(t, otherToken, "not ours")
			start := time.Now()
			rep := s.exchange(t, tc.req, expect{status: 200, audit: audited("ok", "reader", "tools/call", "notes_export"),
				check: toolOK(tc.modern, fmt.Sprintf("1 notes\n#%d by writer: keep", id), fmt.Sprintf(`{"notes":[{"id":%d,"text":"keep"}]}`, id))})
			assert.GreaterOrEqual(t, time.Since(start), delay, "answered after EXPORT_DELAY")
			assert.NotContains(t, rep.result, "taskId")
		})
	}
}

// TestNotesExportCancel: tasks/cancel during the delay stops the export
// (it waits on its context), and tasks/get reads cancelled at once: the
// first one after the acknowledgement; the end is recorded once, as the
// caller's cancellation.
func TestNotesExportCancel(t *testing.T) {
	t.Parallel()
	const delay = 4 * patience // far longer than the test: only a cancellation ends it in time
	eachTransport(t, delay, func(t *testing.T, s *exportServer) {
		createdBy := s.id()
		taskID := createdTask(t, s.send(t, exportCall(tasksCaps, readerToken, createdBy), expect{status: 200}))
		rep := s.send(t, taskRequest(readerToken, s.id(), "tasks/cancel", taskID, ""), expect{status: 200})
		assert.Equal(t, "complete", str(t, rep.result, "resultType"), "an acknowledgement")
		status, rep := s.getTask(t, readerToken, taskID)
		require.Equal(t, "cancelled", status, "the first tasks/get after the acknowledgement: %s", rep.members["result"])
		assert.NotContains(t, rep.result, "result", "a cancelled task has no result")

		// Cancelling again changes nothing, and is acknowledged the same.
		rep = s.send(t, taskRequest(readerToken, s.id(), "tasks/cancel", taskID, ""), expect{status: 200})
		assert.Equal(t, "complete", str(t, rep.result, "resultType"))
		status, _ = s.getTask(t, readerToken, taskID)
		assert.Equal(t, "cancelled", status)

		end := s.taskEnd(t, taskID)
		assert.Equal(t, "error", end["outcome"])
		assert.Equal(t, "notes_export", end["tool"])
		assert.Equal(t, "task cancelled by the client", end["summary"])
		ms, err := end["duration_ms"].(json.Number).Float64()
		require.NoError(t, err)
		assert.Less(t, ms, float64(delay.Milliseconds()), "the export stopped when cancelled, before its end")
		s.checkRecords(t, createdBy)
	})
}

// TestNotesExportOtherCallers: a task is its creating caller's alone.
// Another team's token, and another caller of the same team (with or
// without the permission), get for its id exactly what an unknown id gets,
// -32602, from tasks/get, tasks/update and tasks/cancel; and nothing they
// send changes it: it completes for its caller.
func TestNotesExportOtherCallers(t *testing.T) {
	t.Parallel()
	const delay = 800 * time.Millisecond
	eachTransport(t, delay, func(t *testing.T, s *exportServer) {
		createdBy := s.id()
		taskID := createdTask(t, s.send(t, exportCall(tasksCaps, readerToken, createdBy), expect{status: 200}))

		unknown := s.send(t, taskRequest(readerToken, s.id(), "tasks/get", "AAAAAAAAAAAAAAAAAAAAAA", ""), expect{status: 200, code: -32602})
		for _, token := range []string{otherToken, writerToken, guestToken} {
			for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
				more := ""
				if method == "tasks/update" {
					more = `"inputResponses":{}`
				}
				rep := s.send(t, taskRequest(token, s.id(), method, taskID, more), expect{status: 200, code: -32602})
				assert.Equal(t, unknown.err.Message, rep.err.Message, "%s of another caller's task, by %s, says what an unknown id does", method, token)
				assert.NotContains(t, rep.err.Message, taskID)
			}
		}

		status, rep, _ := s.pollTask(t, readerToken, taskID, delay+patience)
		require.Equal(t, "completed", status, "the others' tasks/cancel did nothing: %s", rep.members["result"])
		end := s.taskEnd(t, taskID)
		assert.Equal(t, "ok", end["outcome"])
		s.checkRecords(t, createdBy)
		for _, rec := range auditRecords(t, s.audit.String()) {
			if rec["caller"] != "reader" {
				assert.Equal(t, "error", rec["outcome"], "%v", rec)
				assert.Equal(t, json.Number("-32602"), rec["error_code"], "%v", rec)
				assert.Equal(t, taskID, rec["target"], "the record names the task the caller tried")
			}
		}
	})
}

// TestNotesExportGate: a caller without read is refused notes_export
// (403) before anything runs, with or without the extension: no task is
// created, and its tools/list shows nothing.
func TestNotesExportGate(t *testing.T) {
	t.Parallel()
	s := serveExport(t, 4*patience, false) // a call that got through would take that long
	insufficient := map[string]string{"WWW-Authenticate": `Bearer error="insufficient_scope", scope="read"`}
	for _, r := range []request{
		exportCall(tasksCaps, guestToken, s.id()),
		modernCall(guestToken, s.id(), "notes_export", `{}`),
		legacyCall(guestToken, v1125, s.id(), "notes_export", `{}`),
	} {
		start := time.Now()
		rep := s.exchange(t, r, expect{status: 403, code: -32602, header: insufficient, audit: audited("denied", "guest", "tools/call", "notes_export")})
		assert.Less(t, time.Since(start), patience, "refused before anything runs")
		assert.NotContains(t, string(rep.members["error"]), "taskId")
	}
	s.exchange(t, modern(guestToken, s.id(), "tools/list", ""), expect{status: 200, audit: audited("ok", "guest", "tools/list", ""),
		check: func(t *testing.T, rep reply) { assert.JSONEq(t, `[]`, string(rep.result["tools"])) }})
}

// TestNotesExportRedis: with REDIS_URL the export reads the team's notes
// from Redis, as a task or not; while Redis is out it answers isError at
// once, naming the outage, rather than after the delay (on an instance
// whose delay is far longer than the outage's answer may take, however
// busy the machine).
func TestNotesExportRedis(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t) // skips without redis-server
	const delay = 800 * time.Millisecond
	c := testConfig()
	c.exportDelay = delay
	var err error
	c.redis, err = redisenv.FromEnv(func(k string) string {
		return map[string]string{"REDIS_URL": "redis://" + srv.Addr + "/0", "REDIS_TIMEOUT": busyRedisTimeout}[k]
	})
	require.NoError(t, err)
	s := serveConfig(t, c, false)
	c.exportDelay = 4 * patience // well past the answer of an outage, which takes notesTimeout
	slow := serveConfig(t, c, false)
	id := s.createNote(t, writerToken, "in redis")
	s.createNote(t, otherToken, "not ours")

	createdBy := s.id()
	taskID := createdTask(t, s.send(t, exportCall(tasksCaps, readerToken, createdBy), expect{status: 200}))
	status, rep, _ := s.pollTask(t, readerToken, taskID, delay+patience)
	require.Equal(t, "completed", status)
	var res toolResult
	require.NoError(t, json.Unmarshal(rep.result["result"], &res))
	assert.JSONEq(t, fmt.Sprintf(`{"notes":[{"id":%d,"text":"in redis"}]}`, id), string(res.StructuredContent))
	s.taskEnd(t, taskID)

	srv.Stop()
	start := time.Now()
	slow.exchange(t, modernCall(readerToken, slow.id(), "notes_export", `{}`), expect{status: 200, audit: audited("error", "reader", "tools/call", "notes_export"),
		check: toolFailed(true, "the notes store (Redis) is not answering")})
	assert.Less(t, time.Since(start), notesTimeout+slack, "the outage is answered within the store's deadline, not after the export's delay")
	s.checkRecords(t, createdBy)
}

// TestNotesExportBinary runs the example binary: an EXPORT_DELAY that is
// no number of seconds, or a RATE_LIMIT_LEASE that is no count of
// requests within RATE_LIMIT, stops it at start, naming the variable; and
// stopped (SIGINT) while a task runs, it lets the task finish, so that the
// task's end reaches the audit file before the app exits.
func TestNotesExportBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the example binary")
	}
	t.Parallel()
	bin := buildApp(t, t.TempDir())

	t.Run("a bad EXPORT_DELAY", func(t *testing.T) {
		t.Parallel()
		app := startApp(t, bin, "ADDR="+freeAddr(t), "EXPORT_DELAY=-2")
		assert.Contains(t, app.refused(t), `chi-app: EXPORT_DELAY="-2": want how long notes_export takes, in seconds from 0 to 600`)
	})

	t.Run("a bad RATE_LIMIT_LEASE", func(t *testing.T) {
		t.Parallel()
		app := startApp(t, bin, "ADDR="+freeAddr(t), "RATE_LIMIT=60", "RATE_LIMIT_LEASE=ten")
		assert.Contains(t, app.refused(t), `chi-app: RATE_LIMIT_LEASE="ten": want how many requests of a client's budget an instance takes per Redis call, from 0 (no lease) to RATE_LIMIT (60)`)
	})

	t.Run("shutdown lets the task finish", func(t *testing.T) {
		t.Parallel()
		addr, auditPath := freeAddr(t), filepath.Join(t.TempDir(), "audit.jsonl")
		app := startApp(t, bin, "ADDR="+addr, "AUDIT_LOG="+auditPath, "EXPORT_DELAY=1")
		app.waitReady(t, "http://"+addr)
		s := &exportServer{url: "http://" + addr + "/mcp", client: &http.Client{Timeout: patience}, proto: 1}
		taskID := createdTask(t, s.send(t, exportCall(tasksCaps, readerToken, s.id()), expect{status: 200}))
		app.interrupt(t)

		data, err := os.ReadFile(auditPath)
		require.NoError(t, err)
		recs := auditRecords(t, string(data))
		require.Len(t, recs, 2, "the call and the task's end:\n%s", data)
		end := recs[1]
		assert.Equal(t, taskID, end["target"])
		assert.Equal(t, "notes_export", end["tool"])
		assert.Equal(t, "ok", end["outcome"], "the task ran to its end: %v", end)
		assert.True(t, strings.HasPrefix(end["summary"].(string), "task completed"), "summary %q", end["summary"])
	})
}
