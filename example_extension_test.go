package mcpmw_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpmw/mcpmw"
)

// recipe is one entry of the example extension: what its recipes/get
// answers, and who may read it.
type recipe struct {
	Name, Body string
	Permission mcpmw.Permission
}

// recipes is an extension of the protocol written only on the package's
// exported seam, as an extension's own package would be: a list method
// served like tools/list (one List, paged and cached per permission set),
// and a get method whose target is found once, gated by the handler before
// Handle runs, and taken back with AdmittedTarget.
func recipes(all ...recipe) mcpmw.Extension {
	byName := map[string]*recipe{}
	items := make([]mcpmw.ListItem, len(all))
	for i := range all {
		r := &all[i]
		byName[r.Name] = r
		entry, _ := json.Marshal(map[string]string{"name": r.Name})
		items[i] = mcpmw.ListItem{Permission: r.Permission, JSON: entry}
	}
	list := mcpmw.NewList("recipes", items...)
	find := func(req *mcpmw.Request) (*mcpmw.Target, *mcpmw.Response) {
		name, _ := req.StringParam("name")
		r := byName[name]
		if r == nil {
			return nil, mcpmw.UnknownTarget("recipe", name)
		}
		return &mcpmw.Target{Kind: "recipe", Name: r.Name, Permission: r.Permission, Found: r}, nil
	}
	return mcpmw.Extension{
		ID:        "com.example/recipes",
		Settings:  map[string]any{"count": len(all)},
		Revisions: []string{mcpmw.LatestVersion},
		Methods: []mcpmw.Method{
			{Name: "recipes/list", Handle: list.Page},
			{Name: "recipes/get", NameParam: "name", Target: find, Handle: func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
				t, resp := mcpmw.AdmittedTarget(ctx, req, find)
				if resp != nil {
					return resp
				}
				return mcpmw.ResultResponse(map[string]string{"body": t.Found.(*recipe).Body})
			}},
		},
	}
}

// cook may read what its permissions name.
type cook []mcpmw.Permission

func (c cook) Can(p mcpmw.Permission) bool {
	for _, q := range c {
		if p == q {
			return true
		}
	}
	return false
}

func ExampleExtension() {
	h := mcpmw.New(nil,
		mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return cook{"kitchen"}, nil }),
		mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}),
		&mcpmw.Options{Extensions: []mcpmw.Extension{recipes(
			recipe{Name: "bread", Body: "flour, water, salt, time", Permission: "kitchen"},
			recipe{Name: "secret-sauce", Body: "never told", Permission: "chef"},
		)}})
	defer h.Close()
	send := func(method, params, name string) (int, string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", method)
		if name != "" {
			r.Header.Set("Mcp-Name", name)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var out struct {
			Result map[string]any
			Error  struct{ Message string }
		}
		_ = json.Unmarshal(w.Body.Bytes(), &out)
		if out.Result == nil {
			return w.Code, out.Error.Message
		}
		delete(out.Result, "_meta")
		delete(out.Result, "ttlMs")
		delete(out.Result, "cacheScope")
		got, _ := json.Marshal(out.Result)
		return w.Code, string(got)
	}
	_, discover := send("server/discover", "", "")
	fmt.Println(strings.Contains(discover, `"extensions":{"com.example/recipes":{"count":2}}`))
	fmt.Println(send("recipes/list", "", ""))
	fmt.Println(send("recipes/get", `"name":"bread",`, "bread"))
	fmt.Println(send("recipes/get", `"name":"secret-sauce",`, "secret-sauce"))
	fmt.Println(send("recipes/get", `"name":"cake",`, "cake"))
	// Output:
	// true
	// 200 {"recipes":[{"name":"bread"}],"resultType":"complete"}
	// 200 {"body":"flour, water, salt, time","resultType":"complete"}
	// 403 Forbidden: the caller may not use recipe "secret-sauce"
	// 200 Unknown recipe: cake
}
