package mcpmw_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// tenantUser is a Caller in a tenant: an AudienceMember.
type tenantUser struct {
	user
	tenant string
}

func (u *tenantUser) InAudience(a string) bool { return a == u.tenant }

// admin is a Caller that may do anything, as an operator's token may.
type admin struct{}

func (admin) Can(mcpmw.Permission) bool { return true }

// listenAuthn admits the test users plus a member of tenant A and one of
// tenant B, both with "read", and an admin.
var listenAuthn = mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
	switch tok := r.Header.Get("Authorization"); tok {
	case "Bearer admin":
		return admin{}, nil
	case "Bearer tenant-a", "Bearer tenant-b":
		t := strings.ToUpper(strings.TrimPrefix(tok, "Bearer tenant-"))
		return &tenantUser{user: user{name: "member of " + t, caps: []mcpmw.Permission{"read"}}, tenant: t}, nil
	}
	return tokenAuthn.Authenticate(r)
})

// listMethods are application methods serving resources and prompts, so
// that every kind of change can be listened to.
func listMethods() []mcpmw.Method {
	empty := func(context.Context, *mcpmw.Request) *mcpmw.Response { return mcpmw.ResultResponse(map[string]any{}) }
	return []mcpmw.Method{
		{Name: "resources/list", Capability: "resources", Handle: empty},
		{Name: "prompts/list", Capability: "prompts", Handle: empty},
	}
}

// listenEnv is a handler with tools, resources and prompts behind a real
// server, its registry and audit spy.
type listenEnv struct {
	h      *mcpmw.Handler
	reg    *mcpmw.Registry
	spy    *spy
	srv    *httptest.Server
	client *http.Client
}

func newListenEnv(t *testing.T, opts *mcpmw.Options) *listenEnv {
	t.Helper()
	return newListenEnvOver(t, "HTTP/1.1", opts)
}

// newListenEnvOver is newListenEnv served over proto (see protocols).
func newListenEnvOver(t *testing.T, proto string, opts *mcpmw.Options) *listenEnv {
	t.Helper()
	return newListenEnvFor(t, proto, listenAuthn, opts)
}

// newListenEnvFor is newListenEnvOver with its own Authenticator, and
// configure for the http.Server (see serveOver).
func newListenEnvFor(t *testing.T, proto string, authn mcpmw.Authenticator, opts *mcpmw.Options, configure ...func(*http.Server)) *listenEnv {
	t.Helper()
	e := &listenEnv{reg: &mcpmw.Registry{}, spy: &spy{}}
	e.reg.AddTools(testTools()...)
	if opts == nil {
		opts = &mcpmw.Options{Methods: listMethods()}
	}
	e.h = mcpmw.New(e.reg, authn, e.spy, opts)
	e.srv, e.client = serveOver(t, proto, e.h, configure...)
	t.Cleanup(e.h.Close) // before srv.Close: the open streams end first
	return e
}

// listenBody is a subscriptions/listen request with the given id and
// notifications member ("" leaves it out).
func listenBody(id, notifications string) string {
	params := meta26
	if notifications != "" {
		params = `"notifications":` + notifications + "," + params
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{` + params + `}}`
}

// sse reads a listen stream frame by frame.
type sse struct {
	resp   *http.Response
	frames chan string // "data: ..." payloads, or ":" for a comment
	cancel context.CancelFunc
}

// listen opens a listen stream as token and returns it once the response
// headers are in.
func (e *listenEnv) listen(t *testing.T, token, id, notifications string) *sse {
	t.Helper()
	return openSSE(t, e.client, e.srv.URL, token, listenBody(id, notifications))
}

// openSSE sends the listen request body to url as token, and returns
// its stream once the response headers are in.
func openSSE(t *testing.T, client *http.Client, url, token, body string) *sse {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := client.Do(mcpPost(ctx, t, url, token, body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"))
	require.NoError(t, err)
	s := &sse{resp: resp, frames: make(chan string, 256), cancel: cancel}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	go func() {
		defer close(s.frames)
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "data: "):
				s.frames <- strings.TrimPrefix(line, "data: ")
			case strings.HasPrefix(line, ":"):
				s.frames <- ":"
			}
		}
	}()
	return s
}

// next returns the next frame, failing the test after patience.
func (s *sse) next(t *testing.T) string {
	t.Helper()
	select {
	case f, ok := <-s.frames:
		require.True(t, ok, "the stream ended")
		return f
	case <-time.After(patience):
		t.Fatalf("no frame within %v", patience)
		return ""
	}
}

// nextEvent returns the next data frame, skipping comments, decoded.
func (s *sse) nextEvent(t *testing.T) map[string]any {
	t.Helper()
	for {
		f := s.next(t)
		if f == ":" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(f), &m), f)
		return m
	}
}

// ended reports whether the stream ends (no more frames) within patience.
func (s *sse) ended(t *testing.T) bool {
	t.Helper()
	for {
		select {
		case f, ok := <-s.frames:
			if !ok {
				return true
			}
			if f != ":" {
				t.Errorf("unexpected frame %s", f)
			}
		case <-time.After(patience):
			return false
		}
	}
}

func subID(t *testing.T, msg map[string]any) any {
	t.Helper()
	var meta map[string]any
	if p, ok := msg["params"].(map[string]any); ok {
		meta, _ = p["_meta"].(map[string]any)
	} else if r, ok := msg["result"].(map[string]any); ok {
		meta, _ = r["_meta"].(map[string]any)
	}
	require.NotNil(t, meta, "no _meta in %v", msg)
	return meta["io.modelcontextprotocol/subscriptionId"]
}

func TestListenAcknowledgesFirstWithTheIDAsSent(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, id string }{
		{"string id", `"sub-1"`},
		{"number id", `42`},
		{"big number id", `12345678901234567890`},
		{"fraction id", `1.50`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newListenEnv(t, nil)
			s := e.listen(t, "reader", tt.id, `{"toolsListChanged":true,"promptsListChanged":false,"resourceSubscriptions":["file:///a"]}`)
			assert.Equal(t, http.StatusOK, s.resp.StatusCode)
			assert.Equal(t, "text/event-stream", s.resp.Header.Get("Content-Type"))
			ack := s.next(t)
			// The id is echoed byte for byte, whatever its type.
			assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]},"_meta":{"io.modelcontextprotocol/subscriptionId":`+tt.id+`}}}`, ack)

			e.h.Close()
			var final struct {
				ID     json.RawMessage
				Result json.RawMessage
			}
			require.NoError(t, json.Unmarshal([]byte(s.next(t)), &final))
			assert.Equal(t, tt.id, string(final.ID))
			assert.JSONEq(t, `{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":`+tt.id+`,"io.modelcontextprotocol/serverInfo":{"name":"mcp-server","version":"0.0.0"}}}`, string(final.Result))
			assert.True(t, s.ended(t))
		})
	}
}

