module github.com/mcpmw/mcpmw/oauth/internal/astest

go 1.24.0

replace (
	github.com/mcpmw/mcpmw => ../../../
	github.com/mcpmw/mcpmw/oauth => ../../
)

require (
	github.com/go-jose/go-jose/v4 v4.1.9
	github.com/mcpmw/mcpmw v0.0.0-00010101000000-000000000000
	github.com/mcpmw/mcpmw/oauth v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
	github.com/zitadel/oidc/v3 v3.45.0
	golang.org/x/oauth2 v0.31.0
)

require (
	github.com/bmatcuk/doublestar/v4 v4.9.1 // indirect
	github.com/go-chi/chi/v5 v5.5.0 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/gorilla/securecookie v1.1.2 // indirect
	github.com/muhlemmer/gu v0.3.1 // indirect
	github.com/muhlemmer/httpforwarded v0.1.0 // indirect
	github.com/rs/cors v1.11.1 // indirect
	github.com/sirupsen/logrus v1.9.3 // indirect
	github.com/zitadel/logging v0.6.2 // indirect
	github.com/zitadel/schema v1.3.1 // indirect
	go.opentelemetry.io/auto/sdk v1.1.0 // indirect
	go.opentelemetry.io/otel v1.38.0 // indirect
	go.opentelemetry.io/otel/metric v1.38.0 // indirect
	go.opentelemetry.io/otel/trace v1.38.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.31.0 // indirect
	golang.org/x/text v0.29.0 // indirect
)
