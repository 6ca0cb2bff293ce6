package typed_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcpmw/mcpmw"
	"github.com/mcpmw/mcpmw/typed"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
	Days int    `json:"days,omitempty" jsonschema:"how many days, 1 by default"`
}

type forecast struct {
	City  string `json:"city"`
	Highs []int  `json:"highs"`
}

func Example() {
	weather := typed.NewTool("weather", "Forecast for a city.", "read",
		func(ctx context.Context, c mcpmw.Caller, in weatherIn) (forecast, error) {
			return forecast{City: in.City, Highs: make([]int, max(in.Days, 1))}, nil
		})
	weather.ReadOnly = mcpmw.HintYes

	h := newHandler(weather)
	for _, args := range []string{`{"city":"Oslo","days":2}`, `{"days":2}`, `{"city":"Oslo","days":"2"}`} {
		_, resp := call(h, "weather", args)
		if resp.Result.IsError {
			fmt.Println("isError:", resp.text())
		} else {
			fmt.Println("structured:", string(resp.Result.StructuredContent))
		}
	}
	fmt.Println("input schema:", string(weather.InputSchema))
	// Output:
	// structured: {"city":"Oslo","highs":[0,0]}
	// isError: Invalid arguments: argument "city" is required. Check the tool's input schema and call it again.
	// isError: Invalid arguments: argument "days" must be an integer, not a string. Check the tool's input schema and call it again.
	// input schema: {"type":"object","properties":{"city":{"type":"string","description":"the city"},"days":{"type":"integer","description":"how many days, 1 by default"}},"required":["city"],"additionalProperties":false}
}

func ExampleValidate() {
	// A hand-written schema says more than struct tags can: bounds,
	// patterns, enums. Func decodes, Validate checks first.
	forecastTool := typed.Validate(mcpmw.Tool{
		Name: "forecast", Description: "Forecast for a city.", Permission: "read",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","minLength":1},` +
			`"days":{"type":"integer","minimum":1,"maximum":14}},"required":["city"],"additionalProperties":false}`),
		Call: typed.Func(func(ctx context.Context, c mcpmw.Caller, in weatherIn) (string, error) {
			return fmt.Sprintf("%d days of sun in %s", in.Days, in.City), nil
		}),
	})

	for _, args := range []string{`{"city":"Oslo","days":3}`, `{"city":"Oslo","days":0}`, `{"city":"Oslo","Days":3}`} {
		res, err := forecastTool.Call(context.Background(), allowAll{}, mcpmw.NewArgs([]byte(args)))
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println("text:", res.AllText())
	}
	// Output:
	// text: 3 days of sun in Oslo
	// error: argument "days" must be >= 1
	// error: argument "Days" is not an argument name: names are case-sensitive (the tool reads "days")
}

func ExampleNewTool_sensitive() {
	type card struct {
		Number string `json:"number" mcpmw:"sensitive"`
		Holder string `json:"holder"`
	}
	type payIn struct {
		Amount int    `json:"amount"`
		APIKey string `json:"api_key" mcpmw:"sensitive"`
		Cards  []card `json:"cards"`
	}
	pay := typed.NewTool("pay", "Pays.", "write", func(ctx context.Context, c mcpmw.Caller, in payIn) (string, error) {
		return fmt.Sprintf("paid %d", in.Amount), nil
	})
	fmt.Println(pay.Sensitive) // the audit record holds "[redacted]" for these
	// Output:
	// [/api_key /cards/*/number]
}
