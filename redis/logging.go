package mcpredis

import (
	"context"
	"fmt"
	"log/slog"
)

// A GoRedisLogger passes go-redis's own log lines to a slog.Logger, at
// Level: go-redis's logger is process-wide (redis.SetLogger), so this
// package never sets it; an application that wants the one line each way
// that the package logs during an outage, and not go-redis's own lines
// (one per failed reconnection of each connection, dozens a minute),
// installs one once, in main, before it makes a client:
//
//	redis.SetLogger(mcpredis.GoRedisLogger{Logger: logger, Level: slog.LevelDebug})
//
// With Level below the handler's, go-redis's lines are dropped; at Debug
// they are there when debugging. redis.SetLogger(&logging.VoidLogger{})
// (package github.com/redis/go-redis/v9/logging) drops them for good.
type GoRedisLogger struct {
	// Logger receives each line, with the attribute component=go-redis.
	// Nil means slog.Default().
	Logger *slog.Logger
	// Level is the level of every line (go-redis gives none).
	Level slog.Level
}

// Printf implements go-redis's logger (redis.SetLogger): it logs the
// formatted line at l.Level, without formatting it when that level is
// not enabled.
func (l GoRedisLogger) Printf(ctx context.Context, format string, v ...any) {
	logger := l.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if !logger.Enabled(ctx, l.Level) {
		return
	}
	logger.LogAttrs(ctx, l.Level, fmt.Sprintf(format, v...), slog.String("component", "go-redis"))
}
