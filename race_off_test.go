//go:build !race

package cluster

// raceEnabled says the tests run under the race detector.
const raceEnabled = false
