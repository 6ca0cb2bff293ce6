package mcpmw_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// testPrompts are "greet" (an argument "who", required, and an optional
// "tone"), "audit_log" (needs "write") and "fails" whose Get returns the
// error its "kind" argument names.
func testPrompts() []mcpmw.Prompt {
	return []mcpmw.Prompt{
		{Name: "greet", Title: "Greeting", Description: "Greets someone.", Permission: "read",
			Icons: []mcpmw.Icon{{Src: "https://example.com/g.png", MimeType: "image/png"}},
			Arguments: []mcpmw.PromptArgument{
				{Name: "who", Title: "Who", Description: "Whom to greet.", Required: true},
				{Name: "tone"},
			},
			Get: func(_ context.Context, _ mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
				text := "Say hello to " + args["who"]
				if tone, ok := args["tone"]; ok {
					text += ", " + tone
				}
				if extra, ok := args["extra"]; ok {
					text += " (" + extra + ")"
				}
				return mcpmw.PromptResult{Description: "A greeting", Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent(text))}}, nil
			}},
		{Name: "audit_log", Description: "Summarises the audit log.", Permission: "write",
			Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
				return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("Summarise the log."))}}, nil
			}},
		{Name: "fails", Description: "Fails as asked.", Permission: "read",
			Arguments: []mcpmw.PromptArgument{{Name: "kind", Required: true}},
			Get: func(_ context.Context, _ mcpmw.Caller, args map[string]string) (mcpmw.PromptResult, error) {
				switch args["kind"] {
				case "arg":
					return mcpmw.PromptResult{}, &mcpmw.ArgError{Field: "kind", Problem: "is not a kind of failure"}
				case "rpc":
					return mcpmw.PromptResult{}, &mcpmw.Error{Code: mcpmw.CodeInvalidParams, Message: "no such template"}
				case "empty":
					return mcpmw.PromptResult{}, nil
				case "role":
					return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{{Role: "system", Content: mcpmw.TextContent("x")}}}, nil
				case "content":
					return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.Content{Type: "video"})}}, nil
				}
				return mcpmw.PromptResult{}, errors.New("template store: connection refused to 10.0.0.7")
			}},
	}
}

// newPromptHandler serves testTools and testPrompts, with an audit spy and
// a buffer collecting the log.
func newPromptHandler(t *testing.T, opts *mcpmw.Options) (http.Handler, *spy, *syncBuffer) {
	t.Helper()
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	reg.AddPrompts(testPrompts()...)
	logs := &syncBuffer{}
	if opts == nil {
		opts = &mcpmw.Options{}
	}
	opts.Logger = newTextLogger(logs)
	a := &spy{}
	return mcpmw.New(&reg, tokenAuthn, a, opts), a, logs
}

