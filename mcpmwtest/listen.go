package mcpmwtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"sync"
)

// A ListenFilter says which change notifications a subscriptions/listen
// stream carries (the SubscriptionFilter of the 2026-07-28 schema). A false
// or empty member is not sent.
type ListenFilter struct {
	ToolsListChanged     bool `json:"toolsListChanged,omitempty"`
	ResourcesListChanged bool `json:"resourcesListChanged,omitempty"`
	PromptsListChanged   bool `json:"promptsListChanged,omitempty"`
	// ResourceSubscriptions are the URIs whose
	// notifications/resources/updated the stream carries.
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs are the tasks whose notifications/tasks (status changes) the
	// stream carries: the tasks extension's member, which the server
	// honours only for a client that declares the extension (see
	// Capabilities) and only for the caller's own tasks.
	TaskIDs []string `json:"taskIds,omitempty"`
}

// subscriptionIDKey is the _meta member naming the listen stream a message
// belongs to.
const subscriptionIDKey = "io.modelcontextprotocol/subscriptionId"

// errListenerClosed is what Next returns once Close was called.
var errListenerClosed = errors.New("mcpmwtest: the Listener is closed")

// A Listener is an open subscriptions/listen stream: the endpoint's change
// notifications, read one at a time with Next. Close it when done, as an
// http.Response body. Next is for one goroutine at a time; Close may be
// called from any goroutine, at any time, more than once.
type Listener struct {
	// Exchange holds the status and headers of the stream's HTTP answer;
	// its Notifications stay empty, since Next returns them.
	Exchange
	// ID is the subscription id the acknowledgement carried: the listen
	// request's JSON-RPC id, which every later notification carries too.
	ID json.RawMessage
	// Acknowledged is the part of the filter the endpoint agreed to honour.
	Acknowledged ListenFilter
	// Final is the result that ended the stream, once Next returned io.EOF.
	Final json.RawMessage

	reqID  string // the listen request's id
	events *eventReader
	body   io.Closer
	cancel context.CancelFunc
	items  chan listenItem
	done   chan struct{} // closed by Close
	ended  chan struct{} // closed when the reading goroutine returns
	once   sync.Once
	err    error // what Next returns from now on (io.EOF, a broken stream, errListenerClosed)
}

// A listenItem is what the reading goroutine hands Next: a notification,
// the final result, or why the stream broke.
type listenItem struct {
	n     Notification
	final json.RawMessage
	err   error
}

