package mcpmw_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// jwtCaller is a Caller as a JWT middleware might build it: a comparable
// struct whose claims, held in an interface, are a map. == on two of them
// panics at run time.
type jwtCaller struct{ claims any }

func (jwtCaller) Can(mcpmw.Permission) bool { return true }

// A notifications/cancelled from a caller that == cannot compare used to
// panic while inflight's lock was held, leaving it locked: every later
// legacy tools/call then hung for good.
func TestLegacyCancelFromAnUncomparableCallerDoesNotWedgeLaterCalls(t *testing.T) {
	t.Parallel()
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	var reg mcpmw.Registry
	reg.AddTools(blocking(started, ended), testTools()[0])
	authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) {
		return jwtCaller{claims: map[string]any{"sub": "u1"}}, nil
	})
	a := &spy{}
	h := mcpmw.New(&reg, authn, a, nil)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go h.ServeHTTP(httptest.NewRecorder(), legacy("2025-11-25", `"call-1"`, "tools/call", `"name":"wait"`).WithContext(ctx))
	<-started

	w := httptest.NewRecorder()
	h.ServeHTTP(w, req(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1"}}`, "MCP-Protocol-Version", "2025-11-25"))
	assert.Equal(t, http.StatusAccepted, w.Code)

	answered := make(chan int, 1)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, legacy("2025-11-25", "2", "tools/call", `"name":"echo","arguments":{"message":"still here"}`))
		answered <- w.Code
	}()
	select {
	case code := <-answered:
		assert.Equal(t, http.StatusOK, code)
	case <-time.After(patience):
		t.Fatal("a later legacy tools/call hung: inflight's lock was left held")
	}
	stop()
	select {
	case <-ended:
	case <-time.After(patience):
		t.Fatal("the first call never ended")
	}
}

// Callers are the same only by CallerID: two requests authenticated as the
// same session pointer without CallerID cannot cancel each other's calls.
func TestLegacyCancelNeedsCallerID(t *testing.T) {
	t.Parallel()
	started, ended := make(chan struct{}, 1), make(chan error, 1)
	var reg mcpmw.Registry
	reg.AddTools(blocking(started, ended))
	anon := &struct{ jwtCaller }{}
	authn := mcpmw.AuthenticatorFunc(func(*http.Request) (mcpmw.Caller, error) { return anon, nil })
	a := &spy{}
	h := mcpmw.New(&reg, authn, a, nil)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go h.ServeHTTP(httptest.NewRecorder(), legacy("2025-11-25", `"c"`, "tools/call", `"name":"wait"`).WithContext(ctx))
	<-started
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}`, "MCP-Protocol-Version", "2025-11-25"))
	assert.Equal(t, http.StatusAccepted, w.Code)
	select {
	case <-ended:
		t.Fatal("a caller without CallerID cancelled a call")
	case <-time.After(50 * time.Millisecond):
	}
	recs := a.records()
	require.Len(t, recs, 1)
	assert.Contains(t, recs[0].Summary, "no CallerID")
	stop()
	<-ended
}

// postWith POSTs a legacy (2025-11-25) body as the reader through client.
func postWith(ctx context.Context, t *testing.T, client *http.Client, url, body string) *http.Response {
	t.Helper()
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer reader")
	r.Header.Set("MCP-Protocol-Version", mcpmw.Version20251125)
	resp, err := client.Do(r)
	require.NoError(t, err)
	return resp
}

// accepted POSTs body and checks it gets 202.
func accepted(t *testing.T, client *http.Client, url, body string) {
	t.Helper()
	resp := postWith(context.Background(), t, client, url, body)
	resp.Body.Close()
	assert.Equal(t, http.StatusAccepted, resp.StatusCode, body)
}

// nextData reads the next event's data line.
func nextData(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err, "the stream ended early (or the call was never cancelled)")
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			return data
		}
	}
}

// recordOf returns the record of the request with id (as sent), waiting
// for it (patience at most): a handler records just before its last write.
func recordOf(t *testing.T, a *spy, method, id string) mcpmw.CallRecord {
	t.Helper()
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		for _, rec := range a.records() {
			if rec.Method == method && rec.RequestID == id {
				return rec
			}
		}
	}
	t.Fatalf("no record of %s %s in %v", method, id, a.records())
	return mcpmw.CallRecord{}
}

// A legacy prompts/get or resources/read blocked in Ask used to be out of
// reach of notifications/cancelled: only tools/call was in flight, so the
// cancel was audited "no such call running here" and the waiter stayed
// until AskTimeout. Now the cancel ends the call, whatever its method, and
// releases its waiter.
func TestLegacyCancelReachesAPromptOrReadWaitingInAsk(t *testing.T) {
	t.Parallel()
	ask := func(ctx context.Context) error {
		_, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Go on?", confirmForm))
		return err
	}
	var reg mcpmw.Registry
	reg.AddPrompts(mcpmw.Prompt{Name: "asks", Description: "Asks first.", Permission: "read",
		Get: func(ctx context.Context, _ mcpmw.Caller, _ map[string]string) (mcpmw.PromptResult, error) {
			return mcpmw.PromptResult{}, ask(ctx)
		}})
	reg.AddResources(mcpmw.Resource{URI: "asks://r", Name: "asks", Permission: "read",
		Read: func(ctx context.Context, _ mcpmw.Caller, _ string) ([]mcpmw.ResourceContents, error) {
			return nil, ask(ctx)
		}})
	for _, tc := range []struct{ method, params string }{
		{"prompts/get", `{"name":"asks"}`},
		{"resources/read", `{"uri":"asks://r"}`},
	} {
		for _, proto := range protocols {
			t.Run(tc.method+" "+proto, func(t *testing.T) {
				t.Parallel()
				a := &spy{}
				h := mcpmw.New(&reg, tokenAuthn, a, &mcpmw.Options{AskTimeout: time.Minute, Logger: newTextLogger(&syncBuffer{})})
				srv, client := serveOver(t, proto, h)
				url := srv.URL
				ctx, stop := context.WithTimeout(context.Background(), 2*patience) // recordOf waits up to patience for each record
				defer stop()
				resp := postWith(ctx, t, client, url, `{"jsonrpc":"2.0","id":"call-1","method":"`+tc.method+`","params":`+tc.params+`}`)
				defer resp.Body.Close()
				stream := bufio.NewReader(resp.Body)
				var asked struct {
					ID     json.RawMessage
					Method string
				}
				require.NoError(t, json.Unmarshal([]byte(nextData(t, stream)), &asked))
				require.Equal(t, "elicitation/create", asked.Method)

				accepted(t, client, url, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-1"}}`)
				var final struct {
					ID    string
					Error *struct{ Code int }
				}
				require.NoError(t, json.Unmarshal([]byte(nextData(t, stream)), &final))
				assert.Equal(t, "call-1", final.ID)
				require.NotNil(t, final.Error, "a cancelled call answers an error")
				assert.Equal(t, mcpmw.CodeInternalError, final.Error.Code)

				assert.Equal(t, `cancelled "call-1"`, recordOf(t, a, "notifications/cancelled", "").Summary)
				rec := recordOf(t, a, tc.method, `"call-1"`)
				assert.Equal(t, "cancelled by the client (notifications/cancelled)", rec.Summary)
				// The waiter went with the call: a late answer reaches nothing.
				accepted(t, client, url, answerBody(asked.ID, `"result":{"action":"accept","content":{"confirm":true}}`))
				assert.Contains(t, recordOf(t, a, "", string(asked.ID)).Summary, "no request of this caller is waiting")
				assert.Equal(t, proto, resp.Proto[:len(proto)])
			})
		}
	}
}

