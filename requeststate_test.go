package mcpmw_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
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

// twins is a registry whose tool, prompt and resource ask once, keep
// "round=1" as their state, and then answer: the tool and the prompt share
// the name "twin", and all take the same arguments.
func twins() *mcpmw.Registry {
	ask := func(ctx context.Context) ([]byte, error) {
		if _, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Go on?", confirmForm)); err != nil {
			mcpmw.SetRoundState(ctx, []byte("round=1"))
			return nil, err
		}
		return mcpmw.RoundState(ctx), nil
	}
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "twin", Description: "Asks.", Permission: "read",
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			state, err := ask(ctx)
			return mcpmw.TextResult(string(state)), err
		}})
	reg.AddPrompts(mcpmw.Prompt{Name: "twin", Description: "Asks.", Permission: "read",
		Get: func(ctx context.Context, _ mcpmw.Caller, _ map[string]string) (mcpmw.PromptResult, error) {
			state, err := ask(ctx)
			return mcpmw.PromptResult{Messages: []mcpmw.PromptMessage{mcpmw.UserMessage(mcpmw.TextContent(string(state)))}}, err
		}})
	reg.AddResources(mcpmw.Resource{URI: "twin://r", Name: "twin", Permission: "read",
		Read: func(ctx context.Context, _ mcpmw.Caller, uri string) ([]mcpmw.ResourceContents, error) {
			state, err := ask(ctx)
			return []mcpmw.ResourceContents{mcpmw.TextContents(uri, "text/plain", string(state))}, err
		}})
	return &reg
}

// twinRound is a 2026-07-28 request at path of method, naming target (the
// uri of a resources/read, else the name), with arguments args ("" for
// none) and extra params members, from a client that can be asked anything.
func twinRound(path, method, target, args, extra string) *http.Request {
	p := `"name":` + strconv.Quote(target)
	if method == "resources/read" {
		p = `"uri":` + strconv.Quote(target)
	}
	if args != "" {
		p += `,"arguments":` + args
	}
	if extra != "" {
		p += "," + extra
	}
	r := req(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{`+p+`,`+allCaps+`}}`,
		"MCP-Protocol-Version", mcpmw.LatestVersion, "Mcp-Method", method, "Mcp-Name", target)
	r.URL.Path, r.RequestURI = path, path
	return r
}

// resume is the extra params of a retry answering round and carrying its
// state.
func resume(t *testing.T, round roundAnswer) string {
	t.Helper()
	require.Equal(t, "input_required", round.ResultType)
	require.NotEmpty(t, round.RequestState)
	return `"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"` + round.RequestState + `"`
}

// refusedState checks that r is answered -32602: its requestState does
// not open.
func refusedState(t *testing.T, h http.Handler, r *http.Request, msgAndArgs ...any) {
	t.Helper()
	code, res, rpcErr := serveRound(t, h, r)
	require.NotNil(t, rpcErr, msgAndArgs...)
	assert.Equal(t, mcpmw.CodeInvalidParams, rpcErr.Code, msgAndArgs...)
	assert.Equal(t, http.StatusOK, code, msgAndArgs...)
	assert.Empty(t, res.ResultType, msgAndArgs...)
}

// State sealed by one endpoint used to be accepted by another endpoint of
// the same process sharing the key ring, whose same-named tool, prompt or
// resource then resumed with a round state it never wrote. It is bound to
// the endpoint now: to the path, even behind http.StripPrefix (which shows
// the handler the same path as the other endpoint's), or to
// Options.Endpoint.
func TestRequestStateIsBoundToTheEndpoint(t *testing.T) {
	t.Parallel()
	ring := mcpmw.RandomKeyRing()
	newEndpoint := func(name string) http.Handler {
		return mcpmw.New(twins(), tokenAuthn, &spy{}, &mcpmw.Options{StateKeys: ring, Endpoint: name})
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", newEndpoint(""))
	mux.Handle("/admin/mcp", newEndpoint(""))
	mux.Handle("/internal/", http.StripPrefix("/internal", newEndpoint(""))) // sees /mcp
	// One service behind a proxy that reaches its instances under two
	// paths, named alike; and another service at the same paths.
	mux.Handle("/a/mcp", newEndpoint("orders"))
	mux.Handle("/b/mcp", newEndpoint("orders"))
	mux.Handle("/c/mcp", newEndpoint("billing"))
	for _, tc := range []struct{ method, target, args string }{
		{"tools/call", "twin", `{"k":"v"}`},
		{"prompts/get", "twin", `{"k":"v"}`},
		{"resources/read", "twin://r", ""},
	} {
		t.Run(tc.method, func(t *testing.T) {
			t.Parallel()
			round := func(path, extra string) *http.Request { return twinRound(path, tc.method, tc.target, tc.args, extra) }
			_, first, _ := serveRound(t, mux, round("/mcp", ""))
			state := resume(t, first)
			refusedState(t, mux, round("/admin/mcp", state), "another endpoint")
			refusedState(t, mux, round("/internal/mcp", state), "another endpoint behind StripPrefix")
			refusedState(t, mux, round("/a/mcp", state), "a named endpoint")
			_, done, rpcErr := serveRound(t, mux, round("/mcp", state))
			require.Nil(t, rpcErr)
			assert.Equal(t, "complete", done.ResultType, "the endpoint that sealed it resumes it")

			_, first, _ = serveRound(t, mux, round("/a/mcp", ""))
			state = resume(t, first)
			refusedState(t, mux, round("/c/mcp", state), "another name")
			refusedState(t, mux, round("/mcp", state), "an unnamed endpoint")
			_, done, rpcErr = serveRound(t, mux, round("/b/mcp", state))
			require.Nil(t, rpcErr)
			assert.Equal(t, "complete", done.ResultType, "the same name, under another path")
		})
	}
}

// State minted by prompts/get X is refused by tools/call X with the same
// arguments (and the other way round): the state is bound to the method,
// not only to the target's name.
func TestRequestStateIsBoundToTheMethod(t *testing.T) {
	t.Parallel()
	h := mcpmw.New(twins(), tokenAuthn, &spy{}, nil)
	for _, tc := range []struct{ from, to string }{{"prompts/get", "tools/call"}, {"tools/call", "prompts/get"}} {
		_, first, _ := serveRound(t, h, twinRound("/mcp", tc.from, "twin", `{"k":"v"}`, ""))
		state := resume(t, first)
		refusedState(t, h, twinRound("/mcp", tc.to, "twin", `{"k":"v"}`, state), tc.from+" → "+tc.to)
		_, done, rpcErr := serveRound(t, h, twinRound("/mcp", tc.from, "twin", `{"k":"v"}`, state))
		require.Nil(t, rpcErr, tc.from)
		assert.Equal(t, "complete", done.ResultType, tc.from)
	}
}
