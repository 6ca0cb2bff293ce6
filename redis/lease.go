package mcpredis

import (
	"context"
	"errors"
	"sync"
	"time"
)

// A LimitOption changes how a RateLimiter counts (PerIP, By).
type LimitOption func(*limitOptions)

type limitOptions struct{ lease int }

// Lease makes a RateLimiter take up to tokens requests of a key's budget
// with each script call, and admit the key's next requests on this
// instance from what it took, with no round trip, until they are spent
// or their lease ends: a second after it was taken or last topped up, or
// the window if it is shorter. When a quarter of the tokens or fewer are
// left, the next request tops the lease up to tokens (never more) while
// the others spend what is left, so that a busy key seldom waits for
// Redis. What a lease did not spend goes back to the budget with the
// instance's next call for that key. A refusal is kept as long as its
// Retry-After: the instance refuses the key again without asking Redis
// until then.
//
// It trades accuracy for round trips. The budget is still counted in
// Redis, once per request, but a request may be admitted up to a second
// after its token was taken: across a window, at most instances × tokens
// requests more than the limit get through (each instance may hold a
// lease taken just before the window began). A client whose requests
// move between instances (a round-robin balancer) may find its tokens on
// another instance; each instance then takes a lease of its own, at
// worst refusing the client up to instances × tokens requests early for
// as long as those leases last.
//
// Size tokens to a few times the requests of one key an instance has in
// flight at once. A lease is topped up by one round trip, and under load
// a round trip waits for the same CPU as the requests do: a key with c
// requests in flight spends up to about c tokens while its top-up is on
// the wire (a third of that on average, measured), so with tokens below
// about 4c (a quarter is left when the top-up starts) the lease runs dry
// and its requests wait for Redis after all. Measured on 2 cores, 64
// clients of one address against the in-memory limit: Lease(100) ran dry
// for about 1 request in 5 and served 0.84-0.95x the requests per second,
// Lease(1000) 0.89-1.02x (docs/scaling.md).
//
// Lease(0) and Lease(1) are no lease: one script per check, exact.
// PerIP and By panic when tokens is below 0 or above their requests.
func Lease(tokens int) LimitOption {
	return func(o *limitOptions) { o.lease = tokens }
}

// maxLeaseTime bounds how long an instance may spend a lease.
const maxLeaseTime = time.Second

// minSweep is the size of the table of leases below which ended ones are
// not swept: each is dropped when its key comes back.
const minSweep = 1024

// leases are the tokens this instance has taken, per key.
type leases struct {
	check  checkFunc     // the limiter's script
	tokens int           // how many a script call takes at most
	low    int           // at this many left, the next caller tops the lease up
	ttl    time.Duration // how long they may be spent
	now    func() time.Time

	mu    sync.Mutex
	keys  map[string]*lease
	sweep int // the table's size at which ended leases are dropped
}

// A lease is what one key has on this instance.
type lease struct {
	left    int           // tokens not spent yet
	until   time.Time     // when the unspent ones end
	back    int           // tokens of ended leases, not spent: given back with the next call
	refused time.Time     // Redis refused the key until then
	asking  chan struct{} // while a call for more is on its way; closed once it is answered
}

func newLeases(check checkFunc, tokens int, ttl time.Duration) *leases {
	return &leases{check: check, tokens: tokens, low: tokens / 4, ttl: ttl, now: time.Now, keys: map[string]*lease{}, sweep: minSweep}
}

// admitted is the answer of a request admitted from a lease.
var admitted = []int64{1, 0, 0, 0}

// held admits or refuses one request of key when this instance can
// decide alone: a token it may spend (spendable), or else a refusal that
// still holds; otherwise it returns nil, and take asks Redis.
func (ls *leases) held(key string) []int64 {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	e, now := ls.keys[key], ls.now()
	switch {
	case e == nil:
		return nil
	case e.spendable(ls.low, now):
		e.left--
		return admitted
	case now.Before(e.refused): // none it may spend, and Redis said no
		return []int64{0, 0, e.refused.Sub(now).Microseconds(), 0}
	}
	return nil
}

