// Command rrproxy is a round-robin reverse proxy for the scale-out tests
// (internal/roundrobin): each request goes to the next backend in strict
// rotation, with no stickiness. It listens on 127.0.0.1 only, prints
// "rrproxy: listening on http://ADDR" on stderr once it does, and runs
// until SIGINT or SIGTERM.
//
//	go run ./scripts/rrproxy -listen 127.0.0.1:0 http://127.0.0.1:3001 http://127.0.0.1:3002
//
// scripts/conformance-proxy.sh runs the conformance suite through it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpmw/mcpmw/internal/roundrobin"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (a loopback host)")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: rrproxy [-listen 127.0.0.1:PORT] BACKEND-URL...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(*listen, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "rrproxy:", err)
		os.Exit(1)
	}
}

func run(listen string, backends []string) error {
	if host, _, err := net.SplitHostPort(listen); err != nil || !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("-listen %q: want a loopback address such as 127.0.0.1:0", listen)
	}
	p, err := roundrobin.New(backends...)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "rrproxy: listening on http://%s, rotating over %d backends\n", ln.Addr(), len(backends))
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintf(os.Stderr, "rrproxy: requests sent to each backend: %v\n", p.Served())
	shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		_ = srv.Close()
	}
	return nil
}
