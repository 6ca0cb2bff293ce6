package mcpmw_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// jwtCaller is a Caller as a JWT middleware might build it: a comparable
// struct whose claims, held in an interface, are a map. == on two of them
// panics at run time.
type jwtCaller struct{ claims any }

func (jwtCaller) Can(mcpmw.Permission) bool { return true }

// A notifications/cancelled from a caller that == cannot compare used to
// panic while inflight's lock was held, leaving it locked: every later
// legacy tools/call then hung for good.
func TestLegacyCancelFromAnUncomparableCallerDoesNotWedgeLaterCalls(t *testing.T) {
	t.Parallel()
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	var reg mcpmw.Registry
	reg.Add(blocking(started, ended), testTools()[0])
	authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) {
		return jwtCaller{claims: map[string]any{"sub": "u1"}}, nil
	})
	a := &spy{}
	h := mcpmw.New(&reg, authn, a, nil)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go h.ServeHTTP(httptest.NewRecorder(), legacy("2025-11-25", `"call-1"`, "tools/call", `"name":"wait"`).WithContext(ctx))
	<-started

	w := httptest.NewRecorder()
	h.ServeHTTP(w, req(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1"}}`, "MCP-Protocol-Version", "2025-11-25"))
	assert.Equal(t, http.StatusAccepted, w.Code)

	answered := make(chan int, 1)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, legacy("2025-11-25", "2", "tools/call", `"name":"echo","arguments":{"message":"still here"}`))
		answered <- w.Code
	}()
	select {
	case code := <-answered:
		assert.Equal(t, http.StatusOK, code)
	case <-time.After(5 * time.Second):
		t.Fatal("a later legacy tools/call hung: inflight's lock was left held")
	}
	stop()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the first call never ended")
	}
}

// Callers are the same only by CallerID: two requests authenticated as the
// same session pointer without CallerID cannot cancel each other's calls.
func TestLegacyCancelNeedsCallerID(t *testing.T) {
	t.Parallel()
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	var reg mcpmw.Registry
	reg.Add(blocking(started, ended))
	anon := &struct{ jwtCaller }{}
	authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return anon, nil })
	a := &spy{}
	h := mcpmw.New(&reg, authn, a, nil)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go h.ServeHTTP(httptest.NewRecorder(), legacy("2025-11-25", `"c"`, "tools/call", `"name":"wait"`).WithContext(ctx))
	<-started
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}`, "MCP-Protocol-Version", "2025-11-25"))
	assert.Equal(t, http.StatusAccepted, w.Code)
	select {
	case <-ended:
		t.Fatal("a caller without CallerID cancelled a call")
	case <-time.After(50 * time.Millisecond):
	}
	recs := a.records()
	require.Len(t, recs, 1)
	assert.Contains(t, recs[0].Summary, "no CallerID")
	stop()
	<-ended
}
