module github.com/mcpmw/mcpmw/examples/oauth

go 1.25.0

require (
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/mcpmw/mcpmw v0.0.0-00010101000000-000000000000
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

replace github.com/mcpmw/mcpmw => ../..
