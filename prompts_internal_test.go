package mcpmw

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// everything is a Caller allowed everything.
type everything struct{}

func (everything) Can(Permission) bool { return true }

func nopPrompt(context.Context, Caller, map[string]string) (PromptResult, error) {
	return PromptResult{Messages: []PromptMessage{UserMessage(TextContent("x"))}}, nil
}

// AddPrompts and RemovePrompts tell the registry's watchers, once per
// distinct permission, after the new table is published.
func TestPromptChangesReachWatchers(t *testing.T) {
	t.Parallel()
	var reg Registry
	var mu sync.Mutex
	var got []Event
	var listedOnEvent []int
	reg.watch(func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev)
		listedOnEvent = append(listedOnEvent, len(reg.promptTable().list))
	})
	reg.AddPrompts(
		Prompt{Name: "a", Permission: "read", Get: nopPrompt},
		Prompt{Name: "b", Permission: "write", Get: nopPrompt},
		Prompt{Name: "c", Permission: "read", Get: nopPrompt},
	)
	assert.Equal(t, []Event{{Method: PromptsListChanged, Permission: "read"}, {Method: PromptsListChanged, Permission: "write"}}, got)
	assert.Equal(t, []int{3, 3}, listedOnEvent, "watchers see the new table")

	got, listedOnEvent = nil, nil
	assert.Equal(t, 1, reg.RemovePrompts("b", "missing"))
	assert.Equal(t, []Event{{Method: PromptsListChanged, Permission: "write"}}, got)
	assert.Equal(t, []int{2}, listedOnEvent)

	got = nil
	assert.Equal(t, 0, reg.RemovePrompts("b"))
	assert.Empty(t, got, "removing nothing tells nobody")
	assert.Equal(t, 0, reg.NumTools(), "prompts are not tools")
}

// promptByName gives completion/complete the prompt's target, and so its
// completers.
func TestPromptByName(t *testing.T) {
	t.Parallel()
	var reg Registry
	assert.Nil(t, reg.promptByName("topic"), "the zero Registry has no prompts")
	complete := func(context.Context, Caller, CompletionRequest) (Completion, error) {
		return Completion{Values: []string{"go"}}, nil
	}
	reg.AddPrompts(Prompt{Name: "topic", Permission: "read", Get: nopPrompt,
		Arguments: []PromptArgument{{Name: "lang"}}, Complete: map[string]Completer{"lang": complete}})
	target := reg.promptByName("topic")
	require.NotNil(t, target)
	assert.Equal(t, Target{Kind: "prompt", Name: "topic", Permission: "read", Found: target.Found}, *target)
	completers := completers(target)
	require.Contains(t, completers, "lang")
	c, err := completers["lang"](context.Background(), nil, CompletionRequest{Argument: "lang"})
	require.NoError(t, err)
	assert.Equal(t, []string{"go"}, c.Values)
	assert.Nil(t, reg.promptByName("lang"))
}

// A page of the prompts table is cached per permission set, as tools/list
// pages are, and separately from the tools'; a new snapshot of the table
// starts a new cache.
func TestPromptPagesAreCachedPerTable(t *testing.T) {
	t.Parallel()
	var reg Registry
	reg.AddTools(Tool{Name: "t", Permission: "read", Call: func(context.Context, Caller, *Args) (ToolResult, error) { return ToolResult{}, nil }})
	reg.AddPrompts(Prompt{Name: "p", Permission: "read", Get: nopPrompt})
	f := pageFormat{size: 10}
	tools, prompts := reg.table(), reg.promptTable()
	var toolPages listPages[*entry]
	var promptPages listPages[*promptEntry]
	var caller everything
	r1 := cachedPage(f, promptsList, prompts.list, prompts.perms, promptPages.of(&prompts.catalogue), caller, nil, rev20251125, 0)
	r2 := cachedPage(f, promptsList, prompts.list, prompts.perms, promptPages.of(&prompts.catalogue), caller, nil, rev20251125, 0)
	assert.Equal(t, `{"prompts":[{"name":"p"}]}`, string(r1.Result))
	assert.Same(t, &r1.Result[0], &r2.Result[0], "the second list reuses the page")
	rt := cachedPage(f, toolsList, tools.list, tools.perms, toolPages.of(&tools.catalogue), caller, nil, rev20251125, 0)
	assert.Equal(t, `{"tools":[{"name":"t","inputSchema":{"type":"object","additionalProperties":false}}]}`, string(rt.Result))
	assert.Equal(t, "listed 1 tool", rt.Summary)
	reg.AddPrompts(Prompt{Name: "q", Permission: "read", Get: nopPrompt})
	prompts = reg.promptTable()
	r3 := cachedPage(f, promptsList, prompts.list, prompts.perms, promptPages.of(&prompts.catalogue), caller, nil, rev20251125, 0)
	assert.Equal(t, `{"prompts":[{"name":"p"},{"name":"q"}]}`, string(r3.Result), "a new snapshot, a new page")
	assert.Equal(t, "listed 1 prompt", r1.Summary)
}
