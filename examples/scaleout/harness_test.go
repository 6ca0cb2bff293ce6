package scaleout

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw/internal/redistest"
	"github.com/mcpmw/mcpmw/internal/roundrobin"
	"github.com/mcpmw/mcpmw/internal/testproc"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// The example app's bearer tokens (examples/chi-app/app.go): reader and
// writer of the team "demo", other of the team "other".
const (
	readerToken = "reader-token"
	writerToken = "writer-token"
	otherToken  = "other-token"
)

// patience bounds every wait for something that must happen (an instance
// listening, an answer, a task's end, a record): so generous that a busy
// machine never runs out of it, since it only turns a hang into a
// failure. A wait for something that must not happen takes a short window
// instead, which load can only lengthen.
const patience = 30 * time.Second

// redisTimeout is the REDIS_TIMEOUT of every cluster's instances (each
// call of mcpredis's rate limit, notifications, relay and tasks), unless
// a test says otherwise: the tests check what the instances do together
// while Redis answers, and mcpredis's 50ms, meant for a Redis next door on
// a machine with room, is missed now and then on a busy one (a missed one
// fails a rate-limit check open, or a task's creation over to a plain
// call). TestRedisStoppedThenStarted, about the deadlines, sets its own.
const redisTimeout = "2s"

// binDir holds the binaries, built once for the whole run.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpmw-scaleout")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	// The proxy logs every 502 through the log package (ReverseProxy's
	// ErrorLog): hundreds of lines in the kill test, all expected.
	log.SetOutput(io.Discard)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

var builds struct {
	mu   sync.Mutex
	done map[string]error
}

// binary builds the example named app (chi-app, conformance) once per run
// and returns its path.
func binary(t *testing.T, app string) string {
	t.Helper()
	builds.mu.Lock()
	defer builds.mu.Unlock()
	bin := filepath.Join(binDir, app)
	err, ok := builds.done[app]
	if !ok {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./"+app)
		cmd.Dir = ".." // the examples' module
		if out, berr := cmd.CombinedOutput(); berr != nil {
			err = fmt.Errorf("go build ./%s: %v\n%s", app, berr, out)
		}
		if builds.done == nil {
			builds.done = map[string]error{}
		}
		builds.done[app] = err
	}
	require.NoError(t, err)
	return bin
}

// logBuffer keeps what a process writes to its stderr.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// count returns how many lines hold every one of fragments.
func (l *logBuffer) count(fragments ...string) int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		all := true
		for _, f := range fragments {
			all = all && strings.Contains(line, f)
		}
		if all {
			n++
		}
	}
	return n
}

// An instance is one running process of an example.
type instance struct {
	name   string
	url    string // http://127.0.0.1:port, without /mcp
	audit  string // its AUDIT_LOG
	logs   *logBuffer
	cmd    *exec.Cmd
	exited chan struct{}
}

var endpointLine = regexp.MustCompile(`MCP endpoint at (http://[^ ]+)/mcp`)

// startInstance starts bin with env on a free port of 127.0.0.1 and waits
// until it says where it listens; it is stopped when t ends.
func startInstance(t *testing.T, name, bin string, env []string) *instance {
	t.Helper()
	in := &instance{name: name, audit: filepath.Join(t.TempDir(), name+".audit.jsonl"), logs: &logBuffer{}, exited: make(chan struct{})}
	in.cmd = exec.Command(bin)
	in.cmd.Env = append(os.Environ(), append([]string{"ADDR=127.0.0.1:0", "AUDIT_LOG=" + in.audit}, env...)...)
	in.cmd.Stdout, in.cmd.Stderr = in.logs, in.logs
	in.cmd.SysProcAttr = testproc.SysProcAttr()
	require.NoError(t, in.cmd.Start())
	go func() {
		_ = in.cmd.Wait()
		close(in.exited)
	}()
	t.Cleanup(in.stop)
	deadline := time.Now().Add(patience)
	for {
		if m := endpointLine.FindStringSubmatch(in.logs.String()); m != nil {
			in.url = m[1]
			return in
		}
		select {
		case <-in.exited:
			t.Fatalf("%s exited before listening:\n%s", name, in.logs)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen within %v:\n%s", name, patience, in.logs)
		}
	}
}

// stop ends the process (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (in *instance) stop() {
	select {
	case <-in.exited:
		return
	default:
	}
	_ = in.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-in.exited:
	case <-time.After(5 * time.Second):
		_ = in.cmd.Process.Kill()
		<-in.exited
	}
}

// kill ends the process at once (SIGKILL), as a crash would.
func (in *instance) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, in.cmd.Process.Signal(syscall.SIGKILL))
	select {
	case <-in.exited:
	case <-time.After(patience):
		t.Fatalf("%s did not exit within %v of SIGKILL", in.name, patience)
	}
}

// records returns how many audit records the process wrote of each
// request, by its JSON-RPC id (a string id without its quotes).
func (in *instance) records(t *testing.T) map[string]int {
	t.Helper()
	f, err := os.Open(in.audit)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var rec struct {
			RequestID string `json:"request_id"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec), "%s's audit log: %s", in.name, sc.Bytes())
		id := rec.RequestID // the id exactly as sent: a string id in its quotes
		if strings.HasPrefix(id, `"`) {
			require.NoError(t, json.Unmarshal([]byte(id), &id), "%s's audit log: %s", in.name, sc.Bytes())
		}
		out[id]++
	}
	require.NoError(t, sc.Err())
	return out
}

