package mcpmw

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// FuzzDecodeHeaderValue checks header value decoding: plain visible ASCII
// stays as is, the =?base64?…?= sentinel decodes to valid UTF-8 or is
// refused, nothing else is accepted, and any UTF-8 string survives the
// sentinel round trip.
func FuzzDecodeHeaderValue(f *testing.F) {
	for _, s := range []string{"", "tools/call", "get_weather", "with\tinner space", "=?base64?ZWNobw==?=", "=?base64?ZWNobw?=",
		"=?base64??=", "=?base64?w6k=?=", "=?base64?w6\rk=?=", "=?base64?w6\nk=?=", "=?base64?gA==?=", "=?BASE64?ZWNobw==?=", "é", "a\nb", "=?base64?=", "?="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, err := decodeHeaderValue(v)
		const prefix, suffix = "=?base64?", "?="
		sentinel := len(v) >= len(prefix)+len(suffix) && strings.HasPrefix(v, prefix) && strings.HasSuffix(v, suffix)
		switch {
		case err != nil:
			if got != "" {
				t.Fatalf("decodeHeaderValue(%q) = %q with error %v", v, got, err)
			}
			if sentinel {
				enc := v[len(prefix) : len(v)-len(suffix)]
				b, derr := base64.StdEncoding.Strict().DecodeString(enc)
				if derr == nil && utf8.Valid(b) && !strings.ContainsAny(enc, "\r\n") {
					t.Fatalf("decodeHeaderValue(%q) refused a well-formed sentinel: %v", v, err)
				}
			} else if visibleASCII(v) {
				t.Fatalf("decodeHeaderValue(%q) refused plain visible ASCII: %v", v, err)
			}
		case sentinel:
			enc := v[len(prefix) : len(v)-len(suffix)]
			b, derr := base64.StdEncoding.Strict().DecodeString(enc)
			if derr != nil || string(b) != got || !utf8.ValidString(got) || strings.ContainsAny(enc, "\r\n") {
				t.Fatalf("decodeHeaderValue(%q) = %q; base64 gives %q, %v", v, got, b, derr)
			}
		default:
			if got != v || !visibleASCII(v) {
				t.Fatalf("decodeHeaderValue(%q) = %q; want the value itself, visible ASCII only", v, got)
			}
		}
		if utf8.ValidString(v) {
			enc := prefix + base64.StdEncoding.EncodeToString([]byte(v)) + suffix
			if back, err := decodeHeaderValue(enc); err != nil || back != v {
				t.Fatalf("round trip of %q through %q gave %q, %v", v, enc, back, err)
			}
		}
	})
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}

// FuzzMcpNameHeader drives the Mcp-Name comparison of a 2026-07-28
// tools/call: a header carrying the body's name (plainly when that is
// visible ASCII, in the sentinel form always) is accepted, and a header
// that decodes to anything else is refused with 400 -32020.
func FuzzMcpNameHeader(f *testing.F) {
	for _, tt := range [][2]string{
		{"create_ticket", "create_ticket"}, {"get_weather", "create_ticket"}, {"échec", "=?base64?w6ljaGVj?="},
		{"echo", " echo\t"}, {"echo", "=?base64?ZWNobw?="}, {"a b", "a b"}, {"", ""}, {"x", "X"},
	} {
		f.Add(tt[0], tt[1])
	}
	f.Fuzz(func(t *testing.T, name, header string) {
		if !utf8.ValidString(name) {
			return // a JSON body cannot carry invalid UTF-8 through appendString
		}
		params := `{"name":` + string(jsonwire.AppendString(nil, name)) + `,"arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`
		run := func(hv string) *verdict {
			h := http.Header{}
			h.Set("Mcp-Protocol-Version", LatestVersion)
			h.Set("Mcp-Method", "tools/call")
			h["Mcp-Name"] = []string{hv}
			return classify(&Request{ID: json.RawMessage("1"), Method: "tools/call", Params: json.RawMessage(params)}, h)
		}
		decoded, derr := decodeHeaderValue(strings.Trim(header, " \t"))
		resp := run(header)
		if derr == nil && decoded == name {
			if resp != nil {
				t.Fatalf("Mcp-Name %q for name %q refused: %+v", header, name, resp.Error)
			}
		} else if resp == nil || resp.Status != http.StatusBadRequest || resp.Error.Code != CodeHeaderMismatch {
			t.Fatalf("Mcp-Name %q for name %q: got %+v, want 400 -32020", header, name, resp)
		}
		if resp != nil && len(resp.Error.Message) > 1024 {
			t.Fatalf("the refusal echoes %d bytes", len(resp.Error.Message))
		}
		// What a conforming client sends is always accepted.
		if resp := run("=?base64?" + base64.StdEncoding.EncodeToString([]byte(name)) + "?="); resp != nil {
			t.Fatalf("sentinel form of %q refused: %+v", name, resp.Error)
		}
		if visibleASCII(name) && strings.Trim(name, " \t") == name {
			if resp := run(name); resp != nil {
				t.Fatalf("plain form of %q refused: %+v", name, resp.Error)
			}
		}
	})
}
