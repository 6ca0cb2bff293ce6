package mcpmw_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/ratelimit"
)

var (
	loadDuration = flag.Duration("load-duration", 5*time.Second, "how long TestLoad's clients send requests (1s with -short)")
	loadSoak     = flag.Bool("soak", false, "run TestLoad as a soak test: 10 minutes unless -load-duration says otherwise")
)

const (
	loadClients  = 64
	loadMaxBody  = 64 << 10 // the handler's MaxBodyBytes in the load test
	loadFloodMax = 2        // flood requests each client may send per second
)

// A loadKind is one kind of request in the load mix, with its weight (out
// of 100) and the audit row it must leave.
type loadKind struct {
	name   string
	weight int
	// row is the audit record the request must leave; zero status means
	// none (405, or a 429 from the rate limiter, which the client checks).
	row outcomeRow
}

var loadMix = []loadKind{
	{"call", 24, outcomeRow{200, 0, mcpmw.OutcomeOK}},
	{"progress-stream", 3, outcomeRow{200, 0, mcpmw.OutcomeOK}},
	{"list", 8, outcomeRow{200, 0, mcpmw.OutcomeOK}},
	{"legacy-initialize", 4, outcomeRow{200, 0, mcpmw.OutcomeOK}},
	{"notification", 3, outcomeRow{202, 0, mcpmw.OutcomeAccepted}},
	{"unknown-tool", 8, outcomeRow{200, -32602, mcpmw.OutcomeError}},
	{"denied-tool", 8, outcomeRow{403, -32602, mcpmw.OutcomeDenied}},
	{"malformed-json", 6, outcomeRow{400, -32700, mcpmw.OutcomeError}},
	{"bad-origin", 5, outcomeRow{403, -32600, mcpmw.OutcomeDenied}},
	{"bad-token", 6, outcomeRow{401, -32600, mcpmw.OutcomeDenied}},
	{"header-mismatch", 6, outcomeRow{400, -32020, mcpmw.OutcomeError}},
	{"oversized", 3, outcomeRow{413, -32600, mcpmw.OutcomeError}},
	{"get-probe", 2, outcomeRow{}},
	{"flood", 8, outcomeRow{200, 0, mcpmw.OutcomeOK}}, // or 429, never audited
	{"cut-mid-body", 3, outcomeRow{400, -32600, mcpmw.OutcomeError}},
	{"cut-mid-response", 2, outcomeRow{500, -32603, mcpmw.OutcomeError}},
	{"cut-mid-stream", 1, outcomeRow{200, -32603, mcpmw.OutcomeError}}, // row 35: the stream began with 200
}

// loadCounts counts requests per kind and audit records per row.
type loadCounts struct {
	mu       sync.Mutex
	sent     map[string]int
	expected map[outcomeRow]int
	limited  int
}

func (c *loadCounts) add(kind string, row outcomeRow) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent[kind]++
	if row.status != 0 {
		c.expected[row]++
	}
}

// loadAuditor counts records per row without keeping them, so the heap
// check measures the handler and not the test.
type loadAuditor struct {
	mu    sync.Mutex
	rows  map[outcomeRow]int
	total atomic.Int64
	bad   []string // records that break a rule, capped
}

