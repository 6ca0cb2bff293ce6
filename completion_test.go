package mcpmw_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// completionRegistry has a prompt and a template with Completers, each
// guarded by its own permission, and a prompt with none.
func completionRegistry() *mcpmw.Registry {
	var reg mcpmw.Registry
	get := func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
		return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("x"))}}, nil
	}
	many := make([]string, 150)
	for i := range many {
		many[i] = "v" + strconv.Itoa(i)
	}
	reg.AddPrompts(
		mcpmw.Prompt{Name: "greet", Description: "d", Permission: "read", Get: get,
			Arguments: []mcpmw.PromptArgument{{Name: "lang"}, {Name: "many"}, {Name: "fail"}, {Name: "reject"}, {Name: "plain"}},
			Complete: map[string]mcpmw.Completer{
				"lang": func(_ context.Context, c mcpmw.Caller, req mcpmw.CompletionRequest) (mcpmw.Completion, error) {
					var out []string
					for _, l := range []string{"en", "es", "fr"} {
						if strings.HasPrefix(l, req.Value) {
							out = append(out, l)
						}
					}
					// Echo what the completer was given, so that the test sees it.
					if req.Context["region"] != "" {
						out = append(out, "region="+req.Context["region"])
					}
					return mcpmw.Completion{Values: out, Total: len(out)}, nil
				},
				"many": func(context.Context, mcpmw.Caller, mcpmw.CompletionRequest) (mcpmw.Completion, error) {
					return mcpmw.Completion{Values: many, Total: len(many)}, nil
				},
				"fail": func(context.Context, mcpmw.Caller, mcpmw.CompletionRequest) (mcpmw.Completion, error) {
					return mcpmw.Completion{}, errors.New("db down: password hunter2")
				},
				"reject": func(context.Context, mcpmw.Caller, mcpmw.CompletionRequest) (mcpmw.Completion, error) {
					return mcpmw.Completion{}, &mcpmw.Error{Code: mcpmw.CodeInvalidParams, Message: "Invalid params: no such thing"}
				},
				"plain": func(context.Context, mcpmw.Caller, mcpmw.CompletionRequest) (mcpmw.Completion, error) {
					return mcpmw.Completion{Values: []string{"a"}, HasMore: true}, nil
				},
			}},
		mcpmw.Prompt{Name: "admin", Description: "d", Permission: "write", Get: get, Arguments: []mcpmw.PromptArgument{{Name: "x"}},
			Complete: map[string]mcpmw.Completer{"x": func(context.Context, mcpmw.Caller, mcpmw.CompletionRequest) (mcpmw.Completion, error) {
				return mcpmw.Completion{Values: []string{"secret"}}, nil
			}}},
	)
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "docs://{id}", Name: "doc", Permission: "read",
		Read: func(_ context.Context, _ mcpmw.Caller, uri string, _ map[string]string) ([]mcpmw.ResourceContents, error) {
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", "x")}, nil
		},
		Complete: map[string]mcpmw.Completer{"id": func(_ context.Context, c mcpmw.Caller, req mcpmw.CompletionRequest) (mcpmw.Completion, error) {
			return mcpmw.Completion{Values: []string{req.Value + "1", req.Value + "2"}}, nil
		}}})
	return &reg
}