// Listen opens a subscriptions/listen stream asking for the notifications
// filter names, for a test of an endpoint's change notifications: open it,
// change the tools (or prompts, or a resource), and expect the notification
// from Next. It returns once the endpoint acknowledged the subscription,
// which must be the stream's first event; an answer that is not a 200
// event stream is an *Error (or another error) as Call returns it, such as
// -32601 from an endpoint that serves no notifications.
//
// ctx bounds the whole stream, as for any HTTP request: cancelling it ends
// the stream. subscriptions/listen exists on 2026-07-28 only; a legacy
// client returns an error without sending anything.
func (c *Client) Listen(ctx context.Context, filter ListenFilter) (*Listener, error) {
	if c.legacy {
		return nil, fmt.Errorf("mcpmwtest: subscriptions/listen is a 2026-07-28 method; the client speaks %s", c.version)
	}
	id := strconv.FormatInt(c.nextID.Add(1), 10)
	ctx, cancel := context.WithCancel(ctx)
	req, err := c.newRequest(ctx, "subscriptions/listen", map[string]any{"notifications": filter}, id)
	if err != nil {
		cancel()
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("mcpmwtest: subscriptions/listen: %w", err)
	}
	l := &Listener{Exchange: Exchange{Status: resp.StatusCode, Header: resp.Header, Stream: true},
		reqID: id, events: newEventReader(resp.Body), body: resp.Body, cancel: cancel,
		items: make(chan listenItem), done: make(chan struct{}), ended: make(chan struct{})}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || mt != "text/event-stream" {
		defer l.stop()
		_, _, err := readAnswer(resp, id)
		if err == nil {
			err = fmt.Errorf("mcpmwtest: subscriptions/listen answered HTTP %d, %s, with a result instead of an open event stream",
				resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		return nil, err
	}
	if err := l.acknowledge(id, filter); err != nil {
		l.stop()
		return nil, err
	}
	go l.read()
	return l, nil
}

// acknowledge reads the stream's first event, which must acknowledge the
// subscription request id with a part of filter.
func (l *Listener) acknowledge(id string, filter ListenFilter) error {
	data, err := l.events.next()
	if errors.Is(err, io.EOF) {
		return errors.New("mcpmwtest: the listen stream ended before it was acknowledged")
	}
	if err != nil {
		return err
	}
	m, err := parseMessage(data)
	switch {
	case err != nil:
		return fmt.Errorf("mcpmwtest: an event is not a JSON-RPC message: %w: %s", err, data)
	case m.Method == "" && m.Error != nil:
		return &Error{Exchange: l.Exchange, Code: m.Error.Code, Message: m.Error.Message, Data: m.Error.Data}
	case m.Method != "notifications/subscriptions/acknowledged" || m.ID != nil:
		return fmt.Errorf("mcpmwtest: the listen stream's first event is not notifications/subscriptions/acknowledged: %s", data)
	}
	var p struct {
		Meta          map[string]json.RawMessage `json:"_meta"`
		Notifications *ListenFilter              `json:"notifications"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Notifications == nil {
		return fmt.Errorf("mcpmwtest: the acknowledgement has no notifications filter: %s", data)
	}
	if !sameJSON(p.Meta[subscriptionIDKey], id) {
		return fmt.Errorf("mcpmwtest: the acknowledgement's subscription id is %s, the listen request's id %s", p.Meta[subscriptionIDKey], id)
	}
	a := *p.Notifications
	extra := (a.ToolsListChanged && !filter.ToolsListChanged) || (a.ResourcesListChanged && !filter.ResourcesListChanged) ||
		(a.PromptsListChanged && !filter.PromptsListChanged)
	for _, uri := range a.ResourceSubscriptions {
		extra = extra || !slices.Contains(filter.ResourceSubscriptions, uri)
	}
	for _, id := range a.TaskIDs {
		extra = extra || !slices.Contains(filter.TaskIDs, id)
	}
	if extra {
		return fmt.Errorf("mcpmwtest: the acknowledgement honours more than was asked: %s", data)
	}
	l.ID, l.Acknowledged = p.Meta[subscriptionIDKey], a
	return nil
}

// Next returns the stream's next notification, once the endpoint sends it;
// comments (keep-alives) are skipped. It returns io.EOF once the endpoint
// ended the stream with its result (then in Final), an *Error when it ended
// it with a JSON-RPC error, and another error when the stream broke or
// carried what a listen stream must not: a request, a notification
// without the subscription id or of a kind not acknowledged, progress or a
// log message; once it returned one of those, it returns it again. A ctx
// done first makes Next return ctx.Err() and leaves the stream open, so a
// test can assert that nothing came within a time and read on.
func (l *Listener) Next(ctx context.Context) (Notification, error) {
	if l.err == nil {
		select {
		case <-l.done:
			l.err = errListenerClosed
		default:
		}
	}
	if l.err != nil {
		return Notification{}, l.err
	}
	select {
	case <-ctx.Done():
		return Notification{}, ctx.Err()
	case <-l.done:
		l.err = errListenerClosed
		return Notification{}, l.err
	case it := <-l.items:
		switch {
		case it.err != nil:
			l.err = it.err
		case it.final != nil:
			l.Final, l.err = it.final, io.EOF
		default:
			return it.n, nil
		}
		return Notification{}, l.err
	}
}

// Close ends the stream: it closes the connection, so the endpoint sees the
// client go, and returns once nothing reads the stream any more. Next then
// returns an error. Close is safe to call more than once and always
// returns nil.
func (l *Listener) Close() error {
	l.stop()
	<-l.ended
	return nil
}

// stop closes the stream, once; the reading goroutine, if Listen started
// it, then ends.
func (l *Listener) stop() {
	l.once.Do(func() {
		close(l.done)
		l.cancel()
		_ = l.body.Close()
	})
}

// read hands Next the stream's messages until the stream ends or breaks, or
// Close is called.
func (l *Listener) read() {
	defer close(l.ended)
	for {
		it := l.nextItem()
		select {
		case l.items <- it:
		case <-l.done:
			return
		}
		if it.err != nil || it.final != nil {
			return
		}
	}
}

// nextItem reads the stream's next message and checks it.
func (l *Listener) nextItem() listenItem {
	data, err := l.events.next()
	if errors.Is(err, io.EOF) {
		return listenItem{err: fmt.Errorf("mcpmwtest: the listen stream ended without a result: %w", io.ErrUnexpectedEOF)}
	}
	if err != nil {
		return listenItem{err: err}
	}
	m, err := parseMessage(data)
	switch {
	case err != nil:
		return listenItem{err: fmt.Errorf("mcpmwtest: an event is not a JSON-RPC message: %w: %s", err, data)}
	case m.Method != "" && m.ID != nil:
		return listenItem{err: fmt.Errorf("mcpmwtest: the server sent a request (%s) on the listen stream", m.Method)}
	case m.Method != "":
		return listenItem{n: Notification{Method: m.Method, Params: m.Params}, err: l.check(m, data)}
	case m.Result == nil && m.Error == nil:
		return listenItem{err: fmt.Errorf("mcpmwtest: an event is neither a notification nor a response: %s", data)}
	case !sameJSON(m.ID, l.reqID):
		return listenItem{err: fmt.Errorf("mcpmwtest: the listen stream's answer has id %s, the request had %s", m.ID, l.reqID)}
	}
	if _, err := l.events.next(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("mcpmwtest: an event after the listen stream's result")
		}
		return listenItem{err: err}
	}
	if m.Error != nil {
		return listenItem{err: &Error{Exchange: l.Exchange, Code: m.Error.Code, Message: m.Error.Message, Data: m.Error.Data}}
	}
	var r struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(m.Result, &r) != nil || !sameJSON(r.Meta[subscriptionIDKey], l.reqID) {
		return listenItem{err: fmt.Errorf("mcpmwtest: the listen stream's result lacks _meta %q: %s", subscriptionIDKey, m.Result)}
	}
	return listenItem{final: m.Result}
}

// check returns why notification m, which came as data, must not be on
// this stream, or nil.
func (l *Listener) check(m *wireMessage, data []byte) error {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if !sameJSON(p.Meta[subscriptionIDKey], l.reqID) {
		return fmt.Errorf("mcpmwtest: a notification without the subscription id %s: %s", l.reqID, data)
	}
	a := l.Acknowledged
	honoured := true
	switch m.Method {
	case "notifications/tools/list_changed":
		honoured = a.ToolsListChanged
	case "notifications/resources/list_changed":
		honoured = a.ResourcesListChanged
	case "notifications/prompts/list_changed":
		honoured = a.PromptsListChanged
	case "notifications/resources/updated":
		honoured = len(a.ResourceSubscriptions) > 0
	case "notifications/tasks":
		var t struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal(m.Params, &t)
		honoured = slices.Contains(a.TaskIDs, t.TaskID)
	case "notifications/progress", "notifications/message", "notifications/subscriptions/acknowledged":
		return fmt.Errorf("mcpmwtest: %s does not belong on a listen stream: %s", m.Method, data)
	}
	if !honoured {
		return fmt.Errorf("mcpmwtest: %s was not acknowledged: %s", m.Method, data)
	}
	return nil
}

// sameJSON reports whether raw is the JSON text want, ignoring spacing.
func sameJSON(raw json.RawMessage, want string) bool {
	var buf bytes.Buffer
	return raw != nil && json.Compact(&buf, raw) == nil && buf.String() == want
}