// waitingMethod is an application Method that blocks until its context
// ends, or until release[params.n] is closed; it reports which call
// started, and how each ended.
type waitingMethod struct {
	started chan string
	ended   chan [2]string // n, and the context's cause ("" when released)
	release map[string]chan struct{}
}

func newWaitingMethod(ns ...string) *waitingMethod {
	w := &waitingMethod{started: make(chan string, len(ns)), ended: make(chan [2]string, len(ns)), release: map[string]chan struct{}{}}
	for _, n := range ns {
		w.release[n] = make(chan struct{})
	}
	return w
}

func (w *waitingMethod) method() mcpmw.Method {
	return mcpmw.Method{Name: "app/wait", Handle: func(ctx context.Context, req *mcpmw.Request) *mcpmw.Response {
		n, _ := req.StringParam("n")
		w.started <- n
		select {
		case <-ctx.Done():
			w.ended <- [2]string{n, context.Cause(ctx).Error()}
		case <-w.release[n]:
			w.ended <- [2]string{n, ""}
		case <-time.After(patience):
			w.ended <- [2]string{n, "never cancelled"}
		}
		return mcpmw.ResultResponse(json.RawMessage(`{}`))
	}}
}

// call runs app/wait with n under request id "dup" in the background;
// the channel is closed once the handler has returned.
func (w *waitingMethod) call(h http.Handler, n string) <-chan struct{} {
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.ServeHTTP(httptest.NewRecorder(), legacy(mcpmw.Version20251125, `"dup"`, "app/wait", `"n":"`+n+`"`))
	}()
	return served
}

// ended collects how n calls ended, by n.
func (w *waitingMethod) endings(t *testing.T, n int) map[string]string {
	t.Helper()
	got := map[string]string{}
	for range n {
		select {
		case e := <-w.ended:
			got[e[0]] = e[1]
		case <-time.After(2 * patience): // past the method's own patience: its "never cancelled" comes first
			t.Fatalf("only %d of %d calls ended: %v", len(got), n, got)
		}
	}
	return got
}

