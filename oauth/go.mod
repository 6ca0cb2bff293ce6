module github.com/mcpmw/mcpmw/oauth

go 1.24.0

replace github.com/mcpmw/mcpmw => ../

require (
	github.com/go-jose/go-jose/v4 v4.1.9
	github.com/mcpmw/mcpmw v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
