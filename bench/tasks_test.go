package main

import (
	"bytes"
	"maps"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The task scenarios' answers as ours writes them (ttlMs is the harness's
// TTL), for the validation tables.
const (
	goodTaskCreated = `{"jsonrpc":"2.0","id":7,"result":{"resultType":"task","taskId":"AQQXjXQGTOlXRaMRp1F82Q","status":"working","createdAt":"2026-12-02T04:27:57.467Z","lastUpdatedAt":"2026-12-02T04:27:57.467Z","ttlMs":86400000,"pollIntervalMs":1000,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bench-server","version":"1.0.0"}}}}`
	goodTaskGet     = `{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete","taskId":"21Dh05F31gC-bMjTe0M56Q","status":"completed","statusMessage":"done","createdAt":"2026-12-02T04:27:57.466Z","lastUpdatedAt":"2026-12-02T04:27:57.466Z","ttlMs":86400000,"pollIntervalMs":1000,"result":{"resultType":"complete","content":[{"type":"text","text":"The quick brown fox jumps over the lazy dog, 01234"}],"_meta":{}},"_meta":{}}}`
)

func TestValidateRefusesWrongTaskAnswers(t *testing.T) {
	create := scenarioNamed(t, "taskcreate")
	get := *scenarioNamed(t, "taskget")
	get.taskID = "21Dh05F31gC-bMjTe0M56Q"
	for _, tt := range []struct {
		name string
		sc   *scenario
		good string
		bad  []struct{ name, from, to string }
	}{
		{"taskcreate", create, goodTaskCreated, []struct{ name, from, to string }{
			{"plain answer", `"resultType":"task","taskId":"AQQXjXQGTOlXRaMRp1F82Q","status":"working",`, `"content":[{"type":"text","text":"The quick brown fox jumps over the lazy dog, 01234"}],`},
			{"complete", `"resultType":"task"`, `"resultType":"complete"`},
			{"short id", `"AQQXjXQGTOlXRaMRp1F82Q"`, `"AQQXjXQGTOlXRaMRp1F82"`},
			{"id not base64url", `"AQQXjXQGTOlXRaMRp1F82Q"`, `"AQQXjXQGTOlXRaMRp1F8+Q"`},
			{"completed", `"working"`, `"completed"`},
			{"other TTL", `"ttlMs":86400000`, `"ttlMs":3600000`},
			{"no TTL", `"ttlMs":86400000`, `"ttlMs":null`},
			{"no poll interval", `,"pollIntervalMs":1000`, ``},
			{"local time", `"createdAt":"2026-12-02T04:27:57.467Z"`, `"createdAt":"2026-12-02T05:27:57.467+01:00"`},
			{"a result", `"ttlMs"`, `"result":{},"ttlMs"`},
			{"content", `"ttlMs"`, `"content":[{"type":"text","text":"x"}],"ttlMs"`},
		}},
		{"taskget", &get, goodTaskGet, []struct{ name, from, to string }{
			{"another task", `"21Dh05F31gC-bMjTe0M56Q"`, `"AQQXjXQGTOlXRaMRp1F82Q"`},
			{"working", `"status":"completed"`, `"status":"working"`},
			{"failed", `"status":"completed"`, `"status":"failed"`},
			{"task resultType", `{"resultType":"complete","taskId"`, `{"resultType":"task","taskId"`},
			{"other text", "lazy dog", "lazy cat"},
			{"tool error", `"content":[`, `"isError":true,"content":[`},
			{"tool input_required", `"result":{"resultType":"complete"`, `"result":{"resultType":"input_required"`},
			{"result not an object", `"result":{"resultType":"complete","content":[{"type":"text","text":"The quick brown fox jumps over the lazy dog, 01234"}],"_meta":{}}`, `"result":[]`},
			{"no result", `,"result":{"resultType":"complete","content":[{"type":"text","text":"The quick brown fox jumps over the lazy dog, 01234"}],"_meta":{}}`, ``},
			{"an error too", `"ttlMs"`, `"error":{"code":-32603,"message":"x"},"ttlMs"`},
		}},
	} {
		if err := tt.sc.validate(200, "application/json", []byte(tt.good)); err != nil {
			t.Fatalf("%s: good answer refused: %v", tt.name, err)
		}
		for _, b := range tt.bad {
			bad := strings.Replace(tt.good, b.from, b.to, 1)
			if bad == tt.good {
				t.Fatalf("%s %s: the replacement changed nothing", tt.name, b.name)
			}
			if err := tt.sc.validate(200, "application/json", []byte(bad)); err == nil {
				t.Errorf("%s %s: wrong answer accepted", tt.name, b.name)
			}
		}
	}
}

// A task created is other bytes every time (its id, its times): its
// fingerprint skips those and nothing else, so that a plain answer, or
// any other change, still fails it.
func TestTaskCreatedFingerprintSkipsOnlyIDAndTimes(t *testing.T) {
	sc := scenarioNamed(t, "taskcreate")
	h, err := newContestant("ours", sc.setup())
	if err != nil {
		t.Fatal(err)
	}
	defer closeHandler(h)
	send := inProcess(h)
	answer := func() []byte {
		status, ct, body, _ := send(sc)
		if err := sc.validate(status, ct, body); err != nil {
			t.Fatal(err)
		}
		return body
	}
	first := answer()
	time.Sleep(2 * time.Millisecond) // another createdAt
	second := answer()
	if bytes.Equal(first, second) {
		t.Fatal("two tasks created are the same bytes")
	}
	if newFingerprint(first).match(200, second) {
		t.Fatal("the test proves nothing: a fingerprint of every byte accepts another task")
	}
	fp := sc.fingerprint(first)
	if !fp.match(200, second) {
		t.Fatalf("the fingerprint refuses another task created:\n%s\n%s", first, second)
	}
	plain := scenarioNamed(t, "call50")
	_, _, plainBody, _ := send(plain) // echo run as a plain call
	for name, bad := range map[string]string{
		"plain answer":     string(plainBody),
		"other resultType": strings.Replace(string(second), `"resultType":"task"`, `"resultType":"tusk"`, 1),
		"other status":     strings.Replace(string(second), `"status":"working"`, `"status":"wonking"`, 1),
		"other TTL":        strings.Replace(string(second), `"ttlMs":86400000`, `"ttlMs":86400001`, 1),
		"other id key":     strings.Replace(string(second), `"taskId":`, `"taskID":`, 1),
	} {
		if bad == string(second) {
			t.Fatalf("%s: the replacement changed nothing", name)
		}
		if fp.match(200, []byte(bad)) {
			t.Errorf("%s: the fingerprint accepts %s", name, bad)
		}
	}
}

// switching answers its first request with first, and every later one
// with rest.
type switching struct {
	first, rest http.Handler
	calls       atomic.Int64
}

func (s *switching) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.calls.Add(1) == 1 {
		s.first.ServeHTTP(w, r)
		return
	}
	s.rest.ServeHTTP(w, r)
}