// cancelDup sends the reader's notifications/cancelled of request id "dup".
func cancelDup(t *testing.T, h http.Handler) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"dup"}}`, "MCP-Protocol-Version", mcpmw.Version20251125))
	assert.Equal(t, http.StatusAccepted, w.Code)
}

// An application's own Method blocks as well as any built-in: a legacy
// notifications/cancelled cancels its context, on an endpoint with no
// Registry at all (where notifications/cancelled used not to be served).
func TestLegacyCancelReachesAnApplicationMethod(t *testing.T) {
	t.Parallel()
	w := newWaitingMethod("1")
	a := &spy{}
	h := mcpmw.New(nil, tokenAuthn, a, &mcpmw.Options{Methods: []mcpmw.Method{w.method()}})
	w.call(h, "1")
	<-w.started
	cancelDup(t, h)
	assert.Equal(t, map[string]string{"1": "mcpmw: cancelled by the client"}, w.endings(t, 1))
	assert.Equal(t, `cancelled "dup"`, recordOf(t, a, "notifications/cancelled", "").Summary)
}

// Two concurrent legacy calls of one caller may reuse one request id (the
// id is the client's to choose): a cancel reaches each of them, and one
// finishing does not take the other out of reach.
func TestLegacyCancelReachesEveryCallSharingAnID(t *testing.T) {
	t.Parallel()
	t.Run("both running", func(t *testing.T) {
		t.Parallel()
		w := newWaitingMethod("1", "2")
		h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{w.method()}})
		w.call(h, "1")
		w.call(h, "2")
		<-w.started
		<-w.started
		cancelDup(t, h)
		assert.Equal(t, map[string]string{"1": "mcpmw: cancelled by the client", "2": "mcpmw: cancelled by the client"}, w.endings(t, 2))
	})
	for _, first := range []string{"1", "2"} { // whichever registered first finishes first
		t.Run("one finished first "+first, func(t *testing.T) {
			t.Parallel()
			w := newWaitingMethod("1", "2")
			h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{w.method()}})
			served := map[string]<-chan struct{}{"1": w.call(h, "1")}
			require.Equal(t, "1", <-w.started)
			served["2"] = w.call(h, "2")
			require.Equal(t, "2", <-w.started)
			close(w.release[first])
			require.Equal(t, map[string]string{first: ""}, w.endings(t, 1))
			<-served[first] // its call has left the flight
			cancelDup(t, h)
			other := map[string]string{"1": "2", "2": "1"}[first]
			assert.Equal(t, map[string]string{other: "mcpmw: cancelled by the client"}, w.endings(t, 1))
		})
	}
}

// Only a legacy call is in flight: a 2026-07-28 call, cancelled by closing
// its stream, is out of reach of a legacy notifications/cancelled naming
// its id (the revision has no such notification).
func TestLegacyCancelDoesNotReachA2026Call(t *testing.T) {
	t.Parallel()
	w := newWaitingMethod("1")
	h := mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{w.method()}})
	go h.ServeHTTP(httptest.NewRecorder(), modern(`"dup"`, "app/wait", `"n":"1"`))
	<-w.started
	cancelDup(t, h)
	select {
	case e := <-w.ended:
		t.Fatalf("a 2026-07-28 call ended on a legacy cancel: %v", e)
	case <-time.After(50 * time.Millisecond):
	}
	close(w.release["1"])
	assert.Equal(t, map[string]string{"1": ""}, w.endings(t, 1))
}

// A legacy cancellation names its call by request id exactly, by JSON type
// and value: neither the string "1" nor the string "n1" cancels the call
// whose id is the number 1, on the instance running it or through the
// Relay from another; the number 1 does. (A string id, "\u0064up" for
// "dup", is compared as decoded: TestInflightCancelsOnlyTheSameCallerID.)
func TestLegacyCancelMatchesTheIDsJSONType(t *testing.T) {
	t.Parallel()
	for _, relayed := range []bool{false, true} {
		t.Run(fmt.Sprintf("relayed=%v", relayed), func(t *testing.T) {
			t.Parallel()
			running := make(chan context.Context, 1)
			wait := mcpmw.Method{Name: "app/wait", Handle: func(ctx context.Context, _ *mcpmw.Request) *mcpmw.Response {
				running <- ctx
				<-ctx.Done()
				return mcpmw.ResultResponse(json.RawMessage(`{}`))
			}}
			var b bus
			opts := &mcpmw.Options{Methods: []mcpmw.Method{wait}}
			if relayed {
				opts.Relay = b.join()
			}
			one := mcpmw.New(nil, tokenAuthn, &spy{}, opts)
			cancels := http.Handler(one)
			if relayed {
				cancels = mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Relay: b.join()})
			}
			served := make(chan struct{})
			go func() {
				defer close(served)
				one.ServeHTTP(httptest.NewRecorder(), legacy(mcpmw.Version20251125, `1`, "app/wait", ""))
			}()
			ctx := <-running
			for _, id := range []string{`"1"`, `"n1"`, `"s1"`, `1`} {
				rec := httptest.NewRecorder()
				cancels.ServeHTTP(rec, req(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`}}`,
					"MCP-Protocol-Version", mcpmw.Version20251125))
				assert.Equal(t, http.StatusAccepted, rec.Code)
				// Both ways cancel before the notification is answered.
				if id == `1` {
					require.Error(t, ctx.Err(), "the number 1 cancels it")
					assert.Equal(t, "mcpmw: cancelled by the client", context.Cause(ctx).Error())
					break
				}
				assert.NoError(t, ctx.Err(), "the cancellation of %s reached the call of id 1", id)
			}
			<-served
		})
	}
}