// promptGet builds a 2026-07-28 prompts/get of name with extra params
// members.
func promptGet(name, extra string, hdr ...string) *http.Request {
	params := `"name":"` + name + `"`
	if extra != "" {
		params += "," + extra
	}
	return modern("1", "prompts/get", params, append([]string{"Mcp-Name", name}, hdr...)...)
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

const defaultServerMeta = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-server","version":"0.0.0"}}`

func TestPromptsListEncodingPerRevision(t *testing.T) {
	t.Parallel()
	h, a, _ := newPromptHandler(t, nil)
	greet := `{"name":"greet","title":"Greeting","description":"Greets someone.",%s"arguments":[{"name":"who","title":"Who","description":"Whom to greet.","required":true},{"name":"tone"}]}`
	icons := `"icons":[{"src":"https://example.com/g.png","mimeType":"image/png"}],`
	fails := `{"name":"fails","description":"Fails as asked.","arguments":[{"name":"kind","required":true}]}`
	for _, tt := range []struct {
		name string
		r    *http.Request
		want string
	}{
		{"2026-07-28", modern("1", "prompts/list", ""),
			`{"resultType":"complete","prompts":[` + fmt.Sprintf(greet, icons) + `,` + fails + `],"ttlMs":60000,"cacheScope":"private",` + defaultServerMeta + `}`},
		{"2025-11-25", legacy("2025-11-25", "1", "prompts/list", ""), `{"prompts":[` + fmt.Sprintf(greet, icons) + `,` + fails + `]}`},
		{"2025-06-18 has no icons", legacy("2025-06-18", "1", "prompts/list", ""), `{"prompts":[` + fmt.Sprintf(greet, "") + `,` + fails + `]}`},
	} {
		w := serve(h, tt.r)
		require.Equal(t, 200, w.Code, tt.name)
		assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":`+tt.want+`}`, strings.TrimSpace(w.Body.String()), tt.name)
	}
	recs := a.records()
	require.Len(t, recs, 3)
	for _, rec := range recs {
		assert.Equal(t, "prompts/list", rec.Method)
		assert.Equal(t, mcpmw.OutcomeOK, rec.Outcome)
		assert.Equal(t, "listed 2 prompts", rec.Summary, "the reader does not see audit_log")
	}
}

func TestPromptsListPagination(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	for i := range 7 {
		p := mcpmw.Permission("read")
		if i%2 == 1 {
			p = "write"
		}
		reg.AddPrompts(mcpmw.Prompt{Name: fmt.Sprintf("p%d", i), Description: "d", Permission: p, Get: textPrompt("x")})
	}
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{PageSize: 2})
	walk := func(token string) (names []string) {
		cursor := ""
		for range 10 {
			params := ""
			if cursor != "" {
				params = `"cursor":"` + cursor + `"`
			}
			w := serve(h, modern("1", "prompts/list", params, "Authorization", "Bearer "+token))
			require.Equal(t, 200, w.Code, w.Body.String())
			res := decode(t, w).Result
			assert.Equal(t, "private", res["cacheScope"])
			for _, p := range res["prompts"].([]any) {
				names = append(names, p.(map[string]any)["name"].(string))
			}
			next, ok := res["nextCursor"].(string)
			if !ok {
				return names
			}
			cursor = next
		}
		t.Fatal("pagination did not end")
		return nil
	}
	assert.Equal(t, []string{"p0", "p2", "p4", "p6"}, walk("reader"), "only what the reader may use, in registration order")
	assert.Equal(t, []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6"}, walk("writer"))
	for _, bad := range []string{`"cursor":"!!"`, `"cursor":"dG9vbHM6OTk"`, `"cursor":7`} {
		w := serve(h, modern("1", "prompts/list", bad))
		assert.Equal(t, 200, w.Code, bad)
		assert.Equal(t, mcpmw.CodeInvalidParams, decode(t, w).Error.Code, bad)
	}
}

func textPrompt(text string) func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
	return func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
		return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent(text))}}, nil
	}
}

