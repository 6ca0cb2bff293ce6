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
	"time"

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
	sent      int      // Send and Broadcast calls
	hold      bool     // Broadcast keeps its payloads in held, for release
	held      [][]byte // under mu
}

// release hands every held broadcast to every instance.
func (b *bus) release() {
	b.mu.Lock()
	held, all := b.held, make([]*busRelay, 0, len(b.instances))
	b.held = nil
	for _, r := range b.instances {
		all = append(all, r)
	}
	b.mu.Unlock()
	for _, p := range held {
		for _, r := range all {
			r.hand(p)
		}
	}
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
	if r.b.hold {
		r.b.held = append(r.b.held, payload)
		r.b.mu.Unlock()
		return nil
	}
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
// recorded, in order, once there are n (a record is written once its
// answer is, which the client may see first), or after patience.
func summariesOfAnswers(aud *spy, n int) []string {
	var s []string
	for deadline := time.Now().Add(patience); len(s) < n && time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		s = s[:0]
		for _, r := range aud.records() {
			if r.Method == "" {
				s = append(s, r.Summary)
			}
		}
	}
	return s
}

// relayPair is two instances serving askingTools over proto, joined by
// one bus: each one's URL and client, and the second's audit spy.
type relayPair struct {
	b                  *bus
	one, two           string
	oneClient, twoClnt *http.Client
	aud                *spy
}

func newRelayPair(t *testing.T, proto string) *relayPair {
	t.Helper()
	p := &relayPair{b: &bus{}, aud: &spy{}}
	serve := func(aud *spy) (string, *http.Client) {
		var reg mcpmw.Registry
		reg.AddTools(askingTools()...)
		srv, c := serveOver(t, proto, mcpmw.New(&reg, tokenAuthn, aud, &mcpmw.Options{Relay: p.b.join(), Logger: newTextLogger(&syncBuffer{})}))
		return srv.URL, c
	}
	p.one, p.oneClient = serve(&spy{})
	p.two, p.twoClnt = serve(p.aud)
	return p
}