// A listener receives only the kinds it asked for, each tagged with its
// subscription id; resources/updated only for a URI it listed, matched
// exactly.
func TestListenDeliversOnlyWhatWasAskedFor(t *testing.T) {
	t.Parallel()
	e := newListenEnv(t, nil)
	prompts := e.listen(t, "reader", `"p"`, `{"promptsListChanged":true}`)
	uris := e.listen(t, "reader", `"u"`, `{"resourceSubscriptions":["file:///a","file:///b"]}`)
	assert.Equal(t, `{"promptsListChanged":true}`, gjsonNotifications(t, prompts.next(t)))
	assert.Equal(t, `{"resourceSubscriptions":["file:///a","file:///b"]}`, gjsonNotifications(t, uris.next(t)))

	ctx := t.Context()
	for _, ev := range []mcpmw.Event{
		{Method: mcpmw.ToolsListChanged, Permission: "read"},
		{Method: mcpmw.ResourcesListChanged, Permission: "read"},
		{Method: mcpmw.ResourceUpdated, URI: "file:///A", Permission: "read"},
		{Method: mcpmw.ResourceUpdated, URI: "file:///a/", Permission: "read"},
		{Method: mcpmw.ResourceUpdated, URI: "file:///c", Permission: "read"},
		{Method: mcpmw.ResourceUpdated, URI: "file:///b", Permission: "read"},
		{Method: mcpmw.PromptsListChanged, Permission: "read"},
	} {
		require.NoError(t, e.h.Publish(ctx, ev))
	}
	// Events reach a stream in the order published: had anything else
	// leaked, it would come first.
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"p"}}}`, prompts.next(t))
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///b","_meta":{"io.modelcontextprotocol/subscriptionId":"u"}}}`, uris.next(t))
}

// A subscription and an update meet on the URI's normal form, the one view
// resources/read uses (issue 17, defect 2's sibling): every spelling of a
// URI hears its updates, told in the spelling the client subscribed with.
func TestListenMatchesEverySpellingOfAURI(t *testing.T) {
	t.Parallel()
	e := newListenEnv(t, nil)
	s := e.listen(t, "reader", `"u"`, `{"resourceSubscriptions":["docs://%70lan","DOCS://plan","docs://a%2fb"]}`)
	assert.Equal(t, `{"resourceSubscriptions":["docs://%70lan","DOCS://plan","docs://a%2fb"]}`, gjsonNotifications(t, s.next(t)))
	ctx := t.Context()
	for _, uri := range []string{"docs://Plan", "docs://a/b", "Docs://pl%61n", "docs://a%2Fb"} {
		require.NoError(t, e.h.Publish(ctx, mcpmw.Event{Method: mcpmw.ResourceUpdated, URI: uri, Permission: "read"}))
	}
	// docs://Plan is another URI (a path's case is its own) and a%2Fb is
	// not a/b; the two spellings of docs://plan are one subscription.
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"docs://%70lan","_meta":{"io.modelcontextprotocol/subscriptionId":"u"}}}`, s.next(t))
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"docs://a%2fb","_meta":{"io.modelcontextprotocol/subscriptionId":"u"}}}`, s.next(t))
}

// gjsonNotifications returns params.notifications of an acknowledgement.
func gjsonNotifications(t *testing.T, frame string) string {
	t.Helper()
	var ack struct {
		Method string
		Params struct{ Notifications json.RawMessage }
	}
	require.NoError(t, json.Unmarshal([]byte(frame), &ack), frame)
	require.Equal(t, "notifications/subscriptions/acknowledged", ack.Method)
	return string(ack.Params.Notifications)
}

// Only what the endpoint serves is acknowledged: an endpoint with tools
// alone honours toolsListChanged and nothing else.
func TestListenAcknowledgesOnlyServedKinds(t *testing.T) {
	t.Parallel()
	e := newListenEnv(t, &mcpmw.Options{})
	s := e.listen(t, "reader", "1", `{"toolsListChanged":true,"resourcesListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["file:///a"],"somethingNew":true}`)
	assert.Equal(t, `{"toolsListChanged":true}`, gjsonNotifications(t, s.next(t)))
	s2 := e.listen(t, "reader", "2", `{}`)
	assert.Equal(t, `{}`, gjsonNotifications(t, s2.next(t)))
	recs := e.spy.records()
	require.Len(t, recs, 2)
	assert.ElementsMatch(t, []string{"listen: toolsListChanged", "listen: nothing"}, []string{recs[0].Summary, recs[1].Summary})
}

// A listener hears an event only when its caller holds the event's
// permission and, for an event with an Audience, is a member of it.
func TestListenFiltersByPermissionAndAudience(t *testing.T) {
	t.Parallel()
	e := newListenEnv(t, nil)
	a := e.listen(t, "tenant-a", `"a"`, `{"toolsListChanged":true,"resourceSubscriptions":["db://orders/7"]}`)
	b := e.listen(t, "tenant-b", `"b"`, `{"toolsListChanged":true,"resourceSubscriptions":["db://orders/7"]}`)
	plain := e.listen(t, "writer", `"w"`, `{"toolsListChanged":true,"resourceSubscriptions":["db://orders/7"]}`)
	for _, s := range []*sse{a, b, plain} {
		// The acknowledgement honours the URI whether or not the caller may
		// read it: it tells no one what exists.
		assert.Equal(t, `{"toolsListChanged":true,"resourceSubscriptions":["db://orders/7"]}`, gjsonNotifications(t, s.next(t)))
	}
	ctx := t.Context()
	for _, ev := range []mcpmw.Event{
		{Method: mcpmw.ResourceUpdated, URI: "db://orders/7", Permission: "read", Audience: "B"}, // B's change
		{Method: mcpmw.ToolsListChanged, Permission: "write"},                                    // only writer may see it
		{Method: mcpmw.ResourceUpdated, URI: "db://orders/7", Permission: "read", Audience: "A"}, // A's own
		{Method: mcpmw.ToolsListChanged, Permission: "read"},                                     // everyone's
	} {
		require.NoError(t, e.h.Publish(ctx, ev))
	}
	// A: its own update, then the shared change; never B's.
	ev := a.nextEvent(t)
	assert.Equal(t, mcpmw.ResourceUpdated, ev["method"])
	assert.Equal(t, "db://orders/7", ev["params"].(map[string]any)["uri"])
	assert.Equal(t, "a", subID(t, ev))
	assert.Equal(t, mcpmw.ToolsListChanged, a.nextEvent(t)["method"])
	// B: its update, then the shared change.
	assert.Equal(t, mcpmw.ResourceUpdated, b.nextEvent(t)["method"])
	assert.Equal(t, mcpmw.ToolsListChanged, b.nextEvent(t)["method"])
	// writer is no AudienceMember: no audience event ever; it holds write.
	// Its two tools changes may come as one: list_changed is coalesced.
	assert.Equal(t, mcpmw.ToolsListChanged, plain.nextEvent(t)["method"])
	e.h.Close()
	for name, s := range map[string]*sse{"a": a, "b": b, "writer": plain} {
		assert.Equal(t, []string{"result"}, untilResult(t, s, mcpmw.ToolsListChanged), name)
	}
}