func TestPromptGet(t *testing.T) {
	t.Parallel()
	h, a, _ := newPromptHandler(t, nil)
	w := serve(h, promptGet("greet", `"arguments":{"who":"Ada","tone":"warmly","extra":"kept"}`))
	require.Equal(t, 200, w.Code)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","description":"A greeting","messages":[`+
		`{"role":"user","content":{"type":"text","text":"Say hello to Ada, warmly (kept)"}}],`+defaultServerMeta+`}}`, strings.TrimSpace(w.Body.String()),
		"no ttlMs or cacheScope on prompts/get; undeclared arguments are passed on")
	w = serve(h, legacy("2025-06-18", "1", "prompts/get", `"name":"greet","arguments":{"who":"Ada"}`))
	require.Equal(t, 200, w.Code)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"description":"A greeting","messages":[`+
		`{"role":"user","content":{"type":"text","text":"Say hello to Ada"}}]}}`, strings.TrimSpace(w.Body.String()))
	recs := a.records()
	require.Len(t, recs, 2)
	assert.Equal(t, mcpmw.OutcomeOK, recs[0].Outcome)
	assert.Equal(t, "got prompt greet: 1 message", recs[0].Summary)
}

// Every content kind in a message, byte for byte, on each revision.
func TestPromptGetEveryContentKind(t *testing.T) {
	t.Parallel()
	prio := 0.5
	var reg mcpmw.Registry
	reg.AddPrompts(mcpmw.Prompt{Name: "all_kinds", Description: "Every content kind.", Permission: "read",
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			link := mcpmw.ResourceLink("file:///notes/3.md", "note 3")
			link.MimeType, link.Size = "text/markdown", 42
			text := mcpmw.TextContent("Look at these:")
			text.Annotations = &mcpmw.ContentAnnotations{Audience: []string{"user"}, Priority: &prio}
			return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{
				mcpmw.UserMessage(text),
				mcpmw.UserMessage(mcpmw.ImageContent([]byte("png"), "image/png")),
				mcpmw.UserMessage(mcpmw.AudioContent([]byte("wav"), "audio/wav")),
				mcpmw.UserMessage(link),
				mcpmw.UserMessage(mcpmw.EmbeddedResource("file:///notes/3.md", "text/markdown", "# Note 3", nil)),
				mcpmw.AssistantMessage(mcpmw.EmbeddedResource("file:///a.bin", "application/octet-stream", "", []byte{0, 1, 2})),
			}}, nil
		}})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	messages := `"messages":[` +
		`{"role":"user","content":{"type":"text","text":"Look at these:","annotations":{"audience":["user"],"priority":0.5}}},` +
		`{"role":"user","content":{"type":"image","data":"cG5n","mimeType":"image/png"}},` +
		`{"role":"user","content":{"type":"audio","data":"d2F2","mimeType":"audio/wav"}},` +
		`{"role":"user","content":{"type":"resource_link","uri":"file:///notes/3.md","name":"note 3","mimeType":"text/markdown","size":42}},` +
		`{"role":"user","content":{"type":"resource","resource":{"uri":"file:///notes/3.md","mimeType":"text/markdown","text":"# Note 3"}}},` +
		`{"role":"assistant","content":{"type":"resource","resource":{"uri":"file:///a.bin","mimeType":"application/octet-stream","blob":"AAEC"}}}]`
	for _, tt := range []struct {
		version string
		r       *http.Request
		want    string
	}{
		{"2026-07-28", promptGet("all_kinds", ""), `{"resultType":"complete",` + messages + `,` + defaultServerMeta + `}`},
		{"2025-11-25", legacy("2025-11-25", "1", "prompts/get", `"name":"all_kinds"`), `{` + messages + `}`},
		{"2025-06-18", legacy("2025-06-18", "1", "prompts/get", `"name":"all_kinds"`), `{` + messages + `}`},
	} {
		t.Run(tt.version, func(t *testing.T) {
			t.Parallel()
			w := serve(h, tt.r)
			require.Equal(t, 200, w.Code)
			assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":`+tt.want+`}`, strings.TrimSpace(w.Body.String()))
		})
	}
}

