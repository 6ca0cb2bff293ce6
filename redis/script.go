package mcpredis

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// A luaScript is one of the package's scripts, sent by its hash so that a
// call costs one round trip.
type luaScript struct {
	src  string
	hash any // its SHA-1, for EVALSHA: a string, boxed once rather than per call
}

func newScript(src string) luaScript {
	return luaScript{src: src, hash: redis.NewScript(src).Hash()}
}

// run runs the script on keys and args, once (noRetry), within ctx, with
// the next batch of b: EVALSHA, and EVAL only when Redis has lost the
// script (a restart, SCRIPT FLUSH), within the same deadline.
func (sc luaScript) run(ctx context.Context, b *batcher, keys []string, args ...any) *redis.Cmd {
	return runAs(ctx, sc, b, redis.NewCmd, keys, args...)
}

// runAs is run, reading the reply with a command made by newCmd (one of
// go-redis's typed commands, which read a reply without boxing it).
func runAs[C redis.Cmder](ctx context.Context, sc luaScript, b *batcher, newCmd func(context.Context, ...any) C, keys []string, args ...any) C {
	argv := evalArgs(sc.hash, keys, args)
	cmd := newCmd(ctx, argv...)
	err := b.do(ctx, keys[0], cmd)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		argv[0], argv[1] = "eval", sc.src // the first command is done with argv
		cmd = newCmd(ctx, argv...)
		err = b.do(ctx, keys[0], cmd)
	}
	if err != nil { // cmd may still be in its batch (ctx done first): the error alone
		cmd = newCmd(ctx)
		cmd.SetErr(err)
	}
	return cmd
}

// evalArgs returns the arguments of EVALSHA hash for keys and args, in a
// slice made once, exactly as long as it needs.
func evalArgs(hash any, keys []string, args []any) []any {
	argv := make([]any, 0, 3+len(keys)+len(args))
	argv = append(argv, "evalsha", hash, len(keys))
	for _, k := range keys {
		argv = append(argv, k)
	}
	return append(argv, args...)
}
