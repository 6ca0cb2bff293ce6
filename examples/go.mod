module github.com/mcpmw/mcpmw/examples

go 1.24

replace (
	github.com/mcpmw/mcpmw => ../
	github.com/mcpmw/mcpmw/redis => ../redis
)

require (
	github.com/go-chi/chi/v5 v5.5.0
	github.com/mcpmw/mcpmw v0.0.0-00010101000000-000000000000
	github.com/mcpmw/mcpmw/redis v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.22.0
	github.com/stretchr/testify v1.12.1
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/jsonschema-go v0.4.3 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.30.0 // indirect
)
