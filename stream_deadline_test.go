package mcpmw_test

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/mcpmw/mcpmw"
)

// TestToolTimeoutHoldsWhenTheClientStopsReading is defect 6 of issue 8: a
// client that sends its request and then never reads the event stream must
// not keep a tool past its Timeout by blocking its notifications. Not
// parallel, so that goleak can see every goroutine it started end. The
// handler's event deadline is raised far above patience, so that the
// tool's Timeout (300 ms) is what must end the blocked write, and the
// test can give a busy machine patience to show it.
func TestToolTimeoutHoldsWhenTheClientStopsReading(t *testing.T) {
	const timeout = 300 * time.Millisecond
	big := strings.Repeat("x", 64<<10)
	for _, tt := range []struct {
		name    string
		opts    *mcpmw.Options
		notify  func(ctx context.Context, i int) error
		version string
		meta    string
	}{
		{"2026-07-28 progress", nil, func(ctx context.Context, i int) error {
			return mcpmw.Progress(ctx, float64(i), 0, big)
		}, "2026-07-28", `"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`},
		{"legacy log", &mcpmw.Options{ClientLogLevel: mcpmw.LogInfo}, func(ctx context.Context, i int) error {
			return mcpmw.Log(ctx, mcpmw.LogInfo, "flood", big)
		}, "2025-11-25", `"arguments":{}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			type ending struct {
				err   error
				sent  int
				after time.Duration
			}
			ended := make(chan ending, 1)
			var reg mcpmw.Registry
			reg.AddTools(mcpmw.Tool{Name: "flood", Description: "Notifies until it cannot.", Permission: "read", Timeout: timeout,
				Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
					start := time.Now()
					for i := 1; i <= 2000; i++ { // bounded: 2000 × 64 KiB is far more than any socket buffer
						if err := tt.notify(ctx, i); err != nil {
							ended <- ending{err, i - 1, time.Since(start)}
							return mcpmw.ToolResult{}, err
						}
					}
					ended <- ending{nil, 2000, time.Since(start)}
					return mcpmw.TextResult("the client took everything"), nil
				}})
			a := &spy{}
			h := mcpmw.New(&reg, tokenAuthn, a, tt.opts)
			mcpmw.SetEventWriteTimeout(h, 20*patience)
			srv := httptest.NewServer(h)
			defer func() {
				srv.Close()
				verifyNoLeaks(t, ignore)
			}()

			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			require.NoError(t, conn.(*net.TCPConn).SetReadBuffer(4<<10)) // a small window fills sooner
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"flood",` + tt.meta + `}}`
			_, err = fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
				"Authorization: Bearer reader\r\nMCP-Protocol-Version: %s\r\nMcp-Method: tools/call\r\nMcp-Name: flood\r\nContent-Length: %d\r\n\r\n%s",
				tt.version, len(body), body)
			require.NoError(t, err)
			// ...and never read.

			select {
			case e := <-ended:
				t.Logf("the tool ended after %v and %d notifications: %v", e.after, e.sent, e.err)
				require.Error(t, e.err, "the client never read, yet every notification went out")
			case <-time.After(patience): // the event deadline, the one other bound, is 20 times as long
				conn.Close() // unblocks the write, so that the test can end
				t.Fatalf("the tool still ran %v after its %v Timeout: a notification blocked on a client that does not read", patience, timeout)
			}
			require.Eventually(t, func() bool { return len(a.records()) == 1 }, patience, 10*time.Millisecond)
			rec := a.records()[0]
			assert.Equal(t, "flood", rec.Tool)
			assert.Equal(t, 200, rec.Status, "the stream had begun")
			conn.Close()
			srv.Close()
			assert.Len(t, a.records(), 1, "exactly one audit record")
		})
	}
}
