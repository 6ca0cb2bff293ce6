package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"runtime/metrics"
	"testing"
)

// fakeWriter is a reusable http.ResponseWriter: it keeps the status and the
// body for validation and reuses its header map and body buffer from one
// request to the next, so that the harness stays out of the allocation
// counts. It implements http.Flusher, as net/http's writer does, so peers
// take the same paths they take behind a real server.
type fakeWriter struct {
	hdr         http.Header
	status      int
	wroteHeader bool
	body        []byte
}

func newFakeWriter() *fakeWriter { return &fakeWriter{hdr: make(http.Header, 8)} }

func (w *fakeWriter) Header() http.Header { return w.hdr }

func (w *fakeWriter) WriteHeader(status int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = status, true
	}
}

func (w *fakeWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.body = append(w.body, p...)
	return len(p), nil
}

func (w *fakeWriter) Flush() { w.WriteHeader(http.StatusOK) }

func (w *fakeWriter) reset() {
	clear(w.hdr)
	w.status, w.wroteHeader = 0, false
	w.body = w.body[:0]
}

// contentType returns the Content-Type the handler set.
func (w *fakeWriter) contentType() string {
	if v := w.hdr["Content-Type"]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// newTemplateRequest returns the request every in-process iteration of sc
// copies: a POST to /mcp from 192.0.2.1 with sc's headers and body.
func newTemplateRequest(sc *scenario, body []byte) *http.Request {
	return &http.Request{
		Method:        http.MethodPost,
		URL:           &url.URL{Path: "/mcp"},
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        sc.header(),
		Body:          &bodyReader{b: body},
		ContentLength: int64(len(body)),
		Host:          "127.0.0.1",
		RemoteAddr:    "192.0.2.1:1234",
		RequestURI:    "/mcp",
	}
}

// bodyReader is the cheapest request body: a read cursor over shared bytes.
type bodyReader struct {
	b   []byte
	off int
}

func (r *bodyReader) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

func (r *bodyReader) Close() error { return nil }

// freshRequest is one iteration's request: a copy of the template (same
// header map, which no contestant modifies) with its own body
// cursor, in a single allocation.
type freshRequest struct {
	req  http.Request
	body bodyReader
}

func newRequest(tmpl *http.Request, body []byte) *http.Request {
	f := &freshRequest{req: *tmpl}
	f.body.b = body
	f.req.Body = &f.body
	return &f.req // its context is nil, which Context reports as context.Background()
}

// A handlerPool builds the handlers of the in-process contestants, keeps
// those it may reuse from cell to cell, and the scenarios bound to them.
type handlerPool struct {
	handlers map[handlerKey]http.Handler
	bound    map[cellKey]*scenario
}

func newHandlerPool() *handlerPool {
	return &handlerPool{handlers: map[handlerKey]http.Handler{}, bound: map[cellKey]*scenario{}}
}

// open returns name's handler for sc, and sc bound to it (bind). A
// scenario whose requests leave state behind (ownHandler) gets a new
// handler every time, which the caller closes; the pool keeps the others,
// one per contestant and setup.
func (p *handlerPool) open(name string, sc *scenario) (http.Handler, *scenario, error) {
	k := handlerKey{name, sc.setup()}
	h, ok := p.handlers[k]
	if !ok || sc.ownHandler() {
		var err error
		if h, err = newContestant(name, sc.setup()); err != nil {
			return nil, nil, err
		}
		if !sc.ownHandler() {
			p.handlers[k] = h
		}
	}
	ck := cellKey{sc.name, name}
	if p.bound[ck] == nil {
		b, err := bind(sc, inProcess(h))
		if err != nil {
			closeHandler(h)
			delete(p.handlers, k)
			return nil, nil, fmt.Errorf("in-process %s: %w", name, err)
		}
		p.bound[ck] = b
	}
	return h, p.bound[ck], nil
}

// close closes the handlers the pool keeps.
func (p *handlerPool) close() {
	for k, h := range p.handlers {
		closeHandler(h)
		delete(p.handlers, k)
	}
}

// cellResult is one contestant's figures for one scenario in one round.
type cellResult struct {
	nsPerOp     float64
	bytesPerOp  float64
	allocsPerOp float64
	iterations  int
	errors      int
	firstError  string
}

// validateOnce sends sc to h once, validates the answer fully and returns its
// fingerprint for the timed loop.
func validateOnce(h http.Handler, sc *scenario, tmpl *http.Request, body []byte) (*fingerprint, error) {
	w := newFakeWriter()
	h.ServeHTTP(w, newRequest(tmpl, body))
	if err := sc.validate(w.status, w.contentType(), w.body); err != nil {
		return nil, err
	}
	return sc.fingerprint(w.body), nil
}

// benchCell measures h answering sc with testing.Benchmark over ServeHTTP.
// Every response is checked against the fingerprint of a fully validated one;
// a cell with any failed answer reports errors instead of speed.
func benchCell(h http.Handler, sc *scenario) cellResult {
	body := sc.body()
	tmpl := newTemplateRequest(sc, body)
	fp, err := validateOnce(h, sc, tmpl, body)
	if err != nil {
		return cellResult{errors: 1, firstError: err.Error()}
	}
	w := newFakeWriter()
	var errs int
	var firstErr string
	runtime.GC()
	r := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w.reset()
			h.ServeHTTP(w, newRequest(tmpl, body))
			if !fp.match(w.status, w.body) {
				if errs++; firstErr == "" {
					firstErr = fmt.Sprintf("answer differs from the validated one: HTTP %d, %d bytes: %s", w.status, len(w.body), clip(w.body))
				}
			}
		}
	})
	if r.N == 0 {
		return cellResult{errors: 1, firstError: "the benchmark did not run"}
	}
	return cellResult{
		nsPerOp:     float64(r.T.Nanoseconds()) / float64(r.N),
		bytesPerOp:  float64(r.MemBytes) / float64(r.N),
		allocsPerOp: float64(r.MemAllocs) / float64(r.N),
		iterations:  r.N,
		errors:      errs,
		firstError:  firstErr,
	}
}