// Every taskcreate answer must be a task: a call that quietly ran as a
// plain one (no slot free, say) is an error, never speed.
func TestTaskCreateCellCountsPlainAnswers(t *testing.T) {
	sc := scenarioNamed(t, "taskcreate")
	tasks, err := newContestant("ours", sc.setup())
	if err != nil {
		t.Fatal(err)
	}
	defer closeHandler(tasks)
	plain := newOurs(setup{tools: sc.tools}, false) // echo never becomes a task
	if res := benchCell(tasks, sc); res.errors != 0 || res.iterations == 0 {
		t.Fatalf("ours: %+v", res)
	}
	if res := benchCell(plain, sc); res.errors == 0 {
		t.Fatalf("plain answers to taskcreate got no errors: %+v", res)
	}
	if res := benchCell(&switching{first: tasks, rest: plain}, sc); res.errors == 0 {
		t.Fatalf("plain answers after a task got no errors: %+v", res)
	}
}

// bind creates taskget's task, waits until it reads completed, and leaves
// the scenario itself as it was; other scenarios stay as they are.
func TestBindCreatesACompletedTask(t *testing.T) {
	sc := scenarioNamed(t, "taskget")
	h, err := newContestant("ours", sc.setup())
	if err != nil {
		t.Fatal(err)
	}
	defer closeHandler(h)
	b, err := bind(sc, inProcess(h))
	if err != nil {
		t.Fatal(err)
	}
	if sc.taskID != "" || !validTaskID(b.taskID) {
		t.Fatalf("bound task %q, scenario's own %q", b.taskID, sc.taskID)
	}
	if got := b.header().Get("Mcp-Name"); got != b.taskID {
		t.Fatalf("Mcp-Name %q, want the task's id %q", got, b.taskID)
	}
	status, ct, body, _ := inProcess(h)(b)
	if err := b.validate(status, ct, body); err != nil {
		t.Fatal(err)
	}
	call := scenarioNamed(t, "call50")
	if got, err := bind(call, inProcess(h)); err != nil || got != call {
		t.Fatalf("bind(call50) = %p, %v; want the scenario itself", got, err)
	}
	if _, err := bind(sc, inProcess(newOurs(setup{tools: sc.tools}, false))); err == nil || !strings.Contains(err.Error(), "did not become a task") {
		t.Fatalf("bind against a handler without tasks: %v", err)
	}
}