// An audience narrows a permission, never replaces it: a member of tenant
// A (InAudience("A") true) who lacks an event's permission does not hear
// it, and one who holds the permission does not hear an event for another
// audience; nor a registry change it may not see. Only the event meant for
// it, with its permission, reaches it.
func TestListenAudienceNeedsPermissionToo(t *testing.T) {
	t.Parallel()
	e := newListenEnv(t, nil)
	s := e.listen(t, "tenant-a", `"a"`, `{"toolsListChanged":true,"resourcesListChanged":true,"promptsListChanged":true,"resourceSubscriptions":["db://orders/7"]}`)
	s.next(t)
	ctx := t.Context()
	for _, ev := range []mcpmw.Event{
		{Method: mcpmw.ToolsListChanged, Permission: "write", Audience: "A"},                      // A's, but needs write
		{Method: mcpmw.ResourceUpdated, URI: "db://orders/7", Permission: "write", Audience: "A"}, // likewise
		{Method: mcpmw.ResourcesListChanged, Permission: "read", Audience: "B"},                   // read, but B's
		{Method: mcpmw.ResourceUpdated, URI: "db://orders/7", Permission: "read", Audience: "B"},  // likewise
	} {
		require.NoError(t, e.h.Publish(ctx, ev))
	}
	noop := func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.TextResult(""), nil
	}
	e.reg.AddTools(mcpmw.Tool{Name: "writers_only", Permission: "write", Call: noop})
	require.NoError(t, e.h.Publish(ctx, mcpmw.Event{Method: mcpmw.PromptsListChanged, Permission: "read", Audience: "A"}))
	assert.Equal(t, mcpmw.PromptsListChanged, s.nextEvent(t)["method"], "the one event for A with a permission A holds")
	e.h.Close()
	assert.Equal(t, []string{"result"}, untilResult(t, s, ""), "and nothing else")
}

// explosive is a caller whose Can panics when asked about "explodes".
type explosive struct{ user }

func (e *explosive) Can(p mcpmw.Permission) bool {
	if p == "explodes" {
		panic("permission store unreachable")
	}
	return e.user.Can(p)
}

// A listening caller whose check panics, asked on the publisher's
// goroutine, is taken to say no: the panic is logged and reaches neither
// the publisher nor the other listeners, and its own stream goes on.
func TestListenCallerPanicIsContained(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		if r.Header.Get("Authorization") == "Bearer explosive" {
			return &explosive{user: user{name: "explosive", caps: []mcpmw.Permission{"read"}}}, nil
		}
		return listenAuthn.Authenticate(r)
	})
	e := newListenEnvFor(t, "HTTP/1.1", authn, &mcpmw.Options{Logger: newTextLogger(logs)})
	boom := e.listen(t, "explosive", "1", `{"toolsListChanged":true}`)
	calm := e.listen(t, "admin", "2", `{"toolsListChanged":true}`)
	boom.next(t)
	calm.next(t)
	require.NoError(t, e.h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "explodes"}))
	assert.Equal(t, mcpmw.ToolsListChanged, calm.nextEvent(t)["method"], "the other listener hears it")
	assert.Contains(t, logs.String(), "panicked deciding whether it may hear an event")
	assert.Contains(t, logs.String(), "permission store unreachable")
	require.NoError(t, e.h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
	assert.Equal(t, mcpmw.ToolsListChanged, boom.nextEvent(t)["method"], "the panicking caller's stream goes on, told only what it may hear")
	e.h.Close()
	assert.Equal(t, []string{"result"}, untilResult(t, boom, ""))
}

// A stream hears the registry changes of the kinds it asked for only, and
// each once: one it has been told of is not told again when a later change
// wakes it, even one it may not see.
func TestListenRegistryChangesOnceAndOnlyAskedFor(t *testing.T) {
	t.Parallel()
	noop := func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.TextResult(""), nil
	}
	e := newListenEnv(t, nil)
	tools := e.listen(t, "reader", `"t"`, `{"toolsListChanged":true,"resourcesListChanged":true}`)
	both := e.listen(t, "reader", `"b"`, `{"toolsListChanged":true,"promptsListChanged":true}`)
	tools.next(t)
	both.next(t)

	e.reg.AddPrompts(mcpmw.Prompt{Name: "p1", Permission: "read", Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
		return mcpmw.PromptResult{}, nil
	}}) // not asked for by tools
	e.reg.AddTools(mcpmw.Tool{Name: "seen", Permission: "read", Call: noop}) // wakes tools
	assert.Equal(t, mcpmw.ToolsListChanged, tools.nextEvent(t)["method"])
	got := []any{both.nextEvent(t)["method"], both.nextEvent(t)["method"]}
	assert.ElementsMatch(t, []any{mcpmw.PromptsListChanged, mcpmw.ToolsListChanged}, got)

	e.reg.AddTools(mcpmw.Tool{Name: "unseen", Permission: "write", Call: noop}) // wakes both; neither may see it
	ctx := t.Context()
	require.NoError(t, e.h.Publish(ctx, mcpmw.Event{Method: mcpmw.ResourcesListChanged, Permission: "read"}))
	require.NoError(t, e.h.Publish(ctx, mcpmw.Event{Method: mcpmw.PromptsListChanged, Permission: "read"}))
	assert.Equal(t, mcpmw.ResourcesListChanged, tools.nextEvent(t)["method"])
	assert.Equal(t, mcpmw.PromptsListChanged, both.nextEvent(t)["method"])
	e.h.Close()
	assert.Equal(t, []string{"result"}, untilResult(t, tools, ""), "no prompts change, nothing told twice")
	assert.Equal(t, []string{"result"}, untilResult(t, both, ""), "nothing told twice")
}

