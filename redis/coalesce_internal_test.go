package mcpredis

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldChecks is a check func whose calls wait until the test answers
// them, one at a time, in the order they were made.
type heldChecks struct {
	calls chan heldCall
}

type heldCall struct {
	key      string
	want     int
	deadline time.Time
	bounded  bool
	answer   chan []int64
}

func newHeldChecks() *heldChecks { return &heldChecks{calls: make(chan heldCall, 16)} }

func (h *heldChecks) check(ctx context.Context, key string, want, back int) ([]int64, error) {
	d, ok := ctx.Deadline()
	c := heldCall{key: key, want: want, deadline: d, bounded: ok, answer: make(chan []int64, 1)}
	h.calls <- c
	select {
	case v := <-c.answer:
		if v == nil {
			return nil, errors.New("no answer")
		}
		return v, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// next returns the next call made, failing t when none comes.
func (h *heldChecks) next(t *testing.T) heldCall {
	t.Helper()
	select {
	case c := <-h.calls:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no call made within 10 s")
		return heldCall{}
	}
}

// joined waits until n callers wait for key's next call.
func joined(t *testing.T, c *coalescer, key string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		g := c.keys[key]
		got := 0
		if g != nil {
			got = g.n
		}
		c.mu.Unlock()
		if got == n {
			return
		}
		require.True(t, time.Now().Before(deadline), "%d callers of %s waiting, not %d, after 10 s", got, key, n)
		time.Sleep(time.Millisecond)
	}
}

type answerOf struct {
	v   []int64
	err error
}

// TestCoalescerOneCallPerTurn: the first caller of a key makes its own
// call for one request; those that come while it is on its way go
// together as the next call, asking for as many requests as they are,
// within the latest of their deadlines; the first to join are the ones
// admitted; and a key with no caller left is forgotten.
func TestCoalescerOneCallPerTurn(t *testing.T) {
	t.Parallel()
	h := newHeldChecks()
	c := newCoalescer(h.check, 10, 100)
	answers := make([]chan answerOf, 5)
	take := func(i int, ctx context.Context) {
		answers[i] = make(chan answerOf, 1)
		go func() {
			v, err := c.take(ctx, "k")
			answers[i] <- answerOf{v, err}
		}()
	}
	soon, cancelSoon := context.WithTimeout(t.Context(), time.Hour)
	defer cancelSoon()
	later, cancelLater := context.WithTimeout(t.Context(), 2*time.Hour)
	defer cancelLater()

	take(0, soon)
	first := h.next(t)
	assert.Equal(t, "k", first.key)
	assert.Equal(t, 1, first.want, "a lone caller asks for one")
	take(1, soon)
	joined(t, c, "k", 1)
	take(2, later)
	joined(t, c, "k", 2)
	take(3, soon)
	joined(t, c, "k", 3)
	select {
	case extra := <-h.calls:
		t.Fatalf("a call made while the key's call was on its way: %+v", extra)
	default:
	}

	first.answer <- []int64{1, 5, 0, 50}
	assert.Equal(t, answerOf{[]int64{1, 5, 0, 50}, nil}, <-answers[0], "the lone caller's answer, as Redis gave it")
	group := h.next(t)
	assert.Equal(t, 3, group.want, "the three who waited, in one call")
	require.True(t, group.bounded)
	d, _ := later.Deadline()
	assert.Equal(t, d, group.deadline, "the latest of their deadlines")

	take(4, soon) // comes while the group's call is on its way: the next turn
	joined(t, c, "k", 1)
	group.answer <- []int64{2, 0, 0, 95} // two of three admitted
	assert.Equal(t, answerOf{admitted, nil}, <-answers[1])
	assert.Equal(t, answerOf{admitted, nil}, <-answers[2])
	assert.Equal(t, answerOf{[]int64{0, 0, 95 + 10 - 100, 95}, nil}, <-answers[3],
		"the third refused, until the bucket has room for one after the two")
	last := h.next(t)
	assert.Equal(t, 1, last.want)
	last.answer <- []int64{0, 0, 30, 90}
	assert.Equal(t, answerOf{[]int64{0, 0, 30, 90}, nil}, <-answers[4], "refused as Redis refused")

	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return len(c.keys) == 0
	}, 10*time.Second, time.Millisecond, "no key kept once nobody waits")
}

