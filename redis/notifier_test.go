package mcpredis_test

import (
	"context"
	"encoding/json"
	"net"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/redistest"
	"github.com/mcpmw/mcpmw/mcpmwtest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// events collects what a subscriber is given.
type events struct {
	mu  sync.Mutex
	got []mcpmw.Event
	ch  chan struct{}
}

func newEvents() *events { return &events{ch: make(chan struct{}, 100)} }

func (e *events) deliver(ev mcpmw.Event) {
	e.mu.Lock()
	e.got = append(e.got, ev)
	e.mu.Unlock()
	e.ch <- struct{}{}
}

// wait waits for n events in all and returns every event so far.
func (e *events) wait(t *testing.T, n int) []mcpmw.Event {
	t.Helper()
	for {
		e.mu.Lock()
		got := append([]mcpmw.Event(nil), e.got...)
		e.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-e.ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d events within 5 s, want %d: %v", len(got), n, got)
		}
	}
}

// subscribers waits until n connections subscribe to the events channel
// of prefix: only then does a publish reach them all.
func subscribers(t *testing.T, c redis.UniversalClient, prefix string, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		counts, err := c.PubSubNumSub(t.Context(), prefix+"events").Result()
		if err == nil && counts[prefix+"events"] == n {
			return
		}
		require.True(t, time.Now().Before(deadline), "%d subscribers to %sevents within 10 s (%v), want %d", counts[prefix+"events"], prefix, err, n)
		time.Sleep(20 * time.Millisecond)
	}
}

// notifiers returns n Notifiers on one server, each with a client of its
// own, all subscribed.
func notifiers(t *testing.T, srv *redistest.Server, logs *logLines, n int) []*mcpredis.Notifier {
	t.Helper()
	var out []*mcpredis.Notifier
	for range n {
		nt := mcpredis.NewNotifier(mcpredis.Config{Client: newClient(t, srv.Addr), Logger: slogOf(logs), Timeout: time.Second})
		t.Cleanup(func() { _ = nt.Close() })
		out = append(out, nt)
	}
	subscribers(t, newClient(t, srv.Addr), "mcpmw:", int64(n))
	return out
}

func TestEventsCrossInstancesOnceEach(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ns := notifiers(t, srv, nil, 2)
	here, there, alsoThere := newEvents(), newEvents(), newEvents()
	ns[0].Subscribe(here.deliver)
	ns[1].Subscribe(there.deliver)
	ns[1].Subscribe(alsoThere.deliver)

	sent := []mcpmw.Event{
		{Method: mcpmw.ToolsListChanged, Permission: "read"},
		{Method: mcpmw.ResourceUpdated, URI: "notes://7", Permission: "read", Audience: "team-a"},
		{Method: mcpmw.TaskStatusChanged, Permission: "run", Task: &mcpmw.Task{ID: "t1", CallerID: "alice", Endpoint: "/mcp", Tool: "export", Permission: "run",
			Status: mcpmw.TaskInputRequired, StatusMessage: "waiting", Created: time.UnixMilli(1000), Updated: time.UnixMilli(2000), TTL: time.Hour, PollInterval: time.Second,
			InputRequests: map[string]json.RawMessage{"q": json.RawMessage(`{"method":"elicitation/create"}`)}}},
		{Method: mcpmw.TaskStatusChanged, Permission: "run", Task: &mcpmw.Task{ID: "t2", CallerID: "bob", Endpoint: "/mcp", Permission: "run",
			Status: mcpmw.TaskCompleted, Created: time.UnixMilli(1000), Updated: time.UnixMilli(3000), Result: json.RawMessage(`{"content":[]}`)}},
		{Method: mcpmw.TaskStatusChanged, Permission: "run", Task: &mcpmw.Task{ID: "t3", CallerID: "bob", Endpoint: "/mcp", Permission: "run",
			Status: mcpmw.TaskFailed, Created: time.UnixMilli(1000), Updated: time.UnixMilli(3000), Error: json.RawMessage(`{"code":-32603,"message":"x"}`)}},
	}
	for _, ev := range sent {
		require.NoError(t, ns[0].Publish(t.Context(), ev))
	}
	assert.Equal(t, sent, here.wait(t, 5), "the publishing instance's own subscribers, at once")
	assert.Equal(t, sent, there.wait(t, 5), "the other instance's, every field intact, in order")
	assert.Equal(t, sent, alsoThere.wait(t, 5), "fanned out to every subscriber there")

	require.NoError(t, ns[1].Publish(t.Context(), mcpmw.Event{Method: mcpmw.PromptsListChanged, Permission: "write"}))
	assert.Len(t, here.wait(t, 6), 6)
	time.Sleep(100 * time.Millisecond)
	assert.Len(t, here.wait(t, 6), 6, "no instance hears its own event twice")
	assert.Len(t, there.wait(t, 6), 6)
}

