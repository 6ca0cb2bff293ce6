package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// post sends one 2026-07-28 request to the fixture and returns the HTTP
// response and its body. meta is added to params._meta; header holds extra
// header names and values, in pairs.
func post(t *testing.T, url, method, name, params, meta string, header ...string) (*http.Response, []byte) {
	t.Helper()
	if params != "" {
		params += ","
	}
	body := `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + params +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}` + meta + `}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, raw
}

func newServer(t *testing.T) string {
	t.Helper()
	h, _ := newHandler(config{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

func TestToolsList(t *testing.T) {
	t.Parallel()
	url := newServer(t)
	resp, raw := post(t, url, "tools/list", "", "", "")
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	var out struct {
		Result struct {
			Tools []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(raw, &out))
	listed := out.Result.Tools
	require.Len(t, listed, len(tools())+len(askTools())+len(listenTools(newDynamics(nil)))+len(taskTools()))
	// http-header-validation calls the first listed tool with {}.
	assert.Equal(t, "test_simple_text", listed[0].Name)
	for _, tool := range listed {
		assert.NotEmpty(t, tool.Description, tool.Name)
		if tool.Name == "json_schema_2020_12_tool" {
			assert.JSONEq(t, string(schema2020), string(tool.InputSchema))
		}
	}
}

func TestToolsCall(t *testing.T) {
	t.Parallel()
	url := newServer(t)
	for _, tt := range []struct {
		tool, args string
		want       string // a fragment of the answer
	}{
		{tool: "test_simple_text", want: `"text":"This is a simple text response for testing."`},
		{tool: "test_image_content", args: `{}`, want: `"mimeType":"image/png"`},
		{tool: "test_audio_content", args: `{}`, want: `"mimeType":"audio/wav"`},
		{tool: "test_embedded_resource", args: `{}`, want: `"uri":"test://embedded-resource","mimeType":"text/plain"`},
		{tool: "test_multiple_content_types", args: `{}`, want: `"uri":"test://mixed-content-resource"`},
		{tool: "test_error_handling", args: `{}`, want: `"isError":true`},
		{tool: "test_logging_tool", args: `{}`, want: `"text":"Logging attempted."`},
		{tool: "json_schema_2020_12_tool", args: `{"name":"Ada","email":"ada@example.com"}`, want: `Schema accepted for Ada.`},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			t.Parallel()
			params := `"name":"` + tt.tool + `"`
			if tt.args != "" {
				params += `,"arguments":` + tt.args
			}
			resp, raw := post(t, url, "tools/call", tt.tool, params, "")
			require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			assert.Contains(t, string(raw), tt.want)
		})
	}
}

func TestMissingCapability(t *testing.T) {
	t.Parallel()
	resp, raw := post(t, newServer(t), "tools/call", "test_missing_capability", `"name":"test_missing_capability","arguments":{}`, "")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(raw), `"code":-32021`)
	assert.Contains(t, string(raw), `"requiredCapabilities":{"sampling":{}}`)
}

func TestCustomHeader(t *testing.T) {
	t.Parallel()
	url := newServer(t)
	params := `"name":"test_custom_header","arguments":{"region":"eu"}`
	// Without the Mcp-Param-Region header the call is refused.
	resp, raw := post(t, url, "tools/call", "test_custom_header", params, "")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Contains(t, string(raw), `"code":-32020`)
	// With it (base64-encoded here), the tool runs.
	resp, raw = post(t, url, "tools/call", "test_custom_header", params, "", "Mcp-Param-Region", "=?base64?ZXU=?=")
	assert.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	assert.Contains(t, string(raw), `"text":"region: eu"`)
}

// events returns the data lines of an event stream, decoded.
func events(t *testing.T, raw []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(data), &m))
			out = append(out, m)
		}
	}
	return out
}

func TestProgressAndLogging(t *testing.T) {
	t.Parallel()
	url := newServer(t)
	t.Run("progress", func(t *testing.T) {
		t.Parallel()
		resp, raw := post(t, url, "tools/call", "test_tool_with_progress", `"name":"test_tool_with_progress","arguments":{}`, `,"progressToken":"tok"`)
		require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"), string(raw))
		evs := events(t, raw)
		require.Len(t, evs, 4)
		for i, want := range []float64{0, 50, 100} {
			assert.Equal(t, "notifications/progress", evs[i]["method"])
			params := evs[i]["params"].(map[string]any)
			assert.Equal(t, "tok", params["progressToken"])
			assert.Equal(t, want, params["progress"])
			assert.Equal(t, float64(100), params["total"])
		}
		assert.Contains(t, evs[3], "result")
	})
	t.Run("logging", func(t *testing.T) {
		t.Parallel()
		resp, raw := post(t, url, "tools/call", "test_tool_with_logging", `"name":"test_tool_with_logging","arguments":{}`, `,"io.modelcontextprotocol/logLevel":"debug"`)
		require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"), string(raw))
		evs := events(t, raw)
		require.Len(t, evs, 4)
		for i := range 3 {
			assert.Equal(t, "notifications/message", evs[i]["method"])
		}
	})
}

func TestMedia(t *testing.T) {
	t.Parallel()
	img, err := png.Decode(bytes.NewReader(redPixelPNG))
	require.NoError(t, err)
	assert.Equal(t, 1, img.Bounds().Dx())
	require.Greater(t, len(toneWAV), 44)
	assert.Equal(t, "RIFF", string(toneWAV[:4]))
	assert.Equal(t, "WAVE", string(toneWAV[8:12]))
	assert.Equal(t, uint32(len(toneWAV)-8), binary.LittleEndian.Uint32(toneWAV[4:8]))
	assert.Equal(t, uint32(len(toneWAV)-44), binary.LittleEndian.Uint32(toneWAV[40:44]))
}

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"ADDR": "127.0.0.1:0", "ALLOWED_HOSTS": " a.example , b.example,"}
	c, err := configFromEnv(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:0", c.addr)
	assert.Equal(t, []string{"a.example", "b.example"}, c.allowedHosts)
	defaults, err := configFromEnv(func(string) string { return "" })
	require.NoError(t, err)
	assert.Equal(t, config{addr: "127.0.0.1:3001"}, defaults)
	_, err = configFromEnv(func(k string) string { return map[string]string{"REDIS_FAIL": "sometimes"}[k] })
	assert.ErrorContains(t, err, `REDIS_FAIL="sometimes": want open`)
	c, err = configFromEnv(func(k string) string { return map[string]string{"REDIS_URL": "redis://127.0.0.1:6390/1"}[k] })
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:6390", c.redis.Addr(), "REDIS_URL read as chi-app reads it")
}

// MCP_STATE_KEY becomes the fixture's key ring, as in examples/chi-app: a
// key or a comma-separated ring; a bad one is an error that never quotes
// it; unset, each process has a random key.
func TestStateKeyFromEnv(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("ab", 32)
	for _, v := range []string{key, strings.Repeat("cd", 32) + "," + key} {
		c, err := configFromEnv(func(k string) string { return map[string]string{"MCP_STATE_KEY": v}[k] })
		require.NoError(t, err)
		require.NotNil(t, c.stateKeys)
		assert.NotContains(t, c.stateKeys.String(), key, "the ring never shows its keys")
	}
	for _, bad := range []string{strings.Repeat("zz", 32), "abcd"} {
		_, err := configFromEnv(func(k string) string { return map[string]string{"MCP_STATE_KEY": bad}[k] })
		require.ErrorContains(t, err, "MCP_STATE_KEY")
		assert.NotContains(t, err.Error(), bad)
	}
}

// elicit sends a 2026-07-28 call of test_input_required_result_request_state
// from a client that declares elicitation; more holds further members of
// params (the retry's inputResponses and requestState).
func elicit(t *testing.T, url, more string) map[string]json.RawMessage {
	t.Helper()
	const tool = "test_input_required_result_request_state"
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}` + more +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]json.RawMessage
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

