package mcpmw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// subscriptions/listen (2026-07-28): a POST whose answer is a long-lived
// event stream of change notifications. The stream opens with
// notifications/subscriptions/acknowledged, naming the kinds the server
// honours; then come only the changes the client asked for and its caller
// may see, each tagged with the listen request's id; it ends when the
// client goes, or with the request's result when the server closes it
// (Handler.Close) or the client falls too far behind.
//
// Each Handler keeps a hub of its open streams. Events reach the hub from
// the Notifier (Handler.Publish, or any instance sharing the bus) and from
// the Registry the handler serves (tools added or removed on this
// instance). The hub hands each event to the streams that asked for its
// kind (and, for notifications/resources/updated, its URI) without
// blocking; each stream's own goroutine, the one serving its request,
// checks that its caller may see the event (Caller.Can, AudienceMember)
// and writes it. No application code runs under the hub's lock or on the
// publisher's goroutine, and a stream costs no goroutine of its own.

const (
	// defaultListenKeepAlive is Options.ListenKeepAlive's default: well
	// under the 60 s idle timeout of common proxies and load balancers.
	defaultListenKeepAlive = 15 * time.Second
	// listenBuffer is how many events a stream may fall behind by. A
	// stream whose buffer is full when an event comes is ended with its
	// result: the client knows it missed something and lists again,
	// rather than the publisher waiting or the event being lost unsaid.
	listenBuffer = 64
	// maxListenURIs and maxListenURILength bound resourceSubscriptions.
	maxListenURIs      = 1000
	maxListenURILength = 2048
)

// eventKinds is a set of notification kinds, as bits.
type eventKinds uint8

const (
	kindToolsChanged eventKinds = 1 << iota
	kindResourcesChanged
	kindPromptsChanged
	kindResourceUpdated
)

// eventKind returns the kind of a notification method, or 0 for one no
// listener can ask for.
func eventKind(method string) eventKinds {
	switch method {
	case ToolsListChanged:
		return kindToolsChanged
	case ResourcesListChanged:
		return kindResourcesChanged
	case PromptsListChanged:
		return kindPromptsChanged
	case ResourceUpdated:
		return kindResourceUpdated
	}
	return 0
}

// checkEvent reports what makes ev unpublishable.
func checkEvent(ev Event) error {
	switch {
	case eventKind(ev.Method) == 0:
		return fmt.Errorf("mcpmw: Event.Method %q is not a change notification (want %s, %s, %s or %s)", ev.Method, ToolsListChanged, ResourcesListChanged, PromptsListChanged, ResourceUpdated)
	case ev.Permission == "":
		return fmt.Errorf("mcpmw: Event %s has no Permission: name the one a caller needs to see what changed", ev.Method)
	case ev.Method == ResourceUpdated && ev.URI == "":
		return errors.New("mcpmw: Event " + ResourceUpdated + " has no URI")
	}
	return nil
}

// Publish tells listening clients about a change: every subscriptions/listen
// stream, on any instance whose Handler hears Options.Notifier, that asked
// for ev's kind (and URI) and whose caller holds ev.Permission (and belongs
// to ev.Audience, when set). It returns an error, publishing nothing, for
// an Event with an unknown Method, no Permission, or (for ResourceUpdated)
// no URI; otherwise the Notifier's error.
//
// Changes to the Registry the handler serves are announced without it.
func (h *Handler) Publish(ctx context.Context, ev Event) error {
	if err := checkEvent(ev); err != nil {
		return err
	}
	return h.notifier.Publish(ctx, ev)
}

// Close ends every open subscriptions/listen stream with its result (the
// subscription ended; the client may listen again, elsewhere) and refuses
// new ones with 503; it stops hearing the Notifier. Every other request is
// served as before. Register it with http.Server.RegisterOnShutdown so that
// Shutdown, which waits for every request to finish, returns promptly:
//
//	srv.RegisterOnShutdown(h.Close)
//
// Close may be called more than once.
func (h *Handler) Close() {
	h.closeOnce.Do(func() {
		if h.stopNotify != nil {
			h.stopNotify()
		}
		h.hub.close()
	})
}

// A listener is one open listen stream, as the hub sees it: what it asked
// for and the events handed to it, not yet written.
type listener struct {
	events chan *Event
	kinds  eventKinds
	uris   map[string]struct{} // resourceSubscriptions; nil when none
	ended  atomic.Bool         // set by the hub before it closes events
}

