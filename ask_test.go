package mcpmw_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

var confirmForm = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)

// askingTools ask the client for input: "delete" one confirmation (and
// carries the note id in its state), "all" three questions at once.
func askingTools() []mcpmw.Tool {
	return []mcpmw.Tool{
		{Name: "delete", Description: "Deletes after confirming.", Permission: "read",
			Call: func(ctx context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				ans, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Delete note 3?", confirmForm))
				if err != nil {
					mcpmw.SetRoundState(ctx, []byte("note=3"))
					return mcpmw.ToolResult{}, err
				}
				var r struct {
					Action  string
					Content struct{ Confirm bool }
				}
				_ = json.Unmarshal(ans, &r)
				return mcpmw.TextResult(r.Action + " " + string(mcpmw.RoundState(ctx))), nil
			}},
		{Name: "all", Description: "Asks three things at once.", Permission: "read",
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				_, e1 := mcpmw.Ask(ctx, "a", mcpmw.ElicitForm("A?", confirmForm))
				_, e2 := mcpmw.Ask(ctx, "b", mcpmw.Sample("B?", 10))
				_, e3 := mcpmw.Ask(ctx, "c", mcpmw.ListRoots())
				if err := errors.Join(e1, e2, e3); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult("done"), nil
			}},
	}
}

const allCaps = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{}}}`

// askCall builds a 2026-07-28 tools/call with the given extra params and
// client capabilities declaring elicitation, sampling and roots.
func askCall(tool, extra string, hdr ...string) *http.Request {
	if extra != "" {
		extra = "," + extra
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"id":3}` + extra + `,` + allCaps + `}}`
	return req(body, append([]string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", tool}, hdr...)...)
}

type roundAnswer struct {
	ResultType    string `json:"resultType"`
	InputRequests map[string]struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"inputRequests"`
	RequestState string `json:"requestState"`
	Content      []struct{ Text string }
	Meta         map[string]any `json:"_meta"`
}

func serveRound(t *testing.T, h http.Handler, r *http.Request) (int, roundAnswer, *struct{ Code int }) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var msg struct {
		Result roundAnswer
		Error  *struct{ Code int }
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &msg), w.Body.String())
	return w.Code, msg.Result, msg.Error
}

func TestAskRoundTrip(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(askingTools()...)
	a := &spy{}
	keys := mcpmw.RandomKeyRing()
	h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{StateKeys: keys})

	code, res, rpcErr := serveRound(t, h, askCall("delete", ""))
	require.Equal(t, 200, code)
	require.Nil(t, rpcErr)
	assert.Equal(t, "input_required", res.ResultType)
	require.Contains(t, res.InputRequests, "confirm")
	assert.Equal(t, "elicitation/create", res.InputRequests["confirm"].Method)
	assert.JSONEq(t, `{"mode":"form","message":"Delete note 3?","requestedSchema":`+string(confirmForm)+`}`, string(res.InputRequests["confirm"].Params))
	require.NotEmpty(t, res.RequestState)
	assert.Contains(t, res.Meta, "io.modelcontextprotocol/serverInfo")
	assert.Equal(t, mcpmw.Outcome("input_required"), a.records()[0].Outcome)

	answer := `"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}},"extra":{"ignored":true}},"requestState":"` + res.RequestState + `"`
	code, res2, rpcErr := serveRound(t, h, askCall("delete", answer))
	require.Equal(t, 200, code)
	require.Nil(t, rpcErr)
	assert.Equal(t, "complete", res2.ResultType)
	require.Len(t, res2.Content, 1)
	assert.Equal(t, "accept note=3", res2.Content[0].Text, "the answer and the state of the round before")

	// A second instance with the same ring resumes the round; one with
	// another ring refuses it; a ring that rotated still opens it.
	other := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{StateKeys: keys})
	code, res3, _ := serveRound(t, other, askCall("delete", answer))
	assert.Equal(t, 200, code)
	assert.Equal(t, "complete", res3.ResultType)
	stranger := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{StateKeys: mcpmw.RandomKeyRing()})
	_, _, rpcErr = serveRound(t, stranger, askCall("delete", answer))
	require.NotNil(t, rpcErr)
	assert.Equal(t, mcpmw.CodeInvalidParams, rpcErr.Code)
}