// ask starts a legacy delete on the first instance as the reader and
// returns its stream and the question's id.
func (p *relayPair) ask(t *testing.T) (*bufio.Reader, json.RawMessage) {
	t.Helper()
	resp := postWith(context.Background(), t, p.oneClient, p.one,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","arguments":{"id":3}}}`)
	t.Cleanup(func() { resp.Body.Close() })
	stream := bufio.NewReader(resp.Body)
	return stream, nextMessage(t, stream).ID
}

// answer POSTs body to the second instance as token and returns the status.
func (p *relayPair) answer(t *testing.T, token, body string) int {
	t.Helper()
	r := mcpPost(context.Background(), t, p.two, token, body, "MCP-Protocol-Version", mcpmw.Version20251125)
	resp, err := p.twoClnt.Do(r)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// A legacy Ask whose stream is on one instance is answered by a POST to
// another: the id names the instance that asked (and keeps 128 random
// bits), the answer is sent there, and the caller binding is checked
// there: another caller's answer reaches nothing, and an id naming no
// instance (or none at all) is the unknown id it always was (the same 202
// and record), sent nowhere when it names none.
func TestLegacyAnswerReachesTheInstanceThatAsked(t *testing.T) {
	t.Parallel()
	for _, proto := range protocols {
		t.Run(proto, func(t *testing.T) {
			t.Parallel()
			p := newRelayPair(t, proto)
			stream, askID := p.ask(t)
			var id string
			require.NoError(t, json.Unmarshal(askID, &id))
			rest, ok := strings.CutPrefix(id, "mcpmw-ask-i0~")
			require.True(t, ok, "the id names the instance that asked, then its handler: %s", id)
			handler, random, ok := strings.Cut(rest, ".")
			require.True(t, ok, id)
			assert.Len(t, handler, 22, "the handler is 128 random bits")
			assert.Len(t, random, 22, "and the question keeps 128 random bits")

			for _, a := range []struct{ token, id string }{
				{"writer", string(askID)},
				{"reader", `"mcpmw-ask-i9.AAAAAAAAAAAAAAAAAAAAAA"`}, // no such instance: sent, nobody receives it
				{"reader", `"mcpmw-ask-AAAAAAAAAAAAAAAAAAAAAA"`},    // names no instance: not sent
				{"reader", `"mcpmw-ask-.AAAAAAAAAAAAAAAAAAAAAA"`},   // names the empty instance: not sent
				{"reader", `"i0.AAAAAAAAAAAAAAAAAAAAAA"`},           // not an ask id: not sent
				{"reader", string(askID)},
			} {
				assert.Equal(t, http.StatusAccepted, p.answer(t, a.token, answerBody(json.RawMessage(a.id), `"result":{"action":"decline"}`)))
			}
			final := nextMessage(t, stream)
			require.NotNil(t, final.Result)
			assert.Equal(t, "decline ", final.Result.Content[0].Text, "the reader's answer, not the writer's, reached the call")

			sent := "client response: sent to the instance that asked"
			notHere := "client response: no request of this caller is waiting for it here (answered late, or sent to another instance)"
			assert.Equal(t, []string{sent, notHere, notHere, notHere, notHere, sent}, summariesOfAnswers(p.aud, 6))
			p.b.mu.Lock()
			defer p.b.mu.Unlock()
			assert.Equal(t, 3, p.b.sent, "one Send per answer naming another instance, and nothing else")
		})
	}
}

// An answer carrying both a result and an error, POSTed to another
// instance, is refused there (400) and the instance that asked is told:
// its call gets the AskError at once.
func TestLegacyAnswerWithResultAndErrorCrossesInstances(t *testing.T) {
	t.Parallel()
	p := newRelayPair(t, "HTTP/1.1")
	stream, askID := p.ask(t)
	assert.Equal(t, http.StatusBadRequest, p.answer(t, "reader", answerBody(askID, `"result":{"action":"accept"},"error":{"code":-1,"message":"no"}`)))
	final := nextMessage(t, stream)
	require.NotNil(t, final.Result)
	assert.Equal(t, "the client gave no answer to elicitation/create: its answer carries both a result and an error, which JSON-RPC forbids", final.Result.Content[0].Text)
	assert.Equal(t, "client response with both result and error: refused, and the instance that asked was told", recordOf(t, p.aud, "", string(askID)).Summary)
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
	assert.Equal(t, []string{"client response: delivered"}, summariesOfAnswers(aud, 1))
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Zero(t, b.sent)
}

// A client's error answer sent on to the instance that asked reaches its
// call as the client's error, code and message; a payload on the bus that
// is no message of the handler's is dropped.
func TestLegacyErrorAnswerCrossesInstances(t *testing.T) {
	t.Parallel()
	p := newRelayPair(t, "HTTP/1.1")
	stream, askID := p.ask(t)
	p.b.instances["i0"].hand([]byte(`not json`))
	p.b.instances["i0"].hand([]byte(`{"answer":` + string(askID) + `,"caller":"reader"`)) // cut short
	assert.Equal(t, http.StatusAccepted, p.answer(t, "reader", answerBody(askID, `"error":{"code":-32601,"message":"Method not found"}`)))
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

// The instance that received a cancellation has cancelled its own calls
// already: its own broadcast, coming back, cancels nothing there, not even
// a call the client has started since under the same id.
func TestLegacyCancelComingBackCancelsNothingMore(t *testing.T) {
	t.Parallel()
	b := &bus{hold: true}
	w := newWaitingMethod("1", "2")
	one := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{w.method()}, Relay: b.join()})
	w.call(one, "1")
	<-w.started
	cancelDup(t, one)
	assert.Equal(t, map[string]string{"1": "mcpmw: cancelled by the client"}, w.endings(t, 1))
	w.call(one, "2")
	<-w.started
	b.release()
	close(w.release["2"])
	assert.Equal(t, map[string]string{"2": ""}, w.endings(t, 1), "the call started since ran to its end")
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
	uris := e.listen(t, "reader", `"u"`, `{"resourceSubscriptions":["file:///a","file:///b"]}`)
	lists.next(t) // the acknowledgements
	uris.next(t)
	n.resynced()
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"l"}}}`, lists.next(t))
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"l"}}}`, lists.next(t))
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///a","_meta":{"io.modelcontextprotocol/subscriptionId":"u"}}}`, uris.next(t))
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///b","_meta":{"io.modelcontextprotocol/subscriptionId":"u"}}}`, uris.next(t),
		"each subscribed URI, in its own place, and nothing the stream did not ask for")
	require.NoError(t, e.h.Publish(t.Context(), mcpmw.Event{Method: mcpmw.PromptsListChanged, Permission: "read"}))
	assert.Equal(t, `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"l"}}}`, lists.next(t),
		"nothing else was queued: the resources list, not asked for, was not told")
}
