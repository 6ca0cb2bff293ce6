//go:build !race

package mcpmw_test

const raceEnabled = false