func TestAskRefusesStateOfAnotherBinding(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(askingTools()...)
	reg.AddTools(mcpmw.Tool{Name: "delete2", Description: "d", Permission: "read", Call: askingTools()[0].Call})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	_, res, _ := serveRound(t, h, askCall("delete", ""))
	state := `"requestState":"` + res.RequestState + `"`
	for _, tt := range []struct {
		name string
		r    *http.Request
	}{
		{"another caller", askCall("delete", state, "Authorization", "Bearer writer")},
		{"another tool", askCall("delete2", state)},
		{"other arguments", func() *http.Request {
			r := askCall("delete", state)
			body := strings.Replace(readBody(t, r), `"arguments":{"id":3}`, `"arguments":{"id":4}`, 1)
			return req(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "delete")
		}()},
		{"a flipped character", askCall("delete", `"requestState":"`+flip(res.RequestState)+`"`)},
		{"not a string", askCall("delete", `"requestState":7`)},
	} {
		code, _, rpcErr := serveRound(t, h, tt.r)
		assert.Equal(t, 200, code, tt.name)
		require.NotNil(t, rpcErr, tt.name)
		assert.Equal(t, mcpmw.CodeInvalidParams, rpcErr.Code, tt.name)
	}
}

func TestAskSeveralAtOnceAndCapabilities(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(askingTools()...)
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	_, res, _ := serveRound(t, h, askCall("all", ""))
	assert.Equal(t, "input_required", res.ResultType)
	assert.Len(t, res.InputRequests, 3)
	assert.Empty(t, res.RequestState, "no state set: none sent")

	// A client without sampling is never asked for it: -32021.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"all","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"roots":{}}}}}`
	code, _, rpcErr := serveRound(t, h, req(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "all"))
	assert.Equal(t, 400, code)
	require.NotNil(t, rpcErr)
	assert.Equal(t, mcpmw.CodeMissingRequiredClientCapability, rpcErr.Code)

	// An answer that is not an object is an error, not a result.
	code, _, rpcErr = serveRound(t, h, askCall("delete", `"inputResponses":{"confirm":12345}`))
	require.NotNil(t, rpcErr, "status %d", code)
	assert.Equal(t, mcpmw.CodeInvalidParams, rpcErr.Code)
}

func TestAskOutsideACall(t *testing.T) {
	t.Parallel()
	_, err := mcpmw.Ask(context.Background(), "k", mcpmw.ListRoots())
	assert.Error(t, err)
	assert.False(t, mcpmw.ClientSupports(context.Background(), mcpmw.Capability("roots")))
	assert.Nil(t, mcpmw.RoundState(context.Background()))
}

// A caller without a CallerID cannot be given state: it would be anyone's.
func TestAskStateNeedsCallerID(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(askingTools()...)
	anon := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return &struct{ jwtCaller }{}, nil })
	logs := &syncBuffer{}
	h := mcpmw.New(&reg, anon, &spy{}, &mcpmw.Options{Logger: newTextLogger(logs)})
	code, _, rpcErr := serveRound(t, h, askCall("delete", ""))
	assert.Equal(t, 500, code)
	require.NotNil(t, rpcErr)
	assert.Contains(t, logs.String(), "CallerID")
}

func readBody(t *testing.T, r *http.Request) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	return string(b)
}

// flip changes one character of a base64url string.
func flip(s string) string {
	b := []byte(s)
	if b[len(b)/2] == 'A' {
		b[len(b)/2] = 'B'
	} else {
		b[len(b)/2] = 'A'
	}
	return string(b)
}

