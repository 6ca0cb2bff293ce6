package mcpmw

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// The method subscriptions/listen: reading what a client asks for, and
// serving its stream from the hub (listenhub.go).

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
	if h.tasks.served() {
		// Task status changes are told through the Notifier, so that a
		// listener on any instance hears them (tasknotify.go).
		l.served |= kindTaskStatus
		h.tasks.notifier = h.notifier
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
	var notes []taskNote
	for {
		var err error
		select {
		case <-lis.wake:
			var ended bool
			if places, notes, ended = l.take(lis, places[:0], notes[:0]); ended {
				return l.closing(ctx, s, lis, id, places, notes)
			}
			err = l.sendAll(ctx, s, lis, id, places, notes)
			clear(notes) // hold no params past their writing
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
func (l *listenMethods) closing(ctx context.Context, s *stream, lis *listener, id []byte, places []int, notes []taskNote) *Response {
	ctx, cancel := context.WithTimeout(ctx, s.writeTimeout())
	defer cancel()
	if err := l.sendAll(ctx, s, lis, id, places, notes); err != nil {
		s.abandon()
	}
	return l.result(id)
}

// sendAll writes the notifications at places of lis's queue, then the
// task notifications notes.
func (l *listenMethods) sendAll(ctx context.Context, s *stream, lis *listener, id []byte, places []int, notes []taskNote) error {
	for _, p := range places {
		if err := s.send(ctx, lis.appendNotification(make([]byte, 0, 160+len(id)), id, p)); err != nil {
			return err
		}
	}
	for _, n := range notes {
		if err := s.send(ctx, appendTaskNotification(make([]byte, 0, 128+len(n.members)+len(id)), id, n.members)); err != nil {
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
// appended to notes its task notifications, and ended when it must end
// once they are written: the notifications
// queued for it (their callers already said yes), then the kinds of
// registry change its caller may see, which it asks here, on the stream's
// own goroutine.
func (l *listenMethods) take(lis *listener, dst []int, notes []taskNote) (_ []int, _ []taskNote, ended bool) {
	dst, notes, ended = lis.take(dst, notes)
	var changes [8]regChange
	for _, c := range l.hub.takeRegistry(lis, changes[:0]) {
		p := listChangedPlace(c.kind)
		if !slices.Contains(dst, p) && mayHear(lis.caller, c.permission, "") {
			dst = append(dst, p)
		}
	}
	return dst, notes, ended
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

// appendTaskNotification appends a notifications/tasks whose params
// are members (the task, taskMembers) and the _meta of the stream of the
// listen request id.
func appendTaskNotification(dst, id, members []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":"`+TaskStatusChanged+`","params":{`...)
	dst = append(append(dst, members...), ',')
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
	ids, resp := listenTaskIDs(jsonwire.Lookup(members, "taskIds"))
	if resp != nil {
		return nil, nil, "", resp
	}
	if ids != nil && l.served&kindTaskStatus != 0 {
		if !hasClientCapability(req.ClientCapabilities, tasksCapability) {
			resp := tasksUndeclared(req.Method)
			resp.Error.Message = "taskIds asks for the tasks extension's notifications: declare the client capability " + tasksCapability.String()
			return nil, nil, "", resp
		}
		a.watchTasks(ids)
	}
	summary := "listen: nothing"
	if len(a.names) > 0 {
		summary = "listen: " + strings.Join(a.names, ", ")
	}
	lis := newListener(req.Caller, a.kinds, uris)
	if a.kinds&kindTaskStatus != 0 {
		lis.watch(callerID(req.Caller), req.endpoint.key(), ids)
	}
	return lis, append(a.honoured, '}'), summary, nil
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

// watchTasks adds the task ids to a, acknowledged as the client spelt
// them: whether each names a task of the caller's is not told (tasks/get
// tells no more), and each change is checked against the caller when it
// is delivered.
func (a *listenAsk) watchTasks(ids []string) {
	a.kinds |= kindTaskStatus
	b := []byte(`"taskIds":[`)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonwire.AppendString(b, id)
	}
	a.honour(append(b, ']')...)
	a.names = append(a.names, "taskIds ("+strconv.Itoa(len(ids))+" tasks)")
}

// listenTaskIDs reads taskIds: nil when absent, else its strings (an
// empty array gives an empty, non-nil list), within maxListenTaskIDs of
// at most maxListenTaskIDLength bytes each.
func listenTaskIDs(raw []byte) ([]string, *Response) {
	switch jsonwire.KindOf(raw) {
	case jsonwire.KindNone:
		return nil, nil
	case jsonwire.KindArray:
	default:
		return nil, invalidListen("params.notifications.taskIds must be an array of task id strings, not " + jsonwire.KindOf(raw).String())
	}
	ids := []string{}
	it, _ := jsonwire.IterElements(raw)
	for v, more := it.Next(); more; v, more = it.Next() {
		id, ok := jsonwire.Unquote(v)
		switch {
		case !ok:
			return nil, invalidListen("params.notifications.taskIds[" + strconv.Itoa(len(ids)) + "] must be a string, not " + jsonwire.KindOf(v).String())
		case len(id) > maxListenTaskIDLength:
			return nil, invalidListen("params.notifications.taskIds[" + strconv.Itoa(len(ids)) + "] is longer than " + strconv.Itoa(maxListenTaskIDLength) + " bytes")
		case len(ids) == maxListenTaskIDs:
			return nil, invalidListen("params.notifications.taskIds lists more than " + strconv.Itoa(maxListenTaskIDs) + " tasks")
		}
		ids = append(ids, id)
	}
	return ids, nil
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
	it, _ := jsonwire.IterElements(raw)
	for v, more := it.Next(); more; v, more = it.Next() {
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
	}
	return uris, nil
}

func invalidListen(msg string) *Response {
	return ErrorResponse(CodeInvalidParams, "Invalid params: "+msg)
}
