// Package scaling_test is the tested source of the snippet of
// docs/scaling.md.
package scaling_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/internal/redistest"
	"github.com/mcpmw/mcpmw/mcpmwtest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// run serves one instance on l until ctx ends, wired to the Redis at addr
// as the guide shows.
func run(ctx context.Context, addr string, l net.Listener, keys *mcpmw.KeyRing, authn mcpmw.Authenticator, audit mcpmw.Auditor, tools ...mcpmw.Tool) error {
	var reg mcpmw.Registry
	reg.AddTools(tools...)
	// !+wiring
	cfg := mcpredis.Config{Client: redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true}), Prefix: "myapp:"}
	relay, err := mcpredis.NewRelay(ctx, cfg) // subscribed when it returns
	if err != nil {
		return err
	}
	defer relay.Close() // after srv.Shutdown
	h := mcpmw.New(&reg, authn, audit, &mcpmw.Options{
		StateKeys: keys, // the same ring everywhere
		RateLimit: mcpredis.PerIP(cfg, 600, time.Minute),
		Notifier:  mcpredis.NewNotifier(cfg),
		Relay:     relay,
	})
	// !-wiring
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	srv.RegisterOnShutdown(h.Close)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// confirm asks the user to confirm, keeping the call's state in the
// round, and says what it got.
var confirm = mcpmw.Tool{
	Name: "confirm", Permission: "read",
	Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
		ans, err := mcpmw.Ask(ctx, "ok", mcpmw.ElicitForm("Go on?", json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)))
		if err != nil {
			mcpmw.SetRoundState(ctx, []byte("asked"))
			return mcpmw.ToolResult{}, err
		}
		return mcpmw.TextResult(string(mcpmw.RoundState(ctx)) + " " + string(ans)), nil
	},
}

// TestTwoInstancesShareARound seals an input_required round on one
// instance and finishes it on another, both wired as the guide shows: the
// shared key ring opens the other's state.
func TestTwoInstancesShareARound(t *testing.T) {
	rs := redistest.Start(t)
	keys := mcpmw.RandomKeyRing()
	authn := mcpmwtest.Tokens{"ann": &mcpmwtest.User{Name: "ann", Permissions: []mcpmw.Permission{"read"}}}
	ctx, cancel := context.WithCancel(t.Context())
	var urls []string
	errs := make(chan error, 2)
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		urls = append(urls, "http://"+l.Addr().String()+"/")
		go func() { errs <- run(ctx, rs.Addr, l, keys, authn, mcpmwtest.NewRecorder(), confirm) }()
	}
	t.Cleanup(func() {
		cancel()
		for range 2 {
			assert.NoError(t, <-errs)
		}
	})

	elicit := mcpmwtest.Capabilities(map[string]any{"elicitation": map[string]any{}})
	one := mcpmwtest.NewClient(urls[0], mcpmwtest.Bearer("ann"), elicit)
	two := mcpmwtest.NewClient(urls[1], mcpmwtest.Bearer("ann"), elicit)
	call, callCancel := context.WithTimeout(t.Context(), time.Minute)
	defer callCancel()
	first, err := one.Call(call, "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{}})
	require.NoError(t, err)
	var round struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	require.NoError(t, first.Decode(&round))
	require.Equal(t, "input_required", round.ResultType)
	require.NotEmpty(t, round.RequestState)

	res, err := two.Call(call, "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{},
		"inputResponses": map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}},
		"requestState":   round.RequestState})
	require.NoError(t, err)
	assert.Contains(t, string(res.Result), `asked {\"action\":\"accept\"`)
}
