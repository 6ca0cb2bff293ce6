package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// The wire every contestant is driven on: MCP 2026-07-28, stateless, one
// JSON-RPC request per POST with the routing headers (WIRE.md §2.1) and the
// per-request _meta (WIRE.md §3.1).
const (
	protocolVersion = "2026-07-28"
	requestID       = "7"
	benchToken      = "bench-token-0123456789abcdef" // ours+hooks checks it; the others ignore it
	serverName      = "bench-server"
	serverVersion   = "1.0.0"
)

// A scenario is one kind of request, sent to a server holding a given number
// of tools.
type scenario struct {
	name   string // flag name, e.g. "call50"
	title  string // table label
	method string // "tools/call", "tools/list", "resources/read", "prompts/get" or "tasks/get"
	tools  int    // tools registered: echo plus tools-1 dummies
	msgLen int    // tools/call, tasks/get: length of the echoed message; prompts/get: of the topic
	tool   string // tools/call: the tool called; "" is echo, "confirm" asks

	// tasks: the client declares the tasks extension, and the contestant
	// serves echo as a TaskOptional tool: a tools/call of echo becomes a
	// task, and tasks/get reads one.
	tasks bool
	// taskID is the task a tasks/get asks for: bind sets it, once it has
	// created the task on the contestant that answers the scenario.
	taskID string

	markerText string // echo this, or ask about this topic, instead of message(msgLen)

	// skills: the contestant serves this many skills (the Skills
	// extension), which skills/list lists.
	skills int
}

// asks reports whether sc calls confirm, whose answer is input_required.
func (sc *scenario) asks() bool { return sc.tool == "confirm" }

// createsTask reports whether sc is a tools/call answered with a task.
func (sc *scenario) createsTask() bool { return sc.tasks && sc.method == "tools/call" }

// ownHandler reports whether each cell of sc gets a handler of its own,
// closed after it: taskcreate, whose every request leaves a task in the
// contestant's store (so that no cell measures a store the cells before it
// filled, and the run keeps only one cell's tasks at a time).
func (sc *scenario) ownHandler() bool { return sc.createsTask() }

// setup is what a contestant must serve for sc.
func (sc *scenario) setup() setup {
	return setup{tools: sc.tools, ask: sc.asks(), resource: sc.method == "resources/read", prompt: sc.method == "prompts/get", tasks: sc.tasks, skills: sc.skills}
}

// text is what the echo tool is sent, and must send back, or the topic the
// prompt is filled in with.
func (sc *scenario) text() string {
	if sc.markerText != "" {
		return sc.markerText
	}
	return message(sc.msgLen)
}

// allScenarios are the in-process scenarios, in table order. callTools is the
// registry size the tools/call scenarios run against.
func allScenarios(callTools int) []*scenario {
	return []*scenario{
		{name: "call50", title: "tools/call echo 50 B", method: "tools/call", tools: callTools, msgLen: 50},
		{name: "list1", title: "tools/list, 1 tool", method: "tools/list", tools: 1},
		{name: "list100", title: "tools/list, 100 tools", method: "tools/list", tools: 100},
		{name: "list1000", title: "tools/list, 1,000 tools", method: "tools/list", tools: 1000},
		{name: "call100k", title: "tools/call echo 100 KiB", method: "tools/call", tools: callTools, msgLen: 100 << 10},
		// The answer is input_required with no requestState: confirm keeps
		// no state from round to round, so the answer's bytes are the same
		// every time and the fingerprint check holds. The cost of sealing a
		// requestState is measured by the root package's
		// BenchmarkRequestStateRoundTrip and
		// BenchmarkServeHTTPInputRequiredRound.
		{name: "ask", title: "tools/call asking (input_required)", method: "tools/call", tools: callTools, tool: "confirm"},
		{name: "read1k", title: "resources/read 1 KiB text", method: "resources/read", tools: callTools},
		{name: "prompt", title: "prompts/get, 1 argument", method: "prompts/get", tools: callTools, msgLen: 50},
		// The task scenarios: only the contestants with a task store serve
		// them (supports). taskget reads one task, created during setup
		// (bind) and completed before it is measured: every answer is the
		// same bytes. taskcreate's answers differ in the task's id and
		// times, which its fingerprint skips; each of its cells gets a
		// handler of its own (fresh), closed after it once its tasks have
		// ended, so that no store grows from cell to cell.
		{name: "taskget", title: "tasks/get, completed task", method: "tasks/get", tools: callTools, msgLen: 50, tasks: true},
		{name: "taskcreate", title: "tools/call echo 50 B as a task", method: "tools/call", tools: callTools, msgLen: 50, tasks: true},
		// skills/list of 100 skills (only ours serves the extension: see
		// supports), beside list100's tools/list of 100 tools.
		{name: "skills100", title: "skills/list, 100 skills", method: "skills/list", tools: 1, skills: 100},
	}
}