// goroutinesCreated is the runtime's count of goroutines created since the
// program started (Go 1.26+; ok is false on older runtimes).
func goroutinesCreated() (n uint64, ok bool) {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0, false
	}
	return s[0].Value.Uint64(), true
}

// goroutinesPerRequest sends sc to h n times, one after the other on this
// goroutine, and returns how many goroutines the runtime created meanwhile,
// per request: anything the handler starts, even if it has ended by the time
// ServeHTTP returns. Nothing else in the harness runs at that time. It
// returns -1 on a runtime without the metric, and an error if an answer is
// wrong.
func goroutinesPerRequest(h http.Handler, sc *scenario, n int) (float64, error) {
	body := sc.body()
	tmpl := newTemplateRequest(sc, body)
	fp, err := validateOnce(h, sc, tmpl, body)
	if err != nil {
		return 0, err
	}
	before, ok := goroutinesCreated()
	if !ok {
		return -1, nil
	}
	if err := serveSequentially(h, tmpl, body, fp, n); err != nil {
		return 0, err
	}
	after, _ := goroutinesCreated()
	return float64(after-before) / float64(n), nil
}

// serveSequentially sends n copies of tmpl with body to h, one after the
// other on this goroutine, and checks every answer against fp.
func serveSequentially(h http.Handler, tmpl *http.Request, body []byte, fp *fingerprint, n int) error {
	w := newFakeWriter()
	for range n {
		w.reset()
		h.ServeHTTP(w, newRequest(tmpl, body))
		if !fp.match(w.status, w.body) {
			return fmt.Errorf("answer differs from the validated one: HTTP %d: %s", w.status, clip(w.body))
		}
	}
	return nil
}

// harnessOverhead measures what every in-process figure includes besides the
// handler: building the request and resetting the writer.
func harnessOverhead(sc *scenario) cellResult {
	body := sc.body()
	tmpl := newTemplateRequest(sc, body)
	w := newFakeWriter()
	var sink *http.Request
	r := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w.reset()
			sink = newRequest(tmpl, body)
		}
	})
	_ = sink
	return cellResult{
		nsPerOp:     float64(r.T.Nanoseconds()) / float64(r.N),
		bytesPerOp:  float64(r.MemBytes) / float64(r.N),
		allocsPerOp: float64(r.MemAllocs) / float64(r.N),
		iterations:  r.N,
	}
}
