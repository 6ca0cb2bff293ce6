package mcpmw

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// subscriptions/listen (2026-07-28): a POST whose answer is a long-lived
// event stream of change notifications. The stream opens with
// notifications/subscriptions/acknowledged, naming the kinds the server
// honours; then come only the changes the client asked for and its caller
// may see, each tagged with the listen request's id; it ends when the
// client goes, or with the request's result when the server closes it
// (Handler.Close) or the stream has lasted Options.ListenMaxLifetime.
//
// Each Handler keeps a hub of its open streams. Events reach the hub from
// the Notifier (Handler.Publish, or any instance sharing the bus) and from
// the Registry the handler serves (tools added or removed on this
// instance). An event takes a place in a stream's queue only once its
// caller may hear it, and then at most one place: a stream holds at most
// one pending list_changed of each kind and one pending resources/updated
// for each URI it subscribed to, however many events come, so no one
// else's events can fill it or make it fall behind. Published events are
// checked against each listener's caller (Caller.Can, AudienceMember) on
// the goroutine delivering them, outside every lock. Registry changes
// come under the Registry's lock, where no application code may run: the
// hub notes which permission's entries changed, and each stream asks its
// own caller, on its own goroutine. A stream costs no goroutine of its
// own: the one serving its request writes its events.

const (
	// defaultListenKeepAlive is Options.ListenKeepAlive's default: well
	// under the 60 s idle timeout of common proxies and load balancers.
	defaultListenKeepAlive = 15 * time.Second
	// defaultListenMaxLifetime is Options.ListenMaxLifetime's default.
	defaultListenMaxLifetime = time.Hour
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

// listChanged are the list_changed kinds, in the order of their places in
// a listener's queue, with their methods.
var listChanged = [...]struct {
	kind   eventKinds
	method string
}{
	{kindToolsChanged, ToolsListChanged},
	{kindResourcesChanged, ResourcesListChanged},
	{kindPromptsChanged, PromptsListChanged},
}

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
	case ev.Method == ResourceUpdated:
		if _, err := normalURI(ev.URI); err != nil {
			return fmt.Errorf("mcpmw: Event %s URI %q has no normal form: %v", ResourceUpdated, ev.URI, err)
		}
	}
	return nil
}

// Publish tells listening clients about a change: every subscriptions/listen
// stream, on any instance whose Handler hears Options.Notifier, that asked
// for ev's kind (and URI) and whose caller holds ev.Permission (and belongs
// to ev.Audience, when set). It returns an error, publishing nothing, for
// an Event with an unknown Method, no Permission, or (for ResourceUpdated)
// no URI; otherwise the Notifier's error. It never waits for a listener.
// With the default LocalNotifier, the listening callers are asked (Can,
// InAudience) on the goroutine calling Publish, before it returns: do not
// call it holding a lock their methods take.
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
// new ones with 503; it stops hearing the Notifier. Each stream first
// writes the notifications it had queued, within 30 s in all (a client
// that does not take them loses them). It stops taking tasks
// (a TaskOptional call runs as a plain one, a TaskRequired one is refused)
// and waits up to TaskOptions.Shutdown for the tasks running here to end;
// it then cancels the rest, which fail saying that the instance shut
// down, and returns once their ends are stored. Every other request is
// served as before, and the handler hears Options.Relay until the Relay
// itself is closed, so that calls still running during a shutdown receive
// the answers relayed to them: close it after http.Server.Shutdown returns. Register it with http.Server.RegisterOnShutdown so that
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
		h.tasks.close()
	})
}

