package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// serve is the child side of the loopback benchmark: it serves one
// contestant at /mcp on a free port of 127.0.0.1, prints "listening ADDR" on
// out, and returns when in reaches EOF (the harness closes it, or dies) or
// after maxLife, whichever comes first.
func serve(name string, s setup, in io.Reader, out io.Writer, maxLife time.Duration) error {
	h, err := newContestant(name, s)
	if err != nil {
		return err
	}
	defer closeHandler(h)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	return serveUntilEOF(mux, in, out, maxLife)
}

// serveUntilEOF serves h on a free port of 127.0.0.1, prints "listening
// ADDR" on out, and returns when in reaches EOF or after maxLife,
// whichever comes first.
func serveUntilEOF(h http.Handler, in io.Reader, out io.Writer, maxLife time.Duration) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: nil}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	if _, err := fmt.Fprintf(out, "listening %s\n", ln.Addr()); err != nil {
		_ = srv.Close()
		return err
	}
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, in)
		close(eof)
	}()
	timer := time.NewTimer(maxLife)
	defer timer.Stop()
	select {
	case <-eof:
	case <-timer.C:
	case err := <-done:
		return err
	}
	return srv.Close()
}

// child is a contestant served by another process.
type child struct {
	name  string
	url   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// serveEnv, when set in the environment, makes this binary (or the test
// binary) a loopback child: "name,tools,maxLife" followed by options, each
// ",ask" (also serve confirm), ",resource" (also serve the resource),
// ",prompt" (also serve the prompt) or ",tasks" (echo may become a task),
// e.g. "ours,100,10m" or "ours,100,10m,ask".
const serveEnv = "MCPMW_BENCH_SERVE"

// childMain runs the child side if serveEnv asks for it, and reports whether
// it did.
func childMain() bool {
	if life := os.Getenv(ioAPIEnv); life != "" {
		ioAPIMain(life)
		return true
	}
	spec := os.Getenv(serveEnv)
	if spec == "" {
		return false
	}
	name, rest, _ := strings.Cut(spec, ",")
	toolsStr, rest, _ := strings.Cut(rest, ",")
	lifeStr, opts, _ := strings.Cut(rest, ",")
	tools, err1 := strconv.Atoi(toolsStr)
	life, err2 := time.ParseDuration(lifeStr)
	s := setup{tools: tools}
	var err3 error
	for opt := range strings.SplitSeq(opts, ",") {
		switch opt {
		case "":
		case "ask":
			s.ask = true
		case "resource":
			s.resource = true
		case "prompt":
			s.prompt = true
		case "tasks":
			s.tasks = true
		case "io":
			s.io = true
		default:
			err3 = errors.Join(err3, fmt.Errorf("unknown option %q", opt))
		}
	}
	if err := errors.Join(err1, err2, err3); err != nil {
		fmt.Fprintf(os.Stderr, "bench child: bad %s=%q: %v\n", serveEnv, spec, err)
		os.Exit(2)
	}
	if err := serve(name, s, os.Stdin, os.Stdout, life); err != nil {
		fmt.Fprintln(os.Stderr, "bench child:", err)
		os.Exit(1)
	}
	return true
}

// startChild re-executes this binary as a child serving one contestant and
// waits for it to listen.
func startChild(name string, s setup, maxLife time.Duration) (*child, error) {
	spec := fmt.Sprintf("%s=%s,%d,%s", serveEnv, name, s.tools, maxLife)
	if s.ask {
		spec += ",ask"
	}
	if s.resource {
		spec += ",resource"
	}
	if s.prompt {
		spec += ",prompt"
	}
	if s.tasks {
		spec += ",tasks"
	}
	if s.io {
		spec += ",io"
	}
	c, err := startProcess(name, spec)
	if err != nil {
		return nil, err
	}
	c.url += "/mcp"
	return c, nil
}

// startProcess re-executes this binary with env (NAME=VALUE) added to its
// environment, and waits for it to print "listening ADDR"; the child's url
// is then http://ADDR.
func startProcess(name, env string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{name: name, cmd: cmd, stdin: stdin}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case s := <-line:
		addr, ok := strings.CutPrefix(strings.TrimSpace(s), "listening ")
		if !ok {
			c.stop()
			return nil, fmt.Errorf("%s: child said %q", name, s)
		}
		c.url = "http://" + addr
		return c, nil
	case <-time.After(30 * time.Second):
		c.stop()
		return nil, fmt.Errorf("%s: child did not start listening within 30s", name)
	}
}

