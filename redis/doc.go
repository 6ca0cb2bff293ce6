// Package mcpredis runs what crosses the instances of an mcpmw service on
// Redis, so that a service scales by adding instances behind any load
// balancer, with no sticky sessions: a rate limit that every instance
// counts against (PerIP, By), a Notifier that carries change
// notifications to the listeners of every instance (NewNotifier), the
// relay of legacy answers and cancellations (NewRelay), and a TaskStore
// that keeps the tasks of every instance (NewTaskStore).
//
// It is a module of its own, github.com/mcpmw/mcpmw/redis, so that the
// core never depends on Redis. It builds on github.com/redis/go-redis/v9
// and takes any redis.UniversalClient that ends each call at its deadline
// (see Config.Client): one node, Sentinel, Cluster or Ring.
//
//	opt, err := redis.ParseURL(os.Getenv("REDIS_URL"))
//	if err != nil { … }
//	opt.ContextTimeoutEnabled = true // Config.Timeout must bound each call
//	redis.SetLogger(mcpredis.GoRedisLogger{Logger: logger, Level: slog.LevelDebug}) // go-redis's own lines at Debug
//	cfg := mcpredis.Config{Client: redis.NewClient(opt), Failure: mcpredis.FailOpen}
//	notify := mcpredis.NewNotifier(cfg)
//	defer notify.Close()
//	h := mcpmw.New(&reg, authn, audit, &mcpmw.Options{
//		RateLimit: mcpredis.PerIP(cfg, 600, time.Minute),
//		Notifier:  notify,
//	})
//
// # Round trips
//
// A rate-limit check is one round trip (EVALSHA of one script), sent once
// with Config.Timeout as its deadline; only after Redis has lost its
// script cache (a restart) does one check take a second, EVAL. Publishing
// an event is one PUBLISH; hearing events costs no round trip per event or
// per listener: each Notifier holds one subscription and fans events out
// in its process. A task store call is one round trip too: one script
// per tasks/get (taskget.lua: the task's hash packed in one string, which
// costs go-redis one allocation, where HGETALL's reply costs two per
// field), one script per Create and per Update (a renewal, a
// question, an answer, a cancellation, the end; an answer of more than 64
// responses or 64 KiB takes a read first); Expired, which each instance
// calls every half lease, is one script, and a second only when it finds
// expired leases.
//
// Those are commands; under load they share round trips. The commands
// that one part (a RateLimiter, a TaskStore, a Relay, a Notifier) makes
// at the same time go to Redis together: while one is on the wire, the
// others queue, and go as one pipeline as soon as it is answered, with no
// timer (a lone command goes at once, as it is). At 64 concurrent
// callers of 64 addresses on two cores, with redis-server on the same
// cores, this cut the limiter's time per check from 14.9 to 10.1 µs
// (BenchmarkRateLimitParallel, 2026-12-06): most of what a command costs,
// on both sides, is the I/O around it. The rate limit goes one step
// further for a busy key: the checks of one key that come while one of
// its is on the wire go as one script, asking for as many requests as
// they are (2.2 µs a check when the 64 callers share an address). Each
// caller still waits for its own answer or its own deadline, whichever
// comes first, so a caller whose deadline passes while its batch waits on
// a hung Redis has its error then; a command whose caller has given up is not sent; nothing is
// retried; each command gets its own answer (a NOSCRIPT is that script's,
// followed by its EVAL). Under Cluster and Ring each node has a queue of
// its own, picked by the command's key, so that a hung node holds back
// only the commands for it. go-redis's own AutoPipeliner is refused (see
// Config.Client): it holds a queued call until its batch is answered,
// whatever the call's deadline.
//
// # Keys and channels
//
// Every name starts with Config.Prefix (default "mcpmw:"):
//
//	<prefix>rate:<requests>:<window>ms:<key>   a rate-limit budget: a string, the
//	                                           GCRA theoretical arrival time in µs
//	                                           on Redis's clock, expiring once the
//	                                           budget is full again
//	<prefix>events                             the channel of change notifications
//	<prefix>instance:<id>                      one instance's own channel (the relay:
//	                                           legacy answers and cancellations for
//	                                           the instance holding the call; a shard
//	                                           channel under Cluster)
//	<prefix>instances                          the relay's channel every instance hears
//	                                           (cancellations)
//	<prefix>{tasks}task:<id>                   a task: a hash, forgotten at Created+TTL
//	<prefix>{tasks}task-leases                 the tasks that are not terminal: a sorted
//	                                           set scored by the end of their lease, on
//	                                           Redis's clock
//
// A rate-limit script touches one key, so under Cluster each check goes
// to the one node holding its slot. The limit is part of the key, so a
// deployment that changes it starts with fresh budgets rather than
// misreading old ones. The task store's keys share the hash tag {tasks},
// so that one script can change a task and the lease set together: under
// Cluster they are all on one node.
//
// # When Redis cannot answer
//
// A call that Redis does not answer within Config.Timeout (down, paused,
// partitioned, or too slow) fails on its own: nothing waits longer, nothing
// is retried within the request. The rate limiter then applies
// Config.Failure: FailOpen admits, FailClosed refuses with 429 and
// Retry-After: 1; a task store call returns an error naming Redis. The
// change is logged once when Redis stops answering and once when it
// answers again; recovery needs no restart, since the next
// call simply succeeds. The Notifier's subscription is restored by
// go-redis on its own; events published meanwhile are lost (pub/sub is
// at-most-once), so each restored subscription calls the funcs given to
// Notifier.SubscribeResync, through which listeners can be told that
// their lists may have changed.
//
// go-redis logs too, on its own: a line for each failed reconnection of
// each of its connections, a dozen or more a minute per instance during
// an outage, to the standard error. Its logger is process-wide, so this
// package leaves it alone; route it once in main, before making the
// client, to keep one line each way:
//
//	redis.SetLogger(mcpredis.GoRedisLogger{Logger: logger, Level: slog.LevelDebug})
//
// An error of a call that Redis did not answer in time, or that Redis
// answered it cannot serve for now (LOADING, BUSY, MASTERDOWN,
// CLUSTERDOWN, TRYAGAIN, READONLY, NOREPLICAS), has the method
// Unavailable() bool, which returns true: a caller tells it from any
// other error, without importing this package, with
//
//	var u interface{ Unavailable() bool }
//	if errors.As(err, &u) && u.Unavailable() { … 503, Retry-After … }
//
// A call that its caller gave up first (its context done) is not one.
package mcpredis
