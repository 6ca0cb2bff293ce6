package mcpmw

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Each stream's lifetime is its maximum less up to a tenth, spread at
// random, so that streams opened together do not end together.
func TestListenLifetimesAreSpread(t *testing.T) {
	t.Parallel()
	const d = time.Hour
	seen := map[time.Duration]bool{}
	for range 100 {
		got := lifetimeOf(d)
		assert.GreaterOrEqual(t, got, d-d/10)
		assert.LessOrEqual(t, got, d)
		seen[got] = true
	}
	assert.Greater(t, len(seen), 90, "spread, not one value")
	assert.Equal(t, time.Duration(1), lifetimeOf(1), "a tiny maximum stays positive")
}

// A listen stream lasts an hour at most unless Options say otherwise.
func TestListenMaxLifetimeDefault(t *testing.T) {
	t.Parallel()
	assert.Equal(t, time.Hour, withDefaults(nil).ListenMaxLifetime)
	assert.Equal(t, time.Minute, withDefaults(&Options{ListenMaxLifetime: time.Minute}).ListenMaxLifetime)
	assert.Equal(t, time.Duration(-1), withDefaults(&Options{ListenMaxLifetime: -1}).ListenMaxLifetime, "negative: no limit")
}

// The Registry sends list_changed events with a permission only; anything
// else reaching the hub's registry watcher is dropped, not noted for the
// listeners to ask their callers about.
func TestRegistryChangedDropsWhatTheRegistryNeverSends(t *testing.T) {
	t.Parallel()
	hb := newHub(slog.New(slog.DiscardHandler))
	for _, ev := range []Event{
		{Method: ToolsListChanged},
		{Method: ResourceUpdated, URI: "file:///a", Permission: "read"},
		{Method: ResourceUpdated, URI: "file:///a"},
		{Method: "notifications/progress", Permission: "read"},
	} {
		hb.registryChanged(ev)
	}
	assert.Zero(t, hb.regCount)
	assert.Empty(t, hb.regChanged)
	hb.registryChanged(Event{Method: PromptsListChanged, Permission: "read"})
	assert.Equal(t, map[regChange]uint64{{kindPromptsChanged, "read"}: 1}, hb.regChanged)
}

// The event deadline is the 30 s docs/tools.md and SECURITY.md promise, for a
// stream of a Handler that New made (TestEventWriteTimeoutIsEachHandlersOwn
// follows it through a request).
func TestEventWriteTimeoutIsThirtySeconds(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 30*time.Second, defaultEventWriteTimeout)
	assert.Equal(t, 30*time.Second, (&stream{}).writeTimeout())
}

// The result that ends a listen stream is built in one piece: the
// Response and its bytes, sized once whatever the request id.
func TestListenResultIsSizedOnce(t *testing.T) {
	ad := newAdvertisement(Implementation{Name: "a-server-with-a-long-name", Version: "1.2.3"}, "", &[revisionCount][]declaredCapability{}, 0)
	l := &listenMethods{ad: ad}
	id := []byte(`"a-request-id-of-some-length"`)
	var resp *Response
	allocs := testing.AllocsPerRun(20, func() { resp = l.result(id) })
	assert.EqualValues(t, 2, allocs)
	assert.JSONEq(t, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"a-request-id-of-some-length",`+
		`"io.modelcontextprotocol/serverInfo":{"name":"a-server-with-a-long-name","version":"1.2.3"}}}`, string(resp.Result))
}

// A stream that Close ends writes what was queued within its event write
// timeout in all: a client that has stopped reading loses it, and the stream ends
// with its result, abandoned, instead of holding a shutdown open.
func TestListenClosingIsBounded(t *testing.T) {
	t.Parallel()
	ad := newAdvertisement(Implementation{Name: "s", Version: "1"}, "", &[revisionCount][]declaredCapability{}, 0)
	l := &listenMethods{ad: ad}
	lis := newListener(everything{}, kindToolsChanged|kindPromptsChanged, nil)
	w := newDeadlineWriter()
	w.block = true // a client that does not read: each write waits for a past deadline
	s := &stream{w: w, token: []byte(`1`), timeout: 50 * time.Millisecond}
	done := make(chan *Response, 1)
	go func() { done <- l.closing(context.Background(), s, lis, []byte(`"q"`), []int{0, 2}, nil) }()
	select {
	case resp := <-done:
		assert.Contains(t, string(resp.Result), `/subscriptionId":"q"`, "the result")
	case <-time.After(4 * time.Second): // the writer's own fallback is 5 s a write
		t.Fatal("closing waited for the client past the stream's write timeout")
	}
	_, writes := w.recorded()
	assert.Equal(t, 1, writes, "the first write failed at the bound; nothing more was tried")
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.True(t, s.done, "the stream is abandoned")

	// A client that reads gets it all, then the result.
	w = newDeadlineWriter()
	s = &stream{w: w, token: []byte(`1`)}
	l.closing(context.Background(), s, lis, []byte(`"q"`), []int{0, 2}, nil)
	_, writes = w.recorded()
	assert.Equal(t, 2, writes)
	assert.False(t, s.done)
}

