package mcpmw_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// bus is an in-process bus of Relays, one per instance: what the core
// needs of one, without Redis (the redis module tests its own on a real
// server).
type bus struct {
	mu        sync.Mutex
	instances map[string]*busRelay
	sent      int // Send and Broadcast calls
}

type busRelay struct {
	b       *bus
	id      string
	mu      sync.Mutex
	deliver []func([]byte)
}

// join returns the Relay of a new instance on b.
func (b *bus) join() *busRelay {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.instances == nil {
		b.instances = map[string]*busRelay{}
	}
	r := &busRelay{b: b, id: "i" + strconv.Itoa(len(b.instances))}
	b.instances[r.id] = r
	return r
}

func (r *busRelay) ID() string { return r.id }

func (r *busRelay) Send(_ context.Context, instance string, payload []byte) (bool, error) {
	r.b.mu.Lock()
	r.b.sent++
	to := r.b.instances[instance]
	r.b.mu.Unlock()
	if to == nil {
		return false, nil
	}
	to.hand(payload)
	return true, nil
}

func (r *busRelay) Broadcast(_ context.Context, payload []byte) error {
	r.b.mu.Lock()
	r.b.sent++
	all := make([]*busRelay, 0, len(r.b.instances))
	for _, to := range r.b.instances {
		all = append(all, to)
	}
	r.b.mu.Unlock()
	for _, to := range all {
		to.hand(payload)
	}
	return nil
}

func (r *busRelay) Receive(deliver func([]byte)) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deliver = append(r.deliver, deliver)
	return func() {}
}

func (r *busRelay) hand(payload []byte) {
	r.mu.Lock()
	fs := slices.Clone(r.deliver)
	r.mu.Unlock()
	for _, f := range fs {
		f(payload)
	}
}

// summariesOfAnswers returns the summaries of the client responses aud
// recorded, in order.
func summariesOfAnswers(aud *spy) []string {
	var s []string
	for _, r := range aud.records() {
		if r.Method == "" {
			s = append(s, r.Summary)
		}
	}
	return s
}

// A legacy Ask whose stream is on one instance is answered by a POST to
// another: the id names the instance that asked (and keeps 128 random
// bits), the answer is sent there, and the caller binding is checked
// there: another caller's answer reaches nothing, and an id naming no
// instance is the unknown id it always was (the same 202 and record).
func TestLegacyAnswerReachesTheInstanceThatAsked(t *testing.T) {
	t.Parallel()
	var b bus
	one, _ := legacyAskServer(t, &mcpmw.Options{Relay: b.join()})
	two, aud := legacyAskServer(t, &mcpmw.Options{Relay: b.join()})
	resp := legacyPost(context.Background(), t, one.URL, "reader", "2025-11-25",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","arguments":{"id":3}}}`)
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)
	ask := nextMessage(t, stream)
	var id string
	require.NoError(t, json.Unmarshal(ask.ID, &id))
	rest, ok := strings.CutPrefix(id, "mcpmw-ask-i0.")
	require.True(t, ok, "the id names the instance that asked: %s", id)
	assert.Len(t, rest, 22, "and keeps 128 random bits")

	post := func(token, body string) {
		assert.Equal(t, http.StatusAccepted, postAnswer(t, two.URL, token, "2025-11-25", body))
	}
	post("writer", answerBody(ask.ID, `"result":{"action":"accept","content":{"confirm":true}}`))
	post("reader", answerBody(json.RawMessage(`"mcpmw-ask-i9.AAAAAAAAAAAAAAAAAAAAAA"`), `"result":{"action":"accept"}`))
	post("reader", answerBody(ask.ID, `"result":{"action":"decline"}`))
	final := nextMessage(t, stream)
	require.NotNil(t, final.Result)
	assert.Equal(t, "decline ", final.Result.Content[0].Text, "the reader's answer, not the writer's, reached the call")

	sent := "client response: sent to the instance that asked"
	notHere := "client response: no request of this caller is waiting for it here (answered late, or sent to another instance)"
	assert.Equal(t, []string{sent, notHere, sent}, summariesOfAnswers(aud))
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Equal(t, 3, b.sent, "one Send per answer naming another instance, and nothing else")
}

