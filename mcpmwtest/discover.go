package mcpmwtest

import (
	"context"
	"encoding/json"
	"fmt"
)

// A Description is what an endpoint says about itself: the result of
// server/discover on 2026-07-28, of initialize on a legacy revision.
type Description struct {
	Exchange
	// ProtocolVersion is the version the exchange spoke: the one initialize
	// negotiated, or the client's on 2026-07-28.
	ProtocolVersion string
	// SupportedVersions are the versions server/discover lists (2026-07-28
	// only).
	SupportedVersions []string
	// Capabilities are the server's capabilities, by name ("tools",
	// "logging"…), each with its settings as sent.
	Capabilities map[string]json.RawMessage
	ServerInfo   Implementation
	Instructions string
	// Result is the whole result, as sent.
	Result json.RawMessage
}

// An Implementation is the serverInfo of a Description.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title"`
	Version string `json:"version"`
}

// Discover asks the endpoint to describe itself: server/discover on
// 2026-07-28; on a legacy revision the initialize handshake (initialize,
// then notifications/initialized), done afresh, whose answer also sets the
// version the client speaks from then on.
func (c *Client) Discover(ctx context.Context) (*Description, error) {
	if c.legacy {
		return c.initialize(ctx)
	}
	resp, err := c.Call(ctx, "server/discover", nil)
	if err != nil {
		return nil, err
	}
	var r struct {
		SupportedVersions []string                   `json:"supportedVersions"`
		Capabilities      map[string]json.RawMessage `json:"capabilities"`
		Instructions      string                     `json:"instructions"`
		Meta              struct {
			ServerInfo Implementation `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	if err := resp.Decode(&r); err != nil {
		return nil, err
	}
	return &Description{Exchange: resp.Exchange, ProtocolVersion: c.version, SupportedVersions: r.SupportedVersions,
		Capabilities: r.Capabilities, ServerInfo: r.Meta.ServerInfo, Instructions: r.Instructions, Result: resp.Result}, nil
}

// initialize does the legacy handshake and records the version chosen.
func (c *Client) initialize(ctx context.Context) (*Description, error) {
	params := map[string]json.RawMessage{
		"protocolVersion": mustJSON(c.version),
		"capabilities":    c.caps,
		"clientInfo":      c.info,
	}
	ex, result, err := c.send(ctx, "initialize", params, false)
	if err != nil {
		return nil, err
	}
	var r struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ServerInfo      Implementation             `json:"serverInfo"`
		Instructions    string                     `json:"instructions"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return nil, fmt.Errorf("mcpmwtest: decoding the initialize result: %w", err)
	}
	switch r.ProtocolVersion {
	case "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25":
	default:
		return nil, fmt.Errorf("mcpmwtest: initialize chose version %q, which is not a legacy revision", r.ProtocolVersion)
	}
	c.mu.Lock()
	c.negotiated = r.ProtocolVersion
	c.mu.Unlock()
	if _, _, err := c.send(ctx, "notifications/initialized", nil, true); err != nil {
		return nil, err
	}
	return &Description{Exchange: ex, ProtocolVersion: r.ProtocolVersion, Capabilities: r.Capabilities,
		ServerInfo: r.ServerInfo, Instructions: r.Instructions, Result: result}, nil
}
