package mcpmw

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// A legacy client answers what Ask sent it on a call's event stream by
// POSTing a JSON-RPC response of its own (legacyask.go). This file is
// where that answer meets the call waiting for it: the takeAnswer stage,
// and answerWaiters, the seam between them.

// answerWaiters is the seam where a legacy answer POST meets the call
// waiting for it: a call that sent the client a request registers a
// waiter under a fresh id (add), and the answer POST that names the id
// is delivered to it, when it comes from the same caller (deliver).
// pendingAsks, below, is the in-process implementation: it joins the two
// POSTs when they reach the same instance. relayedAsks (relay.go, with
// Options.Relay) joins them wherever they land: its ids name the instance
// that waits, and an answer is sent there; nothing else changes.
type answerWaiters interface {
	// add registers a waiter for callerID's answer under a fresh,
	// unguessable id, and returns the id, where the answer arrives, and
	// the func that unregisters the waiter, which the caller must call
	// whatever happens.
	add(callerID string) (id string, answer <-chan clientAnswer, remove func())
	// deliver hands a to the waiter id, when one waits for callerID's
	// answer, and reports what became of it. An answer from another
	// caller leaves the waiter waiting for its own.
	deliver(ctx context.Context, id, callerID string, a clientAnswer) delivery
}

// delivery is what became of a client's answer.
type delivery uint8

const (
	notWaiting delivery = iota // no waiter of this caller's has that id (here, or on the instance it names)
	delivered                  // handed to its waiter, here
	sentOn                     // sent to the instance the id names, which checks the caller and hands it on
)

// askIDPrefix starts every id of a request the server sends, so that a
// client's answer to something else is told apart at a glance in logs.
const askIDPrefix = "mcpmw-ask-"

// pendingAsks are the legacy requests sent to clients and waiting for their
// answer POST, by id: the in-process answerWaiters.
type pendingAsks struct {
	mu      sync.Mutex
	waiting map[string]*pendingAsk
}

// A pendingAsk is one request waiting for its answer: only the caller it
// was sent to may answer it.
type pendingAsk struct {
	callerID string
	answer   chan clientAnswer // buffered: deliver never blocks
}

// clientAnswer is what a client POSTed in answer: a result object, or the
// error that stands for it.
type clientAnswer struct {
	result json.RawMessage
	err    *AskError
}

// add registers a request for callerID under a fresh unguessable id (128
// random bits). The caller must call remove, whatever happens.
func (p *pendingAsks) add(callerID string) (id string, answer <-chan clientAnswer, remove func()) {
	var b [16]byte
	rand.Read(b[:]) // never fails (Go 1.24)
	return p.addID(askIDPrefix+base64.RawURLEncoding.EncodeToString(b[:]), callerID)
}

// addID registers a request for callerID under id, which the caller made
// unguessable.
func (p *pendingAsks) addID(id, callerID string) (string, <-chan clientAnswer, func()) {
	w := &pendingAsk{callerID: callerID, answer: make(chan clientAnswer, 1)}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waiting == nil {
		p.waiting = map[string]*pendingAsk{}
	}
	p.waiting[id] = w
	return id, w.answer, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.waiting[id] == w {
			delete(p.waiting, id)
		}
	}
}

// deliver hands a to the request id, when one is waiting for callerID's
// answer, and reports whether one was (delivered or notWaiting). An
// answer from another caller leaves the request waiting for its own.
func (p *pendingAsks) deliver(_ context.Context, id, callerID string, a clientAnswer) delivery {
	p.mu.Lock()
	w := p.waiting[id]
	if w == nil || w.callerID != callerID {
		p.mu.Unlock()
		return notWaiting
	}
	delete(p.waiting, id)
	p.mu.Unlock()
	w.answer <- a // the only send: the id is gone from the table
	return delivered
}

// takeAnswer is the stage for a legacy client's JSON-RPC response: it hands
// the result or error to the call waiting for it, when that call is this
// caller's (here, or on the instance its id names, through Options.Relay),
// and answers 202 either way (the client can
// do nothing better with a refusal). The record says which. A response
// carrying both a result and an error is no JSON-RPC response (JSON-RPC
// 2.0 §5): the waiting call gets an *AskError saying so, which it can act
// on at once rather than wait until AskTimeout, and the POST is refused
// with 400 and -32600.
func (h *Handler) takeAnswer(ctx context.Context, caller Caller, env envelope) answer {
	a := clientAnswer{result: env.result}
	both := env.result != nil && env.rpcError != nil
	switch ptr, dup := jsonwire.DuplicatePointer(env.result); {
	case both:
		a.err = &AskError{Message: "its answer carries both a result and an error, which JSON-RPC forbids"}
	case env.result == nil:
		a.err = clientError(env.rpcError)
	case jsonwire.KindOf(env.result) != jsonwire.KindObject:
		a.err = &AskError{Message: "its result is not a JSON object"}
	case dup: // one reading for every decoder the tool may use, as for params
		a.err = &AskError{Message: "its result has the member " + quoteEcho(ptr) + " more than once"}
	}
	id, ok := jsonwire.Unquote(env.id)
	d := notWaiting
	if ok {
		d = h.asks.deliver(ctx, id, callerID(caller), a)
	}
	switch {
	case both:
		resp := ErrorResponse(CodeInvalidRequest, "Invalid Request: a response carries both result and error; send one of them")
		resp.Summary = "client response with both result and error: refused, and no request of this caller was waiting for it here"
		switch d {
		case delivered:
			resp.Summary = "client response with both result and error: refused, and the waiting request was told"
		case sentOn:
			resp.Summary = "client response with both result and error: refused, and the instance that asked was told"
		}
		return answer{resp: resp}
	case d == delivered:
		return answer{status: http.StatusAccepted, resp: accepted("client response: delivered")}
	case d == sentOn:
		return answer{status: http.StatusAccepted, resp: accepted("client response: sent to the instance that asked")}
	}
	return answer{status: http.StatusAccepted, resp: accepted("client response: no request of this caller is waiting for it here (answered late, or sent to another instance)")}
}

// clientError reads a client's JSON-RPC error object.
func clientError(raw json.RawMessage) *AskError {
	var e struct {
		Code    *int   `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Code == nil {
		return &AskError{Message: "its error answer is not a JSON-RPC error object"}
	}
	return &AskError{Code: *e.Code, Message: capEcho(e.Message)}
}