// wants reports whether l asked for ev (its kind, and its URI).
func (l *listener) wants(k eventKinds, ev *Event) bool {
	if l.kinds&k == 0 {
		return false
	}
	if k == kindResourceUpdated {
		_, ok := l.uris[ev.URI]
		return ok
	}
	return true
}

// hub is a handler's set of open listen streams.
type hub struct {
	mu        sync.Mutex
	listeners map[*listener]struct{}
	closed    bool
}

func newHub() *hub { return &hub{listeners: map[*listener]struct{}{}} }

// add registers l; it reports false once the hub is closed.
func (hb *hub) add(l *listener) bool {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if hb.closed {
		return false
	}
	hb.listeners[l] = struct{}{}
	return true
}

// remove unregisters l, if the hub has not ended it already.
func (hb *hub) remove(l *listener) {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	delete(hb.listeners, l)
}

// isClosed reports whether Close has been called.
func (hb *hub) isClosed() bool {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	return hb.closed
}

// publish hands ev to every listener that asked for it, never blocking: a
// listener whose buffer is full is ended (see listenBuffer). It is a
// Notifier's deliver func and a Registry watcher.
func (hb *hub) publish(ev Event) {
	k := eventKind(ev.Method)
	if k == 0 || ev.Permission == "" {
		return // Publish refuses these; a Notifier from elsewhere may not
	}
	p := &ev
	hb.mu.Lock()
	defer hb.mu.Unlock()
	for l := range hb.listeners {
		if !l.wants(k, p) {
			continue
		}
		select {
		case l.events <- p:
		default:
			hb.endLocked(l)
		}
	}
}

// close ends every listener and refuses new ones.
func (hb *hub) close() {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	hb.closed = true
	for l := range hb.listeners {
		hb.endLocked(l)
	}
}

// endLocked removes l and tells its stream to end. hb.mu must be held:
// only the hub sends on events, always under it, so closing is safe.
func (hb *hub) endLocked(l *listener) {
	delete(hb.listeners, l)
	l.ended.Store(true)
	close(l.events)
}

// listening serves subscriptions/listen for one handler.
type listening struct {
	hub       *hub
	served    eventKinds // what the endpoint's capabilities can deliver
	keepAlive time.Duration
	ad        *advertisement
}

// listenExtends are the settings subscriptions/listen adds, on 2026-07-28,
// to each capability the endpoint serves.
var listenExtends = map[string]map[string]any{
	"tools":     {"listChanged": true},
	"resources": {"listChanged": true, "subscribe": true},
	"prompts":   {"listChanged": true},
}

// withListen appends subscriptions/listen to methods when they serve tools,
// resources or prompts (there is nothing to listen to otherwise), and
// reports whether it did.
func (h *Handler) withListen(methods []Method, keepAlive time.Duration) ([]Method, bool) {
	l := &listening{hub: h.hub, keepAlive: keepAlive, ad: h.ad}
	for _, m := range methods {
		switch m.Capability {
		case "tools":
			l.served |= kindToolsChanged
		case "resources":
			l.served |= kindResourcesChanged | kindResourceUpdated
		case "prompts":
			l.served |= kindPromptsChanged
		}
	}
	if l.served == 0 {
		return methods, false
	}
	return append(methods, Method{Name: "subscriptions/listen", Revisions: modernOnly, Handle: l.handle, extends: listenExtends, listens: true}), true
}

// listenCall is what call gives the listen method: the stream to write
// and the way to make the request's record when the stream opens.
type listenCall struct {
	stream *stream
	record func(*Response)
}

var listenKey = &ctxKey{"listen"}

// openListen readies the exchange of a subscriptions/listen request, whose
// answer is an event stream: a client whose Accept header rules one out
// is refused with 406 (no Accept header means anything goes), and one that
// comes after Close with 503. It reads the body to its end, so that
// net/http watches the connection and cancels the request's context when
// the client goes.
func (x *exchange) openListen(ctx context.Context) (context.Context, *answer) {
	if len(x.r.Header.Values("Accept")) > 0 && !acceptsEventStream(x.r.Header) {
		return ctx, refusal(http.StatusNotAcceptable, CodeInvalidRequest, "Not Acceptable: subscriptions/listen answers with an event stream; send Accept: text/event-stream")
	}
	if x.h.hub.isClosed() {
		a := refusal(http.StatusServiceUnavailable, CodeInvalidRequest, "Service unavailable: the server is shutting down; listen again")
		a.header = http.Header{"Retry-After": {"1"}}
		return ctx, a
	}
	var b [1]byte
	_, _ = x.r.Body.Read(b[:])
	x.streamv.w = x.w
	x.stream = &x.streamv
	return context.WithValue(ctx, listenKey, &listenCall{stream: x.stream, record: x.recordNow}), nil
}

