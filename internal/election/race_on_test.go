//go:build race

package election

// raceEnabled says the tests run under the race detector.
const raceEnabled = true
