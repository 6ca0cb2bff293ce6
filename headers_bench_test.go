package mcpmw

import (
	"net/http"
	"strings"
	"testing"
)

// headerBenchCases are the requests the header benchmarks classify: the
// routing headers and _meta of a 2026-07-28 tools/call and tools/list, and
// a legacy (2025-11-25) tools/call.
func headerBenchCases() []struct {
	name string
	body string
	hdr  http.Header
} {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}`
	modern := func(method, name string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}, "Mcp-Protocol-Version": {LatestVersion}, "Mcp-Method": {method}}
		if name != "" {
			h["Mcp-Name"] = []string{name}
		}
		return h
	}
	return []struct {
		name string
		body string
		hdr  http.Header
	}{
		{"call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("abcdefghij", 5) + `"},` + meta + `}}`, modern("tools/call", "echo")},
		{"list", `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + meta + `}}`, modern("tools/list", "")},
		{"legacy", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`,
			http.Header{"Content-Type": {"application/json"}, "Mcp-Protocol-Version": {Version20251125}}},
	}
}

type benchAllowAll struct{}

func (benchAllowAll) Can(Permission) bool { return true }

// BenchmarkClassify measures header validation: deciding the revision and
// checking MCP-Protocol-Version, _meta, Mcp-Method and Mcp-Name against the
// body, on an envelope already parsed.
func BenchmarkClassify(b *testing.B) {
	for _, tc := range headerBenchCases() {
		env, perr := parseEnvelope([]byte(tc.body))
		if perr != nil {
			b.Fatalf("%s: %v", tc.name, perr)
		}
		newReq := func() *Request {
			return &Request{ID: env.id, Method: env.method, Params: env.params, Caller: benchAllowAll{}, Header: tc.hdr}
		}
		if resp := classify(newReq(), tc.hdr); resp != nil {
			b.Fatalf("%s: refused: %+v", tc.name, resp.Error)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				classify(newReq(), tc.hdr)
			}
		})
	}
}

// BenchmarkDecodeRequest measures everything between the body bytes and a
// validated Request: envelope parsing, then classification, for a small
// tools/call, a tools/list and a tools/call with a 100 KiB argument.
func BenchmarkDecodeRequest(b *testing.B) {
	cases := headerBenchCases()[:2]
	big := cases[0]
	big.name = "call100KiB"
	big.body = strings.Replace(big.body, strings.Repeat("abcdefghij", 5), strings.Repeat("abcdefghij", 100<<10/10), 1)
	for _, tc := range append(cases, big) {
		body := []byte(tc.body)
		decode := func() *verdict {
			env, perr := parseEnvelope(body)
			if perr != nil {
				return &verdict{Error: perr}
			}
			return classify(&Request{ID: env.id, Method: env.method, Params: env.params, Caller: benchAllowAll{}, Header: tc.hdr}, tc.hdr)
		}
		if resp := decode(); resp != nil {
			b.Fatalf("%s: refused: %+v", tc.name, resp.Error)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				decode()
			}
		})
	}
}
