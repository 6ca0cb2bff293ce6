package mcpredis

import (
	"context"
	"sync"
)

// coalescer merges the checks of one key that come while a call for that
// key is on its way into one call that asks for as many requests as they
// are, sent as soon as the call on its way is answered: under load, a
// busy key (a client behind one address, a tenant) costs one script per
// round trip instead of one per request, and each of those requests still
// gets its own answer. Nothing is lent or kept: the script takes from the
// budget exactly the requests it admits, so the limit stays exact, as it
// is without coalescing. Of a group of n asking together, the first m to
// have joined are admitted when Redis admits m.
//
// A caller keeps its deadline: it waits for its group's answer or its
// context, whichever comes first. One that gives up while its group's
// call is on its way has its request counted if Redis admits it, as a
// lone call that times out on the wire may have.
type coalescer struct {
	check    checkFunc // the limiter's script
	interval int64     // µs between two requests (RateLimiter.interval)
	window   int64     // µs: the burst tolerance (RateLimiter.window)

	mu   sync.Mutex
	keys map[string]*askGroup // the keys with a call on its way: the group waiting for it to end (nil: none yet)
}

// An askGroup is the checks of one key waiting for the call on its way:
// they go together as the next one.
type askGroup struct {
	n      int             // the callers, in the order they joined
	first  context.Context // the first caller's: its values, for the client's hooks (a trace)
	latest callDeadline    // the call's deadline: the latest of the callers'
	done   chan struct{}   // closed once v and err hold the call's answer
	v      []int64
	err    error
}

func newCoalescer(check checkFunc, interval, window int64) *coalescer {
	return &coalescer{check: check, interval: interval, window: window, keys: map[string]*askGroup{}}
}

// take admits or refuses one request of key, as check does for one: with
// a call of its own when none is on its way for key, and otherwise with
// the next one, shared with the callers that come meanwhile.
func (c *coalescer) take(ctx context.Context, key string) ([]int64, error) {
	c.mu.Lock()
	g, busy := c.keys[key]
	if !busy {
		c.keys[key] = nil // a call on its way, nobody waiting for it yet
		c.mu.Unlock()
		defer c.next(key) // even if check panics (a handler's recoverer goes on), key is handed on
		return c.check(ctx, key, 1, 0)
	}
	if g == nil {
		g = &askGroup{first: ctx, done: make(chan struct{})}
		c.keys[key] = g
	}
	i := g.n
	g.n++
	g.latest.add(ctx)
	c.mu.Unlock()
	select {
	case <-g.done:
		return c.answer(g.v, g.err, i)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// next is called once key's call is answered: it sends the call of the
// group that waited for it, or forgets key when nobody did.
func (c *coalescer) next(key string) {
	c.mu.Lock()
	g := c.keys[key]
	if g == nil {
		delete(c.keys, key)
		c.mu.Unlock()
		return
	}
	c.keys[key] = nil // g's call on its way: who comes now waits for the one after
	c.mu.Unlock()
	go c.send(key, g)
}

// send makes g's call, within the latest of its callers' deadlines, hands
// them its answer, and then hands key on.
func (c *coalescer) send(key string, g *askGroup) {
	ctx, cancel := g.latest.context(g.first)
	g.v, g.err = c.check(ctx, key, g.n, 0)
	cancel()
	close(g.done)
	c.next(key)
}

// answer is the answer of the i-th caller (from 0) of a group whose call
// was answered v, err (see gcra.lua): admitted when Redis took more than
// i requests, refused otherwise. A caller refused while others of its
// group were admitted waits, as Redis would have told it, until the
// budget has room for one more after theirs: one interval past when the
// bucket would be full again (v[3]), less the burst tolerance.
func (c *coalescer) answer(v []int64, err error, i int) ([]int64, error) {
	switch {
	case err != nil:
		return nil, err
	case v[0] > int64(i):
		return admitted, nil
	case v[0] == 0:
		return v, nil
	}
	return []int64{0, 0, max(v[3]+c.interval-c.window, 1), v[3]}, nil
}