// A listener is one open listen stream, as the hub sees it: what it asked
// for, its caller, and the notifications its caller may hear that are
// waiting to be written. Each has a place of its own: one per list_changed
// kind (listChanged's order), then one per subscribed URI, so the queue
// never holds more than 3 + len(uris) items, whoever publishes what.
type listener struct {
	caller Caller
	kinds  eventKinds
	uris   map[string]int // resourceSubscriptions by normal form, each with its place; nil when none
	names  []string       // the subscribed URIs as the client spelt them (the first spelling of each), by place - len(listChanged)
	wake   chan struct{}  // capacity 1: something to write, or the end

	mu      sync.Mutex
	ended   bool   // the hub has ended it: write nothing more
	waiting []bool // by place: in queue
	queue   []int  // the places waiting, in the order first heard

	regSeen uint64 // the hub's regCount when the stream last took registry changes; under hub.mu
}

// newListener returns a listener for caller, asking for kinds and, when
// kinds has kindResourceUpdated, uris (each with its normal form, from
// listenURIs).
func newListener(caller Caller, kinds eventKinds, uris []listenURI) *listener {
	l := &listener{caller: caller, kinds: kinds, wake: make(chan struct{}, 1)}
	if kinds&kindResourceUpdated != 0 {
		l.uris, l.names = make(map[string]int, len(uris)), make([]string, 0, len(uris))
		for _, u := range uris {
			if _, dup := l.uris[u.normal]; !dup {
				l.uris[u.normal] = len(listChanged) + len(l.names)
				l.names = append(l.names, u.spelt)
			}
		}
	}
	l.waiting = make([]bool, len(listChanged)+len(l.names))
	l.queue = make([]int, 0, len(l.waiting))
	return l
}

// place returns ev's place in l's queue, when l asked for it.
func (l *listener) place(k eventKinds, ev *Event) (int, bool) {
	if l.kinds&k == 0 {
		return 0, false
	}
	if k == kindResourceUpdated {
		// Subscriptions are kept by their normal form, so that every
		// spelling of a URI hears its updates. Publish refuses a URI with
		// none; an Event from another Notifier that has none matches nothing.
		u, err := normalURI(ev.URI)
		if err != nil {
			return 0, false
		}
		p, ok := l.uris[u]
		return p, ok
	}
	return listChangedPlace(k), true
}

// listChangedPlace is the place of the list_changed kind k.
func listChangedPlace(k eventKinds) int {
	for i, c := range listChanged {
		if c.kind == k {
			return i
		}
	}
	panic("mcpmw: not a list_changed kind") // eventKind and listChanged disagree
}

// signal wakes l's stream, if it is not awake already.
func (l *listener) signal() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// offer queues the notification at place p, unless it is waiting already
// (it is then sent once: coalesced), and wakes the stream.
func (l *listener) offer(p int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended || l.waiting[p] {
		return
	}
	l.waiting[p] = true
	l.queue = append(l.queue, p)
	l.signal()
}

// end tells l's stream to end, once it has written what it has queued
// (nothing more is queued).
func (l *listener) end() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	l.signal()
}

// take appends the places waiting to dst, in order, and empties the queue;
// ended reports that the stream must end once it has written them.
func (l *listener) take(dst []int) (_ []int, ended bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.queue {
		l.waiting[p] = false
	}
	dst = append(dst, l.queue...)
	l.queue = l.queue[:0]
	return dst, l.ended
}

// hears reports whether l's caller may be told about ev (see mayHear). It
// runs application code on the publisher's goroutine: a panic there is
// logged and taken for no, and reaches neither the publisher nor the other
// listeners.
func (l *listener) hears(ev *Event, logger *slog.Logger) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			ok = false
			logger.LogAttrs(context.Background(), slog.LevelError, "mcpmw: a listening caller panicked deciding whether it may hear an event; it is not told",
				slog.String("event", ev.Method), slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
		}
	}()
	return mayHear(l.caller, ev.Permission, ev.Audience)
}

// regChange is a kind of registry entry whose entries guarded by a
// permission changed.
type regChange struct {
	kind       eventKinds
	permission Permission
}