// TestWireEventCarriesEveryField fails when mcpmw.Event gains a field that
// the wire form does not carry yet.
func TestWireEventCarriesEveryField(t *testing.T) {
	t.Parallel()
	var fields []string
	ev := reflect.TypeFor[mcpmw.Event]()
	for i := range ev.NumField() {
		fields = append(fields, ev.Field(i).Name)
	}
	assert.Equal(t, []string{"Method", "URI", "Permission", "Audience", "Task"}, fields, "add the new field to wireEvent, and to TestEventsCrossInstancesOnceEach")
}

func TestUnsubscribedAndCancelled(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ns := notifiers(t, srv, nil, 2)
	kept, dropped := newEvents(), newEvents()
	ns[1].Subscribe(kept.deliver)
	cancel := ns[1].Subscribe(dropped.deliver)
	cancel()
	cancel()
	require.NoError(t, ns[0].Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
	kept.wait(t, 1)
	assert.Empty(t, dropped.got)

	ctx, done := context.WithCancel(t.Context())
	done()
	assert.ErrorIs(t, ns[0].Publish(ctx, mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}), context.Canceled)
}

// TestListenersOnAnotherInstanceHearTheirTenantOnly: a listen stream on
// instance 1 hears a change published on instance 2, and the receiving
// Handler still checks permission and audience.
func TestListenersOnAnotherInstanceHearTheirTenantOnly(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ns := notifiers(t, srv, nil, 2)
	authn := mcpmwtest.Tokens{
		"a": &tenant{User: mcpmwtest.User{Name: "a", Permissions: []mcpmw.Permission{"read"}}, team: "A"},
		"b": &tenant{User: mcpmwtest.User{Name: "b", Permissions: []mcpmw.Permission{"read"}}, team: "B"},
	}
	var servers []*mcpmwtest.Server
	var handlers []*mcpmw.Handler
	for _, n := range ns {
		var reg mcpmw.Registry
		reg.AddTools(mcpmw.Tool{Name: "noop", Permission: "read", Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("ok"), nil
		}})
		reg.AddResources(mcpmw.Resource{URI: "notes://1", Name: "note 1", Permission: "read",
			Read: func(_ context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
				return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "one")}, nil
			}})
		h := mcpmw.New(&reg, authn, mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}), &mcpmw.Options{Notifier: n})
		t.Cleanup(h.Close)
		handlers = append(handlers, h)
		servers = append(servers, mcpmwtest.NewServer(t, h))
	}
	filter := mcpmwtest.ListenFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"notes://1"}}
	a, err := servers[0].Client(mcpmwtest.Bearer("a")).Listen(t.Context(), filter)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	b, err := servers[0].Client(mcpmwtest.Bearer("b")).Listen(t.Context(), filter)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	require.Equal(t, filter, a.Acknowledged)

	for _, ev := range []mcpmw.Event{
		{Method: mcpmw.ResourceUpdated, URI: "notes://1", Permission: "read", Audience: "B"},
		{Method: mcpmw.ToolsListChanged, Permission: "admin"},
		{Method: mcpmw.ResourceUpdated, URI: "notes://1", Permission: "read", Audience: "A"},
	} {
		require.NoError(t, handlers[1].Publish(t.Context(), ev))
	}
	next := func(l *mcpmwtest.Listener) mcpmwtest.Notification {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		n, err := l.Next(ctx)
		require.NoError(t, err)
		return n
	}
	assert.JSONEq(t, `{"uri":"notes://1","_meta":{"io.modelcontextprotocol/subscriptionId":`+string(a.ID)+`}}`, string(next(a).Params), "A hears A's update only")
	assert.JSONEq(t, `{"uri":"notes://1","_meta":{"io.modelcontextprotocol/subscriptionId":`+string(b.ID)+`}}`, string(next(b).Params), "B hears B's update only")
	require.NoError(t, handlers[1].Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
	assert.Equal(t, mcpmw.ToolsListChanged, next(a).Method, "then the change both may see; never the admin one")
	assert.Equal(t, mcpmw.ToolsListChanged, next(b).Method)
}

