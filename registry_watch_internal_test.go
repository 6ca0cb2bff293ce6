package mcpmw

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Handler watches its Registry while it listens and stops when closed,
// so that a Registry shared by many handlers does not keep closed ones (and
// their hubs) alive; the other watchers keep hearing changes.
func TestClosedHandlerStopsWatchingItsRegistry(t *testing.T) {
	t.Parallel()
	var reg Registry
	reg.AddTools(Tool{Name: "t", Permission: "p", Call: func(context.Context, Caller, *Args) (ToolResult, error) { return ToolResult{}, nil }})
	authn := AuthenticatorFunc(func(*http.Request) (Caller, error) { return nil, ErrUnauthorized })
	audit := AuditFunc(func(context.Context, CallRecord) {})
	a := New(&reg, authn, audit, nil)
	b := New(&reg, authn, audit, nil)
	require.Len(t, *reg.watchers.Load(), 2)

	a.Close()
	a.Close() // twice is fine
	ws := *reg.watchers.Load()
	require.Len(t, ws, 1)
	assert.Equal(t, uint64(2), ws[0].id, "b's watcher, the second, is the one left")

	var got []Event
	stop := reg.watch(func(ev Event) { got = append(got, ev) })
	reg.AddTools(Tool{Name: "u", Permission: "q", Call: func(context.Context, Caller, *Args) (ToolResult, error) { return ToolResult{}, nil }})
	assert.Equal(t, []Event{{Method: ToolsListChanged, Permission: "q"}}, got)
	stop()
	b.Close()
	assert.Empty(t, *reg.watchers.Load())
}