// A listen request's id is echoed whole on every message of its stream,
// however long it is.
func TestListenLongID(t *testing.T) {
	t.Parallel()
	id := `"` + strings.Repeat("i", 300) + `"`
	e := newListenEnv(t, nil)
	s := e.listen(t, "reader", id, `{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]}`)
	s.next(t)
	ctx := t.Context()
	require.NoError(t, e.h.Publish(ctx, mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
	assert.Equal(t, strings.Repeat("i", 300), subID(t, s.nextEvent(t)))
	require.NoError(t, e.h.Publish(ctx, mcpmw.Event{Method: mcpmw.ResourceUpdated, URI: "file:///a", Permission: "read"}))
	assert.Equal(t, strings.Repeat("i", 300), subID(t, s.nextEvent(t)))
}

// untilResult reads s up to its final result and returns what it read:
// each notification's method, but not repeats of skip (coalescing may or
// may not have merged them), then "result".
func untilResult(t *testing.T, s *sse, skip string) []string {
	t.Helper()
	var got []string
	for {
		m := s.nextEvent(t)
		if _, ok := m["result"]; ok {
			return append(got, "result")
		}
		if method, _ := m["method"].(string); method != skip {
			got = append(got, method)
		}
	}
}

// Adding and removing tools tells the listeners that may see them, without
// anyone calling Publish.
func TestListenHearsRegistryChanges(t *testing.T) {
	t.Parallel()
	notified := &countingNotifier{}
	e := newListenEnv(t, &mcpmw.Options{Notifier: notified})
	s := e.listen(t, "reader", "7", `{"toolsListChanged":true}`)
	s.next(t) // ack
	noop := func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.TextResult(""), nil
	}
	e.reg.AddTools(mcpmw.Tool{Name: "admin_only", Permission: "admin", Call: noop}) // reader may not see it
	e.reg.AddTools(mcpmw.Tool{Name: "new_one", Permission: "read", Call: noop})
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`, s.next(t))
	assert.Equal(t, 0, e.reg.RemoveTools("no_such_tool"))
	e.reg.RemoveTools("admin_only")
	assert.Equal(t, 1, e.reg.RemoveTools("new_one"))
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`, s.next(t))
	assert.Zero(t, notified.published.Load(), "registry changes are this instance's own: not sent through the Notifier")
}

// countingNotifier is a LocalNotifier that counts what is published.
type countingNotifier struct {
	mcpmw.LocalNotifier
	published atomic.Int32
}

func (n *countingNotifier) Publish(ctx context.Context, ev mcpmw.Event) error {
	n.published.Add(1)
	return n.LocalNotifier.Publish(ctx, ev)
}