func (a *loadAuditor) Audit(_ context.Context, rec mcpmw.CallRecord) {
	var problem string
	switch {
	case rec.ClientIP != "127.0.0.1":
		problem = "client IP " + rec.ClientIP
	case rec.Status == 0 || rec.Outcome == "":
		problem = "incomplete record"
	case rec.AuthError != nil && strings.Contains(rec.AuthError.Error(), "reader-token"):
		problem = "the token is in the auth error"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rows[outcomeRow{rec.Status, rec.ErrorCode, rec.Outcome}]++
	a.total.Add(1)
	if problem != "" && len(a.bad) < 10 {
		a.bad = append(a.bad, fmt.Sprintf("%s: %+v", problem, rec))
	}
}

// TestLoad runs 64 concurrent clients against a handler on loopback for
// -load-duration, with a mix of good, bad and hostile requests (loadMix),
// and checks that every answer is the expected one, that the audit trail
// holds exactly one record per request that passed the rate limit and the
// method check, and that afterwards no goroutine is left and the heap is
// back near its baseline.
func TestLoad(t *testing.T) {
	d := *loadDuration
	if *loadSoak && !flagSet("load-duration") {
		d = 10 * time.Minute
	}
	if testing.Short() && !*loadSoak {
		d = time.Second
	}
	ignore := goleak.IgnoreCurrent()
	heapBefore := heapInUse()

	counts, audit := runLoad(t, d)

	verifyNoLeaks(t, ignore)
	heapAfter := heapInUse()
	slack := max(heapBefore/10, 4<<20)
	t.Logf("heap in use: %.1f MiB before, %.1f MiB after (allowed growth %.1f MiB)",
		float64(heapBefore)/(1<<20), float64(heapAfter)/(1<<20), float64(slack)/(1<<20))
	if heapAfter > heapBefore+slack {
		t.Errorf("heap in use grew from %d to %d bytes, more than %d", heapBefore, heapAfter, slack)
	}

	total, names := 0, make([]string, 0, len(counts.sent))
	for name, n := range counts.sent {
		total += n
		names = append(names, name)
	}
	sort.Strings(names)
	var mix strings.Builder
	for _, name := range names {
		fmt.Fprintf(&mix, " %s=%d", name, counts.sent[name])
	}
	t.Logf("%d requests from %d clients in %v (%.0f/s); %d rate-limited; mix:%s", total, loadClients, d, float64(total)/d.Seconds(), counts.limited, mix.String())
	t.Logf("%d audit records", audit.total.Load())
}

// runLoad starts the server, runs the clients for d, waits for the audit
// trail to settle, checks it and shuts everything down. Everything it
// allocates is garbage when it returns.
func runLoad(t *testing.T, d time.Duration) (*loadCounts, *loadAuditor) {
	audit := &loadAuditor{rows: map[outcomeRow]int{}}
	srv := httptest.NewServer(loadHandler(audit))
	defer srv.Close()
	transport := &http.Transport{MaxIdleConnsPerHost: loadClients, DisableCompression: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: 2 * patience} // past the wait tool's patience

	counts := &loadCounts{sent: map[string]int{}, expected: map[outcomeRow]int{}}
	deck := make([]int, 0, 100) // indices into loadMix, by weight
	for i, k := range loadMix {
		for range k.weight {
			deck = append(deck, i)
		}
	}
	if len(deck) != 100 {
		t.Fatalf("the mix's weights add up to %d, not 100", len(deck))
	}
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	var failures atomic.Int64
	for c := range loadClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 5))
			lc := &loadClient{id: c, url: srv.URL + "/mcp", addr: srv.Listener.Addr().String(), http: client}
			for n := 0; n < 1_000_000 && time.Now().Before(deadline) && failures.Load() < 10; n++ {
				k := loadMix[deck[rng.IntN(len(deck))]]
				row, limited, err := lc.do(k, n)
				if err != nil {
					failures.Add(1)
					t.Errorf("client %d, request %d (%s): %v", c, n, k.name, err)
					continue
				}
				if limited {
					counts.mu.Lock()
					counts.limited++
					counts.mu.Unlock()
				}
				counts.add(k.name, row)
			}
		}()
	}
	wg.Wait()

	// Requests whose clients hung up are still being answered: wait, with a
	// bound, for the records to arrive.
	want := 0
	for _, n := range counts.expected {
		want += n
	}
	for end := time.Now().Add(patience); audit.total.Load() < int64(want) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // and a moment for any extra record to show itself
	audit.mu.Lock()
	defer audit.mu.Unlock()
	if audit.total.Load() != int64(want) {
		t.Errorf("%d audit records for %d audited requests", audit.total.Load(), want)
	}
	for row, n := range counts.expected {
		if audit.rows[row] != n {
			t.Errorf("row %v: %d audit records, want %d", row, audit.rows[row], n)
		}
	}
	for row, n := range audit.rows {
		if counts.expected[row] == 0 {
			t.Errorf("row %v: %d unexpected audit records", row, n)
		}
	}
	for _, b := range audit.bad {
		t.Errorf("bad audit record: %s", b)
	}
	return counts, audit
}

