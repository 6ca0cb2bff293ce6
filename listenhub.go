package mcpmw

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"
)

// subscriptions/listen (2026-07-28): a POST whose answer is a long-lived
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
	// maxListenTaskIDs and maxListenTaskIDLength bound taskIds (a task id
	// is 22 characters).
	maxListenTaskIDs      = 100
	maxListenTaskIDLength = 128
	// maxTaskNotes bounds the notifications/tasks a stream holds for one
	// task while it is not written: past it the oldest is dropped (the
	// newest status is never lost, and a terminal one is the last).
	maxTaskNotes = 4
)

// eventKinds is a set of notification kinds, as bits.
type eventKinds uint8

const (
	kindToolsChanged eventKinds = 1 << iota
	kindResourcesChanged
	kindPromptsChanged
	kindResourceUpdated
	kindTaskStatus
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
	case TaskStatusChanged:
		return kindTaskStatus
	}
	return 0
}

// checkEvent reports what makes ev unpublishable.
func checkEvent(ev Event) error {
	switch {
	case ev.Method == TaskStatusChanged:
		return errors.New("mcpmw: Event " + TaskStatusChanged + " is published by the Handler itself, as its tasks change")
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

	// The tasks it named in taskIds, heard only when they are its
	// caller's (by CallerID) at its endpoint (see watch).
	callerID string
	endpoint string
	tasks    map[string]int // task id: its slot; nil when none
	// Under mu: the notifications/tasks waiting, in the order heard, and
	// by slot how many wait and whether a terminal status has been heard
	// (nothing is told of the task after it).
	notes     []taskNote
	taskNotes []uint8
	taskEnded []bool
}

// A taskNote is one notifications/tasks waiting to be written: the
// slot of its task and the members of its params but _meta (shared by
// every listener that hears it: never changed).
type taskNote struct {
	slot    int
	members []byte
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

// watch makes l hear the status changes of the tasks ids (each at most
// maxListenTaskIDLength long) of the caller callerID at endpoint: a task
// whose caller or endpoint is another is never told, as tasks/get never
// shows it.
func (l *listener) watch(callerID, endpoint string, ids []string) {
	l.kinds |= kindTaskStatus
	l.callerID, l.endpoint = callerID, endpoint
	l.tasks = make(map[string]int, len(ids))
	for _, id := range ids {
		if _, dup := l.tasks[id]; !dup {
			l.tasks[id] = len(l.tasks)
		}
	}
	l.taskNotes, l.taskEnded = make([]uint8, len(l.tasks)), make([]bool, len(l.tasks))
}

// taskSlot returns the slot of t in l, when l named t and t is its
// caller's, at its endpoint. It runs no application code.
func (l *listener) taskSlot(t *Task) (int, bool) {
	if l.callerID == "" || t.CallerID != l.callerID || t.Endpoint != l.endpoint {
		return 0, false
	}
	slot, ok := l.tasks[t.ID]
	return slot, ok
}

// offerTask queues the notification of the status change of the task at
// slot (members: its params but _meta), and wakes the stream. Nothing is
// queued after a terminal status; past maxTaskNotes waiting for the
// task, the oldest is dropped.
func (l *listener) offerTask(slot int, status TaskStatus, members []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ended || l.taskEnded[slot] {
		return
	}
	l.taskEnded[slot] = status.Terminal()
	if l.taskNotes[slot] == maxTaskNotes {
		i := slices.IndexFunc(l.notes, func(n taskNote) bool { return n.slot == slot })
		l.notes = slices.Delete(l.notes, i, i+1)
		l.taskNotes[slot]--
	}
	l.notes = append(l.notes, taskNote{slot, members})
	l.taskNotes[slot]++
	l.signal()
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

// take appends the places waiting to dst, in order, and the task
// notifications waiting to notes, and empties the queue; ended reports
// that the stream must end once it has written them.
func (l *listener) take(dst []int, notes []taskNote) (_ []int, _ []taskNote, ended bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.queue {
		l.waiting[p] = false
	}
	dst = append(dst, l.queue...)
	l.queue = l.queue[:0]
	notes = append(notes, l.notes...)
	clear(l.notes) // hold no params past their writing
	l.notes = l.notes[:0]
	clear(l.taskNotes)
	return dst, notes, l.ended
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
	if k == kindTaskStatus {
		hb.publishTask(ev.Task)
		return
	}
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

// publishTask queues the status change of t for every listener that
// named t and whose caller is t's, at t's endpoint, and still holds t's
// permission: the check of tasks/get. The callers are asked on the
// delivering goroutine, after the hub's lock is released; t's params are
// encoded once, for the first that hears it.
func (hb *hub) publishTask(t *Task) {
	if t == nil || t.CallerID == "" {
		return // the Handler publishes neither; a Notifier from elsewhere may
	}
	ws := hb.concernedTask(t)
	var members []byte
	probe := Event{Method: TaskStatusChanged, Permission: t.Permission}
	for _, w := range ws {
		if !w.l.hears(&probe, hb.logger) {
			continue
		}
		if members == nil {
			if members = taskMembers(t); members == nil {
				return
			}
		}
		w.l.offerTask(w.place, t.Status, members)
	}
}

// concernedTask returns the listeners that named t and are its caller's,
// with t's slot in each.
func (hb *hub) concernedTask(t *Task) []wanted {
	hb.mu.Lock()
	defer hb.mu.Unlock()
	var dst []wanted
	for l := range hb.listeners {
		if slot, ok := l.taskSlot(t); ok {
			dst = append(dst, wanted{l, slot})
		}
	}
	return dst
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
