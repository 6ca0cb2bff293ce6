package mcpmw

import (
	"encoding/json"
	"strconv"
)

// appendResponseMessage appends the JSON-RPC response for resp to dst: the
// result, completed with the 2026-07-28 envelope fields when needed, or the
// error. id may be nil when the request's id could not be read.
func appendResponseMessage(dst []byte, id json.RawMessage, resp *Response, legacy bool, serverMeta []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if id != nil {
		dst = append(dst, `,"id":`...)
		dst = append(dst, id...)
	}
	if resp.Error != nil {
		dst = append(dst, `,"error":`...)
		dst = appendError(dst, resp.Error)
		return append(dst, '}')
	}
	dst = append(dst, `,"result":`...)
	if legacy || resp.complete {
		dst = append(dst, resp.Result...)
	} else {
		dst = appendCompleted(dst, resp.Result, serverMeta)
	}
	return append(dst, '}')
}

func appendError(dst []byte, e *Error) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, e.Message)
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
	ms, ok := objectMembers(res, make([]member, 0, 8))
	if !ok {
		return append(dst, res...)
	}
	dst = append(dst, '{')
	sep := false
	if lookup(ms, "resultType") == nil {
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
		dst = append(dst, m.key...)
		dst = append(dst, `":`...)
		if !m.is("_meta") || kindOf(m.val) != kindObject {
			dst = append(dst, m.val...)
			continue
		}
		hasMeta = true
		metaMembers, _ := objectMembers(m.val, nil)
		if lookup(metaMembers, "io.modelcontextprotocol/serverInfo") != nil {
			dst = append(dst, m.val...)
			continue
		}
		dst = append(dst, '{')
		dst = append(dst, inner...)
		if len(metaMembers) > 0 {
			dst = append(dst, ',')
			dst = append(dst, m.val[skipSpace(m.val, 1):]...)
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
