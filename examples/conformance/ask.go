package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/mcpmw/mcpmw"
)

// The fixtures that ask the client, named and keyed as the conformance
// suite's scenarios expect: on 2026-07-28 (input-required-result-*, WIRE.md
// §6) each asks through mcpmw.Ask and completes once the retry carries its
// answers; on the legacy revisions (tools-call-sampling,
// tools-call-elicitation, elicitation-sep1034-defaults,
// elicitation-sep1330-enums) the same Ask sends the request on the call's
// event stream and waits for the answer POST.

var nameForm = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Your name"}},"required":["name"]}`)

// The legacy fixtures' forms (tools-call-elicitation, SEP-1034, SEP-1330).
var (
	userForm = json.RawMessage(`{"type":"object","properties":{` +
		`"username":{"type":"string","description":"Your username"},` +
		`"email":{"type":"string","format":"email","description":"Your email address"}},` +
		`"required":["username","email"]}`)
	defaultsForm = json.RawMessage(`{"type":"object","properties":{` +
		`"name":{"type":"string","description":"Name","default":"John Doe"},` +
		`"age":{"type":"integer","description":"Age","default":30},` +
		`"score":{"type":"number","description":"Score","default":95.5},` +
		`"status":{"type":"string","description":"Status","enum":["active","inactive","pending"],"default":"active"},` +
		`"verified":{"type":"boolean","description":"Verified","default":true}}}`)
	enumsForm = json.RawMessage(`{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","description":"Untitled single-select","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","description":"Titled single-select","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","description":"Legacy titled enum","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","description":"Untitled multi-select","items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","description":"Titled multi-select","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`)
)

// askTool is a fixture tool whose call asks the client, then completes.
func askTool(name, description string, call func(ctx context.Context) (string, error)) mcpmw.Tool {
	return mcpmw.Tool{Name: name, Description: description, Permission: testCap,
		Call: func(ctx context.Context, _ mcpmw.Caller, _ *mcpmw.Args) (mcpmw.ToolResult, error) {
			text, err := call(ctx)
			if err != nil {
				return mcpmw.ToolResult{}, err
			}
			return mcpmw.TextResult(text), nil
		}}
}

