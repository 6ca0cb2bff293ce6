package mcpotel_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpmw/mcpmw"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
)

const marker = "s3cr3t-MARKER-otel-8e2b"

// secrets fills a registry with a tool, a prompt and a completer whose
// arguments are sensitive.
func secrets(_ *harness, reg *mcpmw.Registry) {
	reg.AddTools(
		mcpmw.Tool{Name: "login", Description: "Logs in.", Permission: "read", Sensitive: []string{"/password", "/pin"},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"password":{"type":"string","x-mcp-header":"Password"},"pin":{"type":"integer"}}}`),
			Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				args.OptString("password", "")
				args.OptInt("pin", 0)
				return mcpmw.TextResult("welcome"), args.Err()
			}},
		mcpmw.Tool{Name: "rotate", Description: "Writers only.", Permission: "write", Sensitive: []string{"/key"},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}}}`),
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult("ok"), nil
			}})
	complete := func(context.Context, mcpmw.Caller, mcpmw.CompletionRequest) (mcpmw.Completion, error) {
		return mcpmw.Completion{Values: []string{"a"}}, nil
	}
	reg.AddPrompts(mcpmw.Prompt{Name: "reset", Permission: "read",
		Arguments: []mcpmw.PromptArgument{{Name: "password", Required: true, Sensitive: true}},
		Complete:  map[string]mcpmw.Completer{"password": complete},
		Get: func(context.Context, mcpmw.Caller, map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent("reset"))}}, nil
		}})
}

// TestSensitiveArgumentsNotInSpans sends a marker as each sensitive
// argument of a tool, a prompt and a completion, in accepted and refused
// requests, and checks that no span (its name, attributes, status, events
// and links) and no measurement's attributes carry it.
func TestSensitiveArgumentsNotInSpans(t *testing.T) {
	t.Parallel()
	x := newHarnessOf(t, secrets)
	q, _ := json.Marshal(marker)
	m := string(q)
	loginCall := func(id, args string, hdr ...string) *http.Request {
		return modern(id, "tools/call", `"name":"login","arguments":`+args, "", append([]string{"Mcp-Name", "login"}, hdr...)...)
	}
	for _, tc := range []struct {
		name   string
		r      *http.Request
		status int
	}{
		{"valid", loginCall(`"1"`, `{"password":`+m+`}`, "Mcp-Param-Password", marker), 200},
		{"argument error quoting the value", loginCall(`"2"`, `{"pin":271828182.5}`), 200},
		{"header differs from the body", loginCall(`"3"`, `{"password":"other"}`, "Mcp-Param-Password", marker), 400},
		{"repeated member", loginCall(`"4"`, `{"password":"x","password":`+m+`}`, "Mcp-Param-Password", "x"), 400},
		{"arguments not an object", loginCall(`"5"`, m), 200},
		{"denied", modern(`"6"`, "tools/call", `"name":"rotate","arguments":{"key":`+m+`}`, "", "Mcp-Name", "rotate"), 403},
		{"prompt", modern(`"7"`, "prompts/get", `"name":"reset","arguments":{"password":`+m+`}`, "", "Mcp-Name", "reset"), 200},
		{"prompt argument not a string", modern(`"8"`, "prompts/get", `"name":"reset","arguments":{"password":[`+m+`]}`, "", "Mcp-Name", "reset"), 200},
		{"completion", modern(`"9"`, "completion/complete", `"ref":{"type":"ref/prompt","name":"reset"},"argument":{"name":"password","value":`+m+`}`, ""), 200},
		{"completion context", modern(`"10"`, "completion/complete", `"ref":{"type":"ref/prompt","name":"reset"},"argument":{"name":"password","value":"a"},"context":{"arguments":{"password":`+m+`}}`, ""), 200},
	} {
		assert.Equal(t, tc.status, x.serve(tc.r), tc.name)
	}
	require.Len(t, x.obs.records(), 10)

	attrs := func(kvs []attribute.KeyValue) string {
		var b strings.Builder
		for _, kv := range kvs {
			b.WriteString(string(kv.Key) + "=" + kv.Value.String() + "\n")
		}
		return b.String()
	}
	spans := x.spans.Ended()
	require.Len(t, spans, 10)
	errored := 0
	for _, s := range spans {
		all := s.Name() + "\n" + attrs(s.Attributes()) + s.Status().Description
		for _, e := range s.Events() {
			all += e.Name + attrs(e.Attributes)
		}
		for _, l := range s.Links() {
			all += attrs(l.Attributes)
		}
		assert.NotContains(t, all, "MARKER-otel", "span %s", s.Name())
		assert.NotContains(t, all, "271828182", "span %s", s.Name())
		if s.Status().Description != "" {
			errored++
		}
	}
	assert.GreaterOrEqual(t, errored, 2, "not vacuous: the records' summaries became span statuses")
	_, points := x.collect(t)
	for _, p := range points {
		assert.NotContains(t, attrs(p.Attributes.ToSlice()), "MARKER-otel")
	}
}