// A stream that is not written holds at most maxTaskNotes of one task's
// changes, the newest; nothing after a terminal one; and other tasks'
// notes are not touched.
func TestListenTaskNotesAreBounded(t *testing.T) {
	t.Parallel()
	lis := newListener(everything{}, 0, nil)
	lis.watch("alice", "/mcp", []string{"a", "b", "a", "c"})
	assert.Equal(t, map[string]int{"a": 0, "b": 1, "c": 2}, lis.tasks, "a task named twice has one slot")
	lis.offerTask(1, TaskWorking, []byte("b0"))
	for i := range maxTaskNotes + 2 {
		lis.offerTask(0, TaskWorking, []byte{'a', byte('0' + i)})
	}
	lis.offerTask(0, TaskCompleted, []byte("a-end"))
	lis.offerTask(0, TaskWorking, []byte("a-late"))
	_, notes, ended := lis.take(nil, nil)
	assert.False(t, ended)
	var got []string
	for _, n := range notes {
		got = append(got, string(n.members))
	}
	assert.Equal(t, []string{"b0", "a3", "a4", "a5", "a-end"}, got, "b's kept; a's newest, the end last, nothing after it")

	lis.offerTask(1, TaskFailed, []byte("b-end"))
	lis.offerTask(0, TaskWorking, []byte("a-later"))
	_, notes, _ = lis.take(nil, nil)
	assert.Equal(t, []taskNote{{1, []byte("b-end")}}, notes, "the count starts again after a take; an ended task stays ended")
	lis.end()
	lis.offerTask(2, TaskWorking, []byte("x")) // c has not ended: the stream has
	lis.offer(0)
	places, notes, ended := lis.take(nil, nil)
	assert.Empty(t, notes, "nothing is queued once the stream is ended")
	assert.Empty(t, places, "nothing is queued once the stream is ended")
	assert.True(t, ended)
}

// A task is heard only by listeners of its caller, at its endpoint,
// that named it; a caller without an id names none.
func TestListenTaskSlot(t *testing.T) {
	t.Parallel()
	lis := newListener(everything{}, 0, nil)
	lis.watch("alice", "/mcp", []string{"a"})
	for _, tc := range []struct {
		t    Task
		want bool
	}{
		{Task{ID: "a", CallerID: "alice", Endpoint: "/mcp"}, true},
		{Task{ID: "b", CallerID: "alice", Endpoint: "/mcp"}, false},
		{Task{ID: "a", CallerID: "bob", Endpoint: "/mcp"}, false},
		{Task{ID: "a", CallerID: "alice", Endpoint: "/other"}, false},
	} {
		_, ok := lis.taskSlot(&tc.t)
		assert.Equal(t, tc.want, ok, "%+v", tc.t)
	}
	anonymous := newListener(everything{}, 0, nil)
	anonymous.watch("", "/mcp", []string{"a"})
	_, ok := anonymous.taskSlot(&Task{ID: "a", Endpoint: "/mcp"})
	assert.False(t, ok, "no CallerID: no task is its")
}

// taskMembers compacts what a foreign Notifier spread over lines, and
// refuses raw JSON that is not JSON.
func TestTaskMembers(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	task := &Task{ID: "a", Status: TaskCompleted, Created: at, Updated: at, TTL: time.Second, Result: []byte("{\n  \"content\": []\n}")}
	assert.Equal(t, `"taskId":"a","status":"completed","createdAt":"2026-12-05T09:00:00.000Z","lastUpdatedAt":"2026-12-05T09:00:00.000Z","ttlMs":1000,"result":{"content":[]}`,
		string(taskMembers(task)))
	task.Result = []byte(`{"content":`)
	assert.Nil(t, taskMembers(task))
}

// Closing writes every task notification held, after the list changes;
// a write that fails ends the writing.
func TestListenClosingWritesTaskNotes(t *testing.T) {
	t.Parallel()
	ad := newAdvertisement(Implementation{Name: "s", Version: "1"}, "", &[revisionCount][]declaredCapability{}, 0)
	l := &listenMethods{ad: ad}
	lis := newListener(everything{}, kindToolsChanged, nil)
	notes := []taskNote{{0, []byte(`"taskId":"a","status":"working"`)}, {0, []byte(`"taskId":"a","status":"completed"`)}}
	w := newDeadlineWriter()
	s := &stream{w: w, token: []byte(`1`)}
	l.closing(context.Background(), s, lis, []byte(`"q"`), []int{0}, notes)
	_, writes := w.recorded()
	assert.Equal(t, 3, writes, "the list change, then both task notifications")

	w = newDeadlineWriter()
	w.block = true
	s = &stream{w: w, token: []byte(`1`), timeout: 50 * time.Millisecond}
	l.closing(context.Background(), s, lis, []byte(`"q"`), nil, notes)
	_, writes = w.recorded()
	assert.Equal(t, 1, writes, "the first write failed: nothing more was tried")
}

// A task notification carries the task's members and the stream's
// subscription id, on one line.
func TestAppendTaskNotification(t *testing.T) {
	t.Parallel()
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/tasks","params":{"taskId":"a","status":"working","_meta":{"io.modelcontextprotocol/subscriptionId":"q"}}}`,
		string(appendTaskNotification(nil, []byte(`"q"`), []byte(`"taskId":"a","status":"working"`))))
}

// A foreign Notifier may deliver a task status change without its task,
// or a task without a caller: the hub drops both, without a panic.
func TestPublishTaskDropsWhatNoCallerOwns(t *testing.T) {
	t.Parallel()
	hb := newHub(slog.New(slog.DiscardHandler))
	lis := newListener(everything{}, 0, nil)
	lis.watch("", "/mcp", []string{"a"})
	hb.listeners[lis] = struct{}{}
	assert.NotPanics(t, func() { hb.publish(Event{Method: TaskStatusChanged, Permission: "run"}) })
	hb.publish(Event{Method: TaskStatusChanged, Task: &Task{ID: "a", Endpoint: "/mcp", Permission: "run", Status: TaskWorking}})
	_, notes, _ := lis.take(nil, nil)
	assert.Empty(t, notes)
}