// Events published on a shared Notifier reach listeners of every handler
// hearing it.
func TestListenSharedNotifier(t *testing.T) {
	t.Parallel()
	bus := mcpmw.NewLocalNotifier()
	one := newListenEnv(t, &mcpmw.Options{Notifier: bus})
	two := newListenEnv(t, &mcpmw.Options{Notifier: bus})
	s := two.listen(t, "reader", "1", `{"toolsListChanged":true}`)
	s.next(t)
	require.NoError(t, one.h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
	assert.Equal(t, mcpmw.ToolsListChanged, s.nextEvent(t)["method"])
}

// An event without a permission, which Handler.Publish refuses, can still
// arrive from a Notifier shared with code that does not check: the hub
// drops it rather than tell every caller.
func TestListenDropsEventsWithoutPermission(t *testing.T) {
	t.Parallel()
	bus := mcpmw.NewLocalNotifier()
	e := newListenEnv(t, &mcpmw.Options{Notifier: bus, Methods: listMethods()})
	// An admin may see anything, so only the hub's own check stands
	// between it and an event that names no permission.
	s := e.listen(t, "admin", "1", `{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]}`)
	s.next(t)
	ctx := t.Context()
	require.NoError(t, bus.Publish(ctx, mcpmw.Event{Method: mcpmw.ToolsListChanged}))
	require.NoError(t, bus.Publish(ctx, mcpmw.Event{Method: "notifications/unknown", Permission: "read"}))
	require.NoError(t, bus.Publish(ctx, mcpmw.Event{Method: mcpmw.ResourceUpdated, URI: "file:///a", Permission: "read"}))
	// Events reach a stream in the order published: had either of the
	// first two leaked, it would come first.
	assert.Equal(t, mcpmw.ResourceUpdated, s.nextEvent(t)["method"])
}

func TestListenKeepAlive(t *testing.T) {
	t.Parallel()
	e := newListenEnv(t, &mcpmw.Options{ListenKeepAlive: 10 * time.Millisecond})
	s := e.listen(t, "reader", "1", `{"toolsListChanged":true}`)
	s.next(t)
	assert.Equal(t, ":", s.next(t))
	assert.Equal(t, ":", s.next(t))

	off := newListenEnv(t, &mcpmw.Options{ListenKeepAlive: -1})
	s = off.listen(t, "reader", "1", `{"toolsListChanged":true}`)
	s.next(t)
	select {
	case f := <-s.frames:
		t.Fatalf("no keep-alive expected, got %q", f)
	case <-time.After(100 * time.Millisecond):
	}
}

// A listen stream with nothing to say outlives the event deadline, over
// HTTP/2 as over HTTP/1.1, whether its keep-alive comes later than the
// deadline or never, and the http.Server's WriteTimeout too (once a
// stream has begun, each write's own deadline replaces it): it still
// delivers an event that comes after, then its result on Close, and is
// recorded once.
func TestListenOutlivesTheEventDeadline(t *testing.T) {
	noLeaks(t)
	for _, tt := range []struct {
		name         string
		keepAlive    time.Duration
		writeTimeout time.Duration
	}{
		{"keep-alive later than the deadline", eventDeadline * 3 / 2, 0},
		{"keep-alive off", -1, 0},
		{"server WriteTimeout shorter than the quiet", -1, quietFor / 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachProtocol(t, func(t *testing.T, proto string) {
				e := newListenEnvFor(t, proto, listenAuthn, &mcpmw.Options{ListenKeepAlive: tt.keepAlive}, withShortEvents, func(srv *http.Server) { srv.WriteTimeout = tt.writeTimeout })
				s := e.listen(t, "reader", "1", `{"toolsListChanged":true}`)
				require.Equal(t, proto, s.resp.Proto[:len(proto)])
				s.next(t) // the acknowledgement
				time.Sleep(quietFor)
				require.NoError(t, e.h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
				assert.Equal(t, mcpmw.ToolsListChanged, s.nextEvent(t)["method"], "the stream is still open %v after its last event", quietFor)
				e.h.Close()
				assert.Equal(t, "complete", s.nextEvent(t)["result"].(map[string]any)["resultType"])
				assert.True(t, s.ended(t))
				assert.Len(t, e.spy.records(), 1)
			})
		})
	}
}

// A listen stream's caller is authenticated once, when it opens: after
// Options.ListenMaxLifetime the stream ends with its result, as the spec
// lets a server end a subscription, so that the client listens again and
// shows its current credentials. Until then it delivers as usual; its end
// adds no record. Negative means no limit.
func TestListenEndsAfterItsMaxLifetime(t *testing.T) {
	noLeaks(t)
	const lifetime = 300 * time.Millisecond
	eachProtocol(t, func(t *testing.T, proto string) {
		e := newListenEnvFor(t, proto, listenAuthn, &mcpmw.Options{ListenKeepAlive: -1, ListenMaxLifetime: lifetime}, withShortEvents)
		opened := time.Now()
		s := e.listen(t, "reader", `"l"`, `{"toolsListChanged":true}`)
		s.next(t)
		require.NoError(t, e.h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
		assert.Equal(t, mcpmw.ToolsListChanged, s.nextEvent(t)["method"])
		final := s.nextEvent(t)
		took := time.Since(opened)
		assert.Equal(t, "complete", final["result"].(map[string]any)["resultType"], "%v", final)
		assert.Equal(t, "l", subID(t, final))
		assert.GreaterOrEqual(t, took, lifetime*9/10, "not before its lifetime, less a tenth at most")
		assert.Less(t, took, lifetime+patience, "by its lifetime, not the default hour (lifetimeOf's spread is TestListenLifetimesAreSpread's)")
		assert.True(t, s.ended(t))
		assert.Len(t, e.spy.records(), 1, "recorded once, when it opened")

		unlimited := newListenEnvFor(t, proto, listenAuthn, &mcpmw.Options{ListenKeepAlive: -1, ListenMaxLifetime: -1}, withShortEvents)
		s = unlimited.listen(t, "reader", `"u"`, `{"toolsListChanged":true}`)
		s.next(t)
		time.Sleep(lifetime + lifetime/2)
		require.NoError(t, unlimited.h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
		assert.Equal(t, mcpmw.ToolsListChanged, s.nextEvent(t)["method"], "no limit: still open")
	})
}

// Close ends the streams with their result and refuses new ones;
// registered with RegisterOnShutdown, it lets Shutdown return promptly.
func TestListenCloseOnShutdown(t *testing.T) {
	t.Parallel()
	reg := &mcpmw.Registry{}
	reg.AddTools(testTools()...)
	a := &spy{}
	h := mcpmw.New(reg, listenAuthn, a, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: h, ReadTimeout: 50 * time.Millisecond}
	srv.RegisterOnShutdown(h.Close)
	go func() { _ = srv.Serve(ln) }()
	e := &listenEnv{h: h, srv: &httptest.Server{URL: "http://" + ln.Addr().String(), Config: srv}, client: &http.Client{}}
	s := e.listen(t, "reader", `"x"`, `{"toolsListChanged":true}`)
	s.next(t)
	time.Sleep(100 * time.Millisecond) // past ReadTimeout: the stream must survive it
	require.NoError(t, h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}))
	assert.Equal(t, mcpmw.ToolsListChanged, s.nextEvent(t)["method"], "the stream outlives the server's ReadTimeout")

	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	require.NoError(t, srv.Shutdown(ctx), "Shutdown returns: an open stream would hold it until its context ends")
	final := s.nextEvent(t)
	assert.Equal(t, "complete", final["result"].(map[string]any)["resultType"])
	assert.Equal(t, "x", subID(t, final))
	assert.True(t, s.ended(t))
	require.Len(t, a.records(), 1, "one record, made when the stream opened")

	// After Close a new listen is refused; other requests are served.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req(listenBody("2", `{"toolsListChanged":true}`), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"))
	assert.Equal(t, http.StatusServiceUnavailable, w.Code, w.Body.String())
	assert.Equal(t, "1", w.Header().Get("Retry-After"))
	w = httptest.NewRecorder()
	h.ServeHTTP(w, modern("3", "tools/list", ""))
	assert.Equal(t, http.StatusOK, w.Code)
	h.Close() // again: a no-op
}

// A client that goes away frees its stream: the handler's goroutine
// returns and the goroutine count comes back to where it was. Not
// parallel, so that other tests' goroutines do not move the count.
func TestListenClientDisconnectFreesTheStream(t *testing.T) {
	reg := &mcpmw.Registry{}
	reg.AddTools(testTools()...)
	h := mcpmw.New(reg, listenAuthn, &spy{}, &mcpmw.Options{ListenKeepAlive: -1})
	defer h.Close()
	var active atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		active.Add(1)
		defer active.Add(-1)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	settle := func() int {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
		return runtime.NumGoroutine()
	}
	baseline := settle()

	for range 3 {
		ctx, cancel := context.WithCancel(t.Context())
		r, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(listenBody("1", `{"toolsListChanged":true}`)))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer reader")
		r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "subscriptions/listen")
		resp, err := client.Do(r)
		require.NoError(t, err)
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "event: message\n", line)
		require.EqualValues(t, 1, active.Load())
		cancel() // the client goes away
		resp.Body.Close()
		require.Eventually(t, func() bool { return active.Load() == 0 }, patience, 5*time.Millisecond, "the handler returns")
	}
	// Polled here, not with assert.Eventually, whose own goroutine counts.
	n := settle()
	for deadline := time.Now().Add(patience); n > baseline && time.Now().Before(deadline); {
		n = settle()
	}
	if !assert.LessOrEqual(t, n, baseline, "goroutines back to the baseline") {
		buf := make([]byte, 1<<20)
		t.Log(string(buf[:runtime.Stack(buf, true)]))
	}
}

// blockingWriter is an in-memory ResponseWriter whose writes, after the
// first, wait until released: a client that has stopped reading.
type blockingWriter struct {
	hdr     http.Header
	mu      sync.Mutex
	body    strings.Builder
	writes  int
	release chan struct{}
}

func (w *blockingWriter) Header() http.Header { return w.hdr }
func (w *blockingWriter) WriteHeader(int)     {}
func (w *blockingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes++
	n := w.writes
	w.mu.Unlock()
	if n > 1 {
		<-w.release
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.Write(p)
}
func (w *blockingWriter) Flush()                           {}
func (w *blockingWriter) SetWriteDeadline(time.Time) error { return nil }
func (w *blockingWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.String()
}

// stuckListen serves a listen as token's caller on h, into a writer whose
// writes after the acknowledgement wait until released: a client that has
// stopped reading. It returns once the stream is stuck writing after
// publishing first (the event that gets it stuck), and a channel closed
// when the handler returns.
func stuckListen(t *testing.T, h *mcpmw.Handler, token, id, notifications string, first mcpmw.Event) (*blockingWriter, <-chan struct{}) {
	t.Helper()
	w := &blockingWriter{hdr: http.Header{}, release: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(w, req(listenBody(id, notifications), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen", "Authorization", "Bearer "+token))
	}()
	t.Cleanup(func() {
		h.Close()
		select {
		case <-w.release:
		default:
			close(w.release)
		}
		<-done
	})
	require.Eventually(t, func() bool { return strings.Contains(w.String(), "acknowledged") }, patience, time.Millisecond)
	require.NoError(t, h.Publish(t.Context(), first))
	require.Eventually(t, func() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.writes == 2 }, patience, time.Millisecond, "the stream is stuck writing the event")
	return w, done
}

// published publishes ev n times from another goroutine and fails the
// test if that blocks: a publisher never waits for a listener.
func published(t *testing.T, h *mcpmw.Handler, n int, ev mcpmw.Event) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range n {
			_ = h.Publish(context.Background(), ev)
		}
	}()
	select {
	case <-done:
	case <-time.After(patience): // a blocked Publish would wait for the release, after this
		t.Fatal("Publish blocked on a slow listener")
	}
}