// completeReq is a completion/complete with the given params members.
func completeReq(version, params string, hdr ...string) *http.Request {
	if version == mcpmw.LatestVersion {
		return modern("1", "completion/complete", params, hdr...)
	}
	return legacy(version, "1", "completion/complete", params, hdr...)
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	rec := &spy{}
	h := mcpmw.New(completionRegistry(), tokenAuthn, rec, &mcpmw.Options{Logger: newTextLogger(&syncBuffer{})})
	prompt := func(name, arg, value string) string {
		return fmt.Sprintf(`"ref":{"type":"ref/prompt","name":%q},"argument":{"name":%q,"value":%q}`, name, arg, value)
	}
	for _, tc := range []struct {
		name, version, params, want string
		target, summary             string
	}{
		{"prompt argument by prefix", mcpmw.LatestVersion, prompt("greet", "lang", "e"),
			`{"resultType":"complete","completion":{"values":["en","es"],"total":2},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"mcp-server","version":"0.0.0"}}}`, "greet", ""},
		{"legacy shape", mcpmw.Version20251125, prompt("greet", "lang", "f"), `{"completion":{"values":["fr"],"total":1}}`, "greet", "completed lang: 1 value"},
		{"context arguments reach the completer", mcpmw.Version20250618, prompt("greet", "lang", "x") + `,"context":{"arguments":{"region":"eu"}}`,
			`{"completion":{"values":["region=eu"],"total":1}}`, "greet", ""},
		{"no completer for the argument: no values", mcpmw.Version20251125, prompt("greet", "nope", ""), `{"completion":{"values":[]}}`, "greet", ""},
		{"hasMore from the completer", mcpmw.Version20251125, prompt("greet", "plain", ""), `{"completion":{"values":["a"],"hasMore":true}}`, "greet", ""},
		{"template variable", mcpmw.Version20251125, `"ref":{"type":"ref/resource","uri":"docs://{id}"},"argument":{"name":"id","value":"4"}`,
			`{"completion":{"values":["41","42"]}}`, "docs://{id}", "completed id: 2 values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, completeReq(tc.version, tc.params))
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":`+tc.want+`}`, strings.TrimSpace(w.Body.String()))
			last := rec.records()[len(rec.records())-1]
			assert.Equal(t, mcpmw.OutcomeOK, last.Outcome)
			assert.Equal(t, tc.target, last.Target)
			assert.Empty(t, last.Tool, "not a tools/call")
			if tc.summary != "" {
				assert.Equal(t, tc.summary, last.Summary, "the summary agrees in number")
			}
		})
	}
}

// Exactly 100 values are all sent, and nothing says there are more.
func TestCompletionOf100ValuesIsWhole(t *testing.T) {
	t.Parallel()
	values := make([]string, 100)
	for i := range values {
		values[i] = strconv.Itoa(i)
	}
	var reg mcpmw.Registry
	reg.AddPrompts(mcpmw.Prompt{Name: "p", Description: "d", Permission: "read", Arguments: []mcpmw.PromptArgument{{Name: "a"}},
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{}, nil
		},
		Complete: map[string]mcpmw.Completer{"a": func(context.Context, mcpmw.Caller, mcpmw.CompletionRequest) (mcpmw.Completion, error) {
			return mcpmw.Completion{Values: values}, nil
		}}})
	w := httptest.NewRecorder()
	mcpmw.New(&reg, tokenAuthn, &spy{}, nil).ServeHTTP(w, completeReq(mcpmw.Version20251125, `"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}`))
	c := decode(t, w).Result["completion"].(map[string]any)
	assert.Len(t, c["values"], 100)
	assert.NotContains(t, c, "hasMore")
	assert.NotContains(t, c, "total")
}

func TestCompletionCapsAt100(t *testing.T) {
	t.Parallel()
	h := mcpmw.New(completionRegistry(), tokenAuthn, &spy{}, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, completeReq(mcpmw.Version20251125, `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"many","value":""}`))
	a := decode(t, w)
	c := a.Result["completion"].(map[string]any)
	assert.Len(t, c["values"], 100, "the schema's maxItems")
	assert.Equal(t, "v99", c["values"].([]any)[99])
	assert.Equal(t, true, c["hasMore"], "values were cut")
	assert.Equal(t, 150.0, c["total"])
}

