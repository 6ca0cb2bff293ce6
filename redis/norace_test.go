//go:build !race

package mcpredis

const raceEnabled = false
