package mcpmw

import (
	"bytes"
	"testing"
	"time"
)

// FuzzOpenRequestState hands open arbitrary client input, either as the
// string sent or as the blob inside the base64url: open must never panic,
// and must never succeed on anything but a state this ring sealed, byte for
// byte.
func FuzzOpenRequestState(f *testing.F) {
	r, err := NewKeyRing(stateKey1, stateKey2)
	if err != nil {
		f.Fatal(err)
	}
	genuine := map[string]string{} // sealed state → payload
	// Fixed nonces: the fuzzer's worker processes must seal the same seeds.
	for i, p := range []string{"", "p", string(bytes.Repeat([]byte("x"), 200))} {
		nonce := bytes.Repeat([]byte{byte(i)}, stateNonceLen)
		s, err := r.sealNonce(testBinding(), []byte(p), stateT0, 10*time.Minute, nonce)
		if err != nil {
			f.Fatal(err)
		}
		genuine[s] = p
		blob, _ := stateEncoding.DecodeString(s)
		f.Add(s, false)
		f.Add(string(blob), true)
		f.Add(s+"A", false)
		f.Add(s[:len(s)-1], false)
		f.Add(string(blob[:stateOverhead]), true)
	}
	f.Add("", false)
	f.Add("AQ", false)
	f.Add("\x01\x00\x00\x00\x00", true)

	now := stateT0.Add(time.Minute)
	f.Fuzz(func(t *testing.T, in string, encode bool) {
		state := in
		if encode {
			state = stateEncoding.EncodeToString([]byte(in))
		}
		got, err := r.open(testBinding(), state, now)
		want, ok := genuine[state]
		switch {
		case err == nil && !ok:
			t.Fatalf("opened a state this ring never sealed: %q", state)
		case err == nil && string(got) != want:
			t.Fatalf("opened %q to %q, sealed %q", state, got, want)
		case err != nil && ok:
			t.Fatalf("refused a genuine state: %v", err)
		case err != nil:
			if _, isState := err.(*stateError); !isState {
				t.Fatalf("refused with %T, not *stateError: %v", err, err)
			}
		}
	})
}
