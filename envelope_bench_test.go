package mcpmw

import (
	"strings"
	"testing"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// BenchmarkParseEnvelope measures the envelope parser on bodies of the sizes
// the handler sees: a small call, a call with a 4 KiB argument, and a
// 256 KiB one.
func BenchmarkParseEnvelope(b *testing.B) {
	for _, bm := range []struct{ name, body string }{
		{"small", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"create_ticket","arguments":{"project":"PAY","summary":"Refund button broken"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.4.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`},
		{"4KiB", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + strings.Repeat("abcd", 1024) + `","nested":{"a":[1,2,{"b":[3,4]}]}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`},
		{"256KiB", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"rows":[` + strings.TrimSuffix(strings.Repeat(`{"id":12345,"name":"row \"quoted\"","tags":["x","y"]},`, 256<<10/52), ",") + `]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`},
	} {
		body := []byte(bm.body)
		if _, err := parseEnvelope(body); err != nil {
			b.Fatalf("%s: %v", bm.name, err)
		}
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				_, _ = parseEnvelope(body)
			}
		})
		// The depth check alone: its share of parseEnvelope.
		b.Run(bm.name+"/depth", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				jsonwire.ExceedsDepth(body, maxJSONDepth)
			}
		})
	}
}