// message returns the n-byte message the echo tool is sent: plain ASCII text
// that no JSON encoder escapes, so every contestant's answer carries it
// verbatim.
func message(n int) string {
	const text = "The quick brown fox jumps over the lazy dog, 0123456789. "
	var b strings.Builder
	b.Grow(n)
	for b.Len() < n {
		b.WriteString(text[:min(len(text), n-b.Len())])
	}
	return b.String()
}

// body returns the JSON-RPC request body of sc.
func (sc *scenario) body() []byte {
	caps := `{}`
	switch {
	case sc.asks():
		caps = `{"elicitation":{}}`
	case sc.tasks:
		caps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + protocolVersion + `",` +
		`"io.modelcontextprotocol/clientCapabilities":` + caps + `,` +
		`"io.modelcontextprotocol/clientInfo":{"name":"mcpmw-bench","version":"1.0.0"}}`
	var params string
	switch sc.method {
	case "tools/call":
		if sc.asks() {
			params = `{"name":"confirm","arguments":{},` + meta + `}`
			break
		}
		msg, _ := json.Marshal(sc.text())
		params = `{"name":"echo","arguments":{"message":` + string(msg) + `},` + meta + `}`
	case "resources/read":
		params = `{"uri":"` + resourceURI + `",` + meta + `}`
	case "prompts/get":
		topic, _ := json.Marshal(sc.text())
		params = `{"name":"` + promptName + `","arguments":{"` + promptArgument + `":` + string(topic) + `},` + meta + `}`
	case "tasks/get":
		id, _ := json.Marshal(sc.taskID)
		params = `{"taskId":` + string(id) + `,` + meta + `}`
	default:
		params = `{` + meta + `}`
	}
	return []byte(`{"jsonrpc":"2.0","id":` + requestID + `,"method":"` + sc.method + `","params":` + params + `}`)
}

// header returns the HTTP request headers of sc: what a 2026-07-28 client
// sends, plus the bearer token.
func (sc *scenario) header() http.Header {
	h := http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {protocolVersion},
		"Mcp-Method":           {sc.method},
		"Authorization":        {"Bearer " + benchToken},
	}
	switch {
	case sc.asks():
		h["Mcp-Name"] = []string{"confirm"}
	case sc.method == "tools/call":
		h["Mcp-Name"] = []string{"echo"}
	case sc.method == "resources/read":
		h["Mcp-Name"] = []string{resourceURI}
	case sc.method == "prompts/get":
		h["Mcp-Name"] = []string{promptName}
	case sc.method == "tasks/get":
		h["Mcp-Name"] = []string{sc.taskID}
	}
	return h
}

