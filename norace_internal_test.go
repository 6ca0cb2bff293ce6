//go:build !race

package mcpmw

const raceEnabled = false