// take admits or refuses one request of key, as check does (see gcra.lua
// for what it answers): from the key's lease while it has tokens left,
// refused while Redis's last refusal holds, and otherwise with one call
// of check, for a lease of more tokens. The caller that finds the lease in
// its last quarter (ls.low tokens or fewer) tops it up, asking for what
// brings it back to ls.tokens (so that an instance never holds more),
// while the others spend what is left; callers of a key with none left
// wait for the call on its way rather than making one each, each within
// ctx.
func (ls *leases) take(ctx context.Context, key string) ([]int64, error) {
	for {
		ls.mu.Lock()
		e, now := ls.keys[key], ls.now()
		if e == nil {
			e = ls.add(key, now)
		}
		if !now.Before(e.until) { // ended: what is left is given back with the next call
			e.back, e.left = e.back+e.left, 0
		}
		switch {
		case e.spendable(ls.low, now):
			e.left--
			ls.mu.Unlock()
			return admitted, nil
		case now.Before(e.refused): // none left (a refused lease is spendable while it lasts)
			ls.mu.Unlock()
			return []int64{0, 0, e.refused.Sub(now).Microseconds(), 0}, nil
		case e.asking != nil:
			asking := e.asking
			ls.mu.Unlock()
			select {
			case <-asking:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		want, back := ls.tokens-e.left, e.back
		e.back, e.asking = 0, make(chan struct{})
		ls.mu.Unlock()
		return ls.call(ctx, key, e, want, back)
	}
}

// errNoAnswer is what a lease records of a call whose check panicked.
var errNoAnswer = errors.New("mcpredis: the rate-limit check did not return")

// call asks for want more tokens of key's lease e, giving back back, and
// returns the caller's answer. Whatever check does, a panic included,
// the callers waiting for the call are let go once e holds what it
// brought, so that no key is left waiting for an answer that never
// comes.
func (ls *leases) call(ctx context.Context, key string, e *lease, want, back int) (v []int64, err error) {
	err = errNoAnswer
	defer func() { v, err = ls.answered(key, e, v, err) }()
	v, err = ls.check(ctx, key, want, back)
	return v, err
}

// answered records in e what its call brought, v or err, lets go the
// callers waiting for it, and returns the answer of the caller that made
// it.
func (ls *leases) answered(key string, e *lease, v []int64, err error) ([]int64, error) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	close(e.asking)
	e.asking = nil
	now := ls.now()
	switch {
	case err == nil && v[0] > 0:
		e.left, e.until = e.left+int(v[0]-1), now.Add(ls.ttl)
	case err == nil:
		e.refused = now.Add(time.Duration(v[2]) * time.Microsecond)
	}
	// An error: back may have been given back, or not; not sent again.
	if (err != nil || v[0] == 0) && e.left > 0 && now.Before(e.until) {
		v, err = admitted, nil // what is left is still this instance's to spend
		e.left--
	}
	if e.left == 0 && e.back == 0 && !now.Before(e.refused) {
		delete(ls.keys, key)
	}
	return v, err
}

// spendable reports whether a token of e is spent with no call: one is
// left, of a lease that has not ended, and either more than low are left,
// or more are on their way, or Redis refused more.
func (e *lease) spendable(low int, now time.Time) bool {
	return e.left > 0 && now.Before(e.until) && (e.left > low || e.asking != nil || now.Before(e.refused))
}

// add adds key's lease to the table, ls.mu held, first dropping the
// ended leases when the table has grown to ls.sweep: their unspent
// tokens are not given back (the budget regains them within the window
// anyway), so the table holds the keys of about the last second.
func (ls *leases) add(key string, now time.Time) *lease {
	if len(ls.keys) >= ls.sweep {
		for k, e := range ls.keys {
			if e.asking == nil && !now.Before(e.until) && !now.Before(e.refused) {
				delete(ls.keys, k)
			}
		}
		ls.sweep = max(2*len(ls.keys), minSweep)
	}
	e := &lease{}
	ls.keys[key] = e
	return e
}
