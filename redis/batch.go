package mcpredis

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A batcher sends the commands that an instance's callers make at the
// same time to Redis together: one pipeline, so one write and one read
// for the lot, instead of one round trip and a pooled connection each.
// Most of what a command costs, on both sides, is that I/O (a script that
// runs for 8 µs costs Redis about 20 µs as a lone command), so under load
// a batch of commands costs about what one did.
//
// When nothing of its queue is on the wire, a caller sends its command
// itself, as go-redis would, so a lone caller pays nothing for batching.
// Otherwise its command waits in the queue, and goes with the next batch
// as soon as the one on the wire is answered (no timer: waiting 20 or
// 50 µs for company measured no better, BenchmarkRateLimitParallel). A
// queue has one flushing goroutine while commands wait, and none
// otherwise, so a batcher needs no Close: its goroutine ends with the
// last deadline of the commands it was given. Under Cluster and Ring
// there is a queue per node, picked by the command's key, so that a node
// that hangs holds back the commands of that node only; each batch still
// goes through the client's own Pipeline, which routes each command by
// its key and follows a slot that has moved (MOVED, ASK) as a lone
// command would.
//
// What a caller keeps, batched or not:
//   - its own deadline: it waits for its command's answer or its
//     context, whichever comes first, so a caller whose deadline passes
//     gets its error then, whatever its batch does; a batch's own
//     deadline is the latest of its callers', and a command whose caller
//     has already given up is not sent;
//   - one sending: every command is marked noRetry, and go-redis retries
//     no pipeline that holds one;
//   - its own answer: Redis answers each command of a pipeline apart, so
//     one command's error (NOSCRIPT, say) is that command's only.
type batcher struct {
	client    redis.UniversalClient
	node      func(ctx context.Context, key string) *redis.Client // the node a key lives on; nil: one queue
	unbatched bool                                                // each command alone, as go-redis sends it (benchmarks set it)

	mu      sync.Mutex
	one     queue                    // the queue of a single node, and of keys whose node is not known
	nodes   map[*redis.Client]*queue // under Cluster and Ring: a queue per node holding commands
	running int                      // queues flushing
	idle    chan struct{}            // closed when running drops to 0, for wait
}

// A queue is the commands waiting for one node, while a batch of its is
// on the wire.
type queue struct {
	pending  []*call
	flushing bool // a command of q is on the wire: its caller's, or a batch of flush's
}

// A call is one caller's command, waiting for its batch. Calls are
// pooled: a caller that had its answer puts its call back, one that gave
// up leaves it to the batch (and the garbage collector).
type call struct {
	ctx  context.Context // the caller's, with its deadline
	cmd  noRetry         // the caller's command; &cmd is what go-redis is given, with no allocation
	done chan struct{}   // one value, once cmd holds its answer
}

var calls = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

// newBatcher returns the batcher of c; under Cluster and Ring, a queue
// per node.
func newBatcher(c redis.UniversalClient) *batcher {
	b := &batcher{client: c}
	switch c := c.(type) {
	case *redis.ClusterClient:
		b.node = func(ctx context.Context, key string) *redis.Client {
			n, _ := c.MasterForKey(ctx, key) // an error: the one queue, where the pipeline meets it again
			return n
		}
	case *redis.Ring:
		b.node = func(_ context.Context, key string) *redis.Client {
			n, _ := c.GetShardClientForKey(key)
			return n
		}
	}
	return b
}

