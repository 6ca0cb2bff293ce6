module github.com/mcpmw/mcpmw/examples/oauth

go 1.25.0

replace (
	github.com/mcpmw/mcpmw => ../..
	github.com/mcpmw/mcpmw/oauth => ../../oauth
	github.com/mcpmw/mcpmw/redis => ../../redis
)

require (
	github.com/go-jose/go-jose/v4 v4.1.9
	github.com/mcpmw/mcpmw v0.0.0-00010101000000-000000000000
	github.com/mcpmw/mcpmw/oauth v0.0.0-00010101000000-000000000000
	github.com/mcpmw/mcpmw/redis v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.22.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.30.0 // indirect
)