// tenant is a test user in a team: an mcpmw.AudienceMember.
type tenant struct {
	mcpmwtest.User
	team string
}

func (u *tenant) InAudience(a string) bool { return a == u.team }

// TestResyncAfterRestart: once go-redis has restored the subscription
// after redis-server restarts, each resync func is called, once, and
// events flow again; one registered after the first subscription is not
// called until then.
func TestResyncAfterRestart(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	logs := &logLines{}
	ns := notifiers(t, srv, logs, 2)
	resyncs := make(chan struct{}, 10)
	ns[1].SubscribeResync(func() { resyncs <- struct{}{} })
	cancelled := ns[1].SubscribeResync(func() { t.Error("a cancelled resync func was called") })
	cancelled()
	select {
	case <-resyncs:
		t.Fatal("the resync func was called with no subscription restored")
	case <-time.After(100 * time.Millisecond):
	}

	srv.Stop()
	err := ns[0].Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"})
	assert.Error(t, err, "Redis is down: the publish fails, within the deadline")
	srv.Restart()
	select {
	case <-resyncs:
	case <-time.After(10 * time.Second):
		t.Fatal("no resync within 10 s of the restart")
	}
	subscribers(t, newClient(t, srv.Addr), "mcpmw:", 2)
	got := newEvents()
	ns[1].Subscribe(got.deliver)
	require.NoError(t, ns[0].Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
	got.wait(t, 1)
	assert.Len(t, resyncs, 0, "one resync per restored subscription")
	assert.Contains(t, logs.all(), "WARN mcpredis: Redis does not answer: events published here reach this instance only until it does")
	assert.Contains(t, logs.all(), "INFO mcpredis: Redis answers again")
}

// TestCloseLeaksNothing: Close ends the subscription and its goroutines,
// whether Redis is up or down.
func TestCloseLeaksNothing(t *testing.T) {
	srv := redistest.Start(t)
	ignore := goleak.IgnoreCurrent()
	for _, down := range []bool{false, true} {
		client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
		n := mcpredis.NewNotifier(mcpredis.Config{Client: client, Logger: discard, Timeout: 2 * time.Second})
		subscribers(t, newClient(t, srv.Addr), "mcpmw:", 1)
		n.Subscribe(func(mcpmw.Event) {})
		require.NoError(t, n.Publish(context.Background(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
		if down {
			srv.Stop()
			assert.Error(t, n.Publish(context.Background(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
		}
		require.NoError(t, n.Close())
		require.NoError(t, n.Close(), "Close twice")
		require.NoError(t, client.Close())
	}
	goleak.VerifyNone(t, ignore)
}

// TestUndecodableMessagesDroppedAndLoggedOnce: whatever else is published
// on the channel is dropped, logged the first time only, and does not stop
// the events that follow, whether the first is not JSON or is JSON with
// no publisher id.
func TestUndecodableMessagesDroppedAndLoggedOnce(t *testing.T) {
	t.Parallel()
	noFrom := `{"method":"notifications/prompts/list_changed","permission":"read"}` // not the event that follows: delivered, it would show
	for name, junk := range map[string][]string{
		"not JSON first":        {"not json", noFrom, "[]"},
		"no publisher id first": {noFrom, "not json", "[]"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			logs := &logLines{}
			ns := notifiers(t, srv, logs, 1)
			got := newEvents()
			ns[0].Subscribe(got.deliver)
			raw := newClient(t, srv.Addr)
			for _, j := range junk {
				require.NoError(t, raw.Publish(t.Context(), "mcpmw:events", j).Err())
			}
			require.NoError(t, raw.Publish(t.Context(), "mcpmw:events",
				`{"from":"elsewhere","method":"notifications/tools/list_changed","permission":"read"}`).Err())
			assert.Equal(t, []mcpmw.Event{{Method: mcpmw.ToolsListChanged, Permission: "read"}}, got.wait(t, 1))
			assert.Equal(t, []string{"WARN mcpredis: undecodable messages on the events channel are dropped (only the first is logged)"}, logs.all())
		})
	}
}

// TestNotifierFirstSubscribedLateResyncs: a Notifier made while Redis is
// down subscribes once it is up, and that first subscription calls the
// resync funcs: a listener that opened meanwhile may have missed events
// published on the other instances. Events flow after it.
func TestNotifierFirstSubscribedLateResyncs(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	srv.Stop()
	logs := &logLines{}
	n := mcpredis.NewNotifier(mcpredis.Config{Client: newClient(t, srv.Addr), Logger: slogOf(logs), Timeout: 2 * time.Second})
	t.Cleanup(func() { _ = n.Close() })
	resyncs := make(chan struct{}, 10)
	n.SubscribeResync(func() { resyncs <- struct{}{} })
	got := newEvents()
	n.Subscribe(got.deliver)
	time.Sleep(200 * time.Millisecond) // subscribing, and failing, meanwhile

	srv.Restart()
	select {
	case <-resyncs:
	case <-time.After(10 * time.Second):
		t.Fatal("no resync within 10 s of Redis coming up")
	}
	subscribers(t, newClient(t, srv.Addr), "mcpmw:", 1)
	other := mcpredis.NewNotifier(mcpredis.Config{Client: newClient(t, srv.Addr), Logger: discard, Timeout: 2 * time.Second})
	t.Cleanup(func() { _ = other.Close() })
	require.NoError(t, other.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
	got.wait(t, 1)
	assert.Empty(t, resyncs, "one resync for the one subscription")
	assert.NotContains(t, logs.all(), "INFO mcpredis: subscription restored: events published meanwhile are lost; telling listeners their lists may have changed",
		"the first subscription is no restoration")
}

// hungRedis returns the address of a server that accepts connections and
// never answers, as a Redis that hangs would (SIGSTOP, a stalled proxy).
func hungRedis(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return ln.Addr().String()
}

// TestNotifierNeverWaitsForAHungRedis: against a Redis that accepts and
// never answers, NewNotifier returns at once and Close within
// Config.Timeout, where waiting for go-redis's handshake would cost the
// client's DialTimeout or ReadTimeout (a minute each here); Publish fails
// within Config.Timeout.
func TestNotifierNeverWaitsForAHungRedis(t *testing.T) {
	t.Parallel()
	client := redis.NewClient(&redis.Options{Addr: hungRedis(t), ContextTimeoutEnabled: true, DialTimeout: time.Minute, ReadTimeout: time.Minute})
	t.Cleanup(func() { _ = client.Close() })
	within := func(what string, f func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { defer close(done); f() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s still waits after 10 s: it waits for the hung Redis", what)
		}
	}
	var n *mcpredis.Notifier
	cfg := mcpredis.Config{Client: client, Logger: discard, Timeout: 200 * time.Millisecond}
	within("NewNotifier", func() { n = mcpredis.NewNotifier(cfg) })
	time.Sleep(300 * time.Millisecond) // go-redis connects meanwhile, and waits
	within("Publish", func() {
		assert.Error(t, n.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
	})
	within("Close", func() { assert.NoError(t, n.Close()) })
}

// TestNotifierClosedWhileSubscribingLeaksNothing: a Notifier closed while
// its first connection waits for a hung Redis leaves no subscription nor
// goroutine behind once that connection gives up.
func TestNotifierClosedWhileSubscribingLeaksNothing(t *testing.T) {
	addr := hungRedis(t)
	ignore := goleak.IgnoreCurrent()
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
	n := mcpredis.NewNotifier(mcpredis.Config{Client: client, Logger: discard, Timeout: 500 * time.Millisecond})
	require.NoError(t, n.Close(), "closed while it subscribes")
	require.NoError(t, client.Close())
	goleak.VerifyNone(t, ignore)
}