// answer is what validate reads from a response body.
type answer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string `json:"method"`
			Params struct {
				Mode            string          `json:"mode"`
				Message         string          `json:"message"`
				RequestedSchema json.RawMessage `json:"requestedSchema"`
			} `json:"params"`
		} `json:"inputRequests"`
		RequestState *string     `json:"requestState"`
		Content      []textBlock `json:"content"`
		IsError      bool        `json:"isError"`
		// A task (CreateTaskResult, tasks/get).
		TaskID         string          `json:"taskId"`
		Status         string          `json:"status"`
		CreatedAt      string          `json:"createdAt"`
		LastUpdatedAt  string          `json:"lastUpdatedAt"`
		TTLMs          *int64          `json:"ttlMs"`
		PollIntervalMs *int64          `json:"pollIntervalMs"`
		TaskResult     json.RawMessage `json:"result"` // completed: the tool's result
		TaskError      json.RawMessage `json:"error"`  // failed
		Tools          []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Skills []struct {
			URI string `json:"uri"`
		} `json:"skills"`
		NextCursor *string `json:"nextCursor"`
		Contents   []struct {
			URI      string  `json:"uri"`
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Blob     *string `json:"blob"`
		} `json:"contents"`
		Messages []struct {
			Role    string `json:"role"`
			Content struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// textBlock is a content block of a tool's result.
type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// validate checks one answer to sc fully: HTTP 200, a JSON content type, a
// JSON-RPC 2.0 result for our id, and the echoed text, every tool on one
// page, the input_required result asking to confirm, the resource's
// contents, the prompt's message, the task created, or the completed task
// with the echoed text.
func (sc *scenario) validate(status int, contentType string, body []byte) error {
	if status != http.StatusOK {
		return fmt.Errorf("HTTP status %d: %s", status, clip(body))
	}
	if !strings.HasPrefix(contentType, "application/json") {
		return fmt.Errorf("Content-Type %q, want application/json: %s", contentType, clip(body))
	}
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		return fmt.Errorf("body is not one JSON object: %v: %s", err, clip(body))
	}
	switch {
	case a.JSONRPC != "2.0":
		return fmt.Errorf(`jsonrpc is %q, want "2.0"`, a.JSONRPC)
	case string(a.ID) != requestID:
		return fmt.Errorf("id is %s, want %s", a.ID, requestID)
	case a.Error != nil:
		return fmt.Errorf("JSON-RPC error %d: %s", a.Error.Code, a.Error.Message)
	case a.Result == nil:
		return fmt.Errorf("no result: %s", clip(body))
	}
	switch {
	case sc.asks():
		return validateAsk(&a, body)
	case sc.createsTask():
		return validateTaskCreated(&a, body)
	case sc.method == "tools/call":
		if a.Result.ResultType == "task" {
			return fmt.Errorf("a task, want the call's result: %s", clip(body))
		}
		return validateEcho(a.Result.Content, a.Result.IsError, sc.text(), body)
	case sc.method == "tasks/get":
		return validateTaskGet(&a, body, sc.taskID, sc.text())
	case sc.method == "tools/list":
		if n := len(a.Result.Tools); n != sc.tools {
			return fmt.Errorf("listed %d tools, want %d on one page", n, sc.tools)
		}
		if a.Result.NextCursor != nil {
			return fmt.Errorf("nextCursor %q: the list must fit on one page", *a.Result.NextCursor)
		}
		seen := make(map[string]bool, sc.tools)
		for _, t := range a.Result.Tools {
			seen[t.Name] = true
		}
		if !seen["echo"] || len(seen) != sc.tools {
			return fmt.Errorf("listed %d distinct names (echo present: %v), want %d", len(seen), seen["echo"], sc.tools)
		}
	case sc.method == "skills/list":
		if n := len(a.Result.Skills); n != sc.skills || a.Result.NextCursor != nil {
			return fmt.Errorf("listed %d skills (next cursor: %v), want %d on one page", n, a.Result.NextCursor != nil, sc.skills)
		}
	case sc.method == "resources/read":
		return validateRead(&a, body)
	case sc.method == "prompts/get":
		return validatePrompt(&a, body, promptText(sc.text()))
	}
	return nil
}

// validateEcho checks echo's result: one text block saying want, not an
// error.
func validateEcho(content []textBlock, isError bool, want string, body []byte) error {
	switch {
	case isError:
		return fmt.Errorf("isError result: %s", clip(body))
	case len(content) != 1 || content[0].Type != "text":
		return fmt.Errorf("want one text block: %s", clip(body))
	case content[0].Text != want:
		return fmt.Errorf("echoed %d bytes %q, want %d bytes", len(content[0].Text), clip([]byte(content[0].Text)), len(want))
	}
	return nil
}

// validateTaskCreated checks a CreateTaskResult: resultType "task", a
// 128-bit base64url id, status working, the times, the harness's TTL and
// a polling interval, and nothing of the call's result.
func validateTaskCreated(a *answer, body []byte) error {
	res := a.Result
	if res.ResultType != "task" {
		return fmt.Errorf(`resultType %q, want "task" (a plain answer: the call did not become a task): %s`, res.ResultType, clip(body))
	}
	if err := validateTask(a, body, "working"); err != nil {
		return err
	}
	switch {
	case !validTaskID(res.TaskID):
		return fmt.Errorf("taskId %q is not 22 base64url characters", res.TaskID)
	case len(res.Content) != 0 || res.IsError || res.TaskResult != nil || res.TaskError != nil:
		return fmt.Errorf("a CreateTaskResult carries the task only: %s", clip(body))
	}
	return nil
}

// validateTaskGet checks a tasks/get answer for the task id, completed:
// resultType complete, and the echoed text as the task's result.
func validateTaskGet(a *answer, body []byte, id, want string) error {
	res := a.Result
	if err := validateTask(a, body, "completed"); err != nil {
		return err
	}
	switch {
	case res.ResultType != "complete":
		return fmt.Errorf(`resultType %q, want "complete": %s`, res.ResultType, clip(body))
	case res.TaskID != id:
		return fmt.Errorf("taskId %q, want %q", res.TaskID, id)
	case res.TaskError != nil || len(res.Content) != 0:
		return fmt.Errorf("a completed task carries its result only: %s", clip(body))
	}
	var tool struct {
		ResultType string      `json:"resultType"`
		Content    []textBlock `json:"content"`
		IsError    bool        `json:"isError"`
	}
	if err := json.Unmarshal(res.TaskResult, &tool); err != nil || jsonKind(res.TaskResult) != '{' {
		return fmt.Errorf("the task's result is not a JSON object: %s", clip(body))
	}
	if tool.ResultType != "complete" {
		return fmt.Errorf(`the task's result has resultType %q, want "complete": %s`, tool.ResultType, clip(body))
	}
	return validateEcho(tool.Content, tool.IsError, want, body)
}