// Refusals of a prompts/get: each with its code, HTTP status, a message
// naming what to fix, one audit record, and Get run only when it should.
func TestPromptGetRefusals(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		r       *http.Request
		status  int
		code    int
		message string
		outcome mcpmw.Outcome
		logged  string
	}{
		{"unknown prompt", promptGet("nope", ""), 200, mcpmw.CodeInvalidParams, "Unknown prompt: nope", mcpmw.OutcomeError, ""},
		{"unknown prompt, long name capped", promptGet(strings.Repeat("n", 300), ""), 200, mcpmw.CodeInvalidParams,
			"Unknown prompt: " + strings.Repeat("n", 100) + "…", mcpmw.OutcomeError, ""},
		{"no name", modern("1", "prompts/get", `"arguments":{}`), 200, mcpmw.CodeInvalidParams,
			"Invalid params: prompts/get needs params.name, the prompt's name as a string", mcpmw.OutcomeError, ""},
		{"arguments not an object", promptGet("greet", `"arguments":["Ada"]`), 200, mcpmw.CodeInvalidParams,
			"Invalid params: params.arguments must be an object of strings, not an array", mcpmw.OutcomeError, ""},
		{"required argument missing", promptGet("greet", `"arguments":{"tone":"warmly"}`), 200, mcpmw.CodeInvalidParams,
			`Invalid params: prompt "greet" needs argument "who"`, mcpmw.OutcomeError, ""},
		{"no arguments at all", promptGet("greet", ""), 200, mcpmw.CodeInvalidParams,
			`Invalid params: prompt "greet" needs argument "who"`, mcpmw.OutcomeError, ""},
		{"non-string value", promptGet("greet", `"arguments":{"who":"Ada","tone":3}`), 200, mcpmw.CodeInvalidParams,
			`Invalid params: prompt "greet" argument "tone" must be a string, not a number`, mcpmw.OutcomeError, ""},
		{"null value", promptGet("greet", `"arguments":{"who":null}`), 200, mcpmw.CodeInvalidParams,
			`Invalid params: prompt "greet" argument "who" must be a string, not null`, mcpmw.OutcomeError, ""},
		{"duplicate argument", promptGet("greet", `"arguments":{"who":"Ada","who":"Eve"}`), 400, mcpmw.CodeInvalidParams,
			`Invalid params: member '/arguments/who' appears more than once (a JSON pointer into params); send each member once`, mcpmw.OutcomeError, ""},
		{"denied", promptGet("audit_log", `"arguments":{"x":5}`), 403, mcpmw.CodeInvalidParams,
			`Forbidden: the caller may not use prompt "audit_log"`, mcpmw.OutcomeDenied, ""},
		{"Get returns an ArgError", promptGet("fails", `"arguments":{"kind":"arg"}`), 200, mcpmw.CodeInvalidParams,
			`Invalid params: argument "kind" is not a kind of failure`, mcpmw.OutcomeError, ""},
		{"Get returns an Error", promptGet("fails", `"arguments":{"kind":"rpc"}`), 200, mcpmw.CodeInvalidParams,
			"no such template", mcpmw.OutcomeError, ""},
		{"Get fails", promptGet("fails", `"arguments":{"kind":"db"}`), 500, mcpmw.CodeInternalError,
			"Internal error", mcpmw.OutcomeError, "connection refused to 10.0.0.7"},
		{"no messages", promptGet("fails", `"arguments":{"kind":"empty"}`), 500, mcpmw.CodeInternalError,
			"Internal error", mcpmw.OutcomeError, "no messages"},
		{"a role that is neither user nor assistant", promptGet("fails", `"arguments":{"kind":"role"}`), 500, mcpmw.CodeInternalError,
			"Internal error", mcpmw.OutcomeError, `role \"system\"`},
		{"unknown content", promptGet("fails", `"arguments":{"kind":"content"}`), 500, mcpmw.CodeInternalError,
			"Internal error", mcpmw.OutcomeError, `content block type \"video\"`},
		{"legacy unknown prompt", legacy("2025-11-25", "1", "prompts/get", `"name":"nope"`), 200, mcpmw.CodeInvalidParams,
			"Unknown prompt: nope", mcpmw.OutcomeError, ""},
		{"legacy missing argument", legacy("2025-06-18", "1", "prompts/get", `"name":"greet","arguments":{}`), 200, mcpmw.CodeInvalidParams,
			`Invalid params: prompt "greet" needs argument "who"`, mcpmw.OutcomeError, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h, a, logs := newPromptHandler(t, nil)
			w := serve(h, tt.r)
			assert.Equal(t, tt.status, w.Code, w.Body.String())
			res := decode(t, w)
			require.NotNil(t, res.Error, w.Body.String())
			assert.Equal(t, tt.code, res.Error.Code)
			assert.Equal(t, tt.message, res.Error.Message)
			recs := a.records()
			require.Len(t, recs, 1, "exactly one record")
			assert.Equal(t, tt.outcome, recs[0].Outcome)
			assert.Equal(t, "prompts/get", recs[0].Method)
			if tt.outcome == mcpmw.OutcomeDenied {
				assert.Equal(t, `Bearer error="insufficient_scope", scope="write"`, w.Header().Get("WWW-Authenticate"))
				assert.Equal(t, "caller lacks permission write", recs[0].Summary)
			}
			if tt.logged != "" {
				assert.Contains(t, logs.String(), tt.logged, "the cause is logged")
				assert.NotContains(t, w.Body.String(), tt.logged, "and never sent")
			} else {
				assert.NotContains(t, logs.String(), "request failed")
			}
		})
	}
}

