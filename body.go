package mcpmw

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// Reading the request: its media types and its body, within the limit.

// checkMediaTypes requires an uncompressed JSON body and an Accept header,
// if any, that allows JSON or an event stream.
func checkMediaTypes(r *http.Request) *answer {
	if a := checkContentEncoding(r.Header); a != nil {
		return a
	}
	if a := checkContentType(r.Header); a != nil {
		return a
	}
	return checkAccept(r.Header)
}

// checkContentEncoding refuses a compressed body: RFC 9110 §15.5.16 says
// 415 for an unsupported content coding, with Accept-Encoding saying what
// is accepted.
func checkContentEncoding(h http.Header) *answer {
	for _, ce := range h.Values("Content-Encoding") {
		for _, coding := range strings.Split(ce, ",") {
			if c := strings.TrimSpace(coding); c != "" && !strings.EqualFold(c, "identity") {
				a := refusal(http.StatusUnsupportedMediaType, CodeInvalidRequest, "Unsupported Media Type: send the body uncompressed (Content-Encoding "+quoteEcho(c)+" is not accepted)")
				a.header = http.Header{"Accept-Encoding": {"identity"}}
				return a
			}
		}
	}
	return nil
}

// checkContentType requires exactly one Content-Type, application/json.
func checkContentType(h http.Header) *answer {
	if len(h.Values("Content-Type")) > 1 {
		// Readers disagree on which of two to honour (Get takes the first,
		// many proxies the last): refuse rather than guess.
		return refusal(http.StatusUnsupportedMediaType, CodeInvalidRequest, "Unsupported Media Type: send exactly one Content-Type header, application/json")
	}
	ct := h.Get("Content-Type")
	if ct == "application/json" {
		return nil // the common case, without parsing
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return refusal(http.StatusUnsupportedMediaType, CodeInvalidRequest, "Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json (got "+quoteEcho(ct)+")")
	}
	return nil
}

// checkAccept requires an Accept header, when there is one, to allow JSON
// or an event stream.
func checkAccept(h http.Header) *answer {
	accepts := h.Values("Accept")
	if len(accepts) == 0 {
		return nil
	}
	for _, a := range accepts {
		for rest := a; rest != ""; {
			var part string
			part, rest, _ = strings.Cut(rest, ",")
			mt, _, _ := strings.Cut(part, ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "application/json", "text/event-stream", "*/*", "application/*", "text/*":
				return nil
			}
		}
	}
	return refusal(http.StatusNotAcceptable, CodeInvalidRequest, "Not Acceptable: the Accept header must allow application/json or text/event-stream")
}

// readBody reads the whole body, up to the limit.
//
// The buffer grows as the data arrives instead of being allocated at the
// declared Content-Length: that header is a claim, not data, and a client
// that claims 4 MiB and then stalls must not hold 4 MiB of heap per
// connection. The first buffer holds a typical request in one allocation;
// each later one doubles, so a client that sends n bytes costs at most about
// 2n, never more than the Content-Length (or MaxBodyBytes+1 without one).
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *answer) {
	tooLarge := func() *answer {
		return refusal(http.StatusRequestEntityTooLarge, CodeInvalidRequest, "Request body too large: the limit is "+strconv.FormatInt(h.maxBody, 10)+" bytes")
	}
	readErr := func(err error) *answer {
		a := refusal(http.StatusBadRequest, CodeInvalidRequest, "Could not read the request body")
		a.resp.Cause = err
		return a
	}
	if r.ContentLength > h.maxBody {
		return nil, tooLarge()
	}
	known := r.ContentLength >= 0
	var body io.Reader
	var limit, first int64
	if known {
		// net/http never delivers more than Content-Length bytes, and the
		// buffer never holds more.
		body, limit, first = r.Body, r.ContentLength, min(r.ContentLength, firstBodyBuffer)
	} else {
		// One byte over the limit is room enough to learn the body is
		// too large; MaxBytesReader says so first, and tells the server
		// not to read the rest.
		body, limit, first = http.MaxBytesReader(w, r.Body, h.maxBody), h.maxBody+1, min(h.maxBody+1, firstChunkedBuffer)
	}
	buf := make([]byte, 0, first)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) == limit {
				if known {
					return buf, nil // all of it; no need to wait for EOF
				}
				return nil, tooLarge()
			}
			buf = growBody(buf, limit)
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			if known && int64(len(buf)) < limit {
				return nil, readErr(io.ErrUnexpectedEOF)
			}
			return buf, nil
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, tooLarge()
			}
			return nil, readErr(err)
		}
	}
}

// The first buffer readBody allocates: with a Content-Length, up to
// firstBodyBuffer (a tools/call with a few KiB of arguments fits in one
// allocation); without one (chunked), firstChunkedBuffer, as such bodies
// are rare and usually small.
const (
	firstBodyBuffer    = 32 << 10
	firstChunkedBuffer = 512
)

// growBody returns buf with its contents and twice its capacity, but no
// more than limit.
func growBody(buf []byte, limit int64) []byte {
	grown := make([]byte, len(buf), min(2*int64(cap(buf)), limit))
	copy(grown, buf)
	return grown
}
