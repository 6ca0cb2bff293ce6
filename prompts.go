package mcpmw

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	"github.com/mcpmw/mcpmw/internal/jsonwire"
)

// A Prompt is a message template a caller's user picks by name (a slash
// command, say): the server fills it in from the arguments the client
// sends and returns the messages to put into the conversation. Like a
// Tool, it is a plain value: build it with a struct literal and add it to
// a Registry with AddPrompts at startup.
type Prompt struct {
	// Name identifies the prompt: 1 to 64 characters of [A-Za-z0-9_.-],
	// unique among the registry's prompts (a tool may share it).
	Name string
	// Title is an optional display name; Description says what the prompt
	// is for.
	Title, Description string
	// Icons are optional images for the prompt; 2025-06-18 clients get none.
	Icons []Icon
	// Meta is the definition's _meta: what an extension adds to it (MCP
	// Apps' {"ui": {"resourceUri": ...}}, say), encoded once, at
	// registration, with encoding/json. Keys starting with
	// "io.modelcontextprotocol/" are the protocol's; use your own prefix
	// for your own.
	Meta map[string]any
	// Arguments are what the prompt is filled in from, in the order a
	// client should ask for them.
	Arguments []PromptArgument
	// Permission is what a caller must be able to do (Caller.Can) to see
	// the prompt in prompts/list, to get it and to complete its arguments.
	// It is required, as for a Tool. See Permission for what a caller
	// without it learns.
	Permission Permission
	// Get builds the messages. args holds the arguments the client sent:
	// every Required one is there (a request without one is refused before
	// Get runs); others may be missing, and names the prompt does not
	// declare are passed on as sent. It returns the messages, or an error:
	//   - an *ArgError becomes -32602 with its text, naming the argument;
	//   - an *Error is sent as that JSON-RPC error;
	//   - any other error becomes -32603 "Internal error" and a log line;
	//     its text is not sent to the client.
	// Get may Ask the client for input, as a tool does.
	Get func(ctx context.Context, c Caller, args map[string]string) (PromptResult, error)
	// Complete suggests values of an argument, by the argument's name, for
	// completion/complete. Each key must name one of Arguments.
	Complete map[string]Completer
}

// A PromptArgument is one value a prompt is filled in from. Its value is
// always a string.
type PromptArgument struct {
	// Name is the key of the argument in prompts/get's arguments.
	Name string
	// Title is an optional display name; Description tells the user what
	// to enter.
	Title, Description string
	// Required arguments must be sent: prompts/get without one is refused
	// with -32602 naming it.
	Required bool
	// Sensitive marks a value that must not leave the process through the
	// library (a password, a person's data): no message, isError text or
	// audit record it builds for prompts/get or for a completion/complete
	// of this argument quotes it; where one would, it says "[redacted]".
	// Get and the Completers still get it as sent. See docs/audit.md,
	// "Sensitive arguments".
	Sensitive bool
}

// A PromptResult is what a prompt's Get returns: the messages, and an
// optional description of this rendering of the prompt.
type PromptResult struct {
	Description string
	// Messages are sent in order; there must be at least one.
	Messages []PromptMessage
}

// A PromptMessage is one message of a prompt: who says it, and one content
// block of any kind (TextContent, ImageContent, AudioContent, ResourceLink,
// EmbeddedResource).
type PromptMessage struct {
	Role    string // "user" or "assistant"
	Content Content
}

// UserMessage returns a message of the user saying c.
func UserMessage(c Content) PromptMessage { return PromptMessage{Role: "user", Content: c} }

// AssistantMessage returns a message of the assistant saying c.
func AssistantMessage(c Content) PromptMessage { return PromptMessage{Role: "assistant", Content: c} }

// promptTable is an immutable snapshot of a Registry's prompts. It mirrors
// toolTable.
type promptTable struct {
	catalogue[*promptEntry]
}

// promptEntry is a registered prompt with its definition encoded for each
// revision and the target a prompts/get naming it is checked against.
type promptEntry struct {
	Prompt
	enc       [revisionCount][]byte // the definition, per revision
	permIndex int                   // index of Permission in its table's perms
	target    Target
	sensitive bool // some argument is Sensitive
}

var emptyPromptTable = &promptTable{}

func (r *Registry) promptTable() *promptTable {
	if t := r.prompts.Load(); t != nil {
		return t
	}
	return emptyPromptTable
}

