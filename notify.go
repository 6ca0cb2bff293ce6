package mcpmw

import (
	"context"
	"sync"
	"sync/atomic"
)

// Change notifications. An application (or the Registry, when tools,
// resources or prompts are added or removed) publishes an Event; every
// open subscriptions/listen stream whose caller may see it and which asked
// for its kind receives it. Publishing goes through a Notifier, so that
// many instances of a service can share one bus (Redis, say) without the
// endpoint knowing: the in-process one is the default.

// Notification methods an Event can carry.
const (
	ToolsListChanged     = "notifications/tools/list_changed"
	ResourcesListChanged = "notifications/resources/list_changed"
	PromptsListChanged   = "notifications/prompts/list_changed"
	ResourceUpdated      = "notifications/resources/updated"
	// TaskStatusChanged is the tasks extension's notifications/tasks: a
	// task's new status, told to its own caller's listeners that named
	// it in taskIds. The Handler publishes it itself as its tasks change
	// (Publish refuses it), through the Notifier, so that a listener on
	// any instance hears a task running on any other.
	TaskStatusChanged = "notifications/tasks"
)

// An Event is one change a listening client may be told about. It is a
// plain value with no functions in it, so that a Notifier can carry it
// between processes.
type Event struct {
	// Method is the notification: ToolsListChanged, ResourcesListChanged,
	// PromptsListChanged or ResourceUpdated (or TaskStatusChanged, which
	// only the Handler publishes).
	Method string
	// URI is the resource that changed, for ResourceUpdated; a listener
	// receives it only when it listed that URI in resourceSubscriptions.
	URI string
	// Permission is what a listener's caller must hold (Caller.Can) to be
	// told: the permission of the tool, resource or prompt that changed.
	// It is required: an event no permission guards would tell every
	// caller about something some of them may not see.
	Permission Permission
	// Audience, when set, narrows the listeners further to callers that
	// are members of it (an AudienceMember answering true), e.g. a tenant
	// id. It narrows Permission and never replaces it: a member must still
	// hold Permission. A caller that is no AudienceMember never receives
	// an event with an Audience.
	Audience string
	// Task is, for TaskStatusChanged, the task as its change left it,
	// without the client's answers or the tool's state (what tasks/get
	// shows of it, and its caller, endpoint and permission, which a
	// listener must match as tasks/get's caller must); nil for every
	// other event. A Notifier that carries events between processes
	// carries it too (mcpredis's does); one that drops it leaves task
	// notifications to the instance where each change was made. It is
	// shared by every subscriber: nothing changes it.
	Task *Task
}

// An AudienceMember is a Caller that belongs to audiences (a tenant, a
// team, an organisation), so that events meant for one of them reach only
// its members.
//
// A listening caller is asked about each published event before the event
// is queued for its stream: InAudience and Can run on the instance holding
// the stream, on the goroutine delivering the event (the Notifier's; with
// a LocalNotifier, the one calling Publish), possibly on several at once.
// They must be safe for concurrent use, cheap, and must not block; a panic
// in them is logged and taken for no.
type AudienceMember interface {
	InAudience(audience string) bool
}

// A Notifier carries Events from where they are published to every
// listening endpoint. The default, NewLocalNotifier, stays in one process;
// one backed by a shared bus lets any instance's listeners hear a change
// made on any other.
type Notifier interface {
	// Publish sends ev to every current subscriber. It must not block on
	// slow listeners.
	Publish(ctx context.Context, ev Event) error
	// Subscribe calls deliver with each event published from now on, until
	// the returned cancel func is called. deliver does not block, but it
	// asks each listening caller whether it may hear the event (see
	// AudienceMember): call it holding no lock that a Caller's methods
	// might take.
	Subscribe(deliver func(Event)) (cancel func())
}

// A Resyncer is a Notifier that can lose events and says when it may have:
// a bus whose delivery is at most once (Redis pub/sub) loses what is
// published while an instance's subscription is broken. A Handler whose
// Notifier is a Resyncer calls SubscribeResync in New, and each time
// resync is called it tells every open subscriptions/listen stream that
// each list it asked about may have changed (a list_changed of each kind,
// and an updated of each resource it subscribed to), so that no client
// keeps a stale list for ever. resync must not block.
type Resyncer interface {
	SubscribeResync(resync func()) (cancel func())
}

// A LocalNotifier is the in-process Notifier: what is published on it
// reaches the subscribers in this process only. It is safe for concurrent
// use, and Publish never blocks as long as the subscribers' deliver funcs
// do not (a Handler's does not, as long as its listening callers' Can and
// InAudience do not: see AudienceMember).
type LocalNotifier struct {
	mu   sync.Mutex // serialises Subscribe and cancel
	subs atomic.Pointer[[]*localSub]
}

// localSub is one subscription, compared by identity on cancel.
type localSub struct{ deliver func(Event) }

// NewLocalNotifier returns an in-process Notifier with no subscribers.
func NewLocalNotifier() *LocalNotifier { return &LocalNotifier{} }

// Publish calls every current subscriber's deliver func with ev, on the
// caller's goroutine. It returns ctx's error, without delivering, when ctx
// is already done.
func (n *LocalNotifier) Publish(ctx context.Context, ev Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if subs := n.subs.Load(); subs != nil {
		for _, s := range *subs {
			s.deliver(ev)
		}
	}
	return nil
}

// Subscribe calls deliver with each Event published from now on, until
// cancel is called; cancel may be called more than once. deliver must not
// block: it runs on the publisher's goroutine (a Handler's asks its
// listening callers there, see AudienceMember).
func (n *LocalNotifier) Subscribe(deliver func(Event)) (cancel func()) {
	s := &localSub{deliver: deliver}
	n.mu.Lock()
	defer n.mu.Unlock()
	var next []*localSub
	if old := n.subs.Load(); old != nil {
		next = append(next, *old...)
	}
	next = append(next, s)
	n.subs.Store(&next)
	return func() { n.unsubscribe(s) }
}

// unsubscribe removes s, if it is still subscribed. Publishing copies
// nothing: the list is replaced, never changed in place.
func (n *LocalNotifier) unsubscribe(s *localSub) {
	n.mu.Lock()
	defer n.mu.Unlock()
	old := n.subs.Load()
	if old == nil {
		return
	}
	next := make([]*localSub, 0, len(*old))
	for _, o := range *old {
		if o != s {
			next = append(next, o)
		}
	}
	n.subs.Store(&next)
}
