package mcpmwtest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpmw/mcpmw"
)

// A Client is one caller talking to one endpoint on one revision of the
// protocol, as a real MCP client would: every request is a POST with
// Content-Type application/json and Accept "application/json,
// text/event-stream", and
//
//   - on 2026-07-28, params._meta carries the protocol version, the client's
//     capabilities and clientInfo, and the MCP-Protocol-Version, Mcp-Method
//     and Mcp-Name headers (and Mcp-Param-* for tools listed with
//     x-mcp-header annotations) go with every request;
//   - on a legacy revision, the client first does the initialize handshake
//     (initialize, then notifications/initialized) and sends the negotiated
//     MCP-Protocol-Version on every later request. No session id is needed:
//     a stateless endpoint answers initialize as a pure function.
//
// Answers may be JSON or an event stream; a stream's notifications are kept
// in the answer's Exchange. A Client is safe for concurrent use. It is a
// test client, not a general MCP client: it answers no request from the
// server, keeps no session and never retries.
type Client struct {
	url      string
	hc       *http.Client
	header   http.Header
	version  string
	legacy   bool
	caps     json.RawMessage
	info     json.RawMessage
	logLevel mcpmw.LogLevel
	progress bool
	nextID   atomic.Int64

	mu           sync.Mutex
	negotiated   string                   // legacy: the version initialize chose, "" before it
	headerParams map[string][]paramHeader // per tool, its x-mcp-header arguments, from ListTools
}

// An Option configures a Client.
type Option func(*Client)

// Bearer sends "Authorization: Bearer token" with every request.
func Bearer(token string) Option {
	return Header("Authorization", "Bearer "+token)
}

// Header sends the header with every request, replacing the client's own
// value for that name (so Header("Accept", "application/json") makes a
// client that cannot take an event stream). An empty value removes it.
func Header(name, value string) Option {
	return func(c *Client) {
		if value == "" {
			c.header.Del(name)
			return
		}
		c.header.Set(name, value)
	}
}

// Revision sets the protocol revision the client speaks; the default is
// mcpmw.LatestVersion (2026-07-28). A version the legacy revisions know
// (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05) makes a legacy client,
// which negotiates through initialize; any other is sent as a 2026-07-28
// client would send it, in _meta and MCP-Protocol-Version.
func Revision(version string) Option {
	return func(c *Client) { c.version = version }
}

// ClientInfo sets the name and version the client declares (clientInfo in
// _meta, or in initialize). The default is "mcpmwtest" "0".
func ClientInfo(name, version string) Option {
	return func(c *Client) {
		c.info, _ = json.Marshal(map[string]string{"name": name, "version": version})
	}
}

// Capabilities sets the client capabilities the client declares, as any
// value encoding/json encodes to an object, such as
// map[string]any{"sampling": map[string]any{}}. The default is none ({}).
func Capabilities(caps any) Option {
	return func(c *Client) {
		raw, err := json.Marshal(caps)
		if err != nil {
			panic("mcpmwtest.Capabilities: " + err.Error())
		}
		c.caps = raw
	}
}

// LogLevel asks, on 2026-07-28, for log messages at or above level on every
// request (io.modelcontextprotocol/logLevel in _meta). The legacy revisions
// cannot ask per request; there the endpoint's Options.ClientLogLevel
// decides.
func LogLevel(level mcpmw.LogLevel) Option {
	return func(c *Client) { c.logLevel = level }
}

// RequestProgress asks for progress notifications on every request: its
// _meta carries a progressToken equal to the request's JSON-RPC id.
func RequestProgress() Option {
	return func(c *Client) { c.progress = true }
}

// Path appends p to the URL the client posts to, for a server whose
// handler serves MCP below its root (a router with the endpoint at /mcp).
func Path(p string) Option {
	return func(c *Client) { c.url = strings.TrimSuffix(c.url, "/") + "/" + strings.TrimPrefix(p, "/") }
}

