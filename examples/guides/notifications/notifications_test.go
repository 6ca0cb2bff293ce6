// Package notifications_test is the tested source of the snippet of
// docs/notifications.md.
package notifications_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// session is a user of one tenant; InAudience makes it an AudienceMember.
type session struct {
	name, tenant string
}

func (s *session) Can(p mcpmw.Permission) bool     { return p == "read" || p == "write" }
func (s *session) InAudience(audience string) bool { return audience == s.tenant }
func (s *session) String() string                  { return s.name }
func sessionOf(c mcpmw.Caller) *session            { return c.(*session) }

// notesEndpoint returns an endpoint whose note_create tells the listeners
// of the caller's tenant, and only them, that its resources changed.
func notesEndpoint(authn mcpmw.Authenticator, audit mcpmw.Auditor) *mcpmw.Handler {
	var reg mcpmw.Registry
	var h *mcpmw.Handler
	reg.AddTools(mcpmw.Tool{
		Name: "note_create", Permission: "write",
		Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			s := sessionOf(c)
			// (the note is stored here)
			// !+publish
			// in note_create, after storing the note:
			h.Publish(ctx, mcpmw.Event{Method: mcpmw.ResourcesListChanged, Permission: "read", Audience: s.tenant})
			// !-publish
			return mcpmw.TextResult("stored"), nil
		},
	})
	reg.AddResources(mcpmw.Resource{URI: "app://notes", Name: "notes", Permission: "read",
		Read: func(ctx context.Context, c mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "")}, nil
		}})
	h = mcpmw.New(&reg, authn, audit, nil)
	return h
}

func TestPublishReachesTheTenantOnly(t *testing.T) {
	authn := mcpmwtest.Tokens{
		"ann": &session{name: "ann", tenant: "acme"},
		"bob": &session{name: "bob", tenant: "acme"},
		"eve": &session{name: "eve", tenant: "other"},
	}
	h := notesEndpoint(authn, mcpmwtest.NewRecorder())
	t.Cleanup(h.Close)
	srv := mcpmwtest.NewServer(t, h)

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	listen := func(token string) *mcpmwtest.Listener {
		l, err := srv.Client(mcpmwtest.Bearer(token)).Listen(ctx, mcpmwtest.ListenFilter{ResourcesListChanged: true})
		require.NoError(t, err)
		t.Cleanup(func() { _ = l.Close() })
		return l
	}
	bob, eve := listen("bob"), listen("eve")

	_, err := srv.Client(mcpmwtest.Bearer("ann")).CallTool(ctx, "note_create", nil)
	require.NoError(t, err)
	n, err := bob.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, mcpmw.ResourcesListChanged, n.Method)

	// eve, of another tenant, did not hear ann's note (Publish had asked
	// every listener before ann's call returned): a change of her own
	// tenant is the first thing she hears, and nothing follows it.
	_, err = srv.Client(mcpmwtest.Bearer("eve")).CallTool(ctx, "note_create", nil)
	require.NoError(t, err)
	n, err = eve.Next(ctx)
	require.NoError(t, err)
	assert.Equal(t, mcpmw.ResourcesListChanged, n.Method)
	quiet, stop := context.WithTimeout(ctx, 200*time.Millisecond)
	defer stop()
	_, err = eve.Next(quiet)
	assert.Error(t, err, "eve heard a second change, ann's")
}