// A listener that falls behind is neither ended nor flooded: while its
// client is not reading, 200 changes of one kind wait as one, which it
// gets once it reads again, and its stream stays open. The publisher never
// waits for it.
func TestListenSlowListenerIsToldOnce(t *testing.T) {
	t.Parallel()
	reg := &mcpmw.Registry{}
	reg.AddTools(testTools()...)
	a := &spy{}
	h := mcpmw.New(reg, listenAuthn, a, &mcpmw.Options{ListenKeepAlive: -1})
	ev := mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}
	w, done := stuckListen(t, h, "reader", `"slow"`, `{"toolsListChanged":true}`, ev)
	published(t, h, 200, ev)
	close(w.release) // the client reads again
	require.Eventually(t, func() bool { return strings.Count(w.String(), "list_changed") == 2 }, patience, time.Millisecond,
		"the event being written, then the 200 that came meanwhile as one")
	select {
	case <-done:
		t.Fatal("the stream ended")
	case <-time.After(50 * time.Millisecond):
	}
	assert.Equal(t, 2, strings.Count(w.String(), "list_changed"), "nothing more")
	h.Close()
	<-done
	assert.True(t, strings.HasSuffix(w.String(), `"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"slow","io.modelcontextprotocol/serverInfo":{"name":"mcp-server","version":"0.0.0"}}}}`+"\n\n"), w.String())
	require.Len(t, a.records(), 1)
}

// Defect 4 of issue 17: another tenant's burst ends a listener's stream.
// Tenant B's client is slow to read when tenant A's application publishes
// 200 events for A's audience: none may take a place in B's queue, so B's
// stream stays open, hears nothing of them (being cut off would tell B
// that something changed elsewhere), and still hears its own.
func TestListenAnotherTenantsBurstLeavesAStreamAlone(t *testing.T) {
	t.Parallel()
	for _, burst := range []mcpmw.Event{
		{Method: mcpmw.ResourcesListChanged, Permission: "read", Audience: "A"},
		{Method: mcpmw.ResourceUpdated, URI: "db://orders/7", Permission: "read", Audience: "A"},
	} {
		t.Run(burst.Method, func(t *testing.T) {
			t.Parallel()
			reg := &mcpmw.Registry{}
			reg.AddTools(testTools()...)
			a := &spy{}
			h := mcpmw.New(reg, listenAuthn, a, &mcpmw.Options{ListenKeepAlive: -1, Methods: listMethods()})
			own := mcpmw.Event{Method: burst.Method, URI: burst.URI, Permission: "read", Audience: "B"}
			w, done := stuckListen(t, h, "tenant-b", `"b"`, `{"resourcesListChanged":true,"resourceSubscriptions":["db://orders/7"]}`, own)
			published(t, h, 200, burst)
			close(w.release)
			require.NoError(t, h.Publish(t.Context(), own))
			require.Eventually(t, func() bool { return strings.Count(w.String(), `"method":"`+own.Method+`"`) == 2 }, patience, time.Millisecond,
				"B's own event, then the next: the stream is still open")
			h.Close()
			<-done
			assert.Equal(t, 2, strings.Count(w.String(), `"method":"notifications/resources/`), "nothing but B's own two: %s", w.String())
			assert.True(t, strings.HasSuffix(w.String(), `"result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"b","io.modelcontextprotocol/serverInfo":{"name":"mcp-server","version":"0.0.0"}}}}`+"\n\n"), w.String())
			require.Len(t, a.records(), 1)
		})
	}
}

// gatedCaller is a Caller whose first check after arm waits for release
// (2×patience at most, longer than any wait of the test that holds it): a
// stream, or a publisher, busy elsewhere at the worst moment.
type gatedCaller struct {
	mcpmw.Caller
	armed   atomic.Bool
	held    chan struct{} // closed when the check is held
	release chan struct{}
}

func newGatedCaller(c mcpmw.Caller) *gatedCaller {
	return &gatedCaller{Caller: c, held: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedCaller) arm() { g.armed.Store(true) }

// waitHeld waits, patience at most, for the check to be held: the tests
// that arm it then make an open stream's caller be asked.
func (g *gatedCaller) waitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-g.held:
	case <-time.After(patience):
		t.Fatal("the armed check was never made")
	}
}

func (g *gatedCaller) hold() {
	if g.armed.CompareAndSwap(true, false) {
		close(g.held)
		select {
		case <-g.release:
		case <-time.After(2 * patience):
		}
	}
}

func (g *gatedCaller) Can(p mcpmw.Permission) bool {
	g.hold()
	return g.Caller.Can(p)
}

func (g *gatedCaller) InAudience(a string) bool {
	g.hold()
	m, ok := g.Caller.(mcpmw.AudienceMember)
	return ok && m.InAudience(a)
}

// The same over real connections, HTTP/2 and HTTP/1.1: B's caller is slow
// to answer the first time it is asked about A's burst, wherever it is
// asked; B's stream stays open and hears only its own event.
func TestListenAnotherTenantsBurstOverTheWire(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			noLeaks(t)
			b := newGatedCaller(&tenantUser{user: user{name: "member of B", caps: []mcpmw.Permission{"read"}}, tenant: "B"})
			authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
				if r.Header.Get("Authorization") == "Bearer gated-b" {
					return b, nil
				}
				return listenAuthn.Authenticate(r)
			})
			e := newListenEnvFor(t, proto, authn, &mcpmw.Options{ListenKeepAlive: -1, Methods: listMethods()})
			s := e.listen(t, "gated-b", `"b"`, `{"resourcesListChanged":true}`)
			s.next(t) // the acknowledgement
			b.arm()
			burst := make(chan struct{})
			go func() {
				defer close(burst)
				for range 200 {
					_ = e.h.Publish(context.Background(), mcpmw.Event{Method: mcpmw.ResourcesListChanged, Permission: "read", Audience: "A"})
				}
			}()
			b.waitHeld(t)
			select { // let the burst run on, if it can
			case <-burst:
			case <-time.After(100 * time.Millisecond):
			}
			close(b.release)
			<-burst
			require.NoError(t, e.h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ResourcesListChanged, Permission: "read", Audience: "B"}))
			ev := s.nextEvent(t)
			assert.Equal(t, mcpmw.ResourcesListChanged, ev["method"], "B's own change, first and alone: %v", ev)
			e.h.Close()
			assert.Equal(t, []string{"result"}, untilResult(t, s, ""))
			assert.True(t, s.ended(t))
			assert.Len(t, e.spy.records(), 1)
		})
	}
}

