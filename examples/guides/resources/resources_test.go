// Package resources_test is the tested source of the snippets of
// docs/resources-prompts.md.
package resources_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// readme is the text of app://readme.
const readme = "# notes\n\nA notes service.\n"

// A note is one of a tenant's notes.
type note struct {
	ID   string
	Text string
}

// noteStore stands in for the application's own store: notes per tenant.
type noteStore struct {
	mu    sync.Mutex
	notes map[string][]note
}

func (s *noteStore) get(tenant, id string) (note, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.notes[tenant] {
		if n.ID == id {
			return n, true
		}
	}
	return note{}, false
}

func (s *noteStore) list(tenant string) []mcpmw.Resource {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []mcpmw.Resource
	for _, n := range s.notes[tenant] {
		out = append(out, mcpmw.Resource{URI: "notes://" + n.ID, Name: "note " + n.ID, MimeType: "text/plain"})
	}
	return out
}

// session is the application's caller: a user of one tenant.
type session struct {
	name, tenant string
	perms        []mcpmw.Permission
}

func (s *session) Can(p mcpmw.Permission) bool {
	for _, q := range s.perms {
		if q == p {
			return true
		}
	}
	return false
}

func tenantOf(c mcpmw.Caller) string { return c.(*session).tenant }

// register adds the guide's resources, template and prompt to reg.
func register(reg *mcpmw.Registry, store *noteStore) {
	completeNoteIDs := func(ctx context.Context, c mcpmw.Caller, req mcpmw.CompletionRequest) (mcpmw.Completion, error) {
		var ids []string
		for _, r := range store.list(tenantOf(c)) {
			if id := strings.TrimPrefix(r.URI, "notes://"); strings.HasPrefix(id, req.Value) {
				ids = append(ids, id)
			}
		}
		return mcpmw.Completion{Values: ids, Total: len(ids)}, nil
	}
	// !+register
	reg.AddResources(mcpmw.Resource{URI: "app://readme", Name: "readme", MimeType: "text/markdown", Permission: "read",
		Read: func(ctx context.Context, c mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/markdown", readme)}, nil
		}})
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "notes://{id}", Name: "note", MimeType: "text/plain", Permission: "read",
		List: func(ctx context.Context, c mcpmw.Caller) ([]mcpmw.Resource, error) {
			return store.list(tenantOf(c)), nil // this caller's tenant's notes, as notes://<id>
		},
		Read: func(ctx context.Context, c mcpmw.Caller, uri string, vars map[string]string) ([]mcpmw.ResourceContents, error) {
			n, ok := store.get(tenantOf(c), vars["id"])
			if !ok {
				return nil, mcpmw.ErrResourceNotFound // -32602 with data.uri on 2026-07-28, -32002 on the legacy revisions
			}
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", n.Text)}, nil
		},
		Complete: map[string]mcpmw.Completer{"id": completeNoteIDs}})
	reg.AddPrompts(mcpmw.Prompt{Name: "draft_note", Description: "Drafts a note on a topic.", Permission: "write",
		Arguments: []mcpmw.PromptArgument{{Name: "topic", Required: true}}, // missing: -32602 naming "topic"
		Get: func(ctx context.Context, c mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("Draft a note on " + args["topic"]))}}, nil
		}})
	// !-register
}

func TestResourcesAndPrompts(t *testing.T) {
	store := &noteStore{notes: map[string][]note{
		"acme":  {{ID: "1", Text: "buy milk"}, {ID: "12", Text: "call Bob"}},
		"other": {{ID: "2", Text: "not yours"}},
	}}
	var reg mcpmw.Registry
	register(&reg, store)
	authn := mcpmwtest.Tokens{
		"reader-token": &session{name: "reader", tenant: "acme", perms: []mcpmw.Permission{"read"}},
		"writer-token": &session{name: "writer", tenant: "acme", perms: []mcpmw.Permission{"read", "write"}},
	}
	rec := mcpmwtest.NewRecorder()
	srv := mcpmwtest.NewServer(t, mcpmw.New(&reg, authn, rec, nil))

	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			ctx := t.Context()
			reader := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision(rev))
			writer := srv.Client(mcpmwtest.Bearer("writer-token"), mcpmwtest.Revision(rev))

			list, err := reader.ListResources(ctx)
			require.NoError(t, err)
			var uris []string
			for _, r := range list {
				uris = append(uris, r.URI)
			}
			assert.Equal(t, []string{"app://readme", "notes://1", "notes://12"}, uris, "direct resources first, then this tenant's notes")

			res, err := reader.ReadResource(ctx, "app://readme")
			require.NoError(t, err)
			assert.Equal(t, readme, res.Text())
			res, err = reader.ReadResource(ctx, "notes://12")
			require.NoError(t, err)
			assert.Equal(t, "call Bob", res.Text())

			_, err = reader.ReadResource(ctx, "notes://2") // another tenant's
			var e *mcpmwtest.Error
			require.ErrorAs(t, err, &e)
			want := -32602
			if rev != "2026-07-28" {
				want = mcpmw.CodeResourceNotFound
			}
			assert.Equal(t, want, e.Code)
			assert.JSONEq(t, `{"uri":"notes://2"}`, string(e.Data))

			c, err := reader.Complete(ctx, mcpmwtest.TemplateRef("notes://{id}"), "id", "1", nil)
			require.NoError(t, err)
			assert.Equal(t, []string{"1", "12"}, c.Values)

			// The prompt needs write: the reader is refused (403), the
			// writer gets it, and a missing argument is named.
			_, err = reader.GetPrompt(ctx, "draft_note", map[string]string{"topic": "milk"})
			require.ErrorAs(t, err, &e)
			assert.Equal(t, 403, e.Status)
			p, err := writer.GetPrompt(ctx, "draft_note", map[string]string{"topic": "milk"})
			require.NoError(t, err)
			require.Len(t, p.Messages, 1)
			assert.Equal(t, "Draft a note on milk", p.Messages[0].Content.Text)
			_, err = writer.GetPrompt(ctx, "draft_note", nil)
			require.ErrorAs(t, err, &e)
			assert.Equal(t, -32602, e.Code)
			assert.Contains(t, e.Message, "topic")
		})
	}
}
