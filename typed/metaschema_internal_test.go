package typed

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The embedded meta-schemas resolve, and nothing else is ever loaded.
func TestMetaSchemasAreEmbeddedOnly(t *testing.T) {
	t.Parallel()
	metas, err := metaSchemas()
	require.NoError(t, err)
	assert.Len(t, metas, 2)
	for _, u := range []string{"https://json-schema.org/draft/2019-09/schema", "https://example.com/schema", "https://json-schema.org/draft/2020-12/meta/nope"} {
		parsed, _ := url.Parse(u)
		_, err := loadMeta(parsed)
		assert.Error(t, err, u)
	}
}

// A meta-schema whose failure no single keyword shows (none of the
// official ones has such a rule) is reported at the schema itself.
func TestLocateFallsBackToTheWholeSchema(t *testing.T) {
	t.Parallel()
	meta, err := (&jsonschema.Schema{Not: &jsonschema.Schema{Required: []string{"a", "b"}}}).Resolve(nil)
	require.NoError(t, err)
	ptr, problem := locate(meta, draft202012, map[string]any{"a": 1.0, "b": 2.0}, "/properties/x")
	assert.Equal(t, "/properties/x", ptr)
	assert.True(t, strings.HasPrefix(problem, "does not match the JSON Schema meta-schema: not:"), problem)
}
