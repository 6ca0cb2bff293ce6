package mcpredis_test

import (
	"testing"

	"github.com/mcpmw/mcpmw/internal/redistest"
	mcpredis "github.com/mcpmw/mcpmw/redis"
)

// BenchmarkRelaySendDelivered is what relaying a legacy answer to another
// instance adds: one PUBLISH, answered, and the payload handed to the
// receiving instance's func. BenchmarkRedisPing beside it is one round
// trip on the same server, for scale.
func BenchmarkRelaySendDelivered(b *testing.B) {
	srv := redistest.Start(b)
	a, _ := newRelay(b, newClient(b, srv.Addr), nil)
	to, err := mcpredis.NewRelay(b.Context(), mcpredis.Config{Client: newClient(b, srv.Addr)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = to.Close() })
	got := make(chan struct{}, 1)
	to.Receive(func([]byte) { got <- struct{}{} })
	payload := []byte(`{"answer":"mcpmw-ask-x.y","caller":"demo","result":{"action":"accept"}}`)
	b.ResetTimer()
	for range b.N {
		ok, err := a.Send(b.Context(), to.ID(), payload)
		if !ok || err != nil {
			b.Fatal(ok, err)
		}
		<-got
	}
}

func BenchmarkRedisPing(b *testing.B) {
	srv := redistest.Start(b)
	c := newClient(b, srv.Addr)
	b.ResetTimer()
	for range b.N {
		if err := c.Ping(b.Context()).Err(); err != nil {
			b.Fatal(err)
		}
	}
}