func askTools() []mcpmw.Tool {
	return []mcpmw.Tool{
		askTool("test_input_required_result_elicitation", "Asks the user's name (elicitation), then greets them.", func(ctx context.Context) (string, error) {
			ans, err := mcpmw.Ask(ctx, "user_name", mcpmw.ElicitForm("What is your name?", nameForm))
			if err != nil {
				return "", err
			}
			return "Hello, " + elicitedName(ans) + "!", nil
		}),
		askTool("test_input_required_result_sampling", "Asks the client's model a question (sampling).", func(ctx context.Context) (string, error) {
			ans, err := mcpmw.Ask(ctx, "capital", mcpmw.Sample("What is the capital of France?", 100))
			if err != nil {
				return "", err
			}
			return "The model said: " + sampledText(ans), nil
		}),
		askTool("test_input_required_result_list_roots", "Asks the client for its roots.", func(ctx context.Context) (string, error) {
			ans, err := mcpmw.Ask(ctx, "roots", mcpmw.ListRoots())
			if err != nil {
				return "", err
			}
			var r struct{ Roots []struct{ URI string } }
			_ = json.Unmarshal(ans, &r)
			return "The client has " + strconv.Itoa(len(r.Roots)) + " root(s).", nil
		}),
		askTool("test_input_required_result_request_state", "Asks for a confirmation and carries state to the retry.", func(ctx context.Context) (string, error) {
			if _, err := mcpmw.Ask(ctx, "confirm", mcpmw.ElicitForm("Go on?", json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`))); err != nil {
				mcpmw.SetRoundState(ctx, []byte("state-ok"))
				return "", err
			}
			return "state: " + string(mcpmw.RoundState(ctx)), nil
		}),
		askTool("test_input_required_result_multiple_inputs", "Asks for an elicitation, a sampling and the roots at once.", func(ctx context.Context) (string, error) {
			_, err1 := mcpmw.Ask(ctx, "user_name", mcpmw.ElicitForm("What is your name?", nameForm))
			_, err2 := mcpmw.Ask(ctx, "capital", mcpmw.Sample("What is the capital of France?", 100))
			_, err3 := mcpmw.Ask(ctx, "roots", mcpmw.ListRoots())
			if err := errors.Join(err1, err2, err3); err != nil {
				mcpmw.SetRoundState(ctx, []byte("multiple"))
				return "", err
			}
			return "All three answers arrived.", nil
		}),
		askTool("test_input_required_result_multi_round", "Asks twice, in two rounds, keeping what it learnt between them.", func(ctx context.Context) (string, error) {
			state := string(mcpmw.RoundState(ctx))
			if state == "" {
				if _, err := mcpmw.Ask(ctx, "first", mcpmw.ElicitForm("Round 1: your name?", nameForm)); err != nil {
					mcpmw.SetRoundState(ctx, []byte("round-1"))
					return "", err
				}
			}
			if state == "" || state == "round-1" {
				if _, err := mcpmw.Ask(ctx, "second", mcpmw.ElicitForm("Round 2: your name again?", nameForm)); err != nil {
					mcpmw.SetRoundState(ctx, []byte("round-2"))
					return "", err
				}
			}
			return "Both rounds done.", nil
		}),
		askTool("test_input_required_result_tampered_state", "Asks with a requestState that must come back unaltered.", func(ctx context.Context) (string, error) {
			if _, err := mcpmw.Ask(ctx, "user_name", mcpmw.ElicitForm("What is your name?", nameForm)); err != nil {
				mcpmw.SetRoundState(ctx, []byte("sealed"))
				return "", err
			}
			return "state: " + string(mcpmw.RoundState(ctx)), nil
		}),
		askTool("test_streaming_elicitation", "Asks the user through an input_required result, never with a request on the stream.", func(ctx context.Context) (string, error) {
			_ = mcpmw.Progress(ctx, 1, 2, "about to ask")
			ans, err := mcpmw.Ask(ctx, "user_name", mcpmw.ElicitForm("What is your name?", nameForm))
			if err != nil {
				return "", err
			}
			return "Hello, " + elicitedName(ans) + "!", nil
		}),
		{Name: "test_sampling", Description: "Asks the client's model to answer a prompt (sampling).", Permission: testCap,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"What to ask the model"}},"required":["prompt"]}`),
			Call: func(ctx context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				prompt := args.String("prompt")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				ans, err := mcpmw.Ask(ctx, "sample", mcpmw.Sample(prompt, 100))
				if err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult("LLM response: " + sampledText(ans)), nil
			}},
		{Name: "test_elicitation", Description: "Asks the user for a username and an email (elicitation).", Permission: testCap,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"What to tell the user"}},"required":["message"]}`),
			Call: func(ctx context.Context, _ mcpmw.Caller, args *mcpmw.Args) (mcpmw.ToolResult, error) {
				message := args.String("message")
				if err := args.Err(); err != nil {
					return mcpmw.ToolResult{}, err
				}
				ans, err := mcpmw.Ask(ctx, "user", mcpmw.ElicitForm(message, userForm))
				if err != nil {
					return mcpmw.ToolResult{}, err
				}
				return mcpmw.TextResult("User response: " + string(ans)), nil
			}},
		askTool("test_elicitation_sep1034_defaults", "Asks with a form whose fields all have defaults (SEP-1034).", func(ctx context.Context) (string, error) {
			ans, err := mcpmw.Ask(ctx, "defaults", mcpmw.ElicitForm("Check your details", defaultsForm))
			if err != nil {
				return "", err
			}
			return "Elicitation completed: " + string(ans), nil
		}),
		askTool("test_elicitation_sep1330_enums", "Asks with a form using every enum form (SEP-1330).", func(ctx context.Context) (string, error) {
			ans, err := mcpmw.Ask(ctx, "enums", mcpmw.ElicitForm("Pick your options", enumsForm))
			if err != nil {
				return "", err
			}
			return "Elicitation completed: " + string(ans), nil
		}),
		askTool("test_input_required_result_capabilities", "Asks only for what the client supports: elicitation if it can, else sampling.", func(ctx context.Context) (string, error) {
			req, key := mcpmw.Sample("What is the capital of France?", 100), "capital"
			if mcpmw.ClientSupports(ctx, mcpmw.Capability("elicitation")) {
				req, key = mcpmw.ElicitForm("What is your name?", nameForm), "user_name"
			}
			if _, err := mcpmw.Ask(ctx, key, req); err != nil {
				return "", err
			}
			return "Answered.", nil
		}),
	}
}

// elicitedName reads the name an elicitation answer carries.
func elicitedName(ans json.RawMessage) string {
	var r struct {
		Action  string
		Content struct{ Name string }
	}
	_ = json.Unmarshal(ans, &r)
	if r.Action != "accept" || r.Content.Name == "" {
		return "stranger"
	}
	return r.Content.Name
}

// sampledText reads the text of a sampling answer.
func sampledText(ans json.RawMessage) string {
	var r struct {
		Content struct{ Text string }
	}
	_ = json.Unmarshal(ans, &r)
	return r.Content.Text
}