func TestCompletionRefusals(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	rec := &spy{}
	h := mcpmw.New(completionRegistry(), tokenAuthn, rec, &mcpmw.Options{Logger: newTextLogger(logs)})
	long := strings.Repeat("p", 300)
	for _, tc := range []struct {
		name, params string
		status, code int
		msg, target  string
		outcome      mcpmw.Outcome
	}{
		{"no ref", `"argument":{"name":"a","value":""}`, 200, -32602, "needs params.ref", "", mcpmw.OutcomeError},
		{"ref not an object", `"ref":"greet","argument":{"name":"a","value":""}`, 200, -32602, "needs params.ref", "", mcpmw.OutcomeError},
		{"unknown ref type", `"ref":{"type":"ref/tool","name":"greet"},"argument":{"name":"a","value":""}`, 200, -32602, `"ref/prompt" or "ref/resource", not 'ref/tool'`, "", mcpmw.OutcomeError},
		{"prompt name not a string", `"ref":{"type":"ref/prompt","name":7},"argument":{"name":"a","value":""}`, 200, -32602, "params.ref.name must be a string", "", mcpmw.OutcomeError},
		{"template uri not a string", `"ref":{"type":"ref/resource"},"argument":{"name":"a","value":""}`, 200, -32602, "params.ref.uri must be a string", "", mcpmw.OutcomeError},
		{"unknown prompt, capped", `"ref":{"type":"ref/prompt","name":"` + long + `"},"argument":{"name":"a","value":""}`, 200, -32602, "Unknown prompt: ppp", strings.Repeat("p", 100) + "…", mcpmw.OutcomeError},
		{"unknown template", `"ref":{"type":"ref/resource","uri":"docs://{nope}"},"argument":{"name":"a","value":""}`, 200, -32602, "Unknown resource template: docs://{nope}", "docs://{nope}", mcpmw.OutcomeError},
		{"denied before anything else", `"ref":{"type":"ref/prompt","name":"admin"},"argument":{"name":7}`, 403, -32602, `may not use prompt "admin"`, "admin", mcpmw.OutcomeDenied},
		{"no argument", `"ref":{"type":"ref/prompt","name":"greet"}`, 200, -32602, "needs params.argument", "greet", mcpmw.OutcomeError},
		{"argument name not a string", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":1,"value":""}`, 200, -32602, "params.argument.name must be a string", "greet", mcpmw.OutcomeError},
		{"argument value missing", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"lang"}`, 200, -32602, "params.argument.value must be a string", "greet", mcpmw.OutcomeError},
		{"context not an object", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"lang","value":""},"context":[]`, 200, -32602, "params.context must be an object", "greet", mcpmw.OutcomeError},
		{"context arguments not an object", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"lang","value":""},"context":{"arguments":1}`, 200, -32602, "params.context.arguments must be an object", "greet", mcpmw.OutcomeError},
		{"context argument not a string", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"lang","value":""},"context":{"arguments":{"region":1}}`, 200, -32602, "params.context.arguments.region must be a string", "greet", mcpmw.OutcomeError},
		{"completer's own error", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"reject","value":""}`, 200, -32602, "Invalid params: no such thing", "greet", mcpmw.OutcomeError},
		{"completer fails: not sent, logged", `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"fail","value":""}`, 500, -32603, "Internal error", "greet", mcpmw.OutcomeError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, completeReq(mcpmw.Version20251125, tc.params))
			assert.Equal(t, tc.status, w.Code, w.Body.String())
			a := decode(t, w)
			require.NotNil(t, a.Error, w.Body.String())
			assert.Equal(t, tc.code, a.Error.Code)
			assert.Contains(t, a.Error.Message, tc.msg)
			assert.NotContains(t, a.Error.Message, "hunter2")
			assert.NotContains(t, a.Error.Message, "secret")
			last := rec.records()[len(rec.records())-1]
			assert.Equal(t, tc.outcome, last.Outcome)
			assert.Equal(t, tc.target, last.Target)
		})
	}
	assert.Contains(t, logs.String(), "hunter2", "the completer's error is logged for the operator")
}

func TestCompletionsCapability(t *testing.T) {
	t.Parallel()
	caps := func(h http.Handler) map[string]any {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, modern("1", "server/discover", ""))
		return decode(t, w).Result["capabilities"].(map[string]any)
	}
	assert.Contains(t, caps(mcpmw.New(completionRegistry(), tokenAuthn, &spy{}, nil)), "completions")

	var reg mcpmw.Registry // a prompt and a template, but no Completer anywhere
	reg.AddPrompts(mcpmw.Prompt{Name: "p", Description: "d", Permission: "read",
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{}, nil
		}})
	reg.AddResourceTemplates(mcpmw.ResourceTemplate{URITemplate: "docs://{id}", Name: "doc", Permission: "read",
		Read: func(context.Context, mcpmw.Caller, string, map[string]string) ([]mcpmw.ResourceContents, error) {
			return nil, nil
		}})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	assert.NotContains(t, caps(h), "completions")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, completeReq(mcpmw.LatestVersion, `"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}`))
	assert.Equal(t, http.StatusNotFound, w.Code)
	assert.Equal(t, mcpmw.CodeMethodNotFound, decode(t, w).Error.Code)
}

