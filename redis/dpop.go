package mcpredis

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// A ReplayCache is the DPoP replay cache that every instance sharing a
// Redis and a Config.Prefix shares: an oauth.ReplayCache (of the module
// github.com/mcpmw/mcpmw/oauth, whose interface names standard types only,
// so that this module needs none of its dependencies), with which a proof
// accepted by one instance is refused as a replay by every other.
//
// Each Once is one round trip: SET key 1 NX PX ttl, sent once, never
// retried, with the next batch of its instance's commands, within the
// caller's deadline and Config.Timeout, whichever comes first. Redis
// expires each key after its ttl, so the cache needs no sweeping, and
// holds as many proofs as Redis has memory for (an entry is about 100
// bytes).
//
// When Redis does not answer in time, Once returns an error, and the
// proof is refused: Config.Failure, the rate limiter's policy, does not
// apply. Failing open would accept any proof, replays included, for as
// long as Redis is down, which is exactly when nothing else notices; a
// refusal costs an honest client a retry. Its error names Redis and says
// Unavailable() true, so that the refusal can be a 503 with Retry-After
// rather than a 401 telling the client its proof is wrong (oauth's
// DPoPVerifier answers 503).
//
// A ReplayCache is safe for concurrent use.
type ReplayCache struct {
	s      settings
	prefix string // Prefix "dpop:"
	health health
}

// NewReplayCache returns the replay cache kept in cfg's Redis, under the
// keys Prefix "dpop:" key. It panics on a setup mistake, as PerIP does.
func NewReplayCache(cfg Config) *ReplayCache {
	s := settle("NewReplayCache", cfg)
	return &ReplayCache{
		s:      s,
		prefix: s.prefix + "dpop:",
		health: health{logger: s.logger, what: "DPoP replay cache", down1: "mcpredis: Redis does not answer: DPoP proofs are refused until it does"},
	}
}

// Once records key for ttl (at least a millisecond) and reports whether
// it is new; an error when Redis cannot tell, or ttl is not positive.
func (c *ReplayCache) Once(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, fmt.Errorf("mcpredis: DPoP replay cache: the ttl of %q is %v: want a positive duration", key, ttl)
	}
	bounded, cancel := context.WithTimeout(ctx, c.s.timeout)
	defer cancel()
	k := c.prefix + key
	ms := max(ttl.Milliseconds(), 1)
	cmd := redis.NewBoolCmd(bounded, "set", k, "1", "px", strconv.FormatInt(ms, 10), "nx")
	if err := c.s.batch.do(bounded, k, cmd); err != nil {
		return false, c.failure(ctx, err)
	}
	c.health.answered()
	return cmd.Val(), nil
}

// failure notes what err, the error of a call made for ctx, says of
// Redis's health, and returns it naming Redis: an outageError when Redis
// is unavailable (see outage.go), not when the caller gave up first.
func (c *ReplayCache) failure(ctx context.Context, err error) error {
	what := "did not answer"
	if _, ok := answeredError(err); ok {
		what = "answered"
	}
	wrapped := fmt.Errorf("mcpredis: DPoP replay cache: Redis %s: %w", what, err)
	if c.health.judge(ctx, err) {
		return outage(wrapped)
	}
	return wrapped
}
