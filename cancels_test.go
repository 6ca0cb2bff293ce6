package mcpmw

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// claims is a comparable struct holding a map in an interface field, as a
// JWT claims struct holding MapClaims does: == on two of them panics.
type claims struct{ data any }

func (claims) Can(Permission) bool { return true }

type idCaller struct {
	id    string
	roles []string
}

func (idCaller) Can(Permission) bool { return true }
func (c idCaller) CallerID() string  { return c.id }

type panickyID struct{}

func (panickyID) Can(Permission) bool { return true }
func (panickyID) CallerID() string    { panic("CallerID exploded") }

func TestInflightCancelsOnlyTheSameCallerID(t *testing.T) {
	t.Parallel()
	var f inflight
	call := func(c Caller, id string) (context.Context, func()) {
		return f.add(context.Background(), &Request{ID: []byte(id), Caller: c})
	}
	cancel := func(c Caller, id string) *Response {
		return cancelled(&f)(context.Background(), &Request{Params: []byte(`{"requestId":` + id + `}`), Caller: c})
	}
	u1, done1 := call(idCaller{"u1", []string{"x"}}, `"a"`)
	defer done1()
	u2, done2 := call(idCaller{"u2", nil}, `"a"`)
	defer done2()
	num, done3 := call(idCaller{"u1", nil}, `1`)
	defer done3()

	assert.Contains(t, cancel(idCaller{"u1", nil}, `"b"`).Summary, "no such call")
	assert.Contains(t, cancel(idCaller{"u1", nil}, `"1"`).Summary, "no such call", `the string "1" is not the number 1`)
	assert.NoError(t, u1.Err())
	assert.Equal(t, `cancelled "\u0061"`, cancel(idCaller{"u1", nil}, `"\u0061"`).Summary, "ids compare as decoded strings")
	assert.ErrorIs(t, context.Cause(u1), errCancelledByClient)
	assert.NoError(t, u2.Err(), "another caller's call with the same id is untouched")
	assert.NoError(t, num.Err())
	assert.Contains(t, cancel(idCaller{"", nil}, `"a"`).Summary, "no CallerID", "an empty CallerID identifies nobody")
	assert.NoError(t, u2.Err())
}

func TestInflightNeverComparesCallersWithEquals(t *testing.T) {
	t.Parallel()
	var f inflight
	// A struct with a map inside an interface is comparable by type, and
	// == on it panics: the old sameCaller did exactly that while holding
	// the lock.
	c := claims{data: map[string]any{"sub": "u1"}}
	ctx, done := f.add(context.Background(), &Request{ID: []byte(`"a"`), Caller: c})
	defer done()
	assert.NotPanics(t, func() {
		resp := cancelled(&f)(context.Background(), &Request{Params: []byte(`{"requestId":"a"}`), Caller: claims{data: map[string]any{"sub": "u1"}}})
		assert.Contains(t, resp.Summary, "no CallerID")
	})
	assert.NoError(t, ctx.Err(), "a caller without CallerID cannot cancel")
	assert.Empty(t, f.calls, "calls of unidentified callers are not kept")
}

func TestInflightLockSurvivesAPanickingCallerID(t *testing.T) {
	t.Parallel()
	var f inflight
	assert.Panics(t, func() { f.add(context.Background(), &Request{ID: []byte(`1`), Caller: panickyID{}}) })
	assert.Panics(t, func() {
		cancelled(&f)(context.Background(), &Request{Params: []byte(`{"requestId":1}`), Caller: panickyID{}})
	})
	// The lock is free: a later call registers and is cancelled.
	ctx, done := f.add(context.Background(), &Request{ID: []byte(`1`), Caller: idCaller{id: "u"}})
	defer done()
	cancelled(&f)(context.Background(), &Request{Params: []byte(`{"requestId":1}`), Caller: idCaller{id: "u"}})
	assert.ErrorIs(t, context.Cause(ctx), errCancelledByClient)
	done()
	assert.Empty(t, f.calls, "done unregisters the call")
}
