package mcpmw_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpmw/mcpmw"
)

// FuzzArgumentReadersAgree is the differential behind the one view of the
// arguments: whenever the handler lets a tools/call run, the Mcp-Param-*
// check, Args' accessors, Args.Decode into a map and Args.Decode into a
// struct read the same value for each mirrored argument, or the reader
// that would differ is refused. A gateway that trusts the header then
// always sees what the tool acts on.
func FuzzArgumentReadersAgree(f *testing.F) {
	for _, seed := range []struct {
		args, region, team string
		present            uint8
	}{
		{`{"region":"us","Region":"eu"}`, "us", "", 1},
		{`{"region":"us","region":"eu"}`, "us", "", 1},
		{`{"o":{"team":"blue","team":"red"}}`, "", "blue", 2},
		{`{"o":{"team":"blue","Team":"red"}}`, "", "blue", 2},
		{`{"REGION":"eu"}`, "", "", 0},
		{`{"region":"us","o":{"team":"a"}}`, "us", "a", 3},
		{`{"r\u0065gion":"us"}`, "us", "", 1},
		{`{"region":null,"o":null}`, "", "", 0},
		{`{"regıon":"x","o":{"\u212aey":1}}`, "", "", 0},
		{`{"region":"Zürich"}`, "=?base64?WsO8cmljaA==?=", "", 1},
	} {
		f.Add(seed.args, seed.region, seed.team, seed.present)
	}
	type input struct {
		Region *string `json:"region"`
		O      *struct {
			Team *string `json:"team"`
		} `json:"o"`
	}
	type reading struct{ region, team *string }
	readings := make(chan [3]reading, 1)
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "route", Description: "d", Permission: "read",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"o":{"type":"object","properties":{"team":{"type":"string","x-mcp-header":"Team"}}}}}`),
		Call: func(_ context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			var got [3]reading
			str := func(v any) *string {
				if s, ok := v.(string); ok {
					return &s
				}
				return nil
			}
			if args.Has("region") { // the accessors read the top level only
				got[0].region = str(args.OptString("region", ""))
			}
			var m map[string]any
			if args.Decode(&m) == nil {
				got[1].region = str(m["region"])
				if o, ok := m["o"].(map[string]any); ok {
					got[1].team = str(o["team"])
				}
			}
			var in input
			if mcpmw.NewArgs(args.Raw()).Decode(&in) == nil {
				got[2].region = in.Region
				if in.O != nil {
					got[2].team = in.O.Team
				}
			}
			readings <- got
			return mcpmw.TextResult("ok"), nil
		}})
	h := mcpmw.New(&reg, tokenAuthn, &spy{}, nil)
	f.Fuzz(func(t *testing.T, args, region, team string, present uint8) {
		r := modern("1", "tools/call", `"name":"route","arguments":`+args)
		if present&1 != 0 {
			r.Header["Mcp-Param-Region"] = []string{region}
		}
		if present&2 != 0 {
			r.Header["Mcp-Param-Team"] = []string{team}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var got [3]reading
		select {
		case got = <-readings:
		default:
			return // refused before the tool ran
		}
		decoded := func(hv string) string {
			hv = strings.Trim(hv, " \t")
			if strings.HasPrefix(hv, "=?base64?") && strings.HasSuffix(hv, "?=") {
				var s []byte
				if err := json.Unmarshal([]byte(`"`+hv[9:len(hv)-2]+`"`), &s); err == nil {
					return string(s)
				}
			}
			return hv
		}
		check := func(what string, header bool, hv string, readers ...*string) {
			for i, v := range readers {
				switch {
				case !header && v != nil:
					t.Fatalf("reader %d saw %s %q with no Mcp-Param header (args %s)", i, what, *v, args)
				case header && v != nil && *v != decoded(hv):
					t.Fatalf("reader %d saw %s %q, the header said %q (args %s)", i, what, *v, hv, args)
				}
			}
		}
		check("region", present&1 != 0, region, got[0].region, got[1].region, got[2].region)
		check("team", present&2 != 0, team, got[1].team, got[2].team)
	})
}
