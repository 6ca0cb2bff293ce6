// Package tools_test is the tested source of the snippets of docs/tools.md.
package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/mcpmwtest"
	"github.com/mcpmw/mcpmw/typed"
)

// Forecast and forecasts stand in for an application's own weather service.
type Forecast struct {
	City string `json:"city"`
	Days []Day  `json:"days"`
}

type Day struct {
	High int `json:"high"`
}

type forecastService struct{}

func (forecastService) For(ctx context.Context, city string, days int) (Forecast, error) {
	if city == "Atlantis" {
		return Forecast{}, errors.New("no station in " + city) // becomes -32603, never sent
	}
	f := Forecast{City: city}
	for range days {
		f.Days = append(f.Days, Day{High: 21})
	}
	return f, nil
}

var forecasts forecastService

func addWeather(reg *mcpmw.Registry) {
	// !+weather
	type weatherIn struct {
		City string `json:"city" jsonschema:"the city"`
		Days int    `json:"days,omitempty" jsonschema:"how many days, 1 by default"`
	}
	weather := typed.NewTool("weather", "Forecast for a city.", "read",
		func(ctx context.Context, c mcpmw.Caller, in weatherIn) (Forecast, error) {
			return forecasts.For(ctx, in.City, max(in.Days, 1))
		})
	weather.ReadOnly = mcpmw.HintYes // a plain mcpmw.Tool: set any other field on it
	reg.AddTools(weather)
	// !-weather
}

// reader is a caller holding the read permission, on both sides of the
// wire.
var reader = mcpmwtest.Tokens{"reader-token": &mcpmwtest.User{Name: "reader", Permissions: []mcpmw.Permission{"read"}}}

func TestWeather(t *testing.T) {
	var reg mcpmw.Registry
	addWeather(&reg)
	rec := mcpmwtest.NewRecorder()
	srv := mcpmwtest.NewServer(t, mcpmw.New(&reg, reader, rec, nil))
	for _, rev := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			c := srv.Client(mcpmwtest.Bearer("reader-token"), mcpmwtest.Revision(rev))
			tools, err := c.ListTools(t.Context())
			require.NoError(t, err)
			require.Len(t, tools, 1)
			assert.JSONEq(t, `{"type":"object","properties":{"city":{"type":"string","description":"the city"},`+
				`"days":{"type":"integer","description":"how many days, 1 by default"}},"required":["city"],"additionalProperties":false}`,
				string(tools[0].InputSchema))
			assert.True(t, *tools[0].Annotations.ReadOnlyHint)

			res, err := c.CallTool(t.Context(), "weather", map[string]any{"city": "Oslo", "days": 2})
			require.NoError(t, err)
			require.False(t, res.IsError, res.Text)
			var f Forecast
			require.NoError(t, res.Decode(&f))
			assert.Equal(t, Forecast{City: "Oslo", Days: []Day{{21}, {21}}}, f)

			// Days left out: optional, 1 by default.
			res, err = c.CallTool(t.Context(), "weather", map[string]any{"city": "Oslo"})
			require.NoError(t, err)
			require.NoError(t, res.Decode(&f))
			assert.Len(t, f.Days, 1)

			// An argument the struct does not have is refused, naming it.
			res, err = c.CallTool(t.Context(), "weather", map[string]any{"city": "Oslo", "hours": 3})
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Contains(t, res.Text, "hours")
		})
	}
}

// !+ping
var Ping = mcpmw.Tool{
	Name: "ping", Description: "Round-trips a message back to the caller.", Permission: "read", ReadOnly: mcpmw.HintYes,
	InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"},"times":{"type":"integer"}},"required":["message"]}`),
	Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
		msg := args.String("message")            // "" and an *ArgError if missing or not a string
		times := args.IntClamp("times", 1, 1, 3) // bends only on magnitude: 7 reads 3
		if err := args.Err(); err != nil {
			return mcpmw.ToolResult{}, err // the first problem: an isError result naming the field
		}
		out := msg
		for range times - 1 {
			out += " " + msg
		}
		return mcpmw.TextResult(out), nil // a failure the model should see returns ToolResult{IsError: true}
	},
}

// !-ping

// !+pingtest
func TestPing(t *testing.T) {
	for _, tt := range []struct{ name, args, want, badField string }{
		{name: "echoes", args: `{"message":"hi"}`, want: "hi"},
		{name: "clamps", args: `{"message":"hi","times":7}`, want: "hi hi hi"},
		{name: "wrong type", args: `{"message":5}`, badField: "message"},
		{name: "missing", args: `{}`, badField: "message"},
		{name: "a fraction", args: `{"message":"hi","times":1.5}`, badField: "times"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := Ping.Call(t.Context(), nil, mcpmw.NewArgs([]byte(tt.args)))
			var ae *mcpmw.ArgError
			if tt.badField != "" && assert.ErrorAs(t, err, &ae) {
				assert.Equal(t, tt.badField, ae.Field) // Field, not Name: "/order/id" for a nested member
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, res.AllText())
		})
	}
}

// !-pingtest

// TestPingOverTheWire checks what the guide says the handler makes of the
// ArgError: an isError result naming the field, audited as an error.
func TestPingOverTheWire(t *testing.T) {
	var reg mcpmw.Registry
	reg.AddTools(Ping)
	rec := mcpmwtest.NewRecorder()
	srv := mcpmwtest.NewServer(t, mcpmw.New(&reg, reader, rec, nil))
	c := srv.Client(mcpmwtest.Bearer("reader-token"))
	res, err := c.CallTool(t.Context(), "ping", map[string]any{"message": 5})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Text, `"message"`)
	assert.Equal(t, mcpmw.OutcomeError, rec.Last().Outcome)
}

// session is an application's own caller type.
type session struct {
	name, tenant string
}

func (s *session) Can(mcpmw.Permission) bool { return true }
func (s *session) String() string            { return s.name }

// !+tenancy
func sessionOf(c mcpmw.Caller) *session { return c.(*session) } // the authenticator only returns *session

// !-tenancy

func TestSessionOf(t *testing.T) {
	var reg mcpmw.Registry
	reg.AddTools(mcpmw.Tool{Name: "whoami", Permission: "read",
		Call: func(ctx context.Context, c mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
			s := sessionOf(c)
			same := mcpmw.CallerFrom(ctx) == c // the same value anywhere below the handler
			if !same {
				return mcpmw.ErrorResult("CallerFrom differs"), nil
			}
			return mcpmw.TextResult(s.name + "@" + s.tenant), nil
		}})
	authn := mcpmwtest.Tokens{"t": &session{name: "ann", tenant: "acme"}}
	srv := mcpmwtest.NewServer(t, mcpmw.New(&reg, authn, mcpmwtest.NewRecorder(), nil))
	res, err := srv.Client(mcpmwtest.Bearer("t")).CallTool(t.Context(), "whoami", nil)
	require.NoError(t, err)
	assert.Equal(t, "ann@acme", res.Text)
}
