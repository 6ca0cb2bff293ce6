package mcpmw_test

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
)

// Several Handlers of one process sharing one Relay (say /mcp and
// /admin/mcp) each are a handler of their own on the bus: an answer, a
// task's wake-up and a cancellation reach the handler they are for, the
// same whether it runs in this process or another.

func TestLegacyAnswerToAnotherHandlerOnTheSameRelayReachesTheOneThatAsked(t *testing.T) {
	t.Parallel()
	var b bus
	relay := b.join()
	asker, _ := legacyAskServer(t, &mcpmw.Options{Relay: relay})
	other, aud := legacyAskServer(t, &mcpmw.Options{Relay: relay})
	resp := legacyPost(context.Background(), t, asker.URL, "reader", "2025-11-25",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","arguments":{"id":3}}}`)
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)
	ask := nextMessage(t, stream)
	assert.Equal(t, http.StatusAccepted, postAnswer(t, other.URL, "reader", "2025-11-25", answerBody(ask.ID, `"result":{"action":"decline"}`)))
	final := nextMessage(t, stream)
	require.NotNil(t, final.Result)
	assert.Equal(t, "decline ", final.Result.Content[0].Text, "the answer POSTed to the other handler of the process reached the call, as it would from another process")
	assert.Equal(t, []string{"client response: sent to the instance that asked"}, summariesOfAnswers(aud, 1))
}

func TestTaskCancelThroughAnotherHandlerOnTheSameRelayWakesItsOwnerAtOnce(t *testing.T) {
	t.Parallel()
	var b bus
	relay := b.join()
	store := sharedStore{mcpmw.NewMemoryTaskStore()}
	newHandler := func() *mcpmw.Handler {
		var reg mcpmw.Registry
		reg.AddTools(gatedTool("export", make(chan struct{}), mcpmw.TaskOptional, nil))
		// A lease of 10 minutes: the owner rereads the store only every
		// 200 s, so only the wake-up can end the task within the test.
		h := mcpmw.New(&reg, taskUsers, mcpmwtest.NewRecorder(), &mcpmw.Options{Endpoint: "tasks", Relay: relay,
			Tasks: &mcpmw.TaskOptions{Store: store, Lease: 10 * time.Minute, Shutdown: time.Millisecond}})
		t.Cleanup(h.Close)
		return h
	}
	owner, other := newHandler(), newHandler()
	created := doTask(t, owner, "alice", "tools/call", `"name":"export","arguments":{}`, taskCaps)
	require.Equal(t, "task", created.Result["resultType"], created.Raw)
	id := created.Result["taskId"].(string)
	r := doTask(t, other, "alice", "tasks/cancel", `"taskId":`+strconv.Quote(id), taskCaps)
	require.Nil(t, r.Error, r.Raw)
	deadline := time.Now().Add(mcpmw.Patience)
	for {
		got, err := store.Get(context.Background(), id)
		require.NoError(t, err)
		if got.Status == mcpmw.TaskCancelled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the owner never heard of the cancel made through the other handler of its process: %s", got.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLegacyCancelReachesCallsAtItsOwnEndpointOnly(t *testing.T) {
	t.Parallel()
	var b bus
	here, far, farther := b.join(), b.join(), b.join()
	w := newWaitingMethod("public", "public elsewhere", "admin here", "admin elsewhere")
	newHandler := func(r mcpmw.Relay, endpoint string) *mcpmw.Handler {
		return mcpmw.New(nil, tokenAuthn, &spy{}, &mcpmw.Options{Methods: []mcpmw.Method{w.method()}, Relay: r, Endpoint: endpoint})
	}
	public := newHandler(here, "public")
	w.call(public, "public")
	w.call(newHandler(far, "public"), "public elsewhere")
	w.call(newHandler(here, "admin"), "admin here")
	w.call(newHandler(farther, "admin"), "admin elsewhere")
	for range 4 {
		<-w.started
	}
	cancelDup(t, public) // the same caller and request id run at both endpoints: only /public's are named
	got := w.endings(t, 2)
	assert.Equal(t, map[string]string{"public": "mcpmw: cancelled by the client", "public elsewhere": "mcpmw: cancelled by the client"}, got,
		"the calls at the cancelling endpoint, here and on another instance, are cancelled")
	close(w.release["admin here"])
	close(w.release["admin elsewhere"])
	assert.Equal(t, map[string]string{"admin here": "", "admin elsewhere": ""}, w.endings(t, 2), "the calls at the other endpoint ran to their end, in this process and another")
}

func TestRelayedAnswerAddressedToAnotherHandlerIsDropped(t *testing.T) {
	t.Parallel()
	var b bus
	relay := b.join()
	asker, _ := legacyAskServer(t, &mcpmw.Options{Relay: relay})
	resp := legacyPost(context.Background(), t, asker.URL, "reader", "2025-11-25",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete","arguments":{"id":3}}}`)
	defer resp.Body.Close()
	stream := bufio.NewReader(resp.Body)
	ask := nextMessage(t, stream)
	relay.hand([]byte(`{"answer":` + string(ask.ID) + `,"caller":"reader","result":{"action":"accept","content":{"confirm":true}},"to":"i0~another-handler"}`))
	assert.Equal(t, http.StatusAccepted, postAnswer(t, asker.URL, "reader", "2025-11-25", answerBody(ask.ID, `"result":{"action":"decline"}`)))
	final := nextMessage(t, stream)
	require.NotNil(t, final.Result)
	assert.Equal(t, "decline ", final.Result.Content[0].Text, "the payload for another handler of the instance was dropped; the call took the answer meant for it")
}