// recordNow makes the request's record before its answer: resp stands in
// for it. A listen stream may stay open for hours, and its record says it
// was opened, when it was; finish then makes none.
func (x *exchange) recordNow(resp *Response) { x.audit(&answer{resp: resp}) }

// handle serves one subscriptions/listen request, for as long as its
// stream stays open.
func (l *listening) handle(ctx context.Context, req *Request) *Response {
	if req.IsNotification() {
		return accepted("subscriptions/listen sent as a notification: nothing to answer on")
	}
	lc, _ := ctx.Value(listenKey).(*listenCall)
	if lc == nil {
		resp := ErrorResponse(CodeInternalError, "Internal error")
		resp.Cause = errors.New("subscriptions/listen was dispatched without its stream")
		return resp
	}
	lis, honoured, summary, resp := l.parse(req)
	if resp != nil {
		return resp
	}
	if !l.hub.add(lis) {
		return ErrorResponse(CodeInvalidRequest, "Service unavailable: the server is shutting down; listen again")
	}
	defer l.hub.remove(lis)
	lc.record(&Response{Summary: summary})

	s := lc.stream
	id := req.ID
	ack := append(make([]byte, 0, 160+len(honoured)+len(id)), `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":`...)
	ack = append(ack, honoured...)
	ack = appendSubscriptionMeta(append(ack, ','), id)
	if err := s.send(ctx, append(ack, "}}"...)); err != nil {
		s.abandon()
		return l.result(id)
	}
	// The request is read; from now on the connection is only written
	// to, and the http.Server's ReadTimeout must not end it.
	_ = http.NewResponseController(s.w).SetReadDeadline(time.Time{})

	var tick <-chan time.Time
	if l.keepAlive > 0 {
		t := time.NewTicker(l.keepAlive)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case ev, ok := <-lis.events:
			if !ok || lis.ended.Load() {
				return l.result(id) // closed, or fell behind: end with the result
			}
			if !mayHear(req.Caller, ev) {
				continue
			}
			if err := s.send(ctx, appendListenEvent(make([]byte, 0, 128+len(ev.URI)+len(id)), id, ev)); err != nil {
				s.abandon()
				return l.result(id)
			}
		case <-tick:
			if err := s.keepAlive(ctx); err != nil {
				s.abandon()
				return l.result(id)
			}
		case <-ctx.Done():
			s.abandon() // the client has gone: nothing more to write
			return l.result(id)
		}
	}
}

// mayHear reports whether caller may be told about ev: it holds the
// event's permission and, when the event names an audience, belongs to it.
func mayHear(caller Caller, ev *Event) bool {
	if !caller.Can(ev.Permission) {
		return false
	}
	if ev.Audience == "" {
		return true
	}
	m, ok := caller.(AudienceMember)
	return ok && m.InAudience(ev.Audience)
}

// result is the listen request's result, sent when the server ends the
// subscription: complete, with the subscription id and serverInfo.
func (l *listening) result(id []byte) *Response {
	inner := l.ad.serverMeta[len(`"_meta":{`) : len(l.ad.serverMeta)-1] // the serverInfo member
	b := append(make([]byte, 0, 96+len(id)+len(inner)), `{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":`...)
	b = append(b, id...)
	b = append(append(b, ','), inner...)
	return &Response{Result: append(b, "}}"...), encoded: true}
}

// appendSubscriptionMeta appends the _meta member every message of a
// listen stream carries.
func appendSubscriptionMeta(dst, id []byte) []byte {
	dst = append(dst, `"_meta":{"io.modelcontextprotocol/subscriptionId":`...)
	dst = append(dst, id...)
	return append(dst, '}')
}

// appendListenEvent appends the notification for ev on the stream of the
// listen request id.
func appendListenEvent(dst, id []byte, ev *Event) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = appendString(dst, ev.Method)
	dst = append(dst, `,"params":{`...)
	if ev.Method == ResourceUpdated {
		dst = append(dst, `"uri":`...)
		dst = appendString(dst, ev.URI)
		dst = append(dst, ',')
	}
	dst = appendSubscriptionMeta(dst, id)
	return append(dst, "}}"...)
}

