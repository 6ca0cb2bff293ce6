package skills_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing/fstest"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/skills"
)

// reader may read what a "read" permission allows.
type reader struct{}

func (reader) Can(p mcpmw.Permission) bool { return p == "read" }

func ExampleSet() {
	var reg mcpmw.Registry
	set := skills.New(&reg)
	set.Add("code-review", fstest.MapFS{
		"SKILL.md":                {Data: []byte("---\nname: code-review\ndescription: Review code using the team's checklist.\nversion: 2.1\n---\n\nRead references/checklist.md.\n")},
		"references/checklist.md": {Data: []byte("- Tests cover the change.\n")},
	}, "read")
	set.Add("release", fstest.MapFS{"SKILL.md": {Data: []byte("---\nname: release\ndescription: Cut a release.\n---\n")}}, "admin")
	h := mcpmw.New(&reg,
		mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return reader{}, nil }),
		mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}),
		&mcpmw.Options{Extensions: []mcpmw.Extension{set.Extension()}})
	defer h.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"skills/list","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "skills/list")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var out struct {
		Result struct {
			Skills []struct {
				URI         string          `json:"uri"`
				Frontmatter json.RawMessage `json:"frontmatter"`
				Resources   []struct {
					URI  string `json:"uri"`
					Size int    `json:"size"`
				} `json:"resources"`
			} `json:"skills"`
		} `json:"result"`
	}
	_ = json.Unmarshal(w.Body.Bytes(), &out)
	for _, s := range out.Result.Skills {
		fmt.Println(s.URI, string(s.Frontmatter))
		for _, f := range s.Resources {
			fmt.Println(" ", f.URI, f.Size)
		}
	}
	// Output:
	// skill://code-review/SKILL.md {"name":"code-review","description":"Review code using the team's checklist.","version":2.1}
	//   skill://code-review/SKILL.md 123
	//   skill://code-review/references/checklist.md 26
}