// 200 Registry.AddTools calls while a listener is busy give it a bounded number
// of tools/list_changed: at least one, at most one more than it was
// writing, and its stream stays open. (Registry changes are checked on the
// stream's own goroutine: the Registry tells the hub under its lock.)
func TestListenRegistryBurstIsCoalesced(t *testing.T) {
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			noLeaks(t)
			c := newGatedCaller(reader)
			authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
				if r.Header.Get("Authorization") == "Bearer gated" {
					return c, nil
				}
				return listenAuthn.Authenticate(r)
			})
			e := newListenEnvFor(t, proto, authn, &mcpmw.Options{ListenKeepAlive: -1})
			s := e.listen(t, "gated", "1", `{"toolsListChanged":true}`)
			s.next(t)
			c.arm()
			noop := func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult(""), nil
			}
			added := make(chan struct{})
			go func() {
				defer close(added)
				for i := range 200 {
					e.reg.AddTools(mcpmw.Tool{Name: fmt.Sprintf("new_%d", i), Permission: "read", Call: noop})
				}
			}()
			c.waitHeld(t)
			select {
			case <-added:
			case <-time.After(patience): // a blocked AddTools would wait for the release, after this
				t.Fatal("Registry.AddTools waited for a listener")
			}
			close(c.release)
			assert.Equal(t, mcpmw.ToolsListChanged, s.nextEvent(t)["method"])
			require.NoError(t, e.h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.PromptsListChanged, Permission: "read"})) // not asked for
			e.h.Close()
			rest := untilResult(t, s, mcpmw.ToolsListChanged)
			assert.Equal(t, []string{"result"}, rest, "at most one more tools/list_changed, then the result")
			assert.True(t, s.ended(t))
			assert.Len(t, e.spy.records(), 1)
		})
	}
}

// subscriptions/listen is a 2026-07-28 method: legacy revisions get
// -32601, and their initialize declares no listChanged or subscribe (there
// is no stream to deliver them on); the legacy GET stays 405.
func TestListenLegacyRevisions(t *testing.T) {
	t.Parallel()
	h, a, _ := newTestHandler(t, &mcpmw.Options{Methods: listMethods()})
	for _, v := range []string{"2025-11-25", "2025-06-18"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, legacy(v, "1", "subscriptions/listen", `"notifications":{"toolsListChanged":true}`))
		assert.Equal(t, mcpmw.CodeMethodNotFound, decode(t, w).Error.Code, v)

		w = httptest.NewRecorder()
		h.ServeHTTP(w, req(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+v+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
		assert.Equal(t, map[string]any{"tools": map[string]any{}, "resources": map[string]any{}, "prompts": map[string]any{}}, decode(t, w).Result["capabilities"], v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "server/discover", ""))
	assert.Equal(t, map[string]any{"tools": map[string]any{"listChanged": true}, "resources": map[string]any{"listChanged": true, "subscribe": true}, "prompts": map[string]any{"listChanged": true}}, decode(t, w).Result["capabilities"])

	r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	r.Header.Set("Accept", "text/event-stream")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusMethodNotAllowed, w.Code)
	assert.Len(t, a.records(), 5, "one per POST; the GET is not audited")
}

// An endpoint with nothing to listen to does not serve the method, nor
// declare listChanged.
func TestListenNotServedWithoutCapabilities(t *testing.T) {
	t.Parallel()
	h := mcpmw.New(nil, tokenAuthn, &spy{}, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req(listenBody("1", `{"toolsListChanged":true}`), "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"))
	assert.Equal(t, http.StatusNotFound, w.Code)
	assert.Equal(t, mcpmw.CodeMethodNotFound, decode(t, w).Error.Code)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "server/discover", ""))
	assert.Equal(t, map[string]any{}, decode(t, w).Result["capabilities"])
}

// Refused listens get the right code and status, a message naming the
// member, and one record each.
func TestListenRefusals(t *testing.T) {
	t.Parallel()
	many := `["` + strings.Repeat(`u","`, 1000) + `u"]`
	for _, tt := range []struct {
		name, notifications string
		hdr                 []string
		status, code        int
		message             string
	}{
		{"missing", "", nil, 200, -32602, "params.notifications is required"},
		{"not an object", `"tools"`, nil, 200, -32602, "params.notifications must be an object, not a string"},
		{"flag not a boolean", `{"toolsListChanged":"yes"}`, nil, 200, -32602, "params.notifications.toolsListChanged must be a boolean, not a string"},
		{"flag null", `{"promptsListChanged":null}`, nil, 200, -32602, "params.notifications.promptsListChanged must be a boolean, not null"},
		{"uris not an array", `{"resourceSubscriptions":"file:///a"}`, nil, 200, -32602, "params.notifications.resourceSubscriptions must be an array of URI strings, not a string"},
		{"uri not a string", `{"resourceSubscriptions":["file:///a",7]}`, nil, 200, -32602, "params.notifications.resourceSubscriptions[1] must be a string, not a number"},
		{"uri too long", `{"resourceSubscriptions":["` + strings.Repeat("x", 2049) + `"]}`, nil, 200, -32602, "params.notifications.resourceSubscriptions[0] is longer than 2048 bytes"},
		{"too many uris", `{"resourceSubscriptions":` + many + `}`, nil, 200, -32602, "lists more than 1000 URIs"},
		{"uri with a stray percent", `{"resourceSubscriptions":["file:///a","file:///100%"]}`, nil, 200, -32602, "params.notifications.resourceSubscriptions[1] is not a URI: "},
		{"uri with a dot segment", `{"resourceSubscriptions":["file:///a/../b"]}`, nil, 200, -32602, "params.notifications.resourceSubscriptions[0] is not a URI: its path holds a '..' segment"},
		{"json only", `{"toolsListChanged":true}`, []string{"Accept", "application/json"}, 406, -32600, "send Accept: text/event-stream"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, a, _ := newTestHandler(t, &mcpmw.Options{Methods: listMethods()})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req(listenBody("9", tt.notifications), append([]string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"}, tt.hdr...)...))
			assert.Equal(t, tt.status, w.Code)
			res := decode(t, w)
			require.NotNil(t, res.Error, w.Body.String())
			assert.Equal(t, tt.code, res.Error.Code)
			assert.Contains(t, res.Error.Message, tt.message)
			assert.Less(t, len(res.Error.Message), 200, "nothing client-sent echoed at length")
			assert.Equal(t, "9", string(res.ID))
			recs := a.records()
			require.Len(t, recs, 1)
			assert.Equal(t, "subscriptions/listen", recs[0].Method)
			assert.Equal(t, tt.code, recs[0].ErrorCode)
		})
	}
}

// A listen is recorded once, when its stream opens, with what it listens
// to; its end adds no record.
func TestListenIsRecordedOnceWhenItOpens(t *testing.T) {
	t.Parallel()
	e := newListenEnv(t, nil)
	s := e.listen(t, "reader", `"r"`, `{"toolsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["a","b"]}`)
	s.next(t)
	recs := e.spy.records()
	require.Len(t, recs, 1, "recorded while open")
	rec := recs[0]
	assert.Equal(t, "subscriptions/listen", rec.Method)
	assert.Equal(t, mcpmw.OutcomeOK, rec.Outcome)
	assert.Equal(t, http.StatusOK, rec.Status)
	assert.Equal(t, `"r"`, rec.RequestID)
	assert.Equal(t, "listen: toolsListChanged, resourcesListChanged, resourceSubscriptions (2 URIs)", rec.Summary)
	e.h.Close()
	s.nextEvent(t)
	assert.True(t, s.ended(t))
	assert.Len(t, e.spy.records(), 1, "no second record at the end")
}

func TestPublishValidatesEvents(t *testing.T) {
	t.Parallel()
	h := mcpmw.New(&mcpmw.Registry{}, tokenAuthn, &spy{}, nil)
	for _, tt := range []struct {
		ev   mcpmw.Event
		want string
	}{
		{mcpmw.Event{Method: "notifications/progress", Permission: "read"}, "is not a change notification"},
		{mcpmw.Event{Method: mcpmw.ToolsListChanged}, "has no Permission"},
		{mcpmw.Event{Method: mcpmw.ResourceUpdated, Permission: "read"}, "has no URI"},
		{mcpmw.Event{Method: mcpmw.ResourceUpdated, URI: "file:///100%", Permission: "read"}, `URI "file:///100%" has no normal form`},
	} {
		err := h.Publish(t.Context(), tt.ev)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tt.want)
		assert.True(t, strings.HasPrefix(err.Error(), "mcpmw: "))
	}
	assert.NoError(t, h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ResourceUpdated, URI: "x", Permission: "read"}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, h.Publish(ctx, mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}), context.Canceled)
}

