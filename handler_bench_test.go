package mcpmw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/ratelimit"
)

// The benchmarks in this file drive the whole handler through ServeHTTP on
// the 2026-07-28 wire, the way bench/ (the side-by-side harness) does: a
// reused benchWriter keeps the harness out of the allocation counts, and each
// iteration's request is a copy of a template with its own body reader (one
// allocation, counted).

// benchWriter is a reusable http.ResponseWriter that keeps status and body.
type benchWriter struct {
	hdr    http.Header
	status int
	body   []byte
}

func newBenchWriter() *benchWriter { return &benchWriter{hdr: make(http.Header, 4)} }

func (w *benchWriter) Header() http.Header { return w.hdr }

func (w *benchWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *benchWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.body = append(w.body, p...)
	return len(p), nil
}

func (w *benchWriter) reset() {
	clear(w.hdr)
	w.status = 0
	w.body = w.body[:0]
}

type benchBody struct {
	b   []byte
	off int
}

func (r *benchBody) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

func (r *benchBody) Close() error { return nil }

// benchCall is one request: a template to copy and the body it carries.
type benchCall struct {
	tmpl *http.Request
	body []byte
}

type benchFresh struct {
	req  http.Request
	body benchBody
}

func (c *benchCall) request() *http.Request {
	f := &benchFresh{req: *c.tmpl}
	f.body.b = c.body
	f.req.Body = &f.body
	return &f.req
}

const benchMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"}}`

// newBenchCall returns a 2026-07-28 request for method; name is the tool of
// a tools/call and params its other members (without _meta).
func newBenchCall(method, name, params string) *benchCall {
	p := "{" + benchMeta + "}"
	if params != "" {
		p = "{" + params + "," + benchMeta + "}"
	}
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":` + p + `}`)
	h := http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {"2026-07-28"},
		"Mcp-Method":           {method},
		"Authorization":        {"Bearer bench-token"},
	}
	if name != "" {
		h["Mcp-Name"] = []string{name}
	}
	return &benchCall{body: body, tmpl: &http.Request{
		Method: http.MethodPost, URL: &url.URL{Path: "/mcp"}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, ContentLength: int64(len(body)), Host: "127.0.0.1", RemoteAddr: "192.0.2.1:1234", RequestURI: "/mcp",
	}}
}

func newEchoCall(msgLen int) *benchCall {
	msg := strings.Repeat("abcdefghij", msgLen/10+1)[:msgLen]
	return newBenchCall("tools/call", "echo", `"name":"echo","arguments":{"message":"`+msg+`"}`)
}

// benchCaller may use the tools that need "read", and no others.
type benchCaller struct{}

func (benchCaller) Can(c mcpmw.Permission) bool { return c == "read" }

func (benchCaller) String() string { return "bench-user" }

var benchEcho = mcpmw.Tool{
	Name: "echo", Description: "Returns the message it is given.", Permission: "read",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The text to send back."}},"required":["message"]}`),
	Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
		msg := args.String("message")
		if err := args.Err(); err != nil {
			return mcpmw.ToolResult{}, err
		}
		return mcpmw.TextResult(msg), nil
	},
}

// benchRegistry holds echo and tools-1 dummies, of which the first
// visible-1 need "read" and the others "hidden"; visible < 0 means all
// need "read".
func benchRegistry(tools, visible int) *mcpmw.Registry {
	var reg mcpmw.Registry
	list := []mcpmw.Tool{benchEcho}
	for i := 1; i < tools; i++ {
		c := mcpmw.Permission("read")
		if visible >= 0 && i >= visible {
			c = "hidden"
		}
		list = append(list, mcpmw.Tool{
			Name: fmt.Sprintf("tool_%05d", i), Description: fmt.Sprintf("Looks things up in catalogue %05d; a stand-in tool.", i), Permission: c,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What to look for."},"limit":{"type":"integer","description":"At most this many results."}},"required":["query"]}`),
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult("ok"), nil
			},
		})
	}
	reg.AddTools(list...)
	return &reg
}

// newBenchHandler returns a bare handler (allow-all authenticator, no-op
// auditor) over reg, with every tool on one tools/list page.
func newBenchHandler(reg *mcpmw.Registry, caller mcpmw.Caller) *mcpmw.Handler {
	authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return caller, nil })
	audit := mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {})
	return mcpmw.New(reg, authn, audit, &mcpmw.Options{PageSize: 100000, Logger: slog.New(slog.DiscardHandler)})
}

