package mcpmwtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// member is a caller of one tenant: unlike mcpmwtest.User it is an
// mcpmw.AudienceMember, so events published for its tenant reach it.
type member struct {
	name, tenant string
}

// Can reports whether m holds p: members may read.
func (m *member) Can(p mcpmw.Permission) bool { return p == "read" }

// String returns m's name, for audit records.
func (m *member) String() string { return m.name }

// CallerID returns m's name.
func (m *member) CallerID() string { return m.name }

// InAudience reports whether m belongs to audience, a tenant.
func (m *member) InAudience(audience string) bool { return audience == m.tenant }

// docs are the documents of each tenant, read through docs://{id}.
var docs = map[string]map[string]string{
	"acme":   {"10": "ten", "11": "eleven", "20": "twenty"},
	"globex": {"12": "globex twelve"},
}

// tenantOf returns the caller's tenant, "" for a caller of none.
func tenantOf(c mcpmw.Caller) string {
	if m, ok := c.(*member); ok {
		return m.tenant
	}
	return ""
}

// sortedIDs returns the ids of the tenant's documents starting with prefix.
func sortedIDs(tenant, prefix string) []string {
	var ids []string
	for id := range docs[tenant] {
		if strings.HasPrefix(id, prefix) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// byPrefix is a Completer offering the values that start with what was
// typed.
func byPrefix(values ...string) mcpmw.Completer {
	return func(_ context.Context, _ mcpmw.Caller, req mcpmw.CompletionRequest) (mcpmw.Completion, error) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, req.Value) {
				out = append(out, v)
			}
		}
		return mcpmw.Completion{Values: out, Total: len(out)}, nil
	}
}

// pingTool is a tool anyone with read may call; named differently, it is
// added while clients listen.
func pingTool(name string) mcpmw.Tool {
	return mcpmw.Tool{
		Name: name, Description: "Answers pong.", Permission: "read",
		Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
			return mcpmw.TextResult("pong"), nil
		},
	}
}

// realServer is a real mcpmw.Handler serving a resource, a template with a
// List and a Completer, and a prompt with a Completer, to three callers:
// ann (tenant acme), gus (tenant globex) and pat (a mcpmwtest.User, of no
// tenant). Pages hold two items, so the kit's list methods follow cursors.
func realServer(t *testing.T) (*mcpmwtest.Server, *mcpmw.Handler, *mcpmw.Registry, *mcpmwtest.Recorder) {
	t.Helper()
	reg := &mcpmw.Registry{}
	reg.AddTools(pingTool("ping"))
	reg.AddResources(mcpmw.Resource{
		URI: "app://about", Name: "about", Title: "About", MimeType: "text/plain", Permission: "read",
		Read: func(_ context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "about this server")}, nil
		},
	})
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{
		URITemplate: "docs://{id}", Name: "doc", MimeType: "text/plain", Permission: "read",
		List: func(_ context.Context, c mcpmw.Caller) ([]mcpmw.Resource, error) {
			var out []mcpmw.Resource
			for _, id := range sortedIDs(tenantOf(c), "") {
				out = append(out, mcpmw.Resource{URI: "docs://" + id, Name: "doc " + id, MimeType: "text/plain"})
			}
			return out, nil
		},
		Read: func(_ context.Context, c mcpmw.Caller, uri string, vars map[string]string) ([]mcpmw.ResourceContents, error) {
			text, ok := docs[tenantOf(c)][vars["id"]]
			if !ok {
				return nil, mcpmw.ErrResourceNotFound
			}
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", text)}, nil
		},
		Complete: map[string]mcpmw.Completer{
			"id": func(_ context.Context, c mcpmw.Caller, req mcpmw.CompletionRequest) (mcpmw.Completion, error) {
				ids := sortedIDs(tenantOf(c), req.Value)
				return mcpmw.Completion{Values: ids, Total: len(ids)}, nil
			},
		},
	})
	reg.AddPrompts(mcpmw.Prompt{
		Name: "greet", Title: "Greet", Description: "Greets someone.", Permission: "read",
		Arguments: []mcpmw.PromptArgument{
			{Name: "name", Description: "who", Required: true},
			{Name: "tone", Description: "warm or formal"},
		},
		Get: func(_ context.Context, _ mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
			tone := args["tone"]
			if tone == "" {
				tone = "warm"
			}
			return mcpmw.PromptResult{
				Description: "A " + tone + " greeting",
				Messages: []mcpmw.PromptMessage{
					mcpmw.UserMessage(mcpmw.TextContent("Greet " + args["name"] + " in a " + tone + " tone.")),
					mcpmw.AssistantMessage(mcpmw.TextContent("Hello, " + args["name"] + "!")),
				},
			}, nil
		},
		Complete: map[string]mcpmw.Completer{"name": byPrefix("alice", "albert", "bob")},
	})
	authn := mcpmwtest.Tokens{
		"ann-token": &member{name: "ann", tenant: "acme"},
		"gus-token": &member{name: "gus", tenant: "globex"},
		"pat-token": &mcpmwtest.User{Name: "pat", Permissions: []mcpmw.Permission{"read"}},
	}
	rec := mcpmwtest.NewRecorder()
	h := mcpmw.New(reg, authn, rec, &mcpmw.Options{
		Server:          mcpmw.Implementation{Name: "realserver", Version: "0.0.1"},
		PageSize:        2,
		ListenKeepAlive: time.Hour, // no keep-alive comments in the way
	})
	t.Cleanup(h.Close)
	return mcpmwtest.NewServer(t, h), h, reg, rec
}