// client returns a 2026-07-28 client of the instance, or of url.
func client(url, token string, opts ...mcpmwtest.Option) *mcpmwtest.Client {
	return mcpmwtest.NewClient(url+"/mcp", append([]mcpmwtest.Option{mcpmwtest.Bearer(token), mcpmwtest.HTTPClient(httpClient)}, opts...)...)
}

// httpClient is every test client's: keep-alive connections enough for 64
// concurrent clients, and a bound on every request (a hang's, not a
// deadline test's: see answeredWithin).
var httpClient = &http.Client{
	Timeout:   2 * patience,
	Transport: &http.Transport{MaxIdleConnsPerHost: 128, MaxConnsPerHost: 128},
}

// A cluster is three instances of one example sharing a redis-server and
// an MCP_STATE_KEY, and the round-robin proxy in front of them.
type cluster struct {
	redis     *redistest.Server
	instances []*instance
	proxy     *roundrobin.Proxy
	proxyURL  string
}

// startCluster starts redis-server, then three instances of app with env
// (and REDIS_URL, MCP_STATE_KEY, and REDIS_TIMEOUT unless env sets it),
// then the proxy; all stop when t ends. REDIS_URL raises go-redis's
// socket read timeout from 3 s to redisReadTimeout: every call must end
// at its own deadline (REDIS_TIMEOUT, the notes store's 500 ms) long
// before, so that a call left without one would show, in
// TestRedisStoppedThenStarted, as an answer later than answeredWithin.
func startCluster(t *testing.T, app string, env ...string) *cluster {
	t.Helper()
	srv := redistest.Start(t) // first: without redis-server, skip before building
	bin := binary(t, app)
	var key [32]byte
	_, _ = rand.Read(key[:])
	env = append([]string{"REDIS_URL=redis://" + srv.Addr + "/0?read_timeout=" + redisReadTimeout.String(), "MCP_STATE_KEY=" + hex.EncodeToString(key[:]),
		"REDIS_TIMEOUT=" + redisTimeout}, env...) // a later entry overrides an earlier one
	c := &cluster{redis: srv}
	var backends []string
	for i := range 3 {
		in := startInstance(t, fmt.Sprintf("%s-%d", app, i+1), bin, env)
		c.instances = append(c.instances, in)
		backends = append(backends, in.url)
	}
	p, err := roundrobin.New(backends...)
	require.NoError(t, err)
	ps := httptest.NewServer(p)
	t.Cleanup(ps.Close)
	c.proxy, c.proxyURL = p, ps.URL
	return c
}

// logs returns every instance's log output, for a failure message.
func (c *cluster) logs() string {
	var b strings.Builder
	for _, in := range c.instances {
		fmt.Fprintf(&b, "--- %s\n%s", in.name, in.logs)
	}
	return b.String()
}

// post sends one JSON-RPC request body to url/mcp as a 2026-07-28 client
// of token and returns the status, headers and body.
func post(ctx context.Context, url, token, method, name, body string) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", strings.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(resp.Body)
	return resp.StatusCode, resp.Header, b.Bytes(), err
}

// meta is the params._meta of a 2026-07-28 request.
const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"scaleout","version":"0"}}`

// echoBody is a tools/call of echo with this JSON-RPC id, which it also
// echoes.
func echoBody(id string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"echo","arguments":{"message":"` + id + `"},` + meta + `}}`
}

// waitFor calls ok until it returns true or within (patience, or more)
// has passed.
func waitFor(t *testing.T, what string, within time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A burstResult is what burst saw: how many answers had each status, and
// each Retry-After value; how long the slowest answer took, and the whole
// burst.
type burstResult struct {
	statuses map[int]int
	retries  map[string]int
	slowest  time.Duration
	took     time.Duration
}

// refills returns how many requests a budget of perMinute may have
// regained while the burst ran: one every minute/perMinute, plus one for
// the refill under way when it began.
func (b burstResult) refills(perMinute int) int {
	return 1 + int(b.took/(time.Minute/time.Duration(perMinute)))
}

// burst sends clients×each echoes through url, clients at a time.
func burst(t *testing.T, url string, clients, each int) burstResult {
	t.Helper()
	var (
		mu       sync.Mutex
		statuses = map[int]int{}
		retries  = map[string]int{}
		slowest  time.Duration
		wg       sync.WaitGroup
	)
	start := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				t0 := time.Now()
				status, h, _, err := post(t.Context(), url, readerToken, "tools/call", "echo", echoBody("burst-"+strconv.Itoa(w)+"-"+strconv.Itoa(i)))
				mu.Lock()
				assert.NoError(t, err)
				statuses[status]++
				if status == 429 {
					retries[h.Get("Retry-After")]++
				}
				slowest = max(slowest, time.Since(t0))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b := burstResult{statuses: statuses, retries: retries, slowest: slowest, took: time.Since(start)}
	t.Logf("burst of %d×%d: %v, the slowest answered in %v, all in %v", clients, each, statuses, slowest.Round(time.Millisecond), b.took.Round(time.Millisecond))
	return b
}
