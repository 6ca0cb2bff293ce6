package mcpmw_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
)

// Two keys as an operator would write them (openssl rand -hex 32).
const (
	hexKey1 = "8f1d3c5b7a9e0f2d4c6b8a0e1f3d5c7b9a1e3f5d7c9b0a2e4f6d8c0b1a3e5f70"
	hexKey2 = "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
)

func TestParseKeyRing(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, in string
		keys     int
	}{
		{name: "one", in: hexKey1, keys: 1},
		{name: "two", in: hexKey2 + "," + hexKey1, keys: 2},
		{name: "spaces", in: " " + hexKey2 + " ,\t" + hexKey1 + "\n", keys: 2},
		{name: "upper case", in: strings.ToUpper(hexKey1), keys: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := mcpmw.ParseKeyRing(tt.in)
			require.NoError(t, err)
			assert.Len(t, strings.Split(r.String(), ","), tt.keys)
		})
	}
}

func TestParseKeyRingErrors(t *testing.T) {
	t.Parallel()
	short := hexKey1[:62]
	notHex := hexKey1[:40] + "zq" + hexKey1[42:]
	long := hexKey1 + "ab"
	for _, tt := range []struct {
		name, in, want string
		secrets        []string // must not appear in the message
	}{
		{name: "empty", in: "", want: "key 1 of 1 is empty"},
		{name: "empty entry", in: hexKey1 + ",," + hexKey2, want: "key 2 of 3 is empty", secrets: []string{hexKey1, hexKey2}},
		{name: "trailing comma", in: hexKey1 + ",", want: "key 2 of 2 is empty", secrets: []string{hexKey1}},
		{name: "blank entry", in: hexKey1 + ", ", want: "key 2 of 2 is empty", secrets: []string{hexKey1}},
		{name: "short", in: hexKey1 + "," + short, want: "key 2 of 2 is 62 characters, want 64", secrets: []string{hexKey1, short}},
		{name: "long", in: long, want: "key 1 of 1 is 66 characters, want 64", secrets: []string{long}},
		{name: "not hex", in: hexKey2 + "," + notHex, want: "key 2 of 2 is not hexadecimal (character 41)", secrets: []string{hexKey2, notHex, "z", "q"}},
		{name: "non-ASCII", in: hexKey1[:60] + "é" + hexKey1[62:], want: "key 1 of 1 is not hexadecimal (character 61)", secrets: []string{"é", hexKey1[:60]}},
		{name: "twice", in: hexKey1 + "," + hexKey2 + "," + hexKey1, want: "key 3 of 3 has the key id of key 1", secrets: []string{hexKey1, hexKey2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := mcpmw.ParseKeyRing(tt.in)
			require.Error(t, err)
			assert.Nil(t, r)
			assert.Contains(t, err.Error(), tt.want)
			for _, s := range tt.secrets {
				assert.NotContains(t, err.Error(), s)
			}
			// No run of 8 of the input's characters: no piece of a key.
			for i := 0; i+8 <= len(tt.in); i++ {
				if piece := tt.in[i : i+8]; strings.Trim(piece, ", \t\n") == piece {
					assert.NotContains(t, err.Error(), piece)
				}
			}
		})
	}
}

func TestNewKeyRing(t *testing.T) {
	t.Parallel()
	k := make([]byte, 32)
	for _, tt := range []struct {
		name string
		keys [][]byte
		want string
	}{
		{name: "none", want: "at least one key"},
		{name: "short", keys: [][]byte{k, k[:16]}, want: "key 2 of 2 is 16 bytes, want 32"},
		{name: "long", keys: [][]byte{append(k, 0)}, want: "key 1 of 1 is 33 bytes, want 32"},
		{name: "nil", keys: [][]byte{nil}, want: "key 1 of 1 is 0 bytes"},
		{name: "twice", keys: [][]byte{k, k}, want: "key 2 of 2 has the key id of key 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := mcpmw.NewKeyRing(tt.keys...)
			assert.Nil(t, r)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestKeyRingPrinting: whichever verb prints a ring, only key ids show.
func TestKeyRingPrinting(t *testing.T) {
	t.Parallel()
	key := []byte(strings.Repeat("k", 32))
	r, err := mcpmw.NewKeyRing(key)
	require.NoError(t, err)
	s := r.String()
	assert.Regexp(t, `^mcpmw\.KeyRing\{[0-9a-f]{8}\}$`, s)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, r)
		assert.Equal(t, s, out, verb)
		assert.NotContains(t, out, string(key), verb)
	}
	assert.Equal(t, "mcpmw.KeyRing{}", (*mcpmw.KeyRing)(nil).String())
	assert.Equal(t, "mcpmw.KeyRing{}", new(mcpmw.KeyRing).String())
}

func TestRandomKeyRing(t *testing.T) {
	t.Parallel()
	a, b := mcpmw.RandomKeyRing(), mcpmw.RandomKeyRing()
	assert.NotEqual(t, a.String(), b.String(), "two random rings share a key id")
}

// The key ids of a ring are the same in every process that parses the same
// value, which is what lets any instance open what another sealed.
func ExampleParseKeyRing() {
	// In an application: mcpmw.ParseKeyRing(os.Getenv("MCP_STATE_KEY")),
	// the new key first during a rotation.
	r, err := mcpmw.ParseKeyRing(hexKey2 + "," + hexKey1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r)
	_, err = mcpmw.ParseKeyRing(hexKey2 + "," + hexKey1[:63])
	fmt.Println(err)
	// Output:
	// mcpmw.KeyRing{195d4828, 3125e00e}
	// mcpmw: KeyRing key 2 of 2 is 63 characters, want 64 hexadecimal digits
}