// A writer sees and gets audit_log; a reader neither lists it nor learns
// anything about it beyond the 403, even with bad arguments.
func TestPromptPermissionIsTheGate(t *testing.T) {
	t.Parallel()
	h, _, _ := newPromptHandler(t, nil)
	w := serve(h, promptGet("audit_log", "", "Authorization", "Bearer writer"))
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.Contains(t, w.Body.String(), "Summarise the log.")
	w = serve(h, modern("1", "prompts/list", "", "Authorization", "Bearer writer"))
	assert.Contains(t, w.Body.String(), `"name":"audit_log"`)
	w = serve(h, modern("1", "prompts/list", ""))
	assert.NotContains(t, w.Body.String(), "audit_log")

	w = serve(h, legacy("2025-11-25", "1", "prompts/get", `"name":"audit_log","arguments":{"x":1}`))
	assert.Equal(t, 403, w.Code)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Forbidden: the caller may not use prompt \"audit_log\""}}`, strings.TrimSpace(w.Body.String()))
}

// An endpoint whose registry holds no prompt neither declares nor serves
// the capability; one that does declares it in discover and initialize.
func TestPromptsCapability(t *testing.T) {
	t.Parallel()
	var tools mcpmw.Registry
	tools.AddTools(testTools()...)
	bare := mcpmw.New(&tools, tokenAuthn, &spy{}, nil)
	w := serve(bare, modern("1", "prompts/list", ""))
	assert.Equal(t, 404, w.Code)
	assert.Equal(t, mcpmw.CodeMethodNotFound, decode(t, w).Error.Code)
	w = serve(bare, modern("1", "server/discover", ""))
	assert.NotContains(t, decode(t, w).Result["capabilities"], "prompts")

	h, _, _ := newPromptHandler(t, nil)
	w = serve(h, modern("1", "server/discover", ""))
	assert.Contains(t, decode(t, w).Result["capabilities"], "prompts")
	w = serve(h, legacy("2025-11-25", "1", "initialize", `"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}`))
	assert.Contains(t, decode(t, w).Result["capabilities"], "prompts")
}

func TestAddPromptsPanics(t *testing.T) {
	t.Parallel()
	get := textPrompt("x")
	for _, tt := range []struct {
		name string
		p    mcpmw.Prompt
		want string
	}{
		{"bad name", mcpmw.Prompt{Name: "a b", Permission: "read", Get: get}, `mcpmw: prompt name "a b" is invalid`},
		{"no permission", mcpmw.Prompt{Name: "p", Get: get}, `mcpmw: prompt "p" has no Permission`},
		{"no Get", mcpmw.Prompt{Name: "p", Permission: "read"}, `mcpmw: prompt "p" has no Get func`},
		{"unnamed argument", mcpmw.Prompt{Name: "p", Permission: "read", Get: get, Arguments: []mcpmw.PromptArgument{{}}}, `mcpmw: prompt "p" has an argument without a Name`},
		{"argument twice", mcpmw.Prompt{Name: "p", Permission: "read", Get: get, Arguments: []mcpmw.PromptArgument{{Name: "a"}, {Name: "a"}}}, `mcpmw: prompt "p" declares argument "a" twice`},
		{"completer of no argument", mcpmw.Prompt{Name: "p", Permission: "read", Get: get, Complete: map[string]mcpmw.Completer{"a": nil}}, `mcpmw: prompt "p": Complete names "a"`},
		{"nil completer", mcpmw.Prompt{Name: "p", Permission: "read", Get: get, Arguments: []mcpmw.PromptArgument{{Name: "a"}}, Complete: map[string]mcpmw.Completer{"a": nil}}, `mcpmw: prompt "p": the Completer of "a" is nil`},
		{"registered twice", mcpmw.Prompt{Name: "greet", Permission: "read", Get: get}, `mcpmw: prompt "greet" is registered twice`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var reg mcpmw.Registry
			reg.AddPrompts(mcpmw.Prompt{Name: "greet", Permission: "read", Get: get})
			defer func() {
				v := recover()
				require.NotNil(t, v)
				assert.Contains(t, fmt.Sprint(v), tt.want)
			}()
			reg.AddPrompts(tt.p)
		})
	}
}