// The pool keeps one handler per contestant and setup, but gives taskcreate
// a new one every time, whose store starts empty.
func TestHandlerPoolGivesTaskCreateItsOwnHandler(t *testing.T) {
	p := newHandlerPool()
	defer p.close()
	open := func(name string) http.Handler {
		h, _, err := p.open("ours", scenarioNamed(t, name))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if open("taskget") != open("taskget") {
		t.Error("taskget got a new handler the second time")
	}
	a, b := open("taskcreate"), open("taskcreate")
	defer closeHandler(a)
	defer closeHandler(b)
	if a == b {
		t.Error("taskcreate got the same handler twice")
	}
}

func TestPickLoopScenariosRefusesTaskCreate(t *testing.T) {
	all := allScenarios(10)
	if _, err := pickLoopScenarios(all, "call50,taskcreate"); err == nil || !strings.Contains(err.Error(), "in-process only") {
		t.Fatalf("taskcreate on loopback: %v", err)
	}
	if got, err := pickLoopScenarios(all, "call50,taskget"); err != nil || len(got) != 2 {
		t.Fatalf("call50,taskget on loopback: %v, %v", got, err)
	}
}

// TestOursRedisTasks: ours+redistasks answers both task scenarios, costs
// one Redis command per request on the request's path (tasks/get: HGETALL;
// a task's creation: its script; the call sends none), plus, for a task
// created, one script after the answer (its end), measured in-process and
// on loopback; closed, it leaves no goroutine behind. It needs
// redis-server; without one it skips, unless MCPMW_REQUIRE_REDIS is set.
func TestOursRedisTasks(t *testing.T) {
	srv := startTestRedis(t)
	before := runtime.NumGoroutine()
	for _, tt := range []struct {
		name        string
		path, after string // the commands per request, by name
	}{
		{"taskget", "1.00 (evalsha 1.00)", "0"},
		// A create's script and the end of the task before it often go to
		// Redis in one pipeline (mcpredis batches what one instance sends at
		// once), which a hook sees under one context: only their sum per
		// request is certain, one on the path and one after.
		{"taskcreate", "", ""},
	} {
		sc := scenarioNamed(t, tt.name)
		h, err := newContestant("ours+redistasks", sc.setup())
		if err != nil {
			t.Fatal(err)
		}
		b, err := bind(sc, inProcess(h))
		if err != nil {
			t.Fatal(err)
		}
		if res := benchCell(h, b); res.errors != 0 || res.iterations == 0 {
			t.Fatalf("%s: %+v", tt.name, res)
		}
		closeHandler(h)
		rt, err := redisTaskRoundTrips(srv, sc, 50)
		if err != nil {
			t.Fatal(err)
		}
		delete(rt.after, "zrangebyscore") // the reaper's sweep, should one fall in the window
		if tt.path == "" {
			both := maps.Clone(rt.path)
			for k, v := range rt.after {
				both[k] += v
			}
			if got := rt.perRequest(both); got != "2.00 (evalsha 2.00)" {
				t.Errorf("%s: %s on the path and after it; want 2.00 (evalsha 2.00)", tt.name, got)
			}
			continue
		}
		if path, after := rt.perRequest(rt.path), rt.perRequest(rt.after); path != tt.path || after != tt.after {
			t.Errorf("%s: %s on the path, %s after; want %s and %s", tt.name, path, after, tt.path, tt.after)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after closing, %d before", n, before)
	}

	_, text := runReport(t, tinyConfig(nil, []*scenario{scenarioNamed(t, "taskget")}, "floor", "ours+redistasks"))
	for _, want := range []string{"| 2 | ours+redistasks |", "ours+redistasks, taskget: 1.00 (evalsha 1.00) Redis commands per request on its path"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}