// TestRealServerResources runs the kit's resource, prompt and completion
// methods against a real mcpmw.Handler at every revision.
func TestRealServerResources(t *testing.T) {
	t.Parallel()
	for _, rev := range []string{"2026-07-28", "2025-11-25", "2025-06-18"} {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			srv, _, _, rec := realServer(t)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			ann := srv.Client(mcpmwtest.Bearer("ann-token"), mcpmwtest.Revision(rev))

			// resources/list over two-item pages: the resource, then acme's
			// documents from the template's List; none of globex's.
			res, err := ann.ListResources(ctx)
			require.NoError(t, err)
			var uris []string
			for _, r := range res {
				uris = append(uris, r.URI)
			}
			assert.Equal(t, []string{"app://about", "docs://10", "docs://11", "docs://20"}, uris)
			assert.Equal(t, "About", res[0].Title)
			assert.Equal(t, "doc 11", res[2].Name)
			assert.Equal(t, "text/plain", res[2].MimeType)
			assert.JSONEq(t, `{"uri":"docs://11","name":"doc 11","mimeType":"text/plain"}`, string(res[2].Raw))

			gus := srv.Client(mcpmwtest.Bearer("gus-token"), mcpmwtest.Revision(rev))
			res, err = gus.ListResources(ctx)
			require.NoError(t, err)
			require.Len(t, res, 2)
			assert.Equal(t, "docs://12", res[1].URI, "globex sees its own document only")

			// resources/read of the resource and of a document.
			rr, err := ann.ReadResource(ctx, "app://about")
			require.NoError(t, err)
			assert.Equal(t, "about this server", rr.Text())
			assert.Equal(t, http.StatusOK, rr.Status)
			rr, err = ann.ReadResource(ctx, "docs://20")
			require.NoError(t, err)
			if assert.Len(t, rr.Contents, 1) {
				assert.Equal(t, "docs://20", rr.Contents[0].URI)
				assert.Equal(t, "text/plain", rr.Contents[0].MimeType)
				assert.Equal(t, "twenty", rr.Text())
			}

			// Another tenant's document is not found: -32602 with data.uri on
			// 2026-07-28, -32002 on the legacy revisions.
			_, err = ann.ReadResource(ctx, "docs://12")
			var e *mcpmwtest.Error
			require.ErrorAs(t, err, &e)
			if rev == "2026-07-28" {
				assert.Equal(t, mcpmw.CodeInvalidParams, e.Code)
				assert.JSONEq(t, `{"uri":"docs://12"}`, string(e.Data))
			} else {
				assert.Equal(t, mcpmw.CodeResourceNotFound, e.Code)
			}
			assert.Equal(t, http.StatusOK, e.Status)
			last := rec.Last()
			assert.Equal(t, "resources/read", last.Method)
			assert.Equal(t, "docs://12", last.Target)
			assert.Equal(t, e.Code, last.ErrorCode, "audited error code")

			// resources/templates/list.
			tmpls, err := ann.ListResourceTemplates(ctx)
			require.NoError(t, err)
			if assert.Len(t, tmpls, 1) {
				assert.Equal(t, "docs://{id}", tmpls[0].URITemplate)
				assert.Equal(t, "doc", tmpls[0].Name)
			}

			// prompts/list and prompts/get.
			prompts, err := ann.ListPrompts(ctx)
			require.NoError(t, err)
			if assert.Len(t, prompts, 1) {
				assert.Equal(t, "greet", prompts[0].Name)
				assert.Equal(t, []mcpmwtest.PromptArgument{
					{Name: "name", Description: "who", Required: true},
					{Name: "tone", Description: "warm or formal"},
				}, prompts[0].Arguments)
			}
			pr, err := ann.GetPrompt(ctx, "greet", map[string]string{"name": "Alice", "tone": "formal"})
			require.NoError(t, err)
			assert.Equal(t, "A formal greeting", pr.Description)
			if assert.Len(t, pr.Messages, 2) {
				assert.Equal(t, "user", pr.Messages[0].Role)
				assert.Equal(t, "text", pr.Messages[0].Content.Type)
				assert.Equal(t, "Greet Alice in a formal tone.", pr.Messages[0].Content.Text)
				assert.Equal(t, "assistant", pr.Messages[1].Role)
				assert.Equal(t, "Hello, Alice!", pr.Messages[1].Content.Text)
			}
			_, err = ann.GetPrompt(ctx, "greet", nil)
			require.ErrorAs(t, err, &e, "greet without its required argument")
			assert.Equal(t, mcpmw.CodeInvalidParams, e.Code)
			assert.Contains(t, e.Message, "name")

			// completion/complete of a prompt argument and a template
			// variable (the caller's tenant's ids only).
			comp, err := ann.Complete(ctx, mcpmwtest.PromptRef("greet"), "name", "al", nil)
			require.NoError(t, err)
			assert.Equal(t, []string{"alice", "albert"}, comp.Values)
			assert.Equal(t, 2, comp.Total)
			assert.False(t, comp.HasMore)
			comp, err = ann.Complete(ctx, mcpmwtest.TemplateRef("docs://{id}"), "id", "1", map[string]string{"other": "x"})
			require.NoError(t, err)
			assert.Equal(t, []string{"10", "11"}, comp.Values)
			comp, err = gus.Complete(ctx, mcpmwtest.TemplateRef("docs://{id}"), "id", "1", nil)
			require.NoError(t, err)
			assert.Equal(t, []string{"12"}, comp.Values)
			_, err = ann.Complete(ctx, mcpmwtest.PromptRef("no_such_prompt"), "name", "", nil)
			require.ErrorAs(t, err, &e, "an unknown prompt")
			assert.Equal(t, mcpmw.CodeInvalidParams, e.Code)
		})
	}
}