// validateTask checks the members every task answer carries: status,
// createdAt and lastUpdatedAt (ISO 8601 in UTC, to the millisecond), the
// harness's TTL and a polling interval.
func validateTask(a *answer, body []byte, status string) error {
	res := a.Result
	switch {
	case res.Status != status:
		return fmt.Errorf("task status %q, want %q: %s", res.Status, status, clip(body))
	case res.TTLMs == nil || *res.TTLMs != benchTaskTTL.Milliseconds():
		return fmt.Errorf("ttlMs %v, want the harness's %d: %s", res.TTLMs, benchTaskTTL.Milliseconds(), clip(body))
	case res.PollIntervalMs == nil || *res.PollIntervalMs <= 0:
		return fmt.Errorf("no positive pollIntervalMs: %s", clip(body))
	}
	for _, ts := range []string{res.CreatedAt, res.LastUpdatedAt} {
		if _, err := time.Parse(isoMillis, ts); err != nil {
			return fmt.Errorf("task time %q is not ISO 8601 in UTC to the millisecond: %s", ts, clip(body))
		}
	}
	return nil
}

// isoMillis is the form of a task's times on the wire.
const isoMillis = "2006-01-02T15:04:05.000Z"

// validTaskID reports whether id is what mcpmw makes: 128 random bits,
// base64url without padding (22 characters).
func validTaskID(id string) bool {
	b, err := base64.RawURLEncoding.DecodeString(id)
	return err == nil && len(b) == 16
}

// jsonKind is the first byte of the JSON value raw, or 0.
func jsonKind(raw json.RawMessage) byte {
	if raw = bytes.TrimLeft(raw, " \t\r\n"); len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// validateRead checks a resources/read answer: exactly one contents item,
// the resource's own URI and MIME type, and its whole text (no blob).
func validateRead(a *answer, body []byte) error {
	res := a.Result
	if len(res.Contents) != 1 {
		return fmt.Errorf("want one contents item: %s", clip(body))
	}
	c := res.Contents[0]
	switch {
	case c.URI != resourceURI || c.MimeType != resourceMimeType:
		return fmt.Errorf("contents of %q (%q), want %q (%q)", c.URI, c.MimeType, resourceURI, resourceMimeType)
	case c.Blob != nil || c.Text == nil:
		return fmt.Errorf("want text contents, no blob: %s", clip(body))
	case *c.Text != resourceText:
		return fmt.Errorf("read %d bytes %s, want the resource's %d", len(*c.Text), clip([]byte(*c.Text)), len(resourceText))
	case len(res.Content) != 0 || res.IsError || len(res.Tools) != 0 || (res.ResultType != "" && res.ResultType != "complete"):
		return fmt.Errorf("a resources/read result carries contents only: %s", clip(body))
	}
	return nil
}

// validateAsk checks an input_required answer to confirm: that result type,
// exactly one input request, under "confirm", an elicitation/create form
// with our message and schema, no requestState, and no content (an empty
// or null content array counts as none: mcp-go always writes "content":[],
// go-sdk writes "content":null).
func validateAsk(a *answer, body []byte) error {
	res := a.Result
	ir, ok := res.InputRequests["confirm"]
	switch {
	case res.ResultType != "input_required":
		return fmt.Errorf(`resultType %q, want "input_required": %s`, res.ResultType, clip(body))
	case !ok || len(res.InputRequests) != 1:
		return fmt.Errorf(`want one input request, under "confirm": %s`, clip(body))
	case ir.Method != "elicitation/create":
		return fmt.Errorf(`input request method %q, want "elicitation/create"`, ir.Method)
	case ir.Params.Mode != "form" || ir.Params.Message != confirmMessage:
		return fmt.Errorf("elicitation mode %q, message %q; want a form asking %q", ir.Params.Mode, ir.Params.Message, confirmMessage)
	case res.RequestState != nil:
		return fmt.Errorf("requestState present: confirm keeps no state, so the answer must be the same every time")
	case len(res.Content) != 0 || res.IsError || len(res.Tools) != 0:
		return fmt.Errorf("an input_required result carries no content: %s", clip(body))
	}
	var got, want any
	if err := json.Unmarshal(ir.Params.RequestedSchema, &got); err != nil {
		return fmt.Errorf("requestedSchema: %v", err)
	}
	_ = json.Unmarshal([]byte(confirmForm), &want)
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("requestedSchema %s, want %s", ir.Params.RequestedSchema, confirmForm)
	}
	return nil
}