// HTTPClient sets the http.Client that sends the requests; the default is
// http.DefaultClient, or the test server's own client for Server.Client.
func HTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.hc = hc }
}

// NewClient returns a client of the MCP endpoint at url: an
// httptest.Server's URL, say, where no testing.TB is at hand (TestMain, an
// Example), or a server running elsewhere. In a test, Server.Client is
// shorter.
func NewClient(url string, opts ...Option) *Client {
	c := &Client{url: url, hc: http.DefaultClient, header: http.Header{}, version: mcpmw.LatestVersion,
		caps: json.RawMessage(`{}`), info: json.RawMessage(`{"name":"mcpmwtest","version":"0"}`)}
	c.header.Set("Content-Type", "application/json")
	c.header.Set("Accept", "application/json, text/event-stream")
	for _, o := range opts {
		o(c)
	}
	switch c.version {
	case "2024-11-05", "2025-03-26", mcpmw.Version20250618, mcpmw.Version20251125:
		c.legacy = true
	}
	return c
}

// Version returns the protocol version the client speaks: the one it was
// given, or on a legacy revision the one initialize negotiated, once it
// has.
func (c *Client) Version() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.negotiated != "" {
		return c.negotiated
	}
	return c.version
}

// Call sends one request and returns its result, or an *Error when the
// endpoint answered with a JSON-RPC error or without JSON-RPC at all.
// params is any value encoding/json encodes to an object, or nil. Members
// of params._meta that it sets win over the client's own, so a test can
// send, say, a wrong protocolVersion. A legacy client does the initialize
// handshake first, once.
func (c *Client) Call(ctx context.Context, method string, params any) (*Response, error) {
	if c.legacy && method != "initialize" {
		if err := c.handshake(ctx); err != nil {
			return nil, err
		}
	}
	ex, result, err := c.send(ctx, method, params, false)
	if err != nil {
		return nil, err
	}
	return &Response{Exchange: ex, Result: result}, nil
}

// Notify sends a notification (a message without an id, such as
// notifications/cancelled) and expects 202 Accepted with no body.
func (c *Client) Notify(ctx context.Context, method string, params any) (*Exchange, error) {
	if c.legacy {
		if err := c.handshake(ctx); err != nil {
			return nil, err
		}
	}
	ex, _, err := c.send(ctx, method, params, true)
	if err != nil {
		return nil, err
	}
	return &ex, nil
}

// handshake does the legacy initialize handshake unless it is done, and
// fails when the server chose another version than the client's.
func (c *Client) handshake(ctx context.Context) error {
	c.mu.Lock()
	done := c.negotiated != ""
	c.mu.Unlock()
	if done {
		return nil
	}
	d, err := c.initialize(ctx)
	if err != nil {
		return err
	}
	if d.ProtocolVersion != c.version {
		return fmt.Errorf("mcpmwtest: the client asked for %s, the server chose %s", c.version, d.ProtocolVersion)
	}
	return nil
}

// send posts one message and reads its answer. A notification expects 202.
func (c *Client) send(ctx context.Context, method string, params any, notification bool) (Exchange, json.RawMessage, error) {
	id := ""
	if !notification {
		id = strconv.FormatInt(c.nextID.Add(1), 10)
	}
	req, err := c.newRequest(ctx, method, params, id)
	if err != nil {
		return Exchange{}, nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return Exchange{}, nil, fmt.Errorf("mcpmwtest: %s: %w", method, err)
	}
	defer resp.Body.Close()
	if notification {
		ex := Exchange{Status: resp.StatusCode, Header: resp.Header}
		if resp.StatusCode != http.StatusAccepted {
			_, _, err := readAnswer(resp, "null")
			var e *Error
			if !errors.As(err, &e) {
				err = fmt.Errorf("mcpmwtest: %s: HTTP %d, not 202 Accepted", method, resp.StatusCode)
			}
			return ex, nil, err
		}
		return ex, nil, nil
	}
	return readAnswer(resp, id)
}

