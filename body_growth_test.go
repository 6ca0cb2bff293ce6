package mcpmw_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// stalledBody sends its first bytes, then blocks, as a client that declared
// a large Content-Length and stopped sending; when released it fails as the
// connection is cut.
type stalledBody struct {
	stalled chan<- struct{} // receives once, when the body starts to block
	release <-chan struct{}
	sent    bool
}

func (b *stalledBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, `{"jsonrpc":"2.0",`), nil
	}
	b.stalled <- struct{}{}
	<-b.release
	return 0, io.ErrUnexpectedEOF
}

func (*stalledBody) Close() error { return nil }

// TestStalledBodyDoesNotAllocateItsContentLength is the slow-body attack of
// issue 8: connections that claim Content-Length: 4 MiB and send one line
// must not hold 4 MiB each while they stall. Not parallel: it measures the
// process's allocations.
func TestStalledBodyDoesNotAllocateItsContentLength(t *testing.T) {
	const (
		conns   = 8
		claimed = 4 << 20 // the default MaxBodyBytes: accepted by the length check
	)
	h, audit, _ := newTestHandler(t, nil)
	stalled, release := make(chan struct{}), make(chan struct{})
	codes := make(chan int, conns)
	var before, during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	for range conns {
		r := modern("1", "server/discover", "")
		r.Body, r.ContentLength = &stalledBody{stalled: stalled, release: release}, claimed
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			codes <- w.Code
		}()
	}
	for range conns {
		<-stalled
	}
	runtime.ReadMemStats(&during)
	close(release)
	wg.Wait()

	allocated := during.TotalAlloc - before.TotalAlloc
	t.Logf("%d stalled bodies claiming %d bytes each: %d bytes allocated", conns, claimed, allocated)
	assert.Less(t, allocated, uint64(conns*claimed/16), "the buffer must grow with the data, not with the claim")
	for range conns {
		assert.Equal(t, http.StatusBadRequest, <-codes)
	}
	assert.Len(t, audit.records(), conns)
}

// TestBodyReadingAcrossBufferGrowth checks readBody's answers where its
// buffer starts, grows and stops: bodies of every size around the first
// buffer and the limit, delivered in one read, half reads or a byte at a
// time, with and without a Content-Length.
func TestBodyReadingAcrossBufferGrowth(t *testing.T) {
	t.Parallel()
	const limit = 100 << 10
	h, _, _ := newTestHandler(t, &mcpmw.Options{MaxBodyBytes: limit})
	// call returns a tools/call body of exactly size bytes echoing a message.
	call := func(size int) (body, msg string) {
		head, tail := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`,
			`"},`+meta26+`}}`
		msg = strings.Repeat("abcdefghij", size/10+1)[:size-len(head)-len(tail)]
		return head + msg + tail, msg
	}
	for _, size := range []int{511, 512, 513, 1000, 32<<10 - 1, 32 << 10, 32<<10 + 1, 64 << 10, 64<<10 + 1, limit - 1, limit} {
		body, msg := call(size)
		require.Len(t, body, size)
		for _, tt := range []struct {
			name    string
			reader  func(io.Reader) io.Reader
			chunked bool
		}{
			{"whole", func(r io.Reader) io.Reader { return r }, false},
			{"half reads", iotest.HalfReader, false},
			{"chunked", func(r io.Reader) io.Reader { return r }, true},
			{"chunked, byte at a time", iotest.OneByteReader, true},
		} {
			r := modern("1", "tools/call", `"name":"echo"`)
			r.Body = io.NopCloser(tt.reader(strings.NewReader(body)))
			r.ContentLength = int64(size)
			if tt.chunked {
				r.ContentLength = -1
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			require.Equal(t, http.StatusOK, w.Code, "%d bytes, %s: %s", size, tt.name, w.Body.String())
			assert.Equal(t, msg, decode(t, w).Result["content"].([]any)[0].(map[string]any)["text"], "%d bytes, %s", size, tt.name)
		}
	}

	body, _ := call(limit + 1)
	for _, chunked := range []bool{false, true} {
		r := modern("1", "tools/call", `"name":"echo"`)
		r.Body, r.ContentLength = io.NopCloser(iotest.HalfReader(strings.NewReader(body))), int64(len(body))
		if chunked {
			r.ContentLength = -1
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code, "one byte over the limit, chunked=%v", chunked)
	}
}

func TestBodyShorterOrLongerThanItsContentLength(t *testing.T) {
	t.Parallel()
	h, audit, logs := newTestHandler(t, nil)
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta26 + `}}`

	r := modern("1", "server/discover", "")
	r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body)+1)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusBadRequest, w.Code, "the body ended before its Content-Length")
	assert.Contains(t, logs.String(), "unexpected EOF")

	r = modern("1", "server/discover", "")
	r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body+"trailing junk")), int64(len(body))
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code, "only Content-Length bytes are read: %s", w.Body.String())

	r = modern("1", "server/discover", "")
	r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body)), 0
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusBadRequest, w.Code, "Content-Length: 0 is an empty body, whatever the reader holds")

	r = modern("1", "server/discover", "")
	r.Body, r.ContentLength = io.NopCloser(iotest.DataErrReader(strings.NewReader(body))), int64(len(body))
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code, "the last bytes may come with io.EOF, as net/http sends them: %s", w.Body.String())
	assert.Len(t, audit.records(), 4)
}

func TestSmallestBodyLimit(t *testing.T) {
	t.Parallel()
	h, _, _ := newTestHandler(t, &mcpmw.Options{MaxBodyBytes: 1})
	for _, length := range []int64{2, -1} {
		r := modern("1", "server/discover", "")
		r.Body, r.ContentLength = io.NopCloser(strings.NewReader("{}")), length
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code, "length %d", length)
	}
	r := modern("1", "server/discover", "")
	r.Body, r.ContentLength = io.NopCloser(strings.NewReader("1")), -1
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusBadRequest, w.Code, "a one-byte chunked body fits a one-byte limit (and is no JSON-RPC message)")
}