// loadHandler is the endpoint under load: the reader may use echo, list
// and wait, not write_it; wait blocks until its client goes away.
func loadHandler(audit mcpmw.Auditor) http.Handler {
	var reg mcpmw.Registry
	reg.AddTools(
		mcpmw.Tool{Name: "echo", Description: "Echoes.", Permission: "read",
			Call: func(_ context.Context, _ mcpmw.Caller, a *mcpmw.Args) (mcpmw.ToolResult, error) {
				msg := a.String("message")
				if err := a.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult(msg), nil
			}},
		mcpmw.Tool{Name: "write_it", Description: "Writes.", Permission: "write",
			Call: func(context.Context, mcpmw.Caller, *mcpmw.Args) (mcpmw.ToolResult, error) {
				return mcpmw.TextResult("written"), nil
			}},
		mcpmw.Tool{Name: "progress", Description: "Reports progress, then answers; with forever, until its client leaves.", Permission: "read",
			Call: func(ctx context.Context, _ mcpmw.Caller, a *mcpmw.Args) (mcpmw.ToolResult, error) {
				n, until := 3, time.Now().Add(patience)
				if a.OptBool("forever", false) {
					n = math.MaxInt // bounded in time: patience, however slowly each round goes
				}
				for i := 1; i <= n && time.Now().Before(until); i++ {
					if err := mcpmw.Progress(ctx, float64(i), float64(n), ""); err != nil {
						return mcpmw.ToolResult{}, err
					}
					time.Sleep(time.Millisecond)
				}
				return mcpmw.TextResult("done"), nil
			}},
		mcpmw.Tool{Name: "wait", Description: "Waits for its client to leave.", Permission: "read",
			Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
				select {
				case <-ctx.Done():
					return mcpmw.ToolResult{}, ctx.Err()
				case <-time.After(patience): // bounded; the audit row then differs and fails the test
					return mcpmw.TextResult("the client never left"), nil
				}
			}},
	)
	authn := mcpmw.AuthenticatorFunc(func(r *http.Request) (mcpmw.Caller, error) {
		if r.Header.Get("Authorization") == "Bearer reader-token" {
			return fuzzCaller("reader"), nil
		}
		return nil, fmt.Errorf("%w: unknown token", mcpmw.ErrUnauthorized)
	})
	flood := ratelimit.By(loadFloodMax, time.Second, func(r *http.Request, _ string) string {
		return r.Header.Get("X-Flood-Key")
	})
	return mcpmw.New(&reg, authn, audit, &mcpmw.Options{
		MaxBodyBytes: loadMaxBody,
		RateLimit: mcpmw.RateLimiterFunc(func(w http.ResponseWriter, r *http.Request, ip string) bool {
			return r.Header.Get("X-Flood-Key") != "" && flood.Limit(w, r, ip) // only the flood kind is limited
		}),
		Logger: slog.New(slog.DiscardHandler),
	})
}

type loadClient struct {
	id   int
	url  string
	addr string
	http *http.Client
}

const loadMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"load","version":"1"}}`

// do sends one request of kind k and checks the answer. It returns the
// audit row the request must leave (zero for none) and whether the rate
// limiter refused it.
func (c *loadClient) do(k loadKind, n int) (outcomeRow, bool, error) {
	id := strconv.Quote(fmt.Sprintf("%s-%d-%d", k.name, c.id, n))
	msg := fmt.Sprintf("client %d says %d", c.id, n)
	call := func(tool, args string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `,` + loadMeta + `}}`
	}
	hdr := map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Authorization": "Bearer reader-token", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo",
	}
	echoArgs := `{"message":` + strconv.Quote(msg) + `}`
	var body string
	var expect func(st int, h http.Header, a *loadAnswer) error
	wantError := func(status, code int) func(int, http.Header, *loadAnswer) error {
		return func(st int, _ http.Header, a *loadAnswer) error {
			if st != status || a.Error == nil || a.Error.Code != code {
				return fmt.Errorf("got %d %+v, want %d %d", st, a.Error, status, code)
			}
			return nil
		}
	}
	switch k.name {
	case "call", "flood":
		body = call("echo", echoArgs)
		expect = func(st int, _ http.Header, a *loadAnswer) error {
			if st != 200 || a.Error != nil || len(a.Result.Content) != 1 || a.Result.Content[0].Text != msg || string(a.ID) != id {
				return fmt.Errorf("got %d id %s %+v", st, a.ID, a)
			}
			return nil
		}
		if k.name == "flood" {
			hdr["X-Flood-Key"] = "flood-" + strconv.Itoa(c.id)
		}
	case "progress-stream":
		body = `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":` + id + `,` + loadMeta[len(`"_meta":{`):] + `}}`
		hdr["Mcp-Name"] = "progress"
		expect = nil // checked below, as an event stream
	case "list":
		body = `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{` + loadMeta + `}}`
		hdr["Mcp-Method"] = "tools/list"
		expect = func(st int, _ http.Header, a *loadAnswer) error {
			var names []string
			for _, tool := range a.Result.Tools {
				names = append(names, tool.Name)
			}
			if st != 200 || strings.Join(names, ",") != "echo,progress,wait" || a.Result.CacheScope != "private" {
				return fmt.Errorf("got %d tools %v scope %q", st, names, a.Result.CacheScope)
			}
			return nil
		}
	case "legacy-initialize":
		body = `{"jsonrpc":"2.0","id":` + id + `,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"legacy","version":"1"}}}`
		delete(hdr, "MCP-Protocol-Version")
		delete(hdr, "Mcp-Method")
		expect = func(st int, _ http.Header, a *loadAnswer) error {
			if st != 200 || a.Result.ProtocolVersion != "2025-11-25" {
				return fmt.Errorf("got %d %+v", st, a)
			}
			return nil
		}
	case "notification":
		body = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
		hdr["MCP-Protocol-Version"] = "2025-11-25"
		hdr["Mcp-Method"] = "notifications/initialized" // a routing header that is sent must match
		expect = func(st int, _ http.Header, a *loadAnswer) error {
			if st != 202 || !a.empty {
				return fmt.Errorf("got %d, empty body %v", st, a.empty)
			}
			return nil
		}
	case "unknown-tool":
		body = call("drop_tables", `{}`)
		hdr["Mcp-Name"] = "drop_tables"
		expect = wantError(200, -32602)
	case "denied-tool":
		body = call("write_it", `{}`)
		hdr["Mcp-Name"] = "write_it"
		expect = func(st int, h http.Header, a *loadAnswer) error {
			if err := wantError(403, -32602)(st, h, a); err != nil {
				return err
			}
			if !strings.Contains(h.Get("WWW-Authenticate"), "insufficient_scope") {
				return fmt.Errorf("challenge %q", h.Get("WWW-Authenticate"))
			}
			return nil
		}
	case "malformed-json":
		body = call("echo", echoArgs)[:40+n%20]
		expect = wantError(400, -32700)
	case "bad-origin":
		body = call("echo", echoArgs)
		hdr["Origin"] = "http://attacker-" + strconv.Itoa(n%7) + ".example"
		expect = wantError(403, -32600)
	case "bad-token":
		body = call("echo", echoArgs)
		hdr["Authorization"] = "Bearer guess-" + strconv.Itoa(n)
		expect = func(st int, h http.Header, a *loadAnswer) error {
			if err := wantError(401, -32600)(st, h, a); err != nil {
				return err
			}
			if h.Get("WWW-Authenticate") == "" {
				return fmt.Errorf("no challenge")
			}
			return nil
		}
	case "header-mismatch":
		body = call("echo", echoArgs)
		hdr["Mcp-Name"] = "wait"
		expect = wantError(400, -32020)
	case "oversized":
		body = call("echo", `{"message":"`+strings.Repeat("x", loadMaxBody+n%4096)+`"}`)
		expect = wantError(413, -32600)
	case "get-probe":
		expect = wantError(405, -32600)
	case "cut-mid-body":
		return k.row, false, c.cut(call("echo", echoArgs), hdr, false)
	case "cut-mid-response":
		hdr["Mcp-Name"] = "wait"
		return k.row, false, c.cut(call("wait", `{}`), hdr, true)
	case "cut-mid-stream":
		hdr["Mcp-Name"] = "progress"
		body = `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"progress","arguments":{"forever":true},"_meta":{"progressToken":1,` + loadMeta[len(`"_meta":{`):] + `}}`
		return k.row, false, c.cutStream(body, hdr)
	default:
		return outcomeRow{}, false, fmt.Errorf("unknown kind %q", k.name)
	}

	method := http.MethodPost
	if k.name == "get-probe" {
		method = http.MethodGet
	}
	req, err := http.NewRequest(method, c.url, strings.NewReader(body))
	if err != nil {
		return outcomeRow{}, false, err
	}
	for name, v := range hdr {
		req.Header.Set(name, v)
	}
	if k.name == "oversized" && n%2 == 1 {
		req.ContentLength = -1 // chunked: the handler finds out while reading
		req.Body = io.NopCloser(strings.NewReader(body))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return outcomeRow{}, false, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return outcomeRow{}, false, err
	}
	if k.name == "progress-stream" {
		return k.row, false, checkLoadStream(resp, raw, id)
	}
	a := &loadAnswer{empty: len(raw) == 0}
	if resp.StatusCode != http.StatusAccepted {
		if err := json.Unmarshal(raw, a); err != nil || a.JSONRPC != "2.0" {
			return outcomeRow{}, false, fmt.Errorf("status %d, not JSON-RPC: %q", resp.StatusCode, raw)
		}
	}
	if k.name == "flood" && resp.StatusCode == http.StatusTooManyRequests {
		if a.Error == nil || a.Error.Code != -32600 || resp.Header.Get("Retry-After") == "" {
			return outcomeRow{}, false, fmt.Errorf("429 without -32600 or Retry-After: %q", raw)
		}
		return outcomeRow{}, true, nil
	}
	if err := expect(resp.StatusCode, resp.Header, a); err != nil {
		return outcomeRow{}, false, err
	}
	return k.row, false, nil
}

