//go:build race

package mcpredis

// raceEnabled: the race detector is on, and allocation counts are not the
// program's own.
const raceEnabled = true