// hub is a handler's set of open listen streams.
type hub struct {
	logger *slog.Logger
	// wanting holds slices for publish to gather the listeners an event
	// concerns, so that publishing allocates nothing.
	wanting sync.Pool

	mu        sync.Mutex
	listeners map[*listener]struct{}
	closed    bool
	// Registry changes, counted: each kind and permission that changed,
	// with the count when it last did. One entry per distinct permission
	// of the registry's entries, however many changes there are.
	regCount   uint64
	regChanged map[regChange]uint64
}

func newHub(logger *slog.Logger) *hub {
	return &hub{logger: logger, listeners: map[*listener]struct{}{}, regChanged: map[regChange]uint64{}}
}

// add registers l; it reports false once the hub is closed.
func (hb *hub) add(l *listener) bool {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if hb.closed {
		return false
	}
	hb.listeners[l] = struct{}{}
	l.regSeen = hb.regCount
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

// wanted is one listener an event concerns, and the event's place in its
// queue.
type wanted struct {
	l     *listener
	place int
}

// publish queues ev for every listener that asked for it and whose caller
// may hear it, never blocking and allocating nothing. It is the Notifier's
// deliver func: the callers are asked on its goroutine, after the hub's
// lock is released.
func (hb *hub) publish(ev Event) {
	k := eventKind(ev.Method)
	if k == 0 || ev.Permission == "" {
		return // Publish refuses these; a Notifier from elsewhere may not
	}
	ws, _ := hb.wanting.Get().(*[]wanted)
	if ws == nil {
		ws = new([]wanted)
	}
	*ws = hb.concerned(k, &ev, (*ws)[:0])
	for _, w := range *ws {
		if w.l.hears(&ev, hb.logger) {
			w.l.offer(w.place)
		}
	}
	clear(*ws) // hold no listener past its stream
	hb.wanting.Put(ws)
}

// concerned appends to dst the listeners that asked for ev, with its place
// in each one's queue.
func (hb *hub) concerned(k eventKinds, ev *Event, dst []wanted) []wanted {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	for l := range hb.listeners {
		if p, ok := l.place(k, ev); ok {
			dst = append(dst, wanted{l, p})
		}
	}
	return dst
}

// registryChanged notes a change of the Registry's entries guarded by
// ev.Permission and wakes the listeners of its kind, each of which asks
// its own caller (see takeRegistry). It is the Registry's watcher, called
// under the Registry's lock: it runs no application code.
func (hb *hub) registryChanged(ev Event) {
	k := eventKind(ev.Method)
	if k == 0 || k == kindResourceUpdated || ev.Permission == "" {
		return // the Registry sends none of these
	}
	hb.mu.Lock()
	defer hb.mu.Unlock()
	hb.regCount++
	hb.regChanged[regChange{k, ev.Permission}] = hb.regCount
	for l := range hb.listeners {
		if l.kinds&k != 0 {
			l.signal()
		}
	}
}

// resync tells every listener that whatever it asked about may have
// changed: its Notifier may have lost events (see Resyncer). Each hears
// a list_changed of each kind it asked for and an updated of each URI it
// subscribed to, whoever its caller is: the notice carries nothing the
// caller did not name itself.
func (hb *hub) resync() {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	for l := range hb.listeners {
		for i, c := range listChanged {
			if l.kinds&c.kind != 0 {
				l.offer(i)
			}
		}
		for p := range l.names {
			l.offer(len(listChanged) + p)
		}
	}
}

// takeRegistry appends to dst the registry changes of l's kinds that l
// has not taken yet.
func (hb *hub) takeRegistry(l *listener, dst []regChange) []regChange {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	if l.regSeen == hb.regCount {
		return dst
	}
	for c, n := range hb.regChanged {
		if n > l.regSeen && l.kinds&c.kind != 0 {
			dst = append(dst, c)
		}
	}
	l.regSeen = hb.regCount
	return dst
}

// close ends every listener (each writes what it has queued first) and
// refuses new ones.
func (hb *hub) close() {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	hb.closed = true
	for l := range hb.listeners {
		delete(hb.listeners, l)
		l.end()
	}
}

// listenMethods serves subscriptions/listen for one handler.
type listenMethods struct {
	hub         *hub
	served      eventKinds // what the endpoint's capabilities can deliver
	keepAlive   time.Duration
	maxLifetime time.Duration // 0: none
	ad          *advertisement
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
// reports whether it did. o has its defaults.
func (h *Handler) withListen(methods []Method, o *Options) ([]Method, bool) {
	l := &listenMethods{hub: h.hub, keepAlive: o.ListenKeepAlive, maxLifetime: max(o.ListenMaxLifetime, 0), ad: h.ad}
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
	return append(methods, Method{Name: "subscriptions/listen", Revisions: modernOnly, Lifetime: LifetimeStream, Handle: l.handle, extends: listenExtends}), true
}

// handle opens one subscriptions/listen stream: it reads what the client
// asks for and answers with the Response the request's record is made
// of, whose Then serves the stream for as long as it stays open (the
// method's Lifetime is LifetimeStream).
func (l *listenMethods) handle(ctx context.Context, req *Request) *Response {
	if req.IsNotification() {
		return accepted("subscriptions/listen sent as a notification: nothing to answer on")
	}
	s := streamFrom(ctx)
	if s == nil {
		return internalError("", errors.New("subscriptions/listen was dispatched without its stream"), "")
	}
	lis, honoured, summary, resp := l.parse(req)
	if resp != nil {
		return resp
	}
	return &Response{Summary: summary, Then: func(ctx context.Context) *Response {
		if !l.hub.add(lis) {
			return l.result(req.ID) // Close came first: the subscription has ended
		}
		defer l.hub.remove(lis)
		return l.serve(ctx, s, lis, req.ID, honoured)
	}}
}

// serve writes the stream of lis, the listener of the request id, until
// it ends: the acknowledgement of what it honoured, then its events and
// keep-alive comments, and the result when the server ends it.
func (l *listenMethods) serve(ctx context.Context, s *stream, lis *listener, id, honoured []byte) *Response {
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

	var tick, lifetime <-chan time.Time
	if l.keepAlive > 0 {
		t := time.NewTicker(l.keepAlive)
		defer t.Stop()
		tick = t.C
	}
	if l.maxLifetime > 0 {
		t := time.NewTimer(lifetimeOf(l.maxLifetime))
		defer t.Stop()
		lifetime = t.C
	}
	var places []int
	for {
		var err error
		select {
		case <-lis.wake:
			var ended bool
			if places, ended = l.take(lis, places[:0]); ended {
				return l.closing(ctx, s, lis, id, places)
			}
			err = l.sendAll(ctx, s, lis, id, places)
		case <-tick:
			err = s.keepAlive(ctx)
		case <-lifetime:
			// The caller was authenticated when the stream opened; the
			// result ends it cleanly, and the client, listening again,
			// shows fresh credentials (a revoked token hears no more).
			return l.result(id)
		case <-ctx.Done():
			err = ctx.Err() // the client has gone: nothing more to write
		}
		if err != nil {
			s.abandon()
			return l.result(id)
		}
	}
}

// closing ends the stream of lis for Handler.Close: the notifications at
// places (what was queued, or noted, before Close) are written first,
// within one event write timeout in all (the stream's: each write within
// its own deadline too), and then the result. A client that does not take them in time loses them,
// and the stream is abandoned.
func (l *listenMethods) closing(ctx context.Context, s *stream, lis *listener, id []byte, places []int) *Response {
	ctx, cancel := context.WithTimeout(ctx, s.writeTimeout())
	defer cancel()
	if err := l.sendAll(ctx, s, lis, id, places); err != nil {
		s.abandon()
	}
	return l.result(id)
}

// sendAll writes the notifications at places of lis's queue.
func (l *listenMethods) sendAll(ctx context.Context, s *stream, lis *listener, id []byte, places []int) error {
	for _, p := range places {
		if err := s.send(ctx, lis.appendNotification(make([]byte, 0, 160+len(id)), id, p)); err != nil {
			return err
		}
	}
	return nil
}

// lifetimeOf is how long one stream may last under the maximum d: d less
// up to a tenth, at random, so that streams opened together (every client
// of an instance that just started) do not all end, and listen again,
// together.
func lifetimeOf(d time.Duration) time.Duration {
	return d - rand.N(d/10+1)
}

// take returns, appended to dst, the places of what lis is to write now,
// and ended when it must end once they are written: the notifications
// queued for it (their callers already said yes), then the kinds of
// registry change its caller may see, which it asks here, on the stream's
// own goroutine.
func (l *listenMethods) take(lis *listener, dst []int) (_ []int, ended bool) {
	dst, ended = lis.take(dst)
	var changes [8]regChange
	for _, c := range l.hub.takeRegistry(lis, changes[:0]) {
		p := listChangedPlace(c.kind)
		if !slices.Contains(dst, p) && mayHear(lis.caller, c.permission, "") {
			dst = append(dst, p)
		}
	}
	return dst, ended
}

// mayHear reports whether caller may be told about a change guarded by
// permission and, unless audience is empty, meant for audience: it must
// hold the permission and, when there is an audience, belong to it. Both,
// always: an audience narrows a permission, never replaces it.
func mayHear(caller Caller, permission Permission, audience string) bool {
	if !caller.Can(permission) {
		return false
	}
	if audience == "" {
		return true
	}
	m, ok := caller.(AudienceMember)
	return ok && m.InAudience(audience)
}

// result is the listen request's result, sent when the server ends the
// subscription: complete, with the subscription id and serverInfo.
func (l *listenMethods) result(id []byte) *Response {
	inner := l.ad.serverMeta[len(`"_meta":{`) : len(l.ad.serverMeta)-1] // the serverInfo member
	b := append(openResult(make([]byte, 0, 96+len(id)+len(inner)), rev20260728), `"_meta":{"io.modelcontextprotocol/subscriptionId":`...)
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

// appendNotification appends the notification at place p of l's queue,
// on the stream of the listen request id.
func (l *listener) appendNotification(dst, id []byte, p int) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	if p < len(listChanged) {
		dst = jsonwire.AppendString(dst, listChanged[p].method)
		dst = append(dst, `,"params":{`...)
	} else {
		dst = jsonwire.AppendString(dst, ResourceUpdated)
		dst = append(dst, `,"params":{"uri":`...)
		dst = jsonwire.AppendString(dst, l.names[p-len(listChanged)])
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
func (l *listenMethods) parse(req *Request) (*listener, []byte, string, *Response) {
	raw := req.Param("notifications")
	switch jsonwire.KindOf(raw) {
	case jsonwire.KindObject:
	case jsonwire.KindNone:
		return nil, nil, "", invalidListen(`params.notifications is required: an object naming what to listen to, e.g. {"toolsListChanged":true}`)
	default:
		return nil, nil, "", invalidListen("params.notifications must be an object, not " + jsonwire.KindOf(raw).String())
	}
	members, _ := jsonwire.ObjectMembers(raw, nil)
	a := listenAsk{honoured: append(make([]byte, 0, 96), '{')}
	if resp := l.flags(&a, members); resp != nil {
		return nil, nil, "", resp
	}
	uris, resp := listenURIs(jsonwire.Lookup(members, "resourceSubscriptions"))
	if resp != nil {
		return nil, nil, "", resp
	}
	if uris != nil && l.served&kindResourceUpdated != 0 {
		a.subscribe(uris)
	}
	summary := "listen: nothing"
	if len(a.names) > 0 {
		summary = "listen: " + strings.Join(a.names, ", ")
	}
	return newListener(req.Caller, a.kinds, uris), append(a.honoured, '}'), summary, nil
}

// listenAsk is what a listen request asks for and the endpoint can
// deliver, as parse reads it: the kinds, their acknowledgement (an open
// JSON object) and their names for the record.
type listenAsk struct {
	kinds    eventKinds
	honoured []byte
	names    []string
}

// honour adds m, an encoded member, to the acknowledgement.
func (a *listenAsk) honour(m ...byte) {
	if len(a.honoured) > 1 {
		a.honoured = append(a.honoured, ',')
	}
	a.honoured = append(a.honoured, m...)
}

// flags reads the boolean members of params.notifications into a: the
// kinds asked for (true) and served; the others are left out of the
// acknowledgement.
func (l *listenMethods) flags(a *listenAsk, members []jsonwire.Member) *Response {
	for _, f := range listenFlags {
		v := jsonwire.Lookup(members, f.name)
		switch jsonwire.KindOf(v) {
		case jsonwire.KindNone:
			continue
		case jsonwire.KindBool:
		default:
			return invalidListen("params.notifications." + f.name + " must be a boolean, not " + jsonwire.KindOf(v).String())
		}
		if v[0] != 't' || l.served&f.kind == 0 {
			continue // not asked for, or not served: left out of the acknowledgement
		}
		a.kinds |= f.kind
		a.names = append(a.names, f.name)
		a.honour(append(jsonwire.AppendString(nil, f.name), ":true"...)...)
	}
	return nil
}

// subscribe adds the resource subscriptions to a, each URI acknowledged
// as the client spelt it.
func (a *listenAsk) subscribe(uris []listenURI) {
	a.kinds |= kindResourceUpdated
	b := []byte(`"resourceSubscriptions":[`)
	for i, u := range uris {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonwire.AppendString(b, u.spelt)
	}
	a.honour(append(b, ']')...)
	a.names = append(a.names, "resourceSubscriptions ("+strconv.Itoa(len(uris))+" URIs)")
}

// listenURI is one of resourceSubscriptions: as the client spelt it, and
// its normal form (uri.go), the one view every match uses.
type listenURI struct{ spelt, normal string }

// listenURIs reads resourceSubscriptions: nil when absent, else its
// strings (an empty array gives an empty, non-nil list). A URI with no
// normal form is refused, as resources/read refuses it.
func listenURIs(raw []byte) ([]listenURI, *Response) {
	switch jsonwire.KindOf(raw) {
	case jsonwire.KindNone:
		return nil, nil
	case jsonwire.KindArray:
	default:
		return nil, invalidListen("params.notifications.resourceSubscriptions must be an array of URI strings, not " + jsonwire.KindOf(raw).String())
	}
	uris := []listenURI{}
	for i := jsonwire.SkipSpace(raw, 1); i < len(raw) && raw[i] != ']'; {
		end := jsonwire.ValueEnd(raw, i)
		v := raw[i:end]
		u, ok := jsonwire.Unquote(v)
		switch {
		case !ok:
			return nil, invalidListen("params.notifications.resourceSubscriptions[" + strconv.Itoa(len(uris)) + "] must be a string, not " + jsonwire.KindOf(v).String())
		case len(u) > maxListenURILength:
			return nil, invalidListen("params.notifications.resourceSubscriptions[" + strconv.Itoa(len(uris)) + "] is longer than " + strconv.Itoa(maxListenURILength) + " bytes")
		case len(uris) == maxListenURIs:
			return nil, invalidListen("params.notifications.resourceSubscriptions lists more than " + strconv.Itoa(maxListenURIs) + " URIs")
		}
		n, err := normalURI(u)
		if err != nil {
			return nil, invalidListen("params.notifications.resourceSubscriptions[" + strconv.Itoa(len(uris)) + "] is not a URI: " + err.Error())
		}
		uris = append(uris, listenURI{spelt: u, normal: n})
		if i = jsonwire.SkipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = jsonwire.SkipSpace(raw, i+1)
		}
	}
	return uris, nil
}

func invalidListen(msg string) *Response {
	return ErrorResponse(CodeInvalidParams, "Invalid params: "+msg)
}
