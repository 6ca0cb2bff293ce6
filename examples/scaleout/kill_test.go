package scaleout

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInstanceKilledUnderLoad: one instance of three killed with SIGKILL
// while 16 clients call through the round-robin proxy. Every request that
// was answered has exactly one audit record, in the log of the instance
// that answered it, the killed one's included; the requests the proxy sent
// to the dead instance fail at the proxy with 502, not counted as lost
// (one in flight at the kill may have its record, never two); and every
// request sent to the other two is answered.
func TestInstanceKilledUnderLoad(t *testing.T) {
	t.Parallel()
	c := startCluster(t, "chi-app", "RATE_LIMIT=0")
	victim := c.instances[1]

	type outcome struct {
		status    int
		body      string
		err       error
		afterKill bool
	}
	var (
		mu                sync.Mutex
		outcomes          = map[string]outcome{}
		stop              atomic.Bool
		killed            atomic.Bool
		okBefore, okAfter atomic.Int32 // answered 200, sent before and after the kill
		wg                sync.WaitGroup
	)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				id := "kill-" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
				after := killed.Load()
				status, _, body, err := post(t.Context(), c.proxyURL, readerToken, "tools/call", "echo", echoBody(id))
				mu.Lock()
				outcomes[id] = outcome{status: status, body: string(body), err: err, afterKill: after}
				mu.Unlock()
				if status == 200 && after {
					okAfter.Add(1)
				} else if status == 200 {
					okBefore.Add(1)
				}
			}
		}()
	}
	// Under way (the victim has had its share of 30 answers) before the
	// kill, and 21 answers after it, however long a busy machine takes.
	waitFor(t, "30 answers before the kill", patience, func() bool { return okBefore.Load() >= 30 })
	victim.kill(t)
	killed.Store(true)
	waitFor(t, "21 answers after the kill", patience, func() bool { return okAfter.Load() > 20 })
	stop.Store(true)
	wg.Wait()

	records := map[string]int{} // every audit record, by request id, across the three logs
	byVictim := victim.records(t)
	for _, in := range c.instances {
		for id, n := range in.records(t) {
			records[id] += n
		}
	}
	answered, refused, answeredByVictim, answeredAfterKill := 0, 0, 0, 0
	for id, o := range outcomes {
		require.NoError(t, o.err, "%s: the proxy answers every request", id)
		switch o.status {
		case 200:
			answered++
			assert.Contains(t, o.body, `"text":"`+id+`"`, "%s: its own answer", id)
			assert.Equal(t, 1, records[id], "%s was answered: exactly one audit record", id)
			if byVictim[id] > 0 {
				answeredByVictim++
			}
			if o.afterKill {
				answeredAfterKill++
			}
		case 502:
			refused++
			assert.LessOrEqual(t, records[id], 1, "%s: sent to the dead instance, at most the record of a call it had begun", id)
		default:
			t.Errorf("%s: HTTP %d: %s", id, o.status, o.body)
		}
	}
	for id, n := range records {
		_, sent := outcomes[id]
		assert.True(t, sent, "a record of a request never sent: %s", id)
		assert.LessOrEqual(t, n, 1, "%s recorded %d times", id, n)
	}

	served := c.proxy.Served()
	assert.Equal(t, len(outcomes), int(served[0]+served[1]+served[2]))
	assert.Positive(t, answeredByVictim, "the victim served until it was killed")
	assert.Positive(t, refused, "the proxy sent the dead instance its share, and answered 502")
	assert.Equal(t, int(served[0]+served[2]), answered-answeredByVictim, "every request sent to the other two was answered")
	assert.Equal(t, int(served[1]), answeredByVictim+refused, "the only 502s are the dead instance's")
	assert.Greater(t, answeredAfterKill, 20, "the others keep serving after the kill")
	t.Logf("%d requests: %d answered (%d by the killed instance), %d refused with 502; served per instance %v", len(outcomes), answered, answeredByVictim, refused, served)
}
