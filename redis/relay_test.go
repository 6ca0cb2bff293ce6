package mcpredis_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/redistest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// inbox collects the payloads a relay hands on.
type inbox struct {
	mu  sync.Mutex
	got []string
	ch  chan struct{}
}

func newInbox() *inbox { return &inbox{ch: make(chan struct{}, 100)} }

func (b *inbox) receive(p []byte) {
	b.mu.Lock()
	b.got = append(b.got, string(p))
	b.mu.Unlock()
	b.ch <- struct{}{}
}

func (b *inbox) all() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.got...)
}

// wait waits for n payloads in all and returns every payload so far.
func (b *inbox) wait(t *testing.T, n int) []string {
	t.Helper()
	for {
		if got := b.all(); len(got) >= n {
			return got
		}
		select {
		case <-b.ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d payloads within 5 s, want %d: %q", len(b.all()), n, b.all())
		}
	}
}

// newRelay returns a relay on a client of its own, closed when t ends.
func newRelay(t testing.TB, client redis.UniversalClient, logs *logLines) (*mcpredis.Relay, *inbox) {
	t.Helper()
	in := newInbox()
	r, err := mcpredis.NewRelay(t.Context(), mcpredis.Config{Client: client, Logger: slogOf(logs), Timeout: time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	r.Receive(in.receive)
	return r, in
}

// TestRelaySendsToTheNamedInstanceOnly: a payload reaches the instance its
// id names, and no other, as soon as that instance's relay exists.
func TestRelaySendsToTheNamedInstanceOnly(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, aIn := newRelay(t, newClient(t, srv.Addr), nil)
	b, bIn := newRelay(t, newClient(t, srv.Addr), nil)
	require.NotEqual(t, a.ID(), b.ID())
	for _, id := range []string{a.ID(), b.ID()} {
		assert.Len(t, id, 22)
		assert.True(t, mcpredis.ValidInstanceID(id), id)
	}

	ok, err := a.Send(t.Context(), b.ID(), []byte(`{"answer":1}`))
	require.NoError(t, err)
	assert.True(t, ok, "b's relay is subscribed: it received the payload")
	ok, err = b.Send(t.Context(), a.ID(), []byte("to a"))
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, []string{`{"answer":1}`}, bIn.wait(t, 1))
	assert.Equal(t, []string{"to a"}, aIn.wait(t, 1))
	time.Sleep(50 * time.Millisecond)
	assert.Len(t, aIn.all(), 1, "a payload reaches the one instance it names")
	assert.Len(t, bIn.all(), 1)

	// Subscribed before newRelay returns: a payload sent at once is
	// received, every time.
	client := newClient(t, srv.Addr)
	for range 10 {
		c, cIn := newRelay(t, client, nil)
		ok, err := a.Send(t.Context(), c.ID(), []byte("first"))
		require.NoError(t, err)
		require.True(t, ok, "a relay is subscribed when newRelay returns")
		assert.Equal(t, []string{"first"}, cIn.wait(t, 1))
	}
}

// TestRelayBroadcastReachesEveryInstance: a payload broadcast by one
// instance reaches every instance's relay, the sender's included, and
// under the Send of a directed payload nothing reaches the others.
func TestRelayBroadcastReachesEveryInstance(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, aIn := newRelay(t, newClient(t, srv.Addr), nil)
	_, bIn := newRelay(t, newClient(t, srv.Addr), nil)
	_, cIn := newRelay(t, newClient(t, srv.Addr), nil)
	require.NoError(t, a.Broadcast(t.Context(), []byte("to all")))
	for _, in := range []*inbox{aIn, bIn, cIn} {
		assert.Equal(t, []string{"to all"}, in.wait(t, 1))
	}
}

// TestRelayNoSuchInstance: an id no instance holds has no receiver, and an
// id that cannot be an instance's is not even sent.
func TestRelayNoSuchInstance(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr)
	var sent roundTrips // ratelimit_outage_test.go
	client.AddHook(&sent)
	a, _ := newRelay(t, client, nil)
	_, err := a.Send(t.Context(), a.ID(), []byte("connects")) // the connection's own commands (HELLO...) are counted too
	require.NoError(t, err)

	sent.n.Store(0)
	ok, err := a.Send(t.Context(), "AAAAAAAAAAAAAAAAAAAAAA", []byte("lost"))
	require.NoError(t, err)
	assert.False(t, ok, "no instance holds this id")
	assert.Equal(t, int64(1), sent.n.Load(), "one PUBLISH")

	for _, id := range []string{
		"", "short", a.ID() + "x", a.ID()[:21],
		"AAAAAAAAAAAAAAAAAAAAA+", // not base64url
		"AAAAAAAAAAAAAAAAAAAAAB", // not canonical: the last character's low bits are set
		"x:../events",
		"AAAAAAAAAAAAAAAAAAAA\r\n", // 20 characters and a line break, which base64 skips
		strings.Repeat("A", 21) + ":",
	} {
		ok, err := a.Send(t.Context(), id, []byte("lost"))
		assert.NoError(t, err, "%q", id)
		assert.False(t, ok, "%q", id)
		assert.False(t, mcpredis.ValidInstanceID(id), "%q", id)
	}
	assert.Equal(t, int64(1), sent.n.Load(), "what cannot be an instance id is never published")
}

