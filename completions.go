package mcpmw

import "context"

// A Completer suggests values for one argument of a prompt or one
// variable of a resource template, as the user types it
// (completion/complete). It runs only for a caller allowed to use the
// prompt or template, and returns at most 100 values (more are cut, and
// HasMore set).
type Completer func(ctx context.Context, c Caller, req CompletionRequest) (Completion, error)

// A CompletionRequest is what the client is completing.
type CompletionRequest struct {
	// Argument is the prompt argument or template variable being typed.
	Argument string
	// Value is what has been typed so far (often a prefix).
	Value string
	// Context holds the values of the other arguments or variables the
	// client has already resolved.
	Context map[string]string
}

// A Completion is a Completer's answer.
type Completion struct {
	// Values are the suggestions, best first: at most 100 are sent.
	Values []string
	// Total is the number of suggestions there are in all, when known
	// (0 = unknown).
	Total int
	// HasMore says there are suggestions beyond Values.
	HasMore bool
}

// maxCompletionValues is the most values one completion/complete result
// may carry (the schema's maxItems).
const maxCompletionValues = 100

// hasCompleters reports whether some prompt or resource template of the
// registry has a Completer: the completions capability is declared only
// then, so that a client is not invited to ask for suggestions that can
// never come.
func (r *Registry) hasCompleters() bool {
	for _, e := range r.promptTable().list {
		if len(e.Complete) > 0 {
			return true
		}
	}
	for _, e := range r.resources().tmpl.list {
		if len(e.Complete) > 0 {
			return true
		}
	}
	return false
}