// validatePrompt checks a prompts/get answer: exactly one message, the
// user's, saying want as one text block.
func validatePrompt(a *answer, body []byte, want string) error {
	res := a.Result
	if len(res.Messages) != 1 {
		return fmt.Errorf("want one message: %s", clip(body))
	}
	m := res.Messages[0]
	switch {
	case m.Role != "user" || m.Content.Type != "text":
		return fmt.Errorf("a %q message of %q content, want the user's text: %s", m.Role, m.Content.Type, clip(body))
	case m.Content.Text != want:
		return fmt.Errorf("the message says %q, want %q", m.Content.Text, want)
	case len(res.Content) != 0 || len(res.Contents) != 0 || res.IsError || len(res.Tools) != 0 || (res.ResultType != "" && res.ResultType != "complete"):
		return fmt.Errorf("a prompts/get result carries messages only: %s", clip(body))
	}
	return nil
}

func clip(b []byte) string {
	const max = 200
	if len(b) > max {
		return strconv.Quote(string(b[:max])) + "…"
	}
	return strconv.Quote(string(b))
}

// A fingerprint is a fully validated answer, kept to check later answers of
// the same contestant cheaply: each contestant answers the same request with
// the same bytes, so a later answer must have the same status, the same
// length, and the same bytes at the start, at the end and in sampled windows
// in between. That costs about as much as a few hundred bytes of memcmp, so
// it can run on every response inside the timed loop without swamping the
// floor, while a wrong or failed answer still cannot pass. The one answer
// that is not the same bytes every time, a task created, differs only in
// the values of some members (its id, its times), whose length is fixed:
// its fingerprint skips those bytes (masks) and compares the rest.
type fingerprint struct {
	size    int
	windows []window
}

type window struct {
	off  int
	want []byte
}

// A span is the bytes [from, to) of an answer.
type span struct{ from, to int }

const (
	edgeBytes   = 128
	sampleCount = 16
	sampleBytes = 16
)

// fingerprint returns the fingerprint of body, a validated answer to sc:
// for a task created, skipping the values of its id and times.
func (sc *scenario) fingerprint(body []byte) *fingerprint {
	if !sc.createsTask() {
		return newFingerprint(body)
	}
	var masks []span
	for _, member := range []string{"taskId", "createdAt", "lastUpdatedAt"} {
		if m, ok := stringValue(body, member); ok {
			masks = append(masks, m)
		}
	}
	return newFingerprint(body, masks...)
}

// stringValue returns where the string value of the first member named
// name lies in body (between its quotes).
func stringValue(body []byte, name string) (span, bool) {
	key := []byte(`"` + name + `":"`)
	i := bytes.Index(body, key)
	if i < 0 {
		return span{}, false
	}
	from := i + len(key)
	j := bytes.IndexByte(body[from:], '"')
	if j < 0 {
		return span{}, false
	}
	return span{from, from + j}, true
}

// newFingerprint returns the fingerprint of body, whose windows leave out
// the bytes of masks.
func newFingerprint(body []byte, masks ...span) *fingerprint {
	fp := &fingerprint{size: len(body)}
	masked := func(i int) bool {
		for _, m := range masks {
			if m.from <= i && i < m.to {
				return true
			}
		}
		return false
	}
	add := func(off, n int) {
		off = max(0, min(off, len(body)))
		end := min(len(body), off+n)
		for off < end { // one window per run of bytes not masked
			for off < end && masked(off) {
				off++
			}
			from := off
			for off < end && !masked(off) {
				off++
			}
			if off > from {
				fp.windows = append(fp.windows, window{from, bytes.Clone(body[from:off])})
			}
		}
	}
	add(0, edgeBytes)
	for i := 1; i <= sampleCount; i++ {
		add(len(body)*i/(sampleCount+1), sampleBytes)
	}
	add(len(body)-edgeBytes, edgeBytes)
	return fp
}

// match reports whether body is, as far as the fingerprint can tell, the
// answer it was taken from.
func (fp *fingerprint) match(status int, body []byte) bool {
	if status != http.StatusOK || len(body) != fp.size {
		return false
	}
	for _, w := range fp.windows {
		if !bytes.Equal(body[w.off:w.off+len(w.want)], w.want) {
			return false
		}
	}
	return true
}