// The builders' params decode to what they were given, whatever the text
// holds (quotes, newlines, HTML, U+2028).
func TestInputRequestBuildersEncodeTheirValues(t *testing.T) {
	t.Parallel()
	text := "Delete \"it\"?\n<b>&</b>\u2028 é"
	var form struct {
		Mode, Message   string
		RequestedSchema json.RawMessage
	}
	require.NoError(t, json.Unmarshal(mcpmw.ElicitForm(text, confirmForm).Params, &form))
	assert.Equal(t, "form", form.Mode)
	assert.Equal(t, text, form.Message)
	assert.JSONEq(t, string(confirmForm), string(form.RequestedSchema))

	var url struct{ Mode, Message, URL, ElicitationID string }
	require.NoError(t, json.Unmarshal(mcpmw.ElicitURL(text, "https://example.com/?a=1&b=\"2\"", "id\t1").Params, &url))
	assert.Equal(t, struct{ Mode, Message, URL, ElicitationID string }{"url", text, "https://example.com/?a=1&b=\"2\"", "id\t1"}, url)

	var sample struct {
		Messages []struct {
			Role    string
			Content struct{ Type, Text string }
		}
		MaxTokens int
	}
	require.NoError(t, json.Unmarshal(mcpmw.Sample(text, 250).Params, &sample))
	require.Len(t, sample.Messages, 1)
	assert.Equal(t, "user", sample.Messages[0].Role)
	assert.Equal(t, "text", sample.Messages[0].Content.Type)
	assert.Equal(t, text, sample.Messages[0].Content.Text)
	assert.Equal(t, 250, sample.MaxTokens)
	assert.JSONEq(t, `{}`, string(mcpmw.ListRoots().Params))
}

// Params that are not one JSON object (a broken schema, a hand-made
// request) never reach the answer, which copies them verbatim: the tool
// gets an error, the client a -32603, and the request one audit record.
func TestAskRefusesParamsThatAreNotAnObject(t *testing.T) {
	t.Parallel()
	for _, req := range []mcpmw.InputRequest{
		mcpmw.ElicitForm("Go on?", json.RawMessage(`{"type":`)),
		mcpmw.ElicitForm("Go on?", json.RawMessage(`"a string"`)),
		{Method: "elicitation/create", Params: json.RawMessage(`[1]`)},
		{Method: "roots/list"},
	} {
		var reg mcpmw.Registry
		reg.AddTools(mcpmw.Tool{Name: "broken", Description: "Asks with bad params.", Permission: "read",
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				_, err := mcpmw.Ask(ctx, "q", req)
				return mcpmw.ToolResult{}, err
			}})
		logs := &syncBuffer{}
		aud := &spy{}
		h := mcpmw.New(&reg, tokenAuthn, aud, &mcpmw.Options{Logger: newTextLogger(logs)})
		code, _, rpcErr := serveRound(t, h, askCall("broken", ""))
		assert.Equal(t, 500, code, string(req.Params))
		require.NotNil(t, rpcErr)
		assert.Equal(t, mcpmw.CodeInternalError, rpcErr.Code)
		assert.Len(t, aud.records(), 1)
		assert.Contains(t, logs.String(), "are not one JSON object")
	}
}

// State too large to seal (over 16 KiB) fails the round with -32603 and a
// log line saying why, never an answer without its state.
func TestAskStateTooLargeToSeal(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "big", Description: "Keeps too much state.", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			_, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Go on?", confirmForm))
			mcpmw.SetRoundState(ctx, make([]byte, 64<<10))
			return mcpmw.ToolResult{}, err
		}})
	logs := &syncBuffer{}
	aud := &spy{}
	h := mcpmw.New(&reg, tokenAuthn, aud, &mcpmw.Options{Logger: newTextLogger(logs)})
	code, _, rpcErr := serveRound(t, h, askCall("big", ""))
	assert.Equal(t, 500, code)
	require.NotNil(t, rpcErr)
	assert.Equal(t, mcpmw.CodeInternalError, rpcErr.Code)
	require.Len(t, aud.records(), 1)
	assert.Equal(t, mcpmw.OutcomeError, aud.records()[0].Outcome)
	assert.Contains(t, logs.String(), "mcpmw: request failed")
}