// TestCoalescerKeysApart: a call on its way for one key holds back no
// other key's.
func TestCoalescerKeysApart(t *testing.T) {
	t.Parallel()
	h := newHeldChecks()
	c := newCoalescer(h.check, 10, 100)
	var wg sync.WaitGroup
	for _, k := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.take(t.Context(), k)
			assert.NoError(t, err)
			assert.Equal(t, admitted, v)
		}()
	}
	one, two := h.next(t), h.next(t)
	assert.ElementsMatch(t, []string{"a", "b"}, []string{one.key, two.key})
	one.answer <- admitted
	two.answer <- admitted
	wg.Wait()
}

// TestCoalescerCallerKeepsItsDeadline: a caller whose context ends while
// it waits for its turn gets its error then, and its group's call still
// goes, for all who joined it; a caller with no deadline makes its
// group's call have none. An error is every caller's of the call.
func TestCoalescerCallerKeepsItsDeadline(t *testing.T) {
	t.Parallel()
	h := newHeldChecks()
	c := newCoalescer(h.check, 10, 100)
	go func() { _, _ = c.take(t.Context(), "k") }()
	first := h.next(t)

	gone, cancel := context.WithCancel(t.Context())
	goneErr := make(chan error, 1)
	go func() { _, err := c.take(gone, "k"); goneErr <- err }()
	joined(t, c, "k", 1)
	staying := make(chan answerOf, 1)
	go func() { v, err := c.take(context.WithoutCancel(t.Context()), "k"); staying <- answerOf{v, err} }()
	joined(t, c, "k", 2)
	cancel()
	select {
	case err := <-goneErr:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the caller that gave up still waits")
	}

	first.answer <- admitted
	group := h.next(t)
	assert.Equal(t, 2, group.want, "the one that gave up was counted in")
	assert.False(t, group.bounded, "a caller without a deadline: a call without one")
	group.answer <- nil // an error
	got := <-staying
	assert.Nil(t, got.v)
	assert.EqualError(t, got.err, "no answer")
}

// TestCoalescerAnswer: which caller of a group is admitted, and how long a
// refused one waits.
func TestCoalescerAnswer(t *testing.T) {
	t.Parallel()
	c := newCoalescer(nil, 1000, 4000)
	boom := errors.New("boom")
	for _, tc := range []struct {
		v    []int64
		err  error
		i    int
		want []int64
	}{
		{[]int64{3, 0, 0, 4000}, nil, 0, admitted},
		{[]int64{3, 0, 0, 4000}, nil, 2, admitted},
		{[]int64{3, 0, 0, 4000}, nil, 3, []int64{0, 0, 1000, 4000}},
		{[]int64{1, 0, 0, 3999}, nil, 1, []int64{0, 0, 999, 3999}},
		{[]int64{1, 0, 0, 3000}, nil, 1, []int64{0, 0, 1, 3000}}, // never less than a µs
		{[]int64{0, 0, 250, 3250}, nil, 0, []int64{0, 0, 250, 3250}},
		{[]int64{0, 0, 250, 3250}, nil, 7, []int64{0, 0, 250, 3250}},
	} {
		v, err := c.answer(tc.v, tc.err, tc.i)
		assert.NoError(t, err)
		assert.Equal(t, tc.want, v, "%v, caller %d", tc.v, tc.i)
	}
	v, err := c.answer(nil, boom, 0)
	assert.Nil(t, v)
	assert.ErrorIs(t, err, boom)
}

// TestCoalescerKeyHandedOnAfterAPanic: a check that panics (a bug below,
// which a handler's recoverer survives) still hands its key on: the next
// caller makes its own call instead of waiting for one that never comes.
func TestCoalescerKeyHandedOnAfterAPanic(t *testing.T) {
	t.Parallel()
	calls := 0
	c := newCoalescer(func(context.Context, string, int, int) ([]int64, error) {
		if calls++; calls == 1 {
			panic("boom")
		}
		return admitted, nil
	}, 10, 100)
	assert.PanicsWithValue(t, "boom", func() { _, _ = c.take(t.Context(), "k") })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	v, err := c.take(ctx, "k")
	require.NoError(t, err, "the key was left held by the call that panicked")
	assert.Equal(t, admitted, v)
	assert.Equal(t, 2, calls)
}
