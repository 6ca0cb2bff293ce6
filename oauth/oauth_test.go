package oauth

import (
	"testing"

	"github.com/go-jose/go-jose/v4"
	"github.com/mcpmw/mcpmw"
)

// TestModuleBuilds keeps the module's dependencies in its go.mod until the
// verifiers land.
func TestModuleBuilds(t *testing.T) {
	var _ mcpmw.Permission = "read"
	if jose.ES256 == "" {
		t.Fatal("go-jose lost ES256")
	}
}
