package mcpmw_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpmw/mcpmw"
)

// streamWriter is an in-memory ResponseWriter for a listen stream, with
// Flush and SetWriteDeadline as a connection's has: no sockets, so the
// benchmark measures the handler alone. It counts acknowledgements and
// list_changed events on the WaitGroups it is given.
type streamWriter struct {
	hdr    http.Header
	acks   *sync.WaitGroup
	events *sync.WaitGroup
}

func (w *streamWriter) Header() http.Header { return w.hdr }
func (w *streamWriter) WriteHeader(int)     {}
func (w *streamWriter) Write(p []byte) (int, error) {
	switch {
	case bytes.Contains(p, []byte("list_changed")):
		w.events.Done()
	case bytes.Contains(p, []byte("acknowledged")):
		w.acks.Done()
	}
	return len(p), nil
}
func (w *streamWriter) Flush()                           {}
func (w *streamWriter) SetWriteDeadline(time.Time) error { return nil }

// BenchmarkListenFanout opens n idle listen streams on one handler, then
// publishes one event per iteration and waits until every stream has
// written it. It reports the fan-out time per event and what an idle
// stream costs: heap and goroutine stacks, measured as MemStats deltas
// over the open streams (the requests and writers are made before the
// first measurement, as a server's connections would be), and goroutines
// per stream.
func BenchmarkListenFanout(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			benchFanout(b, n)
		})
	}
}

func benchFanout(b *testing.B, n int) {
	reg := benchRegistry(1, -1)
	authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return benchCaller{}, nil })
	audit := mcpmw.AuditFunc(func(context.Context, mcpmw.CallRecord) {})
	h := mcpmw.New(reg, authn, audit, &mcpmw.Options{Logger: slog.New(slog.DiscardHandler)})
	defer h.Close()

	var acks, events sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reqs := make([]*http.Request, n)
	writers := make([]*streamWriter, n)
	for i := range n {
		body := `{"jsonrpc":"2.0","id":` + fmt.Sprint(i) + `,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + meta26 + `}}`
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("MCP-Protocol-Version", "2026-07-28")
		r.Header.Set("Mcp-Method", "subscriptions/listen")
		reqs[i] = r
		writers[i] = &streamWriter{hdr: make(http.Header, 4), acks: &acks, events: &events}
	}

	before, stackBefore := memUse()
	goroutines := runtime.NumGoroutine()
	var served sync.WaitGroup
	acks.Add(n)
	for i := range n {
		served.Add(1)
		go func() {
			defer served.Done()
			h.ServeHTTP(writers[i], reqs[i])
		}()
	}
	acks.Wait()
	after, stackAfter := memUse()
	perStream := float64(after-before) / float64(n)
	stackPerStream := float64(stackAfter-stackBefore) / float64(n)
	goroutinesPerStream := float64(runtime.NumGoroutine()-goroutines) / float64(n)

	ev := mcpmw.Event{Method: mcpmw.ToolsListChanged, Permission: "read"}
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		events.Add(n)
		if err := h.Publish(context.Background(), ev); err != nil {
			b.Fatal(err)
		}
		events.Wait()
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "fanout-ms")
	b.ReportMetric(perStream, "B/stream")
	b.ReportMetric(stackPerStream, "stack-B/stream")
	b.ReportMetric(goroutinesPerStream, "goroutines/stream")
	b.StopTimer()
	cancel() // every client goes away
	served.Wait()
}

// memUse is the heap and goroutine stacks in use, and the stacks alone,
// after a collection.
func memUse() (total, stacks uint64) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse, m.StackInuse
}
