package mcpmwtest_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/mcpmwtest"
)

func TestListPrompts(t *testing.T) {
	t.Parallel()
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			first := `{"name":"review","title":"Review","description":"Reviews code.","arguments":[` +
				`{"name":"code","title":"Code","description":"The code.","required":true},{"name":"style"}]}`
			second := `{"name":"greet","icons":[{"src":"https://x/i.png"}]}`
			srv, got := newFake(t, map[string]reply{"prompts/list": func(p map[string]any) string {
				if p["cursor"] == "2" {
					return `"result":{` + cacheable(version) + `"prompts":[` + second + `]}`
				}
				return `"result":{` + cacheable(version) + `"prompts":[` + first + `],"nextCursor":"2"}`
			}})
			res, err := srv.Client(mcpmwtest.Revision(version)).ListPrompts(t.Context())
			require.NoError(t, err)
			assert.Equal(t, []mcpmwtest.Prompt{
				{Name: "review", Title: "Review", Description: "Reviews code.", Arguments: []mcpmwtest.PromptArgument{
					{Name: "code", Title: "Code", Description: "The code.", Required: true}, {Name: "style"},
				}, Raw: json.RawMessage(first)},
				{Name: "greet", Raw: json.RawMessage(second)},
			}, res)
			checkWire(t, version, got.requests(), []string{"prompts/list", "prompts/list"},
				[]map[string]any{{}, {"cursor": "2"}}, nil)
		})
	}
}

func TestGetPrompt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		version, name, header string
		args                  map[string]string
		params                map[string]any
	}{
		{version: "2026-07-28", name: "review", header: "review", args: map[string]string{"code": "x := 1"},
			params: map[string]any{"name": "review", "arguments": map[string]any{"code": "x := 1"}}},
		{version: "2026-07-28", name: "résumé", header: "=?base64?csOpc3Vtw6k=?=", params: map[string]any{"name": "résumé"}},
		{version: "2025-11-25", name: "review", args: map[string]string{},
			params: map[string]any{"name": "review", "arguments": map[string]any{}}},
	} {
		t.Run(tt.version+" "+tt.name, func(t *testing.T) {
			t.Parallel()
			body := `{"description":"A review.","messages":[` +
				`{"role":"user","content":{"type":"text","text":"Review this."}},` +
				`{"role":"user","content":{"type":"image","data":"AQID","mimeType":"image/png"}},` +
				`{"role":"user","content":{"type":"audio","data":"BAU=","mimeType":"audio/wav"}},` +
				`{"role":"assistant","content":{"type":"resource_link","uri":"file:///a.go","name":"a.go","mimeType":"text/x-go"}},` +
				`{"role":"user","content":{"type":"resource","resource":{"uri":"file:///b.go","mimeType":"text/x-go","text":"package b"}}},` +
				`{"role":"user","content":{"type":"resource","resource":{"uri":"file:///c.bin","blob":"Bg=="}}}]}`
			if tt.version != "2025-11-25" {
				body = `{"resultType":"complete",` + body[1:]
			}
			srv, got := newFake(t, map[string]reply{"prompts/get": result(body)})
			res, err := srv.Client(mcpmwtest.Revision(tt.version)).GetPrompt(t.Context(), tt.name, tt.args)
			require.NoError(t, err)
			assert.Equal(t, "A review.", res.Description)
			assert.Equal(t, []mcpmwtest.PromptMessage{
				{Role: "user", Content: mcpmwtest.Content{Type: "text", Text: "Review this."}},
				{Role: "user", Content: mcpmwtest.Content{Type: "image", Data: []byte{1, 2, 3}, MimeType: "image/png"}},
				{Role: "user", Content: mcpmwtest.Content{Type: "audio", Data: []byte{4, 5}, MimeType: "audio/wav"}},
				{Role: "assistant", Content: mcpmwtest.Content{Type: "resource_link", URI: "file:///a.go", Name: "a.go", MimeType: "text/x-go"}},
				{Role: "user", Content: mcpmwtest.Content{Type: "resource",
					Resource: &mcpmwtest.ResourceContents{URI: "file:///b.go", MimeType: "text/x-go", Text: "package b"}}},
				{Role: "user", Content: mcpmwtest.Content{Type: "resource",
					Resource: &mcpmwtest.ResourceContents{URI: "file:///c.bin", Blob: []byte{6}}}},
			}, res.Messages)
			assert.JSONEq(t, body, string(res.Result))
			var names []string
			if tt.header != "" {
				names = []string{tt.header}
			}
			checkWire(t, tt.version, got.requests(), []string{"prompts/get"}, []map[string]any{tt.params}, names)
		})
	}
}

func TestGetPromptErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, answer string
		code         int
		data, err    string
	}{
		{name: "unknown prompt", answer: `"error":{"code":-32602,"message":"Unknown prompt: nope"}`, code: -32602},
		{name: "missing argument", answer: `"error":{"code":-32602,"message":"Missing required argument","data":{"argument":"code"}}`,
			code: -32602, data: `{"argument":"code"}`},
		{name: "no messages", answer: `"result":{"description":"x"}`, err: `mcpmwtest: the prompts/get result has no messages: {"description":"x"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newFake(t, map[string]reply{"prompts/get": func(map[string]any) string { return tt.answer }})
			_, err := srv.Client().GetPrompt(t.Context(), "nope", nil)
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				return
			}
			var e *mcpmwtest.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.code, e.Code)
			if tt.data == "" {
				assert.Nil(t, e.Data)
			} else {
				assert.JSONEq(t, tt.data, string(e.Data))
			}
		})
	}
}

func TestComplete(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, version string
		ref           mcpmwtest.CompletionRef
		context       map[string]string
		params        map[string]any
		result        string
		want          mcpmwtest.Completion
	}{
		{name: "prompt", version: "2026-07-28", ref: mcpmwtest.PromptRef("review"),
			params: map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "review"},
				"argument": map[string]any{"name": "lang", "value": "py"}},
			result: `{"resultType":"complete","completion":{"values":["python","pytorch"],"total":10,"hasMore":true}}`,
			want:   mcpmwtest.Completion{Values: []string{"python", "pytorch"}, Total: 10, HasMore: true}},
		{name: "template with context", version: "2026-07-28", ref: mcpmwtest.TemplateRef("db://{table}/{id}"),
			context: map[string]string{"table": "users"},
			params: map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "db://{table}/{id}"},
				"argument": map[string]any{"name": "lang", "value": "py"}, "context": map[string]any{"arguments": map[string]any{"table": "users"}}},
			result: `{"resultType":"complete","completion":{"values":[]}}`,
			want:   mcpmwtest.Completion{Values: []string{}}},
		{name: "legacy", version: "2025-11-25", ref: mcpmwtest.PromptRef("review"),
			params: map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "review"},
				"argument": map[string]any{"name": "lang", "value": "py"}},
			result: `{"completion":{"values":["python"]}}`,
			want:   mcpmwtest.Completion{Values: []string{"python"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, got := newFake(t, map[string]reply{"completion/complete": result(tt.result)})
			res, err := srv.Client(mcpmwtest.Revision(tt.version)).Complete(t.Context(), tt.ref, "lang", "py", tt.context)
			require.NoError(t, err)
			assert.Equal(t, tt.want.Values, res.Values)
			assert.Equal(t, tt.want.Total, res.Total)
			assert.Equal(t, tt.want.HasMore, res.HasMore)
			assert.JSONEq(t, tt.result, string(res.Result))
			checkWire(t, tt.version, got.requests(), []string{"completion/complete"}, []map[string]any{tt.params}, nil)
		})
	}
}

func TestCompleteErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		answer reply
		code   int
		err    string
	}{
		{name: "no capability", code: -32601}, // fakeEndpoint answers -32601 for a method it has no reply for
		{name: "unknown prompt", answer: func(map[string]any) string { return `"error":{"code":-32602,"message":"Unknown prompt"}` }, code: -32602},
		{name: "no values", answer: result(`{"completion":{}}`),
			err: `mcpmwtest: the completion/complete result has no completion.values: {"completion":{}}`},
		{name: "no completion", answer: result(`{}`), err: `mcpmwtest: the completion/complete result has no completion.values: {}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			replies := map[string]reply{}
			if tt.answer != nil {
				replies["completion/complete"] = tt.answer
			}
			srv, _ := newFake(t, replies)
			_, err := srv.Client().Complete(t.Context(), mcpmwtest.PromptRef("nope"), "a", "", nil)
			if tt.err != "" {
				assert.EqualError(t, err, tt.err)
				return
			}
			var e *mcpmwtest.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.code, e.Code)
		})
	}
}
