//go:build !race

package sim

// raceEnabled says the tests run under the race detector.
const raceEnabled = false
