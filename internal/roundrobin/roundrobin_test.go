package roundrobin_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/internal/roundrobin"
)

// patience bounds every wait of these tests for something that must
// happen: so generous that a busy machine never runs out of it, since it
// only turns a hang into a failure.
const patience = 30 * time.Second

// backend answers with its name, the Host it was asked for and the path.
func backend(t *testing.T, name string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, name+" "+r.Host+" "+r.URL.Path+" "+r.Header.Get("X-Forwarded-For"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// newFront returns a proxy over backends and the server in front of it,
// closed when t ends.
func newFront(t *testing.T, backends ...string) (*roundrobin.Proxy, *httptest.Server) {
	t.Helper()
	p, err := roundrobin.New(backends...)
	require.NoError(t, err)
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)
	return p, front
}

// dialRaw opens a connection to front, with a 5 s deadline, and writes
// raw on it: the start of a request sent by hand.
func dialRaw(t *testing.T, front *httptest.Server, raw string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", front.Listener.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(patience)))
	_, err = io.WriteString(conn, raw)
	require.NoError(t, err)
	return conn
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestStrictRotationNoStickiness(t *testing.T) {
	t.Parallel()
	a, b, c := backend(t, "a"), backend(t, "b"), backend(t, "c")
	p, front := newFront(t, a.URL, b.URL, c.URL)
	var got []string
	for range 7 {
		status, body := get(t, front.URL+"/mcp")
		require.Equal(t, 200, status)
		name, rest, _ := strings.Cut(body, " ")
		got = append(got, name)
		assert.Equal(t, strings.TrimPrefix(front.URL, "http://")+" /mcp 127.0.0.1", rest, "Host as the client sent it, the path, X-Forwarded-For")
	}
	assert.Equal(t, []string{"a", "b", "c", "a", "b", "c", "a"}, got, "one client, one connection: each request goes to the next backend")
	assert.Equal(t, []int64{3, 2, 2}, p.Served())
}

func TestDeadBackendIs502(t *testing.T) {
	t.Parallel()
	a, b := backend(t, "a"), backend(t, "b")
	dead := b.URL
	b.Close()
	_, front := newFront(t, a.URL, dead)
	var got []int
	for range 4 {
		status, _ := get(t, front.URL+"/mcp")
		got = append(got, status)
	}
	assert.Equal(t, []int{200, 502, 200, 502}, got, "a request sent to a dead instance fails at the proxy; the rotation goes on")
}

// TestEventStreamPassesEventByEvent: an event stream reaches the client
// as each event is written, not when the response ends.
func TestEventStreamPassesEventByEvent(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	sse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		<-release
		_, _ = io.WriteString(w, "data: second\n\n")
	}))
	t.Cleanup(sse.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	_, front := newFront(t, sse.URL)
	resp, err := http.Get(front.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(resp.Body).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		assert.Equal(t, "data: first\n", s)
	case <-time.After(patience):
		t.Fatal("the first event did not come through before the stream ended")
	}
	close(release)
}

func TestNewRefusesBadBackends(t *testing.T) {
	t.Parallel()
	for _, bad := range [][]string{nil, {"127.0.0.1:3001"}, {"ftp://x"}, {"http://"}, {"http://[::1"}} {
		_, err := roundrobin.New(bad...)
		assert.Error(t, err, "%q", bad)
	}
}

// TestBodyIsForwardedWholeBeforeTheBackendAnswers: the backend gets the
// request only once the proxy holds its whole body, so that nothing of the
// inbound body is still being read when the answer comes back. Streamed,
// the HTTP/1 server drains and closes the request body as the response
// headers are written while the transport may still read it, and the
// transport then closes the backend connection mid-stream
// (golang/go#40747): in the conformance run through the proxy that cut
// about one streamed tools/call in a few hundred. Here the client sends
// half the body, waits, then the rest: the backend must see the request
// after the second half was sent, never before.
func TestBodyIsForwardedWholeBeforeTheBackendAnswers(t *testing.T) {
	t.Parallel()
	arrived := make(chan time.Time, 1)
	sse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- time.Now()
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: "+string(body)+"\n\n")
		w.(http.Flusher).Flush()
		_, _ = io.WriteString(w, "data: second\n\n")
	}))
	t.Cleanup(sse.Close)
	_, front := newFront(t, sse.URL)

	conn := dialRaw(t, front, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\nfirst")
	select {
	case at := <-arrived:
		t.Fatalf("the backend got the request at %v, with half its body still on its way", at)
	case <-time.After(100 * time.Millisecond):
	}
	sentRest := time.Now()
	_, err := io.WriteString(conn, "-half")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	all, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the stream was cut at the proxy")
	assert.Equal(t, "data: first-half\n\ndata: second\n\n", string(all))
	assert.False(t, (<-arrived).Before(sentRest), "the backend got the request only once the whole body was there")
}

// TestStreamsThroughTheProxyAreWhole: many event streams that start the
// moment their request arrives all reach the client whole (the load the
// race of golang/go#40747 needs; see the test above for the mechanism).
func TestStreamsThroughTheProxyAreWhole(t *testing.T) {
	t.Parallel()
	sse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			_, _ = io.WriteString(w, "data: "+strconv.Itoa(i)+"\n\n")
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(sse.Close)
	_, front := newFront(t, sse.URL)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				resp, err := http.Post(front.URL+"/mcp", "application/json", strings.NewReader(body))
				if !assert.NoError(t, err) {
					return
				}
				all, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				assert.NoError(t, err)
				assert.Equal(t, "data: 0\n\ndata: 1\n\ndata: 2\n\n", string(all))
			}
		}()
	}
	wg.Wait()
}

// TestConnectionOutlivesA502: after a request the proxy could not
// forward (a dead backend), the client's connection is still good for the
// next one, as at any load balancer. A proxy that leaves the body unread
// (full duplex) closes the connection behind the 502 without saying so.
func TestConnectionOutlivesA502(t *testing.T) {
	t.Parallel()
	a := backend(t, "a")
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	_, front := newFront(t, deadURL, a.URL)
	c := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	var reused []bool
	for range 3 {
		var got bool
		ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { got = i.Reused }})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, front.URL+"/mcp", strings.NewReader(strings.Repeat("x", 4096)))
		resp, err := c.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		reused = append(reused, got)
	}
	assert.Equal(t, []bool{false, true, true}, reused, "one connection for all three, the 502 included")
}

// TestBodyCutShortIs400: a client that sends less body than it announced
// gets 400 from the proxy, and no backend hears of the request.
func TestBodyCutShortIs400(t *testing.T) {
	t.Parallel()
	a := backend(t, "a")
	p, front := newFront(t, a.URL)
	conn := dialRaw(t, front, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly ten b")
	require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, []int64{0}, p.Served(), "nothing was forwarded")
}
