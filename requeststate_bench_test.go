package mcpmw

import (
	"bytes"
	"testing"
	"time"
)

// BenchmarkRequestStateRoundTrip measures what one input_required round
// costs in sealing: seal the state for the answer, open it on the retry.
// Issue 11's target for a 200-byte payload: ≤ 5 µs and ≤ 10 allocations.
func BenchmarkRequestStateRoundTrip(b *testing.B) {
	r := mustRing(b, stateKey2, stateKey1)
	bind := testBinding()
	for _, size := range []struct {
		name string
		n    int
	}{{"200B", 200}, {"4KiB", 4 << 10}, {"largest", maxStatePayload}} {
		payload := bytes.Repeat([]byte("x"), size.n)
		b.Run(size.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(size.n))
			for b.Loop() {
				s, err := r.seal(bind, payload, stateT0, 10*time.Minute)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := r.open(bind, s, stateT0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRequestStateOpenRefused measures what a client's forged state
// costs an instance: the largest string that passes the size check,
// decoded and refused by the tag.
func BenchmarkRequestStateOpenRefused(b *testing.B) {
	r := mustRing(b, stateKey1)
	s := []byte(mustSeal(b, r, testBinding(), make([]byte, maxStatePayload)))
	if s[len(s)/2] == 'A' {
		s[len(s)/2] = 'B'
	} else {
		s[len(s)/2] = 'A'
	}
	forged := string(s)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.open(testBinding(), forged, stateT0); err != errStateAuth {
			b.Fatal(err)
		}
	}
}