func TestLocalNotifier(t *testing.T) {
	t.Parallel()
	n := mcpmw.NewLocalNotifier()
	var got1, got2 []string
	cancel1 := n.Subscribe(func(ev mcpmw.Event) { got1 = append(got1, ev.URI) })
	cancel2 := n.Subscribe(func(ev mcpmw.Event) { got2 = append(got2, ev.URI) })
	require.NoError(t, n.Publish(t.Context(), mcpmw.Event{URI: "1"}))
	cancel1()
	cancel1() // twice: a no-op
	require.NoError(t, n.Publish(t.Context(), mcpmw.Event{URI: "2"}))
	cancel2()
	require.NoError(t, n.Publish(t.Context(), mcpmw.Event{URI: "3"}))
	assert.Equal(t, []string{"1"}, got1)
	assert.Equal(t, []string{"1", "2"}, got2)
	var _ mcpmw.Notifier = n
	assert.True(t, errors.Is(n.Publish(canceledContext(), mcpmw.Event{}), context.Canceled))
}

func canceledContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// A listen sent as a notification has nothing to answer on: 202, one
// record, no stream.
func TestListenAsNotification(t *testing.T) {
	t.Parallel()
	h, a, _ := newTestHandler(t, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req(`{"jsonrpc":"2.0","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+meta26+`}}`,
		"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "subscriptions/listen"))
	assert.Equal(t, http.StatusAccepted, w.Code)
	assert.Empty(t, w.Body.String())
	require.Len(t, a.records(), 1)
	assert.Equal(t, mcpmw.OutcomeAccepted, a.records()[0].Outcome)
}

// A middleware that dispatches a listen with a context of its own loses
// the stream the handler opened for it: the listen is answered -32603
// (logged for the operator) and recorded once, rather than hanging.
func TestListenDispatchedWithoutItsStream(t *testing.T) {
	t.Parallel()
	fresh := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(_ context.Context, r *mcpmw.Request) *mcpmw.Response {
			return next.Dispatch(context.Background(), r)
		})
	}
	logs := &syncBuffer{}
	rec := &spy{}
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	h := mcpmw.New(&reg, listenAuthn, rec, &mcpmw.Options{Logger: newTextLogger(logs), Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{fresh}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, modern("1", "subscriptions/listen", `"notifications":{"toolsListChanged":true}`))
	assert.Equal(t, http.StatusInternalServerError, w.Code, w.Body.String())
	assert.Contains(t, w.Body.String(), `"code":-32603`)
	recs := rec.records()
	require.Len(t, recs, 1)
	assert.Equal(t, mcpmw.CodeInternalError, recs[0].ErrorCode)
	assert.Contains(t, logs.String(), "dispatched without its stream")
}

// TestListenCloseDeliversWhatWasQueued: Close ends a stream only once it
// has written what was queued for it before Close (published events and
// Registry changes), then the result.
func TestListenCloseDeliversWhatWasQueued(t *testing.T) {
	t.Parallel()
	reg := &mcpmw.Registry{}
	reg.AddTools(testTools()...)
	a := &spy{}
	h := mcpmw.New(reg, listenAuthn, a, &mcpmw.Options{ListenKeepAlive: -1, Methods: listMethods()})
	w, done := stuckListen(t, h, "reader", `"q"`, `{"toolsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["db://orders/7"]}`,
		mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"})
	require.NoError(t, h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ResourcesListChanged, Permission: "read"}))
	require.NoError(t, h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.ResourceUpdated, URI: "db://orders/7", Permission: "read"}))
	reg.AddTools(mcpmw.Tool{Name: "late", Permission: "read", Call: testTools()[0].Call}) // a Registry change, noted for the stream
	h.Close()
	close(w.release) // the client reads again, after Close
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end")
	}
	var methods []string
	for _, frame := range strings.Split(strings.TrimSpace(w.String()), "\n\n") {
		var msg struct {
			Method string
			Result *struct{ ResultType string }
		}
		require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(frame, "event: message\ndata: ")), &msg), frame)
		if msg.Result != nil {
			methods = append(methods, "result "+msg.Result.ResultType)
			continue
		}
		methods = append(methods, msg.Method)
	}
	assert.Equal(t, []string{"notifications/subscriptions/acknowledged", mcpmw.ToolsListChanged,
		mcpmw.ResourcesListChanged, mcpmw.ResourceUpdated, mcpmw.ToolsListChanged, "result complete"}, methods)
	require.Len(t, a.records(), 1)
}