// TestRelayClosedLeavesNothing: once closed, a relay has no receiver, no
// subscription and no goroutine left, whether Redis is up or down; Close
// may be called again.
func TestRelayClosedLeavesNothing(t *testing.T) {
	srv := redistest.Start(t)
	counter := newClient(t, srv.Addr)
	ignore := goleak.IgnoreCurrent()
	for _, down := range []bool{false, true} {
		client := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
		in := newInbox()
		r, err := mcpredis.NewRelay(context.Background(), mcpredis.Config{Client: client, Logger: discard, Timeout: 2 * time.Second})
		require.NoError(t, err)
		r.Receive(in.receive)
		other, _ := newRelay(t, counter, nil)
		channel := "mcpmw:instance:" + r.ID()
		if down {
			srv.Stop()
		}
		require.NoError(t, r.Close())
		require.NoError(t, r.Close(), "Close twice")
		if down {
			srv.Restart()
		}
		ok, err := other.Send(context.Background(), r.ID(), []byte("after close"))
		require.NoError(t, err)
		assert.False(t, ok, "a closed relay receives nothing")
		subs, err := counter.PubSubNumSub(context.Background(), channel).Result()
		require.NoError(t, err)
		assert.Zero(t, subs[channel], "no subscription left")
		assert.Empty(t, in.all())
		require.NoError(t, other.Close())
		require.NoError(t, client.Close())
	}
	goleak.VerifyNone(t, ignore, restartedServer)
}

// restartedServer ignores the goroutine waiting for a redis-server the
// test restarted: the test's, not the relay's.
var restartedServer = goleak.IgnoreAnyFunction("github.com/mcpmw/mcpmw/internal/redistest.(*Server).start.func1")

// TestRelayStartIsBounded: newRelay waits for Redis no longer than its
// bound (a down server, a hung one), leaving nothing behind, and
// subscribes once a server that was not up yet answers within it.
func TestRelayStartIsBounded(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv.Addr)
	ignore := goleak.IgnoreCurrent()
	wait := 300 * time.Millisecond
	start := func(ctx context.Context) (*mcpredis.Relay, time.Duration, error) {
		t0 := time.Now()
		r, err := mcpredis.NewRelayWithin(ctx, mcpredis.Config{Client: client, Logger: discard, Timeout: 2 * time.Second}, wait)
		return r, time.Since(t0), err
	}

	srv.Stop()
	r, took, err := start(context.Background())
	assert.Nil(t, r)
	require.ErrorContains(t, err, "mcpredis: the relay's subscription to mcpmw:instance:")
	assert.ErrorContains(t, err, "was not confirmed in time")
	assert.Less(t, took, 300*time.Millisecond+slack, "Redis down: the bound holds")

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, took, err = start(ctx)
	cancel()
	assert.Error(t, err)
	assert.Less(t, took, 100*time.Millisecond+slack, "ctx's deadline, when sooner, holds")

	srv.Restart()
	srv.Pause()
	_, took, err = start(context.Background())
	srv.Resume()
	assert.Error(t, err)
	assert.Less(t, took, 300*time.Millisecond+slack, "Redis hung: the bound holds")

	srv.Stop()
	wait = 10 * time.Second // time enough for a busy machine to restart it
	up := make(chan struct{})
	go func() {
		defer close(up)
		time.Sleep(200 * time.Millisecond)
		srv.Restart()
	}()
	r, _, err = start(context.Background())
	<-up
	require.NoError(t, err, "Redis came up within the bound: asked again until it answered")
	other, _ := newRelay(t, client, nil)
	ok, err := other.Send(context.Background(), r.ID(), []byte("hello"))
	require.NoError(t, err)
	assert.True(t, ok)
	require.NoError(t, r.Close())
	require.NoError(t, other.Close())
	goleak.VerifyNone(t, ignore, restartedServer)
}