// listenFlags are the boolean members of a SubscriptionFilter.
var listenFlags = [...]struct {
	name string
	kind eventKinds
}{
	{"toolsListChanged", kindToolsChanged},
	{"resourcesListChanged", kindResourcesChanged},
	{"promptsListChanged", kindPromptsChanged},
}

// parse reads params.notifications: the listener for what the client asked
// and the endpoint can deliver, that subset encoded for the
// acknowledgement, and a summary for the record; or a -32602. URIs are
// honoured as given, whether or not they name a resource the caller may
// read: the acknowledgement must not tell it which exist, and each update
// is checked against the caller when it is delivered.
func (l *listening) parse(req *Request) (*listener, []byte, string, *Response) {
	raw := req.Param("notifications")
	switch kindOf(raw) {
	case kindObject:
	case kindNone:
		return nil, nil, "", invalidListen(`params.notifications is required: an object naming what to listen to, e.g. {"toolsListChanged":true}`)
	default:
		return nil, nil, "", invalidListen("params.notifications must be an object, not " + kindOf(raw).String())
	}
	members, _ := objectMembers(raw, nil)
	lis := &listener{events: make(chan *Event, listenBuffer)}
	honoured := append(make([]byte, 0, 96), '{')
	var names []string
	for _, f := range listenFlags {
		v := lookup(members, f.name)
		switch kindOf(v) {
		case kindNone:
			continue
		case kindBool:
		default:
			return nil, nil, "", invalidListen("params.notifications." + f.name + " must be a boolean, not " + kindOf(v).String())
		}
		if v[0] != 't' || l.served&f.kind == 0 {
			continue // not asked for, or not served: left out of the acknowledgement
		}
		lis.kinds |= f.kind
		names = append(names, f.name)
		if len(honoured) > 1 {
			honoured = append(honoured, ',')
		}
		honoured = append(appendString(honoured, f.name), ":true"...)
	}
	uris, resp := listenURIs(lookup(members, "resourceSubscriptions"))
	if resp != nil {
		return nil, nil, "", resp
	}
	if uris != nil && l.served&kindResourceUpdated != 0 {
		lis.kinds |= kindResourceUpdated
		lis.uris = make(map[string]struct{}, len(uris))
		if len(honoured) > 1 {
			honoured = append(honoured, ',')
		}
		honoured = append(honoured, `"resourceSubscriptions":[`...)
		for i, u := range uris {
			lis.uris[u] = struct{}{}
			if i > 0 {
				honoured = append(honoured, ',')
			}
			honoured = appendString(honoured, u)
		}
		honoured = append(honoured, ']')
		names = append(names, "resourceSubscriptions ("+strconv.Itoa(len(uris))+" URIs)")
	}
	summary := "listen: nothing"
	if len(names) > 0 {
		summary = "listen: " + strings.Join(names, ", ")
	}
	return lis, append(honoured, '}'), summary, nil
}

// listenURIs reads resourceSubscriptions: nil when absent, else its
// strings (an empty array gives an empty, non-nil list).
func listenURIs(raw []byte) ([]string, *Response) {
	switch kindOf(raw) {
	case kindNone:
		return nil, nil
	case kindArray:
	default:
		return nil, invalidListen("params.notifications.resourceSubscriptions must be an array of URI strings, not " + kindOf(raw).String())
	}
	uris := []string{}
	for i := skipSpace(raw, 1); i < len(raw) && raw[i] != ']'; {
		end := valueEnd(raw, i)
		v := raw[i:end]
		u, ok := unquote(v)
		switch {
		case !ok:
			return nil, invalidListen("params.notifications.resourceSubscriptions[" + strconv.Itoa(len(uris)) + "] must be a string, not " + kindOf(v).String())
		case len(u) > maxListenURILength:
			return nil, invalidListen("params.notifications.resourceSubscriptions[" + strconv.Itoa(len(uris)) + "] is longer than " + strconv.Itoa(maxListenURILength) + " bytes")
		case len(uris) == maxListenURIs:
			return nil, invalidListen("params.notifications.resourceSubscriptions lists more than " + strconv.Itoa(maxListenURIs) + " URIs")
		}
		uris = append(uris, u)
		if i = skipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return uris, nil
}

func invalidListen(msg string) *Response {
	return ErrorResponse(CodeInvalidParams, "Invalid params: "+msg)
}
