// Package roundrobin is the load balancer of the scale-out tests: a
// reverse proxy (net/http/httputil) that sends each request to the next of
// its backends in strict rotation, with no stickiness of any kind (no
// cookie, no hash of the client, no session id), so that consecutive
// requests of one client, even one MCP exchange, land on different
// instances. A request whose backend cannot be reached fails with 502, as
// at an ordinary load balancer; it is not sent elsewhere.
package roundrobin

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
)

// A Proxy is an http.Handler rotating over its backends.
type Proxy struct {
	backends []*url.URL
	next     atomic.Uint64
	rp       *httputil.ReverseProxy
	served   []atomic.Int64
}

// New returns a Proxy over backends (each a base URL such as
// http://127.0.0.1:3001; the request's path is appended). It returns an
// error when there is none or one is not an absolute http(s) URL.
func New(backends ...string) (*Proxy, error) {
	if len(backends) == 0 {
		return nil, errors.New("roundrobin: no backend")
	}
	p := &Proxy{served: make([]atomic.Int64, len(backends))}
	for _, b := range backends {
		u, err := url.Parse(b)
		if err != nil {
			return nil, err
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, errors.New("roundrobin: backend " + b + " is not an absolute http or https URL")
		}
		p.backends = append(p.backends, u)
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			i := (p.next.Add(1) - 1) % uint64(len(p.backends))
			p.served[i].Add(1)
			pr.SetURL(p.backends[i])
			pr.Out.Host = pr.In.Host // the instances check Host as they would behind a balancer
			pr.SetXForwarded()
		},
		FlushInterval: -1, // event streams pass through event by event
	}
	return p, nil
}

// maxBody bounds the request body the proxy holds: far above any MCP
// request (the handler's own limit is 4 MiB by default).
const maxBody = 64 << 20

// ServeHTTP sends r to the next backend in rotation.
//
// It reads the request body whole before it forwards it, as a buffering
// load balancer does. Streamed instead, the body is read by the transport
// while the backend's answer may already be coming back, and the HTTP/1
// server drains and closes the request body when the response headers are
// written: the transport's last read (past Content-Length) then fails and
// it closes the backend connection, cutting an event stream at random,
// about one in a few hundred against a backend that answers at once
// (golang/go#40747). Full duplex (ResponseController.EnableFullDuplex)
// avoids the drain but leaves a body the proxy did not forward unread
// (a dead backend's 502), and the server then closes the client's
// connection without saying so, which the client's next request on it
// meets as "server closed idle connection".
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil && r.Body != http.NoBody {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, "roundrobin: reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	p.rp.ServeHTTP(w, r)
}

// Served returns how many requests each backend was sent, in the order of
// New's arguments.
func (p *Proxy) Served() []int64 {
	out := make([]int64, len(p.served))
	for i := range p.served {
		out[i] = p.served[i].Load()
	}
	return out
}
