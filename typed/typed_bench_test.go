package typed_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/typed"
)

// These benchmarks serve one echo call through the whole handler, as
// mcpmw's handler_bench_test.go does: the plain raw-JSON echo, the same
// tool wrapped with Validate, and a typed echo (validation and decoding
// into a struct). A reused writer keeps the harness out of the counts.

type nopWriter struct {
	hdr    http.Header
	status int
	n      int
}

func (w *nopWriter) Header() http.Header { return w.hdr }
func (w *nopWriter) WriteHeader(s int) {
	if w.status == 0 {
		w.status = s
	}
}
func (w *nopWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}

type benchBody struct {
	b   []byte
	off int
}

func (r *benchBody) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}
func (r *benchBody) Close() error { return nil }

type freshRequest struct {
	req  http.Request
	body benchBody
}

var echoSchema = json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The text to send back."}},"required":["message"]}`)

var rawEcho = mcpmw.Tool{
	Name: "echo", Description: "Returns the message it is given.", Permission: "read", InputSchema: echoSchema,
	Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
		msg := args.String("message")
		if err := args.Err(); err != nil {
			return mcpmw.ToolResult{}, err
		}
		return mcpmw.TextResult(msg), nil
	},
}

type echoIn struct {
	Message string `json:"message" jsonschema:"The text to send back."`
}

func typedEcho() mcpmw.Tool {
	return typed.NewTool("echo", "Returns the message it is given.", "read",
		func(_ context.Context, _ mcpmw.Caller, in echoIn) (string, error) { return in.Message, nil })
}

func BenchmarkEchoCall(b *testing.B) {
	for _, bb := range []struct {
		name string
		tool mcpmw.Tool
	}{
		{"plain", rawEcho},
		{"validated", typed.Validate(rawEcho)},
		{"typed", typedEcho()},
	} {
		b.Run(bb.name, func(b *testing.B) {
			h := newHandler(bb.tool)
			body := []byte(callBody("echo", `{"message":"hello, world"}`))
			tmpl := &http.Request{Method: http.MethodPost, URL: &url.URL{Path: "/mcp"}, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header: http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
					"Mcp-Protocol-Version": {"2026-07-28"}, "Mcp-Method": {"tools/call"}, "Mcp-Name": {"echo"}},
				ContentLength: int64(len(body)), Host: "127.0.0.1", RemoteAddr: "192.0.2.1:1234", RequestURI: "/mcp"}
			request := func() *http.Request {
				f := &freshRequest{req: *tmpl}
				f.body.b = body
				f.req.Body = &f.body
				return &f.req
			}
			w := &nopWriter{hdr: http.Header{}}
			h.ServeHTTP(w, request())
			if w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
			_, resp := call(h, "echo", `{"message":"hello, world"}`)
			if resp.text() != "hello, world" || resp.Result.IsError {
				b.Fatalf("unexpected answer %+v", resp)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				clear(w.hdr)
				w.status, w.n = 0, 0
				h.ServeHTTP(w, request())
			}
		})
	}
}

func BenchmarkValidateFailure(b *testing.B) {
	tool := typed.Validate(echoArgs(orderSchema))
	args := []byte(`{"days":1,"lines":[{"sku":"a"},{"sku":"b"},{"sku":"c","qty":0}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.Call(context.Background(), allowAll{}, mcpmw.NewArgs(args)); err == nil {
			b.Fatal("no error")
		}
	}
}
