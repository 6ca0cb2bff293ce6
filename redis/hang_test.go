package mcpredis_test

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/redistest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// hangingProxy passes connections to a real Redis until hang is called:
// then it cuts them all, and accepts the next ones without ever
// answering, as a Redis that hangs while clients reconnect would.
type hangingProxy struct {
	ln     net.Listener
	target string
	hung   atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

func newHangingProxy(t *testing.T, target string) *hangingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &hangingProxy{ln: ln, target: target}
	go p.serve()
	t.Cleanup(func() { _ = ln.Close(); p.cut() })
	return p
}

func (p *hangingProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.keep(c)
		if p.hung.Load() {
			continue // accepted, never answered
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.keep(s)
		go func() { _, _ = io.Copy(s, c) }()
		go func() { _, _ = io.Copy(c, s) }()
	}
}

func (p *hangingProxy) keep(c net.Conn) {
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
}

// cut closes every connection so far.
func (p *hangingProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
}

// hang cuts every connection and answers none from now on.
func (p *hangingProxy) hang() {
	p.hung.Store(true)
	p.cut()
}

// within fails t unless f returns within 10 s.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s still waits after 10 s: it waits for the hung Redis", what)
	}
}

// TestCloseNeverWaitsForAHungReconnect: when Redis hangs while go-redis
// reconnects a subscription (it holds the subscription's lock for the
// client's DialTimeout, a minute here), the relay's Close and the
// Notifier's return within Config.Timeout all the same.
func TestCloseNeverWaitsForAHungReconnect(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	proxy := newHangingProxy(t, srv.Addr)
	client := redis.NewClient(&redis.Options{Addr: proxy.ln.Addr().String(), ContextTimeoutEnabled: true, DialTimeout: time.Minute, ReadTimeout: time.Minute})
	t.Cleanup(func() { _ = client.Close() })
	cfg := mcpredis.Config{Client: client, Logger: discard, Timeout: 200 * time.Millisecond}
	r, err := mcpredis.NewRelay(t.Context(), cfg)
	require.NoError(t, err)
	n := mcpredis.NewNotifier(cfg)
	subscribers(t, newClient(t, srv.Addr), "mcpmw:", 1)

	proxy.hang()
	time.Sleep(300 * time.Millisecond) // go-redis reconnects meanwhile, and waits
	within(t, "Relay.Close", func() { assert.NoError(t, r.Close()) })
	within(t, "Notifier.Close", func() { assert.NoError(t, n.Close()) })
	within(t, "Publish", func() {
		assert.Error(t, n.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
	})
}
