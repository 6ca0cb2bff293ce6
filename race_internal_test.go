//go:build race

package mcpmw

// raceEnabled: the race detector allocates on its own, so counts of
// allocations are not asserted under it.
const raceEnabled = true