// newRequest builds the POST of one message, with the client's _meta in
// its params and the client's headers; id is "" for a notification.
func (c *Client) newRequest(ctx context.Context, method string, params any, id string) (*http.Request, error) {
	members, err := c.buildParams(method, params, id)
	if err != nil {
		return nil, err
	}
	msg := map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`), "method": mustJSON(method)}
	if id != "" {
		msg["id"] = json.RawMessage(id)
	}
	if members != nil {
		msg["params"] = mustJSON(members)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(mustJSON(msg)))
	if err != nil {
		return nil, fmt.Errorf("mcpmwtest: %w", err)
	}
	c.setHeaders(req.Header, method, members)
	return req, nil
}

// buildParams returns the request's params as members, with the client's _meta
// members added where params does not set them; nil for no params.
func (c *Client) buildParams(method string, params any, id string) (map[string]json.RawMessage, error) {
	var members map[string]json.RawMessage
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("mcpmwtest: %s params: %w", method, err)
		}
		if err := json.Unmarshal(raw, &members); err != nil {
			return nil, fmt.Errorf("mcpmwtest: %s params must encode to a JSON object: %s", method, raw)
		}
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := members["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return members, nil // a test sending a malformed _meta gets it as is
	}
	if !c.legacy && method != "initialize" {
		meta["io.modelcontextprotocol/protocolVersion"] = mustJSON(c.version)
		meta["io.modelcontextprotocol/clientCapabilities"] = c.caps
		meta["io.modelcontextprotocol/clientInfo"] = c.info
		if c.logLevel != "" {
			meta["io.modelcontextprotocol/logLevel"] = mustJSON(c.logLevel)
		}
	}
	if c.progress && id != "" {
		meta["progressToken"] = json.RawMessage(id)
	}
	var user map[string]json.RawMessage
	if raw, ok := members["_meta"]; ok {
		_ = json.Unmarshal(raw, &user)
	}
	for k, v := range user {
		meta[k] = v
	}
	if len(meta) == 0 {
		return members, nil
	}
	if members == nil {
		members = map[string]json.RawMessage{}
	}
	members["_meta"] = mustJSON(meta)
	return members, nil
}

// setHeaders sets the headers of a request: the client's own, and on
// 2026-07-28 the routing headers, or on a legacy revision after the
// handshake the negotiated version.
func (c *Client) setHeaders(h http.Header, method string, params map[string]json.RawMessage) {
	for k, v := range c.header {
		h[k] = v
	}
	if c.legacy {
		c.mu.Lock()
		v := c.negotiated
		c.mu.Unlock()
		if method != "initialize" && v != "" {
			h.Set("MCP-Protocol-Version", v)
		}
		return
	}
	h.Set("MCP-Protocol-Version", c.version)
	h.Set("Mcp-Method", method)
	field := ""
	switch method {
	case "tools/call", "prompts/get":
		field = "name"
	case "resources/read":
		field = "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		field = "taskId"
	}
	var name string
	if field == "" || json.Unmarshal(params[field], &name) != nil {
		return
	}
	h.Set("Mcp-Name", headerValue(name))
	if method == "tools/call" {
		c.mu.Lock()
		ps := c.headerParams[name]
		c.mu.Unlock()
		for _, p := range ps {
			if v, ok := p.value(params["arguments"]); ok {
				h.Set(p.header, v)
			}
		}
	}
}

// headerValue encodes a value for a header that mirrors the body: as is
// when it is visible ASCII without surrounding spaces, otherwise in the
// =?base64?…?= form the 2026-07-28 transport defines.
func headerValue(s string) string {
	plain := !strings.HasPrefix(s, "=?base64?") && strings.TrimSpace(s) == s
	for i := 0; plain && i < len(s); i++ {
		plain = s[i] >= 0x20 && s[i] <= 0x7e
	}
	if plain {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// mustJSON encodes v, which the client built and encoding/json accepts.
func mustJSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic("mcpmwtest: " + err.Error())
	}
	return raw
}