// A removed prompt is unknown to the next request; a prompt and a tool may
// share a name.
func TestRemovePrompts(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(testTools()...)
	reg.AddPrompts(testPrompts()...)
	reg.AddPrompts(mcpmw.Prompt{Name: "echo", Description: "Shares a tool's name.", Permission: "read", Get: textPrompt("echo")})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	assert.Equal(t, 200, serve(h, promptGet("echo", "")).Code)
	assert.Equal(t, 2, reg.RemovePrompts("greet", "greet", "echo", "nope"))
	assert.Equal(t, 0, reg.RemovePrompts("greet"))
	res := decode(t, serve(h, promptGet("echo", "")))
	require.NotNil(t, res.Error)
	assert.Equal(t, "Unknown prompt: echo", res.Error.Message)
	_, ok := reg.LookupTool("echo")
	assert.True(t, ok, "the tool stays")
	w := serve(h, modern("1", "prompts/list", ""))
	assert.NotContains(t, w.Body.String(), `"greet"`)
	assert.Contains(t, w.Body.String(), `"fails"`)
}

// askingPrompt asks for the context to use, as the conformance scenario
// input-required-result-non-tool-request expects.
var askingPrompt = mcpmw.Prompt{Name: "test_input_required_result_prompt", Description: "Asks for context first.", Permission: "read",
	Get: func(ctx context.Context, _ mcpmw.Caller, _ map[string]string) (mcpmw.PromptResult, error) {
		ans, err := mcpmw.Ask(ctx, "user_context", mcpmw.ElicitForm("What context should the prompt use?",
			[]byte(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)))
		if err != nil {
			mcpmw.SetRoundState(ctx, []byte("round=1"))
			return mcpmw.PromptResult{}, err
		}
		return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{
			mcpmw.UserMessage(mcpmw.TextContent("Context: " + string(ans) + " " + string(mcpmw.RoundState(ctx)))),
		}}, nil
	}}

