package mcpmw

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// Cursors of the paginated lists (tools, prompts, resources, resource
// templates) are an offset into the list the caller sees, behind the
// list's own prefix, base64url-encoded: opaque to clients, as the
// specification asks, and stateless, so any instance can serve the next
// page. A cursor of one list is no cursor of another, and only the exact
// form this server issues is accepted.

// listCursor reads the cursor of a request for a list of kind.
func listCursor(req *Request, kind listKind) (int, *Response) {
	prefix := kind.cursor
	switch raw := req.Param("cursor"); jsonwire.KindOf(raw) {
	case jsonwire.KindNone, jsonwire.KindNull:
		return 0, nil
	case jsonwire.KindString:
		s, _ := jsonwire.Unquote(raw)
		off, ok := decodeListCursor(prefix, s)
		if !ok {
			return 0, ErrorResponse(CodeInvalidParams, "Invalid params: cursor "+quoteEcho(s)+" is not one this server issued for "+req.Method+"; list again without a cursor")
		}
		return off, nil
	default:
		return 0, ErrorResponse(CodeInvalidParams, "Invalid params: cursor must be a string")
	}
}

func encodeListCursor(prefix string, off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(prefix + strconv.Itoa(off)))
}

func decodeListCursor(prefix, s string) (int, bool) {
	if s == "" {
		return 0, true
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || !strings.HasPrefix(string(b), prefix) {
		return 0, false
	}
	n, err := strconv.Atoi(string(b[len(prefix):]))
	if err != nil || n < 0 || encodeListCursor(prefix, n) != s { // only the exact form this server issues
		return 0, false
	}
	return n, true
}
