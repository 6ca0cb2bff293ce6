package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// The I/O workload's load generator: the TM Dev Lab v2 k6 script's
// virtual user, in Go (k6 itself is not to be had here: its Go module is
// AGPL and npm's "k6" is an empty stub). Each virtual user loops, with no
// pause but thinkTime at the end of each iteration:
//
//   - for each tool, in turn: a session (legacy: initialize, then
//     notifications/initialized), then the tools/call, checked as k6 checks
//     it;
//   - a session and a tools/list.
//
// On 2026-07-28 there is no session: a call is one POST carrying its
// revision, capabilities and client in _meta and the routing headers. The
// published script also DELETEs the session when the server names one; no
// server here does (all are stateless), so it never does. Unlike the
// published script, a legacy session's requests carry the
// MCP-Protocol-Version header with the version initialize negotiated, as
// real clients send it: the script's initialize asks for 2024-11-05, which
// mcpmw does not serve, and a server that does not serve the revisions
// before 2025-06-18 must refuse a request without the header (WIRE.md §1).
//
// Counted as the published script counts: "MCP requests" are the
// initializes, tool calls and tools/lists (not the notifications); the
// latency is the tool calls' alone. Only requests that start after the
// warm-up and end before the deadline count; every answer is checked,
// warm-up included, and a wrong one is an error, never speed.
const (
	thinkTime         = 50 * time.Millisecond
	legacyVersionSent = "2024-11-05" // what the published script's initialize asks for
)

// ioMode is how the load generator speaks: "2026" (2026-07-28, stateless)
// or "legacy" (the published script's sessions).
type ioMode string

const (
	mode2026   ioMode = "2026"
	modeLegacy ioMode = "legacy"
)

var ioModes = []ioMode{mode2026, modeLegacy}

// ioCall is one of a virtual user's tool calls and the check of its text.
type ioCall struct {
	tool  string
	args  string
	check func(text []byte) error
}

// ioCalls are the calls of the virtual user playing user.
func ioCalls(user string) []ioCall {
	return []ioCall{
		{"search_products", `{"category":"Electronics","min_price":50.0,"max_price":500.0,"limit":10}`, func(text []byte) error {
			var d struct {
				TotalFound int               `json:"total_found"`
				Products   []json.RawMessage `json:"products"`
				Top10      []int             `json:"top10_popular_ids"`
			}
			if err := json.Unmarshal(text, &d); err != nil {
				return err
			}
			if d.TotalFound != 2251 || len(d.Products) != 10 || len(d.Top10) != 10 {
				return fmt.Errorf("found %d, %d products, %d popular ids; want 2251, 10, 10", d.TotalFound, len(d.Products), len(d.Top10))
			}
			return nil
		}},
		{"get_user_cart", `{"user_id":"` + user + `"}`, func(text []byte) error {
			var d struct {
				UserID string `json:"user_id"`
				Cart   struct {
					Items []json.RawMessage `json:"items"`
				} `json:"cart"`
				History []json.RawMessage `json:"recent_history"`
			}
			if err := json.Unmarshal(text, &d); err != nil {
				return err
			}
			if d.UserID != user || len(d.Cart.Items) < 1 || len(d.History) != 5 {
				return fmt.Errorf("user %q, %d items, %d orders; want %q, at least 1, 5", d.UserID, len(d.Cart.Items), len(d.History), user)
			}
			return nil
		}},
		{"checkout", `{"user_id":"` + user + `","items":[{"product_id":42,"quantity":2},{"product_id":1337,"quantity":1}]}`, func(text []byte) error {
			var d struct {
				Status     string  `json:"status"`
				Total      float64 `json:"total"`
				ItemsCount int     `json:"items_count"`
			}
			if err := json.Unmarshal(text, &d); err != nil {
				return err
			}
			if d.Status != "confirmed" || d.Total <= 0 || d.ItemsCount != 2 {
				return fmt.Errorf("status %q, total %v, %d items; want confirmed, > 0, 2", d.Status, d.Total, d.ItemsCount)
			}
			return nil
		}},
	}
}

// ioRequest is one POST of the workload.
type ioRequest struct {
	body   []byte
	header http.Header
}

// meta2026 is the _meta member every 2026-07-28 request carries.
const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + protocolVersion + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpmw-bench","version":"1.0.0"}}`