// newHookedBenchHandler is newBenchHandler with what a deployment runs: a
// bearer-token check, JSONAuditor writing JSON lines, and the per-IP limiter
// with a limit the benchmark never reaches.
func newHookedBenchHandler(reg *mcpmw.Registry) *mcpmw.Handler {
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		if r.Header.Get("Authorization") != "Bearer bench-token" {
			return nil, mcpmw.ErrUnauthorized
		}
		return benchCaller{}, nil
	})
	audit := mcpmw.JSONAuditor(io.Discard, nil)
	return mcpmw.New(reg, authn, audit, &mcpmw.Options{PageSize: 100000, Logger: slog.New(slog.DiscardHandler),
		RateLimit: ratelimit.PerIP(1<<30, time.Minute)})
}

// runBench serves c through h in a loop after checking one answer: HTTP 200
// and a body containing want.
func runBench(b *testing.B, h http.Handler, c *benchCall, want string) {
	b.Helper()
	w := newBenchWriter()
	h.ServeHTTP(w, c.request())
	if w.status != http.StatusOK || !strings.Contains(string(w.body), want) || strings.Contains(string(w.body), `"error"`) {
		b.Fatalf("unexpected answer %d: %.300s", w.status, w.body)
	}
	size := len(w.body)
	b.ReportAllocs()
	b.SetBytes(int64(len(c.body)))
	for b.Loop() {
		w.reset()
		h.ServeHTTP(w, c.request())
		if w.status != http.StatusOK || len(w.body) != size {
			b.Fatalf("answer changed: %d, %d bytes", w.status, len(w.body))
		}
	}
}

// BenchmarkServeHTTPToolsCall is a tools/call of echo through the whole
// handler, with a small and a large argument.
func BenchmarkServeHTTPToolsCall(b *testing.B) {
	h := newBenchHandler(benchRegistry(100, -1), benchCaller{})
	for _, size := range []int{50, 100 << 10} {
		b.Run("msg="+strconv.Itoa(size), func(b *testing.B) {
			runBench(b, h, newEchoCall(size), `"text":"abcdefghij`)
		})
	}
}

// BenchmarkServeHTTPToolsCallHooks is BenchmarkServeHTTPToolsCall/msg=50
// with a token check, LogAuditor and the rate limiter (target: at most 1.3x
// the bare time).
func BenchmarkServeHTTPToolsCallHooks(b *testing.B) {
	runBench(b, newHookedBenchHandler(benchRegistry(100, -1)), newEchoCall(50), `"text":"abcdefghij`)
}

// BenchmarkServeHTTPToolsCallSensitive is BenchmarkServeHTTPToolsCallHooks
// for an echo whose message is Sensitive: the cost of redacting the
// record's arguments, which JSONAuditor then writes.
func BenchmarkServeHTTPToolsCallSensitive(b *testing.B) {
	echo := benchEcho
	echo.Sensitive = []string{"/message"}
	var reg mcpmw.Registry
	reg.AddTools(echo)
	runBench(b, newHookedBenchHandler(&reg), newEchoCall(50), `"text":"abcdefghij`)
}

// BenchmarkServeHTTPToolsCallRegistered calls echo on registries of growing
// size (target: flat within 10% from 1 to 10,000 tools).
func BenchmarkServeHTTPToolsCallRegistered(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run("tools="+strconv.Itoa(n), func(b *testing.B) {
			runBench(b, newBenchHandler(benchRegistry(n, -1), benchCaller{}), newEchoCall(50), `"text":"abcdefghij`)
		})
	}
}

// BenchmarkServeHTTPToolsList lists 1, 100 and 1,000 tools on one page.
func BenchmarkServeHTTPToolsList(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run("tools="+strconv.Itoa(n), func(b *testing.B) {
			want := `"name":"echo"`
			if n > 1 {
				want = fmt.Sprintf(`"name":"tool_%05d"`, n-1)
			}
			runBench(b, newBenchHandler(benchRegistry(n, -1), benchCaller{}), newBenchCall("tools/list", "", ""), want)
		})
	}
}