// TestRealServerListen opens subscriptions/listen streams on a real
// mcpmw.Handler: a Registry change reaches every listener, an event
// published for one audience reaches only its members, and Close ends
// every stream with its result.
func TestRealServerListen(t *testing.T) {
	t.Parallel()
	srv, h, reg, _ := realServer(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	filter := mcpmwtest.ListenFilter{ToolsListChanged: true, ResourcesListChanged: true}
	listeners := map[string]*mcpmwtest.Listener{}
	for _, token := range []string{"ann-token", "gus-token", "pat-token"} {
		l, err := srv.Client(mcpmwtest.Bearer(token)).Listen(ctx, filter)
		require.NoError(t, err, "listen as %s", token)
		t.Cleanup(func() { _ = l.Close() })
		assert.Equal(t, http.StatusOK, l.Status)
		assert.Equal(t, filter, l.Acknowledged, "acknowledged filter of %s", token)
		assert.NotEmpty(t, l.ID)
		listeners[token] = l
	}

	// A listen stream is a 2026-07-28 method: a legacy client refuses to
	// send it.
	_, err := srv.Client(mcpmwtest.Bearer("ann-token"), mcpmwtest.Revision("2025-11-25")).Listen(ctx, filter)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2026-07-28")

	next := func(token string) string {
		t.Helper()
		n, err := listeners[token].Next(ctx)
		require.NoError(t, err, "next notification of %s", token)
		var p struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		require.NoError(t, json.Unmarshal(n.Params, &p))
		assert.JSONEq(t, string(listeners[token].ID), string(p.Meta["io.modelcontextprotocol/subscriptionId"]))
		return n.Method
	}

	// Adding a tool tells every caller that may use it.
	reg.AddTools(pingTool("ping2"))
	for _, token := range []string{"ann-token", "gus-token", "pat-token"} {
		assert.Equal(t, mcpmw.ToolsListChanged, next(token), "after reg.Add, %s", token)
	}

	// A resources/list_changed for the audience acme reaches ann only:
	// gus is of another tenant and pat of none. Another reg.AddTools then
	// shows that nothing came to them in between.
	require.NoError(t, h.Publish(ctx, mcpmw.Event{Method: mcpmw.ResourcesListChanged, Permission: "read", Audience: "acme"}))
	reg.AddTools(pingTool("ping3"))
	assert.Equal(t, mcpmw.ResourcesListChanged, next("ann-token"))
	assert.Equal(t, mcpmw.ToolsListChanged, next("ann-token"))
	for _, token := range []string{"gus-token", "pat-token"} {
		assert.Equal(t, mcpmw.ToolsListChanged, next(token), "%s hears nothing of acme's change", token)
	}

	// An event without an audience reaches every caller holding its
	// permission; a bad event is refused before anything is sent.
	require.Error(t, h.Publish(ctx, mcpmw.Event{Method: mcpmw.ResourcesListChanged}), "an event without a permission")
	require.NoError(t, h.Publish(ctx, mcpmw.Event{Method: mcpmw.ResourcesListChanged, Permission: "read"}))
	for _, token := range []string{"ann-token", "gus-token", "pat-token"} {
		assert.Equal(t, mcpmw.ResourcesListChanged, next(token), "an event for everyone, %s", token)
	}

	// Nothing else is pending: Next waits until its context ends.
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = listeners["gus-token"].Next(short)
	stop()
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// Close ends every stream with its result.
	h.Close()
	for token, l := range listeners {
		_, err := l.Next(ctx)
		require.ErrorIs(t, err, io.EOF, "after Close, %s", token)
		var final struct {
			ResultType string                     `json:"resultType"`
			Meta       map[string]json.RawMessage `json:"_meta"`
		}
		require.NoError(t, json.Unmarshal(l.Final, &final))
		assert.Equal(t, "complete", final.ResultType)
		assert.JSONEq(t, string(l.ID), string(final.Meta["io.modelcontextprotocol/subscriptionId"]))
		_, err = l.Next(ctx)
		assert.ErrorIs(t, err, io.EOF, "Next keeps returning io.EOF")
	}

	// New streams are refused once the handler is closed.
	_, err = srv.Client(mcpmwtest.Bearer("ann-token")).Listen(ctx, filter)
	var e *mcpmwtest.Error
	if assert.True(t, errors.As(err, &e), "listen after Close: %v", err) {
		assert.Equal(t, http.StatusServiceUnavailable, e.Status)
	}
}