// An answer POSTed to the instance that asked is delivered there, without
// a message on the bus.
func TestLegacyAnswerToTheSameInstanceCrossesNoBus(t *testing.T) {
	t.Parallel()
	var b bus
	srv, aud := legacyAskServer(t, &mcpmw.Options{Relay: b.join()})
	resp := legacyPost(context.Background(), t, srv.URL, "reader", "2025-11-25",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","arguments":{"id":3}}}`)
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)
	ask := nextMessage(t, stream)
	assert.Equal(t, http.StatusAccepted, postAnswer(t, srv.URL, "reader", "2025-11-25", answerBody(ask.ID, `"error":{"code":-1,"message":"no"}`)))
	final := nextMessage(t, stream)
	require.NotNil(t, final.Result)
	assert.True(t, final.Result.IsError)
	assert.Equal(t, []string{"client response: delivered"}, summariesOfAnswers(aud))
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Zero(t, b.sent)
}

// A client's error answer sent on to the instance that asked reaches its
// call as the client's error, code and message.
func TestLegacyErrorAnswerCrossesInstances(t *testing.T) {
	t.Parallel()
	var b bus
	one, _ := legacyAskServer(t, &mcpmw.Options{Relay: b.join()})
	two, _ := legacyAskServer(t, &mcpmw.Options{Relay: b.join()})
	resp := legacyPost(context.Background(), t, one.URL, "reader", "2025-11-25",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","arguments":{"id":3}}}`)
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)
	ask := nextMessage(t, stream)
	assert.Equal(t, http.StatusAccepted, postAnswer(t, two.URL, "reader", "2025-11-25", answerBody(ask.ID, `"error":{"code":-32601,"message":"Method not found"}`)))
	final := nextMessage(t, stream)
	require.NotNil(t, final.Result)
	assert.True(t, final.Result.IsError)
	assert.Equal(t, "the client refused elicitation/create (error -32601): Method not found", final.Result.Content[0].Text)
}

// A legacy notifications/cancelled received by one instance cancels the
// call running on another, for the same CallerID only.
func TestLegacyCancelReachesACallOnAnotherInstance(t *testing.T) {
	t.Parallel()
	var b bus
	w := newWaitingMethod("1")
	one := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{w.method()}, Relay: b.join()})
	two := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Relay: b.join()})
	w.call(one, "1")
	<-w.started

	rec := httptest.NewRecorder()
	two.ServeHTTP(rec, req(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"dup"}}`,
		"MCP-Protocol-Version", mcpmw.Version20251125, "Authorization", "Bearer writer"))
	assert.Equal(t, http.StatusAccepted, rec.Code)
	select {
	case e := <-w.ended:
		t.Fatalf("another caller's cancellation ended the call: %v", e)
	default:
	}
	cancelDup(t, two)
	assert.Equal(t, map[string]string{"1": "mcpmw: cancelled by the client"}, w.endings(t, 1))
}

// resyncing is a Notifier that says when it may have lost events.
type resyncing struct {
	*mcpmw.LocalNotifier
	mu     sync.Mutex
	resync []func()
}

func (n *resyncing) SubscribeResync(f func()) func() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.resync = append(n.resync, f)
	return func() {}
}

func (n *resyncing) resynced() {
	n.mu.Lock()
	fs := slices.Clone(n.resync)
	n.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// After a Notifier that is a Resyncer says it may have lost events, each
// open listen stream hears a list_changed of each kind it asked for and an
// updated of each URI it subscribed to, and nothing it did not ask for.
func TestResyncTellsListenersTheirListsMayHaveChanged(t *testing.T) {
	t.Parallel()
	n := &resyncing{LocalNotifier: mcpmw.NewLocalNotifier()}
	e := newListenEnv(t, &mcpmw.Options{Methods: listMethods(), Notifier: n})
	lists := e.listen(t, "reader", `"l"`, `{"toolsListChanged":true,"promptsListChanged":true}`)
	uris := e.listen(t, "reader", `"u"`, `{"resourceSubscriptions":["file:///a"]}`)
	lists.next(t) // the acknowledgements
	uris.next(t)
	n.resynced()
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"l"}}}`, lists.next(t))
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"l"}}}`, lists.next(t))
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a","_meta":{"io.modelcontextprotocol/subscriptionId":"u"}}}`, uris.next(t))
	require.NoError(t, e.h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.PromptsListChanged, Permission: "read"}))
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"l"}}}`, lists.next(t),
		"nothing else was queued: the resources list, not asked for, was not told")
}