// TestRelayAfterRedisRestarts: while Redis is down a send fails within its
// deadline, logged once; once Redis is back, go-redis restores the
// subscription by itself (logged), and payloads flow again.
func TestRelayAfterRedisRestarts(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	logs := &logLines{}
	a, _ := newRelay(t, newClient(t, srv.Addr), logs)
	b, bIn := newRelay(t, newClient(t, srv.Addr), logs)

	srv.Stop()
	for range 3 {
		t0 := time.Now()
		ok, err := a.Send(t.Context(), b.ID(), []byte("lost"))
		assert.Error(t, err)
		assert.False(t, ok)
		assert.Less(t, time.Since(t0), time.Second+slack, "within Config.Timeout")
	}
	srv.Restart()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := a.Send(t.Context(), b.ID(), []byte("again"))
		if err == nil && ok {
			break
		}
		require.True(t, time.Now().Before(deadline), "b's subscription not restored within 10 s of the restart (%v)", err)
		time.Sleep(20 * time.Millisecond)
	}
	assert.Equal(t, []string{"again"}, bIn.wait(t, 1), "nothing sent while Redis was down arrives")
	want := []string{
		"WARN mcpredis: Redis does not answer: answers and cancellations for other instances are lost until it does",
		"INFO mcpredis: Redis answers again",
	}
	got := logs.all()
	for _, line := range want {
		assert.Equal(t, 1, count(got, line), "%q once in %q", line, got)
	}
	assert.Contains(t, got, "INFO mcpredis: the relay's subscription is restored: this instance receives answers and cancellations again")
}

func count(lines []string, line string) int {
	n := 0
	for _, l := range lines {
		if l == line {
			n++
		}
	}
	return n
}

// TestRelayReceivers: every Receive func hears each payload until it is
// cancelled; with none, a payload is dropped, though it arrived.
func TestRelayReceivers(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	a, _ := newRelay(t, newClient(t, srv.Addr), nil)
	b, first := newRelay(t, newClient(t, srv.Addr), nil)
	second := newInbox()
	cancel := b.Receive(second.receive)
	send := func(p string) {
		t.Helper()
		ok, err := a.Send(t.Context(), b.ID(), []byte(p))
		require.NoError(t, err)
		require.True(t, ok)
	}
	send("both")
	assert.Equal(t, []string{"both"}, first.wait(t, 1))
	assert.Equal(t, []string{"both"}, second.wait(t, 1))
	cancel()
	cancel()
	send("first only")
	assert.Equal(t, []string{"both", "first only"}, first.wait(t, 2))

	c, err := mcpredis.NewRelay(t.Context(), mcpredis.Config{Client: newClient(t, srv.Addr), Logger: discard, Timeout: 2 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ok, err := a.Send(t.Context(), c.ID(), []byte("nobody listens"))
	require.NoError(t, err)
	assert.True(t, ok, "the instance exists")
	time.Sleep(100 * time.Millisecond) // handed to nobody by then
	late := newInbox()
	c.Receive(late.receive)
	ok, err = a.Send(t.Context(), c.ID(), []byte("heard"))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, []string{"heard"}, late.wait(t, 1), "what came before any Receive func was dropped")
	time.Sleep(50 * time.Millisecond)
	assert.Len(t, second.all(), 1, "a cancelled func hears nothing more")
}

func TestNewRelayPanicsOnSetupMistakes(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	assert.PanicsWithValue(t, "mcpredis: NewRelay: Config.Client is nil", func() {
		_, _ = mcpredis.NewRelay(t.Context(), mcpredis.Config{})
	})
	r, _ := newRelay(t, newClient(t, srv.Addr), nil)
	assert.PanicsWithValue(t, "mcpredis: Relay.Receive: the deliver func is nil", func() { r.Receive(nil) })
}

// TestCallerGivingUpIsNoOutage: a publish (the Notifier's, the relay's)
// that fails because its caller gave up first (a client gone, a deadline
// sooner than Config.Timeout) says nothing of Redis and logs nothing; one
// that Redis leaves unanswered past Config.Timeout logs the outage.
func TestCallerGivingUpIsNoOutage(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	logs := &logLines{}
	cfg := mcpredis.Config{Client: newClient(t, srv.Addr), Logger: slog.New(logs), Timeout: 300 * time.Millisecond}
	n := mcpredis.NewNotifier(cfg)
	t.Cleanup(func() { _ = n.Close() })
	r, err := mcpredis.NewRelay(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	publishes := map[string]func(ctx context.Context) error{
		"notifier": func(ctx context.Context) error {
			return n.Publish(ctx, mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"})
		},
		"relay": func(ctx context.Context) error { _, err := r.Send(ctx, r.ID(), []byte("x")); return err },
	}

	srv.Pause()
	defer srv.Resume()
	for name, publish := range publishes {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
		err := publish(ctx)
		assert.Error(t, err, name)
		assert.False(t, unavailable(err), "%s: the caller gave up: Redis may well be up", name)
		cancel()
	}
	assert.Empty(t, logs.all(), "the callers gave up first: no outage")
	for name, publish := range publishes {
		err := publish(t.Context())
		assert.Error(t, err, name)
		assert.True(t, unavailable(err), "%s: Redis left it unanswered: %v", name, err)
	}
	assert.ElementsMatch(t, []string{
		"WARN mcpredis: Redis does not answer: events published here reach this instance only until it does",
		"WARN mcpredis: Redis does not answer: answers and cancellations for other instances are lost until it does",
	}, logs.all(), "Redis left them unanswered past Config.Timeout")
}
