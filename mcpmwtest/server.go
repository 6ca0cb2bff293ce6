package mcpmwtest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// A Server is an MCP endpoint served in-process on a loopback port, for one
// test. It wraps an httptest.Server.
type Server struct {
	// URL is the base URL of the server, of the form http://ipaddr:port
	// with no trailing slash.
	URL string
	// HTTP is the underlying httptest.Server.
	HTTP *httptest.Server
}

// NewServer starts a server for h, an MCP endpoint such as an
// *mcpmw.Handler or the application's router, and closes it when the test
// ends (t.Cleanup). Mount points other than the root are reached with
// Path.
func NewServer(t testing.TB, h http.Handler) *Server {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &Server{URL: ts.URL, HTTP: ts}
}

// Client returns a client of the server, speaking 2026-07-28 unless
// Revision says otherwise, with no credentials unless Bearer or Header
// give some. Clients are cheap: make one per caller and revision.
func (s *Server) Client(opts ...Option) *Client {
	return NewClient(s.URL, append([]Option{HTTPClient(s.HTTP.Client())}, opts...)...)
}
