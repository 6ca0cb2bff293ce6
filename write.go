package mcpmw

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// Writing the answer: one writer for every answer, JSON or the last event
// of a stream. The message is built in pieces so that a result this package
// encoded (a tools/list page shared by every caller who sees it, a tool's
// result) is written as it is, never copied.

// write sends a; it is called once.
func (x *exchange) write(a *answer) {
	if x.written {
		return
	}
	x.written = true
	st := x.status(a)
	var msg [3][]byte
	if st != http.StatusAccepted && a.resp != nil {
		msg = x.message(a.resp)
	}
	if x.stream != nil && x.stream.finish(msg[:]) {
		return // sent as the last event of the stream
	}
	hdr := x.w.Header()
	for k, v := range a.header {
		hdr[k] = v
	}
	if msg[0] == nil {
		x.w.WriteHeader(st)
		return
	}
	hdr.Set("Content-Type", "application/json")
	x.w.WriteHeader(st)
	for _, piece := range msg {
		if len(piece) > 0 {
			_, _ = x.w.Write(piece)
		}
	}
}

// message returns the JSON-RPC response to the request for resp, in up to
// three pieces to be written in order. The id is the request's, byte for
// byte, and absent when it could not be read.
func (x *exchange) message(resp *Response) [3][]byte {
	id := x.env.id
	if x.env.response {
		id = nil // nothing answers a response
	}
	if resp.Error != nil {
		return [3][]byte{appendErrorMessage(make([]byte, 0, 128), id, resp.Error)}
	}
	head := append(make([]byte, 0, 32+len(id)), `{"jsonrpc":"2.0","id":`...)
	head = append(append(head, id...), `,"result":`...)
	result := resp.Result
	if v := x.revision(); v.envelope() && !resp.encoded {
		result = appendCompleted(make([]byte, 0, len(result)+len(x.h.ad.serverMeta)+32), result, x.h.ad.serverMeta)
	}
	return [3][]byte{head, result, closingBrace}
}

var closingBrace = []byte{'}'}

// appendErrorMessage appends a JSON-RPC error response to dst.
func appendErrorMessage(dst []byte, id json.RawMessage, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if id != nil {
		dst = append(dst, `,"id":`...)
		dst = append(dst, id...)
	}
	dst = append(dst, `,"error":`...)
	dst = appendError(dst, e)
	return append(dst, '}')
}

func appendError(dst []byte, e *Error) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = jsonwire.AppendString(dst, e.Message)
	if e.Data != nil {
		if raw, err := json.Marshal(e.Data); err == nil {
			dst = append(dst, `,"data":`...)
			dst = append(dst, raw...)
		}
	}
	return append(dst, '}')
}

// appendCompleted appends the result object res with what 2026-07-28 wants
// on every result and a middleware may have left out: resultType
// "complete", and serverInfo in _meta.
func appendCompleted(dst, res, serverMeta []byte) []byte {
	ms, ok := jsonwire.ObjectMembers(res, make([]jsonwire.Member, 0, 8))
	if !ok {
		return append(dst, res...)
	}
	dst = append(dst, '{')
	sep := false
	if jsonwire.Lookup(ms, "resultType") == nil {
		dst = append(dst, `"resultType":"complete"`...)
		sep = true
	}
	// serverMeta is `"_meta":{ <info member> }`; inner is the info member.
	inner := serverMeta[len(`"_meta":{`) : len(serverMeta)-1]
	hasMeta := false
	for _, m := range ms {
		if sep {
			dst = append(dst, ',')
		}
		sep = true
		dst = append(dst, '"')
		dst = append(dst, m.Key...)
		dst = append(dst, `":`...)
		if !m.Is("_meta") || jsonwire.KindOf(m.Value) != jsonwire.KindObject {
			dst = append(dst, m.Value...)
			continue
		}
		hasMeta = true
		metaMembers, _ := jsonwire.ObjectMembers(m.Value, nil)
		if jsonwire.Lookup(metaMembers, "io.modelcontextprotocol/serverInfo") != nil {
			dst = append(dst, m.Value...)
			continue
		}
		dst = append(dst, '{')
		dst = append(dst, inner...)
		if len(metaMembers) > 0 {
			dst = append(dst, ',')
			dst = append(dst, m.Value[jsonwire.SkipSpace(m.Value, 1):]...)
		} else {
			dst = append(dst, '}')
		}
	}
	if !hasMeta {
		if sep {
			dst = append(dst, ',')
		}
		dst = append(dst, serverMeta...)
	}
	return append(dst, '}')
}
