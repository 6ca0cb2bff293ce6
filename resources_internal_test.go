package mcpmw

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestResourceChangesNotifyWatchers(t *testing.T) {
	t.Parallel()
	var reg Registry
	var mu sync.Mutex
	var got []Event
	reg.watch(func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, ev)
	})
	events := func() []Event {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}
	read := func(context.Context, Caller, string) ([]ResourceContents, error) { return nil, nil }
	tread := func(context.Context, Caller, string, map[string]string) ([]ResourceContents, error) { return nil, nil }

	reg.AddResources(Resource{URI: "a://1", Name: "1", Permission: "read", Read: read}, Resource{URI: "a://2", Name: "2", Permission: "read", Read: read},
		Resource{URI: "a://3", Name: "3", Permission: "admin", Read: read})
	assert.Equal(t, []Event{{Method: ResourcesListChanged, Permission: "read"}, {Method: ResourcesListChanged, Permission: "admin"}}, events(),
		"one event per distinct permission, after the table is stored")
	assert.Len(t, reg.resources().res.list, 3)

	reg.AddResourceTemplates(ResourceTemplate{URITemplate: "t://{id}", Name: "t", Permission: "tmpl", Read: tread})
	assert.Equal(t, []Event{{Method: ResourcesListChanged, Permission: "tmpl"}}, events())

	assert.Equal(t, 1, reg.RemoveResources("a://3", "a://none"))
	assert.Equal(t, []Event{{Method: ResourcesListChanged, Permission: "admin"}}, events())
	assert.Equal(t, 0, reg.RemoveResources("a://3"))
	assert.Empty(t, events(), "nothing removed: nobody told")

	assert.Equal(t, 1, reg.RemoveResourceTemplates("t://{id}"))
	assert.Equal(t, []Event{{Method: ResourcesListChanged, Permission: "tmpl"}}, events())
	assert.Equal(t, 0, reg.NumTools(), "tools untouched")
}

func TestTemplateByURI(t *testing.T) {
	t.Parallel()
	var reg Registry
	assert.Nil(t, reg.templateByURI("t://{id}"), "the zero Registry")
	complete := func(context.Context, Caller, CompletionRequest) (Completion, error) {
		return Completion{Values: []string{"1"}}, nil
	}
	reg.AddResourceTemplates(ResourceTemplate{URITemplate: "t://{id}", Name: "t", Permission: "notes",
		Read:     func(context.Context, Caller, string, map[string]string) ([]ResourceContents, error) { return nil, nil },
		Complete: map[string]Completer{"id": complete}})
	target := reg.templateByURI("t://{id}")
	require.NotNil(t, target)
	assert.Equal(t, Permission("notes"), target.Permission)
	assert.Equal(t, "t://{id}", target.Name)
	require.Contains(t, completers(target), "id")
	assert.Nil(t, reg.templateByURI("t://1"), "exactly the template, not a URI it matches")
}

// A table already published is never written to: a request holding it
// sees what it saw, whatever is added or removed meanwhile.
func TestResourceTableSnapshots(t *testing.T) {
	t.Parallel()
	var reg Registry
	read := func(context.Context, Caller, string) ([]ResourceContents, error) { return nil, nil }
	reg.AddResources(Resource{URI: "a://1", Name: "1", Permission: "read", Read: read}, Resource{URI: "a://2", Name: "2", Permission: "read", Read: read})
	old := reg.resources()
	reg.RemoveResources("a://1")
	reg.AddResources(Resource{URI: "a://3", Name: "3", Permission: "read", Read: read})
	assert.Len(t, old.res.list, 2)
	assert.Equal(t, "a://1", old.res.list[0].URI)
	assert.Contains(t, old.res.byKey, "a://1")
	assert.NotContains(t, old.res.byKey, "a://3")
	now := reg.resources()
	assert.Equal(t, []string{"a://2", "a://3"}, []string{now.res.list[0].URI, now.res.list[1].URI})
}