// Both rounds of a prompt that asks, on 2026-07-28, on the wire.
func TestPromptGetInputRequired(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddPrompts(askingPrompt)
	a := &spy{}
	h := mcpmw.New(&reg, tokenAuthn, a, nil)
	name := askingPrompt.Name
	get := func(extra string) *http.Request {
		body := `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"` + name + `"` + extra + `,` + allCaps + `}}`
		return req(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "prompts/get", "Mcp-Name", name)
	}
	w := serve(h, get(""))
	require.Equal(t, 200, w.Code)
	var first struct{ Result struct{ RequestState string } }
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &first))
	state := first.Result.RequestState
	require.NotEmpty(t, state)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"user_context":{"method":"elicitation/create",`+
		`"params":{"mode":"form","message":"What context should the prompt use?","requestedSchema":{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}}}},`+
		`"requestState":"`+state+`",`+defaultServerMeta+`}}`, strings.TrimSpace(w.Body.String()))

	answer := `,"inputResponses":{"user_context":{"action":"accept","content":{"context":"test context"}}},"requestState":"` + state + `"`
	w = serve(h, get(answer))
	require.Equal(t, 200, w.Code)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","messages":[{"role":"user","content":{"type":"text",`+
		`"text":"Context: {\"action\":\"accept\",\"content\":{\"context\":\"test context\"}} round=1"}}],`+defaultServerMeta+`}}`, strings.TrimSpace(w.Body.String()))

	// The state is bound to the prompt: tampered, it is refused.
	_, _, rpcErr := serveRound(t, h, get(`,"requestState":"`+state+`-TAMPERED"`))
	require.NotNil(t, rpcErr)
	assert.Equal(t, mcpmw.CodeInvalidParams, rpcErr.Code)

	recs := a.records()
	require.Len(t, recs, 3)
	assert.Equal(t, mcpmw.OutcomeInputRequired, recs[0].Outcome)
	assert.Equal(t, "asked the client for 1 input", recs[0].Summary)
	assert.Equal(t, mcpmw.OutcomeOK, recs[1].Outcome)
	assert.Equal(t, "got prompt "+name+": 1 message", recs[1].Summary)
	assert.Equal(t, mcpmw.OutcomeError, recs[2].Outcome)
}

// On the legacy revisions the same prompt asks over the prompts/get's event
// stream, and runs once.
func TestPromptGetAsksOnTheLegacyStream(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddPrompts(askingPrompt)
	aud := &spy{}
	srv := httptest.NewServer(mcpmw.New(&reg, tokenAuthn, aud, &mcpmw.Options{Logger: newTextLogger(&syncBuffer{})}))
	t.Cleanup(srv.Close)
	resp := legacyPost(context.Background(), t, srv.URL, "reader", "2025-11-25",
		`{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"`+askingPrompt.Name+`"}}`)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	stream := bufio.NewReader(resp.Body)
	ask := nextMessage(t, stream)
	assert.Equal(t, "elicitation/create", ask.Method)
	assert.Equal(t, http.StatusAccepted, postAnswer(t, srv.URL, "reader", "2025-11-25",
		answerBody(ask.ID, `"result":{"action":"accept","content":{"context":"legacy"}}`)))
	var final string
	for {
		line, err := stream.ReadString('\n')
		require.NoError(t, err)
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			final = data
			break
		}
	}
	assert.Equal(t, `{"jsonrpc":"2.0","id":7,"result":{"messages":[{"role":"user","content":{"type":"text",`+
		`"text":"Context: {\"action\":\"accept\",\"content\":{\"context\":\"legacy\"}} "}}]}}`, final,
		"the answer reached the prompt; no state on the legacy revisions")
	recs := aud.records()
	require.Len(t, recs, 2)
	assert.Equal(t, "prompts/get", recs[1].Method)
	assert.Equal(t, mcpmw.OutcomeOK, recs[1].Outcome)
}

// A required argument sent as the empty string is sent: present, not
// missing (the client may mean "nobody in particular"); only an absent one
// is refused, and an optional one sent empty reaches Get as "" too.
func TestPromptRequiredArgumentMayBeEmpty(t *testing.T) {
	t.Parallel()
	h, a, _ := newPromptHandler(t, nil)
	w := serve(h, legacy("2025-11-25", "1", "prompts/get", `"name":"greet","arguments":{"who":"","tone":""}`))
	require.Equal(t, 200, w.Code, w.Body.String())
	assert.Contains(t, w.Body.String(), `"text":"Say hello to , "`, "both reached Get, empty")
	w = serve(h, legacy("2025-11-25", "2", "prompts/get", `"name":"greet","arguments":{"tone":""}`))
	assert.Contains(t, w.Body.String(), `needs argument \"who\"`, "absent is missing")
	require.Len(t, a.records(), 2)
	assert.Equal(t, mcpmw.OutcomeOK, a.records()[0].Outcome)
}