// do sends cmd, whose first key is key, with the next batch
// of its node, and returns its error once Redis has answered it, or ctx's
// error as soon as ctx is done. When do returns ctx's error, cmd may still
// be on its way: the caller must not read it (nor use it again).
func (b *batcher) do(ctx context.Context, key string, cmd redis.Cmder) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.unbatched {
		return b.client.Process(ctx, noRetry{cmd})
	}
	var node *redis.Client
	if b.node != nil {
		node = b.node(ctx, key)
	}
	b.mu.Lock()
	q := &b.one
	if node != nil {
		if q = b.nodes[node]; q == nil {
			if b.nodes == nil {
				b.nodes = map[*redis.Client]*queue{}
			}
			q = &queue{}
			b.nodes[node] = q
		}
	}
	if !q.flushing {
		// Nothing of q's on the wire: the caller sends its command as it
		// is, within its own context, and hands on what queued meanwhile.
		q.flushing = true
		b.running++
		b.mu.Unlock()
		defer b.handOn(q, node) // even if Process panics (a client hook's bug, which a handler's recoverer survives)
		c := calls.Get().(*call)
		c.cmd.Cmder = cmd
		err := b.client.Process(ctx, &c.cmd)
		c.cmd.Cmder = nil
		calls.Put(c)
		return err
	}
	// Something of q's on the wire: cmd waits in q's queue, which whoever
	// sent it hands on (handOn) once it is answered.
	c := calls.Get().(*call)
	c.ctx, c.cmd.Cmder = ctx, cmd
	q.pending = append(q.pending, c)
	b.mu.Unlock()
	select {
	case <-c.done:
		c.ctx, c.cmd.Cmder = nil, nil
		calls.Put(c)
		return cmd.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// flush sends q's commands, a batch at a time, until none is left.
func (b *batcher) flush(q *queue, node *redis.Client) {
	var pipe redis.Pipeliner // made for the first batch of more than one
	var batch []*call
	for {
		b.mu.Lock()
		batch, q.pending = q.pending, batch[:0]
		if len(batch) == 0 {
			b.release(q, node)
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		b.send(&pipe, batch)
		clear(batch)
	}
}

// handOn hands q on once its caller's own command is answered: to a
// flushing goroutine when commands queued meanwhile, and otherwise
// released, so that q is never left held with nobody sending its queue.
func (b *batcher) handOn(q *queue, node *redis.Client) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(q.pending) == 0 {
		b.release(q, node)
		return
	}
	go b.flush(q, node)
}

// release notes that q has nothing on the wire any more, b.mu held.
func (b *batcher) release(q *queue, node *redis.Client) {
	q.flushing = false
	if node != nil {
		delete(b.nodes, node) // so that the map holds the nodes in use only
	}
	if b.running--; b.running == 0 && b.idle != nil {
		close(b.idle)
		b.idle = nil
	}
}

// send sends batch and hands each caller its answer: a lone command as it
// is, within its caller's context, several as one pipeline within the
// latest of their callers' deadlines. A command whose caller has already
// given up is not sent.
func (b *batcher) send(pipe *redis.Pipeliner, batch []*call) {
	var first *call
	live, deadline := 0, callDeadline{}
	for i, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.cmd.SetErr(err)
			c.done <- struct{}{}
			batch[i] = nil
			continue
		}
		deadline.add(c.ctx)
		if live++; first == nil {
			first = c
		}
	}
	switch live {
	case 0:
		return
	case 1:
		_ = b.client.Process(first.ctx, &first.cmd)
	default:
		if *pipe == nil {
			*pipe = b.client.Pipeline()
		}
		for _, c := range batch {
			if c != nil {
				_ = (*pipe).Process(c.ctx, &c.cmd)
			}
		}
		// The first caller's values (its trace, say) for the client's
		// hooks, which see one context per pipeline.
		ctx, cancel := deadline.context(first.ctx)
		_, _ = (*pipe).Exec(ctx)
		cancel()
	}
	for _, c := range batch {
		if c != nil {
			c.done <- struct{}{} // c is its caller's again
		}
	}
}

// wait waits until no goroutine of b is flushing, or d has passed.
func (b *batcher) wait(d time.Duration) {
	b.mu.Lock()
	if b.running == 0 {
		b.mu.Unlock()
		return
	}
	if b.idle == nil {
		b.idle = make(chan struct{})
	}
	idle := b.idle
	b.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
}

// waiting returns how many commands wait for a batch, in every queue.
func (b *batcher) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.one.pending)
	for _, q := range b.nodes {
		n += len(q.pending)
	}
	return n
}
