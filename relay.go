package mcpmw

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// A legacy client's second POST (its answer to what Ask sent it, or a
// notifications/cancelled) may reach another instance than the one that
// holds what it names. With a Relay (Options.Relay) the instances hand
// those POSTs to each other: relayedAsks and relayedCalls are the
// answerWaiters and runningCalls that cross instances through it, each
// wrapping the in-process one.

// A Relay carries opaque payloads between the instances of a service, so
// that a legacy client's answer POST reaches the instance whose call is
// waiting for it, and its notifications/cancelled the instance running the
// call, whichever instance the load balancer picked. Every instance of the
// service is given a Relay on the same bus (mcpredis.NewRelay: Redis
// pub/sub); nil (the default) joins the two POSTs on one instance only.
//
// The handler calls Receive once, in New, and never cancels it; it
// calls Send and Broadcast while it serves a request, with the request's
// context. A Relay must be safe for concurrent use. Several Handlers of
// one process may share one Relay: each is a handler of its own on it
// (answers and wake-ups name the handler they are for, and a
// cancellation the endpoint it names a call at), so they behave as if
// each ran in a process of its own.
type Relay interface {
	// ID returns this instance's id on the bus: the handler puts it in
	// the id of each request it sends a client, so that the answer can be
	// sent back here. It must not change.
	ID() string
	// Send hands payload to the instance whose id is instance, and
	// reports whether that instance received it: false, with a nil
	// error, when no instance has that id. instance comes from a client
	// (inside the id it answers): Send must treat it as untrusted text.
	Send(ctx context.Context, instance string, payload []byte) (bool, error)
	// Broadcast hands payload to every instance of the service, this one
	// included.
	Broadcast(ctx context.Context, payload []byte) error
	// Receive calls deliver with each payload sent to this instance (by
	// Send or Broadcast) until cancel is called or the Relay is closed.
	// deliver does not block.
	Receive(deliver func(payload []byte)) (cancel func())
}

// relayedAsks is the answerWaiters of a Handler given Options.Relay: its
// waiters are in process (local), under ids naming this handler, and an
// answer naming another handler is sent to its instance.
type relayedAsks struct {
	r     Relay
	self  string // relaySelf: this handler on the bus
	local pendingAsks
}

// relayedCalls is the runningCalls of a Handler given Options.Relay: its
// calls run here (local), and a cancellation reaches every instance.
type relayedCalls struct {
	r     Relay
	self  string
	local inflight
}

// newRelayed returns the waiters and calls of the handler self (see
// relaySelf) on r, which hears r for as long as r is open (see
// Handler.Close).
func newRelayed(r Relay, self string, wakeTask func(id string)) (*relayedAsks, *relayedCalls) {
	asks, calls := &relayedAsks{r: r, self: self}, &relayedCalls{r: r, self: self}
	r.Receive(func(payload []byte) { heard(asks, calls, wakeTask, payload) })
	return asks, calls
}

// Several Handlers of one process may share a Relay (say /mcp and
// /admin/mcp): each is a handler of its own on the bus, named by the
// Relay's id, handlerSep, and 128 random bits of its own. What is meant
// for one handler (an answer to its question, a wake-up of its task) is
// sent to its instance with To naming it, and the others there drop it.
const handlerSep = "~"

// relaySelf returns a new handler's name on r.
func relaySelf(r Relay) string { return r.ID() + handlerSep + randomID() }

// instanceOfHandler returns the Relay id of the instance a handler's name
// (relaySelf) names: what comes before its last handlerSep, or the whole
// name when it has none (a name from before handlers were named).
func instanceOfHandler(self string) string {
	if i := strings.LastIndex(self, handlerSep); i >= 0 {
		return self[:i]
	}
	return self
}