// request returns the POST of method (tools/call of tool with args, or
// tools/list) in mode; legacy, in a session that negotiated version.
func (m ioMode) request(method, tool, args, version string) ioRequest {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	if m == modeLegacy {
		h["Mcp-Protocol-Version"] = []string{version}
	}
	var params string
	switch method {
	case "tools/call":
		params = `{"name":"` + tool + `","arguments":` + args
	case "tools/list":
		params = `{`
	}
	if m == mode2026 {
		h["Mcp-Protocol-Version"] = []string{protocolVersion}
		h["Mcp-Method"] = []string{method}
		if tool != "" {
			h["Mcp-Name"] = []string{tool}
		}
		if params != "{" {
			params += ","
		}
		params += meta2026
	}
	return ioRequest{[]byte(`{"jsonrpc":"2.0","id":2,"method":"` + method + `","params":` + params + `}}`), h}
}

// The legacy session's two POSTs, as the published script sends them.
var (
	legacyInitialize = ioRequest{
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + legacyVersionSent + `","capabilities":{},"clientInfo":{"name":"k6-bench","version":"1.0"}}}`),
		http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}},
	}
	legacyInitialized = ioRequest{
		[]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}},
	}
)

// ioAnswer is what the load generator reads of a JSON-RPC answer.
type ioAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		ProtocolVersion string `json:"protocolVersion"`
		Content         []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
		Tools   []struct {
			Name string `json:"name"`
		} `json:"tools"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// readAnswer decodes body, plain JSON or an event stream whose first data
// line holds it (the published script reads both), and checks it is a
// result for id.
func readAnswer(status int, body []byte, id string) (*ioAnswer, error) {
	if status != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d: %s", status, clip(body))
	}
	text := bytes.TrimSpace(body)
	if len(text) > 0 && text[0] != '{' {
		for line := range strings.SplitSeq(string(text), "\n") {
			if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data:"); ok && strings.HasPrefix(strings.TrimSpace(data), "{") {
				text = []byte(strings.TrimSpace(data))
				break
			}
		}
	}
	var a ioAnswer
	if err := json.Unmarshal(text, &a); err != nil {
		return nil, fmt.Errorf("not a JSON-RPC answer: %v: %s", err, clip(body))
	}
	switch {
	case a.Error != nil:
		return nil, fmt.Errorf("error %d: %s", a.Error.Code, a.Error.Message)
	case a.Result == nil:
		return nil, fmt.Errorf("no result: %s", clip(body))
	case string(a.ID) != id:
		return nil, fmt.Errorf("id %s, want %s", a.ID, id)
	}
	return &a, nil
}

// checkCall checks a tools/call's answer: one text block that c.check
// accepts.
func checkCall(c ioCall, status int, body []byte) error {
	a, err := readAnswer(status, body, "2")
	if err != nil {
		return err
	}
	if a.Result.IsError || len(a.Result.Content) != 1 || a.Result.Content[0].Type != "text" {
		return fmt.Errorf("not one text block: %s", clip(body))
	}
	if err := c.check([]byte(a.Result.Content[0].Text)); err != nil {
		return fmt.Errorf("%s: %w", c.tool, err)
	}
	return nil
}

// checkList checks a tools/list's answer: the three tools.
func checkList(status int, body []byte) error {
	a, err := readAnswer(status, body, "2")
	if err != nil {
		return err
	}
	var names []string
	for _, t := range a.Result.Tools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"checkout", "get_user_cart", "search_products"}) {
		return fmt.Errorf("tools %v", names)
	}
	return nil
}

// ioResult is one cell's figures: one contestant, one mode, one round.
type ioResult struct {
	mcpRequests, toolCalls, iterations int // within the measured window
	window                             time.Duration
	negotiated                         string        // legacy: the version initialize answered
	checked                            int           // tool calls answered right, warm-up and late ones included
	windowEmpty                        bool          // no tool call fell in the window (counted in errors)
	avg, p50, p99                      time.Duration // of the tool calls
	errors                             int
	firstError                         string
}

func (r ioResult) mcpPerSec() float64   { return float64(r.mcpRequests) / r.window.Seconds() }
func (r ioResult) callsPerSec() float64 { return float64(r.toolCalls) / r.window.Seconds() }

// ioLoad drives url with vus virtual users in mode for warm+dur.
func ioLoad(ctx context.Context, url string, mode ioMode, vus int, warm, dur time.Duration) ioResult {
	tr := &http.Transport{Proxy: nil, MaxIdleConns: 2 * vus, MaxIdleConnsPerHost: 2 * vus, IdleConnTimeout: time.Minute, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	start := time.Now()
	from, until := start.Add(warm), start.Add(warm+dur)
	inWindow := func(t0, t1 time.Time) bool { return !t0.Before(from) && !t1.After(until) }

	type vu struct {
		lat             []time.Duration
		mcp, iterations int
		errors          int
		firstErr        string
		negotiated      string
		checked         int
		postBuf         bytes.Buffer
	}
	vs := make([]vu, vus)
	var wg sync.WaitGroup
	for i := range vs {
		wg.Add(1)
		go func(v *vu, n int) {
			defer wg.Done()
			calls := ioCalls(userName(n % 1000))
			reqs := make([]ioRequest, len(calls)+1) // the calls, then tools/list
			build := func(version string) {
				for j, c := range calls {
					reqs[j] = mode.request("tools/call", c.tool, c.args, version)
				}
				reqs[len(calls)] = mode.request("tools/list", "", "", version)
			}
			build("")
			fail := func(err error) {
				if v.errors++; v.firstErr == "" {
					v.firstErr = err.Error()
				}
			}
			// session opens a legacy session; it reports whether it did.
			session := func() bool {
				if mode != modeLegacy {
					return true
				}
				t0 := time.Now()
				status, body, err := ioPost(client, url, legacyInitialize, &v.postBuf)
				t1 := time.Now()
				var a *ioAnswer
				if err == nil {
					a, err = readAnswer(status, body, "1")
				}
				if err == nil && a.Result.ProtocolVersion == "" {
					err = fmt.Errorf("no protocolVersion: %s", clip(body))
				}
				if err != nil {
					fail(fmt.Errorf("initialize: %w", err))
					return false
				}
				if a.Result.ProtocolVersion != v.negotiated {
					v.negotiated = a.Result.ProtocolVersion
					build(v.negotiated)
				}
				if inWindow(t0, t1) {
					v.mcp++
				}
				if status, body, err := ioPost(client, url, legacyInitialized, &v.postBuf); err != nil || status/100 != 2 {
					fail(fmt.Errorf("notifications/initialized: HTTP %d %v: %s", status, err, clip(body)))
					return false
				}
				return true
			}
			for ctx.Err() == nil && time.Now().Before(until) {
				iterStart := time.Now()
				ok := true
				for j, c := range calls {
					if !session() {
						ok = false
						continue
					}
					t0 := time.Now()
					status, body, err := ioPost(client, url, reqs[j], &v.postBuf)
					t1 := time.Now()
					if err == nil {
						err = checkCall(c, status, body)
					}
					if err != nil {
						fail(err)
						ok = false
						continue
					}
					v.checked++
					if inWindow(t0, t1) {
						v.lat = append(v.lat, t1.Sub(t0))
						v.mcp++
					}
				}
				if session() {
					t0 := time.Now()
					status, body, err := ioPost(client, url, reqs[len(calls)], &v.postBuf)
					t1 := time.Now()
					if err == nil {
						err = checkList(status, body)
					}
					if err != nil {
						fail(fmt.Errorf("tools/list: %w", err))
						ok = false
					} else if inWindow(t0, t1) {
						v.mcp++
					}
				} else {
					ok = false
				}
				if ok && inWindow(iterStart, time.Now()) {
					v.iterations++
				}
				select {
				case <-ctx.Done():
				case <-time.After(thinkTime):
				}
			}
		}(&vs[i], i+1)
	}
	wg.Wait()

	res := ioResult{window: dur}
	var all []time.Duration
	var sum time.Duration
	for _, v := range vs {
		all = append(all, v.lat...)
		res.mcpRequests += v.mcp
		res.iterations += v.iterations
		res.checked += v.checked
		res.errors += v.errors
		if res.firstError == "" {
			res.firstError = v.firstErr
		}
		if res.negotiated == "" {
			res.negotiated = v.negotiated
		}
		for _, d := range v.lat {
			sum += d
		}
	}
	if ctx.Err() != nil && res.firstError == "" {
		res.errors, res.firstError = res.errors+1, "interrupted"
	}
	if len(all) == 0 {
		if res.firstError == "" {
			res.errors, res.firstError = res.errors+1, "no tool call completed within the measured window"
			res.windowEmpty = true
		}
		return res
	}
	slices.Sort(all)
	res.toolCalls = len(all)
	res.avg = sum / time.Duration(len(all))
	res.p50 = all[(len(all)-1)*50/100]
	res.p99 = all[(len(all)-1)*99/100]
	return res
}

// ioPost sends r and reads the whole answer into buf's storage.
func ioPost(client *http.Client, url string, r ioRequest, buf *bytes.Buffer) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(r.body))
	if err != nil {
		return 0, nil, err
	}
	req.Header = r.header
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return 0, nil, errors.Join(errors.New("reading the answer"), err)
	}
	return resp.StatusCode, buf.Bytes(), nil
}
