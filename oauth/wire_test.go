package oauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

const metadataURL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"

// records is an Auditor that keeps every record.
type records struct {
	mu  sync.Mutex
	got []mcpmw.CallRecord
}

func (r *records) Audit(_ context.Context, rec mcpmw.CallRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, rec)
}

func (r *records) all() []mcpmw.CallRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]mcpmw.CallRecord(nil), r.got...)
}

func tools() []mcpmw.Tool {
	schema := json.RawMessage(`{"type":"object"}`)
	call := func(_ context.Context, c mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
		return mcpmw.TextResult(c.(interface{ String() string }).String()), nil
	}
	return []mcpmw.Tool{
		{Name: "whoami", Permission: "read", InputSchema: schema, Call: call},
		{Name: "shout", Permission: "write", InputSchema: schema, Call: call},
	}
}

func toolCall(tool string, authorization ...string) *http.Request {
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	r := httptest.NewRequest(http.MethodPost, resource, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", tool)
	for _, a := range authorization {
		r.Header.Add("Authorization", a)
	}
	return r
}

// What each refusal looks like on the wire, through an mcpmw handler, and
// its one audit record naming the reason.
func TestRefusalsOnTheWire(t *testing.T) {
	t.Parallel()
	is := newTestIssuer(t)
	a := newAuth(t, is, nil)
	var reg mcpmw.Registry
	reg.AddTools(tools()...)
	audit := &records{}
	h := mcpmw.New(&reg, a, audit, &mcpmw.Options{ResourceMetadata: metadataURL})
	reader := is.sign(t, is.claims(resource), nil)
	expired := is.claims(resource)
	expired["exp"] = 1000
	rm := `resource_metadata="` + metadataURL + `"`
	for _, tt := range []struct {
		name, tool string
		authz      []string
		status     int
		challenge  string
		reason     string
	}{
		{"no credentials", "whoami", nil, 401, "Bearer " + rm, "no Authorization header"},
		{"an expired token", "whoami", []string{"Bearer " + is.sign(t, expired, nil)}, 401,
			`Bearer error="invalid_token", error_description="The access token expired", ` + rm, "exp 1970"},
		{"two credentials", "whoami", []string{"Bearer " + reader, "Bearer " + reader}, 400,
			`Bearer error="invalid_request", error_description="Send one Authorization header", ` + rm, "2 Authorization headers"},
		{"a read token calling shout", "shout", []string{"Bearer " + reader}, 403,
			`Bearer error="insufficient_scope", scope="write", ` + rm, ""},
		{"a read token calling whoami", "whoami", []string{"Bearer " + reader}, 200, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := len(audit.all())
			w := httptest.NewRecorder()
			h.ServeHTTP(w, toolCall(tt.tool, tt.authz...))
			assert.Equal(t, tt.status, w.Code, w.Body.String())
			assert.Equal(t, tt.challenge, w.Header().Get("WWW-Authenticate"))
			recs := audit.all()
			require.Len(t, recs, before+1)
			if tt.reason != "" {
				require.Error(t, recs[before].AuthError)
				assert.Contains(t, recs[before].AuthError.Error(), tt.reason)
			}
			assert.NotContains(t, w.Body.String(), "exp 1970", "the reason stays in the record")
		})
	}
}
