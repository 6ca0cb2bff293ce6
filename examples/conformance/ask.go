package main

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/mcpmw/mcpmw"
)

// The input_required fixtures (2026-07-28, WIRE.md §6), named and keyed as
// the conformance suite's input-required-result-* scenarios expect. Each
// asks through mcpmw.Ask and completes once the retry carries its answers.

var nameForm = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"Your name"}},"required":["name"]}`)

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
		askTool("test_input_required_result_capabilities", "Asks only for what the client supports: elicitation if it can, else sampling.", func(ctx context.Context) (string, error) {
			req, key := mcpmw.Sample("What is the capital of France?", 100), "capital"
			if mcpmw.ClientSupports(ctx, "elicitation") {
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
