package mcpmw_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

type spanKey struct{}

// observerSpy records what an Observer is told, and puts a marker in the
// context Serve returns, as a tracer puts its span.
type observerSpy struct {
	mu     sync.Mutex
	served []string
	done   []mcpmw.CallRecord
	marked []bool // whether Done's context carried Serve's marker
}

func (o *observerSpy) Serve(ctx context.Context, req *mcpmw.Request, start time.Time) context.Context {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.served = append(o.served, req.Method)
	if start.IsZero() || time.Since(start) < 0 {
		panic("Serve got no start time")
	}
	return context.WithValue(ctx, spanKey{}, "span of "+req.Method)
}

func (o *observerSpy) Done(ctx context.Context, r *http.Request, req *mcpmw.Request, rec mcpmw.CallRecord) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.done = append(o.done, rec)
	o.marked = append(o.marked, ctx.Value(spanKey{}) != nil)
}

// The Observer sees every request exactly once when its answer is decided,
// refused ones included (those never audited too), and dispatched ones also
// before they run, with a context that reaches the method.
func TestObserverSeesEveryRequestOnce(t *testing.T) {
	t.Parallel()
	var seen any
	var reg mcpmw.Registry
	reg.AddTools(append(testTools(), mcpmw.Tool{Name: "ctx", Description: "d", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			seen = ctx.Value(spanKey{})
			return mcpmw.TextResult("ok"), nil
		}})...)
	obs := &observerSpy{}
	a := &spy{}
	limited := false
	h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{Observer: obs, Logger: newTextLogger(&syncBuffer{}),
		RateLimit: mcpmw.RateLimiterFunc(func(http.ResponseWriter, *http.Request, string) bool { return limited })})
	get := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	for _, tt := range []struct {
		name           string
		r              *http.Request
		limit          bool
		status         int
		served, marked bool
		audited        bool
	}{
		{"call", modern("1", "tools/call", `"name":"ctx"`), false, 200, true, true, true},
		{"list", legacy("2025-11-25", "1", "tools/list", ""), false, 200, true, true, true},
		{"denied", modern("1", "tools/call", `"name":"write_it"`), false, 403, false, false, true},
		{"unauthenticated", modern("1", "tools/list", "", "Authorization", "Bearer nobody"), false, 401, false, false, true},
		{"parse error", req(`{`), false, 400, false, false, true},
		{"notification", req(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "MCP-Protocol-Version", "2025-11-25"), false, 202, true, true, true},
		{"panic", modern("1", "tools/call", `"name":"panics"`), false, 500, true, true, true},
		{"rate limited", modern("1", "tools/list", ""), true, 429, false, false, false},
		{"GET", get, false, 405, false, false, false},
	} {
		obs.mu.Lock()
		obs.served, obs.done, obs.marked = nil, nil, nil
		obs.mu.Unlock()
		before := len(a.records())
		limited = tt.limit
		w := httptest.NewRecorder()
		h.ServeHTTP(w, tt.r)
		require.Equal(t, tt.status, w.Code, tt.name)
		obs.mu.Lock()
		require.Len(t, obs.done, 1, "%s: exactly one Done", tt.name)
		assert.Equal(t, tt.status, obs.done[0].Status, tt.name)
		assert.Equal(t, tt.served, len(obs.served) == 1, "%s: Serve", tt.name)
		assert.Equal(t, tt.marked, obs.marked[0], "%s: Done gets Serve's context", tt.name)
		obs.mu.Unlock()
		audited := len(a.records()) - before
		if tt.audited {
			assert.Equal(t, 1, audited, tt.name)
		} else {
			assert.Zero(t, audited, tt.name)
		}
	}
	assert.Equal(t, "span of tools/call", seen, "the method runs with the context Serve returned")
}

// A panicking Observer reaches neither the client nor the Auditor.
func TestObserverPanicIsContained(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	a := &spy{}
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{Observer: panicky{}, Logger: newTextLogger(logs)})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "tools/list", ""))
	assert.Equal(t, 200, w.Code)
	assert.Len(t, a.records(), 1)
	assert.Contains(t, logs.String(), "observer panicked")
}

type panicky struct{}

func (panicky) Serve(ctx context.Context, _ *mcpmw.Request, _ time.Time) context.Context { return ctx }
func (panicky) Done(context.Context, *http.Request, *mcpmw.Request, mcpmw.CallRecord)    { panic("boom") }

// With ResourceMetadata set, both challenges tell a client where to learn
// how to get a token (RFC 9728 §5.1).
func TestResourceMetadataInChallenges(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	const url = "https://api.example.com/.well-known/oauth-protected-resource/mcp"
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{ResourceMetadata: url})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "tools/list", "", "Authorization", "Bearer nobody"))
	assert.Equal(t, 401, w.Code)
	assert.Equal(t, `Bearer resource_metadata="`+url+`"`, w.Header().Get("WWW-Authenticate"))
	w = httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "tools/call", `"name":"write_it"`))
	assert.Equal(t, 403, w.Code)
	assert.Equal(t, `Bearer error="insufficient_scope", scope="write", resource_metadata="`+url+`"`, w.Header().Get("WWW-Authenticate"))

	// A token that was read and refused says so.
	expired := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) {
		return nil, fmt.Errorf("token expired: %w", mcpmw.ErrInvalidToken)
	})
	for _, tt := range []struct {
		opts *mcpmw.Options
		want string
	}{
		{&mcpmw.Options{ResourceMetadata: url}, `Bearer error="invalid_token", resource_metadata="` + url + `"`},
		{nil, `Bearer error="invalid_token"`},
	} {
		w = httptest.NewRecorder()
		mcpmw.New(&reg, expired, &spy{}, tt.opts).ServeHTTP(w, modern("1", "tools/list", ""))
		assert.Equal(t, 401, w.Code)
		assert.Equal(t, tt.want, w.Header().Get("WWW-Authenticate"))
	}
}
