package mcpmwtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
)

// maxAnswerBytes bounds what the client reads of one answer.
const maxAnswerBytes = 64 << 20

// wireMessage is any JSON-RPC message the endpoint may send.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// readAnswer reads the answer to the request with the given id: one JSON
// body, or an event stream of notifications ending with the answer. It
// returns the result, an *Error for an answer that is not one, or another
// error when the answer breaks the protocol.
func readAnswer(resp *http.Response, id string) (Exchange, json.RawMessage, error) {
	ex := Exchange{Status: resp.StatusCode, Header: resp.Header}
	body := io.LimitReader(resp.Body, maxAnswerBytes)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var final *wireMessage
	switch mt {
	case "application/json":
		raw, err := io.ReadAll(body)
		if err != nil {
			return ex, nil, fmt.Errorf("mcpmwtest: reading the answer: %w", err)
		}
		if final, err = parseMessage(raw); err != nil {
			return ex, nil, notJSONRPC(ex, raw, err)
		}
	case "text/event-stream":
		ex.Stream = true
		var err error
		if final, err = readStream(&ex, body, id); err != nil {
			return ex, nil, err
		}
	default:
		raw, _ := io.ReadAll(io.LimitReader(body, 512))
		return ex, nil, notJSONRPC(ex, raw, fmt.Errorf("Content-Type %q", resp.Header.Get("Content-Type")))
	}
	if final.Method != "" || (final.Result == nil && final.Error == nil) {
		return ex, nil, fmt.Errorf("mcpmwtest: the answer is not a JSON-RPC response: method %q, no result or error", final.Method)
	}
	if got := string(final.ID); got != id && !(final.Error != nil && (got == "" || got == "null")) {
		return ex, nil, fmt.Errorf("mcpmwtest: the answer has id %s, the request had %s", got, id)
	}
	if final.Error != nil {
		return ex, nil, &Error{Exchange: ex, Code: final.Error.Code, Message: final.Error.Message, Data: final.Error.Data}
	}
	return ex, final.Result, nil
}

// parseMessage decodes one JSON-RPC message.
func parseMessage(raw []byte) (*wireMessage, error) {
	var m wireMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m.JSONRPC != "2.0" {
		return nil, fmt.Errorf(`jsonrpc is %q, not "2.0"`, m.JSONRPC)
	}
	return &m, nil
}

// notJSONRPC is the *Error for an answer that holds no JSON-RPC message.
func notJSONRPC(ex Exchange, body []byte, why error) error {
	msg := strings.TrimSpace(string(body))
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	if msg == "" {
		msg = "(" + why.Error() + ")"
	}
	return &Error{Exchange: ex, Message: msg}
}

// readStream reads an event stream: notifications, then the answer, then
// the end of the stream. Anything else (a request from the server, a
// message after the answer, no answer at all) is an error, since the
// endpoint under test must not send it.
func readStream(ex *Exchange, r io.Reader, id string) (*wireMessage, error) {
	var final *wireMessage
	events := newEventReader(r)
	for {
		data, err := events.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		m, err := parseMessage(data)
		switch {
		case err != nil:
			return nil, fmt.Errorf("mcpmwtest: an event is not a JSON-RPC message: %w: %s", err, data)
		case final != nil:
			return nil, fmt.Errorf("mcpmwtest: an event after the answer: %s", data)
		case m.Method != "" && m.ID != nil:
			return nil, fmt.Errorf("mcpmwtest: the server sent a request (%s) on the stream; this client answers none", m.Method)
		case m.Method != "":
			ex.Notifications = append(ex.Notifications, Notification{Method: m.Method, Params: m.Params})
		default:
			final = m
		}
	}
	if final == nil {
		return nil, fmt.Errorf("mcpmwtest: the event stream ended without an answer to request %s", id)
	}
	return final, nil
}

// An eventReader reads the events of an SSE stream
// (https://html.spec.whatwg.org/multipage/server-sent-events.html) one at
// a time, for readStream and for a Listener, which must stop between two
// events.
type eventReader struct {
	br *bufio.Reader
}

func newEventReader(r io.Reader) *eventReader {
	return &eventReader{br: bufio.NewReader(r)}
}

// next returns the data of the next event: its data lines joined by
// newlines, comments (keep-alives) and other fields skipped. It returns
// io.EOF when the stream ends between two events, and another error when
// it ends inside one or cannot be read.
func (e *eventReader) next() ([]byte, error) {
	var data []byte
	have := false
	for {
		line, err := e.br.ReadBytes('\n')
		if len(line) > 0 || err == nil {
			line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
			switch {
			case len(line) == 0:
				if have {
					return data, nil
				}
			case line[0] == ':': // a comment, such as a keep-alive
			default:
				field, value, _ := bytes.Cut(line, []byte(":"))
				value = bytes.TrimPrefix(value, []byte(" "))
				if string(field) == "data" {
					if have {
						data = append(data, '\n')
					}
					data, have = append(data, value...), true
				}
			}
		}
		if errors.Is(err, io.EOF) {
			if have { // an SSE client drops such an event: say why
				return nil, fmt.Errorf("mcpmwtest: the event stream ended inside an event (no blank line after %q)", data)
			}
			return nil, io.EOF
		}
		if err != nil {
			return nil, fmt.Errorf("mcpmwtest: reading the event stream: %w", err)
		}
	}
}