// A middleware that points a completion at a prompt the caller may not
// use is refused: the list is a courtesy, the check in the method is the
// gate.
func TestCompletionRewrittenToAForbiddenPrompt(t *testing.T) {
	t.Parallel()
	rewrite := func(next mcpmw.Dispatcher) mcpmw.Dispatcher {
		return mcpmw.DispatcherFunc(func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
			req.Params = []byte(strings.Replace(string(req.Params), `"greet"`, `"admin"`, 1))
			return next.Dispatch(ctx, req)
		})
	}
	h := mcpmw.New(completionRegistry(), tokenAuthn, &spy{}, &mcpmw.Options{Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{rewrite}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, completeReq(mcpmw.Version20251125, `"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"x","value":""}`))
	a := decode(t, w)
	require.NotNil(t, a.Error, w.Body.String())
	assert.Equal(t, mcpmw.CodeInvalidParams, a.Error.Code)
	assert.NotContains(t, w.Body.String(), "secret")
}

// The total a result declares is never below the number of values it
// carries (a Completer may undercount), and is the Completer's own
// otherwise; an unknown total (0) or a nonsensical one is left out.
func TestCompletionTotalIsNeverBelowTheValuesSent(t *testing.T) {
	t.Parallel()
	values := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = "v" + strconv.Itoa(i)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		c         mcpmw.Completion
		sent      int
		wantTotal int // 0: no total
	}{
		{"undercounted", mcpmw.Completion{Values: values(5), Total: 2}, 5, 5},
		{"exact", mcpmw.Completion{Values: values(5), Total: 5}, 5, 5},
		{"more than sent", mcpmw.Completion{Values: values(5), Total: 40}, 5, 40},
		{"undercounted beyond the cap", mcpmw.Completion{Values: values(200), Total: 50}, 100, 100},
		{"more than the cap", mcpmw.Completion{Values: values(200), Total: 150}, 100, 150},
		{"unknown", mcpmw.Completion{Values: values(3)}, 3, 0},
		{"negative", mcpmw.Completion{Values: values(3), Total: -7}, 3, 0},
	} {
		var reg mcpmw.Registry
		reg.AddPrompts(mcpmw.Prompt{Name: "p", Description: "d", Permission: "read", Arguments: []mcpmw.PromptArgument{{Name: "a"}},
			Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
				return mcpmw.PromptResult{}, nil
			},
			Complete: map[string]mcpmw.Completer{"a": func(context.Context, mcpmw.Caller, mcpmw.CompletionRequest) (mcpmw.Completion, error) {
				return tc.c, nil
			}}})
		h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
		for _, version := range allVersions {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, completeReq(version, `"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":""}`))
			c := decode(t, w).Result["completion"].(map[string]any)
			msg := tc.name + " " + version
			require.Len(t, c["values"], tc.sent, msg)
			if tc.wantTotal == 0 {
				assert.NotContains(t, c, "total", msg)
				continue
			}
			assert.Equal(t, float64(tc.wantTotal), c["total"], msg)
			assert.GreaterOrEqual(t, c["total"], float64(tc.sent), msg)
		}
	}
}