// BenchmarkServeHTTPToolsListVisible lists for a caller who may see only a
// few of many registered tools (target: time linear in what the caller sees,
// not in what is registered).
func BenchmarkServeHTTPToolsListVisible(b *testing.B) {
	for _, tc := range []struct{ registered, visible int }{{100, 10}, {10000, 10}, {10000, 1000}} {
		b.Run(fmt.Sprintf("registered=%d/visible=%d", tc.registered, tc.visible), func(b *testing.B) {
			h := newBenchHandler(benchRegistry(tc.registered, tc.visible), benchCaller{})
			runBench(b, h, newBenchCall("tools/list", "", ""), fmt.Sprintf(`"name":"tool_%05d"`, tc.visible-1))
		})
	}
}

// BenchmarkToolsListEncoding measures tools/list below HTTP: the Dispatcher
// (method gate, capability filter, encoding of the page) on a request as the
// handler hands it over, for 1, 100 and 1,000 tools.
func BenchmarkToolsListEncoding(b *testing.B) {
	for _, n := range []int{1, 100, 1000} {
		b.Run("tools="+strconv.Itoa(n), func(b *testing.B) {
			var inner mcpmw.Dispatcher
			capture := func(next mcpmw.Dispatcher) mcpmw.Dispatcher { inner = next; return next }
			authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return benchCaller{}, nil })
			mcpmw.New(benchRegistry(n, -1), authn, mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {}),
				&mcpmw.Options{PageSize: 100000, Middleware: []func(mcpmw.Dispatcher) mcpmw.Dispatcher{capture}})
			req := &mcpmw.Request{ID: json.RawMessage("7"), Method: "tools/list", Version: mcpmw.LatestVersion, Caller: benchCaller{}}
			ctx := context.Background()
			resp := inner.Dispatch(ctx, req)
			if resp == nil || resp.Error != nil || !strings.Contains(string(resp.Result), `"name":"echo"`) {
				b.Fatalf("unexpected answer %+v", resp)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(resp.Result)))
			for b.Loop() {
				inner.Dispatch(ctx, req)
			}
		})
	}
}

// askCaller is benchCaller with a CallerID, which round state needs.
type askCaller struct{ benchCaller }

func (askCaller) CallerID() string { return "bench-user" }

// BenchmarkServeHTTPInputRequiredRound serves both rounds of a tool that
// asks for a confirmation and keeps a little state: the input_required
// answer (the question, the state sealed) and the retry (the state opened,
// the answer read, the result).
func BenchmarkServeHTTPInputRequiredRound(b *testing.B) {
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "delete", Description: "Deletes after confirming.", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			ans, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Delete note 3?", json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)))
			if err != nil {
				mcpmw.SetRoundState(ctx, []byte(`{"note":3,"asked":"confirm","by":"bench-user"}`))
				return mcpmw.ToolResult{}, err
			}
			if !bytes.Contains(ans, []byte(`"accept"`)) || len(mcpmw.RoundState(ctx)) == 0 {
				return mcpmw.ErrorResult("not confirmed"), nil
			}
			return mcpmw.TextResult("deleted note 3"), nil
		}})
	h := newBenchHandler(&reg, askCaller{})
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	ask := newBenchCall("tools/call", "delete", `"name":"delete","arguments":{"id":3}`)
	ask.body = bytes.Replace(ask.body, []byte(benchMeta), []byte(meta), 1)
	ask.tmpl.ContentLength = int64(len(ask.body))
	b.Run("ask", func(b *testing.B) { runBench(b, h, ask, `"resultType":"input_required"`) })

	w := newBenchWriter()
	h.ServeHTTP(w, ask.request())
	var first struct{ Result struct{ RequestState string } }
	if err := json.Unmarshal(w.body, &first); err != nil || first.Result.RequestState == "" {
		b.Fatalf("no requestState: %.300s", w.body)
	}
	answer := newBenchCall("tools/call", "delete", `"name":"delete","arguments":{"id":3},`+
		`"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"`+first.Result.RequestState+`"`)
	answer.body = bytes.Replace(answer.body, []byte(benchMeta), []byte(meta), 1)
	answer.tmpl.ContentLength = int64(len(answer.body))
	b.Run("answer", func(b *testing.B) { runBench(b, h, answer, `deleted note 3`) })
}
