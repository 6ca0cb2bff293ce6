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
func checkMediaTypes(r *http.Request) *Response {
	for _, ce := range r.Header.Values("Content-Encoding") {
		for _, coding := range strings.Split(ce, ",") {
			if c := strings.TrimSpace(coding); c != "" && !strings.EqualFold(c, "identity") {
				// RFC 9110 §15.5.16: 415 for an unsupported content coding,
				// with Accept-Encoding saying what is accepted.
				return &Response{Status: http.StatusUnsupportedMediaType, Header: http.Header{"Accept-Encoding": {"identity"}},
					Error: &Error{Code: CodeInvalidRequest, Message: "Unsupported Media Type: send the body uncompressed (Content-Encoding " + quoteEcho(c) + " is not accepted)"}}
			}
		}
	}
	cts := r.Header.Values("Content-Type")
	if len(cts) > 1 {
		// Readers disagree on which of two to honour (Get takes the first,
		// many proxies the last): refuse rather than guess.
		return &Response{Status: http.StatusUnsupportedMediaType, Error: &Error{Code: CodeInvalidRequest,
			Message: "Unsupported Media Type: send exactly one Content-Type header, application/json"}}
	}
	ct := r.Header.Get("Content-Type")
	if ct == "application/json" {
		// the common case, without parsing
	} else if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		return &Response{Status: http.StatusUnsupportedMediaType, Error: &Error{Code: CodeInvalidRequest,
			Message: "Unsupported Media Type: send the JSON-RPC message with Content-Type: application/json (got " + quoteEcho(ct) + ")"}}
	}
	accepts := r.Header.Values("Accept")
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
	return &Response{Status: http.StatusNotAcceptable, Error: &Error{Code: CodeInvalidRequest,
		Message: "Not Acceptable: the Accept header must allow application/json or text/event-stream"}}
}

// readBody reads the whole body, up to the limit.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *Response) {
	tooLarge := func() *Response {
		return &Response{Status: http.StatusRequestEntityTooLarge, Error: &Error{Code: CodeInvalidRequest,
			Message: "Request body too large: the limit is " + strconv.FormatInt(h.maxBody, 10) + " bytes"}}
	}
	readErr := func(err error) *Response {
		return &Response{Status: http.StatusBadRequest, Error: &Error{Code: CodeInvalidRequest, Message: "Could not read the request body"}, err: err}
	}
	if r.ContentLength > h.maxBody {
		return nil, tooLarge()
	}
	if r.ContentLength >= 0 {
		// net/http never delivers more than Content-Length bytes.
		buf := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return nil, readErr(err)
		}
		return buf, nil
	}
	buf := make([]byte, 0, 512)
	body := http.MaxBytesReader(w, r.Body, h.maxBody)
	for {
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, tooLarge()
			}
			return nil, readErr(err)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}