// The state is bound to the arguments, not to their spelling: a retry whose
// arguments differ only in spacing resumes the round.
func TestAskStateIgnoresArgumentSpacing(t *testing.T) {
	t.Parallel()
	var reg mcpmw.Registry
	reg.AddTools(askingTools()...)
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, &mcpmw.Options{StateKeys: mcpmw.RandomKeyRing()})
	_, first, _ := serveRound(t, h, askCall("delete", ""))
	require.NotEmpty(t, first.RequestState)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","arguments":{ "id" : 3 },` +
		`"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"` + first.RequestState + `",` + allCaps + `}}`
	code, res, rpcErr := serveRound(t, h, req(body, "MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "delete"))
	require.Nil(t, rpcErr, "status %d", code)
	assert.Equal(t, "complete", res.ResultType)
}

// A tool, prompt or resource read that returns ErrInputRequired without
// having called Ask used to get an input_required result with an empty
// inputRequests: nothing for the client to answer, and a retry loop. It is
// the handler's mistake: -32603, logged, and recorded as such, on every
// revision.
func TestErrInputRequiredWithoutAskIsTheHandlersMistake(t *testing.T) {
	t.Parallel()
	for _, wrong := range []error{mcpmw.ErrInputRequired, fmt.Errorf("need more: %w", mcpmw.ErrInputRequired)} {
		var reg mcpmw.Registry
		reg.AddTools(mcpmw.Tool{Name: "twin", Description: "d", Permission: "read",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.ToolResult{}, wrong
			}})
		reg.AddPrompts(mcpmw.Prompt{Name: "twin", Description: "d", Permission: "read",
			Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
				return mcpmw.PromptResult{}, wrong
			}})
		reg.AddResources(mcpmw.Resource{URI: "twin://r", Name: "twin", Permission: "read",
			Read: func(context.Context, mcpmw.Caller, string) ([]mcpmw.ResourceContents, error) { return nil, wrong }})
		logs := &syncBuffer{}
		a := &spy{}
		h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{Logger: newTextLogger(logs)})
		for _, tc := range []struct{ method, target, kind string }{
			{"tools/call", "twin", "tool"},
			{"prompts/get", "twin", "prompt"},
			{"resources/read", "twin://r", "resource"},
		} {
			member := `"name"`
			if tc.method == "resources/read" {
				member = `"uri"`
			}
			for _, r := range []*http.Request{
				twinRound("/mcp", tc.method, tc.target, "", ""),
				legacy(mcpmw.Version20251125, "1", tc.method, member+`:"`+tc.target+`"`),
			} {
				msg := tc.method + " " + r.Header.Get("MCP-Protocol-Version") + " " + wrong.Error()
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				assert.Equal(t, http.StatusInternalServerError, w.Code, msg)
				assert.NotContains(t, w.Body.String(), "input_required", msg)
				assert.Contains(t, w.Body.String(), `"code":-32603,"message":"Internal error"`, msg)
				recs := a.records()
				rec := recs[len(recs)-1]
				assert.Equal(t, mcpmw.OutcomeError, rec.Outcome, msg)
				assert.Equal(t, tc.target, rec.Target, msg)
				assert.Equal(t, tc.kind+" mistake: returned ErrInputRequired without calling Ask", rec.Summary, msg)
			}
		}
		assert.Equal(t, 6, strings.Count(logs.String(), "returned ErrInputRequired, but asked nothing this round"), logs.String())
	}
}
