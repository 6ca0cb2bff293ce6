package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The comparison is fair only if every contestant pays for the same
// guards: since mcp-go v1.5.0 and v1.6.0, every server here refuses a
// request whose Host header is not a loopback name when it arrives on a
// loopback listener (DNS rebinding), and a body over 4 MiB. mcpmw checks
// the Host against Options.AllowedHosts (loopback names by default),
// go-sdk and mcp-go against loopback names (mcp-go also against
// WithAllowedHosts), all three on every request; the floor checks
// nothing, which is part of what makes it the floor.
func TestEveryPeerGuardsHostAndBodySize(t *testing.T) {
	sc := scenarioNamed(t, "call50")
	for _, name := range []string{"ours", "ours+hooks", "ours+typed", "gosdk", "mcpgo"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h, err := newContestant(name, sc.setup())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { closeHandler(h) })
			srv := httptest.NewServer(h) // 127.0.0.1: a loopback listener
			t.Cleanup(srv.Close)
			send := func(host string, body []byte) (int, string) {
				req, err := http.NewRequest(http.MethodPost, srv.URL+"/mcp", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header = sc.header()
				if host != "" {
					req.Host = host
				}
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				got, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(got)
			}
			if status, body := send("", sc.body()); status != http.StatusOK {
				t.Fatalf("a loopback Host: HTTP %d %s", status, clip([]byte(body)))
			}
			if status, body := send("rebound.example", sc.body()); status != http.StatusForbidden {
				t.Errorf("Host rebound.example: HTTP %d %s, want 403", status, clip([]byte(body)))
			}
			// A tools/call whose message makes the body 4 MiB + 1 KiB.
			big := strings.Replace(string(sc.body()), sc.text(), strings.Repeat("x", 4<<20+1<<10), 1)
			if status, body := send("", []byte(big)); status != http.StatusRequestEntityTooLarge {
				t.Errorf("a body over 4 MiB: HTTP %d %s, want 413", status, clip([]byte(body)))
			}
		})
	}
}