// cut sends a request over a raw connection and hangs up: halfway through
// the body, or (whole) after the handler has had a moment to start on it.
func (c *loadClient) cut(body string, hdr map[string]string, whole bool) error {
	conn, err := net.DialTimeout("tcp", c.addr, patience)
	if err != nil {
		return err
	}
	defer conn.Close()
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", c.addr, len(body))
	for name, v := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", name, v)
	}
	b.WriteString("\r\n")
	if whole {
		b.WriteString(body)
	} else {
		b.WriteString(body[:len(body)/2])
	}
	if _, err := conn.Write(b.Bytes()); err != nil {
		return err
	}
	if whole {
		// Nothing may come back before the client leaves: the tool waits.
		_ = conn.SetReadDeadline(time.Now().Add(time.Duration(1+c.id%5) * time.Millisecond))
		if line, err := bufio.NewReader(conn).ReadString('\n'); err == nil || line != "" {
			return fmt.Errorf("an answer before the client left: %q", line)
		}
	}
	return nil
}

// cutStream sends a call whose answer is an endless event stream, reads up
// to the first event and hangs up.
func (c *loadClient) cutStream(body string, hdr map[string]string) error {
	conn, err := net.DialTimeout("tcp", c.addr, patience)
	if err != nil {
		return err
	}
	defer conn.Close()
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", c.addr, len(body))
	for name, v := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", name, v)
	}
	b.WriteString("\r\n" + body)
	if _, err := conn.Write(b.Bytes()); err != nil {
		return err
	}
	_ = conn.SetReadDeadline(time.Now().Add(patience))
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil || status != "HTTP/1.1 200 OK\r\n" {
		return fmt.Errorf("stream status %q, %v", status, err)
	}
	for i := 0; i < 100; i++ {
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		if strings.HasPrefix(line, "data: ") {
			if !strings.Contains(line, `"notifications/progress"`) {
				return fmt.Errorf("first event %q", line)
			}
			return nil // and hang up
		}
	}
	return fmt.Errorf("no event in the first 100 lines")
}

// checkLoadStream checks a complete progress stream: three notifications,
// then the result.
func checkLoadStream(resp *http.Response, raw []byte, id string) error {
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		return fmt.Errorf("stream: status %d, %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	events := strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n")
	if len(events) != 4 {
		return fmt.Errorf("stream of %d events, want 3 notifications and the result: %q", len(events), raw)
	}
	for i, ev := range events {
		data, ok := strings.CutPrefix(ev, "event: message\ndata: ")
		switch {
		case !ok:
			return fmt.Errorf("event %q", ev)
		case i < 3 && !strings.Contains(data, `"progressToken":`+id+`,"progress":`+strconv.Itoa(i+1)):
			return fmt.Errorf("notification %d: %s", i, data)
		case i == 3 && !strings.HasPrefix(data, `{"jsonrpc":"2.0","id":`+id+`,"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]`):
			return fmt.Errorf("result: %s", data)
		}
	}
	return nil
}

// loadAnswer is the part of an answer the load clients check.
type loadAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		CacheScope      string `json:"cacheScope"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"result"`
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
	empty bool
}

// heapInUse returns the bytes of heap in use after two collections (the
// second empties what sync.Pools kept through the first).
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// flagSet reports whether the named flag was given on the command line.
func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