// stop ends the child: it closes its stdin (which makes it exit), then kills
// it in case it has not, and reaps it.
func (c *child) stop() {
	_ = c.stdin.Close()
	done := make(chan struct{})
	go func() {
		_ = c.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// loadResult is one contestant's figures under one load in one round.
type loadResult struct {
	requests   int // completed and valid within the measured window
	reqPerSec  float64
	p50, p99   time.Duration
	errors     int // failed or wrong answers, warm-up included
	firstError string
}

// fetchFingerprint sends sc once over HTTP, validates the answer fully and
// returns its fingerprint.
func fetchFingerprint(client *http.Client, url string, sc *scenario, body []byte) (*fingerprint, error) {
	status, ct, got, err := post(client, url, sc, body, nil)
	if err != nil {
		return nil, err
	}
	if err := sc.validate(status, ct, got); err != nil {
		return nil, err
	}
	return sc.fingerprint(got), nil
}

// post sends one request and reads the whole answer into buf's storage.
func post(client *http.Client, url string, sc *scenario, body []byte, buf *bytes.Buffer) (status int, contentType string, got []byte, err error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, "", nil, err
	}
	req.Header = sc.header()
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return 0, "", nil, err
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), buf.Bytes(), nil
}

// load drives url with conc keep-alive clients sending sc for warm+dur; only
// requests that start after the warm-up and end before the deadline count
// towards throughput and latency. Every answer is checked against the
// fingerprint of a fully validated one; failures count as errors.
func load(ctx context.Context, url string, sc *scenario, conc int, warm, dur time.Duration) loadResult {
	tr := &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        2 * conc,
		MaxIdleConnsPerHost: 2 * conc,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	body := sc.body()
	fp, err := fetchFingerprint(client, url, sc, body)
	if err != nil {
		return loadResult{errors: 1, firstError: err.Error()}
	}

	start := time.Now()
	measureFrom, stopAt := start.Add(warm), start.Add(warm+dur)
	type worker struct {
		lat      []time.Duration
		errors   int
		firstErr string
	}
	workers := make([]worker, conc)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func(wk *worker) {
			defer wg.Done()
			wk.lat = make([]time.Duration, 0, 4096)
			var buf bytes.Buffer
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(stopAt) {
					return
				}
				status, _, got, err := post(client, url, sc, body, &buf)
				t1 := time.Now()
				if err == nil && !fp.match(status, got) {
					err = fmt.Errorf("answer differs from the validated one: HTTP %d, %d bytes: %s", status, len(got), clip(got))
				}
				if err != nil {
					if wk.errors++; wk.firstErr == "" {
						wk.firstErr = err.Error()
					}
					continue
				}
				if !t0.Before(measureFrom) && !t1.After(stopAt) {
					wk.lat = append(wk.lat, t1.Sub(t0))
				}
			}
		}(&workers[i])
	}
	wg.Wait()

	var res loadResult
	var all []time.Duration
	for _, wk := range workers {
		all = append(all, wk.lat...)
		res.errors += wk.errors
		if res.firstError == "" {
			res.firstError = wk.firstErr
		}
	}
	if ctx.Err() != nil && res.firstError == "" {
		res.errors++
		res.firstError = "interrupted"
	}
	if len(all) == 0 {
		if res.firstError == "" {
			res.errors++
			res.firstError = "no request completed within the measured window"
		}
		return res
	}
	slices.Sort(all)
	res.requests = len(all)
	res.reqPerSec = float64(len(all)) / dur.Seconds()
	res.p50 = all[(len(all)-1)*50/100]
	res.p99 = all[(len(all)-1)*99/100]
	return res
}