// TestRoundSealedByOneInstanceResumedByAnother: two instances that share
// MCP_STATE_KEY resume each other's input_required rounds, as three do
// behind scripts/conformance-proxy.sh; two with their own random keys do
// not.
func TestRoundSealedByOneInstanceResumedByAnother(t *testing.T) {
	t.Parallel()
	shared, err := configFromEnv(func(k string) string { return map[string]string{"MCP_STATE_KEY": strings.Repeat("5e", 32)}[k] })
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		c       config
		resumed bool
	}{{"shared key", shared, true}, {"a random key each", config{}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var urls []string
			for range 2 {
				h, _ := newHandler(tc.c, slog.New(slog.NewTextHandler(io.Discard, nil)))
				srv := httptest.NewServer(h)
				t.Cleanup(srv.Close)
				urls = append(urls, srv.URL+"/mcp")
			}
			first := elicit(t, urls[0], "")
			var round struct {
				ResultType   string `json:"resultType"`
				RequestState string `json:"requestState"`
			}
			require.NoError(t, json.Unmarshal(first["result"], &round), string(first["error"]))
			require.Equal(t, "input_required", round.ResultType)
			require.NotEmpty(t, round.RequestState, "%s", first["result"])
			retry := elicit(t, urls[1], `,"inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}},"requestState":`+strconv.Quote(round.RequestState))
			if !tc.resumed {
				assert.Contains(t, string(retry["error"]), `"code":-32602`, "another instance's key cannot open the state")
				return
			}
			assert.Contains(t, string(retry["result"]), `state: state-ok`, "%s", retry["error"])
		})
	}
}