// AddPrompts registers prompts. It panics, with a message naming the
// prompt, if a name is invalid or already taken by another prompt, if
// Permission or Get is missing, if two arguments share a name, or if
// Complete names an argument the prompt does not have. Such mistakes are
// found at startup, never while serving. Handlers created with New before
// the registry held any prompt do not serve prompts: add them first.
func (r *Registry) AddPrompts(ps ...Prompt) {
	r.mu.Lock()
	defer r.mu.Unlock()
	add := make([]*promptEntry, len(ps))
	for i, p := range ps {
		add[i] = preparePrompt(p)
	}
	next, perms := r.promptTable().with("prompt", add)
	r.prompts.Store(&promptTable{catalogue: *next})
	r.changed(PromptsListChanged, perms)
}

// RemovePrompts unregisters the prompts named, and reports how many were
// registered. A request already running a removed prompt finishes; later
// ones get "Unknown prompt". Listeners who could see a removed prompt are
// told the list changed.
func (r *Registry) RemovePrompts(names ...string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	next, perms := r.promptTable().without(names)
	if len(perms) == 0 {
		return 0
	}
	r.prompts.Store(&promptTable{catalogue: *next})
	r.changed(PromptsListChanged, perms)
	return len(perms)
}

// promptByName returns the target of the prompt registered under name,
// for the permission gate and completion/complete, or nil.
func (r *Registry) promptByName(name string) *Target {
	if e := r.promptTable().byKey[name]; e != nil {
		return &e.target
	}
	return nil
}

// preparePrompt validates p and encodes its definition for each revision.
func preparePrompt(p Prompt) *promptEntry {
	if !validToolName(p.Name) {
		panic(fmt.Sprintf("mcpmw: prompt name %q is invalid: use 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', '-'", p.Name))
	}
	if p.Permission == "" {
		panic(fmt.Sprintf("mcpmw: prompt %q has no Permission; name one that every permitted caller has", p.Name))
	}
	if p.Get == nil {
		panic(fmt.Sprintf("mcpmw: prompt %q has no Get func", p.Name))
	}
	declared := make(map[string]bool, len(p.Arguments))
	sensitive := false
	for _, a := range p.Arguments {
		switch {
		case a.Name == "":
			panic(fmt.Sprintf("mcpmw: prompt %q has an argument without a Name", p.Name))
		case declared[a.Name]:
			panic(fmt.Sprintf("mcpmw: prompt %q declares argument %q twice", p.Name, a.Name))
		}
		declared[a.Name] = true
		sensitive = sensitive || a.Sensitive
	}
	for name, c := range p.Complete {
		switch {
		case !declared[name]:
			panic(fmt.Sprintf("mcpmw: prompt %q: Complete names %q, which is not one of its Arguments", p.Name, name))
		case c == nil:
			panic(fmt.Sprintf("mcpmw: prompt %q: the Completer of %q is nil", p.Name, name))
		}
	}
	// The entry keeps its own copies: prompts/get checks Required arguments
	// against them, and completion/complete looks its Completers up, long
	// after the caller's slice and map may have changed.
	p.Arguments = append([]PromptArgument(nil), p.Arguments...)
	p.Complete = maps.Clone(p.Complete)
	p.Meta = maps.Clone(p.Meta)
	e := &promptEntry{Prompt: p, sensitive: sensitive, target: Target{Kind: "prompt", Name: p.Name, Permission: p.Permission}}
	e.target.Found = e
	for v := range revisionCount {
		e.enc[v] = appendMeta(appendPromptDef(nil, &p, v), p.Meta, "prompt "+strconv.Quote(p.Name))
	}
	return e
}

// appendPromptDef appends the Prompt object of p's definition for
// revision v to dst.
func appendPromptDef(dst []byte, p *Prompt, v revision) []byte {
	dst = append(dst, `{"name":`...)
	dst = jsonwire.AppendString(dst, p.Name)
	if p.Title != "" {
		dst = append(dst, `,"title":`...)
		dst = jsonwire.AppendString(dst, p.Title)
	}
	if p.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = jsonwire.AppendString(dst, p.Description)
	}
	if len(p.Icons) > 0 && v.icons() {
		dst = append(dst, `,"icons":`...)
		dst = appendIcons(dst, p.Icons)
	}
	if len(p.Arguments) > 0 {
		dst = append(dst, `,"arguments":[`...)
		for i, a := range p.Arguments {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"name":`...)
			dst = jsonwire.AppendString(dst, a.Name)
			if a.Title != "" {
				dst = append(dst, `,"title":`...)
				dst = jsonwire.AppendString(dst, a.Title)
			}
			if a.Description != "" {
				dst = append(dst, `,"description":`...)
				dst = jsonwire.AppendString(dst, a.Description)
			}
			if a.Required {
				dst = append(dst, `,"required":true`...)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}