// relayMessage is what one instance hands another: an answer to the
// request id ID, from the caller Caller (the owner checks the binding), or
// a cancellation of the calls of Caller with the request key Request,
// from the instance From (which has cancelled its own).
type relayMessage struct {
	Answer  string          `json:"answer,omitempty"` // the id of the request answered
	Cancel  string          `json:"cancel,omitempty"` // the requestKey of the calls cancelled
	Caller  string          `json:"caller"`
	From    string          `json:"from,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Code    int             `json:"code,omitempty"`
	Message string          `json:"message,omitempty"`
	Failed  bool            `json:"failed,omitempty"` // the answer is an error (Code, Message)
	Task    string          `json:"task,omitempty"`   // the task whose state changed (tasks/update, tasks/cancel): its owner rereads it
	// To names the handler an answer or a task's wake-up is for (its
	// relaySelf); the other handlers of its instance drop it.
	To string `json:"to,omitempty"`
	// Endpoint is the endpoint of a cancellation (endpointName.key): only
	// calls at that endpoint are cancelled.
	Endpoint string `json:"endpoint,omitempty"`
}

// add registers a waiter here under an id naming this instance: the
// prefix, this instance's id, a dot, and 128 random bits.
func (rl *relayedAsks) add(callerID string) (string, <-chan clientAnswer, func()) {
	var b [16]byte
	rand.Read(b[:]) // never fails (Go 1.24)
	id := askIDPrefix + rl.self + "." + base64.RawURLEncoding.EncodeToString(b[:])
	return rl.local.addID(id, callerID)
}

// deliver hands a to the waiter id: here when the id names this instance,
// otherwise sent to the instance it names, which checks the caller.
func (rl *relayedAsks) deliver(ctx context.Context, id, callerID string, a clientAnswer) delivery {
	instance, ok := instanceOf(id)
	if !ok || instance == rl.self {
		return rl.local.deliver(ctx, id, callerID, a)
	}
	m := relayMessage{Answer: id, Caller: callerID, Result: a.result, To: instance}
	if a.err != nil {
		m.Result, m.Failed, m.Code, m.Message = nil, true, a.err.Code, a.err.Message
	}
	payload, _ := json.Marshal(m) // strings, ints and a JSON object: never fails
	if sent, err := rl.r.Send(ctx, instanceOfHandler(instance), payload); !sent || err != nil {
		return notWaiting
	}
	return sentOn
}

// instanceOf returns the instance an ask id names: what lies between the
// prefix and the last dot.
func instanceOf(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, askIDPrefix)
	i := strings.LastIndexByte(rest, '.')
	if !ok || i <= 0 {
		return "", false
	}
	return rest[:i], true
}

// addCall registers a running call here (only this instance can run it).
func (rl *relayedCalls) add(ctx context.Context, req *Request) (context.Context, func()) {
	return rl.local.add(ctx, req)
}

// cancelCalls cancels the calls under key here and tells every other
// instance to cancel theirs; it reports how many ran here.
func (rl *relayedCalls) cancelCalls(ctx context.Context, key flightKey) int {
	n := rl.local.cancelCalls(ctx, key)
	payload, _ := json.Marshal(relayMessage{Cancel: key.requestID, Caller: key.callerID, From: rl.self, Endpoint: key.endpoint})
	_ = rl.r.Broadcast(ctx, payload) // an outage loses the cancellation, as a lost POST would
	return n
}

// heard acts on a payload another instance sent here: an answer goes to
// its waiter, when it is the same caller's; a cancellation cancels the
// caller's calls with that id; a task's change wakes the task, when it
// runs here (which rereads it from the store: the payload is trusted for
// nothing). Anything else is dropped.
func heard(asks *relayedAsks, calls *relayedCalls, wakeTask func(string), payload []byte) {
	var m relayMessage
	if json.Unmarshal(payload, &m) != nil || (m.To != "" && m.To != asks.self) {
		return // not a message, or another handler's
	}
	switch {
	case m.Answer != "":
		a := clientAnswer{result: m.Result}
		if m.Failed {
			a = clientAnswer{err: &AskError{Code: m.Code, Message: capEcho(m.Message)}}
		}
		asks.local.deliver(context.Background(), m.Answer, m.Caller, a)
	case m.Cancel != "" && m.From != calls.self:
		calls.local.cancelCalls(context.Background(), flightKey{callerID: m.Caller, requestID: m.Cancel, endpoint: m.Endpoint})
	case m.Task != "":
		wakeTask(m.Task)
	}
}
